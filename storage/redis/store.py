"""``redis://``, ``rediss://`` and ``rediscluster://``: the fingerprint store on Redis, a window at a time.

Uses redis-py's own asyncio clients (``redis.asyncio.Redis``, ``redis.asyncio.cluster.RedisCluster``).
Key layout and expiry policy: :mod:`neardup.storage.redis.keys`. Observable semantics are those of
:class:`neardup.storage.memory.MemoryFingerprintStore` (tests/contract proves it).

One store call is one Lua script call per node that holds any of its keys, sent to all nodes at
once: the client's cost does not grow with a command per document, and the round trips do not
grow with the window. The scripts declare ``allow-cross-slot-keys`` (Redis >= 7.0): a script may
touch keys of many slots as long as the node serves them all, which the grouping by node
guarantees. Index lookups and insertions travel as one packed binary argument per node (shard,
check, ref), and the script builds the bucket key names itself, so that the client encodes three
arguments per node instead of one per index key.

* ``lookup``: per node, GET of the decisions, claims, states and generation markers on it, and
  ZRANGE BYLEX over every live bucket of every index key on it (the kept bucket and the timed ones
  ending after now: :meth:`KeyLayout.live_buckets`).
* ``commit``: per node, claims (GET, then SET NX-like in the script: atomic per key), then, once
  the owners are known, the records of the winners and their index entries (ZADD, and EXPIREAT NX
  for each timed bucket key this client has not yet seen get its expiry; it forgets them all on
  any failure). Records are written before index entries in the same script, so whoever finds an
  entry can read its record.
* ``lookup`` and the commit's race recheck read the buckets of the ttl classes in use only (the
  class sets, ``KeyLayout.class_keys``); a store's index layout is stamped by its first client and
  checked by every other as it opens (``StoreLayoutError``).
* ``migrate``: re-files the index keys of an older layout (unbucketed shards, buckets of another
  width) into the buckets of this store's width, one script per node (``neardup store migrate``).
* Retries: one redis-py ``Retry`` (exponential backoff, capped) around each call, for connection
  loss, CLUSTERDOWN, TRYAGAIN, MOVED/ASK (the slot map is re-read), READONLY and timeouts, for up
  to about ``retry_seconds``. Every script is idempotent, so repeating one that did run is
  harmless. Authentication and ACL refusals raise :class:`StoreAuthError` at once; undecodable
  values :class:`StoreCorruptError`; retries running out :class:`StoreUnavailableError`.
* Generation markers: a store is stamped with a random generation at first use, under 64 keys
  spread over the slots; every lookup reads the markers on each node it visits, so a node (or the
  whole cluster) restarted empty is detected (:class:`StoreLostDataError`) instead of deciding
  against a store that forgot everything.

Passwords come from the keyword options or the URL and never appear in logs or errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import secrets
import struct
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np
import numpy.typing as npt
import redis.asyncio as aioredis
from redis import exceptions as rex
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.cluster import key_slot

from neardup.storage.base import (
    REF_BYTES,
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

# bench/store_memory.py writes the older formats with these two helpers, imported from here
from neardup.storage.codec import (  # noqa: F401
    _put_bytes,
    _put_int,
    decode_decision,
    decode_record,
    decode_state,
    encode_decision,
    encode_record,
    encode_state,
)
from neardup.storage.errors import (
    NOTICE_LOGGER,
    StoreAuthError,
    StoreError,
    StoreLayoutError,
    StoreLostDataError,
    StoreUnavailableError,
)
from neardup.storage.redact import redact_url
from neardup.storage.redis.keys import KEPT, NEVER, KeyLayout, bucket_suffix, bucket_width, doc_digest

log = logging.getLogger(__name__)
notice = logging.getLogger(NOTICE_LOGGER)
T = TypeVar("T")

GENERATION_MARKERS = 64

_HIT = np.dtype([("row", ">u4"), ("ref", f"V{REF_BYTES}")])  # V: all bytes, trailing zeros too

# Errors that mean "the cluster is moving or a node is away", not "the request is wrong".
RETRYABLE: tuple[type[BaseException], ...] = (
    rex.ConnectionError,  # includes MaxConnectionsError, BusyLoadingError
    rex.TimeoutError,
    rex.ClusterDownError,  # includes MasterDownError
    rex.TryAgainError,
    rex.AskError,  # includes MovedError
    rex.ReadOnlyError,
    rex.RedisClusterException,  # includes SlotNotCoveredError; "no reachable node" while one restarts
    OSError,
    asyncio.TimeoutError,
)
AUTH_ERRORS: tuple[type[BaseException], ...] = (
    rex.AuthenticationError,
    rex.AuthenticationWrongNumberOfArgsError,
    rex.NoPermissionError,
)

LUA = Path(__file__).resolve().parent / "lua"  # the scripts, as .lua files (package data)


def _lua(name: str, **values: int) -> bytes:
    """The script ``lua/NAME.lua``, each ``$KEY`` in it replaced by ``values[KEY]``."""
    body = (LUA / f"{name}.lua").read_bytes()
    for key, value in values.items():
        body = body.replace(b"$" + key.encode(), str(value).encode())
    if b"$" in body.replace(b"'$'", b""):
        raise RuntimeError(f"lua/{name}.lua: a $placeholder was left unfilled")  # an invariant
    return body


# Redis refuses declared keys of several slots (CROSSSLOT) even with allow-cross-slot-keys; the flag
# lets a script touch keys of several slots of its node that it was not given as KEYS. So the
# scripts below take no KEYS: ARGV[1] is a count n, ARGV[2..n+1] the keys (K), the rest the
# arguments (A). The grouping by node makes every key local to the node a script runs on.
_HEAD = _lua("head")

# live_hits: the members filed under the 5-byte ``check`` in every bucket (key suffix) of one shard
# tag, each appended to ``hits`` as row u32 + ref (8 B): the lookup and the write script's recheck.
# split: a comma-separated list; bucket_suffix: a bucket's key suffix from its end (0: kept, ``k``).
# class_buckets: the buckets of the ttl classes in use that a lookup or a recheck reads.
_LIVE_HITS = _lua("live_hits")

# The index scripts' A[3..8]: which buckets they read (class_buckets): now, the bucket width, the
# margin, the recheck's lag (LOOKUP: a lookup), the bucket suffixes to read where the node knows
# no classes (comma-separated), and a count r; then the r class sets on the node.

# K: plain keys to GET. A[1]: key prefix; A[2]: lookups, 13 bytes each, big-endian: row u32, shard
# u32, check (5 B); A[3..8+r]: as above. Returns the GETs, then one blob of hits: row u32 + ref
# (8 B) per member found, then what the node's class set holds: 'v' and the classes,
# comma-separated ('' where it knows none).
_LOOKUP_LUA = _HEAD + _LIVE_HITS + _lua("lookup")

# K: claim keys. A: "id" then ttl (0 = none) per key. Returns the owner per key.
_CLAIM_LUA = _HEAD + _lua("claim")

# K: keys to SET. A[1]: key prefix; A[2]: index entries, 25 bytes each, big-endian: shard u32,
# bucket end u32 (0: kept), member (check 5 B, ref 8 B), recheck row u32 (NO_RECHECK: none; plus
# EXPIRY_SET: the client knows the bucket key has its expiry, so the script sets none);
# A[3..8+r]: as above (A[5], the margin, is also what a bucket key outlives its end by); then
# value and ttl (0 = none) per key. Values are written before the
# index entries. An entry with a recheck row is first looked up as the lookup script does (the
# race check, folded in: the members already under its check, whoever wrote them); the script
# returns those hits, row u32 + ref (8 B) each. Each timed bucket key written gets EXPIREAT its
# end + margin (NX: once): the whole key goes once its entries are dead, so nothing sweeps members.
NO_RECHECK = 0x7FFFFFFF
EXPIRY_SET = 0x80000000  # the row's top bit: this client saw the entry's bucket key get its expiry
LOOKUP = -1  # the lag argument of a lookup's class_buckets (lua/live_hits.lua): not a recheck
# a call that reads no index: class_buckets' arguments (never used), and no class sets
_NO_BUCKETS = (0, 1, 0, LOOKUP, b"", 0)
# the class sets' member that says "this store registers its ttl classes" (written as it is stamped)
CLASSES_KNOWN = b"v"
_WRITE_LUA = _HEAD + _LIVE_HITS + _lua("write", NO_RECHECK=NO_RECHECK, EXPIRY_SET=EXPIRY_SET)

# K: keys to delete; A[1]: key prefix; A[2]: kept-bucket members to remove (shard u32 + member 13
# B); A[3..]: per key, the value it must hold ('' = any). Returns 1/0 per key. The archive's only write.
_FORGET_LUA = _HEAD + _lua("forget")

# K: index keys of an older layout; A[1]: bucket width; A[2]: margin; A[3]: now. Returns
# {entries moved, entries dropped as expired} (lua/migrate.lua).
_MIGRATE_LUA = _HEAD + _LIVE_HITS + _lua("migrate", NEVER=NEVER)

# KEYS[1]: a state key; ARGV[1]: expected version (0: absent), ARGV[2]: the new value. 1 if written.
_CAS_LUA = _lua("cas")

_SCRIPTS = {hashlib.sha1(body).hexdigest(): body
            for body in (_LOOKUP_LUA, _CLAIM_LUA, _WRITE_LUA, _CAS_LUA, _FORGET_LUA, _MIGRATE_LUA)}
_LOOKUP_SHA = hashlib.sha1(_LOOKUP_LUA).hexdigest()
_CLAIM_SHA = hashlib.sha1(_CLAIM_LUA).hexdigest()
_WRITE_SHA = hashlib.sha1(_WRITE_LUA).hexdigest()
_CAS_SHA = hashlib.sha1(_CAS_LUA).hexdigest()
_FORGET_SHA = hashlib.sha1(_FORGET_LUA).hexdigest()
_MIGRATE_SHA = hashlib.sha1(_MIGRATE_LUA).hexdigest()


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """What :meth:`RedisFingerprintStore.migrate` did."""

    keys: int  # index keys of an older layout re-filed, then deleted
    moved: int  # entries re-filed into this store's buckets
    dropped: int  # entries already expired, not re-filed
    bucket_seconds: int  # the width they were re-filed at


def _count_hits(blob: bytes, found: list[Candidates]) -> None:
    """Add a script's hits (row u32 + ref 8 B each, ``_LIVE_HITS``) to the candidates of their rows."""
    hits = np.frombuffer(blob, dtype=_HIT)
    for row, ref in zip(hits["row"].tolist(), hits["ref"].tolist(), strict=True):
        found[row][ref] = found[row].get(ref, 0) + 1


