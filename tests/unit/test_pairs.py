"""The pair kernels (service/kernels/pairs.py) against slow references on random inputs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.kernels.pairs import pair_scores, self_join


def _slow_scores(sigs, bits, simhash, left, right):  # type: ignore[no-untyped-def]
    out = []
    for a, b in zip(left.tolist(), right.tolist(), strict=True):
        nb = min(int(bits[a]), int(bits[b]))
        mask = (1 << nb) - 1
        eq = sum(1 for x, y in zip(sigs[a].tolist(), sigs[b].tolist(), strict=True) if (x ^ y) & mask == 0)
        ham = sum(bin(int(x) ^ int(y)).count("1") for x, y in zip(simhash[a], simhash[b], strict=True))
        out.append((eq / sigs.shape[1], nb, ham))
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 12), st.integers(1, 64), st.integers(1, 2), st.integers(0, 2**32 - 1))
def test_pair_scores_match_the_reference(n: int, perms: int, words: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    sigs = rng.integers(0, 2**32, size=(n, perms), dtype=np.uint64).astype(np.uint32)
    sigs[1] = sigs[0] ^ (rng.integers(0, 2, size=perms, dtype=np.uint32) << np.uint32(9))  # equal low bits
    bits = rng.choice([8, 16, 32], size=n).astype(np.int64)
    simhash = rng.integers(0, 2**63, size=(n, words), dtype=np.uint64)
    left = rng.integers(0, n, size=30).astype(np.int64)
    right = rng.integers(0, n, size=30).astype(np.int64)
    equal, used, ham = pair_scores(sigs, bits, simhash, left, right)
    assert list(zip(equal.tolist(), used.tolist(), ham.tolist(), strict=True)) == _slow_scores(
        sigs, bits, simhash, left, right)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 6), min_size=3, max_size=3), min_size=0, max_size=25))
def test_self_join_finds_every_pair_sharing_a_key_once(rows: list[list[int]]) -> None:
    keys = np.array(rows, dtype=np.uint64).reshape(len(rows), 3)
    expected = {(i, j) for i in range(len(rows)) for j in range(i + 1, len(rows))
                if {k for k in rows[i] if k} & {k for k in rows[j] if k}}  # 0 is "no key"
    got = self_join(keys)
    assert got.shape[1] == 2 and len(got) == len(expected)
    assert {(int(a), int(b)) for a, b in got} == expected
