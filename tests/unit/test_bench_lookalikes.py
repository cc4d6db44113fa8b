"""The look-alike bench's reading of the PKU corpus's names (bench/lookalikes.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from lookalikes import as_written  # the bench folder is no package: on the path above


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
