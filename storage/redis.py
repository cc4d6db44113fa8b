"""``redis://``, ``rediss://`` and ``rediscluster://``: the fingerprint store on Redis.

Uses redis-py's own asyncio clients (``redis.asyncio.Redis``, ``redis.asyncio.cluster.RedisCluster``).
Key layout and expiry policy: :mod:`storage.keys`. Observable semantics are those of
:class:`storage.memory.MemoryFingerprintStore` (tests/contract proves it), with these choices:

* Every method sends its commands as pipelines (a cluster pipeline groups them per node), at most
  ``max_connections // 2`` at once per store, because the async cluster client raises
  MaxConnectionsError instead of waiting for a free connection.
* A batch is retried, only its failed commands, with capped exponential backoff for up to
  ``retry_seconds`` on connection loss, CLUSTERDOWN, TRYAGAIN, MOVED/ASK storms and READONLY
  (a master failing over). Every command the store sends is idempotent, so a retry of a command
  that did run is harmless. Anything else, or running out of time, raises StoreError.
* ``claim_exact`` is one ``SET key id NX GET [EX ttl]`` per item (Redis >= 7.0); older servers get
  ``SET NX`` then ``GET`` for the losers, looping if an owner vanished in between.
* ``add`` writes the records first and the index entries after, so a document found by ``query``
  always has its record: readers never see an index entry without the record.
* ``query`` is one Lua script per distinct index key (ZRANGE BYLEX over the live bucket keys of
  its shard, all in one slot), then one GETRANGE of the id prefix per candidate record, which also
  drops candidates whose record expired.
* ``expire`` returns 0: Redis expires keys itself.

Passwords come from the keyword options or the URL and never appear in logs or errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
from redis import exceptions as rex
from redis.asyncio.cluster import ClusterNode, RedisCluster

from neardup.storage.base import DecisionRecord, FingerprintRecord, StoreError, TTLPolicy
from neardup.storage.keys import DOC_DIGEST_BYTES, MEMBER_BYTES, IndexSlot, KeyLayout, doc_digest, ttl_classes

log = logging.getLogger(__name__)

RECORD_VERSION = 1
DECISION_VERSION = 1
ID_PREFIX_BYTES = 80  # GETRANGE length that covers ids up to ~75 bytes in one round trip

_F64 = struct.Struct(">d")

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

_LOOKUP_LUA = b"""
local out = {}
for i = 1, #KEYS do
  local got = redis.call('ZRANGE', KEYS[i], ARGV[1], ARGV[2], 'BYLEX')
  for j = 1, #got do out[#out + 1] = got[j] end
