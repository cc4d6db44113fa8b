"""The library's front door: :class:`Deduplicator` (synchronous) and :class:`AsyncDeduplicator`
(for async code: Jupyter, an async web service), the same engine as ``neardup dedup`` and the workers.

    from neardup import Deduplicator, Status
    with Deduplicator() as dedup:                 # embedded memory store, default settings
        d = dedup.decide({"id": "a", "text": "..."})
        d.status is Status.DUPLICATE; d.duplicate_of; d.evidence.jaccard; d.evidence.hamming
        decisions = dedup.decide_many(docs)       # a list, a window at a time: the decisions of `neardup dedup`
    Deduplicator(store="rediscluster://host:7000", settings=Settings(...))

    from neardup import AsyncDeduplicator
    async with AsyncDeduplicator() as dedup:      # inside a running event loop
        d = await dedup.decide({"id": "a", "text": "..."})
        decisions = await dedup.decide_many(docs)

:class:`Deduplicator` runs the engine on a private event loop; called from a thread that is already
running an event loop (a Jupyter cell, a coroutine), it raises :class:`EventLoopRunningError`,
which names :class:`AsyncDeduplicator`: blocking that loop would stall everything else on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Coroutine, Iterable, Mapping
from typing import Any, TypeVar

from neardup.config import Settings, load_settings
from neardup.decision import Decision
from neardup.document import Document, parse_document
from neardup.errors import InputError, NeardupError
from neardup.media.hashes import limits_of

DocumentLike = Document | Mapping[str, Any] | str | bytes
T = TypeVar("T")


class EventLoopRunningError(NeardupError, RuntimeError):
    """The synchronous :class:`Deduplicator` was called inside a running event loop."""

    reason = "event_loop_running"
    default_hint = ("in async code (Jupyter, an async service) use neardup.AsyncDeduplicator: "
                    "async with AsyncDeduplicator() as dedup: await dedup.decide(doc)")  # fmt: skip


def _refuse_a_running_loop() -> None:
    """Raise :class:`EventLoopRunningError` when this thread is running an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise EventLoopRunningError("neardup.Deduplicator is synchronous and this thread is running an "
                                "event loop (Jupyter, async code), which it would block")  # fmt: skip


class AsyncDeduplicator:
    """Decides documents from async code: unique, or duplicate of which earlier one, and why.

    ``store``: a store URL (``memory://`` by default, ``file://PATH``, ``redis://``,
    ``rediscluster://``); ``settings``: a :class:`Settings` (default: from the environment).
    Documents are dicts (or JSON text) with ``id`` and ``text``, or :class:`Document` objects; an
    invalid one raises :class:`neardup.errors.InputError` (``InvalidDocument``) with its reason.
    One instance serves one event loop; its calls are not meant to run concurrently.
    """

    def __init__(self, store: str | None = None, settings: Settings | None = None) -> None:
        """Nothing is opened until the first decision (or :meth:`open`)."""
        base = settings if settings is not None else load_settings()
        self.settings = base.model_copy(update={"store_url": store}) if store else base
        self._engine: Any = None

    async def open(self) -> AsyncDeduplicator:
        """Open the store and build the engine (the first decision does it otherwise)."""
        if self._engine is None:
            from neardup.engine import Engine

            self._engine = await Engine.open(self.settings)
        return self

    async def close(self) -> None:
        """Close the store (a file store is written out); a later call opens it again."""
        engine, self._engine = self._engine, None
        if engine is not None:
            await engine.close()

    async def __aenter__(self) -> AsyncDeduplicator:
        """Open; :meth:`close` on leaving the block."""
        return await self.open()

    async def __aexit__(self, *_: object) -> None:
        """Close the store."""
        await self.close()

    def _document(self, doc: DocumentLike) -> Document:
        if isinstance(doc, Document):
            return doc
        n = self.settings.normalize
        return parse_document(doc, max_bytes=n.max_bytes, max_id_length=n.max_id_length,
                              image_limits=limits_of(self.settings.images))

    async def decide(self, doc: DocumentLike) -> Decision:
        """Decide one document (and store it: a later document is checked against it)."""
        return (await self.decide_window([doc]))[0]

    async def decide_window(self, docs: Iterable[DocumentLike]) -> list[Decision]:
        """Decide documents together, as one window; decisions in input order."""
        await self.open()
        batch = [self._document(d) for d in docs]
        return list(await self._engine.decide(batch))

    async def decide_many(self, docs: Iterable[DocumentLike] | AsyncIterable[DocumentLike]) -> list[Decision]:
        """Decide a stream of documents (an iterable or an async iterable) a window
        (``settings.window.max_count``) at a time, the next windows fingerprinted while one is
        decided (:class:`neardup.engine.WindowPipeline`); every decision, in input order."""
        from neardup.engine import WindowPipeline

        await self.open()
        pipeline = WindowPipeline(self._engine)
        out: list[Decision] = []
        window: list[Document] = []
        size = self.settings.window.max_count

        async def add(doc: DocumentLike) -> None:
            window.append(self._document(doc))
            if len(window) >= size:
                for decided in await pipeline.add(window):
                    out.extend(decided)
                window.clear()

        try:
            if isinstance(docs, AsyncIterable):
                async for doc in docs:
                    await add(doc)
            else:
                for doc in docs:
                    await add(doc)
        except InputError:
            await pipeline.drain()  # the windows before the invalid document are decided and stored
            raise
        for decided in await pipeline.add(window) + await pipeline.drain():
            out.extend(decided)
        return out

    async def check(self, doc: DocumentLike) -> Decision:
        """The decision ``doc`` would get now; nothing is stored."""
        await self.open()
        decision: Decision = await self._engine.check(self._document(doc))
        return decision


