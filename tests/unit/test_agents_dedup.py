"""The agent's window logic without Kafka: decode, poison isolation, transient retries, delivery."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from typing import Any

import pytest

from neardup.agents.dedup import BatchProcessor, Deliverer, InMessage, OutRecord, raw_field
from neardup.config import Settings, load_settings
from neardup.document import Document, InvalidDocument
from neardup.errors import (
    StoreAuthError,
    StoreCorruptError,
    StoreError,
    StoreUnavailableError,
    is_transient,
)
from neardup.retry import Backoff

# the Kafka client's own errors (the kafka extra): what the producer raises, as the worker sees it
kafka_errors = pytest.importorskip("aiokafka.errors",
                                   reason="the kafka extra is not installed (pip install 'neardup[kafka]')")
KafkaTimeoutError = kafka_errors.KafkaTimeoutError
MessageSizeTooLargeError = kafka_errors.MessageSizeTooLargeError


class FakeDecision:
    def __init__(self, doc: Document, status: str, duplicate_of: str | None) -> None:
        self.doc, self.status, self.duplicate_of = doc, status, duplicate_of

    def to_record(self) -> dict[str, Any]:
        return {**self.doc.raw, "status": self.status, "duplicate_of": self.duplicate_of, "evidence": {}}


class FakeEngine:
    """Texts seen before are duplicates; ``poison`` in a text raises, ``corrupt`` in a text meets a
    stored record that cannot be decoded; the first ``fail_times`` calls raise ``failure``."""

    def __init__(self, fail_times: int = 0, failure: Exception | None = None) -> None:
        self.seen: dict[str, str] = {}
        self.calls: list[list[str]] = []
        self.fail_times = fail_times
        self.failure = failure or StoreError("store down")

    async def decide(self, docs: list[Document]) -> list[FakeDecision]:
        self.calls.append([d.id for d in docs])
        if self.fail_times > 0:
            self.fail_times -= 1
            raise self.failure
        if any("poison" in d.text for d in docs):
            raise ValueError("cannot fingerprint this")
        if any("corrupt" in d.text for d in docs):
            raise StoreCorruptError("stored record is corrupt: ValueError")
        out = []
        for d in docs:
            first = self.seen.setdefault(d.text, d.id)
            out.append(FakeDecision(d, "unique" if first == d.id else "duplicate", None if first == d.id else first))
        return out

    async def check(self, doc: Document) -> FakeDecision:
        raise NotImplementedError


NO_WAIT = Backoff(0.0, 0.0)


def msg(value: bytes | None, offset: int, key: bytes | None = None) -> InMessage:
    return InMessage(value=value, key=key, topic="raw", partition=offset % 2, offset=offset)


def doc(i: str, text: str) -> bytes:
    return json.dumps({"id": i, "text": text}).encode()


@pytest.fixture
def settings() -> Settings:
    return load_settings(store_url="memory://", worker_id="unit")


async def test_one_output_per_input_in_order(settings: Settings) -> None:
    engine = FakeEngine()
    proc = BatchProcessor(engine, settings, backoff=NO_WAIT)
    msgs = [
        msg(doc("a", "hello world"), 0),
        msg(b"not json", 1),
        msg(doc("b", "hello world"), 2),
        msg(b'{"text": "x"}', 3),
        msg(b"\xff\xfe", 4),
        msg(None, 5),
    ]
    outs = await proc.process(msgs)
    assert [o.output for o in outs] == ["unique", "dead_letter", "duplicate", "dead_letter", "dead_letter",
                                        "dead_letter"]  # fmt: skip
    assert [o.source.offset for o in outs] == list(range(6))
    assert outs[0].key == b"a" and outs[2].key == b"b"
    assert json.loads(outs[2].value)["duplicate_of"] == "a"
    reasons = [json.loads(o.value)["reason"] for o in outs if o.output == "dead_letter"]
    assert reasons == ["bad_json", "missing_id", "bad_encoding", "empty_message"]
    bad = json.loads(outs[4].value)
    assert bad["raw_encoding"] == "base64" and bad["offset"] == 4 and bad["partition"] == 0
    assert engine.calls == [["a", "b"]]


async def test_poison_document_is_isolated(settings: Settings) -> None:
    engine = FakeEngine()
    proc = BatchProcessor(engine, settings, backoff=NO_WAIT)
    msgs = [msg(doc("a", "one"), 0), msg(doc("p", "poison pill"), 1), msg(doc("c", "three"), 2)]
    outs = await proc.process(msgs)
    assert [o.output for o in outs] == ["unique", "dead_letter", "unique"]
    dl = json.loads(outs[1].value)
    assert dl["reason"] == "engine_error" and "cannot fingerprint this" in dl["error"] and dl["id"] == "p"
    assert engine.calls == [["a", "p", "c"], ["a"], ["p"], ["c"]]


async def test_transient_store_errors_are_retried_not_dead_lettered(settings: Settings) -> None:
    engine = FakeEngine(fail_times=3)
    states: list[str | None] = []
    proc = BatchProcessor(engine, settings, backoff=NO_WAIT, on_degraded=states.append)
    outs = await proc.process([msg(doc("a", "one"), 0), msg(doc("b", "two"), 1)])
    assert [o.output for o in outs] == ["unique", "unique"]
    assert len(engine.calls) == 4
    assert states[:3] == ["StoreError: store down"] * 3 and states[-1] is None


async def test_delivery_waits_for_acks_and_reroutes_oversized(settings: Settings) -> None:
    proc = BatchProcessor(FakeEngine(), settings, backoff=NO_WAIT)
    outs = await proc.process([msg(doc("a", "one"), 0), msg(doc("big", "two"), 1), msg(doc("c", "three"), 2)])
    sent: list[OutRecord] = []
    attempts: dict[bytes | None, int] = {}

    async def send(out: OutRecord) -> Awaitable[Any]:
        attempts[out.key] = attempts.get(out.key, 0) + 1
        if out.key == b"big" and out.output == "unique":
            raise MessageSizeTooLargeError()
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if out.key == b"c" and attempts[out.key] == 1:
            fut.set_exception(KafkaTimeoutError())
        else:
            sent.append(out)
            fut.set_result(None)
        return fut

    await Deliverer(send, proc, backoff=NO_WAIT).deliver(outs)
    assert [(o.output, o.key) for o in sent] == [("unique", b"a"), ("dead_letter", b"big"), ("unique", b"c")]
    assert json.loads(sent[1].value)["reason"] == "output_too_large"
    assert attempts[b"c"] == 2


def test_raw_field() -> None:
    assert raw_field(b"abc") == ("abc", "utf-8", False)
    assert raw_field(None) == (None, "none", False)
    assert raw_field(b"\xff") == ("/w==", "base64", False)
    text, enc, cut = raw_field("é".encode() * 10, limit=5)  # cut inside a character
    assert enc == "utf-8" and cut and text == "éé"


def test_is_transient_is_a_check_on_the_class() -> None:
    assert is_transient(StoreUnavailableError("cluster down"))
    assert is_transient(StoreError("cause unknown"))  # a bare StoreError: retried, as before the split
    assert not is_transient(StoreCorruptError("undecodable record"))
    assert not is_transient(StoreAuthError("WRONGPASS"))
    assert not is_transient(InvalidDocument("bad_json", "x"))
    assert is_transient(ConnectionResetError()) and is_transient(TimeoutError())
    assert not is_transient(ValueError("x")) and not is_transient(KeyError("x"))
    assert not is_transient(FileNotFoundError("x"))


async def test_store_unavailable_is_retried_until_the_store_is_back(settings: Settings) -> None:
    engine = FakeEngine(fail_times=5, failure=StoreUnavailableError("redis://r:1: ConnectionError"))
    states: list[str | None] = []
    proc = BatchProcessor(engine, settings, backoff=NO_WAIT, on_degraded=states.append)
    outs = await proc.process([msg(doc("a", "one"), 0), msg(doc("b", "two"), 1)])
    assert [o.output for o in outs] == ["unique", "unique"]  # nothing dead-lettered
    assert engine.calls == [["a", "b"]] * 6  # the same window, five failures then success
    assert states[:5] == ["StoreUnavailableError: redis://r:1: ConnectionError"] * 5 and states[-1] is None


async def test_store_corrupt_is_not_retried_and_goes_to_dead_letter(settings: Settings) -> None:
    engine = FakeEngine()
    proc = BatchProcessor(engine, settings, backoff=NO_WAIT)
    outs = await proc.process([msg(doc("a", "one"), 0), msg(doc("c", "corrupt twin"), 1), msg(doc("b", "two"), 2)])
    assert [o.output for o in outs] == ["unique", "dead_letter", "unique"]
    dl = json.loads(outs[1].value)
    assert dl["reason"] == "store_corrupt" and dl["id"] == "c" and "StoreCorruptError" in dl["error"]
    # the window once, then each document once: the corrupt one is never retried
    assert engine.calls == [["a", "c", "b"], ["a"], ["c"], ["b"]]


async def test_store_auth_error_fails_the_window_instead_of_dead_lettering(settings: Settings) -> None:
    engine = FakeEngine(fail_times=10, failure=StoreAuthError("WRONGPASS invalid username-password pair"))
    proc = BatchProcessor(engine, settings, backoff=NO_WAIT)
    with pytest.raises(StoreAuthError):
        await proc.process([msg(doc("a", "one"), 0), msg(doc("b", "two"), 1)])
    assert engine.calls == [["a", "b"]]  # not retried, not split into documents to dead-letter
