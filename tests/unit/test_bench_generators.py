"""The benches' own generators: the PKU names the look-alikes use and the tagged names they swap
(bench/lookalikes.py), the flips of excerpts (bench/excerpts.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from excerpts import flipped  # the bench folder is no package: on the path above
from lookalikes import as_written, build_tagged


@pytest.mark.parametrize(("name", "written"), [
    ("江泽民", "江泽民"),
    ("曲（沃）", "曲沃"),  # an abbreviated name, its rest in brackets
    ("秦（皇岛）", "秦皇岛"),
    ("（黄）河", "黄河"),
    ("韩钟（昆音）", None),  # the reading of a rare character: no text writes it
    ("薛昭（上均＋下金）", None),  # the parts of a rare character
])
def test_a_pku_name_is_read_as_a_text_writes_it(name: str, written: str | None) -> None:
    """The corpus's brackets are annotations: a look-alike that put 曲（沃） in a notice where
    another place stood made a text no one writes, which the name check need not read."""
    assert as_written(name) == written


@pytest.mark.parametrize(("passage", "flip"), [
    ("than American John can do it", "than American John cannot do it"),  # not Americannot
    ("Many Jamaican entertainers", None),  # no word to flip: none inside a word
    ("依法可以申请复议", "依法不得申请复议"),
])
def test_an_excerpts_flip_is_of_a_word_not_inside_one(passage: str, flip: str | None) -> None:
    """The excerpt bench's flip replaced "can " inside American and Jamaican: a text that says no
    opposite, which the check rightly merged, counted as a flip merged (2 of 200)."""
    assert flipped(passage) == flip


def test_a_tagged_look_alike_swaps_a_name_for_one_another_text_holds() -> None:
    """Each look-alike replaces one name the tagger reads, everywhere, by a name of its kind read
    in another document and absent from its own; English texts make none."""
    docs = [{"id": "a", "lang": "zh", "text": "国务院总理李鹏今天在北京会见了来访的客人，李鹏说两国关系良好。"},
            {"id": "b", "lang": "zh", "text": "外交部长钱其琛昨天在上海出席了会议，钱其琛发表了讲话。"},
            {"id": "c", "lang": "en", "text": "Prime Minister John Howard met Tony Blair in London."}]
    out, pairs = build_tagged(docs, seed=1, per_kind=5)
    text = {d["id"]: d["text"] for d in out}
    assert pairs and all(a in {"a", "b"} for a, _, _ in pairs)
    for a, b, kind in pairs:
        assert kind.startswith("tagged_") and text[a] != text[b]
        other = {"a": "b", "b": "a"}[a]
        gone = [w for w in ("李鹏", "北京", "钱其琛", "上海") if w in text[a] and w not in text[b]]
        new = [w for w in ("李鹏", "北京", "钱其琛", "上海") if w in text[b] and w not in text[a]]
        assert len(gone) == 1 and len(new) == 1 and new[0] in text[other]
