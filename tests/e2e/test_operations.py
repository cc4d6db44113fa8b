"""What a worker tells operators, and who may ask it, checked on real worker processes.

- The web and metrics ports listen on loopback unless told otherwise; POST /check takes a bearer
  token and serves a bounded number of requests at once, refusing the rest with 429 at once, so
  a crowd of clients cannot stall the stream (item 6 of issue 9).
- Decision latency runs from the worker taking a message, not from the document's published_at
  (a crawl time); publish-to-decision comes from the Kafka timestamp (item 16).
- The consumer-lag gauge moves while a worker is stuck on a window, and a partition taken away by
  a rebalance disappears from it (item 17).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import Pipeline, WorkerProcess, collect, doc_id, load_docs, wait_balanced
from tests.fixtures.redis_servers import RedisProcess, redis_binaries, start_redis

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

TOKEN = "e2e-check-token-5f0c"


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    redis_binaries()
    server = start_redis(tmp_path / "redis")
    try:
        yield server
    finally:
        server.stop(signal.SIGKILL)


def samples(worker: WorkerProcess) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(sample name, sorted labels) -> value, from the worker's /metrics."""
    status, body = worker.http("GET", "/metrics")
    assert status == 200
    out = {}
    for family in text_string_to_metric_families(body.decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def bucket(m: dict[tuple[str, tuple[tuple[str, str], ...]], float], histogram: str, le: float) -> float:
    """The cumulative count of ``histogram`` at upper bound ``le`` (however the exporter prints it)."""
    (value,) = [v for (name, labels), v in m.items()
                if name == histogram + "_bucket" and float(dict(labels)["le"]) == le]  # fmt: skip
    return value


def lag_by_partition(worker: WorkerProcess) -> dict[int, float]:
    return {int(dict(k[1])["partition"]): v for k, v in samples(worker).items()
            if k[0] == "neardup_consumer_lag_messages"}  # fmt: skip


def listen_addresses(port: int) -> set[str]:
    """Local addresses with a LISTEN socket on ``port`` (IPv4, hex as in /proc/net/tcp)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        addr, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:
            found.add(".".join(str(int(addr[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return found


def post_check(worker: WorkerProcess, body: bytes, token: str | None) -> int:
    req = urllib.request.Request(worker.base + "/check", data=body, method="POST")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_check_is_authenticated_bounded_and_cannot_stall_the_stream(
    pipeline: Pipeline, start_worker: Callable[..., WorkerProcess], datasets_dir: Path
) -> None:
    worker = start_worker("check", web_bind=None, NEARDUP_CHECK_TOKEN=TOKEN, NEARDUP_CHECK_MAX_CONCURRENT="2")
    worker.wait_ready()
    # default bind: loopback only, web and metrics port alike
    assert listen_addresses(worker.port) == {"127.0.0.1"}
    assert listen_addresses(worker.metrics_port) == {"127.0.0.1"}

    docs = load_docs(datasets_dir, 400)
    probe = docs[0]
    assert post_check(worker, probe, None) == 401
    assert post_check(worker, probe, "wrong-token") == 401
    assert post_check(worker, probe, TOKEN) == 200

    # 24 clients post /check without pause while 300 documents go through the stream
    statuses: Counter[int] = Counter()
    counted = threading.Lock()
    stop = threading.Event()

    def client(i: int) -> None:
        while not stop.is_set():
            code = post_check(worker, docs[300 + i], TOKEN)
            with counted:
                statuses[code] += 1

    clients = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(24)]
    for t in clients:
        t.start()
    try:
        time.sleep(1.0)  # the crowd is there before the documents
        pipeline.broker.produce_sync(pipeline.raw, [(doc_id(d).encode(), d) for d in docs[:300]])
        got = collect(pipeline.broker, pipeline.outputs, expected=300, timeout=180, settle=1.0)
    finally:
        stop.set()
        for t in clients:
            t.join(60)
    decided = {json.loads(r.value)["id"] for t in (pipeline.unique, pipeline.duplicate) for r in got[t]}
    assert decided == {doc_id(d) for d in docs[:300]}, "the stream did not decide every document"
    assert statuses[429] > 0, f"no request was refused: {statuses}"
    assert statuses[200] > 0, f"no request was served: {statuses}"
    assert set(statuses) <= {200, 429}, statuses
    m = samples(worker)
    assert m[("neardup_agent_check_requests_total", (("outcome", "busy"),))] == statuses[429]
    assert m[("neardup_agent_check_requests_total", (("outcome", "unauthorized"),))] == 2


def test_latency_from_the_take_and_lag_while_stuck(
    pipeline: Pipeline,
    start_worker: Callable[..., WorkerProcess],
    own_redis: RedisProcess,
    datasets_dir: Path,
) -> None:
    # the store client gives up after 3 s (not 30) once Redis dies: readiness falls sooner
    worker = start_worker("lag", store_url=f"redis://127.0.0.1:{own_redis.port}", NEARDUP_REDIS__RETRY_SECONDS="3")
    worker.wait_ready()
    # crawled a year ago: published_at says nothing about how fast the worker decides
    docs = []
    for line in load_docs(datasets_dir, 150):
        obj = json.loads(line)
        obj["published_at"] = "2025-12-01T00:00:00Z"
        docs.append(json.dumps(obj, ensure_ascii=False).encode())
    pipeline.broker.produce_sync(pipeline.raw, [(doc_id(d).encode(), d) for d in docs[:100]])
    collect(pipeline.broker, pipeline.outputs, expected=100, timeout=120, settle=1.0)

    m = samples(worker)
    latency_n = m[("neardup_decision_latency_seconds_count", ())]
    assert latency_n == 100
    assert bucket(m, "neardup_decision_latency_seconds", 60.0) == latency_n, "decision latency above 60 s"
    assert m[("neardup_publish_to_decision_seconds_count", ())] == 100
    assert bucket(m, "neardup_publish_to_decision_seconds", 60.0) == 100
    # the crawl time is still measured, as the documents' age (a year: above every finite bucket)
    assert m[("neardup_document_age_seconds_count", ())] == 100
    assert bucket(m, "neardup_document_age_seconds", 30 * 86_400.0) == 0
    assert set(lag_by_partition(worker).values()) == {0.0}

    # the store dies; 50 more documents arrive: the window is stuck, the lag must say so
    own_redis.stop(signal.SIGKILL)
    pipeline.broker.produce_sync(pipeline.raw, [(doc_id(d).encode(), d) for d in docs[100:]])
    deadline = time.monotonic() + 60
    lag: dict[int, float] = {}
    while time.monotonic() < deadline:
        lag = lag_by_partition(worker)
        if sum(lag.values()) >= 50:
            break
        time.sleep(0.5)
    assert sum(lag.values()) == 50, f"lag while stuck: {lag}\n{worker.log_tail()}"
    # readiness follows once the store client gives up its own retries (redis.retry_seconds)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and samples(worker)[("neardup_agent_ready", ())] != 0:
        time.sleep(1.0)
    status, ready = worker.json("GET", "/ready")
    assert status == 503 and ready["degraded"], ready
    assert samples(worker)[("neardup_agent_ready", ())] == 0
    assert sum(lag_by_partition(worker).values()) == 50  # still reported, still true


def test_lag_of_a_revoked_partition_disappears(
    pipeline: Pipeline, start_worker: Callable[..., WorkerProcess], datasets_dir: Path
) -> None:
    w1 = start_worker("w1")
    w1.wait_ready()
    docs = load_docs(datasets_dir, 80)
    pipeline.broker.produce_sync(pipeline.raw, [(doc_id(d).encode(), d) for d in docs])
    collect(pipeline.broker, pipeline.outputs, expected=len(docs), timeout=120, settle=1.0)
    assert set(lag_by_partition(w1)) == set(range(pipeline.partitions))

    w2 = start_worker("w2")
    w2.wait_ready()
    held = wait_balanced([w1, w2], pipeline.partitions)
    mine = [{int(tp.rsplit(":", 1)[1]) for tp in h} for h in held]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        seen = [set(lag_by_partition(w)) for w in (w1, w2)]
        if seen == mine:
            break
        time.sleep(0.5)
    assert seen == mine, f"lag labels {seen}, partitions held {mine}"
    os.kill(w2.pid, signal.SIGTERM)  # w1 takes every partition back and reports them all again
    w2.proc.wait(30)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and set(lag_by_partition(w1)) != set(range(pipeline.partitions)):
        time.sleep(0.5)
    assert set(lag_by_partition(w1)) == set(range(pipeline.partitions))
