"""Connection options and encodings shared by the Faust app and the CLI clients."""

from __future__ import annotations

import json
import ssl

import numpy as np
import pytest

from neardup.agents.topics import (
    aiokafka_security,
    bootstrap_servers,
    encode_json,
    faust_credentials,
    resolve_topic,
    topic_errors,
)
from neardup.config import load_settings


def test_bootstrap_servers_forms() -> None:
    assert bootstrap_servers(load_settings(broker_url="kafka://a:9092")) == ["a:9092"]
    assert bootstrap_servers(load_settings(broker_url="kafka://a:9092;b:9093")) == ["a:9092", "b:9093"]
    assert bootstrap_servers(load_settings(broker_url="kafka://a:1;kafka://b:2,c:3")) == ["a:1", "b:2", "c:3"]
    with pytest.raises(ValueError):
        bootstrap_servers(load_settings(broker_url="memory://"))


def test_plaintext_defaults() -> None:
    s = load_settings(broker_url="kafka://a:9092")
    assert aiokafka_security(s) == {"security_protocol": "PLAINTEXT"}
    assert faust_credentials(s) is None


def test_sasl_ssl_options() -> None:
    import faust

    s = load_settings(
        kafka={"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "u",
               "sasl_password": "p"},
    )  # fmt: skip
    opts = aiokafka_security(s)
    assert opts["security_protocol"] == "SASL_SSL" and opts["sasl_mechanism"] == "SCRAM-SHA-512"
    assert opts["sasl_plain_username"] == "u" and opts["sasl_plain_password"] == "p"
    assert isinstance(opts["ssl_context"], ssl.SSLContext)
    creds = faust_credentials(s)
    assert isinstance(creds, faust.SASLCredentials)
    assert creds.mechanism.value == "SCRAM-SHA-512" and creds.protocol.value == "SASL_SSL"


def test_ssl_only() -> None:
    import faust

    s = load_settings(kafka={"security_protocol": "SSL"})
    assert aiokafka_security(s)["security_protocol"] == "SSL"
    assert isinstance(faust_credentials(s), faust.SSLCredentials)


def test_resolve_topic_and_json() -> None:
    s = load_settings(topics={"dead_letter": "dlq"})
    assert resolve_topic(s, "dead-letter") == "dlq" and resolve_topic(s, "dead_letter") == "dlq"
    assert resolve_topic(s, "something-else") == "something-else"
    data = encode_json({"t": "中文", "j": np.float32(0.5), "n": np.int64(3), "s": {1}})
    assert b"\\u" not in data
    assert json.loads(data) == {"t": "中文", "j": 0.5, "n": 3, "s": [1]}


def test_topic_errors_shapes() -> None:
    from types import SimpleNamespace

    resp = SimpleNamespace(topic_errors=[("a", 0, None), ("b", 36, "exists")])
    assert topic_errors(resp) == [("a", 0, None), ("b", 36, "exists")]
