"""Timestamps are page furniture: a crawl or publication time in a header or footer.

Two reprints of one story carry different times (``发布时间：2009-07-22 10:30`` here,
``2009年07月23日 08:05`` there); read as figures, they would be a critical difference and split the
reprints. A date that comes with a clock time, and a clock time alone in a page's header or
footer or a labelled field, are masked before the critical-difference profile is made: every
character of the stamp becomes ``MASK``, so positions (and the passages quoted as evidence) stay
where they were. A clock time inside the story (the fire started at 6:30am) is content: its
figures stay anchors, so two times that trade places are told apart. A date without a time (``自2024年1月1日
起施行``) is content and stays an anchor, unless it is the value of a labelled field: right after a
colon (``Published: 5 March 2004``, ``发布日期：2019-03-05``), where pages print their own dates.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from neardup.kernels import stamps as kstamps

MASK = "t"
_STAMP = re.compile(
    r"\d{4}\s*[-/.年]\s*\d{1,2}\s*[-/.月]\s*\d{1,2}\s*日?\s*\d{1,2}\s*:\s*\d{2}(?:\s*:\s*\d{2})?"
    r"|(?<![\d:])\d{1,2}\s*:\s*\d{2}(?:\s*:\s*\d{2})?(?![\d:])"
)


_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
# a date right after a colon (its label's): numeric, day month year, or month day, year (normalised,
# so lower case); group 1 is the date
_LABELLED_DATE = re.compile(
    r":\s*(\d{4}\s*[-/.年]\s*\d{1,2}\s*[-/.月]\s*\d{1,2}(?:\s*日)?"
    rf"|\d{{1,2}}\s+{_MONTH},?\s+\d{{4}}|{_MONTH}\s+\d{{1,2}},?\s+\d{{4}})(?!\d)"
)


def _mask_labelled_dates(text: str) -> str:
    return _LABELLED_DATE.sub(lambda m: m.group()[: m.start(1) - m.start()] + MASK * len(m.group(1)), text)


def mask_timestamps(text: str) -> str:
    """``text`` with every date-time stamp, clock time of the page's furniture and labelled date
    replaced by as many ``MASK`` characters (the reference of :func:`mask_timestamps_batch`)."""
    return _mask_labelled_dates(_STAMP.sub(
        lambda m: m.group() if _in_body(text, m.start(), m.end()) else MASK * len(m.group()), text))


@lru_cache(maxsize=1)
def _classes() -> npt.NDArray[np.uint8]:
    """Per code point: DIGIT where ``re``'s ``\\d`` matches it, SPACE where ``\\s`` does (built
    with ``re`` itself, so the kernel reads exactly the classes the pattern uses)."""
    every = np.arange(0x110000, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
    table = np.zeros(0x110000, dtype=np.uint8)
    for pattern, bit in ((r"\d", kstamps.DIGIT), (r"\s", kstamps.SPACE)):
        hits = [m.start() for m in re.finditer(pattern, every)]
        table[np.asarray(hits, dtype=np.int64)] |= bit
    return table


def mask_timestamps_batch(texts: Sequence[str]) -> list[str]:
    """:func:`mask_timestamps` of every text, in one kernel call; a text without a stamp is
    returned as it is."""
    if not texts:
        return []
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=offsets[1:])
    cps = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    docs, starts, ends = kstamps.stamp_spans(cps, offsets, _classes())
    out = list(texts)
    for d, a, b in zip(docs.tolist(), starts.tolist(), ends.tolist(), strict=True):
        text = out[d]
        if not _in_body(text, a, b):
            out[d] = text[:a] + MASK * (b - a) + text[b:]
    return [_mask_labelled_dates(t) for t in out]


EDGE_CHARS = 60  # a page's header and footer: where crawl and publication times stand
DATE_PARTS = frozenset("年月-/.")


def _in_body(text: str, start: int, end: int) -> bool:
    """Whether the stamp ``text[start:end]`` is a clock time of the story itself (the fire started
    at 6:30am), kept as figures: a time alone, not within the first or last ``EDGE_CHARS``
    characters, not a labelled field's value (``更新：10:30``). A date with its time is furniture
    wherever it stands."""
    if DATE_PARTS.intersection(text[start:end]) or start < EDGE_CHARS or end > len(text) - EDGE_CHARS:
        return False
    return not text[max(0, start - 3) : start].rstrip().endswith((":", "："))


__all__ = ["MASK", "mask_timestamps", "mask_timestamps_batch"]
