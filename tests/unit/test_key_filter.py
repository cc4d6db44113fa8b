"""The cold tier's filter of archived keys (storage/postgres/keyfilter.py): no key filed is ever
reported absent, few others pass, sizes follow the budget; keys read back as packed bytes."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from neardup.storage.errors import StoreCorruptError
from neardup.storage.postgres.archive import packed_keys
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


def test_packed_keys_read_back_as_uint64_and_a_cut_one_is_refused() -> None:
    values = [1, 2**63, 2**64 - 1, 12345]
    assert packed_keys(b"".join(struct.pack(">Q", v) for v in values), "postgresql://x").tolist() == values
    with pytest.raises(StoreCorruptError):
        packed_keys(b"\0" * 12, "postgresql://x")


def test_a_folded_filter_still_holds_every_key() -> None:
    filed = keys(20_000)
    f = KeyFilter(1 << 22)
    f.add(filed)
    small = f.folded(1 << 19)
    assert small.bits == 1 << 19 and small.added == f.added and small.may_hold(filed).all()
    assert f.folded(1 << 30) is f
    with pytest.raises(ValueError):
        KeyFilter.of_words(1 << 20, f.words, 1)
