"""Topic declarations from ``settings.topics``, and the Kafka client options shared by every client.

Keys are document ids (UTF-8 bytes); values are the original bytes on ``raw`` and compact JSON
(UTF-8, not ASCII-escaped) on the outputs. Serialisation is done here, not by Faust codecs, so the
bytes on the wire do not depend on Faust's JSON settings.
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neardup.config import Settings
from neardup.errors import BrokerError

if TYPE_CHECKING:
    import faust

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Topics:
    """The four Faust topics of a worker, declared from ``settings.topics``."""
    raw: faust.TopicT
    unique: faust.TopicT
    duplicate: faust.TopicT
    dead_letter: faust.TopicT



def declare_topics(app: faust.App, settings: Settings) -> Topics:
    """Declare the raw and output topics on ``app`` with raw byte codecs (nothing is created here)."""
    t = settings.topics

    def topic(name: str) -> faust.TopicT:
        # raw codecs both ways: keys are id bytes, values are bytes we encode ourselves
        return app.topic(
            name,
            key_type=bytes,
            value_type=bytes,
            key_serializer="raw",
            value_serializer="raw",
            partitions=t.partitions,
            replicas=t.replicas,
        )

    return Topics(raw=topic(t.raw), unique=topic(t.unique), duplicate=topic(t.duplicate),
                  dead_letter=topic(t.dead_letter))  # fmt: skip


def topic_names(settings: Settings) -> dict[str, str]:
    """Logical name -> topic name (``dead-letter`` and ``dead_letter`` both map)."""
    t = settings.topics
    return {
        "raw": t.raw,
        "unique": t.unique,
        "duplicate": t.duplicate,
        "dead-letter": t.dead_letter,
        "dead_letter": t.dead_letter,
        "feedback": t.feedback,
    }


def resolve_topic(settings: Settings, name: str) -> str:
    """A logical name (raw, unique, duplicate, dead-letter) or a literal topic name."""
    return topic_names(settings).get(name, name)


def encode_json(value: Mapping[str, Any]) -> bytes:
    """Compact UTF-8 strict JSON (not ASCII-escaped; NaN or Infinity is a ValueError, never written) of an
    output record; numpy values and sets become JSON."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_json_default,
                      allow_nan=False).encode("utf-8")  # fmt: skip


def _json_default(obj: Any) -> Any:
    # numpy scalars and arrays, sets, bytes and dataclass-like objects from the engine's evidence
    if hasattr(obj, "item") and callable(obj.item):
        return obj.item()
    if hasattr(obj, "tolist") and callable(obj.tolist):
        return obj.tolist()
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    if isinstance(obj, bytes | bytearray):
        return obj.hex()
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return obj.to_dict()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def encode_key(doc_id: str | None) -> bytes | None:
    """A document id as a Kafka key (UTF-8); None stays None."""
    return doc_id.encode("utf-8") if doc_id is not None else None


# ---------------------------------------------------------------------------------------------
# connection options (Faust app, plain aiokafka clients of the CLI and admin calls)


def bootstrap_servers(settings: Settings) -> list[str]:
    """``kafka://h1:9092;h2:9092`` (also ``;kafka://h2:9092`` and commas) -> ``["h1:9092", "h2:9092"]``."""
    url = settings.broker_url
    if url.startswith("memory://"):
        raise ValueError("broker_url memory:// has no Kafka servers")
    hosts = []
    for part in url.replace(",", ";").split(";"):
        part = part.strip()
        if not part:
            continue
        if "://" in part:
            part = part.split("://", 1)[1]
        hosts.append(part.rstrip("/"))
    if not hosts:
        raise ValueError(f"broker_url {url!r} names no server")
    return hosts


def ssl_context(settings: Settings) -> ssl.SSLContext | None:
    """The TLS context of ``settings.kafka`` (None unless SSL or SASL_SSL)."""
    k = settings.kafka
    if k.security_protocol not in ("SSL", "SASL_SSL"):
        return None
    from aiokafka.helpers import create_ssl_context

    return create_ssl_context(cafile=k.ssl_cafile, certfile=k.ssl_certfile, keyfile=k.ssl_keyfile)