class Deduplicator:
    """Decides documents, synchronously: unique, or duplicate of which earlier one, and why.

    The same arguments and methods as :class:`AsyncDeduplicator`, without ``await``; the engine
    runs on a private event loop. Calling it inside a running event loop raises
    :class:`EventLoopRunningError` (use :class:`AsyncDeduplicator` there).
    """

    def __init__(self, store: str | None = None, settings: Settings | None = None) -> None:
        """Nothing is opened until the first decision (or :meth:`open`)."""
        self._async = AsyncDeduplicator(store, settings)
        self.settings = self._async.settings
        self._loop: asyncio.AbstractEventLoop | None = None

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        try:
            _refuse_a_running_loop()
        except EventLoopRunningError:
            call.close()  # never awaited: closed, so that no "never awaited" warning follows
            raise
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(call)

    def open(self) -> Deduplicator:
        """Open the store and build the engine (the first decision does it otherwise)."""
        self._run(self._async.open())
        return self

    def close(self) -> None:
        """Close the store (a file store is written out) and the private event loop."""
        if self._loop is None or self._loop.is_closed():
            return
        _refuse_a_running_loop()
        try:
            self._loop.run_until_complete(self._async.close())
        finally:
            self._loop.close()

    def __enter__(self) -> Deduplicator:
        """Open; :meth:`close` on leaving the block."""
        return self.open()

    def __exit__(self, *_: object) -> None:
        """Close the store and the loop."""
        self.close()

    def decide(self, doc: DocumentLike) -> Decision:
        """Decide one document (and store it: a later document is checked against it)."""
        return self._run(self._async.decide(doc))

    def decide_window(self, docs: Iterable[DocumentLike]) -> list[Decision]:
        """Decide documents together, as one window; decisions in input order."""
        return self._run(self._async.decide_window(docs))

    def decide_many(self, docs: Iterable[DocumentLike]) -> list[Decision]:
        """Decide a stream of documents a window (``settings.window.max_count``) at a time; every
        decision, in input order (the work is done when it returns)."""
        return self._run(self._async.decide_many(docs))

    def check(self, doc: DocumentLike) -> Decision:
        """The decision ``doc`` would get now; nothing is stored."""
        return self._run(self._async.check(doc))


__all__ = ["AsyncDeduplicator", "Deduplicator", "DocumentLike", "EventLoopRunningError"]
