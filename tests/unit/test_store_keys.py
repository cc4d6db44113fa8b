"""Known answers for the Redis key layout: key names are pinned (every worker and every release must
build the same names) and keys that are read together share a Redis Cluster slot."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.storage.redis.keys import (
    CHECK_BYTES,
    KEPT,
    MEMBER_BYTES,
    KeyLayout,
    bucket_width,
    crc16_slots,
    doc_digest,
)

# redis-py's own slot function is the reference (the redis extra)
key_slot = pytest.importorskip("redis.cluster", reason="the redis extra is not installed (pip install 'neardup[redis]')"
                               ).key_slot

DAY = 86_400


@pytest.fixture
def layout() -> KeyLayout:
    return KeyLayout(prefix="nd", index_shards=1 << 18)


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
    slot = layout.index_slot(0x4D03000000000000)
    assert (slot.shard, slot.check.hex()) == (178288, "7f69aa2454")
    assert len(slot.check) == CHECK_BYTES
    assert layout.shard_key(slot.shard) == b"nd:{i2b870}"
    assert key_slot(b"nd:{i2b870}") == 11640


@given(st.lists(st.integers(1, 2**64 - 1), min_size=1, max_size=50))
def test_shard_slots_are_the_cluster_slots_of_the_shard_keys(keys: list[int]) -> None:
    layout = KeyLayout(prefix="nd", index_shards=1 << 12)
    shards, checks = layout.index_slots(np.array(keys, dtype=np.uint64))
    table = layout.shard_slots()
    for shard, check, key in zip(shards.tolist(), checks.tolist(), keys, strict=True):
        assert table[shard] == key_slot(layout.shard_key(shard))
        assert layout.index_slot(key) == (shard, check.to_bytes(CHECK_BYTES, "big"))


def test_crc16_slots_match_redis_py() -> None:
    tags = [b"", b"a", b"123456789", b"i7ffff", bytes(range(40))]
    assert crc16_slots(tags).tolist() == [key_slot(t) if t else 0 for t in tags]


def test_members_sort_inside_their_lex_range(layout: KeyLayout) -> None:
    check = layout.index_slot(12345).check
    lo, hi = layout.lex_range(check)
    for digest in (bytes(8), b"\xff" * 8, doc_digest("a")):
        m = layout.member(check, digest)
        assert len(m) == MEMBER_BYTES == 13
        assert lo[1:] <= m <= hi[1:]
    other = layout.index_slot(54321).check
    assert not lo[1:] <= layout.member(other, bytes(8)) <= hi[1:]


def test_bucket_keys_share_their_shards_slot_and_name_their_end() -> None:
    layout = KeyLayout(prefix="nd", index_shards=1 << 18, bucket_seconds=3600)
    assert layout.bucket_key(0x2B870, KEPT) == b"nd:{i2b870}k"
    assert layout.bucket_key(0x2B870, 1_767_225_600) == b"nd:{i2b870}" + b"%x" % 1_767_225_600
    assert key_slot(layout.bucket_key(0x2B870, 7200)) == key_slot(layout.shard_key(0x2B870)) == 11640
    assert layout.bucket_end(None) == KEPT
    assert layout.bucket_end(3599) == 3600 and layout.bucket_end(3600) == 7200
    assert layout.margin == 60 and KeyLayout(bucket_seconds=2).margin == 2


@given(st.integers(0, 2**31), st.integers(1, 40 * 86_400), st.integers(1, 12))
def test_a_lookup_reads_every_bucket_an_entry_written_up_to_now_is_in(now: int, ttl: int, parts: int) -> None:
    width = max(1, ttl // parts)
    layout = KeyLayout(bucket_seconds=width)
    live = layout.live_buckets(now, ttl)
    assert live[0] == KEPT and all(now < end for end in live[1:])
    for written in (now - ttl + 1, now - ttl // 2, now, now + min(59, width - 1)):  # a writer's clock a bit ahead
        assert written + ttl <= now or layout.bucket_end(written + ttl) in live
    assert len(live) <= (ttl + layout.margin) // width + 3  # the kept bucket, and timed ones


@given(st.integers(0, 2**31), st.lists(st.sampled_from([None, 3_600, 86_400, 7 * 86_400, 30 * 86_400]),
                                       min_size=1, max_size=4))
def test_a_lookup_reads_every_bucket_an_entry_of_a_class_in_use_is_in(now: int, ttls: list[int | None]) -> None:
    """Per class: the buckets an entry written up to now stands in, and never more than reading
    every class would (the kept bucket only with a class kept forever)."""
    layout = KeyLayout(bucket_seconds=bucket_width([7 * 86_400, None, 30 * 86_400]))
    read = layout.lookup_buckets(now, ttls)
    for ttl in ttls:
        for written in (now - (ttl or 0) + 1, now, now + 59):
            expires = None if ttl is None else written + ttl
            assert (expires is not None and expires <= now) or layout.bucket_end(expires) in read
    assert set(read) <= set(layout.live_buckets(now, 30 * 86_400))
    assert (KEPT in read) == (None in ttls)
    if set(ttls) == {7 * 86_400}:
        assert len(read) <= 2  # news alone: one or two buckets, where every class reads 6 or 7


@given(st.integers(10**6, 2**31), st.integers(1, 600), st.integers(-600, 600))
def test_the_race_recheck_reads_the_buckets_recent_writes_stand_in(now: int, lag: int, written_at: int) -> None:
    """A record another worker filed within ``lag`` seconds of this commit stands in one of the
    write buckets, whatever its ttl; they are the kept one and one or two a finite ttl, fewer
    than a lookup's."""
    ttls = [7 * 86_400, None, 30 * 86_400]
    layout = KeyLayout(bucket_seconds=bucket_width(ttls))
    recent = layout.write_buckets(now, ttls, lag)
    for ttl in ttls:
        if abs(written_at) <= lag:
            assert layout.bucket_end(None if ttl is None else now + written_at + ttl) in recent
    assert KEPT in recent and len(recent) <= 1 + 2 * 2
    assert set(recent) <= set(layout.live_buckets(now, 30 * 86_400)) | {
        layout.bucket_end(now + lag + 30 * 86_400)}


