"""Timestamp masking over a window's code points: the regular expression of
:mod:`neardup.text.stamps`, matched the way Python's ``re.sub`` matches it.

The pattern (``\\d``: a Unicode decimal digit, ``\\s``: Unicode whitespace, both looked up in a
class table the caller builds with ``re`` itself)::

    \\d{4}\\s*[-/.年]\\s*\\d{1,2}\\s*[-/.月]\\s*\\d{1,2}\\s*日?\\s*\\d{1,2}\\s*:\\s*\\d{2}(?:\\s*:\\s*\\d{2})?
    | (?<![\\d:])\\d{1,2}\\s*:\\s*\\d{2}(?:\\s*:\\s*\\d{2})?(?![\\d:])

is tried at every position, the first alternative first; a match is masked and the scan goes on
after it. ``re`` backtracks through its choices in a fixed order (a greedy repeat tries the
longest count first, an optional group is tried present first); the kernel walks the same choices
in the same order. Every ``\\s*`` is followed by a token that never matches whitespace, so
giving back spaces can never rescue a failed path and the kernel takes them all at once
(``\\s*日?\\s*`` included: fewer spaces before an absent ``日`` end at the same place).
"""

from __future__ import annotations

import numpy as np
from numba import njit

DIGIT = 1  # class table bits
SPACE = 2
COLON = 0x3A
DAY = 0x65E5  # 日
YEAR = 0x5E74  # 年, the year separator besides - / .
MONTH = 0x6708  # 月, the month separator besides - / .


@njit(nogil=True, cache=True, inline="always")
def _is(cps, i, hi, table, bit):
    if i >= hi:
        return False
    cp = cps[i]
    return cp < table.shape[0] and (table[cp] & bit) != 0


@njit(nogil=True, cache=True, inline="always")
def _spaces(cps, i, hi, table):
    while _is(cps, i, hi, table, SPACE):
        i += 1
    return i


@njit(nogil=True, cache=True, inline="always")
def _digits(cps, i, count, hi, table):
    """``count`` digits at ``i``."""
    k = 0
    while k < count and _is(cps, i + k, hi, table, DIGIT):
        k += 1
    return k == count


@njit(nogil=True, cache=True, inline="always")
def _sep(cps, i, hi, last):
    """``[-/.]`` or ``last`` at ``i``."""
    if i >= hi:
        return False
    cp = cps[i]
    return cp == 0x2D or cp == 0x2F or cp == 0x2E or cp == last


@njit(nogil=True, cache=True, inline="always")
def _seconds(cps, end, hi, table):
    """End of the optional ``\\s*:\\s*\\d{2}`` at ``end``, or -1 when it is absent."""
    e = _spaces(cps, end, hi, table)
    if e < hi and cps[e] == COLON:
        e = _spaces(cps, e + 1, hi, table)
        if _digits(cps, e, 2, hi, table):
            return e + 2
    return -1


@njit(nogil=True, cache=True, inline="always")
def _free(cps, i, hi, table):
    """``(?![\\d:])`` at ``i``."""
    return not (i < hi and (cps[i] == COLON or _is(cps, i, hi, table, DIGIT)))


@njit(nogil=True, cache=True)
def _date_time(cps, p, hi, table):
    """End of the first alternative (date and time) matched at ``p``, or -1."""
    if not _digits(cps, p, 4, hi, table):
        return -1
    i = _spaces(cps, p + 4, hi, table)
    if not _sep(cps, i, hi, YEAR):
        return -1
    i = _spaces(cps, i + 1, hi, table)
    for m in (2, 1):
        if not _digits(cps, i, m, hi, table):
            continue
        j = _spaces(cps, i + m, hi, table)
        if not _sep(cps, j, hi, MONTH):
            continue
        j = _spaces(cps, j + 1, hi, table)
        for d in (2, 1):
            if not _digits(cps, j, d, hi, table):
                continue
            k = _spaces(cps, j + d, hi, table)
            if k < hi and cps[k] == DAY:
                k += 1
            k = _spaces(cps, k, hi, table)
            for h in (2, 1):
                if not _digits(cps, k, h, hi, table):
                    continue
                c = _spaces(cps, k + h, hi, table)
                if not (c < hi and cps[c] == COLON):
                    continue
                c = _spaces(cps, c + 1, hi, table)
                if not _digits(cps, c, 2, hi, table):
                    continue
                sec = _seconds(cps, c + 2, hi, table)
                return sec if sec >= 0 else c + 2
    return -1


@njit(nogil=True, cache=True)
def _clock(cps, lo, p, hi, table):
    """End of the second alternative (a clock time alone) matched at ``p``, or -1."""
    if p > lo and (cps[p - 1] == COLON or _is(cps, p - 1, hi, table, DIGIT)):
        return -1
    for h in (2, 1):
        if not _digits(cps, p, h, hi, table):
            continue
        c = _spaces(cps, p + h, hi, table)
        if not (c < hi and cps[c] == COLON):
            continue
        c = _spaces(cps, c + 1, hi, table)
        if not _digits(cps, c, 2, hi, table):
            continue
        sec = _seconds(cps, c + 2, hi, table)
        if sec >= 0 and _free(cps, sec, hi, table):
            return sec
        if _free(cps, c + 2, hi, table):
            return c + 2
    return -1


@njit(nogil=True, cache=True, inline="always")
def _in_stamp(cps, i, hi, table):
    """Whether the code point at ``i`` can be part of a stamp (digit, space, separator, 日, colon)."""
    if _is(cps, i, hi, table, DIGIT | SPACE):
        return True
    cp = cps[i]
    return cp in (COLON, DAY, MONTH) or _sep(cps, i, hi, YEAR)


@njit(nogil=True, cache=True)
def stamp_spans(cps, offsets, table):
    """(doc, start, end) of every stamp, in text order. ``table``: class bits (DIGIT, SPACE) per
    code point.

    Every stamp holds a colon and only characters that :func:`_in_stamp` accepts, so a stamp lies
    inside one run of such characters around a colon (the lookbehind and lookahead at its ends see
    characters outside the run, which they reject, as they reject the ends of the text): only the
    positions of those runs are tried, in order, which finds the matches ``re`` finds."""
    n = offsets.shape[0] - 1
    docs = []
    starts = []
    ends = []
    for d in range(n):
        lo = offsets[d]
        hi = offsets[d + 1]
        done = lo  # positions before this are tried already
        for c in range(lo, hi):
            if cps[c] != COLON or c < done:
                continue
            p = c
            while p > done and _in_stamp(cps, p - 1, hi, table):
                p -= 1
            end = c + 1
            while end < hi and _in_stamp(cps, end, hi, table):
                end += 1
            while p < end:
                e = -1
                if _is(cps, p, hi, table, DIGIT):  # both alternatives start with a digit
                    e = _date_time(cps, p, hi, table)
                    if e < 0:
                        e = _clock(cps, lo, p, hi, table)
                if e < 0:
                    p += 1
                    continue
                docs.append(d)
                starts.append(p - lo)
                ends.append(e - lo)
                p = e
            done = end
    return np.array(docs, dtype=np.int64), np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