def aiokafka_security(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for AIOKafkaProducer / AIOKafkaConsumer / AIOKafkaAdminClient."""
    k = settings.kafka
    opts: dict[str, Any] = {"security_protocol": k.security_protocol}
    ctx = ssl_context(settings)
    if ctx is not None:
        opts["ssl_context"] = ctx
    if k.security_protocol.startswith("SASL"):
        opts["sasl_mechanism"] = k.sasl_mechanism or "PLAIN"
        opts["sasl_plain_username"] = k.sasl_username
        opts["sasl_plain_password"] = k.sasl_password.get_secret_value() if k.sasl_password else None
    return opts


class BrokerLoginError(BrokerError):
    """The broker refused the configured credentials or certificate: permanent, never retried.

    The message names the server, the user and the mechanism, never a secret.
    """

    reason = "broker_login"


async def check_broker_login(settings: Settings, timeout: float = 15.0) -> None:
    """Log in to a bootstrap server once with ``settings.kafka``'s security; raise
    :class:`BrokerLoginError` when the broker refuses the SASL login or the TLS certificate is not
    trusted. Unreachable servers are not an error here: the clients' own retries deal with those.

    aiokafka's clients turn a refused login into a generic "Unable to bootstrap" error that reads
    like an unreachable broker; this check names the real cause. Call it before a client starts,
    or when one could not bootstrap.
    """
    from aiokafka.conn import create_conn
    from aiokafka.errors import (
        IllegalSaslStateError,
        KafkaError,
        SaslAuthenticationFailed,
        UnsupportedSaslMechanismError,
    )

    k = settings.kafka
    if k.security_protocol == "PLAINTEXT":
        return
    options = aiokafka_security(settings)
    for server in bootstrap_servers(settings):
        host, _, port = server.rpartition(":")
        try:
            conn = await asyncio.wait_for(
                create_conn(host, int(port), request_timeout_ms=int(timeout * 1000), **options), timeout
            )
        except (SaslAuthenticationFailed, UnsupportedSaslMechanismError, IllegalSaslStateError) as exc:
            who = f"user {k.sasl_username!r} ({k.sasl_mechanism or 'PLAIN'})"
            raise BrokerLoginError(
                f"Kafka at {server} refused the login of {who}: {exc}",
                hint="check kafka.sasl_username, kafka.sasl_password and kafka.sasl_mechanism",
            ) from None
        except ssl.SSLCertVerificationError as exc:
            trusted = f"kafka.ssl_cafile ({k.ssl_cafile})" if k.ssl_cafile else "the system's CAs"
            raise BrokerLoginError(
                f"Kafka at {server}: TLS certificate not trusted by {trusted}: {exc.verify_message}",
                hint="set kafka.ssl_cafile to the CA that signed the broker's certificate",
            ) from None
        except (TimeoutError, OSError, KafkaError) as exc:
            log.debug("login check: %s unreachable (%s)", server, type(exc).__name__)
            continue
        conn.close()
        return


def faust_credentials(settings: Settings) -> Any:
    """``broker_credentials`` for the Faust app (None for PLAINTEXT)."""
    import faust

    k = settings.kafka
    ctx = ssl_context(settings)
    if k.security_protocol == "PLAINTEXT":
        return None
    if k.security_protocol == "SSL":
        return faust.SSLCredentials(ctx)
    return faust.SASLCredentials(
        username=k.sasl_username,
        password=k.sasl_password.get_secret_value() if k.sasl_password else None,
        mechanism=k.sasl_mechanism or "PLAIN",
        ssl_context=ctx,
    )


async def ensure_topics(settings: Settings, timeout: float = 30.0) -> list[str]:
    """Create whichever of the five topics (raw, outputs, feedback) is missing (``topics.partitions``, ``replicas``).

    Existing topics are left as they are. A cluster that forbids topic creation (ACLs) only gets a
    warning: its operators own the topics then. Returns the names created.
    """
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import KafkaError, TopicAlreadyExistsError

    t = settings.topics
    wanted = list(dict.fromkeys([t.raw, t.unique, t.duplicate, t.dead_letter, t.feedback]))
    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap_servers(settings),
        request_timeout_ms=int(timeout * 1000),
        **aiokafka_security(settings),
    )
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [n for n in wanted if n not in existing]
        if not missing:
            return []
        new = [NewTopic(n, num_partitions=t.partitions, replication_factor=t.replicas) for n in missing]
        try:
            resp = await admin.create_topics(new, timeout_ms=int(timeout * 1000))
        except KafkaError as exc:
            log.warning("could not create topics %s (%r); relying on the cluster's own", missing, exc)
            return []
        created = []
        for name, code, message in topic_errors(resp):
            if code == 0:
                created.append(name)
            elif code != TopicAlreadyExistsError.errno:  # another worker won the race otherwise
                log.warning("could not create topic %s: error %d %s", name, code, message or "")
        if created:
            log.info("created topics %s with %d partitions", created, t.partitions)
        return created
    finally:
        await admin.close()


def topic_errors(response: Any) -> list[tuple[str, int, str | None]]:
    """(topic, error code, message) from any CreateTopicsResponse version."""
    out = []
    for entry in getattr(response, "topic_errors", None) or getattr(response, "topics", None) or []:
        name, code = entry[0], int(entry[1])
        message = entry[2] if len(entry) > 2 and isinstance(entry[2], str) else None
        out.append((name, code, message))
    return out
