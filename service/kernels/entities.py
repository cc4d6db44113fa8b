"""Entity anchors: names (people, places, organisations) as critical-difference entries.

A name token's entries are two one-sided contexts, the k tokens before it and the k after it
(other names in them stand as one mark, so a name replaced everywhere leaves its neighbours'
contexts equal), each with the name's hash as its fill. Two texts that share such a context but
not its name speak of someone else: the same notice about another company is a distinct document.
The entries join the document's critical-difference profile (``neardup.rules.differences``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neardup.kernels.hashing import fmix64

NAME_MARK = np.uint64(0x9E3779B97F4A7C15)  # a name inside another name's context
LEFT = np.uint64(0x4C)
RIGHT = np.uint64(0x52)


@njit(nogil=True, cache=True)
def name_tokens(tok_hashes, names, canonical):
    """Which tokens are names (their hash is in the sorted array ``names``), and each name's
    canonical hash (``canonical[j]`` of ``names[j]``: 北京市 and 北京 fill alike)."""
    n = tok_hashes.shape[0]
    flags = np.zeros(n, dtype=np.bool_)
    fills = np.zeros(n, dtype=np.uint64)
    if names.shape[0] == 0:
        return flags, fills
    at = np.searchsorted(names, tok_hashes)
    for i in range(n):
        if at[i] < names.shape[0] and names[at[i]] == tok_hashes[i]:
            flags[i] = True
            fills[i] = canonical[at[i]]
    return flags, fills


@njit(nogil=True, cache=True)
def sentence_breaks(cps, starts, ends, tok_off, marks):
    """Whether a sentence ends between token j - 1 and token j (a code point of the sorted
    ``marks`` stands between them); the first token of each document starts one."""
    n = starts.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    for d in range(tok_off.shape[0] - 1):
        for j in range(tok_off[d], tok_off[d + 1]):
            if j == tok_off[d]:
                out[j] = True
                continue
            for c in range(ends[j - 1], starts[j]):
                at = np.searchsorted(marks, cps[c])
                if at < marks.shape[0] and marks[at] == cps[c]:
                    out[j] = True
                    break
    return out


@njit(nogil=True, cache=True, inline="always")
def _context(tok_hashes, flags, lo, hi, seed, side):
    """32 bits of the tokens ``lo:hi`` (names as one mark), seeded and sided."""
    h = fmix64(np.uint64(seed) ^ side)
    for j in range(lo, hi):
        h = fmix64(h ^ (NAME_MARK if flags[j] else tok_hashes[j]))
    return h >> np.uint64(32)


@njit(nogil=True, cache=True)
def entity_entries(tok_hashes, tok_off, flags, fills, breaks, k, seed, fill_byte):
    """The entries (context << 16 | fill_byte << 8 | name byte) of every name token, two a name,
    sorted within each document; the token of each entry; the entries' document offsets.
    ``fills[i]``: the name hash of token i (where ``flags[i]``). A context stays inside the name's
    sentence (``breaks``): a reordered paragraph or a deleted sentence puts other words before a
    name at a sentence's start, which would read as another name in the same place."""
    n_docs = tok_off.shape[0] - 1
    total = 0
    for i in range(tok_hashes.shape[0]):
        total += 2 if flags[i] else 0
    entries = np.empty(total, dtype=np.uint64)
    tokens = np.empty(total, dtype=np.int64)
    doc_off = np.zeros(n_docs + 1, dtype=np.int64)
    w = 0
    fb = np.uint64(fill_byte) << np.uint64(8)
    for d in range(n_docs):
        a, b = tok_off[d], tok_off[d + 1]
        start = w
        for i in range(a, b):
            if not flags[i]:
                continue
            fill = fb | (fills[i] & np.uint64(0xFF))
            lo = i
            while lo > max(a, i - k) and not breaks[lo]:
                lo -= 1
            hi = i + 1
            while hi < min(b, i + 1 + k) and not breaks[hi]:
                hi += 1
            left = _context(tok_hashes, flags, lo, i, seed, LEFT)
            right = _context(tok_hashes, flags, i + 1, hi, seed, RIGHT)
            entries[w] = (left << np.uint64(16)) | fill
            tokens[w] = i
            entries[w + 1] = (right << np.uint64(16)) | fill
            tokens[w + 1] = i
            w += 2
        order = np.argsort(entries[start:w], kind="mergesort")
        entries[start:w] = entries[start:w][order]
        tokens[start:w] = tokens[start:w][order]
        doc_off[d + 1] = w
    return entries, tokens, doc_off


@njit(nogil=True, cache=True)
def _cjk_span(cps, start, end):
    """Whether ``cps[start:end]`` is all CJK ideographs."""
    for c in range(start, end):  # noqa: SIM110 (numba compiles loops, not generators)
        if cps[c] < 0x4E00 or cps[c] > 0x9FFF:
            return False
    return True


@njit(nogil=True, cache=True)
def surname_names(cps, starts, ends, tok_off, tok_hashes, flags, fills, surnames):
    """Flag, in place, people the dictionary lacks (Chinese): a surname standing alone as a
    one-character token (``surnames``: sorted code points) followed by a token of one or two
    ideographs (王/新民, 刘/业/定): both tokens are the name."""
    for d in range(tok_off.shape[0] - 1):
        a, b = tok_off[d], tok_off[d + 1]
        for i in range(a, b - 1):
            if ends[i] - starts[i] != 1 or flags[i] or flags[i + 1]:
                continue
            at = np.searchsorted(surnames, cps[starts[i]])
            m = ends[i + 1] - starts[i + 1]
            if (at < surnames.shape[0] and surnames[at] == cps[starts[i]] and 1 <= m <= 2
                    and _cjk_span(cps, starts[i + 1], ends[i + 1])):
                flags[i] = True
                flags[i + 1] = True
                fills[i] = tok_hashes[i]
                fills[i + 1] = tok_hashes[i + 1]
