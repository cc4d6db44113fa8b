"""Redis key layout of the fingerprint store, designed for Redis Cluster hash slots.

Every key starts with the configured prefix ``P`` (``RedisSettings.key_prefix``, default ``nd``)
and a hash tag ``{...}`` that decides its slot. Binary parts inside tags are base64url (no padding),
so a tag never contains ``{`` or ``}`` and is never empty.

===================  ================  ================================  ==============================
key                  type (writer)     value                             expiry
===================  ================  ================================  ==============================
``P:{d<D>}r``        string (commit)   packed FingerprintRecord          EX ttl(content type); none
                                       (storage/redis/store.py)                when the type's ttl is None
``P:{d<D>}v``        string            packed DecisionRecord             EX ttl(decision's content
                     (put_decisions)                                     type); none when None
``P:{x<H>}``         string (commit)   id of the document that claimed   EX ttl(content type), set by
                                       the hash                          the winning claim
``P:{i<S>}``         sorted set        members ``C + E + D`` (17 B),     none: expired members are
                     (commit)          every score 0                     skipped by lookups and swept
                                                                         by writes (below)
``P:{s}<name>``      string            versioned shared state            none
                     (write_state)     (thresholds, learned model)
``P:{g<n>}``         string (open)     the store's generation token      none
===================  ================  ================================  ==============================

``D``
    ``blake2b(doc_id, 8 bytes)`` (:func:`neardup.storage.base.doc_ref`): the document's keys (record,
    decision) share the tag ``{d<D>}`` and hence one slot. Stored values carry the full id; a value
    whose id differs (a 64-bit collision, about 3e-4 at 1e8 live documents) is treated as absent.
``H``
    The content hash itself (16 bytes in practice), so claims are exact.
``S``, ``C``
    Index keys are uint64 from the engine; ``fmix64(key)`` gives a shard ``S`` (hex, one of
    ``index_shards``) from its low 24 bits and a 5-byte check ``C`` from its high 40 bits. One index
    key's entries are the lexicographic range ``[C, C+0xff..]`` of its shard (``ZRANGE BYLEX``): one
    command per index key, whatever the content types and ages of its entries. Two index keys of
    one shard with the same check (about 1e-12 per lookup) only add a candidate, which the engine
    re-checks anyway.
``E``
    The entry's expiry, epoch seconds as a big-endian uint32 (``0xffffffff``: never). Lookups skip
    expired members; writes sample the shard keys they touch (one in four, twelve members each:
    ``ZRANDMEMBER``) and remove the expired members found, so a shard holds about as many dead
    entries as live ones at worst and nothing grows without bound but the entries of content kept
    forever.

Why sorted sets and shards instead of one set per index key: most LSH band keys are held by one
document only, and a Redis key costs about 100-150 bytes before its first member. Sharded listpack
sorted sets cost about 20 bytes per entry. Size ``index_shards`` near ``live documents * index keys
per document / 64`` so that shard keys stay well under ``zset-max-listpack-entries`` (128 by
default; above it a key switches to the skiplist encoding, about 100 bytes per member). The default,
2**19, suits about 900,000 live documents at 38 keys each. A lookup scans its shard's listpack, so
fewer members a shard also make lookups cheaper (1.6 us at 8, 3.5 us at 78: bench/redis_lookup.py).
"""

from __future__ import annotations

import base64
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from neardup.storage.base import REF_BYTES, doc_ref

DOC_DIGEST_BYTES = REF_BYTES
CHECK_BYTES = 5
EXPIRY_BYTES = 4
MEMBER_BYTES = CHECK_BYTES + EXPIRY_BYTES + DOC_DIGEST_BYTES
NEVER = 0xFFFFFFFF
DEFAULT_SHARDS = 1 << 19


def _b64(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def doc_digest(doc_id: str) -> bytes:
    """The document's 8-byte ref (:func:`neardup.storage.base.doc_ref`): its keys' hash tag."""
    return doc_ref(doc_id)


def _fmix64(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xFF51AFD7ED558CCD)
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> np.uint64(33))


def _crc16_table() -> npt.NDArray[np.uint32]:
    table = np.zeros(256, dtype=np.uint32)
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        table[i] = c & 0xFFFF
    return table


_CRC16_TABLE = _crc16_table()


