"""The cold tier's filter of archived keys (storage/postgres/keyfilter.py) and the reader of the
binary COPY that loads it: no key filed is ever reported absent, few others pass, sizes follow
the budget, and a stream cut anywhere reads the same keys."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from neardup.storage.errors import StoreCorruptError
from neardup.storage.postgres.archive import _CopiedKeys
from neardup.storage.postgres.keyfilter import BITS_PER_KEY, MIN_BITS, KeyFilter, filter_bits

RNG = np.random.default_rng(7)


def keys(n: int) -> np.ndarray:
    return RNG.integers(0, 2**64, size=n, dtype=np.uint64)


def test_every_key_filed_may_be_held_and_few_others_pass() -> None:
    filed, others = keys(50_000), keys(200_000)
    f = KeyFilter(filter_bits(filed.size, 1 << 30))
    f.add(filed[:20_000])
    f.add(filed[20_000:].reshape(-1, 10))  # any shape
    assert f.may_hold(filed).all()
    assert f.may_hold(filed.reshape(-1, 50)).shape == (1_000, 50)
    bits_a_key = f.bits / filed.size
    expected = (1 - np.exp(-2 / bits_a_key)) ** 2
    passed = f.may_hold(others).mean()
    assert passed < 1.5 * expected + 0.002 and expected < 0.05


def test_an_empty_filter_passes_nothing() -> None:
    assert not KeyFilter(MIN_BITS).may_hold(keys(1_000)).any()


def test_sizes_are_powers_of_two_within_the_budget() -> None:
    assert filter_bits(0, 1 << 30) == MIN_BITS
    assert filter_bits(1_000_000, 1 << 30) == 1 << 24  # 10 M bits wanted: the next power of two
    assert filter_bits(1_000_000, 1 << 20) == 1 << 23  # the budget caps it (8 M bits)
    assert filter_bits(10**12, 1 << 40) == 1 << 32
    with pytest.raises(ValueError):
        KeyFilter(3 << 20)


def test_a_filter_is_crowded_past_its_keys_while_the_budget_allows_a_larger_one() -> None:
    f = KeyFilter(MIN_BITS)
    f.add(keys(MIN_BITS // BITS_PER_KEY))
    assert not f.crowded(1 << 30)
    f.add(keys(10))
    assert f.crowded(1 << 30) and not f.crowded(MIN_BITS // 8)


def copy_stream(values: list[int]) -> bytes:
    """A binary COPY of one bigint column, as PostgreSQL writes it."""
    rows = b"".join(struct.pack(">hiq", 1, 8, v) for v in values)
    return b"PGCOPY\n\xff\r\n\0" + struct.pack(">ii", 0, 0) + rows + b"\xff\xff"


def test_a_copy_cut_anywhere_reads_the_same_keys() -> None:
    values = [1, -1, 2**63 - 1, -(2**63), 12345]
    stream = copy_stream(values)
    want = np.array(values, dtype=np.int64).view(np.uint64)
    splits = [[stream[:cut], stream[cut:]] for cut in range(len(stream) + 1)]
    splits.append([stream[i : i + 7] for i in range(0, len(stream), 7)])
    for parts in splits:
        reader = _CopiedKeys("postgresql://x")
        got = np.concatenate([reader.keys(p) for p in parts])
        reader.end()
        assert got.tolist() == want.tolist()


def test_a_copy_that_is_not_bigints_is_refused() -> None:
    with pytest.raises(StoreCorruptError):
        _CopiedKeys("postgresql://x").keys(b"NOTCOPY" + b"\0" * 40)
    wide = b"PGCOPY\n\xff\r\n\0" + struct.pack(">ii", 0, 0) + struct.pack(">hi", 1, 4) + b"\0" * 8
    with pytest.raises(StoreCorruptError):
        _CopiedKeys("postgresql://x").keys(wide)
    cut = _CopiedKeys("postgresql://x")
    cut.keys(copy_stream([1])[:-5])  # the stream ended inside a row
    with pytest.raises(StoreCorruptError):
        cut.end()
