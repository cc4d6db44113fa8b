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
``P:{i<S>}<B>``      sorted set        members ``C + D`` (13 B),         EXPIREAT the end of bucket
                     (commit)          every score 0                     ``B`` + a margin (below);
                                                                         ``P:{i<S>}k``: none
``P:{s}<name>``      string            versioned shared state            none
                     (write_state)     (thresholds, learned model)
``P:{g<n>}``         string (open)     the store's generation token      none
``P:{g<n>}c``        set (commit,      the ttl classes in use: each      none
                     open)             ttl in seconds, ``0`` for kept;
                                       ``v``: classes are registered
``P:{g0}l``          string (open,     the index layout the store was    none
                     migrate)          written in: ``shards=S width=W``
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
    key's entries are the lexicographic range ``[C, C+0xff..]`` of each bucket key of its shard
    (``ZRANGE BYLEX``): one command per index key and bucket. Two index keys of
    one shard with the same check (about 1e-12 per lookup) only add a candidate, which the engine
    re-checks anyway.
``B``
    The entry's time bucket: the end of the bucket its expiry falls in, in epoch seconds as lower-case
    hex (``(expires_at // W + 1) * W`` for the bucket width ``W``), or ``k`` for content kept forever
    (ttl None). Every bucket key of a shard has the shard's tag, hence its slot: one script per node
    still reads all of them. A bucket key gets ``EXPIREAT end + margin`` (``margin = min(W, 60 s)``:
    room for the writers' and the server's clocks to differ) as it is written (NX, and not again
    by a client that saw it get one), so once the TTLs
    pass, the index keys disappear on their own; nothing sweeps members. An entry outlives its
    document by less than ``W + margin``; a lookup reads only buckets that end after now, and the
    engine fetches every candidate's record, which has expired with its document.
``W``
    :func:`bucket_width`: a quarter of the longest finite ttl of the store's content types
    (``redis.index_bucket_seconds`` overrides it): news 7 days and others 30 days give 7.5 days,
    and a news entry stays at most 7.5 days past its expiry. A lookup reads, per index key, the
    buckets of the ttl classes in use only (:meth:`KeyLayout.lookup_buckets`): news alone, one or
    two; the kept bucket only once something kept was filed; every class configured, the kept
    one and 5 or 6 timed ones. Writers and readers must agree on ``W`` (they share the
    ttl settings); after changing it, ``neardup store migrate`` re-files the keys of the old width
    (and the unbucketed ``P:{i<S>}`` keys of the layout before buckets, whose 17-byte members
    carried their own expiry).

Classes in use
    A writer adds a ttl class to every class set (``P:{g<n>}c``, one beside each generation
    marker, so every master holds some) before it files the first entry of that class; the
    scripts read the set on their node, atomically with the index, and compute the buckets of the
    classes it holds. So an entry is never in a bucket its node's scripts do not read, whichever
    worker filed it and whatever that worker knew. A store stamped by this layout gets ``v`` in
    its sets as it is stamped; a store without it (written before classes were registered) has
    every configured class registered by the first client to open it, and a node holding no set
    reads every live bucket, as before.

Layout stamp
    ``index_shards`` and ``W`` decide every index key's name, so a client with another shard count
    or width would look for every entry in keys nobody wrote and find nothing. The store's first
    client stamps them (``P:{g0}l``, SET NX); a client whose settings give another layout is refused
    as it opens (``StoreLayoutError``), except ``neardup store migrate`` for another width, which
    re-files the entries and then stamps its own.

Why sorted sets and shards instead of one set per index key: most LSH band keys are held by one
document only, and a Redis key costs about 100-150 bytes before its first member. Sharded listpack
sorted sets cost about 17 bytes per entry. Size ``index_shards`` near ``live entries / (64 * live
buckets)`` so that bucket keys hold enough entries to spread a key's own cost (above, and an
entry in the expires dictionary) and stay well under ``zset-max-listpack-entries``
(128 by default; above it a key switches to the skiplist encoding, about 100 bytes per member). The
default, 2**19, suits about half a million live documents of 64 keys each (38 bands and the
sentence keys of excerpts) in one or two live buckets; a million fill its keys with 111 entries
and an eighth of them turn into skiplists, where 2**20 keeps them at 56 (docs/measurements.md). Changing
``index_shards`` moves every index key to another shard: set it before the store fills (``neardup
store migrate`` re-files other layouts and widths, not another shard count). A lookup scans its
bucket keys' listpacks, so fewer members a key also make lookups cheaper (1.6 us at 8, 3.5 us at
78: bench/redis_lookup.py), and each bucket a lookup reads adds a ZRANGE (about 1.3 us at 8
members; 7 buckets cost 3.2-4.4x one, docs/measurements.md): the price of whole-key expiry, and why the
width is not smaller.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from neardup.storage.base import REF_BYTES, doc_ref, fmix64

