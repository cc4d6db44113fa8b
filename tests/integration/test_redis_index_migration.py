"""``neardup store migrate`` on a real Redis and a real Redis Cluster: a store whose index was
written by the layout before time buckets (one key per shard, members check + expiry + ref) or
with another bucket width is re-filed so that lookups find every live document again; the entries
of content kept forever (announcements) all survive, expired ones are dropped, and a rerun moves
nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from typing import Any

import pytest

from neardup.storage import FingerprintRecord, doc_ref, open_store
from neardup.storage.codec import encode_record
from neardup.storage.redis.keys import NEVER
from neardup.storage.redis.store import RedisFingerprintStore
from tests.contract.test_store_contract import add, k, make_record, query
from tests.fixtures.redis_servers import RedisCluster

pytestmark = pytest.mark.integration

TTL: dict[str, int | None] = {"news": 7 * 86_400, "announcement": None, "default": 30 * 86_400}


async def legacy_write(store: RedisFingerprintStore, records: list[FingerprintRecord], expires: dict[str, int | None]
                       ) -> None:
    """Records and index entries as the layout before buckets wrote them: one sorted set per shard,
    members check (5 B) + expiry (u32 epoch seconds, NEVER: kept) + ref (8 B), no key expiry."""
    layout, client = store.layout, store.client
    for r in records:
        ttl = store.ttl.ttl(r.content_type)
        ref = doc_ref(r.doc_id)
        await client.set(layout.record_key(ref), encode_record(r, with_keys=ttl is None), ex=ttl)
        expiry = expires[r.doc_id]
        for key in r.index_keys:
            slot = layout.index_slot(key)
            member = slot.check + (NEVER if expiry is None else expiry).to_bytes(4, "big") + ref
            await client.zadd(layout.shard_key(slot.shard), {member: 0})


def _url(which: str, request: pytest.FixtureRequest) -> str:
    server = request.getfixturevalue("redis_server" if which == "redis" else "redis_cluster")
    return server.url if isinstance(server, RedisCluster) else str(server)


def _cli_migrate(url: str, prefix: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "neardup", "store", "migrate", "--store", url],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={"NEARDUP_REDIS__KEY_PREFIX": prefix, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.mark.parametrize("which", ["redis", "rediscluster"])
async def test_the_unbucketed_layout_migrates_without_losing_an_announcement(
        which: str, request: pytest.FixtureRequest) -> None:
    url, prefix = _url(which, request), f"t{uuid.uuid4().hex[:12]}"
    s: Any = open_store(url, ttl=TTL, key_prefix=prefix, retry_seconds=20)
    await s.open()
    try:
        now = int(time.time())
        kept = [make_record(f"ann-{i}", (k(f"ann-{i}"), k("shared")), content_type="announcement")
                for i in range(60)]
        live = [make_record(f"news-{i}", (k(f"news-{i}"), k("shared"))) for i in range(40)]
        dead = [make_record(f"old-{i}", (k(f"old-{i}"), k("shared"))) for i in range(10)]
        expires = {r.doc_id: None for r in kept} | {r.doc_id: now + 3600 for r in live} \
            | {r.doc_id: now - 60 for r in dead}
        await legacy_write(s, kept + live + dead, expires)
        ids = [r.doc_id for r in kept + live + dead]
        rows = [[k("shared")], [k("ann-7")], [k("news-3")], [k("old-2")]]
        assert await query(s, rows, ids) == [set(), set(), set(), set()]  # this version reads buckets only

        report = _cli_migrate(url, prefix)
        assert report["moved"] == 2 * (len(kept) + len(live)) and report["dropped"] == 2 * len(dead)
        assert report["bucket_seconds"] == 648_000 and report["keys"] > 0
        assert await query(s, rows, ids) == [{r.doc_id for r in kept + live}, {"ann-7"}, {"news-3"}, set()]
        assert not [key async for key in _index_keys(s) if key.endswith(b"}")]  # no unbucketed key left
        assert _cli_migrate(url, prefix)["keys"] == 0  # idempotent

        # the archive's view is whole: every announcement is listed with its keys, and forget
        # removes its entries from the kept bucket
        listed: set[str] = set()
        cursor = ""
        while True:
            page = await s.kept(cursor, 1000)
            listed |= {d.record.doc_id for d in page.documents}
            cursor = page.cursor
            if not cursor:
                break
        assert listed == {r.doc_id for r in kept}
        assert await s.forget(kept[:5]) == 5
        assert await query(s, [[k("ann-1")], [k("ann-5")]], ids) == [set(), {"ann-5"}]
    finally:
        await s.close()


async def test_buckets_of_another_width_are_re_filed(redis_server: str) -> None:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    before: Any = open_store(redis_server, ttl=TTL, key_prefix=prefix, index_bucket_seconds=7 * 3600)
    after: Any = open_store(redis_server, ttl=TTL, key_prefix=prefix)
    await before.open()
    await after.open(migrating=True)  # another width than the store's: refused unless migrating
    try:
        recs = [make_record(f"n{i}", (k(f"n{i}"), k("both"))) for i in range(30)]
        recs += [make_record(f"a{i}", (k(f"a{i}"), k("both")), content_type="announcement") for i in range(5)]
        await add(before, recs)
        ids = [r.doc_id for r in recs]
        assert await query(after, [[k("both")]], ids) == [{f"a{i}" for i in range(5)}]  # kept: one bucket
        report = await after.migrate()
        assert (report.moved, report.dropped) == (2 * 30, 0) and report.keys > 0
        assert await query(after, [[k("both")], [k("n4")]], ids) == [set(ids), {"n4"}]
        for key in [key async for key in _index_keys(after)]:
            ttl = await after.client.ttl(key)
            assert ttl == -1 if key.endswith(b"k") else 0 < ttl <= 7 * 86_400 + 648_000 + 60
        assert (await after.migrate()).keys == 0
    finally:
        await before.close()
        await after.close()


async def _index_keys(s: Any) -> Any:
    """Every index key of a store (all masters of a cluster)."""
    pattern = s.layout.prefix + b"{i*"
    if not s.cluster:
        async for key in s.client.scan_iter(match=pattern, count=1000):
            yield key
        return
    for node in s.client.get_primaries():
        cursor = 0
        while True:
            cursor, keys = await s.client.execute_command("SCAN", cursor, "MATCH", pattern, "COUNT", 1000,
                                                           target_nodes=node)
            cursor = int(next(iter(cursor.values())) if isinstance(cursor, dict) else cursor)
            for key in keys:
                yield key
            if cursor == 0:
                break
