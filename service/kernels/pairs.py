"""Kernels over candidate pairs: the similarity re-check of a whole window in one call, and the
in-window join of index keys. Imports only numpy and numba; slow references in tests/unit/test_pairs.py."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True, inline="always")
def _popcount64(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(nogil=True, cache=True)
def pair_scores(sigs, bits, simhash, left, right):
    """For each pair (left[p], right[p]) of rows: the share of MinHash positions equal in the low
    min(bits) bits, that bit count, and the SimHash Hamming distance."""
    k = left.shape[0]
    perms = sigs.shape[1]
    words = simhash.shape[1]
    equal = np.empty(k, dtype=np.float64)
    used = np.empty(k, dtype=np.int64)
    ham = np.empty(k, dtype=np.int64)
    for p in range(k):
        a = left[p]
        b = right[p]
        nb = min(bits[a], bits[b])
        mask = np.uint32(0xFFFFFFFF) if nb >= 32 else np.uint32((1 << nb) - 1)
        eq = 0
        for i in range(perms):
            if (sigs[a, i] ^ sigs[b, i]) & mask == 0:
                eq += 1
        equal[p] = eq / perms
        used[p] = nb
        h = 0
        for w in range(words):
            h += _popcount64(simhash[a, w] ^ simhash[b, w])
        ham[p] = h
    return equal, used, ham


@njit(nogil=True, cache=True)
def self_join(keys):
    """Pairs (i, j), i < j, of rows of ``keys`` (n x K uint64, 0 = no key) sharing a key, each once."""
    n = keys.shape[0]
    width = keys.shape[1]
    flat = keys.ravel()
    order = np.argsort(flat, kind="mergesort")
    left = []
    right = []
    start = 0
    total = flat.shape[0]
    while start < total:
        stop = start + 1
        key = flat[order[start]]
        while stop < total and flat[order[stop]] == key:
            stop += 1
        if key != 0 and stop - start > 1:
            for x in range(start, stop):
                for y in range(x + 1, stop):
                    a = order[x] // width
                    b = order[y] // width
                    if a != b:
                        left.append(min(a, b))
                        right.append(max(a, b))
        start = stop
    out = np.empty((len(left), 2), dtype=np.int64)
    for p in range(len(left)):
        out[p, 0] = left[p]
        out[p, 1] = right[p]
    if n == 0 or out.shape[0] == 0:
        return out
    # each pair once (two rows sharing several keys are one pair)
    code = out[:, 0] * n + out[:, 1]
    uniq = np.unique(code)
    res = np.empty((uniq.shape[0], 2), dtype=np.int64)
    res[:, 0] = uniq // n
    res[:, 1] = uniq % n
    return res
