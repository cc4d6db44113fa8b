"""The dedup agent: raw -> engine -> unique | duplicate | dead-letter, at least once.

Per window (``settings.window.max_count`` messages or ``max_age_seconds``, whichever comes first):

1. decode every message with ``parse_document``; bad input becomes a dead-letter record;
2. ``engine.decide(docs)`` stores fingerprints and decisions (idempotent per id). A transient
   store error is retried with backoff, forever: skipping would lose documents. Any other error
   is taken as a poison document: the window is retried one document at a time and the ones that
   still fail go to the dead-letter topic with the exception text;
3. every output is produced and its broker ack awaited;
4. only then are the window's events acked, so Faust's commit can only cover offsets whose
   outputs were produced and whose fingerprints are stored.

Events are taken with ``noack_take``: Faust's ``take`` acks a window's events when the agent body
leaves it, also when it leaves by an exception or a cancellation (worker shutdown), which would let
the next commit skip documents that were never emitted.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from neardup.agents.topics import encode_json, encode_key
from neardup.config import Settings
from neardup.errors import NeardupError, StoreAuthError, StoreLostDataError
from neardup.retry import Backoff, retry

if TYPE_CHECKING:
    import faust
    from faust.types import EventT

    from neardup.agents.app import Runtime
    from neardup.document import Document
    from neardup.metrics import AgentMetrics

log = logging.getLogger(__name__)
# no document's fault: the store refused us, or lost its data; the whole window fails and waits
STORE_WIDE = (StoreAuthError, StoreLostDataError)
T = TypeVar("T")

RAW_PREVIEW_BYTES = 64 * 1024  # dead-letter copies of oversized messages are cut to this


class EngineLike(Protocol):
    """What the agent needs of the engine (``neardup.engine.Engine``; unit tests pass fakes)."""

    async def decide(self, docs: list[Document]) -> list[Any]:
        """Decide and store ``docs``; one decision per document, in order."""
        ...

    async def check(self, doc: Document) -> Any:
        """The decision ``doc`` would get; nothing stored."""
        ...


@dataclass(frozen=True, slots=True)
class InMessage:
    """One raw Kafka record, as much as the agent needs of it."""

    value: bytes | None
    key: bytes | None
    topic: str
    partition: int
    offset: int
    timestamp: float | None = None  # the record's Kafka timestamp, epoch seconds
    taken_at: float | None = None  # time.monotonic() when this worker's consumer took it

    @classmethod
    def from_event(cls, event: EventT) -> InMessage:
        """The message of a Faust event: its value as bytes (the raw codec), key, place and times."""
        m = event.message
        value = event.value if isinstance(event.value, bytes | type(None)) else m.value
        # Faust's monitor stamps time_in (time.monotonic) when the consumer hands the message over
        taken = m.time_in if m.time_in is not None else time.monotonic()
        return cls(value=value, key=m.key, topic=m.topic, partition=m.partition, offset=m.offset,
                   timestamp=kafka_seconds(m.timestamp), taken_at=taken)  # fmt: skip


def kafka_seconds(timestamp: float | None) -> float | None:
    """A Kafka record timestamp in epoch seconds (the protocol carries milliseconds); None if unset."""
    if timestamp is None or timestamp <= 0:
        return None
    return timestamp / 1000.0 if timestamp > 1e11 else float(timestamp)


class Output(StrEnum):
    """Where an output record goes: the unique, duplicate or dead-letter topic (``settings.topics``;
    the dead-letter topic's default name is ``dead-letter``). The values are the ``output`` label of
    ``neardup_agent_outputs_total`` (:data:`neardup.metrics.OUTPUTS`)."""

    UNIQUE = "unique"
    DUPLICATE = "duplicate"
    DEAD_LETTER = "dead_letter"


@dataclass(frozen=True, slots=True)
class OutRecord:
    """One output of a window: the topic it goes to (``output``), key and value, and its source message."""
    output: Output
    key: bytes | None
    value: bytes
    source: InMessage
    # dead-letter records only: why and of whom, to rebuild the record with a shorter raw copy
    reason: str = ""
    error: str = ""
    doc_id: str | None = None
    raw_cut: bool = False


def decode_document(value: bytes | str | None, settings: Settings) -> Document:
    """Validate one raw message into a Document; raises ``InvalidDocument`` with its reason."""
    from neardup.document import InvalidDocument, parse_document
    from neardup.media.hashes import limits_of

    if value is None:
        raise InvalidDocument("empty_message", "the message has no value (tombstone)")
    n = settings.normalize
    doc = parse_document(value, max_bytes=n.max_bytes, max_id_length=n.max_id_length,
                         naive_time_zone=n.naive_time_zone, image_limits=limits_of(settings.images))  # fmt: skip
    # JSON may escape an unpaired UTF-16 surrogate (\ud800) into any string; parse_document checks
    # only the text. Anywhere else (id, title, extra fields) it would reach the store and then make
    # the output record unencodable, failing the whole window again and again.
    if isinstance(value, str) or _SURROGATE_ESCAPE.search(value):
        try:
            json.dumps(doc.raw, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidDocument("bad_encoding", "a string holds an unpaired UTF-16 surrogate") from exc
    return doc


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def is_permanent_produce_error(exc: BaseException) -> bool:
    """Produce errors a retry cannot fix (the record is too large): such records are rerouted, not re-sent."""
    from aiokafka.errors import MessageSizeTooLargeError, RecordListTooLargeError, RecordTooLargeError

    return isinstance(exc, MessageSizeTooLargeError | RecordTooLargeError | RecordListTooLargeError)


def raw_field(value: bytes | None, limit: int = RAW_PREVIEW_BYTES) -> tuple[str | None, str, bool]:
    """(text, encoding, truncated): UTF-8 text where the bytes are valid UTF-8, else base64."""
    if value is None:
        return None, "none", False
    truncated = len(value) > limit
    data = value[:limit] if truncated else value
    # a cut may split a character: drop up to 3 trailing bytes before calling it binary
    for trim in range(4 if truncated else 1):
        try:
            return data[: len(data) - trim].decode("utf-8"), "utf-8", truncated
        except UnicodeDecodeError:
            continue
    return base64.b64encode(data).decode("ascii"), "base64", truncated


class BatchProcessor:
    """Decode, decide and build the output records of one window. Kafka-free, so unit-testable."""

    def __init__(
        self,
        engine: EngineLike,
        settings: Settings,
        metrics: AgentMetrics | None = None,
        *,
        on_degraded: Callable[[str | None], None] | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        """``backoff`` (default: from ``settings.retry``) paces the retries of a transient store outage."""
        self.engine = engine
        self.settings = settings
        self.metrics = metrics
        # neardup.metrics.Metrics: dead letters and rejected input are counted there
        self.engine_metrics: Any = getattr(engine, "metrics", None)
        self.on_degraded = on_degraded or (lambda reason: None)
        # a transient store outage is retried forever: skipping would lose documents
        self.backoff = backoff or Backoff.from_settings(settings.retry)

    def dead_letter(
        self, msg: InMessage, reason: str, error: str, doc_id: str | None = None, *, cut: bool = False
    ) -> OutRecord:
        """The dead-letter record of ``msg``: reason, error, the original bytes and where they came from.

        ``cut`` keeps only a preview of the original, for a record that was too large to produce whole.
        """
        # the whole original by default; a preview when the whole one cannot be produced
        limit = RAW_PREVIEW_BYTES if cut else self.settings.normalize.max_bytes * 2 + 4096
        raw, encoding, truncated = raw_field(msg.value, limit)
        record = {
            "reason": reason,
            "error": error,
            "raw": raw,
            "raw_encoding": encoding,
            "raw_truncated": truncated,
            "raw_bytes": len(msg.value) if msg.value is not None else 0,
            "id": doc_id,
            "topic": msg.topic,
            "partition": msg.partition,
            "offset": msg.offset,
            "key": raw_field(msg.key, 1024)[0] if msg.key is not None else None,
            "worker_id": self.settings.worker_id,
            "at": time.time(),
        }
        key = msg.key if msg.key is not None else encode_key(doc_id)
        if self.engine_metrics is not None and not cut:
            self.engine_metrics.dead_letters.labels(reason).inc()
        if not cut:
            log.info("dead-letter %s:%d@%d reason=%s %s", msg.topic, msg.partition, msg.offset, reason, error[:200])
        return OutRecord(Output.DEAD_LETTER, key, encode_json(record), msg, reason, error, doc_id, cut)

    def decision_record(self, msg: InMessage, doc: Document, decision: Any) -> OutRecord:
        """The unique/duplicate record of a decided document; a decision that cannot be encoded is dead-lettered."""
        from neardup.decision import Status

        try:
            record = decision.to_record()
            output = Output.UNIQUE if Status(record["status"]) is Status.UNIQUE else Output.DUPLICATE
            value = encode_json(record)
        except Exception as exc:  # an engine bug must not stop the partition
            return self.dead_letter(msg, "engine_error", f"bad decision: {type(exc).__name__}: {exc}", doc.id)
        return OutRecord(output, encode_key(doc.id), value, msg)

    async def process(self, msgs: Sequence[InMessage]) -> list[OutRecord]:
        """One output per input, in input order."""
        # validation decodes and hashes the documents' images (milliseconds each): in a thread, so
        # that a window of photographs never holds up the broker's heartbeats or the web views
        outs, docs, where = await asyncio.to_thread(self.decode_all, msgs)
        if docs:
            results = await self.decide(docs)
            for i, doc, result in zip(where, docs, results, strict=True):
                if isinstance(result, BaseException):
                    # neardup's own errors name their reason (bad input, store_corrupt); the rest are bugs
                    reason = result.reason if isinstance(result, NeardupError) else "engine_error"
                    outs[i] = self.dead_letter(msgs[i], reason, f"{type(result).__name__}: {result}", doc.id)
                else:
                    outs[i] = self.decision_record(msgs[i], doc, result)
        return [o for o in outs if o is not None]

    def decode_all(self, msgs: Sequence[InMessage]) -> tuple[list[OutRecord | None], list[Document], list[int]]:
        """Each message validated: (in place of each one that is not a document, its dead-letter
        record; the documents; the place of each document among ``msgs``)."""
        from neardup.document import InvalidDocument

        outs: list[OutRecord | None] = [None] * len(msgs)
        docs: list[Document] = []
        where: list[int] = []
        for i, msg in enumerate(msgs):
            try:
                doc = decode_document(msg.value, self.settings)
            except InvalidDocument as exc:
                if self.engine_metrics is not None:
                    self.engine_metrics.rejected.labels(exc.reason).inc()
                outs[i] = self.dead_letter(msg, exc.reason, str(exc))
            except Exception as exc:  # a parser bug is still this message's problem only
                outs[i] = self.dead_letter(msg, "decode_error", f"{type(exc).__name__}: {exc}")
            else:
                docs.append(doc)
                where.append(i)
        return outs, docs, where

    async def decide(self, docs: list[Document]) -> list[Any]:
        """Decisions in input order; an exception object in place of each poison document.

        A transient store error is retried (forever); a refused login (``StoreAuthError``) or a
        store that lost its data (``StoreLostDataError``) is no document's fault and fails the
        whole window; any other error is taken as a poison
        document: the window is retried one document at a time.
        """
        try:
            decisions = await self.retry_transient(lambda: self.engine.decide(docs))
            if len(decisions) != len(docs):
                raise RuntimeError(f"engine returned {len(decisions)} decisions for {len(docs)} documents")
            return list(decisions)
        except STORE_WIDE:
            raise
        except Exception as exc:
            if self.metrics is not None:
                self.metrics.poison_batches.inc()
            if len(docs) > 1:
                log.warning("window of %d failed (%s: %s); retrying one by one", len(docs), type(exc).__name__, exc)
            else:
                return [exc]
        results: list[Any] = []
        for doc in docs:
            try:
                one = await self.retry_transient(lambda d=doc: self.engine.decide([d]))  # type: ignore[misc]
                if len(one) != 1:
                    raise RuntimeError(f"engine returned {len(one)} decisions for 1 document")
                results.append(one[0])
            except STORE_WIDE:
                raise
            except Exception as exc:
                log.warning("document %r rejected by the engine: %s: %s", doc.id, type(exc).__name__, exc)
                results.append(exc)
        return results

    async def retry_transient(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``, retried while it fails with a transient (store) error; /ready says so meanwhile."""

        def degraded(exc: Exception, delay: float) -> None:
            reason = f"{type(exc).__name__}: {exc}"
            self.on_degraded(reason)
            if self.metrics is not None:
                self.metrics.engine_retries.inc()
            log.warning("store unavailable (%s); retrying in %.1fs", reason, delay)

        result = await retry(call, self.backoff, on_retry=degraded)
        self.on_degraded(None)
        return result


SendFn = Callable[[OutRecord], Awaitable[Awaitable[Any]]]


class Deliverer:
    """Produce output records and wait for every broker ack; retry until each is delivered."""

    def __init__(
        self,
        send: SendFn,
        processor: BatchProcessor,
        metrics: AgentMetrics | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        """``send`` enqueues one record and returns its delivery future; ``backoff`` defaults to the processor's."""
        self.send = send
        self.processor = processor
        self.metrics = metrics
        self.backoff = backoff or processor.backoff

    async def deliver(self, outs: Sequence[OutRecord]) -> None:
        """Send every record, then re-send the unacknowledged ones with backoff until none is left."""
        pending = list(outs)
        delays = self.backoff.delays()
        while pending:
            # enqueue in order (one producer keeps per-partition order), then wait for all acks
            futures: list[Awaitable[Any] | BaseException] = []
            for out in pending:
                try:
                    futures.append(await self.send(out))
                except Exception as exc:  # e.g. too large: raised before anything is sent
                    futures.append(exc)
            results = await asyncio.gather(*(_await_or_raise(f) for f in futures), return_exceptions=True)
            again: list[OutRecord] = []
            for out, res in zip(pending, results, strict=True):
                if isinstance(res, asyncio.CancelledError):
                    raise res
                if not isinstance(res, BaseException):
                    if self.metrics is not None:
                        self.metrics.outputs.labels(output=out.output).inc()
                    continue
                if not is_permanent_produce_error(res):
                    again.append(out)
                elif out.output is not Output.DEAD_LETTER:
                    # the decision is stored, but its record cannot be carried: say so on dead-letter
                    error = f"{out.output} record of {len(out.value)} bytes: {res!r}"
                    again.append(self.processor.dead_letter(out.source, "output_too_large", error, _doc_id(out)))
                elif not out.raw_cut:
                    again.append(self.processor.dead_letter(out.source, out.reason, out.error, out.doc_id, cut=True))
                else:
                    log.error("dropping dead-letter record of %s:%d@%d: %r even with a cut raw copy",
                              out.source.topic, out.source.partition, out.source.offset, res)  # fmt: skip
            if again:
                if self.metrics is not None:
                    self.metrics.produce_retries.inc(len(again))
                delay = next(delays)
                log.warning("%d output records not acknowledged; re-sending in %.1fs", len(again), delay)
                await asyncio.sleep(delay)
            pending = again


def _doc_id(out: OutRecord) -> str | None:
    return out.key.decode("utf-8", errors="replace") if out.key is not None else None


async def _await_or_raise(f: Awaitable[Any] | BaseException) -> Any:
    if isinstance(f, BaseException):
        raise f
    return await f


def faust_sender(runtime: Runtime) -> SendFn:
    """The :data:`SendFn` of a worker: each output goes to its Faust topic; the future resolves on the broker ack."""
    topics = runtime.topics
    assert topics is not None
    by_output: dict[Output, faust.TopicT] = {
        Output.UNIQUE: topics.unique,
        Output.DUPLICATE: topics.duplicate,
        Output.DEAD_LETTER: topics.dead_letter,
    }

    async def send(out: OutRecord) -> Awaitable[Any]:
        # Topic.send returns the delivery future of the producer; awaiting it waits for the broker ack
        # (attachments are off: stream_publish_on_commit is False)
        return await by_output[out.output].send(key=out.key, value=out.value, force=True)

    return send


def attach_dedup_agent(app: faust.App, runtime: Runtime) -> Any:
    """Register the dedup agent on ``app``: windows of raw messages decided, delivered, then acked."""
    settings = runtime.settings
    topics = runtime.topics
    assert topics is not None
    window = settings.window

    async def dedup(stream: Any) -> None:
        # the engine is opened by NeardupApp.on_start, before the consumer; this only guards restarts
        await runtime.engine_open.wait()
        processor = BatchProcessor(runtime.engine, settings, runtime.metrics, on_degraded=runtime.set_degraded)
        deliverer = Deliverer(faust_sender(runtime), processor, runtime.metrics)
        events: list[EventT]
        async for events in stream.noack_take(window.max_count, within=window.max_age_seconds):
            started = time.perf_counter()
            msgs = [InMessage.from_event(e) for e in events]
            offsets = [(m.partition, m.offset) for m in msgs]
            runtime.window_taken(offsets)
            runtime.set_lag(runtime.cached_log_ends(app.consumer))
            runtime.metrics.messages_in.inc(len(msgs))
            runtime.metrics.batch_size.observe(len(msgs))
            if processor.engine_metrics is not None:
                reason = "count" if len(msgs) >= window.max_count else "age"
                processor.engine_metrics.window_closed.labels(reason).inc()
            try:
                outs = await runtime.run_window(decide_window(runtime, processor, deliverer, msgs))
                if outs is None:
                    # the worker is stopping: the window is abandoned unacked, so no commit covers it
                    log.info("stopping: %d undecided messages left for the next worker", len(msgs))
                    return
                # every output of the window is acknowledged: now its offsets may be committed
                for event in events:
                    await stream.ack(event)
            finally:
                runtime.window_left()
            runtime.window_decided(offsets)
            observe_latency(runtime.metrics, outs)
            runtime.set_lag(runtime.cached_log_ends(app.consumer))
            runtime.metrics.batch_seconds.observe(time.perf_counter() - started)

    return app.agent(topics.raw, name="neardup.dedup", concurrency=1)(dedup)


async def decide_window(
    runtime: Runtime, processor: BatchProcessor, deliverer: Deliverer, msgs: Sequence[InMessage]
) -> list[OutRecord]:
    """Decide and deliver one window, retrying until every output is acknowledged.

    A failure here is no document's fault (a bug of ours, or the store refusing our credentials):
    the window is never acked and the agent never dies (Faust would keep the worker up with
    nothing consuming); it is retried, logged each time, and /ready says so meanwhile.
    """

    async def attempt() -> list[OutRecord]:
        outs = await processor.process(msgs)
        await deliverer.deliver(outs)
        return outs

    def failed(exc: Exception, delay: float) -> None:
        if isinstance(exc, NeardupError):  # known cause (StoreAuthError): its one line says what to do
            log.error("window of %d messages failed: %s; retrying in %.0fs", len(msgs), exc.one_line(), delay)
            runtime.set_degraded(exc.one_line())
        else:
            log.error("window of %d messages failed; retrying in %.0fs", len(msgs), delay, exc_info=exc)
            runtime.set_degraded("agent error: see the worker log")

    outs = await retry(attempt, processor.backoff, retryable=lambda exc: True, on_retry=failed)
    runtime.set_degraded(None)
    return outs


def observe_latency(metrics: AgentMetrics, outs: Sequence[OutRecord]) -> None:
    """Decision latency from the take, publish-to-decision from the Kafka timestamp, per decision."""
    mono, wall = time.monotonic(), time.time()
    for out in outs:
        if out.output is Output.DEAD_LETTER:
            continue
        if out.source.taken_at is not None:
            metrics.decision_latency.observe(max(0.0, mono - out.source.taken_at))
        if out.source.timestamp is not None:
            metrics.publish_to_decision.observe(max(0.0, wall - out.source.timestamp))