def crc16_slots(tags: list[bytes]) -> npt.NDArray[np.int64]:
    """Cluster slots (CRC16-XMODEM mod 16384) of many hash-tag contents at once."""
    width = max((len(t) for t in tags), default=0)
    joined = np.frombuffer(b"".join(t.ljust(width, b"\0") for t in tags), dtype=np.uint8)
    buf = joined.reshape(len(tags), width).astype(np.uint32) if tags else np.zeros((0, 0), dtype=np.uint32)
    lengths = np.array([len(t) for t in tags], dtype=np.int64)
    crc = np.zeros(len(tags), dtype=np.uint32)
    for j in range(width):
        nxt = ((crc << 8) ^ _CRC16_TABLE[((crc >> 8) ^ buf[:, j]) & 0xFF]) & 0xFFFF
        crc = np.where(lengths > j, nxt, crc)
    return (crc % 16384).astype(np.int64)


class IndexSlot(NamedTuple):
    """Where one index key's entries live: its shard key and the check that prefixes its members."""

    shard: int
    check: bytes


class KeyLayout:
    """Builds every key name of one store. Pure: no I/O, so slot tests need no server."""

    def __init__(self, prefix: str = "nd", index_shards: int = DEFAULT_SHARDS) -> None:
        """``prefix``: every key's first part; ``index_shards``: shard keys of the index."""
        if not 1 <= index_shards <= 1 << 24:
            raise ValueError("index_shards must be between 1 and 2**24")
        if "{" in prefix or "}" in prefix:
            raise ValueError("key_prefix must not contain '{' or '}' (it would move the hash tag)")
        self.prefix = prefix.encode("utf-8") + b":"
        self.index_shards = index_shards
        self._shard_slots: npt.NDArray[np.int64] | None = None

    # -- per document ------------------------------------------------------------------------
    def doc_tag(self, digest: bytes) -> bytes:
        """The hash tag every key of one document shares."""
        return self.prefix + b"{d" + _b64(digest) + b"}"

    def record_key(self, digest: bytes) -> bytes:
        """The key of a document's fingerprint record."""
        return self.doc_tag(digest) + b"r"

    def decision_key(self, digest: bytes) -> bytes:
        """The key of a document's decision."""
        return self.doc_tag(digest) + b"v"

    def doc_keys(self, doc_id: str) -> tuple[bytes, bytes]:
        """(record key, decision key) of a document id."""
        d = doc_digest(doc_id)
        return self.record_key(d), self.decision_key(d)

    # -- exact claims, shared state, generation ----------------------------------------------
    def claim_key(self, content_hash: bytes) -> bytes:
        """The key holding the owner of a content hash."""
        return self.prefix + b"{x" + _b64(content_hash) + b"}"

    def state_key(self, name: str) -> bytes:
        """The key of a named shared state."""
        return self.prefix + b"{s}" + name.encode("utf-8")

    def marker_keys(self, count: int) -> list[bytes]:
        """The generation marker keys (spread over slots, so every master holds some)."""
        return [self.prefix + b"{g%d}" % i for i in range(count)]

    # -- index -------------------------------------------------------------------------------
    def index_slots(self, keys: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]:
        """(shard, check as a 40-bit integer) of many index keys (see the module docstring)."""
        k = _fmix64(keys.astype(np.uint64))
        shard = ((k & np.uint64(0xFFFFFF)) % np.uint64(self.index_shards)).astype(np.int64)
        return shard, k >> np.uint64(24)

    def index_slot(self, index_key: int) -> IndexSlot:
        """Shard and member check of one index key."""
        shard, check = self.index_slots(np.array([index_key], dtype=np.uint64))
        return IndexSlot(int(shard[0]), int(check[0]).to_bytes(CHECK_BYTES, "big"))

    def shard_key(self, shard: int) -> bytes:
        """The sorted set of one index shard."""
        return self.prefix + b"{i%x}" % shard

    def shard_slots(self) -> npt.NDArray[np.int64]:
        """The cluster slot of every index shard key (``i<shard in hex>`` tags), computed once."""
        if self._shard_slots is None:
            self._shard_slots = crc16_slots([b"i%x" % s for s in range(self.index_shards)])
        return self._shard_slots

    @staticmethod
    def member(check: bytes, expires_at: int | None, digest: bytes) -> bytes:
        """An index entry: check, expiry (epoch seconds; None = never), the document's ref."""
        return check + (NEVER if expires_at is None else min(expires_at, NEVER - 1)).to_bytes(EXPIRY_BYTES, "big") \
            + digest

    @staticmethod
    def lex_range(check: bytes) -> tuple[bytes, bytes]:
        """Inclusive ZRANGE BYLEX bounds of every member starting with ``check``."""
        return b"[" + check, b"[" + check + b"\xff" * (EXPIRY_BYTES + DOC_DIGEST_BYTES)


__all__ = ["CHECK_BYTES", "MEMBER_BYTES", "NEVER", "IndexSlot", "KeyLayout", "crc16_slots", "doc_digest"]
