"""Timestamps are page furniture: a crawl or publication time in a header or footer.

Two reprints of one story carry different times (``发布时间：2009-07-22 10:30`` here,
``2009年07月23日 08:05`` there); read as figures, they would be a critical difference and split the
reprints. A date that comes with a clock time, and a clock time alone, are masked before the
critical-difference profile is made: every character of the stamp becomes ``MASK``, so positions
(and the passages quoted as evidence) stay where they were. A date without a time (``自2024年1月1日
起施行``) is content and stays an anchor.
"""

from __future__ import annotations

import re

MASK = "t"
_STAMP = re.compile(
    r"\d{4}\s*[-/.年]\s*\d{1,2}\s*[-/.月]\s*\d{1,2}\s*日?\s*\d{1,2}\s*:\s*\d{2}(?:\s*:\s*\d{2})?"
    r"|(?<![\d:])\d{1,2}\s*:\s*\d{2}(?:\s*:\s*\d{2})?(?![\d:])"
)


def mask_timestamps(text: str) -> str:
    """``text`` with every date-time stamp and clock time replaced by as many ``MASK`` characters."""
    return _STAMP.sub(lambda m: MASK * len(m.group()), text)


__all__ = ["MASK", "mask_timestamps"]
