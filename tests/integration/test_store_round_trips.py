"""The store is asked once per window, never once per document: counted on a real Redis Cluster.

Redis's INFO commandstats counts every command a client sends (and, separately, the commands the
scripts run inside). The engine's calls arrive as EVALSHA (EVAL where a node lacks a script): their
number per window must not grow with the window's size, and no other command may come from the
client while it decides.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from neardup.config import load_settings
from neardup.document import Document, parse_document
from neardup.engine import Engine
from neardup.storage import FingerprintRecord, open_store
from tests.fixtures.redis_servers import RedisCluster

pytestmark = pytest.mark.integration

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "sample.jsonl"
# a new connection's handshake, a slot-map refresh, replicas acknowledging replication: per
# connection or per second, not per document
CONNECTION = {"replconf", "psync", "sync",
              "info", "hello", "auth", "ping", "select", "readonly", "cluster|nodes", "cluster|slots", "cluster|shards",
              "client|setinfo", "client|setname", "command", "command|docs", "script|load"}
# commands the store's scripts run inside: counted by commandstats, but not sent by the client
IN_SCRIPTS = {"get", "set", "zrange", "zadd", "zrem", "expireat", "smembers"}


def _calls(ports: list[int]) -> dict[str, int]:
    """Calls per command, summed over the nodes on ``ports``."""
    total: dict[str, int] = {}
    for port in ports:
        client = redis.Redis(host="127.0.0.1", port=port)
        try:
            for name, stat in client.info("commandstats").items():
                command = name.removeprefix("cmdstat_")
                total[command] = total.get(command, 0) + int(stat["calls"])
        finally:
            client.close()
    return total


def _stats(cluster: RedisCluster) -> dict[str, int]:
    """Calls per command, summed over the masters."""
    return _calls(cluster.masters())


def _delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


def _docs(tag: str, n: int) -> list[Document]:
    base = [parse_document(line) for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    out = []
    for i in range(n):
        d = base[i % len(base)]
        # new text in every window (the tag), near-duplicates of earlier windows: every phase runs
        text = f"{d.text}\n（{tag}转载第{i // len(base)}次）"
        out.append(Document(id=f"{tag}-{i}", text=text))
    return out


async def _window_commands(engine: Engine, cluster: RedisCluster, docs: list[Document]) -> dict[str, int]:
    before = _stats(cluster)
    out = await engine.decide(docs)
    assert len(out) == len(docs)
    return _delta(before, _stats(cluster))


async def test_store_commands_per_window_do_not_grow_with_the_window(redis_cluster: RedisCluster) -> None:
    settings = load_settings(store_url=redis_cluster.url, worker_id="rt",
                             redis={"key_prefix": f"rt{uuid.uuid4().hex[:8]}"})
    engine = await Engine.open(settings)
    masters = len(redis_cluster.masters())
    try:
        await engine.decide(_docs("warm", 20))  # scripts loaded, slot map read
        counts: dict[int, dict[str, Any]] = {}
        for size in (100, 400):
            counts[size] = await _window_commands(engine, redis_cluster, _docs(f"w{size}", size))
    finally:
        await engine.close()
    for size, delta in counts.items():
        sent = {k: v for k, v in delta.items() if k not in IN_SCRIPTS and k not in CONNECTION}
        scripts = sent.pop("evalsha", 0) + sent.pop("eval", 0)
        assert not sent, f"commands sent per document? {sent}"
        # lookup, fetch, claims, records, race re-query, decisions (+ shared state): per node
        assert scripts <= 8 * masters, (size, delta)
    small = counts[100].get("evalsha", 0) + counts[100].get("eval", 0)
    large = counts[400].get("evalsha", 0) + counts[400].get("eval", 0)
    assert large <= small + 2 * masters, (counts[100], counts[400])
    # the work inside the scripts does grow with the window: the count above is not vacuous
    assert counts[400].get("zrange", 0) > 3 * counts[100].get("zrange", 1)


def _replica_stats(cluster: RedisCluster) -> dict[str, int]:
    """Calls per command, summed over the replicas (what the masters' writes cost them)."""
    return _calls([int(row["port"]) for row in cluster.cluster_nodes()
                   if "slave" in row["flags"] and "fail" not in row["flags"]])


def _record(doc_id: str, first_key: int) -> FingerprintRecord:
    """A news record filed under 40 index keys from ``first_key``: the same bucket keys each time."""
    return FingerprintRecord(doc_id=doc_id, content_type="news", published_at=1.7e9,
                             content_hash=doc_id.encode().ljust(16, b"-"), simhash=b"\0" * 8,
                             signature=b"\0" * 512, profile=b"", shingles=1, length=10,
                             index_keys=tuple(range(first_key, first_key + 40)))  # fmt: skip


def _expireats(client: redis.Redis) -> int:
    """EXPIREAT calls the server has run (inside scripts too)."""
    return int(client.info("commandstats").get("cmdstat_expireat", {}).get("calls", 0))


async def test_a_bucket_keys_expiry_is_set_once_and_replicated_once(redis_cluster: RedisCluster) -> None:
    """A bucket key's expiry follows from its name: the write sets it only where the key has
    none (EXPIREAT NX), so filing more entries into keys that have it replicates no expiry; the
    keys keep it."""
    import asyncio

    prefix = f"ex{uuid.uuid4().hex[:8]}"
    store = open_store(redis_cluster.url, ttl={"news": 3600}, key_prefix=prefix)
    await store.open()

    try:
        await store.commit([], [_record("first", 1000)])
        await asyncio.sleep(0.5)  # replication of the first write has arrived
        before = _replica_stats(redis_cluster)
        for k in range(5):
            await store.commit([], [_record(f"again{k}", 1000)])
        await asyncio.sleep(0.5)
        delta = _delta(before, _replica_stats(redis_cluster))
    finally:
        await store.close()
    assert delta.get("zadd", 0) >= 5 * 40  # the entries were replicated ...
    assert delta.get("pexpireat", 0) == 0 and delta.get("expireat", 0) == 0  # ... and no expiry again
    ttls = []
    for port in redis_cluster.masters():
        client = redis.Redis(host="127.0.0.1", port=port)
        try:
            ttls += [client.ttl(key) for key in client.scan_iter(match=f"{prefix}:{{i*", count=1000)]
        finally:
            client.close()
    assert ttls and all(t > 0 for t in ttls)


async def test_a_bucket_key_seen_with_its_expiry_gets_no_expireat_until_a_failure(redis_server: str) -> None:
    """A client that saw a bucket key get its expiry sends no EXPIREAT for it again (nearly every
    entry filed cost one); a failure it sees makes it forget them all, so a key lost with its
    write (a failover) is created again with its expiry, never without one."""
    admin = redis.Redis.from_url(redis_server)
    prefix = f"ex{uuid.uuid4().hex[:8]}"
    store = open_store(redis_server, ttl={"news": 3600}, key_prefix=prefix, retry_seconds=20)
    await store.open()

    def bucket_keys() -> list[bytes]:
        return list(admin.scan_iter(match=f"{prefix}:{{i*", count=1000))

    try:
        await store.commit([], [_record("first", 2000)])
        before = _expireats(admin)
        await store.commit([], [_record("again", 2000)])
        assert _expireats(admin) == before  # every key was seen with its expiry
        lost = bucket_keys()[0]
        admin.delete(lost)  # what a failover that lost the write leaves
        admin.execute_command("CLIENT", "KILL", "TYPE", "normal")  # the failure the client sees
        await store.commit([], [_record("after", 2000)])
    finally:
        await store.close()
    try:
        assert _expireats(admin) > before
        assert admin.exists(lost) and all(admin.ttl(k) > 0 for k in bucket_keys())
    finally:
        admin.close()


async def test_a_store_that_evicts_keys_is_named_and_every_expiry_is_set(
        redis_server: str, caplog: pytest.LogCaptureFixture) -> None:
    """With a maxmemory-policy that evicts, a bucket key may be evicted and made again by a later
    entry: the client then never skips its EXPIREAT, and says once that the store loses data."""
    admin = redis.Redis.from_url(redis_server)
    policy = admin.config_get("maxmemory-policy")["maxmemory-policy"]
    admin.config_set("maxmemory-policy", "volatile-lru")  # maxmemory stays 0: nothing is evicted here
    prefix = f"ev{uuid.uuid4().hex[:8]}"
    store = open_store(redis_server, ttl={"news": 3600}, key_prefix=prefix)

    try:
        await store.open()
        await store.commit([], [_record("first", 3000)])
        before = _expireats(admin)
        await store.commit([], [_record("again", 3000)])
        sent = _expireats(admin) - before
    finally:
        await store.close()
        admin.config_set("maxmemory-policy", policy)
        admin.close()
    assert sent == 40  # one EXPIREAT NX a bucket key, as before clients remembered them
    assert any("maxmemory-policy volatile-lru evicts keys" in r.getMessage() for r in caplog.records)
