"""A warm store with the cold tier behind it: one :class:`~neardup.storage.base.FingerprintStore`.

The warm store (memory, file or Redis) answers first and takes every write; the cold tier
(:class:`~neardup.storage.postgres.archive.ColdArchive`) is asked, in one batched round trip per
window, only for the rows whose content type reaches it (the types kept forever, TTL None:
announcements by default). What a document is decided against is the union of both tiers, so a
decision does not depend on whether the earlier document was archived yet:

* ``lookup``: both tiers at once; candidates of the cold rows from both (a document archived but
  not yet forgotten by the warm store is counted once), owners of content hashes the warm store
  does not know, and the decisions of cold rows the warm store does not hold (a replay of an
  archived one);
* ``fetch``: the warm store, then the cold tier for the refs only it proposed;
* ``commit``: a content hash the cold tier holds for another document is that document's, as a
  warm claim would be (the claim is not made, the record not stored); the rest is the warm commit.

The race re-check (``candidates``) and shared state stay warm: documents reach the cold tier only
through ``neardup archive``, long after the window that stored them. :meth:`TieredStore.tier_of`
says which documents the cold tier supplied (the evidence's ``tier: cold``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from neardup.storage.base import (
    Candidates,
    Claim,
    CommitAnswer,
    DecisionRecord,
    FingerprintRecord,
    FingerprintStore,
    IndexKeys,
    KeptPage,
    Recheck,
    StateValue,
    TTLPolicy,
    WindowAnswer,
    WindowQuery,
    doc_ref,
)
from neardup.storage.postgres.archive import ColdArchive

COLD = "cold"
_REMEMBERED = 100_000  # refs only the cold tier proposed, remembered for the windows in flight


class TieredStore:
    """``warm`` in front of ``cold``, for the content types ``ttl`` keeps forever (see the module docstring)."""

    def __init__(self, warm: FingerprintStore, cold: ColdArchive, ttl: TTLPolicy) -> None:
        """``ttl``: the warm store's policy; its types kept forever (None) are the cold tier's."""
        self.warm = warm
        self.cold = cold
        self.ttl = ttl
        self.url = warm.url
        self._cold_refs: set[bytes] = set()

    def __repr__(self) -> str:
        """Both redacted URLs."""
        return f"TieredStore({self.warm.url!r}, {self.cold.url!r})"

    def archived_type(self, content_type: str) -> bool:
        """Whether documents of ``content_type`` reach the cold tier."""
        return self.ttl.ttl(content_type) is None

    def tier_of(self, doc_id: str) -> str | None:
        """``"cold"`` when only the cold tier proposed ``doc_id`` to a recent window (under its index
        keys or as the owner of a content hash)."""
        return COLD if doc_ref(doc_id) in self._cold_refs else None

    def _remember(self, refs: Iterable[bytes]) -> None:
        if len(self._cold_refs) > _REMEMBERED:  # bounded: the windows in flight need only their own
            self._cold_refs.clear()
        self._cold_refs.update(refs)

    # -- life cycle ------------------------------------------------------------------------------
    async def open(self) -> None:
        """Open both tiers."""
        await self.warm.open()
        try:
            await self.cold.open()
        except BaseException:
            await self.warm.close()
            raise

    async def close(self) -> None:
        """Close both tiers."""
        try:
            await self.warm.close()
        finally:
            await self.cold.close()

    # -- reads -----------------------------------------------------------------------------------
    def _cold_rows(self, query: WindowQuery) -> list[int]:
        rows = query.index_keys.shape[0] or len(query.doc_ids)
        if not query.content_types:  # types unknown: every row may have an archived original
            return list(range(rows))
        return [r for r, t in enumerate(query.content_types) if self.archived_type(t)]

    async def lookup(self, query: WindowQuery) -> WindowAnswer:
        """See :meth:`neardup.storage.base.FingerprintStore.lookup` and the module docstring. The
        warm store is asked first, then the cold tier (for every id and hash the window could
        need): ``neardup archive`` copies a document to the cold tier before it deletes it from the
        warm store, so a document the warm store no longer held was committed to the cold tier
        before the cold tier is read, and its keys are in the filter of archived keys when that
        catches up. Asked at once, a document moved between the two reads could be in neither.
        With the filter the cold tier's part is a few searches, not one a key."""
        rows = self._cold_rows(query)
        if not rows and not query.exact_hashes:
            return await self.warm.lookup(query)
        ids = [query.doc_ids[r] for r in rows if r < len(query.doc_ids)]
        keys = query.index_keys[rows] if query.index_keys.size else np.zeros((0, 0), dtype=np.uint64)
        warm = await self.warm.lookup(query)
        cold = await self.cold.lookup(keys, query.exact_hashes, ids)
        candidates = list(warm.candidates)
        for r, found in zip(rows, cold.candidates, strict=False):
            if found:
                merged = dict(candidates[r])
                self._remember(ref for ref in found if ref not in merged)
                for ref, n in found.items():
                    merged[ref] = max(n, merged.get(ref, 0))  # in both tiers while being archived: once
                candidates[r] = merged
        owners = [owner if owner is not None else cold.owners.get(h)
                  for h, owner in zip(query.exact_hashes, warm.owners, strict=True)]  # fmt: skip
        self._remember(doc_ref(o) for o, w in zip(owners, warm.owners, strict=True) if o is not None and w is None)
        return WindowAnswer({**cold.decisions, **warm.decisions}, owners, candidates, warm.states)

    async def candidates(self, index_keys: IndexKeys) -> list[Candidates]:
        """The warm store's: the race re-check looks for what other writers filed meanwhile."""
        return await self.warm.candidates(index_keys)

    async def fetch(self, refs: Sequence[bytes]) -> dict[bytes, FingerprintRecord]:
        """The warm store's records, then the cold tier's for the refs only it proposed."""
        found = await self.warm.fetch(refs)
        missing = [r for r in refs if r not in found and r in self._cold_refs]
        if missing:
            found.update(await self.cold.fetch(missing))
        return found

    async def get_decisions(self, doc_ids: Sequence[str]) -> dict[str, DecisionRecord]:
        """The warm store's decisions, then the cold tier's for the ids it does not hold."""
        found = await self.warm.get_decisions(doc_ids)
        missing = [i for i in doc_ids if i not in found]
        if missing:
            found.update((await self.cold.lookup([], (), missing)).decisions)
        return found

    # -- writes ----------------------------------------------------------------------------------
    async def commit(self, claims: Sequence[Claim], records: Sequence[FingerprintRecord],
                     recheck: Recheck | None = None) -> CommitAnswer:
        """See :meth:`neardup.storage.base.FingerprintStore.commit`: hashes the cold tier holds for
        another document are that document's; the other claims and records go to the warm store."""
        asked = [c.content_hash for c in claims if self.archived_type(c.content_type)]
        held = (await self.cold.lookup([], asked, ())).owners if asked else {}
        lost = {i: held[c.content_hash] for i, c in enumerate(claims)
                if c.content_hash in held and held[c.content_hash] != c.doc_id}  # fmt: skip
        if not lost:
            return await self.warm.commit(claims, records, recheck)
        self._remember(doc_ref(i) for i in lost.values())
        losers = {claims[i].doc_id for i in lost}
        rest = [c for i, c in enumerate(claims) if i not in lost]
        answer = await self.warm.commit(rest, [r for r in records if r.doc_id not in losers], recheck)
        owners = iter(answer.owners)
        return CommitAnswer([lost[i] if i in lost else next(owners) for i in range(len(claims))], answer.rechecked)

    async def put_decisions(self, decisions: Sequence[DecisionRecord]) -> None:
        """The warm store's."""
        await self.warm.put_decisions(decisions)

    async def write_state(self, name: str, value: StateValue) -> bool:
        """The warm store's (shared state is never archived)."""
        return await self.warm.write_state(name, value)

    async def expire(self, now: float | None = None) -> int:
        """The warm store's (the cold tier keeps what it holds)."""
        return await self.warm.expire(now)

    async def stats(self) -> dict[str, int]:
        """The warm store's sizes, and the cold tier's prefixed ``cold_``."""
        cold = await self.cold.stats()
        return {**await self.warm.stats(), **{f"cold_{k}": v for k, v in cold.items()}}

    async def kept(self, cursor: str = "", count: int = 500) -> KeptPage:
        """The warm store's (what the archive moves)."""
        return await self.warm.kept(cursor, count)

    async def forget(self, records: Sequence[FingerprintRecord]) -> int:
        """The warm store's."""
        return await self.warm.forget(records)
