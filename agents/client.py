"""Plain Kafka clients of the command line: publish a file to the raw topic, print a topic, probe the broker.

``neardup publish`` and ``neardup tail`` (agents/commands.py) call these; tests call them in-process.
Failures to reach or use the broker raise :class:`neardup.errors.BrokerError` (one line, with what
to check).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import logging
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from neardup.agents.topics import (
    aiokafka_security,
    bootstrap_servers,
    check_broker_login,
    encode_json,
    resolve_topic,
)
from neardup.config import Settings
from neardup.errors import BrokerError
from neardup.files.records import FieldMap, Format, count_records, format_for, read_records

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------
# publish


@dataclass(frozen=True, slots=True)
class Source:
    """What ``publish`` sends: message values (None for a row the reader found malformed), each with
    its progress step, the progress total and unit, and the file to close at the end."""

    values: Iterator[tuple[bytes | None, int]]
    total: int | None
    unit: str
    handle: IO[bytes] | None = None


def _jsonl_lines(path: str) -> Source:
    """Each line's bytes unchanged; progress in bytes."""
    if path == "-":
        return Source(((line, len(line)) for line in sys.stdin.buffer), None, "B")
    f = open(path, "rb")  # noqa: SIM115  (closed by publish)
    return Source(((line, len(line)) for line in f), os.fstat(f.fileno()).st_size, "B", f)


