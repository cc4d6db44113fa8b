"""Known answers for the Redis key layout: key names are pinned (every worker and every release must
build the same names) and keys that are read together share a Redis Cluster slot."""

from __future__ import annotations

import pytest
from redis.cluster import key_slot

from neardup.storage.keys import (
    CHECK_BYTES,
    MEMBER_BYTES,
    KeyLayout,
    doc_digest,
    ttl_class,
    ttl_classes,
)

DAY = 86_400


@pytest.fixture
def layout() -> KeyLayout:
    return KeyLayout(prefix="nd", index_shards=1 << 18, time_bucket_seconds=DAY)


def test_slot_function_known_answers() -> None:
    # the hash-tag rule and CRC16 of the cluster spec, as redis-py computes them
    assert key_slot(b"123456789") == 12739
    assert key_slot(b"{user1000}.following") == key_slot(b"{user1000}.followers") == key_slot(b"user1000")
    assert key_slot(b"foo{}{bar}") == key_slot(b"foo{}{bar}")  # empty tag: the whole key is hashed
    assert key_slot(b"foo{}{bar}") != key_slot(b"bar")


def test_document_keys_are_pinned(layout: KeyLayout) -> None:
    assert doc_digest("dev00000").hex() == "d27bdee70a6ce0f8"
    rec, dec = layout.doc_keys("dev00000")
    assert rec == b"nd:{d0nve5wps4Pg}r"
    assert dec == b"nd:{d0nve5wps4Pg}v"
    assert key_slot(rec) == key_slot(dec) == 9606


@pytest.mark.parametrize(
    "doc_id",
    ["dev00000", "", "https://example.com/新闻/1?x={y}", "}{", "{", "x" * 512, "短"],
)
def test_keys_of_one_document_share_a_slot(layout: KeyLayout, doc_id: str) -> None:
    rec, dec = layout.doc_keys(doc_id)
    tag = rec[rec.index(b"{") + 1 : rec.index(b"}")]
    assert tag and b"{" not in tag  # base64url digest: never empty, never a brace
    assert key_slot(rec) == key_slot(dec) == key_slot(tag)


def test_claim_keys_are_pinned_and_exact(layout: KeyLayout) -> None:
    h = bytes(range(16))
    assert layout.claim_key(h) == b"nd:{xAAECAwQFBgcICQoLDA0ODw}"
    assert key_slot(layout.claim_key(h)) == 6263
    assert layout.claim_key(h) != layout.claim_key(h[:15] + b"\x10")  # the whole hash counts
    assert b"}" not in layout.claim_key(b"}}}}")[5:-1]


def test_index_slot_is_pinned(layout: KeyLayout) -> None:
    slot = layout.index_slot(b"M\x03" + bytes(8))
    assert (slot.shard, slot.check.hex()) == (108206, "021042f4fd")
    assert len(slot.check) == CHECK_BYTES
    assert layout.bucket_key(slot, 3600, 20_000) == b"nd:{i1a6ae}t3600:ffk"  # one-day buckets
    # 7 days -> 1.75-day buckets in 2 sub-shards; 30 days -> 7.5-day buckets in 8
    assert (layout.sub_shards(7 * DAY), layout.sub_shards(30 * DAY)) == (2, 8)
    assert layout.bucket_key(slot, 7 * DAY, 20_000) == b"nd:{i1a6ae}t604800:ffk.0"
    assert layout.bucket_key(slot, 30 * DAY, 20_000) == b"nd:{i1a6ae}t2592000:ffk.0"
    assert layout.bucket_key(slot, None, None) == b"nd:{i1a6ae}f"
    assert key_slot(b"nd:{i1a6ae}f") == 11582


def test_time_buckets_of_one_index_key_share_a_slot(layout: KeyLayout) -> None:
    now = 1_767_225_600.0  # 2026-01-01
    ttls = ttl_classes({"news": 7 * DAY, "announcement": None}, 30 * DAY)
    assert ttls == [7 * DAY, 30 * DAY, None]
    for index_key in (b"S\x00\x12\x34", b"M\x1f" + bytes(range(8)), b"", b"{}"):
        keys = layout.live_bucket_keys(layout.index_slot(index_key), ttls, now)
        # 7 days / 1.75-day buckets, 30 days / 7.5-day buckets: 5-6 each, and one forever key
        assert 11 <= len(keys) <= 13
        assert len({key_slot(k) for k in keys}) == 1, index_key
        assert len(set(keys)) == len(keys)


def test_bucket_write_is_among_live_buckets_and_expires_after_its_entries(layout: KeyLayout) -> None:
    for ttl in (1, 3600, 7 * DAY, 30 * DAY, 365 * DAY):
        for now in (1_767_225_600.0, 1_767_225_600.0 + 12_345.678):
            tb = layout.time_bucket(ttl, now)
            assert tb is not None
            assert layout.bucket_expire_at(ttl, tb) >= now + ttl  # no entry outlives its key
            assert tb in layout.live_buckets(ttl, now)
            # still looked at for as long as the key lives
            assert tb in layout.live_buckets(ttl, layout.bucket_expire_at(ttl, tb) - 1)
        assert len(layout.live_buckets(ttl, 1_767_225_600.0)) <= 6  # bounded query fan-out
    assert layout.time_bucket(None, 1e9) is None
    assert layout.live_buckets(None, 1e9) == [None]


def test_members_and_lex_ranges(layout: KeyLayout) -> None:
    check = layout.index_slot(b"k").check
    for digest in (bytes(8), b"\xff" * 8, doc_digest("a")):
        m = layout.member(check, digest)
        lo, hi = layout.lex_range(check)
        assert len(m) == MEMBER_BYTES
        assert lo[1:] <= m <= hi[1:]


def test_ttl_class_codes() -> None:
    assert ttl_class(None) == b"f"
    assert ttl_class(604_800) == b"t604800"
    assert ttl_classes({}, 30 * DAY) == [30 * DAY]
    assert ttl_classes({"default": None}, 30 * DAY) == [None]


def test_prefix_cannot_hold_braces() -> None:
    with pytest.raises(ValueError):
        KeyLayout(prefix="a{b}")
