"""The ttl classes in use, on a real Redis and a real Redis Cluster: a lookup reads only the time
buckets of the classes some writer registered (a news-only store: one or two a key, not the kept
one and six timed ones), and nothing a writer filed is ever where a reader does not look: another
client's first entry of a class, a store written before classes were registered, a class set that
lost a member."""

from __future__ import annotations

import random
import time
import uuid
from typing import Any

import pytest
import redis

from neardup.storage import doc_ref, open_store
from neardup.storage.redis.keys import KeyLayout, bucket_suffix, bucket_width
from neardup.storage.redis.store import _HEAD, _LIVE_HITS, CLASSES_KNOWN, LOOKUP, RECHECK_LAG
from tests.contract.test_store_contract import add, k, make_record, query
from tests.fixtures.redis_servers import RedisCluster

pytestmark = pytest.mark.integration

TTL: dict[str, int | None] = {"news": 7 * 86_400, "announcement": None, "default": 30 * 86_400}


def _url(which: str, request: pytest.FixtureRequest) -> str:
    server = request.getfixturevalue("redis_server" if which == "redis" else "redis_cluster")
    return server.url if isinstance(server, RedisCluster) else str(server)


def _ports(which: str, request: pytest.FixtureRequest) -> list[int]:
    server = request.getfixturevalue("redis_server" if which == "redis" else "redis_cluster")
    return server.masters() if isinstance(server, RedisCluster) else [int(str(server).rsplit(":", 1)[1])]


def _zranges(ports: list[int]) -> int:
    total = 0
    for port in ports:
        client = redis.Redis(host="127.0.0.1", port=port)
        try:
            total += int(client.info("commandstats").get("cmdstat_zrange", {}).get("calls", 0))
        finally:
            client.close()
    return total


def _open(url: str, prefix: str) -> Any:
    return open_store(url, ttl=TTL, key_prefix=prefix, retry_seconds=20)


@pytest.mark.parametrize("which", ["redis", "rediscluster"])
async def test_a_news_only_store_reads_news_buckets_only(which: str, request: pytest.FixtureRequest) -> None:
    url, ports, prefix = _url(which, request), _ports(which, request), f"c{uuid.uuid4().hex[:12]}"
    s = _open(url, prefix)
    await s.open()
    try:
        news = [make_record(f"news-{i}", (k(f"news-{i}"), k("shared"))) for i in range(20)]
        await add(s, news)
        ids = [r.doc_id for r in news]
        rows = [[k(f"probe-{i}") for i in range(50)], [k("shared")]]
        before = _zranges(ports)
        assert await query(s, rows, ids) == [set(), set(ids)]
        news_only = _zranges(ports) - before
        await add(s, [make_record("ann-0", (k("ann-0"), k("shared")), content_type="announcement")])
        before = _zranges(ports)
        assert await query(s, rows, [*ids, "ann-0"]) == [set(), {*ids, "ann-0"}]
        with_kept = _zranges(ports) - before
    finally:
        await s.close()
    # news (7 days) in 7.5-day buckets: one or two buckets a key; the kept class adds one
    assert 51 <= news_only <= 2 * 51, news_only
    assert with_kept == news_only + 51, (news_only, with_kept)
    # every bucket of every configured class, as before classes were registered: the kept one and 5-6 timed
    assert len(s.layout.live_buckets(int(time.time()), 30 * 86_400)) >= 6


@pytest.mark.parametrize("which", ["redis", "rediscluster"])
async def test_another_clients_first_entry_of_a_class_is_found(which: str, request: pytest.FixtureRequest) -> None:
    """Reader and writer opened before either wrote: the reader never registered announcements,
    yet finds the writer's first one, in its lookup and in its commit's race recheck."""
    url, prefix = _url(which, request), f"c{uuid.uuid4().hex[:12]}"
    reader, writer = _open(url, prefix), _open(url, prefix)
    await reader.open()
    await writer.open()
    try:
        await add(reader, [make_record("news-0", (k("news-0"),))])
        await add(writer, [make_record("ann-0", (k("ann-0"), k("shared")), content_type="announcement")])
        assert await query(reader, [[k("shared")]], ["ann-0"]) == [{"ann-0"}]
        late = make_record("news-1", (k("news-1"), k("shared")))
        answer = await reader.commit([], [late], recheck={"news-1": [k("shared")]})
    finally:
        await reader.close()
        await writer.close()
    assert doc_ref("ann-0") in answer.rechecked["news-1"]


