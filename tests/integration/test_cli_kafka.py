"""``neardup publish | tail | worker`` against real brokers: the demo broker (tansu) and Apache Kafka.

Each error path a user meets when starting the streaming side ends in one line and exit code 1:
an unreachable broker, a store that refuses, a web or metrics port already taken by another worker
on the same host (a real ``neardup worker`` holds it here).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.kafka_broker import KafkaBroker, _die_with_parent, start_tansu, stop_process
from tests.fixtures.net import free_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample.jsonl"
FALLBACK = "publishing without idempotence"


def neardup(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "neardup", *args], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=timeout, check=False)  # fmt: skip


def error_line(res: subprocess.CompletedProcess[str]) -> str:
    """The one line a failed run prints on stderr (no traceback)."""
    lines = [line for line in res.stderr.strip().splitlines() if line.strip()]
    assert res.returncode == 1 and len(lines) == 1, res.stderr[-3000:]
    assert lines[0].startswith("neardup: error: ") and "Traceback" not in res.stderr
    return lines[0]


@pytest.fixture(scope="module")
def tansu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """The demo broker (scripts/demo.sh starts the same binary), whatever the session broker is."""
    broker = start_tansu(tmp_path_factory.mktemp("tansu"))
    try:
        yield broker
    finally:
        stop_process(broker.proc)


def publish_and_read_back(broker: KafkaBroker, n: int = 30) -> subprocess.CompletedProcess[str]:
    topic = broker.topic_name("cli-raw")
    broker.create_topics_sync([topic], partitions=2)
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()[:n]
    src = Path(broker.workdir) / f"{topic}.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {"NEARDUP_BROKER_URL": broker.url}
    res = neardup("publish", str(src), "--topic", topic, "--no-progress", env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"published {n} messages to {topic}" in res.stderr
    back = neardup("tail", topic, "--from-beginning", "--max", str(n), "--timeout", "30", "--meta", env=env)
    assert back.returncode == 0, back.stderr[-3000:]
    got = [json.loads(line) for line in back.stdout.splitlines()]
    assert sorted(r["key"] for r in got) == sorted(json.loads(line)["id"] for line in lines)
    return res


def test_publish_on_the_demo_broker_falls_back_from_idempotence_with_one_warning(tansu: KafkaBroker) -> None:
    res = publish_and_read_back(tansu)
    warnings = [line for line in res.stderr.splitlines() if FALLBACK in line]
    assert len(warnings) == 1 and "InitProducerId" in warnings[0], res.stderr
    assert "Traceback" not in res.stderr


def test_publish_on_apache_kafka_stays_idempotent(kafka_broker: KafkaBroker) -> None:
    if kafka_broker.kind != "kafka":
        pytest.skip(f"the session broker is {kafka_broker.kind}, not Apache Kafka")
    res = publish_and_read_back(kafka_broker)
    assert FALLBACK not in res.stderr, res.stderr


def test_unreachable_broker_is_one_line(tmp_path: Path) -> None:
    dead = f"kafka://127.0.0.1:{free_port()}"
    for args in (["publish", str(SAMPLE), "--no-progress"], ["tail", "raw", "--timeout", "1"],
                 ["worker", "--web-port", str(free_port()), "--metrics-port", "0"]):  # fmt: skip
        line = error_line(neardup(*args, "--broker", dead))
        assert "cannot reach the Kafka broker" in line and "NEARDUP_BROKER_URL" in line, args


def test_worker_with_a_refusing_store_is_one_line(kafka_broker: KafkaBroker) -> None:
    # no waiting for the store at start: the one error line, and no retry warning before it
    env = {"NEARDUP_BROKER_URL": kafka_broker.url, "NEARDUP_REDIS__RETRY_SECONDS": "0",
           "NEARDUP_RETRY__STARTUP_DEADLINE_SECONDS": "0"}  # fmt: skip
    store = f"redis://127.0.0.1:{free_port()}"
    line = error_line(neardup("worker", "--store", store, "--web-port", str(free_port()), "--metrics-port", "0",
                              env=env))  # fmt: skip
    assert store in line and "NEARDUP_STORE_URL" in line


@contextlib.contextmanager
def running_worker(broker: KafkaBroker, tmp_path: Path, web_port: int, metrics_port: int) -> Iterator[None]:
    """A real ``neardup worker`` holding ``web_port`` and ``metrics_port`` until the block ends."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NEARDUP_BROKER_URL": broker.url,
           "NEARDUP_APP_ID": broker.topic_name("cli-first"), "NEARDUP_TOPICS__RAW": broker.topic_name("raw")}
    log = (tmp_path / "first-worker.log").open("wb")
    command = [sys.executable, "-m", "neardup", "worker", "--web-port", str(web_port), "--metrics-port",
               str(metrics_port)]  # fmt: skip
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, (tmp_path / "first-worker.log").read_text(errors="replace")[-3000:]
            with contextlib.suppress(OSError), urllib.request.urlopen(f"http://127.0.0.1:{web_port}/health", timeout=2):
                break
            assert time.monotonic() < deadline, "the first worker never answered /health"
            time.sleep(0.5)
        yield
    finally:
        stop_process(proc)
        log.close()


def test_a_second_worker_on_the_same_host_names_the_port_setting(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    web, metrics = free_port(), free_port()
    env = {"NEARDUP_BROKER_URL": kafka_broker.url}
    with running_worker(kafka_broker, tmp_path, web, metrics):
        line = error_line(neardup("worker", "--web-port", str(web), "--metrics-port", "0", env=env))
        assert f"port {web}" in line and "NEARDUP_WEB_PORT" in line and "--web-port" in line
        line = error_line(neardup("worker", "--web-port", str(free_port()), "--metrics-port", str(metrics), env=env))
        assert f"port {metrics}" in line and "NEARDUP_METRICS_PORT" in line and "--metrics-port" in line


def test_publish_sends_csv_rows_as_json_documents(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    import csv

    docs = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:12]]
    src = tmp_path / "docs.csv"
    with src.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["doc_id", "body"])
        w.writerows([d["id"], d["text"]] for d in docs)
        w.writerow(["surplus", "text", "one cell too many"])  # malformed: logged, not sent
    topic = kafka_broker.topic_name("cli-csv")
    kafka_broker.create_topics_sync([topic], partitions=2)
    env = {"NEARDUP_BROKER_URL": kafka_broker.url}
    res = neardup("publish", str(src), "--topic", topic, "--id-field", "doc_id", "--text-field", "body",
                  "--no-progress", env=env)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"published {len(docs)} messages to {topic}" in res.stderr and "not sent: row has 3 cells" in res.stderr
    back = neardup("tail", topic, "--from-beginning", "--max", str(len(docs)), "--timeout", "30", "--meta", env=env)
    assert back.returncode == 0, back.stderr[-3000:]
    got = {r["key"]: r["value"] for r in map(json.loads, back.stdout.splitlines())}
    assert got == {d["id"]: {"id": d["id"], "text": d["text"]} for d in docs}
