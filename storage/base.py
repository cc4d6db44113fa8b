"""The fingerprint store interface: what the engine may ask of any backend, a window at a time.

Backends remember; they never decide. Values are plain (bytes, str, numbers, numpy arrays of
uint64 index keys) so that this package imports nothing else of neardup's. A window costs the
engine a fixed number of store calls, whatever its size:

1. :meth:`FingerprintStore.lookup`: the stored decisions of the window's ids (replays), the owners
   of some content hashes (read only), the candidates filed under each document's index keys, and
   named shared state (thresholds, the learned model, the store's generation), in one call;
2. :meth:`FingerprintStore.fetch`: the records of candidates the engine does not hold in memory;
3. :meth:`FingerprintStore.commit`: atomic exact claims, then the records (and index entries) of
   the documents whose claims won;
4. :meth:`FingerprintStore.candidates` again for the documents decided unique (a near-duplicate
   another worker committed meanwhile), then :meth:`FingerprintStore.put_decisions`. Decisions are
   written last because the race protocol reads them as "this document is final" (engine docs).

Documents are referred to by a :func:`doc_ref`, an 8-byte digest of the id; records carry the full
id, and a ref whose record holds another id (a digest collision) is treated as absent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from neardup.storage.errors import StoreError

REF_BYTES = 8
_REF_PERSON = b"neardup-doc"

IndexKeys = npt.NDArray[np.uint64]
"""Index keys of a window: shape (documents, keys per document); 0 marks "no key"."""
Candidates = dict[bytes, int]
"""A row's candidates: each ref, and how many of the row's index keys it was filed under (the
engine re-checks the refs found under the most keys first when there are more than it takes)."""
Recheck = Mapping[str, Collection[int]]
"""The race check of a commit: document id -> the index keys its recheck looks under (those its
lookup asked: a long text files its sentence keys for excerpts to come but asks only its LSH keys)."""


def fmix64(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """MurmurHash3's 64-bit finaliser, elementwise: how the backends spread index keys (the
    engine's need not be uniform) over shards and filter bits."""
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xFF51AFD7ED558CCD)
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> np.uint64(33))


def doc_ref(doc_id: str) -> bytes:
    """The 8-byte reference of a document id (blake2b): how index entries point at records."""
    return hashlib.blake2b(doc_id.encode("utf-8", "surrogatepass"), digest_size=REF_BYTES,
                           person=_REF_PERSON).digest()


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
    # the index keys this record is filed under (uint64, 0 = none); backends may return () from
    # fetch: the keys are needed to file a record, never to re-check it
    index_keys: tuple[int, ...] = field(default=())
    # domain facts the re-check needs beyond the fingerprints, in the domain's own versioned
    # encoding (the original this document duplicates, its version marks): kept opaque
    meta: bytes = b""
    # the 64-bit perceptual hash (pHash) of each usable image of the document, in its order; the
    # image index is filed under index keys like the text's (their blocks), so every backend that
    # files, expires, archives and forgets index keys does so for images too
    images: tuple[int, ...] = field(default=())
    # each image's structure (neardup.media.hashes.ImageHashes.structure: percent of its variance
    # beyond the pHash's frequencies, 255 not known), in the order of ``images``; () when none is
    # known (a record written before it was kept), so the image rules use their usual radii
    image_structure: tuple[int, ...] = field(default=())

    @property
    def ref(self) -> bytes:
        """This record's :func:`doc_ref`."""
        return doc_ref(self.doc_id)


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """id -> decision, so that a replay gets the same answer."""

    doc_id: str
    status: str  # "unique" | "duplicate"
    duplicate_of: str | None
    evidence: str  # JSON text
    content_type: str = "default"
    content_hash: bytes = b""  # of the text decided: a reused id with other text is not a replay

    @property
    def decided_at(self) -> float | None:
        """When it was decided (epoch seconds): ``decided_at`` of the evidence, if it holds one."""
        try:
            value = json.loads(self.evidence).get("decided_at")
        except (ValueError, AttributeError):  # evidence that is not a JSON object
            return None
        return epoch_of(value)


def iso_utc(epoch: float, timespec: str = "milliseconds") -> str:
    """An epoch time as ISO 8601 UTC (``2026-12-05T08:51:03.123Z`` with the default
    ``timespec``, as evidence writes times; ``auto`` drops zero fractions, as search does)."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def epoch_of(value: object) -> float | None:
    """Epoch seconds of a time written as :func:`iso_utc` writes it or as epoch seconds (what
    decisions stored before times were written in ISO 8601 hold); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value > 0 else None
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return when.timestamp() if when.tzinfo is not None else None
    return None


@dataclass(frozen=True, slots=True)
class Claim:
    """Claim ``content_hash`` for ``doc_id``: the first id to claim a hash owns it."""

    content_hash: bytes
    doc_id: str
    content_type: str


@dataclass(frozen=True, slots=True)
class StateValue:
    """A versioned blob of shared state (thresholds, the learned model, the store generation)."""

    version: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class WindowQuery:
    """What :meth:`FingerprintStore.lookup` reads for one window."""

    doc_ids: Sequence[str] = ()
    exact_hashes: Sequence[bytes] = ()
    index_keys: IndexKeys = field(default_factory=lambda: np.zeros((0, 0), dtype=np.uint64))
    state_names: Sequence[str] = ()
    # the content type of each row of ``index_keys`` (and id of ``doc_ids``, the same documents in
    # the same order), or () when unknown: a tiered store asks its cold tier only for the rows of
    # the types archived there
    content_types: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class WindowAnswer:
    """The answer to a :class:`WindowQuery`, in the query's order."""

    decisions: dict[str, DecisionRecord]
    owners: list[str | None]
    candidates: list[Candidates]
    states: dict[str, StateValue]


