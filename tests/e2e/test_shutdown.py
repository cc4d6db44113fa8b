"""SIGTERM stops a worker within 10 s in every state, and commits only offsets it decided.

States: opening its engine while Redis is down, idle, busy mid-stream, stuck on a window because
Redis died (connections refused) or hangs (SIGSTOP: connections open, no answers). Kubernetes
gives a pod 60 s (``terminationGracePeriodSeconds``) and then kills it; the worker's own bound is
10 s. After the stop, every raw message below a committed offset has its decision on an output
topic: a stop may leave work for the next worker, never skip it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Pipeline, WorkerProcess, collect, doc_id, load_docs
from tests.fixtures.kafka_broker import run_sync
from tests.fixtures.redis_servers import RedisProcess, redis_binaries, start_redis

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

STOP_BOUND = 10.0  # seconds from SIGTERM to exit, in every state
# a store call gives up after 3 s instead of 30 and the worker's own retry (the state under test)
# begins: the same states, reached sooner
FAST_GIVE_UP = {"NEARDUP_REDIS__RETRY_SECONDS": "3"}


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A private redis-server the test may kill or freeze (the session's one must stay healthy)."""
    redis_binaries()
    server = start_redis(tmp_path / "redis")
    try:
        yield server
    finally:
        if server.alive:
            os.kill(server.pid, signal.SIGCONT)  # a frozen server must be able to stop
        server.stop(signal.SIGKILL)


def sigterm_seconds(worker: WorkerProcess, wait: float = 60.0) -> float:
    """SIGTERM the worker; seconds until it exited (the test fails later, not here, on a slow stop)."""
    started = time.monotonic()
    os.kill(worker.pid, signal.SIGTERM)
    try:
        worker.proc.wait(wait)
    except subprocess.TimeoutExpired:
        worker.kill()
        raise AssertionError(f"worker still running {wait}s after SIGTERM:\n{worker.log_tail()}") from None
    return time.monotonic() - started


def committed_offsets(pipeline: Pipeline) -> dict[int, int]:
    """The group's committed raw offset per partition (0 where nothing is committed)."""

    async def read() -> dict[int, int]:
        from aiokafka import AIOKafkaConsumer, TopicPartition

        consumer = AIOKafkaConsumer(
            bootstrap_servers=pipeline.broker.bootstrap, group_id=pipeline.app_id, enable_auto_commit=False
        )
        await consumer.start()
        try:
            tps = [TopicPartition(pipeline.raw, p) for p in range(pipeline.partitions)]
            return {tp.partition: await consumer.committed(tp) or 0 for tp in tps}
        finally:
            await consumer.stop()

    return run_sync(read)


def assert_committed_only_decided(pipeline: Pipeline, published: int) -> int:
    """Every raw message below its partition's committed offset has a decision; returns how many."""
    committed = committed_offsets(pipeline)
    raw = pipeline.broker.consume_sync([pipeline.raw], expected=published, timeout=60, settle=0.5)
    decided_records = pipeline.broker.consume_sync(
        [pipeline.unique, pipeline.duplicate], expected=sum(committed.values()), timeout=30, settle=1.0
    )
    decided = {json.loads(r.value)["id"] for r in decided_records}
    covered = [r for r in raw if r.offset < committed[r.partition]]
    undecided = [doc_id(r.value) for r in covered if doc_id(r.value) not in decided]
    assert not undecided, f"offsets committed for undecided documents: {undecided[:10]} (committed {committed})"
    return len(covered)


def publish(pipeline: Pipeline, docs: list[bytes]) -> None:
    pipeline.broker.produce_sync(pipeline.raw, [(doc_id(d).encode(), d) for d in docs])


def wait_for(what: str, check: Callable[[], bool], worker: WorkerProcess, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        assert worker.proc.poll() is None, f"worker exited:\n{worker.log_tail()}"
        time.sleep(0.2)
    raise AssertionError(f"{what} not seen after {timeout}s:\n{worker.log_tail()}")


def degraded(worker: WorkerProcess) -> bool:
    status, body = worker.json("GET", "/ready")
    return status == 503 and bool(body.get("degraded"))


def test_sigterm_while_the_engine_cannot_open(
    pipeline: Pipeline, start_worker: Callable[..., WorkerProcess], own_redis: RedisProcess
) -> None:
    own_redis.stop(signal.SIGKILL)  # the store is down before the worker starts
    worker = start_worker("opening", store_url=f"redis://127.0.0.1:{own_redis.port}", **FAST_GIVE_UP)
    # the start-up check (or the engine, once Faust runs) retries the store: stop it there
    wait_for("store retries", lambda: "retrying in" in worker.log_tail(), worker)
    took = sigterm_seconds(worker)
    assert took < STOP_BOUND, f"stopped after {took:.1f}s:\n{worker.log_tail()}"
    # before Faust runs, SIGTERM's default action ends the process: nothing was taken, nothing to commit
    assert worker.proc.returncode in (0, -signal.SIGTERM), worker.log_tail()
    assert committed_offsets(pipeline) == dict.fromkeys(range(pipeline.partitions), 0)


@pytest.mark.parametrize("how", ["idle", "busy"])
def test_sigterm_healthy(
    pipeline: Pipeline,
    start_worker: Callable[..., WorkerProcess],
    own_redis: RedisProcess,
    datasets_dir: Path,
    how: str,
) -> None:
    worker = start_worker(how, store_url=f"redis://127.0.0.1:{own_redis.port}")
    worker.wait_ready()
    docs = load_docs(datasets_dir, 1500)
    if how == "idle":
        publish(pipeline, docs[:50])
        collect(pipeline.broker, pipeline.outputs, expected=50, timeout=120, settle=1.0)
        time.sleep(2 * 0.5)  # two commit intervals: nothing left in flight
        published = 50
    else:
        publish(pipeline, docs)
        published = len(docs)
        pipeline.broker.consume_sync([pipeline.unique, pipeline.duplicate], expected=100, timeout=120, settle=0)
    took = sigterm_seconds(worker)
    assert took < STOP_BOUND, f"stopped after {took:.1f}s:\n{worker.log_tail()}"
    assert worker.proc.returncode == 0, worker.log_tail()
    covered = assert_committed_only_decided(pipeline, published)
    if how == "idle":
        assert covered == published  # a graceful stop commits everything it decided


@pytest.mark.parametrize("failure", ["killed", "frozen"])
def test_sigterm_while_redis_is_down(
    pipeline: Pipeline,
    start_worker: Callable[..., WorkerProcess],
    own_redis: RedisProcess,
    datasets_dir: Path,
    failure: str,
) -> None:
    worker = start_worker(failure, store_url=f"redis://127.0.0.1:{own_redis.port}", **FAST_GIVE_UP)
    worker.wait_ready()
    docs = load_docs(datasets_dir, 200)
    publish(pipeline, docs[:100])
    collect(pipeline.broker, pipeline.outputs, expected=100, timeout=120, settle=1.0)

    if failure == "killed":
        own_redis.stop(signal.SIGKILL)
    else:
        os.kill(own_redis.pid, signal.SIGSTOP)
    publish(pipeline, docs[100:])
    wait_for("a degraded worker", lambda: degraded(worker), worker, timeout=90)
    took = sigterm_seconds(worker)
    assert took < STOP_BOUND, f"stopped after {took:.1f}s:\n{worker.log_tail()}"
    assert worker.proc.returncode == 0, worker.log_tail()
    covered = assert_committed_only_decided(pipeline, len(docs))
    assert covered >= 100, "the documents decided before Redis went down were not committed"
    assert covered < len(docs), "documents decided while Redis was down?"
