"""In-process fingerprint store: the embedded backend behind ``memory://`` (and, persisted, ``file://``)."""

from __future__ import annotations

import heapq
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import chain

from neardup.storage.base import (
    Candidates,
    Claim,
    CommitAnswer,
    DecisionRecord,
    FingerprintRecord,
    IndexKeys,
    KeptDocument,
    KeptPage,
    Recheck,
    StateValue,
    TTLPolicy,
    WindowAnswer,
    WindowQuery,
)

INF = float("inf")


@dataclass(slots=True)
class _Entry:
    record: FingerprintRecord
    expires_at: float


# The refs filed under one index key. An entry lives as long as its record (a record's keys are
# all filed with its expiry), so a bucket holds refs only: a tuple of up to TUPLE_BUCKET refs (40
# bytes and 8 a ref; most keys are one document's own, and its one-tuple is shared by all of
# them), beyond that a dict used as an ordered set (a template's key may hold thousands: filing
# stays O(1)). A dict for every key would cost about 230 bytes a key (docs/measurements.md).
Bucket = tuple[bytes, ...] | dict[bytes, None]
TUPLE_BUCKET = 8


class MemoryFingerprintStore:
    """Dicts with expiry times. Expired entries are invisible at once and swept by ``expire``.

    The reference implementation of the store contract (tests/contract runs every backend against
    the same expectations).
    """

    def __init__(
        self,
        url: str = "memory://",
        ttl: TTLPolicy | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``ttl``: time-to-live per content type; ``clock``: epoch seconds (tests move it)."""
        self.url = url
        self.ttl = ttl or TTLPolicy(by_type={})
        self._clock = clock
        self._records: dict[bytes, _Entry] = {}
        self._buckets: dict[int, Bucket] = {}
        self._claims: dict[bytes, tuple[str, float]] = {}
        self._decisions: dict[str, tuple[DecisionRecord, float]] = {}
        self._states: dict[str, StateValue] = {}
        # no index entry expires before this: lowered by every insert through _add, set again by
        # the sweep in expire, so while the clock is earlier every entry is live
        self._soonest = INF

    def _expiry(self, content_type: str, now: float) -> float:
        ttl = self.ttl.ttl(content_type)
        return INF if ttl is None else now + ttl

    async def open(self) -> None:
        """Nothing to open."""
        return None

    async def close(self) -> None:
        """Nothing to close."""
        return None

    # -- reads -------------------------------------------------------------------------------
    async def lookup(self, query: WindowQuery) -> WindowAnswer:
        """See :meth:`neardup.storage.base.FingerprintStore.lookup`."""
        now = self._clock()
        return WindowAnswer(
            decisions=self._get_decisions(query.doc_ids, now),
            owners=[self._owner(h, now) for h in query.exact_hashes],
            candidates=self._candidates(query.index_keys, now),
            states={n: self._states[n] for n in query.state_names if n in self._states},
        )

    async def candidates(self, index_keys: IndexKeys) -> list[Candidates]:
        """See :meth:`neardup.storage.base.FingerprintStore.candidates`."""
        return self._candidates(index_keys, self._clock())

    def _owner(self, content_hash: bytes, now: float) -> str | None:
        held = self._claims.get(content_hash)
        return held[0] if held is not None and held[1] > now else None

    def _candidates(self, index_keys: IndexKeys, now: float) -> list[Candidates]:
        return self._candidates_of(index_keys.tolist(), now)

    def _candidates_of(self, rows: Sequence[Collection[int]], now: float) -> list[Candidates]:
        """Candidates per row of index keys (Python ints; 0, "no key", is never filed)."""
        out: list[Candidates] = []
        get = self._buckets.get
        # all entries live: no expiry to test. Only this class fills the index through _add alone;
        # a subclass may fill it another way (the file store loads it from its database)
        all_live = type(self) is MemoryFingerprintStore and now < self._soonest
        for row in rows:
            buckets = [b for b in map(get, row) if b]
            if not buckets:
                out.append({})  # most rows of a stream of new documents: no Counter to build
                continue
            # one count over all the row's buckets (a dict iterates its refs): Counter.update per
            # bucket paid its type checks once a bucket
            found = (Counter(chain.from_iterable(buckets)) if all_live
                     else Counter(ref for bucket in buckets for ref in bucket if self._live(ref, now)))
            out.append(found)  # a Counter is a dict[bytes, int]: no copy
        return out

    def _live(self, ref: bytes, now: float) -> bool:
        """Whether the record of ``ref`` is held and unexpired (its index entries live as long)."""
        entry = self._records.get(ref)
        return entry is not None and entry.expires_at > now

    async def fetch(self, refs: Sequence[bytes]) -> dict[bytes, FingerprintRecord]:
        """See :meth:`neardup.storage.base.FingerprintStore.fetch`."""
        now = self._clock()
        out: dict[bytes, FingerprintRecord] = {}
        for ref in refs:
            entry = self._records.get(ref)
            if entry is not None and entry.expires_at > now:
                out[ref] = entry.record
        return out

    def _get_decisions(self, doc_ids: Sequence[str], now: float) -> dict[str, DecisionRecord]:
        out: dict[str, DecisionRecord] = {}
        for doc_id in doc_ids:
            held = self._decisions.get(doc_id)
            if held is not None and held[1] > now:
                out[doc_id] = held[0]
        return out

    async def get_decisions(self, doc_ids: Sequence[str]) -> dict[str, DecisionRecord]:
        """See :meth:`neardup.storage.base.FingerprintStore.get_decisions`."""
        return self._get_decisions(doc_ids, self._clock())

    # -- writes ------------------------------------------------------------------------------
    async def commit(self, claims: Sequence[Claim], records: Sequence[FingerprintRecord],
                     recheck: Recheck | None = None) -> CommitAnswer:
        """See :meth:`neardup.storage.base.FingerprintStore.commit`."""
        now = self._clock()
        owners = [self._claim(c, now) for c in claims]
        lost = {c.doc_id for c, owner in zip(claims, owners, strict=True) if owner != c.doc_id}
        stored = [r for r in records if r.doc_id not in lost]
        asked = recheck or {}
        checked = [r for r in stored if r.doc_id in asked]
        found = self._candidates_of([asked[r.doc_id] for r in checked], now)
        self._add(stored, now)
        return CommitAnswer(owners, {r.doc_id: f for r, f in zip(checked, found, strict=True)})

    def _claim(self, claim: Claim, now: float) -> str:
        held = self._claims.get(claim.content_hash)
        if held is not None and held[1] > now:
            return held[0]
        self._claims[claim.content_hash] = (claim.doc_id, self._expiry(claim.content_type, now))
        return claim.doc_id

    def _add(self, records: Sequence[FingerprintRecord], now: float) -> None:
        for rec in records:
            expires_at = self._expiry(rec.content_type, now)
            self._soonest = min(self._soonest, expires_at)
            self._file(rec, expires_at)

    def _file(self, rec: FingerprintRecord, expires_at: float) -> None:
        """Hold ``rec`` until ``expires_at`` and file it under each of its index keys."""
        ref = rec.ref
        self._records[ref] = _Entry(rec, expires_at)
        buckets = self._buckets
        one = (ref,)
        for key in rec.index_keys:
            bucket = buckets.get(key)
            if bucket is None:
                if key:
                    buckets[key] = one  # most keys are a document's own: one shared tuple for all of them
            elif isinstance(bucket, dict):
                bucket[ref] = None
            elif ref not in bucket:
                buckets[key] = bucket + one if len(bucket) < TUPLE_BUCKET else dict.fromkeys(bucket + one)

    async def put_decisions(self, decisions: Sequence[DecisionRecord]) -> None:
        """See :meth:`neardup.storage.base.FingerprintStore.put_decisions`."""
        now = self._clock()
        for d in decisions:
            self._decisions[d.doc_id] = (d, self._expiry(d.content_type, now))

    async def write_state(self, name: str, value: StateValue) -> bool:
        """See :meth:`neardup.storage.base.FingerprintStore.write_state`."""
        held = self._states.get(name)
        if (held.version if held is not None else 0) != value.version - 1:
            return False
        self._states[name] = value
        return True

    # -- moving documents to the cold tier ---------------------------------------------------
    async def kept(self, cursor: str = "", count: int = 500) -> KeptPage:
        """See :meth:`neardup.storage.base.FingerprintStore.kept`: in ref order, the cursor the
        last ref's hex (a ref order survives documents forgotten between pages)."""
        after = bytes.fromhex(cursor)
        refs = heapq.nsmallest(count, (ref for ref, e in self._records.items() if e.expires_at == INF and ref > after))
        docs = [KeptDocument(rec, held[0] if (held := self._decisions.get(rec.doc_id)) else None)
                for rec in (self._records[ref].record for ref in refs)]  # fmt: skip
        return KeptPage(docs, refs[-1].hex() if len(refs) == count else "")

    async def forget(self, records: Sequence[FingerprintRecord]) -> int:
        """See :meth:`neardup.storage.base.FingerprintStore.forget`."""
        gone = 0
        for rec in records:
            ref = rec.ref
            entry = self._records.get(ref)
            if entry is None or entry.record.doc_id != rec.doc_id:
                continue
            del self._records[ref]
            gone += 1
            for key in entry.record.index_keys:
                self._unfile(key, ref)
            held = self._claims.get(rec.content_hash)
            if held is not None and held[0] == rec.doc_id:
                del self._claims[rec.content_hash]
            self._decisions.pop(rec.doc_id, None)
        return gone

    def _unfile(self, key: int, ref: bytes) -> None:
        """Take ``ref`` out of the bucket of ``key``; a bucket left empty goes."""
        bucket = self._buckets.get(key)
        if bucket is None:
            return
        if isinstance(bucket, dict):
            bucket.pop(ref, None)
            if bucket:
                return
        elif ref not in bucket:
            return
        elif len(bucket) > 1:
            self._buckets[key] = tuple(r for r in bucket if r != ref)
            return
        del self._buckets[key]

    # -- upkeep ------------------------------------------------------------------------------
    async def expire(self, now: float | None = None) -> int:
        """Sweep expired records, index entries, claims and decisions; returns the records dropped."""
        now = self._clock() if now is None else now
        gone = [ref for ref, e in self._records.items() if e.expires_at <= now]
        for ref in gone:
            del self._records[ref]
        self._sweep_buckets()
        # the entries left: reads skip the filter again until the next expiry
        self._soonest = min((e.expires_at for e in self._records.values()), default=INF)
        for h in [h for h, (_, exp) in self._claims.items() if exp <= now]:
            del self._claims[h]
        for d in [d for d, (_, exp) in self._decisions.items() if exp <= now]:
            del self._decisions[d]
        return len(gone)

    def _sweep_buckets(self) -> None:
        """Take the refs of records no longer held out of every bucket; empty buckets go."""
        records = self._records
        for key, bucket in list(self._buckets.items()):
            if isinstance(bucket, dict):
                for ref in [r for r in bucket if r not in records]:
                    del bucket[ref]
            elif not all(r in records for r in bucket):
                bucket = self._buckets[key] = tuple(r for r in bucket if r in records)
            if not bucket:
                del self._buckets[key]

    async def stats(self) -> dict[str, int]:
        """Counts of records, index buckets and entries, claims, decisions and states."""
        return {
            "records": len(self._records),
            "buckets": len(self._buckets),
            "bucket_entries": sum(len(b) for b in self._buckets.values()),
            "claims": len(self._claims),
            "decisions": len(self._decisions),
            "states": len(self._states),
        }