def _records(path: str, fmt: Format, fields: FieldMap) -> Source:
    """CSV/Parquet rows (or renamed JSONL objects) as compact JSON; progress in documents."""

    def values() -> Iterator[tuple[bytes | None, int]]:
        for rec in read_records(path, fmt, fields):
            if rec.problem is not None:
                log.warning("publish: %s:%d (line, or Parquet row) not sent: %s", path, rec.position, rec.problem[1])
                yield None, 1
            elif isinstance(rec.data, bytes):
                yield rec.data, 1
            else:
                yield json.dumps(rec.data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 1

    return Source(values(), count_records(path, fmt), "doc")


def message_source(path: str, fmt: Format | None = None, fields: FieldMap | None = None) -> Source:
    """The messages of ``path`` (``-``: stdin), in ``fmt`` or the format its extension names."""
    fmt = format_for(path, fmt)
    fields = fields or FieldMap()
    if fmt is Format.JSONL and fields.identity:
        return _jsonl_lines(path)
    return _records(path, fmt, fields)


def _doc_key(line: bytes) -> bytes | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    doc_id = obj.get("id") if isinstance(obj, dict) else None
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    return doc_id.encode("utf-8") if isinstance(doc_id, str) and doc_id else None


async def broker_unreachable(settings: Settings, exc: BaseException) -> BrokerError:
    """The error for a client that could not bootstrap: a refused login if that is the cause, else unreachable.

    aiokafka reports a refused SASL login or an untrusted certificate as an unreachable broker;
    :func:`check_broker_login` raises the real cause (``BrokerLoginError``).
    """
    await check_broker_login(settings)
    servers = ",".join(bootstrap_servers(settings))
    from aiokafka.errors import KafkaConnectionError

    why = "no answer" if isinstance(exc, KafkaConnectionError | TimeoutError) else f"{type(exc).__name__}: {exc}"
    return BrokerError(f"cannot reach the Kafka broker at {servers} ({why})",
                       hint="start the broker, or point NEARDUP_BROKER_URL / --broker at it")  # fmt: skip


async def check_broker(settings: Settings, timeout: float = 10.0) -> None:
    """Raise :class:`BrokerError` unless the broker answers a metadata request within ``timeout`` seconds."""
    from aiokafka import AIOKafkaClient
    from aiokafka.errors import KafkaError

    client = AIOKafkaClient(bootstrap_servers=bootstrap_servers(settings), request_timeout_ms=int(timeout * 1000),
                            **aiokafka_security(settings))  # fmt: skip
    try:
        await asyncio.wait_for(client.bootstrap(), timeout)
    except (KafkaError, OSError, TimeoutError) as exc:
        raise await broker_unreachable(settings, exc) from exc
    finally:
        await client.close()


async def start_producer(settings: Settings, idempotent: bool = True) -> Any:
    """A started ``AIOKafkaProducer`` (acks=all), idempotent unless ``idempotent`` is False.

    Idempotence stays the default: against Apache Kafka it is what it asks for. aiokafka (0.14)
    sends only version 0 of InitProducerId, which has no producer id/epoch fields; a broker that
    serves only the newer versions (tansu, the development broker) answers UNKNOWN_SERVER_ERROR.
    Then, and only then, the producer starts again without idempotence, with a warning: a send
    retried after a lost ack may then be stored twice, which the workers answer as a replay of
    the same id (the same decision, marked ``replay``).
    """
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaConnectionError, KafkaError, UnknownError

    def make(idem: bool) -> AIOKafkaProducer:
        return AIOKafkaProducer(
            bootstrap_servers=bootstrap_servers(settings),
            acks="all",
            enable_idempotence=idem,
            linger_ms=20,
            max_batch_size=settings.kafka.producer_batch_bytes,
            max_request_size=max(1_048_576, settings.normalize.max_bytes * 2 + 65_536),
            **aiokafka_security(settings),
        )

    producer = make(idempotent)
    try:
        await producer.start()
        return producer
    except UnknownError:
        await producer.stop()
        if not idempotent:
            raise
        log.warning("the broker refused an idempotent producer (InitProducerId v0: UNKNOWN_SERVER_ERROR, as "
                    "tansu answers it): publishing without idempotence; --no-idempotence skips this attempt")
    except (KafkaConnectionError, OSError) as exc:
        await producer.stop()
        raise await broker_unreachable(settings, exc) from exc
    except KafkaError as exc:
        await producer.stop()
        raise BrokerError(f"the broker refused the producer: {exc!r}", hint="check the broker's log") from exc
    producer = make(False)
    try:
        await producer.start()
    except KafkaError as exc:
        await producer.stop()
        raise BrokerError(f"the broker refused the producer: {exc!r}", hint="check the broker's log") from exc
    return producer



def publish_file(
    settings: Settings,
    path: str | Path,
    *,
    topic: str | None = None,
    progress: bool = True,
    skip_invalid: bool = False,
    idempotent: bool = True,
    max_in_flight: int = 10_000,
    fmt: Format | None = None,
    fields: FieldMap | None = None,
) -> int:
    """Send a file (``-`` for stdin) to the raw topic, one message per document.

    JSONL lines go out unchanged, one message per non-blank line; CSV and Parquet rows (and JSONL
    objects whose id/text fields ``fields`` renames) go out as compact JSON. Messages are keyed by
    the document id. Those that are not JSON objects with an id are sent without a key (the
    workers dead-letter them), or skipped with ``skip_invalid``; rows the reader finds malformed
    (more CSV cells than the header) are not sent and are logged. Waits for every broker ack;
    returns the number of messages sent. ``idempotent=False`` skips the idempotent producer (see
    :func:`start_producer`).
    """
    name = resolve_topic(settings, topic or "raw")
    source = message_source(str(path), fmt, fields)
    return asyncio.run(_publish(settings, source, name, progress, skip_invalid, idempotent, max_in_flight))


async def _publish(
    settings: Settings,
    source: Source,
    topic: str,
    progress: bool,
    skip_invalid: bool,
    idempotent: bool,
    max_in_flight: int,
) -> int:
    from aiokafka.errors import KafkaError
    from tqdm import tqdm

    producer = await start_producer(settings, idempotent)
    sent = skipped = unkeyed = 0
    pending: set[asyncio.Future[Any]] = set()
    bar = tqdm(
        total=source.total,
        unit=source.unit,
        unit_scale=source.unit == "B",
        desc=f"publish -> {topic}",
        disable=not progress,
        file=sys.stderr,
    )
    try:
        for value, step in source.values:
            bar.update(step)
            if value is None:  # malformed row, logged by the reader
                continue
            line = value.rstrip(b"\r\n")
            if not line.strip():
                continue
            key = _doc_key(line)
            if key is None:
                if skip_invalid:
                    skipped += 1
                    continue
                unkeyed += 1
            pending.add(await producer.send(topic, line, key=key))
            sent += 1
            if len(pending) >= max_in_flight:  # bound memory on big files
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for fut in done:
                    fut.result()
        if pending:
            for res in await asyncio.gather(*pending, return_exceptions=True):
                if isinstance(res, BaseException):
                    raise res
    except KafkaError as exc:
        raise BrokerError(f"publishing to {topic} failed after {sent} messages: {exc!r}",
                          hint="check the broker's log and the topic; published messages stay") from exc  # fmt: skip
    finally:
        bar.close()
        await producer.stop()
        if source.handle is not None:
            source.handle.close()
    if skipped or unkeyed:
        log.warning(
            "publish: %d lines without a JSON id were %s",
            skipped or unkeyed,
            "skipped" if skipped else "sent without a key",
        )
    return sent


# ---------------------------------------------------------------------------------------------
# tail


def _render(msg: Any, meta: bool) -> str:
    value: Any
    if msg.value is None:
        value = None
    else:
        try:
            value = json.loads(msg.value)
        except ValueError:
            try:
                value = {"_raw": msg.value.decode("utf-8"), "_encoding": "utf-8"}
            except UnicodeDecodeError:
                value = {"_raw": base64.b64encode(msg.value).decode("ascii"), "_encoding": "base64"}
    if meta:
        key = msg.key.decode("utf-8", errors="replace") if msg.key is not None else None
        value = {
            "topic": msg.topic,
            "partition": msg.partition,
            "offset": msg.offset,
            "key": key,
            "timestamp": msg.timestamp,
            "value": value,
        }
    return encode_json(value).decode("utf-8") if isinstance(value, dict) else json.dumps(value, ensure_ascii=False)


def tail_records(
    settings: Settings,
    topic: str,
    *,
    from_beginning: bool = False,
    max_messages: int | None = None,
    timeout: float | None = None,
    meta: bool = False,
    out: IO[str] | None = None,
) -> int:
    """Print a topic's records as JSON lines; returns how many were printed.

    ``topic`` is a logical name (raw, unique, duplicate, dead-letter) or a literal topic name.
    Reads all partitions without a consumer group (commits nothing). Stops after ``max_messages``,
    or once ``timeout`` seconds pass without a new record; otherwise runs until interrupted.
    ``meta`` wraps each value with topic, partition, offset, key and timestamp. Values that are
    not JSON are printed as ``{"_raw": text-or-base64, "_encoding": ...}``.
    """
    name = resolve_topic(settings, topic)
    try:
        return asyncio.run(_tail(settings, name, from_beginning, max_messages, timeout, meta, out or sys.stdout))
    except KeyboardInterrupt:
        return 0


async def _tail(
    settings: Settings,
    topic: str,
    from_beginning: bool,
    max_messages: int | None,
    timeout: float | None,
    meta: bool,
    out: IO[str],
) -> int:
    from aiokafka import TopicPartition

    consumer = await _started_consumer(settings, from_beginning)
    printed = 0
    try:
        partitions = await _topic_partitions(consumer, topic, timeout if timeout is not None else 30.0)
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        if from_beginning:
            await consumer.seek_to_beginning(*tps)
        else:
            await consumer.seek_to_end(*tps)
        last = time.monotonic()
        while max_messages is None or printed < max_messages:
            batch = await consumer.getmany(*tps, timeout_ms=200)
            if not batch:
                if timeout is not None and time.monotonic() - last > timeout:
                    break
                continue
            last = time.monotonic()
            room = None if max_messages is None else max_messages - printed
            written, pipe_open = _write_batch(batch, meta, out, room)
            printed += written
            if not pipe_open:  # `neardup tail ... | head`
                return printed
            with contextlib.suppress(BrokenPipeError):
                out.flush()
    finally:
        await consumer.stop()
    return printed


async def _started_consumer(settings: Settings, from_beginning: bool) -> Any:
    """A started consumer without a group (it commits nothing); an unreachable broker is a :class:`BrokerError`."""
    from aiokafka import AIOKafkaConsumer
    from aiokafka.errors import KafkaConnectionError

    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers(settings),
        enable_auto_commit=False,
        auto_offset_reset="earliest" if from_beginning else "latest",
        **aiokafka_security(settings),
    )
    try:
        await consumer.start()
    except (KafkaConnectionError, OSError) as exc:
        await consumer.stop()
        raise await broker_unreachable(settings, exc) from exc
    return consumer


async def _topic_partitions(consumer: Any, topic: str, wait: float) -> set[int]:
    """The partitions of ``topic``, waiting up to ``wait`` seconds for it to appear."""
    deadline = time.monotonic() + wait
    while True:
        # no public call lists a topic's partitions without subscribing (which needs a group)
        partitions: set[int] | None = (await consumer._client.fetch_all_metadata()).partitions_for_topic(topic)
        if partitions:
            return partitions
        if time.monotonic() > deadline:
            raise BrokerError(f"topic {topic!r} not found on the broker",
                              hint="name raw, unique, duplicate, dead-letter or an existing topic")  # fmt: skip
        await asyncio.sleep(0.5)


def _write_batch(batch: dict[Any, list[Any]], meta: bool, out: IO[str], room: int | None) -> tuple[int, bool]:
    """Write up to ``room`` (None: all) records of a fetched batch; (how many, whether ``out`` is still open)."""
    written = 0
    for msg in itertools.chain.from_iterable(batch.values()):
        if room is not None and written >= room:
            break
        try:
            out.write(_render(msg, meta) + "\n")
        except BrokenPipeError:
            return written, False
        written += 1
    return written, True
