"""The fingerprint store interface: what the engine may ask of any backend.

Backends remember; they never decide. Every method takes and returns plain values (bytes, str,
numbers) so that this package imports nothing else of neardup's. Index keys are opaque bytes built
by the engine (band and block buckets); a backend only groups, expires and unions them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from neardup.storage.errors import StoreError

__all__ = ["DecisionRecord", "FingerprintRecord", "FingerprintStore", "StoreError", "TTLPolicy"]


@dataclass(frozen=True, slots=True)
class FingerprintRecord:
    """Everything a later document needs to be re-checked against this one."""

    doc_id: str
    content_type: str
    published_at: float  # epoch seconds; (published_at, doc_id) orders originals
    content_hash: bytes  # 16 bytes, stable
    simhash: bytes  # 8 or 16 bytes, big-endian
    signature: bytes  # MinHash signature in its versioned byte format
    profile: bytes  # critical-difference profile in its versioned byte format
    shingles: int  # distinct shingles (for containment estimates)
    length: int  # characters after normalisation
    # bucket keys this record is filed under; a backend may return () from fetch (they are only
    # needed to file the record, and Redis saves memory by not keeping them)
    index_keys: tuple[bytes, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """id -> decision, so that a replay gets the same answer."""

    doc_id: str
    status: str  # "unique" | "duplicate"
    duplicate_of: str | None
    evidence: str  # JSON text
    content_type: str = "default"


@runtime_checkable
class FingerprintStore(Protocol):
    """Async fingerprint store. All batch methods keep the order of their inputs."""

    url: str

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def claim_exact(self, items: Sequence[tuple[bytes, str, str]]) -> list[str]:
        """For each (content_hash, doc_id, content_type): atomically claim the hash.

        Returns the owner id per item: ``doc_id`` itself when the claim is new (or was already
        this id's), otherwise the id that claimed the hash first.
        """
        ...

    async def lookup_exact(self, content_hashes: Sequence[bytes]) -> list[str | None]:
        """Owner id of each content hash, or None; reads only (dry runs, Bloom-filter hits)."""
        ...

    async def release_exact(self, items: Sequence[tuple[bytes, str]]) -> None:
        """Drop claims (content_hash, doc_id) that this id holds; used by dry runs only."""
        ...

    async def get_decisions(self, doc_ids: Sequence[str]) -> dict[str, DecisionRecord]: ...

    async def put_decisions(self, decisions: Sequence[DecisionRecord]) -> None: ...

    async def query(self, keys_per_doc: Sequence[Sequence[bytes]]) -> list[set[str]]:
        """Ids filed under any of each document's index keys (live entries only)."""
        ...

    async def fetch(self, doc_ids: Sequence[str]) -> dict[str, FingerprintRecord]:
        """Stored records by id; missing or expired ids are absent from the result."""
        ...

    async def add(self, records: Sequence[FingerprintRecord]) -> None:
        """Store records and file each under its index keys, with its content type's TTL."""
        ...

    async def expire(self, now: float | None = None) -> int:
        """Drop entries that outlived their TTL; returns how many went (0 where the server does it)."""
        ...

    async def stats(self) -> dict[str, int]: ...


@dataclass(frozen=True, slots=True)
class TTLPolicy:
    """Time-to-live per content type; ``None`` keeps forever."""

    by_type: Mapping[str, int | None]
    default: int | None = 30 * 86_400

    def ttl(self, content_type: str) -> int | None:
        if content_type in self.by_type:
            return self.by_type[content_type]
        return self.by_type.get("default", self.default)
