"""The segmentation kernel against its slow reference, jieba itself (cut without HMM)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import jieba
import pytest
import rjieba

from neardup.text.normalize import normalize_batch
from neardup.text.segment import segmenter

CASES = [
    "国务院关于批准《城市规划条例》的通知",
    "2024年3月15日，某某公司的AT&T股价上涨了3.5%。",
    "他说：“我们不予批准。” hello world 123abc",
    "中华人民共和国密码法\n2019年10月26日第十三届全国人民代表大会常务委员会第十四次会议通过",
    "ｶﾞ　全角　ＡＢＣ\r\n换行　　空格",
    "",
]


@pytest.fixture(scope="module")
def jieba_reference() -> None:
    jieba.setLogLevel(60)
    jieba.initialize()


def test_cases_equal_jieba(jieba_reference: None) -> None:
    seg = segmenter()
    for text in CASES:
        assert seg.cut(text) == jieba.lcut(text, HMM=False), text


def test_development_documents_equal_jieba_and_rjieba(jieba_reference: None, datasets_dir: Path) -> None:
    with open(datasets_dir / "docs.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh if '"lang": "zh"' in line]
    rng = random.Random(5)
    sample = normalize_batch(rng.sample(texts, 60)).texts
    seg = segmenter()
    for text in sample:
        mine = seg.cut(text)
        assert mine == jieba.lcut(text, HMM=False)
        assert mine == rjieba.cut(text, False)
    raw = rng.sample(texts, 20)  # not normalised: full-width forms, CJK punctuation, line breaks
    for text in raw:
        assert seg.cut(text) == jieba.lcut(text, HMM=False)


def test_word_frequencies_are_the_dictionarys() -> None:
    """Each token's frequency as jieba's dictionary file gives it; 0 for a string no word of it."""
    import numpy as np

    from neardup.text.segment import jieba_dict_path

    wanted = {"稀树", "城市", "中华人民共和国", "施行"}
    counts = {}
    for line in jieba_dict_path().read_text(encoding="utf-8").splitlines():
        word, freq, *_ = line.split(" ")
        if word in wanted:
            counts[word] = int(freq)  # the last line of a word wins, as the table is built
    words = [*sorted(wanted), "稀树城"]
    text = "".join(words)
    cps = np.array([ord(c) for c in text], dtype=np.uint32)
    ends = np.cumsum([len(w) for w in words])
    got = segmenter().frequencies(cps, ends - np.array([len(w) for w in words]), ends)
    assert [round(float(f)) for f in got] == [counts[w] for w in sorted(wanted)] + [0]
