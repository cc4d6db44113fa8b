"""The library's front door: :class:`Deduplicator`, the same engine as ``neardup dedup`` and the workers.

    from neardup import Deduplicator, Status
    with Deduplicator() as dedup:                 # embedded memory store, default settings
        d = dedup.decide({"id": "a", "text": "..."})
        d.status is Status.DUPLICATE; d.duplicate_of; d.evidence.jaccard; d.evidence.hamming
        for d in dedup.decide_many(docs):         # window at a time: the decisions of `neardup dedup`
            ...
    Deduplicator(store="rediscluster://host:7000", settings=Settings(...))

The calls are synchronous; the engine runs on a private event loop. Async code uses
:class:`neardup.engine.Engine` directly (``await Engine.open(settings)``, ``await engine.decide(docs)``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from neardup.config import Settings, load_settings
from neardup.decision import Decision
from neardup.document import Document, parse_document

DocumentLike = Document | Mapping[str, Any] | str | bytes


class Deduplicator:
    """Decides documents: unique, or duplicate of which earlier one, and why.

    ``store``: a store URL (``memory://`` by default, ``file://PATH``, ``redis://``,
    ``rediscluster://``); ``settings``: a :class:`Settings` (default: from the environment).
    Documents are dicts (or JSON text) with ``id`` and ``text``, or :class:`Document` objects; an
    invalid one raises :class:`neardup.errors.InputError` (``InvalidDocument``) with its reason.
    """

    def __init__(self, store: str | None = None, settings: Settings | None = None) -> None:
        """Nothing is opened until the first decision (or :meth:`open`)."""
        base = settings if settings is not None else load_settings()
        self.settings = base.model_copy(update={"store_url": store}) if store else base
        self._loop = asyncio.new_event_loop()
        self._engine: Any = None

    def open(self) -> Deduplicator:
        """Open the store and build the engine (the first decision does it otherwise)."""
        if self._engine is None:
            from neardup.engine import Engine

            self._engine = self._loop.run_until_complete(Engine.open(self.settings))
        return self

    def close(self) -> None:
        """Close the store (a file store is written out) and the private event loop."""
        if self._engine is not None:
            self._loop.run_until_complete(self._engine.close())
            self._engine = None
        if not self._loop.is_closed():
            self._loop.close()

    def __enter__(self) -> Deduplicator:
        """Open; :meth:`close` on leaving the block."""
        return self.open()

    def __exit__(self, *_: object) -> None:
        """Close the store and the loop."""
        self.close()

    def _document(self, doc: DocumentLike) -> Document:
        if isinstance(doc, Document):
            return doc
        n = self.settings.normalize
        return parse_document(doc, max_bytes=n.max_bytes, max_id_length=n.max_id_length)

    def decide(self, doc: DocumentLike) -> Decision:
        """Decide one document (and store it: a later document is checked against it)."""
        return self.decide_window([doc])[0]

    def decide_window(self, docs: Iterable[DocumentLike]) -> list[Decision]:
        """Decide documents together, as one window; decisions in input order."""
        self.open()
        batch = [self._document(d) for d in docs]
        return list(self._loop.run_until_complete(self._engine.decide(batch)))

    def decide_many(self, docs: Iterable[DocumentLike]) -> Iterator[Decision]:
        """Decide a stream of documents a window (``settings.window.max_count``) at a time, lazily."""
        window: list[DocumentLike] = []
        for doc in docs:
            window.append(doc)
            if len(window) >= self.settings.window.max_count:
                yield from self.decide_window(window)
                window = []
        if window:
            yield from self.decide_window(window)

    def check(self, doc: DocumentLike) -> Decision:
        """The decision ``doc`` would get now; nothing is stored."""
        self.open()
        return self._loop.run_until_complete(self._engine.check(self._document(doc)))


__all__ = ["Deduplicator", "DocumentLike"]
