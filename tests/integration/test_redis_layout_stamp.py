"""The index layout a Redis store was written in, on a real Redis and a real Redis Cluster: a client
whose settings give another shard count or bucket width is refused as it opens (every lookup would
look in other keys and find nothing), ``neardup store migrate`` re-files another width and stamps
it, and a store written before the stamp takes its first client's."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from neardup.errors import StoreLayoutError
from neardup.storage import open_store
from tests.contract.test_store_contract import add, k, make_record, query
from tests.fixtures.redis_servers import RedisCluster

pytestmark = pytest.mark.integration

TTL: dict[str, int | None] = {"news": 7 * 86_400, "announcement": None, "default": 30 * 86_400}


def _url(which: str, request: pytest.FixtureRequest) -> str:
    server = request.getfixturevalue("redis_server" if which == "redis" else "redis_cluster")
    return server.url if isinstance(server, RedisCluster) else str(server)


def _store(url: str, prefix: str, **options: Any) -> Any:
    return open_store(url, ttl=TTL, key_prefix=prefix, retry_seconds=20, **options)


@pytest.mark.parametrize("which", ["redis", "rediscluster"])
async def test_another_shard_count_is_refused_as_it_opens(which: str, request: pytest.FixtureRequest) -> None:
    url, prefix = _url(which, request), f"l{uuid.uuid4().hex[:12]}"
    first = _store(url, prefix, index_shards=1 << 12)
    await first.open()
    try:
        await add(first, [make_record("n0", (k("n0"),))])
        for migrating in (False, True):  # a migration re-files widths, not shard counts
            other = _store(url, prefix, index_shards=1 << 13)
            with pytest.raises(StoreLayoutError) as err:
                await other.open(migrating=migrating)
            await other.close()
            assert "4096 shards" in str(err.value) and "8192" in str(err.value) and "\n" not in str(err.value)
            assert not err.value.transient
        same = _store(url, prefix, index_shards=1 << 12)
        await same.open()
        try:
            assert await query(same, [[k("n0")]], ["n0"]) == [{"n0"}]
        finally:
            await same.close()
    finally:
        await first.close()


@pytest.mark.parametrize("which", ["redis", "rediscluster"])
async def test_another_width_opens_only_to_migrate_and_migrating_stamps_it(
        which: str, request: pytest.FixtureRequest) -> None:
    url, prefix = _url(which, request), f"l{uuid.uuid4().hex[:12]}"
    old = _store(url, prefix, index_bucket_seconds=7 * 3600)
    await old.open()
    await add(old, [make_record(f"n{i}", (k(f"n{i}"), k("both"))) for i in range(5)])
    await old.close()
    refused = _store(url, prefix)  # the default width: a quarter of 30 days
    with pytest.raises(StoreLayoutError, match="25200 s buckets"):
        await refused.open()
    await refused.close()
    mover = _store(url, prefix)
    await mover.open(migrating=True)
    try:
        assert (await mover.migrate()).moved == 10
    finally:
        await mover.close()
    after = _store(url, prefix)
    await after.open()
    try:
        assert await query(after, [[k("both")]], [f"n{i}" for i in range(5)]) == [{f"n{i}" for i in range(5)}]
    finally:
        await after.close()
    with pytest.raises(StoreLayoutError, match="648000 s buckets"):
        await old.open()
    await old.close()


@pytest.mark.parametrize("which", ["redis", "rediscluster"])
async def test_a_store_written_before_the_stamp_takes_its_first_clients(
        which: str, request: pytest.FixtureRequest) -> None:
    url, prefix = _url(which, request), f"l{uuid.uuid4().hex[:12]}"
    s = _store(url, prefix)
    await s.open()
    try:
        await s.client.delete(s._layout_key)  # what a store written before the stamp lacks
    finally:
        await s.close()
    again = _store(url, prefix)
    await again.open()
    try:
        assert await again.client.get(again._layout_key) == b"shards=524288 width=648000"
    finally:
        await again.close()