end
return out
"""

# ZADD members (ARGV[2..], score 0 each) and, unless ARGV[1] is 0, EXPIREAT ARGV[1]: one command
# per bucket key instead of two, because client-side command cost dominates add().
_ADD_LUA = b"""
for i = 2, #ARGV, 200 do
  local args = {}
  for j = i, math.min(i + 199, #ARGV) do
    args[#args + 1] = 0
    args[#args + 1] = ARGV[j]
  end
  redis.call('ZADD', KEYS[1], unpack(args))
end
if ARGV[1] ~= '0' then redis.call('EXPIREAT', KEYS[1], ARGV[1]) end
return 0
"""

_RELEASE_LUA = b"""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

_SCRIPTS = {hashlib.sha1(body).hexdigest(): body for body in (_LOOKUP_LUA, _ADD_LUA, _RELEASE_LUA)}
_LOOKUP_SHA = hashlib.sha1(_LOOKUP_LUA).hexdigest()
_ADD_SHA = hashlib.sha1(_ADD_LUA).hexdigest()
_RELEASE_SHA = hashlib.sha1(_RELEASE_LUA).hexdigest()


# -- compact binary values ---------------------------------------------------------------------
def _put_uvarint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _put_int(out: bytearray, n: int) -> None:
    _put_uvarint(out, (n << 1) ^ (n >> 63) if n < 0 else n << 1)  # zigzag


def _put_bytes(out: bytearray, data: bytes) -> None:
    _put_uvarint(out, len(data))
    out += data


class _Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def uvarint(self) -> int:
        shift = n = 0
        while True:
            b = self.buf[self.pos]
            self.pos += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return n
            shift += 7

    def zigzag(self) -> int:
        z = self.uvarint()
        return (z >> 1) ^ -(z & 1)

    def blob(self) -> bytes:
        n = self.uvarint()
        end = self.pos + n
        if end > len(self.buf):
            raise IndexError("truncated")
        out = self.buf[self.pos : end]
        self.pos = end
        return out

    def text(self) -> str:
        return self.blob().decode("utf-8")

    def f64(self) -> float:
        (x,) = _F64.unpack_from(self.buf, self.pos)
        self.pos += 8
        return float(x)


def encode_record(rec: FingerprintRecord, keep_index_keys: bool = True) -> bytes:
    """Version byte, then the id (first, so a short GETRANGE reads it), then the rest."""
    out = bytearray((RECORD_VERSION,))
    _put_bytes(out, rec.doc_id.encode("utf-8"))
    _put_bytes(out, rec.content_type.encode("utf-8"))
    out += _F64.pack(rec.published_at)
    _put_int(out, rec.shingles)
    _put_int(out, rec.length)
    for part in (rec.content_hash, rec.simhash, rec.signature, rec.profile):
        _put_bytes(out, part)
    keys = rec.index_keys if keep_index_keys else ()
    _put_uvarint(out, len(keys))
    for key in keys:
        _put_bytes(out, key)
    return bytes(out)


def decode_record(data: bytes) -> FingerprintRecord:
    try:
        return _decode_record(data)
    except (IndexError, ValueError, struct.error) as exc:  # UnicodeDecodeError is a ValueError
        raise StoreError(f"stored record is corrupt: {type(exc).__name__}") from exc


def _decode_record(data: bytes) -> FingerprintRecord:
    r = _Reader(data)
    if r.uvarint() != RECORD_VERSION:
        raise StoreError("stored record has an unknown format version")
    doc_id = r.text()
    content_type = r.text()
    published_at = r.f64()
    shingles = r.zigzag()
    length = r.zigzag()
    content_hash, simhash, signature, profile = r.blob(), r.blob(), r.blob(), r.blob()
    index_keys = tuple(r.blob() for _ in range(r.uvarint()))
    return FingerprintRecord(
        doc_id=doc_id,
        content_type=content_type,
        published_at=published_at,
        content_hash=content_hash,
        simhash=simhash,
        signature=signature,
        profile=profile,
        shingles=shingles,
        length=length,
        index_keys=index_keys,
    )


def record_id(prefix: bytes) -> str | int:
    """The id at the head of a packed record, or how many bytes are needed to read it."""
    r = _Reader(prefix)
    try:
        if r.uvarint() != RECORD_VERSION:
            raise StoreError("stored record has an unknown format version")
        n = r.uvarint()
    except IndexError:
        return ID_PREFIX_BYTES * 2
    if r.pos + n > len(prefix):
        return r.pos + n
    return prefix[r.pos : r.pos + n].decode("utf-8")


def encode_decision(d: DecisionRecord) -> bytes:
    out = bytearray((DECISION_VERSION,))
    _put_bytes(out, d.doc_id.encode("utf-8"))
    _put_bytes(out, d.status.encode("utf-8"))
    if d.duplicate_of is None:
        out.append(0)
    else:
        out.append(1)
        _put_bytes(out, d.duplicate_of.encode("utf-8"))
    _put_bytes(out, d.evidence.encode("utf-8"))
    _put_bytes(out, d.content_type.encode("utf-8"))
    return bytes(out)


def decode_decision(data: bytes) -> DecisionRecord:
    try:
        return _decode_decision(data)
    except (IndexError, ValueError) as exc:
        raise StoreError(f"stored decision is corrupt: {type(exc).__name__}") from exc


def _decode_decision(data: bytes) -> DecisionRecord:
    r = _Reader(data)
    if r.uvarint() != DECISION_VERSION:
        raise StoreError("stored decision has an unknown format version")
    doc_id = r.text()
    status = r.text()
    duplicate_of = r.text() if r.uvarint() else None
    evidence = r.text()
    return DecisionRecord(doc_id, status, duplicate_of, evidence, r.text())


# -- connection options ------------------------------------------------------------------------
def _secret(value: Any) -> str | None:
    """Accept a plain string or a pydantic SecretStr without importing pydantic."""
    if value is None:
        return None
    getter = getattr(value, "get_secret_value", None)
    return str(getter() if callable(getter) else value)


def redact_url(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        creds, host = rest.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}" if ":" in creds else f"{scheme}://{user}@{host}"
    return url


def parse_cluster_url(url: str) -> tuple[list[tuple[str, int]], str | None, str | None]:
    """``rediscluster://[user:pass@]H:P[,H:P...]`` -> (startup nodes, username, password)."""
    rest = url.split("://", 1)[1]
    username = password = None
    if "@" in rest:
        creds, rest = rest.rsplit("@", 1)
        user, _, pw = creds.partition(":")
        username, password = unquote(user) or None, unquote(pw) or None
    rest = rest.split("/", 1)[0].split("?", 1)[0]
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


@dataclass(slots=True)
class _Cmd:
    args: tuple[Any, ...]
    options: dict[str, Any] = field(default_factory=dict)


class RedisFingerprintStore:
    """Fingerprint store on one Redis server or a Redis Cluster."""

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
        time_bucket_seconds: int = 86_400,
        index_shards: int | None = None,
        keep_index_keys: bool = True,
        retry_seconds: float = 30.0,
        socket_timeout: float = 5.0,
        **unknown: Any,
    ) -> None:
        if unknown:
            raise TypeError(f"unknown Redis store options: {sorted(unknown)}")
        scheme = url.split("://", 1)[0]
        if scheme not in {"redis", "rediss", "rediscluster"}:
            raise ValueError(f"not a Redis URL: {redact_url(url)}")
        self.url = redact_url(url)
        self._raw_url = url
        self.cluster = scheme == "rediscluster"
        self.ttl = ttl or TTLPolicy(by_type={})
        self.layout = KeyLayout(
            prefix=key_prefix,
            index_shards=index_shards or KeyLayout().index_shards,
            time_bucket_seconds=time_bucket_seconds,
        )
        self._ttls = ttl_classes(self.ttl.by_type, self.ttl.default)
        self._password = _secret(password)
        self._username = username
        self._tls = tls or scheme == "rediss"
        self._tls_ca_file = tls_ca_file
        self._max_connections = max_connections
        self._retry_seconds = retry_seconds
        self._socket_timeout = socket_timeout
        self._sem = asyncio.Semaphore(max(1, max_connections // 2))
        self._client: Any = None
        self._set_get = True  # SET NX GET needs Redis >= 7.0; switched off on a syntax error
        # False: records are stored without their index keys (fetch returns index_keys=()), which
        # saves ~11 bytes per key per document; the engine never reads them back
        self._keep_index_keys = keep_index_keys

    def __repr__(self) -> str:
        return f"RedisFingerprintStore({self.url!r})"

    @property
    def client(self) -> Any:
        """The redis-py client (for tests and diagnostics)."""
        if self._client is None:
            raise StoreError("store is not open")
        return self._client

    # -- lifecycle -----------------------------------------------------------------------------
    async def open(self) -> None:
        if self._client is not None:
            return
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
            if self._password is not None:
                common["password"] = self._password
            if self._username is not None:
                common["username"] = self._username
            if self._tls:
                common["connection_class"] = aioredis.SSLConnection
            pool = aioredis.BlockingConnectionPool.from_url(
                self._raw_url, max_connections=self._max_connections, timeout=self._socket_timeout, **common
            )
            self._client = aioredis.Redis(connection_pool=pool)
        try:
            await self._run([_Cmd(("PING",))])
            await self._load_scripts()
        except BaseException:
            await self.close()
            raise

    async def _load_scripts(self) -> None:
        """Load the scripts everywhere up front; EVALSHA falls back to EVAL where a node lacks them
        (a replica promoted since, or a restarted node)."""

        async def load() -> None:
            for body in _SCRIPTS.values():
                if self.cluster:
                    await self.client.execute_command("SCRIPT LOAD", body, target_nodes=RedisCluster.PRIMARIES)
                else:
                    await self.client.execute_command("SCRIPT LOAD", body)

        await self._retrying(load)

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.aclose()
            except (rex.RedisError, OSError) as exc:  # closing a half-dead connection is not news
                log.debug("closing %s: %s", self.url, type(exc).__name__)

    # -- the batch runner ----------------------------------------------------------------------
    async def _execute(self, cmds: Sequence[_Cmd]) -> list[Any]:
        pipe = self.client.pipeline(transaction=False)
        for c in cmds:
            pipe.execute_command(*c.args, **c.options)
        return list(await pipe.execute(raise_on_error=False))

    def _fail(self, what: str, exc: BaseException) -> StoreError:
        # str(exc) of redis-py errors holds the command, never the AUTH password
        return StoreError(f"{self.url}: {what}: {type(exc).__name__}: {exc}")

    async def _run(self, cmds: Sequence[_Cmd]) -> list[Any]:
        """Pipeline ``cmds``; retry the failed ones on transient cluster errors; results in order."""
        results: list[Any] = [None] * len(cmds)
        current = list(cmds)
        todo = list(range(len(cmds)))
        deadline = time.monotonic() + self._retry_seconds
        delay = 0.05
        attempts = 0
        async with self._sem:
            while todo:
                attempts += 1
                try:
                    out = await self._execute([current[i] for i in todo])
                except RETRYABLE as exc:
                    out = [exc] * len(todo)
                except rex.RedisError as exc:
                    raise self._fail("request failed", exc) from exc
                again: list[int] = []
                transient: BaseException | None = None
                for i, res in zip(todo, out, strict=True):
                    if isinstance(res, rex.NoScriptError):
                        # a node that never saw the script (new, or promoted): send its body once
                        c = current[i]
                        current[i] = _Cmd(("EVAL", _SCRIPTS[c.args[1]], *c.args[2:]), c.options)
                        again.append(i)
                    elif isinstance(res, RETRYABLE):
                        again.append(i)
                        transient = res
                    elif isinstance(res, BaseException):
                        raise self._fail(f"command {c_name(current[i])} failed", res) from res
                    else:
                        results[i] = res
                todo = again
                if transient is None:
                    continue
                if time.monotonic() + delay > deadline:
                    raise self._fail(f"gave up after {attempts} attempts", transient) from transient
                log.warning(
                    "%s: %s on %d commands, retrying in %.2fs",
                    self.url,
                    type(transient).__name__,
                    len(todo),
                    delay,
                )
                if self.cluster and not isinstance(transient, rex.TryAgainError):
                    # stale slot map (failover, READONLY): make the client re-read the topology
                    with contextlib.suppress(rex.RedisError, OSError):
                        await self.client.aclose()
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
        return results

    # -- protocol ------------------------------------------------------------------------------
    def _ex(self, content_type: str) -> dict[str, int]:
        ttl = self.ttl.ttl(content_type)
        return {} if ttl is None else {"ex": ttl}

    async def claim_exact(self, items: Sequence[tuple[bytes, str, str]]) -> list[str]:
        if not items:
            return []
        if self._set_get:
            try:
                return await self._claim_set_get(items)
            except StoreError as exc:
                if "syntax error" not in str(exc).lower():
                    raise
                log.info("%s: server lacks SET NX GET (Redis < 7.0); claiming in two steps", self.url)
                self._set_get = False
        return await self._claim_two_step(items)

    async def _claim_set_get(self, items: Sequence[tuple[bytes, str, str]]) -> list[str]:
        cmds = []
        for content_hash, doc_id, content_type in items:
            args: tuple[Any, ...] = ("SET", self.layout.claim_key(content_hash), doc_id, "NX", "GET")
            ex = self._ex(content_type)
            if ex:
                args += ("EX", ex["ex"])
            cmds.append(_Cmd(args, {"get": True}))
        out = await self._run(cmds)
        return [
            doc_id if held is None else held.decode("utf-8") for (_, doc_id, _), held in zip(items, out, strict=True)
        ]

    async def _claim_two_step(self, items: Sequence[tuple[bytes, str, str]]) -> list[str]:
        owners: list[str | None] = [None] * len(items)
        pending = list(range(len(items)))
        while pending:
            cmds = []
            for i in pending:
                content_hash, doc_id, content_type = items[i]
                args: tuple[Any, ...] = ("SET", self.layout.claim_key(content_hash), doc_id, "NX")
                ex = self._ex(content_type)
                if ex:
                    args += ("EX", ex["ex"])
                cmds.append(_Cmd(args))
            won = await self._run(cmds)
            losers = [i for i, ok in zip(pending, won, strict=True) if not ok]
            for i, ok in zip(pending, won, strict=True):
                if ok:
                    owners[i] = items[i][1]
            held = await self._run([_Cmd(("GET", self.layout.claim_key(items[i][0]))) for i in losers])
            pending = []
            for i, h in zip(losers, held, strict=True):
                if h is None:
                    pending.append(i)  # the owner expired or was released in between: claim again
                else:
                    owners[i] = h.decode("utf-8")
        return [o or "" for o in owners]

    async def lookup_exact(self, content_hashes: Sequence[bytes]) -> list[str | None]:
        if not content_hashes:
            return []
        out = await self._run([_Cmd(("GET", self.layout.claim_key(h))) for h in content_hashes])
        return [None if held is None else held.decode("utf-8") for held in out]

    async def release_exact(self, items: Sequence[tuple[bytes, str]]) -> None:
        await self._run([_Cmd(("EVALSHA", _RELEASE_SHA, 1, self.layout.claim_key(h), doc_id)) for h, doc_id in items])

    async def get_decisions(self, doc_ids: Sequence[str]) -> dict[str, DecisionRecord]:
        ids = list(dict.fromkeys(doc_ids))
        out = await self._run([_Cmd(("GET", self.layout.decision_key(doc_digest(i)))) for i in ids])
        found: dict[str, DecisionRecord] = {}
        for doc_id, raw in zip(ids, out, strict=True):
            if raw is not None:
                d = decode_decision(raw)
                if d.doc_id == doc_id:  # a different id here is a digest collision: not ours
                    found[doc_id] = d
        return found

    async def put_decisions(self, decisions: Sequence[DecisionRecord]) -> None:
        cmds = []
        for d in decisions:
            key = self.layout.decision_key(doc_digest(d.doc_id))
            args: tuple[Any, ...] = ("SET", key, encode_decision(d))
            ex = self._ex(d.content_type)
            if ex:
                args += ("EX", ex["ex"])
            cmds.append(_Cmd(args))
        await self._run(cmds)

    async def query(self, keys_per_doc: Sequence[Sequence[bytes]]) -> list[set[str]]:
        now = time.time()
        slots_per_doc = [[self.layout.index_slot(k) for k in keys] for keys in keys_per_doc]
        lookups = list(dict.fromkeys(s for slots in slots_per_doc for s in slots))
        if not lookups:
            return [set() for _ in keys_per_doc]
        cmds = []
        suffixes = self.layout.live_suffixes(self._ttls, now)
        for slot in lookups:
            bucket_keys = self.layout.live_bucket_keys(slot, self._ttls, now, suffixes)
            lo, hi = self.layout.lex_range(slot.check)
            cmds.append(_Cmd(("EVALSHA", _LOOKUP_SHA, len(bucket_keys), *bucket_keys, lo, hi)))
        found = await self._run(cmds)
        digests_per_lookup: dict[IndexSlot, set[bytes]] = {}
        for slot, members in zip(lookups, found, strict=True):
            digests_per_lookup[slot] = {
                m[-DOC_DIGEST_BYTES:] for m in members if len(m) == MEMBER_BYTES and m.startswith(slot.check)
            }
        digests = list(dict.fromkeys(d for ds in digests_per_lookup.values() for d in ds))
        ids = await self._live_ids(digests)
        out: list[set[str]] = []
        for slots in slots_per_doc:
            doc_ids: set[str] = set()
            for s in slots:
                doc_ids.update(ids[d] for d in digests_per_lookup[s] if d in ids)
            out.append(doc_ids)
        return out

    async def _live_ids(self, digests: Sequence[bytes]) -> dict[bytes, str]:
        """digest -> id for the digests whose record still exists."""
        heads = await self._run(
            [_Cmd(("GETRANGE", self.layout.record_key(d), 0, ID_PREFIX_BYTES - 1)) for d in digests]
        )
        ids: dict[bytes, str] = {}
        longer: list[tuple[bytes, int]] = []
        for d, head in zip(digests, heads, strict=True):
            if not head:  # GETRANGE of a missing key is b"": expired or never written
                continue
            got = record_id(head)
            if isinstance(got, str):
                ids[d] = got
            else:
                longer.append((d, got))
        if longer:
            tails = await self._run([_Cmd(("GETRANGE", self.layout.record_key(d), 0, n - 1)) for d, n in longer])
            for (d, _), head in zip(longer, tails, strict=True):
                if head and isinstance(name := record_id(head), str):
                    ids[d] = name
        return ids

    async def fetch(self, doc_ids: Sequence[str]) -> dict[str, FingerprintRecord]:
        ids = list(dict.fromkeys(doc_ids))
        out = await self._run([_Cmd(("GET", self.layout.record_key(doc_digest(i)))) for i in ids])
        found: dict[str, FingerprintRecord] = {}
        for doc_id, raw in zip(ids, out, strict=True):
            if raw is not None:
                rec = decode_record(raw)
                if rec.doc_id == doc_id:
                    found[doc_id] = rec
        return found

    async def add(self, records: Sequence[FingerprintRecord]) -> None:
        if not records:
            return
        now = time.time()
        writes = []
        buckets: dict[bytes, list[bytes]] = {}
        expire_at: dict[bytes, int] = {}
        for rec in records:
            digest = doc_digest(rec.doc_id)
            args: tuple[Any, ...] = ("SET", self.layout.record_key(digest), encode_record(rec, self._keep_index_keys))
            ttl = self.ttl.ttl(rec.content_type)
            if ttl is not None:
                args += ("EX", ttl)
            writes.append(_Cmd(args))
            tb = self.layout.time_bucket(ttl, now)
            for key in rec.index_keys:
                slot = self.layout.index_slot(key)
                bkey = self.layout.bucket_key(slot, ttl, tb)
                buckets.setdefault(bkey, []).append(self.layout.member(slot.check, digest))
                if ttl is not None and tb is not None:
                    expire_at[bkey] = self.layout.bucket_expire_at(ttl, tb)
        # records before index entries: whoever finds an entry can read its record
        await self._run(writes)
        index = [
            _Cmd(("EVALSHA", _ADD_SHA, 1, bkey, expire_at.get(bkey, 0), *dict.fromkeys(members)))
            for bkey, members in buckets.items()
        ]
        await self._run(index)

    async def expire(self, now: float | None = None) -> int:
        return 0

    async def stats(self) -> dict[str, int]:
        if self.cluster:
            nodes = self.client.get_primaries()
            keys = memory = 0
            for node in nodes:
                keys += int(await self._retrying(lambda n=node: self.client.dbsize(target_nodes=n)))
                info = await self._retrying(lambda n=node: self.client.info("memory", target_nodes=n))
                memory += int(info["used_memory"])
            return {"keys": keys, "used_memory": memory, "masters": len(nodes)}
        keys = int(await self._retrying(lambda: self.client.dbsize()))
        info = await self._retrying(lambda: self.client.info("memory"))
        return {"keys": keys, "used_memory": int(info["used_memory"]), "masters": 1}

    async def _retrying(self, call: Any) -> Any:
        deadline = time.monotonic() + self._retry_seconds
        delay = 0.05
        while True:
            try:
                return await call()
            except RETRYABLE as exc:
                if time.monotonic() + delay > deadline:
                    raise self._fail("gave up", exc) from exc
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
            except rex.RedisError as exc:
                raise self._fail("request failed", exc) from exc


def c_name(cmd: _Cmd) -> str:
    """The command word only: arguments may hold ids or values not meant for logs."""
    return str(cmd.args[0]) if cmd.args else "?"
