"""In-process fingerprint store: the embedded backend behind ``memory://``."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from neardup.storage.base import DecisionRecord, FingerprintRecord, TTLPolicy

INF = float("inf")


@dataclass(slots=True)
class _Entry:
    record: FingerprintRecord
    expires_at: float


class MemoryFingerprintStore:
    """Dicts with expiry times. Expired entries are invisible at once and swept by ``expire``."""

    def __init__(
        self,
        url: str = "memory://",
        ttl: TTLPolicy | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self.ttl = ttl or TTLPolicy(by_type={})
        self._clock = clock
        self._records: dict[str, _Entry] = {}
        self._buckets: dict[bytes, dict[str, float]] = {}
        self._claims: dict[bytes, tuple[str, float]] = {}
        self._decisions: dict[str, tuple[DecisionRecord, float]] = {}

    def _expiry(self, content_type: str, now: float) -> float:
        ttl = self.ttl.ttl(content_type)
        return INF if ttl is None else now + ttl

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def claim_exact(self, items: Sequence[tuple[bytes, str, str]]) -> list[str]:
        now = self._clock()
        owners: list[str] = []
        for content_hash, doc_id, content_type in items:
            held = self._claims.get(content_hash)
            if held is not None and held[1] > now:
                owners.append(held[0])
                continue
            self._claims[content_hash] = (doc_id, self._expiry(content_type, now))
            owners.append(doc_id)
        return owners

    async def lookup_exact(self, content_hashes: Sequence[bytes]) -> list[str | None]:
        now = self._clock()
        out: list[str | None] = []
        for h in content_hashes:
            held = self._claims.get(h)
            out.append(held[0] if held is not None and held[1] > now else None)
        return out

    async def release_exact(self, items: Sequence[tuple[bytes, str]]) -> None:
        for content_hash, doc_id in items:
            held = self._claims.get(content_hash)
            if held is not None and held[0] == doc_id:
                del self._claims[content_hash]

    async def get_decisions(self, doc_ids: Sequence[str]) -> dict[str, DecisionRecord]:
        now = self._clock()
        out: dict[str, DecisionRecord] = {}
        for doc_id in doc_ids:
            held = self._decisions.get(doc_id)
            if held is not None and held[1] > now:
                out[doc_id] = held[0]
        return out

    async def put_decisions(self, decisions: Sequence[DecisionRecord]) -> None:
        now = self._clock()
        for d in decisions:
            self._decisions[d.doc_id] = (d, self._expiry(d.content_type, now))

    async def query(self, keys_per_doc: Sequence[Sequence[bytes]]) -> list[set[str]]:
        now = self._clock()
        out: list[set[str]] = []
        for keys in keys_per_doc:
            found: set[str] = set()
            for key in keys:
                bucket = self._buckets.get(key)
                if bucket:
                    found.update(i for i, exp in bucket.items() if exp > now)
            out.append(found)
        return out

    async def fetch(self, doc_ids: Sequence[str]) -> dict[str, FingerprintRecord]:
        now = self._clock()
        out: dict[str, FingerprintRecord] = {}
        for doc_id in doc_ids:
            entry = self._records.get(doc_id)
            if entry is not None and entry.expires_at > now:
                out[doc_id] = entry.record
        return out

    async def add(self, records: Sequence[FingerprintRecord]) -> None:
        now = self._clock()
        for rec in records:
            expires_at = self._expiry(rec.content_type, now)
            self._records[rec.doc_id] = _Entry(rec, expires_at)
            for key in rec.index_keys:
                self._buckets.setdefault(key, {})[rec.doc_id] = expires_at

    async def expire(self, now: float | None = None) -> int:
        now = self._clock() if now is None else now
        gone = [i for i, e in self._records.items() if e.expires_at <= now]
        for doc_id in gone:
            del self._records[doc_id]
        for key in list(self._buckets):
            bucket = self._buckets[key]
            for doc_id in [i for i, exp in bucket.items() if exp <= now]:
                del bucket[doc_id]
            if not bucket:
                del self._buckets[key]
        for h in [h for h, (_, exp) in self._claims.items() if exp <= now]:
            del self._claims[h]
        for d in [d for d, (_, exp) in self._decisions.items() if exp <= now]:
            del self._decisions[d]
        return len(gone)

    async def stats(self) -> dict[str, int]:
        return {
            "records": len(self._records),
            "buckets": len(self._buckets),
            "bucket_entries": sum(len(b) for b in self._buckets.values()),
            "claims": len(self._claims),
            "decisions": len(self._decisions),
        }
