"""Languages: detection (py3langid where the first rule is not certain), a tokeniser per language,
and no lexical match across languages (neardup.text.language, neardup.sketch.fingerprint)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from neardup.config import load_settings
from neardup.decision import Status
from neardup.document import parse_document
from neardup.engine import Engine
from neardup.explain import feature_votes, shingles, tokens
from neardup.rules.differences import Profile, profiler
from neardup.sketch.fingerprint import FingerprintConfig, Fingerprinter, decode_signature, rule_languages
from neardup.sketch.similarity import PairSimilarities, SketchTable, window_sketches
from neardup.sketch.similarity import similarities as pair_similarities
from neardup.storage.memory import MemoryFingerprintStore
from neardup.text.language import LANG_KINDS, Guess, Tokenizer, resolve, shingle_kind, tokenizer_of
from neardup.text.normalize import normalize_batch

EN = ("The government announced on Monday that it would raise the minimum wage next year, after months of talks "
      "with unions and employers. Ministers said the increase would help millions of low-paid workers.")
FR = ("Le gouvernement britannique a annoncé lundi une hausse du salaire minimum pour l'année prochaine, après "
      "des mois de négociations difficiles avec les syndicats et le patronat. Selon les ministres, cette mesure "
      "doit aider des millions de salariés modestes, mais les organisations patronales craignent que les petites"
      " entreprises ne suppriment des emplois. Le nouveau taux entrera en vigueur au mois d'avril et sera de "
      "nouveau examiné à l'automne, lorsque la commission indépendante publiera son rapport annuel sur les "
      "salaires et les prix. Voici la phrase clé du communiqué publié en anglais : Ministers said the increase "
      "would help millions of low-paid workers.")
ZH = ("中华人民共和国国务院关于加强食品安全工作的决定。为了进一步加强食品安全工作，保障人民群众身体健康和生命安全，"
      "国务院决定在全国范围内开展食品安全专项整治行动。")
JA = ("中国政府は月曜日、食品の安全に関する新しい決定を発表しました。この決定によると、全国で専門的な取り締まりが"
      "行われることになります。政府の担当者は、国民の健康と生命を守るために、違法な行為を厳しく取り締まると"
      "述べました。以下は、中国語で発表された決定の冒頭部分です。" + ZH)
KO = "서울시는 오늘 새로운 조례를 발표했습니다. 시민 여러분의 협조를 부탁드립니다. Samsung 관계자도 참석했습니다."
DE = "Die Regierung hat heute ein neues Gesetz über den Mindestlohn angekündigt, das im April in Kraft treten soll."
TH = "รัฐบาลประกาศกฎหมายใหม่เกี่ยวกับค่าจ้างขั้นต่ำในวันนี้"

FPR = Fingerprinter(FingerprintConfig())


def _pair(a: str, b: str, langs: list[str | None] | None = None) -> tuple[list[str], PairSimilarities]:
    """The languages of two texts and their similarity as the engine's re-check computes it."""
    fps = FPR.fingerprint([a, b], langs)
    empty = Profile(np.zeros(0, dtype=np.uint64), [], [], "")
    sketches = window_sketches(fps, ["a", "b"], [0.0, 0.0], [empty, empty], 32)
    table = SketchTable.of(sketches, FPR.config.num_perm, FPR.words)
    return fps.langs, pair_similarities(table, np.array([0]), np.array([1]))


async def _decide(a: tuple[str, str | None], b: tuple[str, str | None]) -> list[tuple[Status, str | None]]:
    """Statuses of two documents (text, lang field) decided in one window on a fresh engine."""
    eng = Engine(load_settings(store_url="memory://", worker_id="test"), MemoryFingerprintStore())
    docs = [parse_document(json.dumps({"id": doc_id, "text": text} | ({"lang": lang} if lang else {})))
            for doc_id, (text, lang) in (("a", a), ("b", b))]
    return [(d.status, d.duplicate_of) for d in await eng.decide(docs)]


