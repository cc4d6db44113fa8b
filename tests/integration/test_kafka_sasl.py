"""``neardup publish`` and ``neardup tail`` against a real Apache Kafka broker that accepts only
SASL_SSL with SCRAM-SHA-512, with the credentials and CA from settings (``NEARDUP_KAFKA__*``).

A wrong password or an untrusted certificate is a one-line error at start: exit 1, no traceback,
no secret in the output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaConnectionError

from neardup.agents.topics import BrokerLoginError, check_broker_login
from neardup.config import load_settings
from tests.fixtures.kafka_broker import ROOT, KafkaBroker, KafkaSecurity
from tests.fixtures.net import free_port
from tests.fixtures.tls import make_tls_files

pytestmark = pytest.mark.integration


def security_of(broker: KafkaBroker) -> KafkaSecurity:
    assert broker.security is not None
    return broker.security


def neardup(args: list[str], env: dict[str, str], timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """``python -m neardup ARGS`` with these settings variables (and no NEARDUP_* from outside)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("NEARDUP_")}
    return subprocess.run(
        [sys.executable, "-m", "neardup", *args],
        cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def cli_env(broker: KafkaBroker, topic: str, **kafka: str) -> dict[str, str]:
    env = {"NEARDUP_BROKER_URL": broker.url, "NEARDUP_TOPICS__RAW": topic, **security_of(broker).settings_env()}
    env.update({f"NEARDUP_KAFKA__{k.upper()}": v for k, v in kafka.items()})
    return env


async def test_broker_refuses_plain_text_clients(kafka_sasl_broker: KafkaBroker) -> None:
    plain = AIOKafkaAdminClient(bootstrap_servers=kafka_sasl_broker.bootstrap, request_timeout_ms=3000)
    with pytest.raises(KafkaConnectionError):
        await plain.start()
    await plain.close()
    sec = security_of(kafka_sasl_broker)
    app_user = AIOKafkaAdminClient(
        bootstrap_servers=kafka_sasl_broker.bootstrap, **sec.client_options(sec.user, sec.password)
    )
    await app_user.start()
    try:
        assert (await app_user.describe_cluster())["brokers"]
    finally:
        await app_user.close()


async def test_login_check_names_the_cause(kafka_sasl_broker: KafkaBroker, tmp_path: Path) -> None:
    sec = security_of(kafka_sasl_broker)
    other_ca = str(make_tls_files(tmp_path / "other-ca").ca_cert)

    def settings(**kafka: str) -> Any:
        return load_settings(broker_url=kafka_sasl_broker.url, kafka={**sec.settings(), **kafka})

    await check_broker_login(settings())  # the right ones: no error
    with pytest.raises(BrokerLoginError, match="refused the login of user 'neardup' \\(SCRAM-SHA-512\\)") as err:
        await check_broker_login(settings(sasl_password="wrong-password"))
    assert "wrong-password" not in err.value.one_line()
    with pytest.raises(BrokerLoginError, match="not trusted"):
        await check_broker_login(settings(ssl_cafile=other_ca))
    # nothing listens there: not a login error, the clients' own retries and errors apply
    await check_broker_login(load_settings(broker_url=f"kafka://127.0.0.1:{free_port()}", kafka=sec.settings()))


def test_publish_and_tail_with_credentials_from_settings(kafka_sasl_broker: KafkaBroker, tmp_path: Path) -> None:
    topic = kafka_sasl_broker.create_topic_sync(kafka_sasl_broker.topic_name("sasl-raw"), partitions=2)
    docs = [{"id": f"sasl-{i}-{uuid.uuid4().hex[:6]}", "text": f"文档 {i} 的正文"} for i in range(5)]
    source = tmp_path / "docs.jsonl"
    source.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    env = cli_env(kafka_sasl_broker, topic)

    published = neardup(["publish", str(source), "--no-progress"], env)
    assert published.returncode == 0, published.stderr
    tailed = neardup(["tail", "raw", "--from-beginning", "--max", str(len(docs)), "--timeout", "20"], env)
    assert tailed.returncode == 0, tailed.stderr
    got = [json.loads(line) for line in tailed.stdout.splitlines()]
    assert sorted(d["id"] for d in got) == sorted(d["id"] for d in docs)
    # and what the broker holds, read as its admin: the same records
    assert len(kafka_sasl_broker.consume_sync(topic, expected=len(docs))) == len(docs)


@pytest.mark.parametrize("command", ["publish", "tail"])
@pytest.mark.parametrize("mistake", ["wrong password", "untrusted CA"])
def test_bad_credentials_are_one_line_at_start(
    kafka_sasl_broker: KafkaBroker, tmp_path: Path, command: str, mistake: str
) -> None:
    sec = security_of(kafka_sasl_broker)
    wrong = "wrong-" + uuid.uuid4().hex
    if mistake == "wrong password":
        env = cli_env(kafka_sasl_broker, "raw", sasl_password=wrong)
    else:  # the right password, but a CA that did not sign the broker's certificate
        env = cli_env(kafka_sasl_broker, "raw", ssl_cafile=str(make_tls_files(tmp_path / "other-ca").ca_cert))
    source = tmp_path / "one.jsonl"
    source.write_text('{"id": "x", "text": "y"}\n', encoding="utf-8")
    args = ["publish", str(source), "--no-progress"] if command == "publish" else ["tail", "raw", "--timeout", "5"]

    result = neardup(args, env)

    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    assert wrong not in output and sec.password not in output and sec.admin_password not in output
    expected = "refused the login of user 'neardup'" if mistake == "wrong password" else "certificate not trusted"
    assert expected in lines[0]
