"""Worker processes for end-to-end tests: ``neardup worker`` (``python -m neardup``) on the session broker.

Each test gets fresh topics and a fresh consumer group (app id), so tests never share offsets.
Workers run with short Kafka timings, their own web port, and are stopped by PID at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.kafka_broker import KafkaBroker, _die_with_parent
from tests.fixtures.net import free_port

ROOT = Path(__file__).resolve().parents[2]

# consumer-group timings short enough for tests (production defaults are 30 s / 3 s / 2.8 s)
FAST_KAFKA = {
    "NEARDUP_KAFKA__SESSION_TIMEOUT_SECONDS": "6",
    "NEARDUP_KAFKA__HEARTBEAT_INTERVAL_SECONDS": "1",
    "NEARDUP_KAFKA__COMMIT_INTERVAL_SECONDS": "0.5",
}


@dataclass
class Pipeline:
    """Topic names and the consumer group of one test."""

    broker: KafkaBroker
    raw: str
    unique: str
    duplicate: str
    dead_letter: str
    app_id: str
    partitions: int = 4
    key_prefix: str = field(default_factory=lambda: f"nd{uuid.uuid4().hex[:8]}")

    def env(self) -> dict[str, str]:
        return {
            "NEARDUP_BROKER_URL": self.broker.url,
            "NEARDUP_APP_ID": self.app_id,
            "NEARDUP_TOPICS__RAW": self.raw,
            "NEARDUP_TOPICS__UNIQUE": self.unique,
            "NEARDUP_TOPICS__DUPLICATE": self.duplicate,
            "NEARDUP_TOPICS__DEAD_LETTER": self.dead_letter,
            "NEARDUP_TOPICS__PARTITIONS": str(self.partitions),
            "NEARDUP_REDIS__KEY_PREFIX": self.key_prefix,
            **FAST_KAFKA,
        }

    def settings(self, **overrides: Any) -> Any:
        """Settings for in-process CLI calls (publish, tail) against this pipeline."""
        from neardup.config import load_settings

        topics = {"raw": self.raw, "unique": self.unique, "duplicate": self.duplicate,
                  "dead_letter": self.dead_letter, "partitions": self.partitions}  # fmt: skip
        return load_settings(broker_url=self.broker.url, app_id=self.app_id, topics=topics, **overrides)

    @property
    def outputs(self) -> list[str]:
        return [self.unique, self.duplicate, self.dead_letter]


@dataclass
class WorkerProcess:
    name: str
    port: int
    proc: subprocess.Popen[bytes]
    log_path: Path
    metrics_port: int = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def http(self, method: str, path: str, body: bytes | None = None, timeout: float = 10.0) -> tuple[int, bytes]:
        req = urllib.request.Request(self.base + path, data=body, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def json(self, method: str, path: str, body: bytes | None = None) -> tuple[int, Any]:
        status, data = self.http(method, path, body)
        return status, json.loads(data)

    def wait_ready(self, timeout: float = 120.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"worker {self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            with contextlib.suppress(OSError, ValueError):
                status, last = self.json("GET", "/ready")
                if status == 200:
                    return dict(last)
            time.sleep(0.3)
        raise AssertionError(f"worker {self.name} not ready after {timeout}s ({last}):\n{self.log_tail()}")

    def log_tail(self, chars: int = 6000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM (graceful: Faust commits what was acked), SIGKILL if it hangs."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return int(self.proc.returncode)

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


@pytest.fixture
def pipeline(kafka_broker: KafkaBroker) -> Pipeline:
    b = kafka_broker
    p = Pipeline(
        broker=b,
        raw=b.topic_name("raw"),
        unique=b.topic_name("unique"),
        duplicate=b.topic_name("duplicate"),
        dead_letter=b.topic_name("dead-letter"),
        app_id=b.topic_name("neardup-e2e"),
    )
    # created up front with 4 partitions: tansu would auto-create with its own count
    b.create_topics_sync([p.raw, *p.outputs], partitions=p.partitions)
    return p


@pytest.fixture
def start_worker(pipeline: Pipeline, tmp_path: Path) -> Iterator[Callable[..., WorkerProcess]]:
    started: list[WorkerProcess] = []

    def start(name: str = "w1", store_url: str = "memory://", web_bind: str | None = "127.0.0.1",
              **env: str) -> WorkerProcess:
        """A worker process; ``web_bind=None`` leaves the address to the worker's own default."""
        port = free_port()
        metrics_port = free_port()
        full_env = {
            **os.environ,
            **pipeline.env(),
            "NEARDUP_STORE_URL": store_url,
            "NEARDUP_WEB_PORT": str(port),
            "NEARDUP_METRICS_PORT": str(metrics_port),
            "NEARDUP_WORKER_ID": f"{pipeline.app_id}-{name}",
            "NEARDUP_WINDOW__MAX_COUNT": "100",
            "NEARDUP_WINDOW__MAX_AGE_SECONDS": "0.5",
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            **env,
        }
        log_path = tmp_path / f"worker-{name}.log"
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "neardup", "worker", *(["--web-bind", web_bind] if web_bind else [])],
                cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent,
            )  # fmt: skip
        w = WorkerProcess(name, port, proc, log_path, metrics_port)
        started.append(w)
        return w

    yield start
    for w in started:
        w.stop()


@pytest.fixture
def store_url(request: pytest.FixtureRequest) -> str:
    """``memory://``, or the session's Redis Cluster for tests parametrized with ``rediscluster``."""
    kind = getattr(request, "param", "memory")
    if kind == "memory":
        return "memory://"
    cluster = request.getfixturevalue("redis_cluster")
    return str(cluster.url)


def load_docs(datasets_dir: Path, n: int, offset: int = 0) -> list[bytes]:
    with (datasets_dir / "docs.jsonl").open("rb") as f:
        lines = [line.rstrip(b"\n") for line in f if line.strip()]
    return lines[offset : offset + n]


def doc_id(line: bytes) -> str:
    return str(json.loads(line)["id"])


def collect(
    broker: KafkaBroker, topics: list[str], expected: int, timeout: float = 120.0, settle: float = 3.0
) -> dict[str, list[Any]]:
    """Records of the topics, by topic, once ``expected`` arrived in total (plus ``settle`` seconds)."""
    records = broker.consume_sync(topics, expected=expected, timeout=timeout, settle=settle)
    got: dict[str, list[Any]] = {t: [] for t in topics}
    for r in records:
        got[r.topic].append(r)
    return got


def wait_balanced(workers: list[WorkerProcess], partitions: int, timeout: float = 90.0) -> list[set[str]]:
    """Until every worker holds some partitions and together they hold each exactly once."""
    deadline = time.monotonic() + timeout
    held: list[set[str]] = []
    while time.monotonic() < deadline:
        held = []
        for w in workers:
            status, body = w.json("GET", "/ready")
            held.append(set(body.get("assigned", [])) if status == 200 else set())
        if all(held) and sum(len(h) for h in held) == partitions and len(set().union(*held)) == partitions:
            return held
        time.sleep(0.5)
    logs = "\n".join(f"--- worker {w.name}:\n{w.log_tail(3000)}" for w in workers)
    raise AssertionError(f"assignment not balanced after {timeout}s: {held}\n{logs}")
