"""Excerpt keys: which of a document's sentence hashes it is filed under (winnowing)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def winnowed(hashes, offsets, window, lead, cap):
    """(n, cap) picks of the hashes of each document d, ``hashes[offsets[d]:offsets[d+1]]`` in
    text order: its first ``lead`` and, of every ``window`` in a row (all of them when fewer), the
    smallest (the first of equal ones); distinct, in text order, at most ``cap``; 0 pads."""
    n = offsets.shape[0] - 1
    out = np.zeros((n, cap), dtype=np.uint64)
    for d in range(n):
        a, b = offsets[d], offsets[d + 1]
        m = b - a
        if m == 0 or cap == 0:
            continue
        chosen = np.zeros(m, dtype=np.bool_)
        chosen[: min(lead, m)] = True
        span = min(window, m)
        for start in range(m - span + 1):
            best = start
            for k in range(start + 1, start + span):
                if hashes[a + k] < hashes[a + best]:
                    best = k
            chosen[best] = True
        w = 0
        for k in range(m):
            if not chosen[k] or w == cap:
                continue
            h = hashes[a + k]
            seen = False
            for j in range(w):
                if out[d, j] == h:
                    seen = True
                    break
            if not seen:
                out[d, w] = h
                w += 1
    return out