def test_bucket_width_is_a_quarter_of_the_longest_finite_ttl() -> None:
    assert bucket_width([7 * 86_400, None, 30 * 86_400]) == 648_000  # 7.5 days
    assert bucket_width([6, None]) == 2
    assert bucket_width([1]) == 1
    assert bucket_width([None]) == 86_400


def test_prefix_cannot_hold_braces() -> None:
    with pytest.raises(ValueError):
        KeyLayout(prefix="a{b}")


def test_the_lua_scripts_are_files_with_every_placeholder_filled() -> None:
    from pathlib import Path

    from neardup.storage.redis import store

    names = {p.stem for p in (Path(store.__file__).parent / "lua").glob("*.lua")}
    assert names == {"head", "live_hits", "lookup", "claim", "write", "cas", "forget", "migrate"}
    for body in (store._LOOKUP_LUA, store._CLAIM_LUA, store._WRITE_LUA, store._CAS_LUA, store._FORGET_LUA,
                 store._MIGRATE_LUA):
        assert b"$" not in body and b"redis.call" in body
    assert str(store.NO_RECHECK).encode() in store._WRITE_LUA


def test_a_scripts_hits_keep_every_byte_of_their_refs() -> None:
    """A ref (8 bytes of blake2b) may end in zero bytes: a hit comes back with all eight."""
    import struct

    from neardup.storage.redis.store import _count_hits

    refs = [b"ab\0\0\0\0\0\0", b"\0" * 8, bytes(range(1, 9))]
    hits = ((0, refs[0]), (1, refs[1]), (1, refs[2]), (1, refs[1]))
    blob = b"".join(struct.pack(">I", row) + ref for row, ref in hits)
    found: list[dict[bytes, int]] = [{}, {}]
    _count_hits(blob, found)
    assert found == [{refs[0]: 1}, {refs[1]: 2, refs[2]: 1}]