# -- connection options ------------------------------------------------------------------------
def _secret(value: Any) -> str | None:
    """Accept a plain string or a pydantic SecretStr without importing pydantic."""
    if value is None:
        return None
    getter = getattr(value, "get_secret_value", None)
    return str(getter() if callable(getter) else value)


def parse_cluster_url(url: str) -> tuple[list[tuple[str, int]], str | None, str | None]:
    """``rediscluster://[user:pass@]H:P[,H:P...][?password=..]`` -> (startup nodes, username, password)."""
    rest = url.split("://", 1)[1]
    rest, _, query = rest.partition("?")
    username = password = None
    if "@" in rest:
        creds, rest = rest.rsplit("@", 1)
        user, _, pw = creds.partition(":")
        username, password = unquote(user) or None, unquote(pw) or None
    params = parse_qs(query)
    password = password or next(iter(params.get("password", [])), None)
    username = username or next(iter(params.get("username", [])), None)
    rest = rest.split("/", 1)[0]
    nodes: list[tuple[str, int]] = []
    for part in rest.split(","):
        part = part.strip()
        if not part:
            continue
        parsed = urlsplit("//" + part)
        if not parsed.hostname:
            raise ValueError(f"bad node {part!r} in {redact_url(url)}")
        nodes.append((parsed.hostname, parsed.port or 6379))
    if not nodes:
        raise ValueError(f"{redact_url(url)}: no HOST:PORT given")
    return nodes, username, password


