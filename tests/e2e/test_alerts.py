"""deploy/prometheus/alerts.yml in a real Prometheus (Debian's `prometheus`), scraping real workers.

Every rule evaluates without error on the workers' real series; on healthy traffic none fires;
the readiness, stuck-consumer and store-retry alerts fire for a worker whose Redis died while a
backlog waits, and NeardupWorkerDown fires for a worker killed with SIGKILL.

Test override, generated from the same file: every rule's ``for:`` becomes ``FOR_IN_TEST`` (the
production values are minutes), and Prometheus scrapes and evaluates every second. Expressions,
thresholds and range windows are the production ones. The scrape job is not called "neardup": the
rules must find workers by their target label, as on Kubernetes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import ROOT, Pipeline, WorkerProcess, collect, doc_id, load_docs
from tests.fixtures.kafka_broker import _die_with_parent
from tests.fixtures.net import free_port
from tests.fixtures.redis_servers import RedisProcess, redis_binaries, start_redis

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
PROMETHEUS_YML = ROOT / "deploy" / "prometheus" / "prometheus.yml"
FOR_IN_TEST = "5s"


def rules_for_test(tmp: Path) -> Path:
    """alerts.yml with every ``for:`` set to FOR_IN_TEST; nothing else changed."""
    doc = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    for group in doc["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = FOR_IN_TEST
    path = tmp / "alerts-test.yml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def worker_target_labels() -> dict[str, str]:
    """The labels deploy/prometheus/prometheus.yml gives worker targets (as every scrape path does)."""
    cfg = yaml.safe_load(PROMETHEUS_YML.read_text(encoding="utf-8"))
    (job,) = [j for j in cfg["scrape_configs"] if j["job_name"] == "neardup"]
    (static,) = job["static_configs"]
    return dict(static["labels"])


class Prometheus:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.proc, self.port, self.log = proc, port, log

    def api(self, path: str, **params: str) -> Any:
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=10) as resp:
            body = json.loads(resp.read())
        assert body["status"] == "success", body
        return body["data"]

    def rules(self) -> list[dict[str, Any]]:
        return [r for g in self.api("rules")["groups"] for r in g["rules"]]

    def alerts(self, state: str = "firing") -> list[dict[str, str]]:
        """Labels of the alerts in ``state`` (firing or pending)."""
        return [a["labels"] for a in self.api("alerts")["alerts"] if a["state"] == state]

    def query(self, expr: str) -> list[dict[str, Any]]:
        return list(self.api("query", query=expr)["result"])

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


@pytest.fixture
def start_prometheus(tmp_path: Path) -> Iterator[Callable[[list[str]], Prometheus]]:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus not installed (make services installs the Debian package as root)")
    started: list[Prometheus] = []

    def start(targets: list[str]) -> Prometheus:
        work = tmp_path / "prometheus"
        work.mkdir()
        rules = rules_for_test(work)
        config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "900ms", "evaluation_interval": "1s"},
            "rule_files": [str(rules)],
            "scrape_configs": [{"job_name": "neardup-e2e", "metrics_path": "/metrics",
                                "static_configs": [{"targets": targets, "labels": worker_target_labels()}]}],
        }  # fmt: skip
        (work / "prometheus.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        port = free_port()
        log = work / "prometheus.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [binary, f"--config.file={work / 'prometheus.yml'}", f"--storage.tsdb.path={work / 'data'}",
                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent,
            )  # fmt: skip
        prom = Prometheus(proc, port, log)
        started.append(prom)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"prometheus exited:\n{prom.log_tail()}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        return prom
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"prometheus not ready:\n{prom.log_tail()}")

    yield start
    for prom in started:
        if prom.proc.poll() is None:
            prom.proc.terminate()
            try:
                prom.proc.wait(15)
            except subprocess.TimeoutExpired:
                prom.proc.kill()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    redis_binaries()
    server = start_redis(tmp_path / "redis")
    try:
        yield server
    finally:
        server.stop(signal.SIGKILL)


def second_pipeline(pipeline: Pipeline) -> dict[str, str]:
    """Topics and a group of their own for a second worker (it must not see the first one's traffic)."""
    b = pipeline.broker
    names = {"RAW": b.topic_name("raw-b"), "UNIQUE": b.topic_name("unique-b"), "DUPLICATE": b.topic_name("dup-b"),
             "DEAD_LETTER": b.topic_name("dead-b")}  # fmt: skip
    b.create_topics_sync(list(names.values()), partitions=pipeline.partitions)
    env = {f"NEARDUP_TOPICS__{k}": v for k, v in names.items()}
    env["NEARDUP_APP_ID"] = b.topic_name("neardup-e2e-b")
    return env


def rule_metric_names() -> set[str]:
    names: set[str] = set()
    for group in yaml.safe_load(ALERTS.read_text(encoding="utf-8"))["groups"]:
        for rule in group["rules"]:
            names |= set(re.findall(r"\bneardup_\w+", str(rule["expr"])))
    return names


def wait_firing(prom: Prometheus, wanted: dict[str, str], timeout: float = 90.0) -> dict[str, str]:
    """alert name -> instance it must fire for; returns when each fires there."""
    deadline = time.monotonic() + timeout
    firing: list[dict[str, str]] = []
    while time.monotonic() < deadline:
        firing = prom.alerts("firing")
        got = {a["alertname"]: a.get("instance", "") for a in firing}
        if all(got.get(name) == inst for name, inst in wanted.items()):
            return got
        time.sleep(1.0)
    raise AssertionError(f"not firing after {timeout}s: wanted {wanted}, firing {firing}")


def target(w: WorkerProcess) -> str:
    return f"127.0.0.1:{w.metrics_port}"


def test_alert_rules_on_real_workers(
    pipeline: Pipeline,
    start_worker: Callable[..., WorkerProcess],
    start_prometheus: Callable[[list[str]], Prometheus],
    own_redis: RedisProcess,
    datasets_dir: Path,
) -> None:
    docs = load_docs(datasets_dir, 300)
    healthy = start_worker("healthy")
    # the stuck-to-be worker: its own topics and group, a Redis that will die, short store retries
    stuck_env = second_pipeline(pipeline)
    stuck = start_worker("stuck", store_url=f"redis://127.0.0.1:{own_redis.port}",
                         NEARDUP_REDIS__RETRY_SECONDS="2", **stuck_env)  # fmt: skip
    healthy.wait_ready()
    stuck.wait_ready()
    # a first window pays the warm-up; Prometheus starts after it, as it would on a running worker
    pipeline.broker.produce_sync(pipeline.raw, [(doc_id(d).encode(), d) for d in docs[:50]])
    collect(pipeline.broker, pipeline.outputs, expected=50, timeout=120, settle=0.5)
    prom = start_prometheus([target(healthy), target(stuck)])
    deadline = time.monotonic() + 30  # Prometheus applies new targets every 5 s
    while time.monotonic() < deadline and len(prom.query('up{app_kubernetes_io_name="neardup"} == 1')) < 2:
        time.sleep(0.5)

    # --- healthy traffic: every rule evaluates on real series, nothing fires
    pipeline.broker.produce_sync(pipeline.raw, [(doc_id(d).encode(), d) for d in docs[50:200]])
    collect(pipeline.broker, pipeline.outputs, expected=200, timeout=120, settle=0.5)
    up = prom.query('up{app_kubernetes_io_name="neardup"}')
    assert sorted(float(s["value"][1]) for s in up) == [1.0, 1.0], (up, prom.api("targets"), prom.log_tail())
    missing = [name for name in sorted(rule_metric_names()) if not prom.query(f"count({name})")]
    assert not missing, f"rules name series the workers do not export: {missing}"
    quiet_until = time.monotonic() + 10
    while time.monotonic() < quiet_until:
        assert prom.alerts("firing") == [], "an alert fires on healthy traffic"
        time.sleep(1.0)
    rules = prom.rules()
    assert len(rules) == sum(len(g["rules"]) for g in yaml.safe_load(ALERTS.read_text())["groups"])
    bad = [(r["name"], r["health"], r.get("lastError")) for r in rules if r["health"] != "ok" or r.get("lastError")]
    assert not bad, f"rules that do not evaluate: {bad}"

    # --- the stuck worker's Redis dies while a backlog waits: not ready, stuck, retrying
    own_redis.stop(signal.SIGKILL)
    pipeline.broker.produce_sync(stuck_env["NEARDUP_TOPICS__RAW"], [(doc_id(d).encode(), d) for d in docs[200:260]])
    fired = wait_firing(prom, {"NeardupWorkerNotReady": target(stuck), "NeardupConsumerStuck": target(stuck),
                               "NeardupStoreRetries": target(stuck)})  # fmt: skip
    assert all(inst != target(healthy) for inst in fired.values()), fired

    # --- a worker killed: NeardupWorkerDown for that one
    os.kill(healthy.pid, signal.SIGKILL)
    healthy.proc.wait(10)
    wait_firing(prom, {"NeardupWorkerDown": target(healthy)}, timeout=60)

