"""Critical-difference comparison of two anchor profiles.

A profile is a sorted uint64 array of (context hash << 16 | fill hash) entries, repeats kept.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def replaced_context(mine, theirs):
    """Index in ``mine`` of the first entry whose context has, after cancelling equal entries
    pairwise, a fill left on both sides (a replacement); -1 when there is none."""
    n = mine.shape[0]
    m = theirs.shape[0]
    left_mine = np.empty(n, dtype=np.int64)
    left_theirs = np.empty(m, dtype=np.uint64)
    a = 0
    b = 0
    na = 0
    nb = 0
    while a < n and b < m:
        if mine[a] == theirs[b]:
            a += 1
            b += 1
        elif mine[a] < theirs[b]:
            left_mine[na] = a
            na += 1
            a += 1
        else:
            left_theirs[nb] = theirs[b]
            nb += 1
            b += 1
    while a < n:
        left_mine[na] = a
        na += 1
        a += 1
    while b < m:
        left_theirs[nb] = theirs[b]
        nb += 1
        b += 1
    # both leftovers are sorted by context: look for a context present in both
    i = 0
    j = 0
    while i < na and j < nb:
        ca = mine[left_mine[i]] >> np.uint64(16)
        cb = left_theirs[j] >> np.uint64(16)
        if ca == cb:
            return left_mine[i]
        if ca < cb:
            i += 1
        else:
            j += 1
    return -1