@dataclass(frozen=True, slots=True)
class CommitAnswer:
    """What :meth:`FingerprintStore.commit` did: the owner per claim, in the claims' order, and
    for each stored record named in its ``recheck``, the candidates under the keys it gave
    as they were when it was filed (the race check: what other writers filed since the lookup)."""

    owners: list[str]
    rechecked: dict[str, Candidates] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class KeptDocument:
    """A document stored for good (its content type's TTL is None), as the archive moves it to the
    cold tier: its record with its index keys, and its decision where one is stored."""

    record: FingerprintRecord
    decision: DecisionRecord | None


@dataclass(frozen=True, slots=True)
class KeptPage:
    """One page of :meth:`FingerprintStore.kept`; ``cursor`` is ``""`` after the last page."""

    documents: list[KeptDocument]
    cursor: str


@runtime_checkable
class FingerprintStore(Protocol):
    """Async fingerprint store. Every batch method keeps the order of its inputs."""

    url: str

    async def open(self) -> None:
        """Connect (network stores) or load (file store); idempotent."""
        ...

    async def close(self) -> None:
        """Flush what is pending and release connections."""
        ...

    async def lookup(self, query: WindowQuery) -> WindowAnswer:
        """Decisions of ``doc_ids``, owners of ``exact_hashes``, candidate refs per row of
        ``index_keys`` (with the number of the row's keys each was found under), and the named
        states that exist. Candidates may include a ref whose record
        expired while its index bucket lives on (``fetch`` omits it): they only propose."""
        ...

    async def candidates(self, index_keys: IndexKeys) -> list[Candidates]:
        """Candidate refs per row of ``index_keys``, each with the number of the row's keys it was
        found under (a lookup of the index only)."""
        ...

    async def fetch(self, refs: Sequence[bytes]) -> dict[bytes, FingerprintRecord]:
        """Stored records by ref; missing or expired refs are absent from the result."""
        ...

    async def commit(self, claims: Sequence[Claim], records: Sequence[FingerprintRecord],
                     recheck: Recheck | None = None) -> CommitAnswer:
        """Claim each content hash atomically (the owner per claim comes back: the claimant when
        the hash was free or already its own), then store and file the records of every document
        that holds its claim (a record whose document lost its claim is not stored), each with its
        content type's TTL. For each stored record whose document id is in ``recheck``, the
        candidates under the index keys ``recheck`` gives it (of its own: the keys its lookup
        asked) are looked up as it is filed, in the same call: on a
        shared store another writer's record filed under one of its keys is found either there
        or by that writer's own recheck, whichever is filed second (they may include records of
        this same commit, and the record itself when it was filed before)."""
        ...

    async def get_decisions(self, doc_ids: Sequence[str]) -> dict[str, DecisionRecord]:
        """Stored decisions by id (the race protocol polls a racing document's decision)."""
        ...

    async def put_decisions(self, decisions: Sequence[DecisionRecord]) -> None:
        """Store decisions, each with its content type's TTL."""
        ...

    async def write_state(self, name: str, value: StateValue) -> bool:
        """Store ``value`` if the stored version is ``value.version - 1`` (or absent and the
        version is 1): an atomic compare-and-set. True when written."""
        ...

    async def expire(self, now: float | None = None) -> int:
        """Drop entries that outlived their TTL; returns how many went (0 where the server does it)."""
        ...

    async def stats(self) -> dict[str, int]:
        """Sizes for diagnostics (keys, entries, memory where the backend knows it)."""
        ...

    async def kept(self, cursor: str = "", count: int = 500) -> KeptPage:
        """A page of about ``count`` documents of the content types kept forever (TTL None), each
        with its index keys, from ``cursor`` (``""``: the first page). Documents forgotten between
        pages are not seen again; every document kept from the first call to the last is seen at
        least once."""
        ...

    async def forget(self, records: Sequence[FingerprintRecord]) -> int:
        """Remove these documents (record, index entries, their claim, their decision) once the
        cold tier holds them; returns how many records were removed. Idempotent."""
        ...


@runtime_checkable
class TierAware(Protocol):
    """A store of several tiers that can say which tier supplied a document to a recent window."""

    def tier_of(self, doc_id: str) -> str | None:
        """The tier's name (``"cold"``), or None for the store's first tier."""
        ...


@dataclass(frozen=True, slots=True)
class TTLPolicy:
    """Time-to-live per content type; ``None`` keeps forever."""

    by_type: Mapping[str, int | None]
    default: int | None = 30 * 86_400

    def ttl(self, content_type: str) -> int | None:
        """Seconds to keep a ``content_type`` entry (``None``: forever)."""
        if content_type in self.by_type:
            return self.by_type[content_type]
        return self.by_type.get("default", self.default)


__all__ = [
    "REF_BYTES",
    "Candidates",
    "Claim",
    "DecisionRecord",
    "FingerprintRecord",
    "FingerprintStore",
    "IndexKeys",
    "KeptDocument",
    "KeptPage",
    "StateValue",
    "StoreError",
    "TTLPolicy",
    "TierAware",
    "WindowAnswer",
    "WindowQuery",
    "doc_ref",
    "fmix64",
]