@pytest.mark.quality
def test_development_set_keeps_every_language_token_and_fingerprint(datasets_dir: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """With the detector, every document of the development set (all classed zh or en by the first
    rule) keeps the rule's language and bit-identical SimHash, MinHash signature (bytes) and profile;
    the documents with kana went to the detector and stayed Chinese; the documents' own lang fields
    are kept."""
    docs = [json.loads(line) for line in (datasets_dir / "docs.jsonl").read_bytes().splitlines()]
    texts = [d["text"] for d in docs]
    rule = rule_languages(normalize_batch(texts), FPR.classes)
    assert set(rule) == {"zh", "en"}
    asked: list[str] = []
    guess = FPR.detector.guess
    monkeypatch.setattr(FPR.detector, "guess", lambda text: asked.append(text) or guess(text))
    detected = FPR.fingerprint(texts)
    monkeypatch.undo()
    undetected = FPR.fingerprint(texts, list(rule))  # a code given bypasses the detector
    assert detected.langs == rule
    assert len(asked) == sum(any("\u3040" <= c <= "\u30ff" for c in t) for t in texts) == 3
    assert np.array_equal(detected.simhash, undetected.simhash)
    assert np.array_equal(detected.signatures, undetected.signatures)
    assert np.array_equal(detected.shingle_counts, undetected.shingle_counts)
    assert detected.shingle_kind == undetected.shingle_kind
    assert all(FPR.encode_signature(detected, i) == FPR.encode_signature(undetected, i) for i in range(len(texts)))
    prof = profiler()
    a, b = prof.profile_batch(detected.texts, detected.langs), prof.profile_batch(undetected.texts, rule)
    assert all(x.encode() == y.encode() for x, y in zip(a, b, strict=True))
    given = [d["lang"] for d in docs]
    assert FPR.fingerprint(texts, given).langs == given


def test_detects_languages_the_first_rule_could_not_tell() -> None:
    texts = [EN, FR, ZH, JA, KO, DE, TH, "12345 !!! 678"]
    assert FPR.fingerprint(texts).langs == ["en", "fr", "zh", "ja", "ko", "de", "th", "other"]


def test_the_detector_overrules_the_rule_only_within_its_class_and_when_confident() -> None:
    assert resolve("zh", Guess("ja", 1.0)) == "ja"
    assert resolve("zh", Guess("fr", 1.0)) == "zh"  # a Han-dominated text is not French
    assert resolve("en", Guess("fr", 0.5)) == "en"  # a short English title the detector half-reads as French
    assert resolve("other", Guess("ru", 0.99)) == "ru"
    assert resolve("other", Guess("zxx", 0.99)) == "other"


def test_a_documents_own_lang_field_keeps_priority() -> None:
    assert FPR.fingerprint([JA, FR, ZH], ["en", "de", None]).langs == ["en", "de", "zh"]
    assert parse_document(json.dumps({"id": "x", "text": JA, "lang": "ja"})).lang == "ja"
    assert parse_document(json.dumps({"id": "x", "text": JA, "lang": "xx"})).lang is None  # unknown: detected


def test_japanese_and_korean_are_read_as_characters_without_the_chinese_segmenter() -> None:
    fps = FPR.fingerprint(["東京都は本日、新条例を発表。", "서울시 조례 a"])
    assert fps.langs == ["ja", "ko"]
    assert fps.texts[0] == "东京都は本日、新条例を発表."  # normalised: kanji folded like Chinese characters
    assert tokens(FPR, fps.texts[0], "ja") == ["东京", "京都", "都は", "は本", "本日", "新条", "条例", "例を", "を発",
                                              "発表"]
    assert tokens(FPR, fps.texts[1], "ko") == ["서울", "울시", "조례", "a"]  # a run of one is its own token
    for i in range(2):
        assert feature_votes(FPR, fps.texts[i], fps.langs[i]).simhash().tolist() == fps.simhash[i].tolist()
        assert len(shingles(FPR, fps.texts[i], fps.langs[i])) == int(fps.shingle_counts[i])
    sig = decode_signature(FPR.encode_signature(fps, 0))
    assert (sig.kind, sig.size) == (b"j", FPR.config.zh_shingle)


def test_each_language_has_its_tokeniser_and_its_own_shingle_kind() -> None:
    chars, words = Tokenizer.CHARACTERS, Tokenizer.WORDS
    assert [tokenizer_of(x) for x in ("zh", "ja", "th", "en", "fr", "other")] == [
        Tokenizer.CHINESE, chars, chars, words, words, words]
    # the first version's bytes are kept: stored signatures stay comparable
    assert [shingle_kind(x) for x in ("zh", "en", "other")] == [b"c", b"w", b"w"]
    kinds = [shingle_kind(x) for x in ("zh", "en", "ja", "ko", *LANG_KINDS)]
    assert len(set(kinds)) == len(kinds) and all(len(k) == 1 for k in kinds)
    assert LANG_KINDS[:3] == ("af", "am", "ar") and shingle_kind("fr") == bytes([0x80 + 22])  # pinned


def test_japanese_and_chinese_sharing_han_characters_are_not_compared() -> None:
    langs, sims = _pair(ZH, JA)
    assert langs == ["zh", "ja"] and not sims.comparable[0]
    _, same = _pair(ZH, JA, ["zh", "zh"])  # read alike, the Chinese text is inside the Japanese one
    assert same.comparable[0] and same.containment[0] > 0.5


def test_english_and_french_sharing_words_are_not_compared() -> None:
    langs, sims = _pair(EN, FR)
    assert langs == ["en", "fr"] and not sims.comparable[0]
    _, same = _pair(EN, FR, ["en", "en"])
    assert same.comparable[0] and same.jaccard[0] > 0.0


@pytest.mark.parametrize(("text", "langs"), [(EN, ("en", "fr")), (ZH, ("zh", "ja"))])
async def test_a_near_copy_in_another_language_is_not_merged_an_exact_copy_is(text: str,
                                                                             langs: tuple[str, str]) -> None:
    edited = text.replace("Monday", "Tuesday").replace("决定", "规定", 1)
    assert edited != text
    same = await _decide((text, langs[0]), (edited, langs[0]))
    assert same[1] == (Status.DUPLICATE, "a")  # the control: in one language, a near-duplicate
    assert await _decide((text, langs[0]), (edited, langs[1])) == [(Status.UNIQUE, None), (Status.UNIQUE, None)]
    assert (await _decide((text, langs[0]), (text, langs[1])))[1] == (Status.DUPLICATE, "a")


def test_the_detector_reads_the_model_from_the_cache_as_py3langid_does(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The uncompressed copy of py3langid's model answers exactly as the model it ships, and is
    made once: a second detector reads the cached file."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    from neardup.text.language import LanguageDetector

    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path))
    shipped = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    cached = LanguageDetector().identifier
    made = sorted(tmp_path.glob("langid-*.npz"))
    assert len(made) == 1
    for text in ("Bonjour tout le monde, comment allez-vous ?", "Das ist ein Test.", "这是一个测试",
                 "これはテストです", "안녕하세요", "hello world"):
        assert cached.classify(text) == shipped.classify(text)
    stamp = made[0].stat().st_mtime_ns
    assert LanguageDetector().identifier.classify("Das ist ein Test.") == shipped.classify("Das ist ein Test.")
    assert made[0].stat().st_mtime_ns == stamp  # read, not made again
