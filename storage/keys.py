"""Redis key layout of the fingerprint store, designed for Redis Cluster hash slots.

Every key starts with the configured prefix ``P`` (``RedisSettings.key_prefix``, default ``nd``)
and a hash tag ``{...}`` that decides its slot. Binary parts inside tags are base64url (no padding),
so a tag never contains ``{`` or ``}`` and is never empty.

=====================  ===============  =============================  ================================
key                    type (owner)     value                          expiry
=====================  ===============  =============================  ================================
``P:{d<D>}r``          string (add)     packed FingerprintRecord, id   EX ttl(content type); none when
                                        first (see storage.redis)      the type's ttl is None
``P:{d<D>}v``          string           packed DecisionRecord          EX ttl(decision's content type);
                       (put_decisions)                                 none when None
``P:{x<H>}``           string           id of the document that        EX ttl(content type), set by the
                       (claim_exact)    claimed the hash               winning SET NX; none when None
``P:{i<S>}t<T>:<B>``   sorted set       members ``C + D`` (13 bytes),  EXPIREAT end of bucket B + T +
``[.<U>]``             (add)            every score 0                  60 s, once per bucket key per call
``P:{i<S>}f``          sorted set (add) as above, ttl None             none (kept forever)
=====================  ===============  =============================  ================================

``D``
    ``blake2b(doc_id, 8 bytes)``: the document's keys (record, decision) share the tag ``{d<D>}``
    and hence one slot. Stored values carry the full id; a lookup whose id differs (a 64-bit
    collision, about 3e-4 at 1e8 live documents) is treated as absent.
``H``
    The content hash itself (16 bytes in practice), so claims are exact.
``S``, ``C``, ``U``
    Index keys are opaque bytes from the engine; ``blake2b(index_key, 16 bytes)`` gives a shard
    ``S`` (hex, one of ``index_shards``), a 5-byte check ``C`` and, for classes whose buckets span
    ``k > 1`` days, a sub-shard ``U`` in ``0..k-1`` (so a bucket key holds about one day's entries
    of its shard whatever the class). A bucket key holds the entries of every index
    key of its shard for one TTL class ``T`` (ttl in seconds) and one time bucket ``B``. One index
    key's entries are the lexicographic range ``[C, C+0xff..]`` (``ZRANGE BYLEX``); all its bucket
    keys share the tag ``{i<S>}``, so looking one index key up over every live time bucket and TTL
    class is one script call on one slot. Two index keys of one shard with the same check (about
    1e-10 per lookup) would only add a candidate, which the engine re-checks anyway.
``B``
    ``floor(now / W_T)`` in base 36 with ``W_T = max(time_bucket_seconds, ceil(T / 4))``: about five
    live buckets per class however long its ttl, each expiring as a whole. Wider buckets mean
    fewer keys per lookup (each is one ZRANGE inside the script, ~1.5 us) but entries that stay in
    memory up to ``W_T`` past their ttl (their records are gone at the ttl, so queries skip them).

Why sorted sets and shards instead of one set per index key: most LSH band keys are held by one
document only, and a Redis key costs about 100-150 bytes before its first member. Measured with 24
index keys per document (bench/store_memory.py): one integer set per index key took 2,629 bytes
per document for the index (50,000 documents); these sharded listpack sorted sets take 485 (20.2
per entry, 1,000,000 documents, about 45 members per key). Size ``index_shards`` near ``documents per day *
index keys per document / 64`` so that bucket keys stay well under
``zset-max-listpack-entries`` (128 by default; a key above it switches to the skiplist encoding, about
100 bytes per member). The default, 2**19, suits about 1.4 million documents a day at 24 keys each.
TTL-less classes have one key per shard that grows for ever, as their entries do.

Expiry is exact per entry even though buckets expire as a whole: a query only reports documents
whose record key still exists, and the record key carries the content type's own ttl.
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Iterable, Mapping
from typing import NamedTuple

DOC_DIGEST_BYTES = 8
CHECK_BYTES = 5
MEMBER_BYTES = CHECK_BYTES + DOC_DIGEST_BYTES
DEFAULT_SHARDS = 1 << 19
MAX_LIVE_BUCKETS = 4  # per TTL class: a lookup reads about 5 bucket keys per class, whatever the ttl
DAY = 86_400
EXPIRY_MARGIN = 60  # seconds, covers clock skew between workers and servers

_DOC_PERSON = b"neardup-doc"
_IDX_PERSON = b"neardup-idx"


def _b64(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def _b36(n: int) -> bytes:
    if n < 0:
        raise ValueError("negative time bucket")
    digits = b"0123456789abcdefghijklmnopqrstuvwxyz"
    out = bytearray()
    while True:
        n, r = divmod(n, 36)
        out.append(digits[r])
        if n == 0:
            return bytes(reversed(out))


def doc_digest(doc_id: str) -> bytes:
    return hashlib.blake2b(doc_id.encode("utf-8"), digest_size=DOC_DIGEST_BYTES, person=_DOC_PERSON).digest()


def ttl_class(ttl: int | None) -> bytes:
    """Stable code of a TTL class; all workers must agree on the TTL values."""
    return b"f" if ttl is None else b"t%d" % ttl


def ttl_classes(by_type: Mapping[str, int | None], default: int | None) -> list[int | None]:
    """Every ttl a record can get under a TTLPolicy (types not listed fall back to the default)."""
    found: set[int | None] = set(by_type.values())
    found.add(by_type.get("default", default))
    return sorted(found, key=lambda t: (t is None, t or 0))


class IndexSlot(NamedTuple):
    shard: int  # the hash tag: every bucket key of one index key lives in this shard's slot
    spread: int  # picks the sub-shard in classes whose buckets are wider than time_bucket_seconds
    check: bytes  # member prefix that tells this index key's entries from its shard-mates'


class KeyLayout:
    """Builds every key name of one store. Pure: no I/O, so slot tests need no server."""

    def __init__(
        self,
        prefix: str = "nd",
        index_shards: int = DEFAULT_SHARDS,
        time_bucket_seconds: int = 86_400,
    ) -> None:
        if index_shards < 1:
            raise ValueError("index_shards must be at least 1")
        if time_bucket_seconds < 1:
            raise ValueError("time_bucket_seconds must be at least 1")
        if "{" in prefix or "}" in prefix:
            raise ValueError("key_prefix must not contain '{' or '}' (it would move the hash tag)")
        self.prefix = prefix.encode("utf-8") + b":"
        self.index_shards = index_shards
        self.time_bucket_seconds = time_bucket_seconds

    # -- per document ------------------------------------------------------------------------
    def doc_tag(self, digest: bytes) -> bytes:
        return self.prefix + b"{d" + _b64(digest) + b"}"

    def record_key(self, digest: bytes) -> bytes:
        return self.doc_tag(digest) + b"r"

    def decision_key(self, digest: bytes) -> bytes:
        return self.doc_tag(digest) + b"v"

    def doc_keys(self, doc_id: str) -> tuple[bytes, bytes]:
        d = doc_digest(doc_id)
        return self.record_key(d), self.decision_key(d)

    # -- exact claims ------------------------------------------------------------------------
    def claim_key(self, content_hash: bytes) -> bytes:
        return self.prefix + b"{x" + _b64(content_hash) + b"}"

    # -- index buckets -----------------------------------------------------------------------
    def index_slot(self, index_key: bytes) -> IndexSlot:
        h = hashlib.blake2b(index_key, digest_size=16, person=_IDX_PERSON).digest()
        spread, shard = divmod(int.from_bytes(h[8:], "big"), self.index_shards)
        return IndexSlot(shard, spread, h[:CHECK_BYTES])

    def sub_shards(self, ttl: int | None) -> int:
        """Bucket keys per shard and time bucket: one per started day of bucket width, so a key
        holds about a day's entries of its shard whatever the class's ttl."""
        return 1 if ttl is None else math.ceil(self.bucket_width(ttl) / DAY)

    def bucket_width(self, ttl: int) -> int:
        return max(self.time_bucket_seconds, math.ceil(ttl / MAX_LIVE_BUCKETS))

    def time_bucket(self, ttl: int | None, now: float) -> int | None:
        return None if ttl is None else int(now // self.bucket_width(ttl))

    def bucket_expire_at(self, ttl: int, bucket: int) -> int:
        """Absolute expiry of a bucket key: its end plus the ttl, so no entry outlives its key."""
        return (bucket + 1) * self.bucket_width(ttl) + ttl + EXPIRY_MARGIN

    def index_tag(self, slot: IndexSlot) -> bytes:
        return self.prefix + b"{i%x}" % slot.shard

    def _suffix(self, ttl: int | None, bucket: int | None) -> tuple[bytes, int]:
        """The part of a bucket key after the tag, and its sub-shard count."""
        if bucket is None:
            return ttl_class(ttl), 1
        return ttl_class(ttl) + b":" + _b36(bucket), self.sub_shards(ttl)

    @staticmethod
    def _with_sub(key: bytes, slot: IndexSlot, subs: int) -> bytes:
        return key if subs == 1 else key + b".%x" % (slot.spread % subs)

    def bucket_key(self, slot: IndexSlot, ttl: int | None, bucket: int | None) -> bytes:
        suffix, subs = self._suffix(ttl, bucket)
        return self._with_sub(self.index_tag(slot) + suffix, slot, subs)

    def live_buckets(self, ttl: int | None, now: float) -> list[int | None]:
        """Time buckets of a class that may hold live entries, allowing EXPIRY_MARGIN of clock skew
        between the writer and this reader either way."""
        if ttl is None:
            return [None]
        width = self.bucket_width(ttl)
        # an entry written at t lives until t + ttl, so nothing before now - ttl can be alive
        first = max(0, int((now - ttl - EXPIRY_MARGIN) // width))
        last = int((now + EXPIRY_MARGIN) // width)
        return list(range(first, last + 1))

    def live_suffixes(self, ttls: Iterable[int | None], now: float) -> list[tuple[bytes, int]]:
        """Computed once per query call, shared by all its index keys."""
        return [self._suffix(t, b) for t in ttls for b in self.live_buckets(t, now)]

    def live_bucket_keys(
        self,
        slot: IndexSlot,
        ttls: Iterable[int | None],
        now: float,
        suffixes: list[tuple[bytes, int]] | None = None,
    ) -> list[bytes]:
        tag = self.index_tag(slot)
        found = self.live_suffixes(ttls, now) if suffixes is None else suffixes
        return [self._with_sub(tag + suffix, slot, subs) for suffix, subs in found]

    @staticmethod
    def member(check: bytes, digest: bytes) -> bytes:
        return check + digest

    @staticmethod
    def lex_range(check: bytes) -> tuple[bytes, bytes]:
        """Inclusive ZRANGE BYLEX bounds of every member starting with ``check``."""
        return b"[" + check, b"[" + check + b"\xff" * DOC_DIGEST_BYTES
