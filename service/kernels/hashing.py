"""Stable 64-bit hashing of code-point spans (identical on every machine and Python version).

hash_span: FNV-1a over the UTF-32 code points of a span, seeded, finalised with MurmurHash3's
fmix64. Token, shingle and band hashes are all built from it, so one definition pins them all.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)
C1 = np.uint64(0xFF51AFD7ED558CCD)
C2 = np.uint64(0xC4CEB9FE1A85EC53)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(uint64(uint64), nogil=True, cache=True, inline="always")
def fmix64(h):
    """MurmurHash3's 64-bit finaliser: spreads every input bit over the whole word."""
    h ^= h >> np.uint64(33)
    h *= C1
    h ^= h >> np.uint64(33)
    h *= C2
    h ^= h >> np.uint64(33)
    return h


@njit(nogil=True, cache=True, inline="always")
def hash_span(cps, start, end, seed):
    """FNV-1a over the code points ``cps[start:end]``, seeded, finalised with :func:`fmix64`."""
    h = FNV_OFFSET ^ (np.uint64(seed) * GOLDEN)
    for i in range(start, end):
        h ^= np.uint64(cps[i])
        h *= FNV_PRIME
    return fmix64(h ^ np.uint64(end - start))


@njit(nogil=True, cache=True, inline="always")
def combine(h, x):
    """Order-dependent combination of two 64-bit hashes."""
    return fmix64((h * GOLDEN) ^ (x + np.uint64(0x632BE59BD9B4E019)))


@njit(nogil=True, cache=True)
def hash_spans(cps, starts, ends, seed):
    """:func:`hash_span` of each (start, end) span."""
    n = starts.shape[0]
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        out[i] = hash_span(cps, starts[i], ends[i], seed)
    return out


@njit(nogil=True, cache=True, inline="always")
def per_doc_table(doc_offsets):
    """(longest document, power-of-two table size >= twice it): a per-document open-addressing
    table stays at most half full, and one table serves every document of the batch."""
    longest = 1
    for d in range(doc_offsets.shape[0] - 1):
        longest = max(longest, doc_offsets[d + 1] - doc_offsets[d])
    size = 1
    while size < 2 * longest:
        size *= 2
    return longest, size
