"""``neardup explain``: per-bit SimHash attribution recomputed from the engine's own features, the
shingles that differ, and every critical difference."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.config import load_settings
from neardup.engine import Engine
from neardup.explain import explain_with, feature_votes, format_report, shingles, tokens
from neardup.storage.memory import MemoryFingerprintStore

ROOT = Path(__file__).resolve().parents[2]

ZH = ("为了进一步加强城市管理，市政府决定在全市范围内开展环境整治行动。各区应当迅速制定实施方案，认真落实各项措施，"
      "确保整治工作取得明显成效。相关部门要加强协调配合，及时解决工作中遇到的困难和问题。")
EN = ("The city council approved a large budget on Monday to build a modern hospital in the northern district. "
      "Officials said construction would begin quickly and the project should be finished within three years. "
      "Residents welcomed the decision, saying the area had waited a long time for better medical services.")
SYNONYMS = {"zh": [("迅速", "尽快"), ("明显", "显著"), ("困难", "难题")],
            "en": [("large", "big"), ("modern", "new"), ("quickly", "soon")]}

# words the weight table treats specially (negators, decision and template words, stop words),
# ordinary words of three scripts, figures, and furniture that must not become tokens
VOCAB = ["不", "不予", "未", "没有", "批准", "驳回", "同意", "有效", "无效", "通知", "规定", "的", "了", "本", "决定",
         "国务院", "经济", "开发区", "手续", "三十日", "2024年", "第十二条", "責任", "開發區", "ｆｕｌｌ", "１２３",
         "not", "no", "never", "approved", "rejected", "the", "a", "budget", "Budget", "rose", "fell", "3.5%",
         "can't", "don't", "hospital", "привет", "мир", "東京", "한국어", "🙂", "<b>", "</b>", "&amp;"]
SEPARATORS = ["", " ", "，", "。", "\n", " - ", "、"]

texts = st.lists(st.tuples(st.sampled_from(VOCAB), st.sampled_from(SEPARATORS)), max_size=60).map(
    lambda parts: "".join(w + s for w, s in parts)
) | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=80)


def _engine(**fingerprint: object) -> Engine:
    return Engine(load_settings(store_url="memory://", fingerprint=fingerprint), MemoryFingerprintStore())


ENGINES = {"64-bit": _engine(), "128-bit": _engine(simhash_bits=128), "jieba HMM": _engine(segment_hmm=True)}


@pytest.mark.parametrize("name", list(ENGINES))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(texts, min_size=1, max_size=4))
def test_recomputed_votes_give_the_engines_simhash_and_shingles(name: str, batch: list[str]) -> None:
    fper = ENGINES[name].fingerprinter
    fps = fper.fingerprint(batch)
    for i in range(len(batch)):
        votes = feature_votes(fper, fps.texts[i], fps.langs[i])
        assert votes.simhash().tolist() == fps.simhash[i].tolist(), (fps.texts[i], fps.langs[i])
        assert len(shingles(fper, fps.texts[i], fps.langs[i])) == int(fps.shingle_counts[i])


def test_negation_features_and_term_frequency_are_the_kernels() -> None:
    fper = ENGINES["64-bit"].fingerprinter
    votes = feature_votes(fper, "决定不予批准,批准,批准。", "zh")
    by_label = {f.label: f for f in votes.features}
    approve = by_label["批准"]
    assert approve.tf == 3 and approve.vote == round(approve.weight * (1 + np.log(3)) * 1024)
    negated = by_label["不予+批准"]
    assert negated.weight == pytest.approx(approve.weight * fper.weights.negation_weight)
    assert "不予" not in by_label  # a negator weighs only through the feature it forms


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_synonym_edited_bits_are_attributed_to_the_edited_words(lang: str) -> None:
    a = ZH if lang == "zh" else EN
    b = a
    for old, new in SYNONYMS[lang]:
        b = b.replace(old, new)
    edited = {w for pair in SYNONYMS[lang] for w in pair}
    engine = _engine()
    # the edits change no segmentation around them: exactly the edited words differ
    diff = Counter(tokens(engine.fingerprinter, a, lang)) - Counter(tokens(engine.fingerprinter, b, lang))
    assert set(diff) == {old for old, _ in SYNONYMS[lang]}
    report = await explain_with(engine, {"id": "a", "text": a}, {"id": "b", "text": b})
    att = report["simhash_attribution"]
    assert att["recomputed_equals_engine"]
    assert report["hamming"] > 0 and [x["bit"] for x in att["bits"]] == report["differing_simhash_bits"]
    for bit in att["bits"]:
        assert bit["a"] != bit["b"] and (bit["vote_a"] > 0) == bool(bit["a"]) and (bit["vote_b"] > 0) == bool(bit["b"])
        pushers = [p["feature"] for p in bit["pushed_by"]]
        assert pushers and set(pushers) <= edited, bit  # words on both sides with equal weight push nothing
        top = bit["pushed_by"][0]
        assert (top["side"] == "a") == (top["feature"] in {old for old, _ in SYNONYMS[lang]})
        # the shares add up: the top pushers account for the sign of the difference
        assert sum(p["delta"] for p in bit["pushed_by"]) * (bit["vote_a"] - bit["vote_b"]) > 0
    ds = report["differing_shingles"]
    assert ds["only_a"] > 0 and ds["only_b"] > 0
    olds = [old for old, _ in SYNONYMS[lang]]
    news = [new for _, new in SYNONYMS[lang]]
    if lang == "en":  # word shingles: each holds a whole edited word
        assert all(any(w in s.split() for w in olds) for s in ds["examples_a"])
        assert all(any(w in s.split() for w in news) for s in ds["examples_b"])
    else:  # character shingles: each overlaps an edited word
        assert all(any(set(s) & set(w) for w in olds) for s in ds["examples_a"])
        assert all(any(set(s) & set(w) for w in news) for s in ds["examples_b"])


async def test_every_critical_difference_is_listed() -> None:
    a = ("国务院关于同意设立某某经济开发区的批复。经研究，决定给予批准，请按规定办理相关手续。"
         "原合同第三条约定的付款期限依法有效，双方应当继续履行，不得擅自变更。")
    b = a.replace("给予批准", "不予批准").replace("依法有效", "依法无效")
    report = await explain_with(_engine(), {"id": "a", "text": a}, {"id": "b", "text": b})
    found = report["critical_differences"]
    assert len(found) == 2 and found[0] == report["critical_difference"]
    assert {d["kind"] for d in found} == {"polarity"}
    assert any("不予批准" in d["passage"] for d in found) and any("无效" in d["passage"] for d in found)
    assert report["decision_for_b_after_a"]["status"] == "unique"


async def test_the_report_names_both_sides_and_quotes_the_original() -> None:
    """Both texts are at hand: each difference says what stands on either side, in words, and
    quotes the passage from B as given (full-width punctuation, traditional characters), with
    its offsets; the printed report has no dict reprs."""
    a = "經審查，市場監督管理局決定給予批准某某公司的設立登記申請，請申請人三十日內到窗口辦理相關手續，特此通知。"
    b = a.replace("給予批准", "不予批准")
    report = await explain_with(_engine(), {"id": "a", "text": a}, {"id": "b", "text": b})
    diff = report["critical_difference"]
    assert diff["versus"] == "polarity: 不予批准 vs 给予批准"
    start, end = diff["at"]
    assert diff["passage"] == b[start:end] and "不予批准" in diff["passage"] and "，" in diff["passage"]
    text = format_report(report)
    assert "critical difference: polarity: 不予批准 vs 给予批准" in text
    assert "{'" not in text and "thresholds: jaccard_high" in text


def test_explain_prints_the_attribution() -> None:
    b = EN.replace("large", "big").replace("modern", "new")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-m", "neardup", "explain", EN, b], cwd=ROOT, capture_output=True,
                         env=env, timeout=300, check=False)
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    text = res.stdout.decode()
    assert "shingles only in A:" in text and "shingles only in B:" in text
    bit_lines = [line for line in text.splitlines() if line.lstrip().startswith("bit ")]
    assert bit_lines and all("pushed by" in line for line in bit_lines)
    assert all(("large" in line or "modern" in line or "big" in line or "new" in line) for line in bit_lines)
    js = subprocess.run([sys.executable, "-m", "neardup", "explain", "--json", EN, b], cwd=ROOT, capture_output=True,
                        env=env, timeout=300, check=False)
    report = json.loads(js.stdout)
    assert len(report["simhash_attribution"]["bits"]) == len(bit_lines)
