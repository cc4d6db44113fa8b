"""The Kafka feedback sink: reviewer feedback records to ``settings.topics.feedback``.

Key = the judged document's id (UTF-8), value = the record as compact JSON (the same object a
feedback JSONL line holds, see :mod:`neardup.learning.feedback`). ``write`` is synchronous and returns
after the broker acknowledged the record (``acks=all``), so a caller such as the review page's
HTTP threads can tell the reviewer the record is stored. The producer runs on an event loop in
a thread of its own; aiokafka is imported only when a sink is opened.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from neardup.agents.topics import aiokafka_security, bootstrap_servers, encode_json, topic_errors
from neardup.config import Settings
from neardup.learning.feedback import FeedbackRecord, FeedbackSinkError

log = logging.getLogger(__name__)
T = TypeVar("T")


class KafkaFeedbackSink:
    """Produces each record to the feedback topic and waits for the broker's acknowledgement.

    Open it with :meth:`open`; it creates the topic when missing (``topics.partitions`` and
    ``topics.replicas``, like the other topics).
    """

    def __init__(self, settings: Settings, timeout: float) -> None:
        """``timeout``: seconds a send or the topic check may take; nothing is opened here."""
        self._settings = settings
        self._topic = settings.topics.feedback
        self._timeout = timeout
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="feedback-sink", daemon=True)
        self._producer: Any = None

    @classmethod
    def open(cls, settings: Settings, timeout: float = 30.0) -> KafkaFeedbackSink:
        """Connect to ``settings.broker_url``; :class:`FeedbackSinkError` (one line) when that fails."""
        sink = cls(settings, timeout)
        sink._thread.start()
        try:
            sink._producer = sink._call(sink._start())
        except BaseException:
            sink._stop_loop()
            raise
        return sink

    def write(self, record: FeedbackRecord) -> None:
        """Produce one record; returns once the broker has it."""
        if self._producer is None:
            raise FeedbackSinkError(f"{self.describe()}: the sink is closed")
        value = encode_json(record.to_json())
        self._call(self._producer.send_and_wait(self._topic, value, key=record.key().encode("utf-8")))

    def describe(self) -> str:
        """The topic and the broker (the URL without its password)."""
        return f"topic {self._topic} on {self._settings.redacted()['broker_url']}"

    def close(self) -> None:
        """Flush and stop the producer, then the loop (idempotent)."""
        producer, self._producer = self._producer, None
        try:
            if producer is not None:
                self._call(producer.stop())
        finally:
            self._stop_loop()

    async def _start(self) -> Any:
        from aiokafka import AIOKafkaProducer

        await self._ensure_topic()
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap_servers(self._settings),
            acks="all",
            request_timeout_ms=int(self._timeout * 1000),
            **aiokafka_security(self._settings),
        )
        await producer.start()
        return producer

    async def _ensure_topic(self) -> None:
        from aiokafka.admin import AIOKafkaAdminClient, NewTopic
        from aiokafka.errors import TopicAlreadyExistsError

        t = self._settings.topics
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers(self._settings),
                                    request_timeout_ms=int(self._timeout * 1000),
                                    **aiokafka_security(self._settings))  # fmt: skip
        await admin.start()
        try:
            if self._topic in set(await admin.list_topics()):
                return
            resp = await admin.create_topics([NewTopic(self._topic, num_partitions=t.partitions,
                                                       replication_factor=t.replicas)])  # fmt: skip
            for name, code, message in topic_errors(resp):
                # another client may have created it meanwhile; other refusals (ACLs) leave the
                # topic to the cluster's operators, and the first write then says what is wrong
                if code not in (0, TopicAlreadyExistsError.errno):
                    log.warning("could not create topic %s: error %d %s", name, code, message or "")
        finally:
            await admin.close()

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        fut = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return fut.result(self._timeout)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise FeedbackSinkError(f"{self.describe()}: no answer within {self._timeout:g} s") from None
        except Exception as exc:  # aiokafka's errors, connection refused: one line for the reviewer
            text = str(exc) if str(exc).startswith(type(exc).__name__) else f"{type(exc).__name__}: {exc}"
            raise FeedbackSinkError(f"{self.describe()}: {text}") from exc

    def _stop_loop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
        self._loop.close()
