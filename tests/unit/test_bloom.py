"""The worker's Bloom filter renews itself: two generations, the older dropped when the newer is
full, so it never saturates into answering "maybe" to everything."""

from __future__ import annotations

import hashlib

from rbloom import Bloom

from neardup.sketch.bloom import RotatingBloom


def h(k: int) -> bytes:
    return hashlib.blake2b(str(k).encode(), digest_size=16).digest()


def test_the_last_capacity_hashes_are_kept_and_older_ones_forgotten() -> None:
    bloom = RotatingBloom(100, 0.001)
    bloom.add_all(h(k) for k in range(250))
    assert bloom.rotations == 2 and bloom.fill == 0.5
    assert all(h(k) in bloom for k in range(100, 250))  # the two generations kept
    forgotten = sum(h(k) in bloom for k in range(100))
    assert forgotten <= 2  # dropped with the oldest generation, but for false positives


def test_a_full_generation_does_not_saturate() -> None:
    """A single filter past its capacity answers yes to nearly anything; renewed, unseen hashes
    stay near the configured false-positive rate."""
    bloom = RotatingBloom(1_000, 0.01)
    bloom.add_all(h(k) for k in range(20_000))
    single = Bloom(1_000, 0.01, hash_func=lambda b: int.from_bytes(b[:16], "big", signed=True))
    for k in range(20_000):
        single.add(h(k))
    unseen = [h(k) for k in range(100_000, 105_000)]
    assert sum(x in single for x in unseen) > len(unseen) * 0.5  # one filter, twenty times its capacity
    assert sum(x in bloom for x in unseen) < len(unseen) * 0.05