DOC_DIGEST_BYTES = REF_BYTES
CHECK_BYTES = 5
MEMBER_BYTES = CHECK_BYTES + DOC_DIGEST_BYTES
DEFAULT_SHARDS = 1 << 19
KEPT = 0  # the bucket "end" of entries kept forever (key suffix ``k``)
# how long a bucket key outlives its bucket at most: room for the clocks of writers and server to differ
MAX_MARGIN = 60
# the layout before buckets: one key per shard, members check + expiry (u32, NEVER: kept) + ref
LEGACY_EXPIRY_BYTES = 4
LEGACY_MEMBER_BYTES = CHECK_BYTES + LEGACY_EXPIRY_BYTES + DOC_DIGEST_BYTES
NEVER = 0xFFFFFFFF


def bucket_width(ttls: Iterable[int | None]) -> int:
    """The bucket width W (seconds) for content types of these ttls: a quarter of the longest finite
    one, at least a second (see the module docstring). No finite ttl: a day (no timed entries)."""
    finite = [t for t in ttls if t is not None and t > 0]
    return max(1, -(-max(finite) // 4)) if finite else 86_400


def _b64(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def doc_digest(doc_id: str) -> bytes:
    """The document's 8-byte ref (:func:`neardup.storage.base.doc_ref`): its keys' hash tag."""
    return doc_ref(doc_id)


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

    def __init__(self, prefix: str = "nd", index_shards: int = DEFAULT_SHARDS, bucket_seconds: int = 86_400) -> None:
        """``prefix``: every key's first part; ``index_shards``: shards of the index; ``bucket_seconds``: W."""
        if not 1 <= index_shards <= 1 << 24:
            raise ValueError("index_shards must be between 1 and 2**24")
        if bucket_seconds < 1:
            raise ValueError("the index bucket width must be at least one second")
        self.bucket_seconds = bucket_seconds
        self.margin = min(bucket_seconds, MAX_MARGIN)
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

    def class_keys(self, count: int) -> list[bytes]:
        """The sets of ttl classes in use, one beside each generation marker (its slot): every
        master holding index keys holds one, and its scripts read only the classes' buckets."""
        return [key + b"c" for key in self.marker_keys(count)]

    # -- index -------------------------------------------------------------------------------
    def index_slots(self, keys: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]:
        """(shard, check as a 40-bit integer) of many index keys (see the module docstring)."""
        k = fmix64(keys.astype(np.uint64))
        shard = ((k & np.uint64(0xFFFFFF)) % np.uint64(self.index_shards)).astype(np.int64)
        return shard, k >> np.uint64(24)

    def index_slot(self, index_key: int) -> IndexSlot:
        """Shard and member check of one index key."""
        shard, check = self.index_slots(np.array([index_key], dtype=np.uint64))
        return IndexSlot(int(shard[0]), int(check[0]).to_bytes(CHECK_BYTES, "big"))

    def shard_key(self, shard: int) -> bytes:
        """The shard's key in the layout before buckets (read by ``neardup store migrate`` only)."""
        return self.prefix + b"{i%x}" % shard

    def bucket_key(self, shard: int, end: int) -> bytes:
        """The sorted set of one shard's entries in the bucket ending at ``end`` (:data:`KEPT`: kept forever)."""
        return self.shard_key(shard) + bucket_suffix(end)

    def bucket_end(self, expires_at: int | None) -> int:
        """The end of the bucket an entry expiring at ``expires_at`` goes to (None: :data:`KEPT`)."""
        if expires_at is None:
            return KEPT
        w = self.bucket_seconds
        return (expires_at // w + 1) * w

    def live_buckets(self, now: int, longest_ttl: int) -> list[int]:
        """Every bucket a lookup at ``now`` reads: kept, then each timed one that ends after ``now``
        and can hold an entry written up to now (``longest_ttl`` ahead, with room for clocks):
        every class's, where a node knows no classes in use."""
        return self.lookup_buckets(now, [None, longest_ttl])

    def lookup_buckets(self, now: int, ttls: Iterable[int | None]) -> list[int]:
        """Every bucket an entry of these ttl classes written up to now can stand in, for a lookup
        at ``now``: kept, if a ttl is None, then each finite ttl's buckets from now's to that of
        ``now + ttl`` (with room for clocks). lua/live_hits.lua's ``class_buckets`` does these sums."""
        return self._buckets(ttls, lambda ttl: (now, now + ttl + self.margin))

    def write_buckets(self, now: int, ttls: Iterable[int | None], lag: int) -> list[int]:
        """The buckets an entry written within ``lag`` seconds of ``now`` goes to, for entries of
        these ttls: where a record filed by another worker since this one's lookup stands (the
        race re-check reads these, not every live bucket). Kept, if a ttl is None, then each
        finite ttl's bucket, and the next one when ``lag`` reaches across a bucket's end."""
        return self._buckets(ttls, lambda ttl: (now - lag + ttl, now + lag + ttl))

    def _buckets(self, ttls: Iterable[int | None], expiring: Callable[[int], tuple[int, int]]) -> list[int]:
        """Kept, if a ttl is None, and for each finite ttl every bucket from that of the first
        expiry ``expiring(ttl)`` gives to that of the last, sorted."""
        ends: set[int] = set()
        for ttl in ttls:
            if ttl is None or ttl <= 0:
                ends.add(KEPT)
                continue
            first, last = expiring(ttl)
            ends.update(range(self.bucket_end(first), self.bucket_end(last) + 1, self.bucket_seconds))
        return sorted(ends)

    def shard_slots(self) -> npt.NDArray[np.int64]:
        """The cluster slot of every index shard (``i<shard in hex>`` tags), computed once."""
        if self._shard_slots is None:
            self._shard_slots = crc16_slots([b"i%x" % s for s in range(self.index_shards)])
        return self._shard_slots

    @staticmethod
    def member(check: bytes, digest: bytes) -> bytes:
        """An index entry: check, the document's ref."""
        return check + digest

    @staticmethod
    def lex_range(check: bytes) -> tuple[bytes, bytes]:
        """Inclusive ZRANGE BYLEX bounds of every member starting with ``check``."""
        return b"[" + check, b"[" + check + b"\xff" * DOC_DIGEST_BYTES


def bucket_suffix(end: int) -> bytes:
    """The key suffix of the bucket ending at ``end``: its hex, or ``k`` (kept forever)."""
    return b"k" if end == KEPT else b"%x" % end


__all__ = ["CHECK_BYTES", "KEPT", "LEGACY_MEMBER_BYTES", "MEMBER_BYTES", "NEVER", "IndexSlot", "KeyLayout",
           "bucket_suffix", "bucket_width", "crc16_slots", "doc_digest"]
