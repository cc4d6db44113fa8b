"""The stream with authentication everywhere: a worker on a Kafka broker that accepts only SASL_SSL
(SCRAM-SHA-512), storing in a TLS-only Redis Cluster as the least-privilege ACL user; ``neardup
publish`` and ``neardup tail`` on the same broker. Every credential comes from settings
(``NEARDUP_*`` variables, as the Kubernetes Secret provides them).

A wrong Kafka or Redis password stops the worker at start with one line: exit 1, no traceback,
no secret in its output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.conftest import Pipeline, WorkerProcess
from tests.fixtures.kafka_broker import ROOT, KafkaBroker
from tests.fixtures.redis_servers import RedisCluster

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

NOTICE = (
    "关于某某公司变更经营范围申请的批复\n各有关单位：经审查，某某公司提交的变更经营范围申请材料齐全，"
    "符合相关规定。根据《行政许可法》第三十八条的规定，决定给予批准。该公司应当自本批复下达之日起"
    "三十日内办理变更登记手续，逾期未办理的，本批复自动失效。特此批复。\n二〇二四年三月十五日"
)


@pytest.fixture
def pipeline(kafka_sasl_broker: KafkaBroker) -> Pipeline:
    """This module's pipeline lives on the SASL_SSL broker (``start_worker`` uses it)."""
    b = kafka_sasl_broker
    p = Pipeline(
        broker=b,
        raw=b.topic_name("raw"),
        unique=b.topic_name("unique"),
        duplicate=b.topic_name("duplicate"),
        dead_letter=b.topic_name("dead-letter"),
        app_id=b.topic_name("neardup-secure"),
    )
    b.create_topics_sync([p.raw, *p.outputs], partitions=p.partitions)
    return p


def secure_env(pipeline: Pipeline, cluster: RedisCluster, **override: str) -> dict[str, str]:
    """Settings of a worker or a command on the secure broker and cluster, as variables: the
    credentials in ``NEARDUP_KAFKA__SASL_*`` and ``NEARDUP_REDIS__USERNAME|PASSWORD``, as
    deploy/k8s takes them from its Secrets; the store URL names no user."""
    assert pipeline.broker.security is not None and cluster.security is not None
    return {
        **pipeline.env(),
        **pipeline.broker.security.settings_env(),
        **cluster.security.settings_env(),
        # under the user's key pattern (nd:*), and this test's own
        "NEARDUP_REDIS__KEY_PREFIX": f"nd:{pipeline.key_prefix}",
        "NEARDUP_STORE_URL": cluster.url,
        **override,
    }


def neardup(args: list[str], env: dict[str, str], timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("NEARDUP_")}
    return subprocess.run(
        [sys.executable, "-m", "neardup", *args],
        cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def test_documents_over_sasl_ssl_are_decided_with_a_tls_acl_store(
    pipeline: Pipeline,
    start_worker: Callable[..., WorkerProcess],
    redis_secure_cluster: RedisCluster,
    tmp_path: Path,
) -> None:
    env = secure_env(pipeline, redis_secure_cluster)
    worker = start_worker("secure", store_url=env["NEARDUP_STORE_URL"], **env)
    ready = worker.wait_ready()
    assert ready["engine"] == "open"

    run = uuid.uuid4().hex[:8]
    docs = [
        {"id": f"{run}-granted", "text": NOTICE, "published_at": "2024-03-15T08:00:00Z"},
        {"id": f"{run}-reprint", "text": "来源：某某网\n" + NOTICE + "\n责任编辑：王五",
         "published_at": "2024-03-16T08:00:00Z"},
    ]  # fmt: skip
    source = tmp_path / "docs.jsonl"
    source.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    published = neardup(["publish", str(source), "--no-progress"], env)
    assert published.returncode == 0, published.stderr

    unique = neardup(["tail", "unique", "--from-beginning", "--max", "1", "--timeout", "60"], env)
    duplicate = neardup(["tail", "duplicate", "--from-beginning", "--max", "1", "--timeout", "60"], env)
    assert unique.returncode == 0 and duplicate.returncode == 0, unique.stderr + duplicate.stderr
    [original] = [json.loads(line) for line in unique.stdout.splitlines()]
    [copy] = [json.loads(line) for line in duplicate.stdout.splitlines()]
    assert original["id"] == f"{run}-granted" and original["status"] == "unique"
    assert copy["id"] == f"{run}-reprint" and copy["duplicate_of"] == f"{run}-granted"
    passwords = (pipeline.broker.security.password, redis_secure_cluster.security.password)  # type: ignore[union-attr]
    assert not any(p in worker.log_tail(200_000) for p in passwords)


@pytest.mark.parametrize(
    "wrong",
    ["kafka", "redis"],
)
def test_worker_with_a_wrong_password_stops_at_start(
    pipeline: Pipeline,
    start_worker: Callable[..., WorkerProcess],
    redis_secure_cluster: RedisCluster,
    wrong: str,
) -> None:
    bad = "wrong-" + uuid.uuid4().hex
    override = {"NEARDUP_KAFKA__SASL_PASSWORD" if wrong == "kafka" else "NEARDUP_REDIS__PASSWORD": bad}
    env = secure_env(pipeline, redis_secure_cluster, **override)
    # retries would run for a minute; a permanent error must not wait for them
    env["NEARDUP_REDIS__RETRY_SECONDS"] = "60"
    worker = start_worker(f"wrong-{wrong}", store_url=env["NEARDUP_STORE_URL"], **env)
    try:
        code = worker.proc.wait(30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the worker still runs 30 s after a wrong {wrong} password:\n{worker.log_tail()}")
    output = worker.log_tail(200_000)
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 1, output
    assert len(lines) == 1 and "Traceback" not in output, output
    assert bad not in output
    assert ("refused the login" if wrong == "kafka" else "password") in lines[0]