def _auth_cause(exc: BaseException | None) -> BaseException | None:
    """The authentication or ACL refusal behind ``exc`` (the cluster client wraps it), if any."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, AUTH_ERRORS) or (isinstance(exc, rex.ResponseError)
                                            and (str(exc).startswith(("WRONGPASS", "NOPERM", "NOAUTH"))
                                                 or "can't run this command" in str(exc))):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


# replies of a node that is moving, failing over, loading or running a long script: worth the same
# call again later. BUSY (a script past busy-reply-threshold) is safe to retry because every script
# here is idempotent: a claim held by the same id reads as won, a write sets the same values.
_TRANSIENT_REPLIES = ("MOVED", "ASK", "non local", "CROSSSLOT", "cluster is down", "CLUSTERDOWN", "TRYAGAIN",
                      "READONLY", "LOADING", "MASTERDOWN", "BUSY ")


# how long before or after this commit another worker may have filed a record the re-check must
# see: a window's lookup-to-commit time and the writers' clocks, with room to spare
RECHECK_LAG = 600


class _Retryable(Exception):
    """A node asked us to come back (moved slots, a script it lacks): retried with backoff."""


@dataclass(slots=True)
class _NodeWork:
    """What one script call carries to one node."""

    keys: list[bytes] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)  # caller's index per key
    argv: list[bytes | str | int] = field(default_factory=list)
    blob: list[npt.NDArray[Any]] = field(default_factory=list)
    classes: list[bytes] = field(default_factory=list)  # the node's sets of ttl classes in use


class RedisFingerprintStore:
    """Fingerprint store on one Redis server or a Redis Cluster (see the module docstring)."""

    def __init__(
        self,
        url: str,
        ttl: TTLPolicy | None = None,
        *,
        password: Any = None,
        username: str | None = None,
        tls: bool = False,
        tls_ca_file: str | None = None,
        max_connections: int = 64,
        key_prefix: str = "nd",
        index_shards: int | None = None,
        index_bucket_seconds: int | None = None,
        retry_seconds: float = 30.0,
        socket_timeout: float = 5.0,
        **unknown: Any,
    ) -> None:
        """Options as in ``RedisSettings``; the password may also come in the URL."""
        if unknown:
            raise TypeError(f"unknown Redis store options: {sorted(unknown)}")
        scheme = url.split("://", 1)[0]
        if scheme not in {"redis", "rediss", "rediscluster"}:
            raise ValueError(f"not a Redis URL: {redact_url(url)}")
        self.url = redact_url(url)
        self._raw_url = url
        self.cluster = scheme == "rediscluster"
        self.ttl = ttl or TTLPolicy(by_type={})
        # the ttls an entry can get: each type's, and the default unless the types name one
        ttls = [*self.ttl.by_type.values(), *(() if "default" in self.ttl.by_type else (self.ttl.default,))]
        self.layout = KeyLayout(prefix=key_prefix, index_shards=index_shards or KeyLayout().index_shards,
                                bucket_seconds=index_bucket_seconds or bucket_width(ttls))
        # the longest a timed entry written now can live: how far ahead a lookup reads buckets
        self._longest_ttl = max((t for t in ttls if t is not None and t > 0), default=0)
        self._ttls = ttls
        self._password = _secret(password)
        self._username = username
        self._tls = tls or scheme == "rediss"
        self._tls_ca_file = tls_ca_file
        self._max_connections = max_connections
        self._socket_timeout = socket_timeout
        # one policy for every call: exponential backoff from 50 ms, capped at 1 s, about
        # retry_seconds in all
        self._retry_seconds = retry_seconds
        self._retry_backoff = ExponentialBackoff(cap=1.0, base=0.05)
        self._retry = Retry(self._retry_backoff, max(1, math.ceil(retry_seconds / 1.0) + 5),
                            supported_errors=(*RETRYABLE, _Retryable))  # type: ignore[arg-type]
        self._client: Any = None
        self._prefix = key_prefix.encode("utf-8") + b":"
        self._generation: bytes | None = None
        self._markers = self.layout.marker_keys(GENERATION_MARKERS)
        self._marker_slots = [key_slot(k) for k in self._markers]
        self._class_keys = self.layout.class_keys(GENERATION_MARKERS)  # beside the markers: their slots
        self._layout_key = self._markers[0] + b"l"  # the index layout the store was written in: marker 0's slot
        self._migrating = False
        self._registered: set[int] = set()  # the ttl classes this client has registered (0: kept)
        # bucket end -> which shards' bucket keys this client saw get their expiry (its own write
        # script set it, or found it set): the next entry there needs no EXPIREAT. Forgotten on any
        # failure (a failover can lose the write that set it) and once the bucket has ended.
        self._expiring: dict[int, npt.NDArray[np.bool_]] = {}
        self._evicting = False  # a primary may evict keys: every write sets its keys' expiry (NX)
        self._nodes_by_slot: list[Any] | None = None
        self._node_list: list[Any] | None = None
        self._node_index: npt.NDArray[np.int64] | None = None  # slot -> position in _node_list

    def __repr__(self) -> str:
        """The redacted URL only."""
        return f"RedisFingerprintStore({self.url!r})"

    @property
    def client(self) -> Any:
        """The redis-py client (for tests and diagnostics)."""
        if self._client is None:
            raise StoreError("store is not open")
        return self._client

    # -- lifecycle -----------------------------------------------------------------------------
    async def open(self, *, migrating: bool = False) -> None:
        """Connect, load the scripts, read (or stamp) the store's generation and its index layout;
        ``migrating`` (``neardup store migrate``): a layout of another bucket width is accepted, to
        be re-filed (:meth:`migrate`), and another shard count still refused."""
        if self._client is not None:
            return
        self._migrating = migrating
        common: dict[str, Any] = {
            "socket_timeout": self._socket_timeout,
            "socket_connect_timeout": self._socket_timeout,
        }
        if self._tls and self._tls_ca_file:
            common["ssl_ca_certs"] = self._tls_ca_file
        if self.cluster:
            nodes, user, pw = parse_cluster_url(self._raw_url)
            self._client = RedisCluster(
                startup_nodes=[ClusterNode(h, p) for h, p in nodes],
                username=user or self._username,
                password=pw or self._password,
                max_connections=self._max_connections,
                ssl=self._tls,
                **common,
            )
        else:
            base, _, query = self._raw_url.partition("?")
            params = parse_qs(query)
            password = self._password or next(iter(params.pop("password", [])), None)
            if password is not None:
                common["password"] = password
            if self._username is not None:
                common["username"] = self._username
            if self._tls:
                common["connection_class"] = aioredis.SSLConnection
            rest = "&".join(f"{k}={v}" for k, vs in params.items() for v in vs)
            pool = aioredis.BlockingConnectionPool.from_url(
                base + ("?" + rest if rest else ""), max_connections=self._max_connections,
                timeout=self._socket_timeout, **common)
            self._client = aioredis.Redis(connection_pool=pool)
        try:
            await self._call("open", self._open)
        except BaseException:
            await self.close()
            raise

    async def _open(self) -> None:
        if self.cluster:
            await self.client.initialize()
            self._nodes_by_slot = self._node_index = None
        for node in self._primaries():
            for body in _SCRIPTS.values():
                await self._on(node, "SCRIPT", "LOAD", body)
        await self._stamp_generation()
        self._registered = set()
        self._expiring.clear()
        await self._check_eviction()
        await self._know_classes()
        await self._check_layout()

    async def _check_eviction(self) -> None:
        """A primary whose ``maxmemory-policy`` evicts keys loses index entries and records
        without a word (say so), and may evict a bucket key that a later entry makes again: this
        client then never skips a key's EXPIREAT (a key made again without one would never go)."""
        policies = set()
        for node in self._primaries():
            policies.add(str((await self._on(node, "INFO", "memory")).get("maxmemory_policy", "noeviction")))
        self._evicting = policies != {"noeviction"}
        if self._evicting:
            notice.warning("%s: maxmemory-policy %s evicts keys: stored fingerprints can vanish and their duplicates "
                           "go unnoticed; set maxmemory-policy noeviction on every node", self.url,
                           "/".join(sorted(policies - {"noeviction"})))

    def _layout_stamp(self) -> bytes:
        return b"shards=%d width=%d" % (self.layout.index_shards, self.layout.bucket_seconds)

    async def _check_layout(self) -> None:
        """The index layout the store was written in (``P:{g0}l``, set by its first client; a store
        written before the stamp gets this client's) must be the one these settings read: another
        shard count or bucket width would look for every entry in other keys and find none."""
        key, node = self._layout_key, self._node_of_slot(self._marker_slots[0])
        await self._on(node, "SET", key, self._layout_stamp(), "NX")
        held = await self._on(node, "GET", key)
        if held == self._layout_stamp():
            return
        theirs = dict(part.split(b"=", 1) for part in (held or b"").split())
        shards, width = int(theirs.get(b"shards", -1)), int(theirs.get(b"width", -1))
        if shards == self.layout.index_shards and self._migrating:
            return  # another width: what migrate re-files
        raise StoreLayoutError(
            f"{self.url}: the store's index was written with {shards} shards and {width} s buckets; these settings "
            f"give {self.layout.index_shards} and {self.layout.bucket_seconds} s",
            hint=f"set redis.index_shards={shards} and redis.index_bucket_seconds={width} (a ttl change moves the "
                 "width), or re-file another width with neardup store migrate")

    async def _add_classes(self, members: Sequence[bytes]) -> None:
        """SADD ``members`` to every set of ttl classes in use (their slots: the markers')."""
        await asyncio.gather(*(self._on(self._node_of_slot(slot), "SADD", key, *members)
                               for key, slot in zip(self._class_keys, self._marker_slots, strict=True)))

    async def _know_classes(self) -> None:
        """A store written before ttl classes were registered holds entries of any configured
        class: register them all, then mark the sets as known (:data:`CLASSES_KNOWN`)."""
        held = await asyncio.gather(*(self._on(self._node_of_slot(slot), "SMEMBERS", key)
                                      for key, slot in zip(self._class_keys, self._marker_slots, strict=True)))
        if all(CLASSES_KNOWN in members for members in held):
            return
        notice.warning("%s: the store was written before its ttl classes were registered: every configured "
                       "class is registered, and lookups read all their buckets", self.url)
        await self._add_classes([str(self._ttl_class(t)).encode() for t in self._ttls])
        await self._add_classes([CLASSES_KNOWN])

    @staticmethod
    def _ttl_class(ttl: int | None) -> int:
        return 0 if ttl is None else ttl

    async def _register(self, classes: Collection[int]) -> None:
        """Add the ttl classes this client is about to file entries of to every class set, before
        any entry of them is written: a script on a node reads the buckets of the classes its set
        holds, so an entry is never where a lookup does not read."""
        new = set(classes) - self._registered
        if new:
            await self._add_classes([str(c).encode() for c in sorted(new)])
            self._registered |= new

    async def _stamp_generation(self) -> None:
        """Read the markers; stamp a new generation on an empty store; refuse a half-empty one."""
        held = await self._get_all(self._markers)
        found = {v for v in held if v is not None}
        if not found:
            # workers starting at once agree on the token that wins the first marker, then copy it
            first = self._group(self._markers[:1], self._marker_slots[:1])
            won = await self._call_nodes(_CLAIM_SHA, first, lambda w: [secrets.token_hex(8).encode(), 0])
            token = next(iter(won.values()))[0]
            # before the token is everywhere: whoever sees the whole generation sees the class sets
            await self._add_classes([CLASSES_KNOWN])
            await self._call_nodes(_CLAIM_SHA, self._group(self._markers, self._marker_slots),
                                   lambda w: [x for _ in w.keys for x in (token, 0)])
            held = await self._get_all(self._markers)
            found = {v for v in held if v is not None}
        if len(found) != 1:
            raise StoreLostDataError(f"{self.url}: the store's generation markers differ: part of the store lost "
                                     "its data")
        if None in held:
            # part of the markers unreadable while the rest agree: a failover in progress looks like this
            # for a moment (a replica being promoted), so it is retried; running workers still see a
            # real loss at their next lookup (_check_generation)
            raise StoreUnavailableError(f"{self.url}: {held.count(None)} of {len(held)} generation markers are "
                                        "missing on part of the store: a failover in progress, or that part "
                                        "lost its data")
        self._generation = found.pop()

    async def close(self) -> None:
        """Release the connections."""
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.aclose()
            except (rex.RedisError, OSError) as exc:  # closing a half-dead connection is not news
                log.debug("closing %s: %s", self.url, type(exc).__name__)

    # -- routing -------------------------------------------------------------------------------
    def _primaries(self) -> list[Any]:
        return list(self.client.get_primaries()) if self.cluster else [None]

    def _node_of_slot(self, slot: int) -> Any:
        if not self.cluster:
            return None
        if self._nodes_by_slot is None:
            mgr = self.client.nodes_manager
            self._nodes_by_slot = [mgr.slots_cache[s][0] if s in mgr.slots_cache else None for s in range(16384)]
            names = {n.name: n for n in self._nodes_by_slot if n is not None}
            self._node_list = list(names.values())
            position = {name: i for i, name in enumerate(names)}
            self._node_index = np.array([position[n.name] if n is not None else -1 for n in self._nodes_by_slot],
                                        dtype=np.int64)
        node = self._nodes_by_slot[slot]
        if node is None:
            raise rex.SlotNotCoveredError(f"slot {slot} is not covered")
        return node

    def _spread(self, work: dict[Any, _NodeWork], slots: npt.NDArray[np.int64], rows: npt.NDArray[Any]) -> None:
        """Add packed ``rows`` to the work of the node serving each row's slot (vectorised)."""
        if not self.cluster:
            work[None].blob.append(rows)
            return
        if self._node_index is None:
            self._node_of_slot(0)  # builds the slot table
        assert self._node_index is not None and self._node_list is not None
        owner = self._node_index[slots]
        if (owner < 0).any():
            raise rex.SlotNotCoveredError("a slot is not covered")
        for i in np.unique(owner).tolist():
            work[self._node_list[i]].blob.append(rows[owner == i])

    def _group(self, keys: Sequence[bytes], slots: Sequence[int] | None = None) -> dict[Any, _NodeWork]:
        work: dict[Any, _NodeWork] = defaultdict(_NodeWork)
        for i, key in enumerate(keys):
            w = work[self._node_of_slot(key_slot(key) if slots is None else slots[i])]
            w.keys.append(key)
            w.rows.append(i)
        return work

    async def _on(self, node: Any, *args: Any) -> Any:
        if node is None:
            return await self.client.execute_command(*args)
        return await self.client.execute_command(*args, target_nodes=node)

    async def _script(self, node: Any, sha: str, keys: Sequence[bytes], argv: Sequence[Any]) -> Any:
        try:
            return await self._on(node, "EVALSHA", sha, 0, len(keys), *keys, *argv)
        except rex.NoScriptError:  # a node that never saw it (new, promoted, restarted)
            return await self._on(node, "EVAL", _SCRIPTS[sha], 0, len(keys), *keys, *argv)
        except rex.ResponseError as exc:
            if _auth_cause(exc) is None and any(s in str(exc) for s in _TRANSIENT_REPLIES):
                raise _Retryable(str(exc)) from exc  # the slot map changed under us, or a failover runs
            raise

    async def _call_nodes(self, sha: str, work: dict[Any, _NodeWork],
                          argv: Callable[[_NodeWork], list[Any]]) -> dict[Any, Any]:
        nodes = list(work)
        results = await asyncio.gather(*(self._script(n, sha, work[n].keys, argv(work[n])) for n in nodes))
        return dict(zip(nodes, results, strict=True))

    async def _call(self, op: str, call: Callable[[], Awaitable[T]]) -> T:
        """Run ``call`` under the retry policy; sort failures into the store's error classes."""

        deadline = time.monotonic() + self._retry_seconds

        async def on_failure(exc: BaseException, failures: int) -> None:
            if time.monotonic() >= deadline:  # a hung node times out per attempt: bound the total too
                raise exc
            if failures == 1:  # at once, so that a wait for an unreachable store is never silent
                notice.warning("%s: %s failed (%s); retrying for up to %g s (setting redis.retry_seconds, "
                               "NEARDUP_REDIS__RETRY_SECONDS)", self.url, op, type(exc).__name__,
                               self._retry_seconds)  # fmt: skip
            # INFO: the CLI's one-line error stays one line; a worker's log (INFO) shows each retry
            log.info("%s: %s: %s; retrying in %.2fs", self.url, op, type(exc).__name__,
                     self._retry_backoff.compute(failures))
            self._expiring.clear()  # whatever failed may have lost a key's expiry with its write
            if self.cluster and self._client is not None:
                self._nodes_by_slot = self._node_index = None
                with contextlib.suppress(rex.RedisError, OSError):
                    await self.client.nodes_manager.initialize()

        try:
            # an authentication or ACL refusal is never retried: it surfaces as StoreAuthError
            return await self._retry.call_with_retry(call, on_failure, is_retryable=lambda e: _auth_cause(e) is None,
                                                     with_failure_count=True)
        except StoreError:
            raise
        except BaseException as exc:
            cause = _auth_cause(exc)
            if cause is not None:
                raise StoreAuthError(f"{self.url}: the server refused user {self._user()!r}: {cause}",
                                     hint="check redis.username / redis.password (or the URL's) and the user's "
                                          "ACL (storage/redis/acl.py)") from exc
            if isinstance(exc, (*RETRYABLE, _Retryable)):
                raise StoreUnavailableError(f"{self.url}: {op}: gave up after retrying for {self._retry_seconds:g} s "
                                            f"(redis.retry_seconds): {type(exc).__name__}: {exc}") from exc
            if isinstance(exc, rex.RedisError):
                raise StoreError(f"{self.url}: {op} failed: {type(exc).__name__}: {exc}") from exc
            raise

    def _user(self) -> str:
        if self.cluster:
            return parse_cluster_url(self._raw_url)[1] or self._username or "default"
        return unquote(urlsplit(self._raw_url).username or "") or self._username or "default"

    async def _get_all(self, keys: Sequence[bytes]) -> list[bytes | None]:
        """GET many keys of any slots: one lookup script per node."""
        out: list[bytes | None] = [None] * len(keys)
        work = self._group(keys)
        replies = await self._call_nodes(_LOOKUP_SHA, work, lambda w: [self._prefix, b"", *_NO_BUCKETS])
        for node, res in replies.items():
            for i, v in zip(work[node].rows, res, strict=False):
                out[i] = v
        return out

    # -- index packing -------------------------------------------------------------------------
    def _index_lookups(self, index_keys: IndexKeys) -> tuple[npt.NDArray[np.int64], npt.NDArray[Any]]:
        """(slot per lookup, packed lookups: row, shard, check) for every nonzero key of every row."""
        rows, cols = np.nonzero(index_keys)
        shard, check = self.layout.index_slots(index_keys[rows, cols])
        packed = np.empty(rows.shape[0], dtype=[("row", ">u4"), ("shard", ">u4"), ("check", ">u8")])
        packed["row"] = rows
        packed["shard"] = shard
        packed["check"] = check << np.uint64(24)  # its 5 bytes first
        return self.layout.shard_slots()[shard], packed.view(np.uint8).reshape(-1, 16)[:, :13]

    async def _lookup_nodes(self, keys: Sequence[bytes], index_keys: IndexKeys) -> tuple[list[bytes | None],
                                                                                         list[Candidates]]:
        """GETs of ``keys`` and index lookups of ``index_keys``, one script per node."""
        n_rows = index_keys.shape[0]
        work = self._group(keys)
        if index_keys.size:
            slots, raw = self._index_lookups(index_keys)
            self._spread(work, slots, raw)
        now = int(time.time())
        self._add_class_keys(work)
        buckets = self._bucket_args(now, LOOKUP, self._live_buckets(now))
        gets: list[bytes | None] = [None] * len(keys)
        found: list[Candidates] = [{} for _ in range(n_rows)]

        def argv(w: _NodeWork) -> list[Any]:
            return [self._prefix, np.concatenate(w.blob).tobytes() if w.blob else b"", *buckets, len(w.classes),
                    *w.classes]

        for node, res in (await self._call_nodes(_LOOKUP_SHA, work, argv)).items():
            w = work[node]
            for i, v in zip(w.rows, res, strict=False):
                gets[i] = v
            _count_hits(res[len(w.keys)], found)
            self._check_registered(res[len(w.keys) + 1])
        return gets, found

    def _add_class_keys(self, work: dict[Any, _NodeWork]) -> None:
        """Give each node's script one class set it holds (each holds every class registered; a
        node holding none reads every bucket)."""
        for key, slot in zip(self._class_keys, self._marker_slots, strict=True):
            node = self._node_of_slot(slot)
            if node in work and not work[node].classes:
                work[node].classes.append(key)

    def _bucket_args(self, now: int, lag: int, fallback: bytes) -> list[Any]:
        """The scripts' arguments for class_buckets (lua/live_hits.lua): now, the width, the
        margin, the recheck's lag (:data:`LOOKUP`: a lookup), and the buckets a node without
        known classes reads."""
        return [now, self.layout.bucket_seconds, self.layout.margin, lag, fallback]

    def _check_registered(self, found: bytes) -> None:
        """A node whose class set lacks a class this client registered (a failover that lost the
        write): register again before the next write."""
        held = set(found.split(b","))
        if CLASSES_KNOWN in held and not self._registered <= {int(c) for c in held - {CLASSES_KNOWN}}:
            log.warning("%s: a node's set of ttl classes lacks one this worker registered; registering again",
                        self.url)
            self._registered = set()

    def _live_buckets(self, now: int) -> bytes:
        """The key suffixes of every bucket of every class a lookup at ``now`` could read,
        comma-separated: where a node knows no classes (lua/live_hits.lua)."""
        return b",".join(bucket_suffix(e) for e in self.layout.live_buckets(now, self._longest_ttl))

    def _write_buckets(self, now: int) -> bytes:
        """The key suffixes of the buckets records filed in the last minutes stand in (the commit's
        race re-check: what another worker filed since this one's lookup), comma-separated."""
        return b",".join(bucket_suffix(e) for e in self.layout.write_buckets(now, self._ttls, RECHECK_LAG))

    # -- protocol ------------------------------------------------------------------------------
    def _ttl_arg(self, content_type: str) -> int:
        ttl = self.ttl.ttl(content_type)
        return 0 if ttl is None else ttl

    async def lookup(self, query: WindowQuery) -> WindowAnswer:
        """See :meth:`neardup.storage.base.FingerprintStore.lookup`."""
        ids = list(dict.fromkeys(query.doc_ids))
        keys = ([self.layout.decision_key(doc_digest(i)) for i in ids]
                + [self.layout.claim_key(h) for h in query.exact_hashes]
                + [self.layout.state_key(n) for n in query.state_names] + self._markers)

        async def call() -> tuple[list[bytes | None], list[Candidates]]:
            return await self._lookup_nodes(keys, query.index_keys)

        gets, found = await self._call("lookup", call)
        self._check_generation(gets[-len(self._markers):])
        decisions: dict[str, DecisionRecord] = {}
        for doc_id, raw in zip(ids, gets, strict=False):
            if raw is not None:
                d = decode_decision(raw)
                if d.doc_id == doc_id:  # a different id here is a digest collision: not ours
                    decisions[doc_id] = d
        k = len(ids)
        owners = [None if v is None else v.decode("utf-8", "surrogatepass")
                  for v in gets[k : k + len(query.exact_hashes)]]
        k += len(query.exact_hashes)
        states = {n: decode_state(v) for n, v in zip(query.state_names, gets[k:], strict=False) if v is not None}
        return WindowAnswer(decisions, owners, found, states)

    def _check_generation(self, held: Sequence[bytes | None]) -> None:
        if any(v != self._generation for v in held):
            missing = sum(v is None for v in held)
            raise StoreLostDataError(f"{self.url}: {missing} of {len(held)} generation markers are gone or changed "
                                     "since this worker opened the store: it lost its data")

    async def candidates(self, index_keys: IndexKeys) -> list[Candidates]:
        """See :meth:`neardup.storage.base.FingerprintStore.candidates`."""

        async def call() -> list[Candidates]:
            return (await self._lookup_nodes([], index_keys))[1]

        return await self._call("candidates", call)

    async def fetch(self, refs: Sequence[bytes]) -> dict[bytes, FingerprintRecord]:
        """See :meth:`neardup.storage.base.FingerprintStore.fetch`."""
        refs = list(dict.fromkeys(refs))
        keys = [self.layout.record_key(r) for r in refs]
        raw = await self._call("fetch", lambda: self._get_all(keys))
        found: dict[bytes, FingerprintRecord] = {}
        for ref, data in zip(refs, raw, strict=True):
            if data is not None:
                rec = decode_record(data)
                if doc_digest(rec.doc_id) == ref:
                    found[ref] = rec
        return found

    async def get_decisions(self, doc_ids: Sequence[str]) -> dict[str, DecisionRecord]:
        """See :meth:`neardup.storage.base.FingerprintStore.get_decisions`."""
        ids = list(dict.fromkeys(doc_ids))
        raw = await self._call("get_decisions", lambda: self._get_all(
            [self.layout.decision_key(doc_digest(i)) for i in ids]))
        out: dict[str, DecisionRecord] = {}
        for doc_id, data in zip(ids, raw, strict=True):
            if data is not None:
                d = decode_decision(data)
                if d.doc_id == doc_id:
                    out[doc_id] = d
        return out

    async def commit(self, claims: Sequence[Claim], records: Sequence[FingerprintRecord],
                     recheck: Recheck | None = None) -> CommitAnswer:
        """See :meth:`neardup.storage.base.FingerprintStore.commit`."""
        owners: list[str] = []
        if claims:
            keys = [self.layout.claim_key(c.content_hash) for c in claims]

            def argv(w: _NodeWork) -> list[Any]:
                c = [claims[i] for i in w.rows]
                return [x for cl in c for x in (cl.doc_id.encode("utf-8", "surrogatepass"),
                                                self._ttl_arg(cl.content_type))]

            async def call() -> list[str]:
                work = self._group(keys)  # inside the retry: a failover moves slots
                held: list[str] = [""] * len(claims)
                for node, res in (await self._call_nodes(_CLAIM_SHA, work, argv)).items():
                    for i, v in zip(work[node].rows, res, strict=True):
                        held[i] = v.decode("utf-8", "surrogatepass")
                return held

            owners = await self._call("commit", call)
        lost = {c.doc_id for c, o in zip(claims, owners, strict=True) if o != c.doc_id}
        stored = [r for r in records if r.doc_id not in lost]
        asked = recheck or {}
        found = await self._write_records(stored, [asked.get(r.doc_id) for r in stored])
        return CommitAnswer(owners, {r.doc_id: found[i] for i, r in enumerate(stored) if r.doc_id in asked})

    async def _write_records(self, records: Sequence[FingerprintRecord],
                             recheck: Sequence[Collection[int] | None]) -> list[Candidates]:
        """Store and file ``records``; the candidates found as each record with keys to
        ``recheck`` was filed, under those keys."""
        found: list[Candidates] = [{} for _ in records]
        if not records:
            return found
        now = int(time.time())
        refs = [doc_digest(r.doc_id) for r in records]
        keys = [self.layout.record_key(ref) for ref in refs]
        ttls = [self._ttl_arg(r.content_type) for r in records]
        raw, slots, filed = self._index_entries(records, refs, ttls, recheck, now)
        buckets = self._bucket_args(now, RECHECK_LAG, self._write_buckets(now))

        def argv(w: _NodeWork) -> list[Any]:
            # a record kept forever (ttl 0) keeps its index keys: the archive moves it to the cold
            # tier later, and needs them there and to remove its warm index entries
            values = [x for i in w.rows for x in (encode_record(records[i], with_keys=ttls[i] == 0), ttls[i])]
            return [self._prefix, np.concatenate(w.blob).tobytes() if w.blob else b"", *buckets, len(w.classes),
                    *w.classes, *values]

        async def call() -> list[bytes]:
            if raw.shape[0]:
                await self._register(ttls)
            work = self._group(keys)  # inside the retry: a failover moves slots
            if raw.shape[0]:
                # inside the retry too: a failure forgets every expiry seen
                self._spread(work, slots, self._with_expiry_known(raw, *filed))
                self._add_class_keys(work)
            return list((await self._call_nodes(_WRITE_SHA, work, argv)).values())

        for reply in await self._call("commit", call):
            _count_hits(reply, found)
        self._expiry_seen(*filed, now)
        return found

    def _with_expiry_known(self, raw: npt.NDArray[np.uint8], shards: npt.NDArray[np.int64],
                           ends: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint8]:
        """Packed entries (``_index_entries``) with :data:`EXPIRY_SET` in the row of each whose
        bucket key this client saw get its expiry (none where the store evicts keys)."""
        if self._evicting:
            return raw
        known = np.zeros(shards.shape[0], dtype=np.bool_)
        for end, seen in self._expiring.items():
            at = ends == np.uint64(end)
            known[at] = seen[shards[at]]
        if not known.any():
            return raw
        out = raw.copy()
        out[known, 21] |= np.uint8(EXPIRY_SET >> 24)  # the row's first byte (big-endian) holds its top bit
        return out

    def _expiry_seen(self, shards: npt.NDArray[np.int64], ends: npt.NDArray[np.uint64], now: int) -> None:
        """The write script that filed these entries set (or found) their bucket keys' expiry."""
        for end in np.unique(ends[ends != np.uint64(KEPT)]).tolist():
            seen = self._expiring.setdefault(int(end), np.zeros(self.layout.index_shards, dtype=np.bool_))
            seen[shards[ends == np.uint64(end)]] = True
        for end in [e for e in self._expiring if e <= now]:  # the bucket is over: nothing is filed there
            del self._expiring[end]

    def _index_entries(self, records: Sequence[FingerprintRecord], refs: Sequence[bytes], ttls: Sequence[int],
                       recheck: Sequence[Collection[int] | None], now: int
                       ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64],
                                  tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]]:
        """(packed entries: shard, bucket end, check, ref, recheck row: only under a key its
        record is rechecked under; the slot of each; the shard and bucket end of each) of ``records``."""
        doc_rows = np.repeat(np.arange(len(records)), [len(r.index_keys) for r in records])
        flat = np.fromiter((k for r in records for k in r.index_keys), dtype=np.uint64, count=doc_rows.shape[0])
        if not flat.size:
            return (np.zeros((0, 25), dtype=np.uint8), np.zeros(0, dtype=np.int64),
                    (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64)))
        shard, check = self.layout.index_slots(flat)
        ends = np.array([self.layout.bucket_end(None if t == 0 else now + t) for t in ttls], dtype=np.uint64)
        entries = np.empty(flat.shape[0], dtype=[("shard", ">u4"), ("end", ">u4"), ("check", ">u8"),
                                                 ("ref", f"S{REF_BYTES}"), ("row", ">u4")])
        entries["shard"] = shard
        entries["end"] = ends[doc_rows]
        entries["check"] = check << np.uint64(24)
        entries["ref"] = np.array(refs, dtype=f"S{REF_BYTES}")[doc_rows]
        asked = [frozenset(keys) if keys is not None else frozenset() for keys in recheck]
        checked = np.fromiter((k in asked[d] for d, k in zip(doc_rows.tolist(), flat.tolist(), strict=True)),
                              dtype=np.bool_, count=flat.shape[0])
        entries["row"] = np.where(checked, doc_rows, NO_RECHECK)
        raw = entries.view(np.uint8).reshape(-1, 28)
        raw = np.hstack([raw[:, :13], raw[:, 16:]])  # shard, end, the check's 5 bytes, ref, row
        return raw, self.layout.shard_slots()[shard], (shard, ends[doc_rows])

    async def put_decisions(self, decisions: Sequence[DecisionRecord]) -> None:
        """See :meth:`neardup.storage.base.FingerprintStore.put_decisions`."""
        if not decisions:
            return
        keys = [self.layout.decision_key(doc_digest(d.doc_id)) for d in decisions]

        def argv(w: _NodeWork) -> list[Any]:
            values = [x for i in w.rows for x in (encode_decision(decisions[i]),
                                                  self._ttl_arg(decisions[i].content_type))]
            return [self._prefix, b"", *_NO_BUCKETS, *values]

        await self._call("put_decisions", lambda: self._call_nodes(_WRITE_SHA, self._group(keys), argv))

    async def write_state(self, name: str, value: StateValue) -> bool:
        """See :meth:`neardup.storage.base.FingerprintStore.write_state`."""
        key = self.layout.state_key(name)

        async def call() -> Any:
            node = self._node_of_slot(key_slot(key)) if self.cluster else None
            try:
                return await self._on(node, "EVALSHA", _CAS_SHA, 1, key, value.version - 1, encode_state(value))
            except rex.NoScriptError:
                return await self._on(node, "EVAL", _CAS_LUA, 1, key, value.version - 1, encode_state(value))

        return bool(await self._call("write_state", call))

    async def expire(self, now: float | None = None) -> int:
        """Redis expires keys itself: nothing to sweep."""
        return 0

    # -- moving documents to the cold tier ---------------------------------------------------
    async def kept(self, cursor: str = "", count: int = 500) -> KeptPage:
        """See :meth:`neardup.storage.base.FingerprintStore.kept`: a SCAN of the record keys, master
        by master (the cursor is ``master:scan cursor``). Records kept without their index keys
        (written before records of kept types carried them) are left in the warm store."""

        async def call() -> tuple[list[bytes], str]:
            return await self._scan_records(cursor, count)

        keys, after = await self._call("kept", call)
        records = [decode_record(v) for v in await self._call("kept", lambda: self._get_all(keys)) if v is not None]
        records = [r for r in records if r.index_keys and self.ttl.ttl(r.content_type) is None]
        decisions = await self.get_decisions([r.doc_id for r in records])
        return KeptPage([KeptDocument(r, decisions.get(r.doc_id)) for r in records], after)

    async def _scan_records(self, cursor: str, count: int) -> tuple[list[bytes], str]:
        """Record keys of one SCAN step, and the cursor after it (``""``: every master done)."""
        masters = sorted(self._primaries(), key=lambda n: getattr(n, "name", ""))
        position, _, scan = cursor.partition(":")
        i, at = int(position or 0), int(scan or 0)
        pattern = self._prefix + b"{d*}r"
        while i < len(masters):
            raw, keys = await self._on(masters[i], "SCAN", at, "MATCH", pattern, "COUNT", count)
            # the cluster client answers the cursor as {node: cursor}, even for one node
            at = int(next(iter(raw.values())) if isinstance(raw, dict) else raw)
            if at == 0:
                i += 1
            if keys or i == len(masters):
                return list(keys), f"{i}:{at}" if i < len(masters) else ""
        return [], ""

    async def forget(self, records: Sequence[FingerprintRecord]) -> int:
        """See :meth:`neardup.storage.base.FingerprintStore.forget`: one script per node deletes the
        records and decisions, the claims still held by their documents, and the index members
        (a kept record's members never expire, so each is known exactly from its index key)."""
        if not records:
            return 0
        keys: list[bytes] = []
        expected: list[bytes] = []
        for r in records:
            ref = doc_digest(r.doc_id)
            keys += [self.layout.record_key(ref), self.layout.decision_key(ref), self.layout.claim_key(r.content_hash)]
            expected += [b"", b"", r.doc_id.encode("utf-8", "surrogatepass")]
        slots, members = self._kept_members(records)

        def argv(w: _NodeWork) -> list[Any]:
            return [self._prefix, np.concatenate(w.blob).tobytes() if w.blob else b"", *(expected[i] for i in w.rows)]

        async def call() -> int:
            work = self._group(keys)  # inside the retry: a failover moves slots
            if members.shape[0]:
                self._spread(work, slots, members)
            gone = 0
            for node, res in (await self._call_nodes(_FORGET_SHA, work, argv)).items():
                gone += sum(int(v) for i, v in zip(work[node].rows, res, strict=False) if i % 3 == 0)
            return gone

        return await self._call("forget", call)

    def _kept_members(self, records: Sequence[FingerprintRecord]) -> tuple[npt.NDArray[np.int64], npt.NDArray[Any]]:
        """(slot, packed shard u32 + member) of every index entry of kept ``records`` (the kept bucket's)."""
        flat = [(k, doc_digest(r.doc_id)) for r in records for k in r.index_keys]
        if not flat:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 17), dtype=np.uint8)
        shard, check = self.layout.index_slots(np.array([k for k, _ in flat], dtype=np.uint64))
        packed = b"".join(struct.pack(">I", s) + KeyLayout.member(int(c).to_bytes(5, "big"), ref)
                          for s, c, (_, ref) in zip(shard.tolist(), check.tolist(), flat, strict=True))
        return self.layout.shard_slots()[shard], np.frombuffer(packed, dtype=np.uint8).reshape(-1, 17)

    # -- older index layouts -----------------------------------------------------------------
    async def migrate(self, count: int = 1000) -> MigrationReport:
        """Re-file every index key of an older layout into this store's buckets, master by master:
        the unbucketed shard keys written before buckets (``P:{i<S>}``, members with their own
        expiry) and buckets of another width. Entries of content kept forever go to the kept
        bucket, live timed ones to the bucket of their expiry, expired ones are dropped; each old
        key is deleted in the same script. Idempotent, and safe while workers write: a rerun finds
        nothing left. Every configured ttl class is registered first: which classes the old entries
        are of is not known."""
        await self._call("migrate", lambda: self._register([self._ttl_class(t) for t in self._ttls]))
        total = [0, 0, 0]
        for node in sorted(self._primaries(), key=lambda n: getattr(n, "name", "")):
            cursor = -1
            while cursor != 0:
                cursor, done = await self._migrate_step(node, max(cursor, 0), count)
                total = [a + b for a, b in zip(total, done, strict=True)]
        # every entry is in this width's buckets now: the clients that open from here on read them
        await self._call("migrate", lambda: self._on(self._node_of_slot(self._marker_slots[0]), "SET",
                                                     self._layout_key, self._layout_stamp()))
        return MigrationReport(total[0], total[1], total[2], self.layout.bucket_seconds)

    async def _migrate_step(self, node: Any, cursor: int, count: int) -> tuple[int, list[int]]:
        """One SCAN step of one master: (the next cursor, [keys, entries moved, dropped])."""
        raw, found = await self._call("migrate", lambda: self._on(node, "SCAN", cursor, "MATCH",
                                                                  self._prefix + b"{i*", "COUNT", count))
        after = int(next(iter(raw.values())) if isinstance(raw, dict) else raw)
        old = [k for k in found if self._older_index_key(k)]
        if not old:
            return after, [0, 0, 0]
        now = int(time.time())

        async def call() -> list[int]:
            work = self._group(old)  # inside the retry: a failover moves slots
            replies = await self._call_nodes(_MIGRATE_SHA, work, lambda w: [self.layout.bucket_seconds,
                                                                            self.layout.margin, now])
            return [len(old), sum(int(r[0]) for r in replies.values()), sum(int(r[1]) for r in replies.values())]

        return after, await self._call("migrate", call)

    def _older_index_key(self, key: bytes) -> bool:
        """Is ``key`` an index key of an older layout (unbucketed, or a bucket of another width)?"""
        suffix = key.rsplit(b"}", 1)[1]
        if suffix == b"k":
            return False
        return not suffix or int(suffix, 16) % self.layout.bucket_seconds != 0

    async def stats(self) -> dict[str, int]:
        """Keys and used memory over the masters."""

        async def call() -> dict[str, int]:
            keys = memory = 0
            primaries = self._primaries()
            for node in primaries:
                keys += int(await self._on(node, "DBSIZE"))
                info = await self._on(node, "INFO", "memory")
                memory += int(info["used_memory"])
            return {"keys": keys, "used_memory": memory, "masters": len(primaries)}

        return await self._call("stats", call)


__all__ = [
    "MigrationReport",
    "RedisFingerprintStore",
    "decode_decision",
    "decode_record",
    "encode_decision",
    "encode_record",
    "parse_cluster_url",
    "redact_url",
]
