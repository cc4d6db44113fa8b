"""A Redis Cluster master dies (SIGKILL) in the middle of a stream that two workers share: its
replica is promoted (cluster-node-timeout 2000 ms) and the workers ride out the failover. Every
published id comes out, none is lost or dead-lettered, a redelivered id carries the same decision,
and both workers stay up and become ready again.

The test runs on a private six-node cluster (``start_cluster``), not on the session
``redis_cluster``: it leaves a node dead, and the tests after it must find a healthy cluster.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Pipeline, WorkerProcess, collect, doc_id, load_docs, wait_balanced
from tests.fixtures.redis_servers import RedisCluster, redis_binaries, start_cluster

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

N_DOCS = 700
CHUNK = 35
CHUNK_PAUSE = 0.5  # 20 chunks: ~10 s of traffic


@pytest.fixture
def private_cluster(tmp_path: Path) -> Iterator[RedisCluster]:
    redis_binaries()
    cluster = start_cluster(tmp_path / "cluster")
    try:
        yield cluster
    finally:
        cluster.stop()


def wait_promoted(cluster: RedisCluster, dead_port: int, replica_port: int, timeout: float = 30.0) -> float:
    """Seconds until the dead master is flagged failed and its replica serves slots as a master."""
    started = time.monotonic()
    deadline = started + timeout
    rows: list[dict[str, str]] = []
    while time.monotonic() < deadline:
        rows = cluster.cluster_nodes()
        dead = [r for r in rows if r["port"] == str(dead_port)]
        masters = cluster.masters()
        if dead and "fail" in dead[0]["flags"] and replica_port in masters and len(masters) == 3:
            cluster.wait_ok(timeout=max(1.0, deadline - time.monotonic()))
            return time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"replica {replica_port} not promoted after {timeout}s: {rows}")


def wait_ready_again(w: WorkerProcess, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    body: Any = None
    while time.monotonic() < deadline:
        status, body = w.json("GET", "/ready")
        if status == 200:
            return dict(body)
        time.sleep(0.5)
    raise AssertionError(f"{w.name} not ready again after {timeout}s: {body}\n{w.log_tail()}")


def test_master_failover_mid_stream(
    pipeline: Pipeline,
    start_worker: Callable[..., WorkerProcess],
    private_cluster: RedisCluster,
    datasets_dir: Path,
) -> None:
    broker, cluster = pipeline.broker, private_cluster
    small = {"NEARDUP_WINDOW__MAX_COUNT": "20", "NEARDUP_WINDOW__MAX_AGE_SECONDS": "0.2"}
    w1 = start_worker("w1", store_url=cluster.url, **small)
    w2 = start_worker("w2", store_url=cluster.url, **small)
    w1.wait_ready()
    w2.wait_ready()
    wait_balanced([w1, w2], pipeline.partitions)

    docs = load_docs(datasets_dir, N_DOCS)
    ids = [doc_id(d) for d in docs]
    assert len(set(ids)) == N_DOCS
    chunks = [docs[i : i + CHUNK] for i in range(0, len(docs), CHUNK)]

    # the first half goes out slowly before the kill, the second half (slowly) only after it:
    # the master dies with documents published, decided, in flight and still to come
    half = len(chunks) // 2
    killed = threading.Event()

    def produce_slowly() -> None:
        for n, chunk in enumerate(chunks):
            if n == half:
                killed.wait(120)
            broker.produce_sync(pipeline.raw, [(doc_id(d), d) for d in chunk])
            time.sleep(CHUNK_PAUSE)

    producer = threading.Thread(target=produce_slowly, daemon=True)
    t0 = time.monotonic()
    producer.start()

    # kill once decisions are flowing
    before = 0
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and before < 100:
        before = len(broker.consume_sync(pipeline.outputs, expected=100, timeout=2))
    assert before >= 100, f"no output before the kill:\n{w1.log_tail()}\n{w2.log_tail()}"
    nodes = cluster.cluster_nodes()
    try:
        cluster.wait_replicated(timeout=10)  # async replication: no acknowledged write lost by design
        dead_port = cluster.stop_master()
    finally:
        killed.set()
    killed_at = time.monotonic() - t0
    dead_id = next(r["id"] for r in nodes if r["port"] == str(dead_port))
    replica_port = next(int(r["port"]) for r in nodes if r["master"] == dead_id)
    assert not cluster.nodes[dead_port].alive
    assert before < N_DOCS

    failover_s = wait_promoted(cluster, dead_port, replica_port)
    producer.join(120)
    assert not producer.is_alive()

    got = collect(broker, pipeline.outputs, expected=N_DOCS, timeout=150, settle=5)
    elapsed = time.monotonic() - t0
    by_id: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in (pipeline.unique, pipeline.duplicate):
        for r in got[t]:
            rec = json.loads(r.value)
            assert r.key.decode() == rec["id"]
            by_id[rec["id"]].append(rec)
    logs = {w.name: w.log_tail(400_000) for w in (w1, w2)}

    # no worker died or got stuck on the failover
    for w in (w1, w2):
        assert w.proc.poll() is None, f"{w.name} died:\n{logs[w.name][-6000:]}"
        assert "Crashed" not in logs[w.name], logs[w.name][-6000:]
        assert "failed; retrying" not in logs[w.name], logs[w.name][-6000:]

    # none lost, none dead-lettered, every redelivery with the same decision
    missing = set(ids) - set(by_id)
    assert not missing, f"{len(missing)} ids lost in the failover: {sorted(missing)[:20]}"
    assert set(by_id) == set(ids)
    dead = [json.loads(r.value) for r in got[pipeline.dead_letter]]
    assert not dead, [(d["reason"], d["error"][:200]) for d in dead[:10]]
    changed = {i: recs for i, recs in by_id.items() if len({(r["status"], r["duplicate_of"]) for r in recs}) != 1}
    assert not changed, list(changed.items())[:5]
    for recs in by_id.values():
        rec = recs[0]
        assert rec["status"] in ("unique", "duplicate")
        assert (rec["duplicate_of"] is None) == (rec["status"] == "unique")
        assert rec["duplicate_of"] is None or rec["duplicate_of"] in by_id

    # the failover was felt: the store retried commands through it
    retried = {name: log.count("retrying in") for name, log in logs.items()}
    assert sum(retried.values()) > 0, "no store retry logged: the workers never met the dead master"
    redelivered = sum(1 for recs in by_id.values() if len(recs) > 1)
    print(
        f"\nfailover: master {dead_port} killed at {killed_at:.1f}s with {before} of {N_DOCS} outputs; "
        f"replica {replica_port} "
        f"promoted after {failover_s:.1f}s; {N_DOCS} ids out after {elapsed:.1f}s; "
        f"{redelivered} redelivered; retry log lines {retried}"
    )

    # both become ready again, and both still decide: one more document each way
    for w in (w1, w2):
        wait_ready_again(w)
    probe = json.loads(docs[0])
    probe["id"] = "after-failover"
    broker.produce_sync(pipeline.raw, [("after-failover", json.dumps(probe, ensure_ascii=False))])
    total = sum(len(v) for v in got.values())
    late = collect(broker, pipeline.outputs, expected=total + 1, timeout=60, settle=1)
    after = [json.loads(r.value) for r in late[pipeline.duplicate] if r.key == b"after-failover"]
    assert after and after[0]["duplicate_of"] in by_id, late[pipeline.unique][-3:]
    for w in (w1, w2):
        assert w.proc.poll() is None
        assert w.stop() == 0