@pytest.mark.parametrize("which", ["redis", "rediscluster"])
async def test_a_store_written_before_classes_were_registered_is_read_whole(
        which: str, request: pytest.FixtureRequest) -> None:
    """Class sets without their 'known' mark (what an older version leaves): every bucket is read,
    and the next client to open registers every configured class, so the entries stay found."""
    url, prefix = _url(which, request), f"c{uuid.uuid4().hex[:12]}"
    old = _open(url, prefix)
    await old.open()
    records = [make_record("ann-0", (k("ann-0"), k("shared")), content_type="announcement"),
               make_record("other-0", (k("other-0"), k("shared")), content_type="report"),
               make_record("news-0", (k("news-0"), k("shared")))]
    ids = [r.doc_id for r in records]
    try:
        await add(old, records)
        for key in old._class_keys:  # the older layout had no class sets
            await old.client.delete(key)
        assert await query(old, [[k("shared")]], ids) == [set(ids)]  # no set says 'known': all buckets
        new = _open(url, prefix)
        await new.open()
        try:
            held = await new.client.smembers(new._class_keys[0])
            assert held == {CLASSES_KNOWN, b"0", b"604800", b"2592000"}
            assert await query(new, [[k("shared")]], ids) == [set(ids)]
        finally:
            await new.close()
    finally:
        await old.close()


@pytest.mark.parametrize("which", ["redis", "rediscluster"])
async def test_a_class_a_set_lost_is_registered_again(which: str, request: pytest.FixtureRequest) -> None:
    """A failover can lose an acknowledged SADD: the next lookup sees the node's set lacks a class
    this client registered, and its next write registers it again before filing entries."""
    url, prefix = _url(which, request), f"c{uuid.uuid4().hex[:12]}"
    s = _open(url, prefix)
    await s.open()
    try:
        await add(s, [make_record("news-0", (k("news-0"),))])
        for key in s._class_keys:
            await s.client.srem(key, b"604800")
        await query(s, [[k("news-0")]], ["news-0"])
        await add(s, [make_record("news-1", (k("news-1"),))])
        held = [await s.client.smembers(key) for key in s._class_keys]
        assert await query(s, [[k("news-0")]], ["news-0"]) == [{"news-0"}]
    finally:
        await s.close()
    assert all(b"604800" in members for members in held)


def test_the_scripts_buckets_are_the_layouts(redis_server: str) -> None:
    """lua/live_hits.lua's class_buckets against KeyLayout's sums, for lookups and rechecks, at
    random times and ttls; and a node without a known class set reads the fallback list."""
    port = int(redis_server.rsplit(":", 1)[1])
    client = redis.Redis(host="127.0.0.1", port=port)
    body = _HEAD + _LIVE_HITS + b"""
local R = {}
for i = 1, tonumber(A[6]) do R[i] = A[6 + i] end
local out = class_buckets(R, tonumber(A[1]), tonumber(A[2]), tonumber(A[3]), tonumber(A[4]), A[5])
table.sort(out)
return out
"""
    rng = random.Random(7)
    key = f"t{uuid.uuid4().hex[:8]}:{{g0}}c"
    try:
        for _ in range(200):
            ttls: list[int | None] = rng.sample([None, 3_600, 86_400, 7 * 86_400, 30 * 86_400, 400 * 86_400],
                                                rng.randint(1, 4))
            layout = KeyLayout(bucket_seconds=bucket_width(ttls) if rng.random() < 0.7 else rng.randint(1, 10**6))
            now = rng.randrange(10**9, 2**32 - 2 * 400 * 86_400)
            client.delete(key)
            client.sadd(key, CLASSES_KNOWN, *(str(0 if t is None else t) for t in ttls))
            for lag, expected in ((LOOKUP, layout.lookup_buckets(now, ttls)),
                                  (RECHECK_LAG, layout.write_buckets(now, ttls, RECHECK_LAG))):
                got = client.eval(body, 0, 0, now, layout.bucket_seconds, layout.margin, lag, b"k,1", 1, key)
                assert sorted(got) == sorted(bucket_suffix(e) for e in expected), (ttls, now, lag)
        client.delete(key)
        assert sorted(client.eval(body, 0, 0, 10**9, 60, 60, LOOKUP, b"k,5f5e1a4", 1, key)) == [b"5f5e1a4", b"k"]
        assert sorted(client.eval(body, 0, 0, 10**9, 60, 60, LOOKUP, b"k,5f5e1a4", 0)) == [b"5f5e1a4", b"k"]
    finally:
        client.delete(key)
        client.close()
