"""``postgresql://``: the cold tier, where documents of the content types kept for years live once
they are past the warm horizon (``neardup archive`` moves them there from the warm store).

Schema and migrations: :mod:`neardup.storage.postgres.schema`. A row holds the document's record
in the warm store's own byte format (:func:`neardup.storage.codec.encode_record`, without its index
keys: they are the directory's ``keys`` array, and a record is read back with them, so that
``neardup search --id`` finds an archived document's candidates), its decision in that codec's
format, when it was first seen (decided) and its publication time.

Reads are batched a window at a time: :meth:`ColdArchive.lookup` sends the candidates of every
index key, the owners of content hashes and the stored decisions as one pipeline (one round trip),
:meth:`ColdArchive.fetch` the records of the candidates chosen. Writes (:meth:`ColdArchive.put`)
are one transaction a batch and idempotent: a document already archived is left as it is, and its
index entries go in only with its row, so a batch interrupted anywhere is either all there or not
at all.

The URL is libpq's: the password in it (or in ``PGPASSWORD``/``.pgpass``), TLS by its ``sslmode``
(``require``, ``verify-full`` with ``sslrootcert``). It never appears in messages: they name the
redacted URL.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Collection, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import psycopg

from neardup.storage.base import Candidates, DecisionRecord, FingerprintRecord, IndexKeys, doc_ref
from neardup.storage.codec import decode_decision, decode_record, encode_decision, encode_record
from neardup.storage.errors import StoreAuthError, StoreCorruptError, StoreError, StoreUnavailableError
from neardup.storage.postgres.keyfilter import KeyFilter, budget_bits, filter_bits
from neardup.storage.postgres.schema import LATEST, LEDGER, LOCK, MIGRATIONS, month_partition
from neardup.storage.redact import redact_url

log = logging.getLogger("neardup.archive")

_MIGRATE_HINT = "run: neardup archive migrate --archive URL"
# rows of neardup_documents by ref, through the directory: its first_seen names the one partition
# to probe for each (pruned at run time), instead of every month's index
_BY_REF = ("SELECT {columns} FROM neardup_refs r JOIN neardup_documents d ON d.ref = r.ref AND d.first_seen = "
           "r.first_seen WHERE r.ref = ANY(%b::bigint[])")
# the directory rows whose keys overlap a window's, asked _CHUNK keys at a time: GIN removes
# repeated keys from one search by comparing each with all before it, so a search for a window's
# 38,000 keys at once costs 38,000^2 / 2 comparisons; every slice is still one index search in the
# same statement. At 100,000 documents a window took 95 ms (p50) in slices of 16, 101 in 32, 107 in
# 64 and 114 in 128 (the slice sizes alternated on the same windows)
_CHUNK = 16
# OFFSET 0 keeps each slice's search a subquery of its own, planned as a search of the GIN index:
# pulled up into a join, its rows were guessed from a default selectivity (33,000 a slice at
# 3.3 M documents), and past a few million documents the planner walked the whole directory in
# ref order (the primary key, for DISTINCT ON) instead, minutes a window
_CANDIDATES = ("SELECT DISTINCT ON (d.ref) d.ref, d.keys "
               f"FROM generate_series(1, cardinality(%(keys)b::bigint[]), {_CHUNK}) AS g(at), "
               "LATERAL (SELECT ref, keys FROM neardup_refs "
               f"WHERE keys && (%(keys)b::bigint[])[g.at:g.at + {_CHUNK - 1}] OFFSET 0) AS d")
# a document's keys as a slice of one flat array (lo > hi: none), so that a batch of documents
# goes in as one INSERT of arrays of scalars
_INSERT_REFS = ("INSERT INTO neardup_refs (ref, content_hash, doc_id, first_seen, keys) "
                "SELECT u.ref, u.hash, u.id, u.seen, (%b::bigint[])[u.lo:u.hi] "
                "FROM unnest(%b::bigint[], %b::bytea[], %b::text[], %b::timestamptz[], %b::int[], %b::int[]) "
                "AS u(ref, hash, id, seen, lo, hi) ON CONFLICT DO NOTHING RETURNING ref")
# the oldest transaction still running as a statement reads (every one before it has ended), as a bigint
_SNAPSHOT_XMIN = "pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
# the key filter's catch-up: the rows of every transaction from the oldest one running at the last
# read on, and the oldest one running now, in one statement (one snapshot)
_ARCHIVED_SINCE = (f"SELECT s.x, r.keys FROM (SELECT {_SNAPSHOT_XMIN} AS x) AS s "
                   "LEFT JOIN neardup_refs r ON r.archived_tx >= %s")
_SAVED_FILTER = "SELECT bits, keys, since, data FROM neardup_key_filter WHERE id = 1"
_SAVE_FILTER = ("INSERT INTO neardup_key_filter (id, bits, keys, since, data) VALUES (1, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET bits = excluded.bits, keys = excluded.keys, since = excluded.since, "
                "data = excluded.data, saved_at = now()")
SAVE_AFTER_ROWS = 10_000  # directory rows archived since the saved filter before neardup archive saves it again
DEFAULT_KEY_FILTER_BYTES = 256 << 20
_RELOAD_AFTER_FAILURE = 60.0  # seconds before a filter that failed to load is tried again
# every archived key, a directory row's keys as one bytea of big-endian uint64s (int8send), so that
# a batch of rows is parsed by numpy at once and not as a Python int a key
_ALL_KEYS = "SELECT (SELECT string_agg(int8send(k), ''::bytea) FROM unnest(r.keys) AS k) FROM neardup_refs r"
_KEYS_BATCH = 10_000  # directory rows a fetch


def to_bigint(ref: bytes) -> int:
    """A document ref (8 bytes) as PostgreSQL's signed bigint."""
    return int.from_bytes(ref, "big", signed=True)


def from_bigint(value: int) -> bytes:
    """Inverse of :func:`to_bigint`."""
    return int(value).to_bytes(8, "big", signed=True)


_U64 = (1 << 64) - 1


def key_bigint(key: int) -> int:
    """An index key (uint64) as a signed bigint: the same 64 bits."""
    return key - (1 << 64) if key >= 1 << 63 else key


def _time(epoch: float | None) -> dt.datetime | None:
    return None if epoch is None else dt.datetime.fromtimestamp(epoch, dt.UTC)


@dataclass(frozen=True, slots=True)
class ColdDocument:
    """One document as archived: its record with its index keys, its decision, when it was first
    seen (decided, epoch seconds) and published (epoch seconds, None when unknown)."""

    record: FingerprintRecord
    decision: DecisionRecord | None
    first_seen: float
    published_at: float | None


def _key_rows(key_rows: IndexKeys | Sequence[Sequence[int]]) -> IndexKeys:
    """Rows of index keys as one uint64 array (shorter rows padded with 0, "no key")."""
    if isinstance(key_rows, np.ndarray):
        return np.atleast_2d(key_rows.astype(np.uint64, copy=False))
    out = np.zeros((len(key_rows), max((len(r) for r in key_rows), default=0)), dtype=np.uint64)
    for i, row in enumerate(key_rows):
        out[i, : len(row)] = row
    return out


def _hits(asked: list[int], found: Sequence[tuple[int, Sequence[int]]]) -> list[tuple[int, int]]:
    """(key, ref) of each key asked that a document found holds, once per document."""
    wanted = set(asked)
    return [(k, ref) for ref, keys in found for k in set(keys) if k in wanted]


def _with_keys(rec: FingerprintRecord, keys: Sequence[int]) -> FingerprintRecord:
    """The record with its index keys: its own when it kept them (archived by schema version 1),
    else the directory's array."""
    if rec.index_keys or not keys:
        return rec
    return replace(rec, index_keys=tuple(k & _U64 for k in keys))


def _count_hits(rows: IndexKeys, hits: Sequence[tuple[int, int]]) -> list[Candidates]:
    """Each row's candidates: the refs filed under its keys, once per key. Only the positions
    holding a key that was found are visited (most windows find few)."""
    found: list[Candidates] = [{} for _ in range(rows.shape[0])]
    by_key: dict[int, list[bytes]] = defaultdict(list)
    for key, ref in hits:
        by_key[key & _U64].append(from_bigint(ref))
    if not by_key:
        return found
    at_rows, at_cols = np.nonzero(np.isin(rows, np.fromiter(by_key, dtype=np.uint64, count=len(by_key))))
    for r, k in zip(at_rows.tolist(), rows[at_rows, at_cols].tolist(), strict=True):
        for doc in by_key[k]:
            found[r][doc] = found[r].get(doc, 0) + 1
    return found


def _row(d: ColdDocument) -> tuple[Any, ...]:
    """The values of one ``neardup_documents`` row."""
    decision = None if d.decision is None else encode_decision(d.decision)
    return (to_bigint(d.record.ref), d.record.doc_id, d.record.content_type, d.record.content_hash,
            encode_record(d.record), decision, _time(d.first_seen), _time(d.published_at))


def _refs_params(docs: Sequence[ColdDocument]) -> tuple[list[Any], ...]:
    """The parameters of :data:`_INSERT_REFS`: every document's keys in one flat array, and where
    each one's slice starts and ends (1-based, inclusive)."""
    flat: list[int] = []
    bounds: list[tuple[int, int]] = []
    for d in docs:
        bounds.append((len(flat) + 1, len(flat) + len(d.record.index_keys)))
        flat += (key_bigint(k) for k in d.record.index_keys)
    return (flat, [to_bigint(d.record.ref) for d in docs], [d.record.content_hash for d in docs],
            [d.record.doc_id for d in docs], [_time(d.first_seen) for d in docs], [lo for lo, _ in bounds],
            [hi for _, hi in bounds])


async def _copy(conn: psycopg.AsyncConnection[Any], into: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """``COPY into FROM STDIN``: the fastest way in for many rows (``into``: a table and its columns, ours)."""
    if not rows:
        return
    async with conn.cursor() as cur, cur.copy(f"COPY {into} FROM STDIN") as copy:
        for row in rows:
            await copy.write_row(row)


async def _archived_since(conn: psycopg.AsyncConnection[Any], since: int) -> tuple[IndexKeys, int, int]:
    """(the keys of the directory rows of every transaction from ``since`` on, the oldest
    transaction still running as they were read, how many rows): one statement, one snapshot."""
    cur = await conn.execute(_ARCHIVED_SINCE, (since,), binary=True)
    got = await cur.fetchall()
    arrays = [np.asarray(keys, dtype=np.int64).view(np.uint64) for _, keys in got if keys]
    keys = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.uint64)
    return keys, int(got[0][0]), len(arrays)


def packed_keys(data: bytes, url: str) -> IndexKeys:
    """Keys packed as big-endian uint64s (:data:`_ALL_KEYS`)."""
    if len(data) % 8:
        raise StoreCorruptError(f"{url}: the archived keys did not read back as bigints")
    return np.frombuffer(data, dtype=">u8").astype(np.uint64)


@dataclass(frozen=True, slots=True)
class ColdRow:
    """A row as read back for history: the record (with its index keys), decision and times, and
    the keys it is filed under (uint64, as the directory holds them)."""

    record: FingerprintRecord
    decision: DecisionRecord | None
    first_seen: dt.datetime
    published_at: dt.datetime | None
    filed_under: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class ColdAnswer:
    """What :meth:`ColdArchive.lookup` found: candidates per row, owners by hash, decisions by id."""

    candidates: list[Candidates]
    owners: dict[bytes, str]
    decisions: dict[str, DecisionRecord]


class ColdArchive:
    """The cold tier on one PostgreSQL database (see the module docstring)."""

    def __init__(self, url: str, connect_timeout: float = 10.0,
                 key_filter_bytes: int = DEFAULT_KEY_FILTER_BYTES) -> None:
        """``url``: ``postgresql://USER:PASSWORD@HOST:PORT/DB[?sslmode=...]``; ``key_filter_bytes``:
        the most memory the filter of archived keys may take (0: no filter, every key is asked;
        :mod:`neardup.storage.postgres.keyfilter`)."""
        if not url.startswith(("postgresql://", "postgres://")):
            raise ValueError(f"not a PostgreSQL URL: {redact_url(url)}")
        if key_filter_bytes < 0:
            raise ValueError("key_filter_bytes must be 0 (no filter) or more")
        self.url = redact_url(url)
        self._raw_url = url
        self._timeout = connect_timeout
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._filter_budget = key_filter_bytes
        self._filter: KeyFilter | None = None
        self._filter_tx = 0  # the oldest transaction running at the filter's last read
        self._loading: asyncio.Task[None] | None = None
        self._load_failed_at = -_RELOAD_AFTER_FAILURE
        self._filter_lock = asyncio.Lock()
        self.keys_asked = 0  # distinct keys of the lookups' windows
        self.keys_searched = 0  # of them, those sent to PostgreSQL (the filter passed them)

    def __repr__(self) -> str:
        """The redacted URL only."""
        return f"ColdArchive({self.url!r})"

    # -- life cycle ------------------------------------------------------------------------------
    async def open(self, *, migrating: bool = False) -> None:
        """Connect; unless ``migrating``, refuse a database whose schema is not this version's and
        start loading the filter of archived keys."""
        if self._conn is not None:
            return
        with self._errors("connect"):
            self._conn = await self._connect()
        if not migrating:
            version = await self.schema_version()
            if version != LATEST:
                await self.close()
                raise StoreError(f"{self.url}: the archive's schema is at version {version}, this neardup needs "
                                 f"{LATEST}", hint=_MIGRATE_HINT)
            if self._filter_budget:
                self._start_loading()  # in the background: lookups ask every key until it is loaded

    async def close(self) -> None:
        """Release the connection (and stop a filter being loaded)."""
        loading, self._loading = self._loading, None
        if loading is not None:
            loading.cancel()
            await asyncio.gather(loading, return_exceptions=True)
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        conn = await psycopg.AsyncConnection.connect(self._raw_url, autocommit=True,
                                                     connect_timeout=max(1, round(self._timeout)))
        # every query here looks rows up by key; while the tables are small enough for the planner
        # to prefer a sequential scan for a window's 38,000 keys, that scan took twice as long as
        # the index (scripts/measure_cold_tier.py at 100,000 documents)
        await conn.execute("SET enable_seqscan = off")
        # the planner's guess for a window's candidate query (a row per key slice times the
        # directory) is far above JIT's threshold, and compiling it took 8.5 ms a window
        # (EXPLAIN ANALYZE at 100,000 documents) for expressions that run in well under that
        await conn.execute("SET jit = off")
        return conn

    @asynccontextmanager
    async def _using(self, doing: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """The connection, psycopg's errors as the store's. A connection that broke (the server
        restarted, a failover, a dropped session) failed its call; the next call connects again,
        so a worker that retries the window carries on once the server is back."""
        with self._errors(doing):
            conn = self.conn
            if conn.broken or conn.closed:
                await conn.close()
                self._conn = conn = await self._connect()
            yield conn

    @property
    def conn(self) -> psycopg.AsyncConnection[Any]:
        """The open connection."""
        if self._conn is None:
            raise StoreError(f"{self.url}: the archive is not open")
        return self._conn

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """psycopg's errors as the store's, by cause, with the redacted URL and no traceback text."""
        try:
            yield
        except psycopg.OperationalError as exc:
            text = " ".join(str(exc).split())
            if (exc.sqlstate or "").startswith("28") or "password authentication failed" in text:
                raise StoreAuthError(f"{self.url}: {doing}: the server refused the login: {text}",
                                     hint="check the user and password of --archive / NEARDUP_ARCHIVE_URL") from exc
            raise StoreUnavailableError(f"{self.url}: {doing}: {text}",
                                        hint="check that PostgreSQL is up and that --archive / NEARDUP_ARCHIVE_URL "
                                             "points at it") from exc  # fmt: skip
        except psycopg.errors.UndefinedTable as exc:
            raise StoreError(f"{self.url}: {doing}: the archive has no schema", hint=_MIGRATE_HINT) from exc
        except psycopg.Error as exc:
            raise StoreError(f"{self.url}: {doing}: {' '.join(str(exc).split())}") from exc

    @asynccontextmanager
    async def _transaction(self, doing: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        async with self._using(doing) as conn, conn.transaction():
            yield conn

    # -- schema ----------------------------------------------------------------------------------
    async def schema_version(self) -> int:
        """The highest migration applied (0: none)."""
        async with self._using("read the schema version") as conn:
            cur = await conn.execute("SELECT to_regclass('neardup_migrations') IS NOT NULL")
            row = await cur.fetchone()
            if not row or not row[0]:
                return 0
            cur = await conn.execute("SELECT coalesce(max(version), 0) FROM neardup_migrations")
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def migrate(self, up_to: int = LATEST) -> list[int]:
        """Apply the migrations not yet applied (up to version ``up_to``), each in its own
        transaction; returns their versions."""
        applied: list[int] = []
        for version, description, sql in (m for m in MIGRATIONS if m[0] <= up_to):
            async with self._transaction(f"migrate to version {version}") as conn:
                await conn.execute(LOCK)
                await conn.execute(LEDGER)
                cur = await conn.execute("SELECT 1 FROM neardup_migrations WHERE version = %s", (version,))
                if await cur.fetchone():
                    continue
                await conn.execute(sql)
                await conn.execute("INSERT INTO neardup_migrations (version, description) VALUES (%s, %s)",
                                   (version, description))  # fmt: skip
                applied.append(version)
        return applied

    # -- writes ----------------------------------------------------------------------------------
    async def put(self, docs: Sequence[ColdDocument]) -> int:
        """Archive ``docs`` in one transaction; a document already there is left as it is (its
        entries too). Returns how many were new."""
        if not docs:
            return 0
        by_ref = {to_bigint(d.record.ref): d for d in docs}
        listed = list(by_ref.values())
        async with self._transaction("archive documents") as conn:
            await conn.execute(LOCK)  # partitions are created by one writer at a time
            await self._ensure_partitions(conn, [d.first_seen for d in listed])
            cur = await conn.execute(_INSERT_REFS, _refs_params(listed))
            new = [by_ref[row[0]] for row in await cur.fetchall()]
            await _copy(conn, "neardup_documents (ref, doc_id, content_type, content_hash, record, decision, "
                              "first_seen, published_at)", [_row(d) for d in new])  # fmt: skip
        return len(new)

    @staticmethod
    async def _ensure_partitions(conn: psycopg.AsyncConnection[Any], times: Sequence[float]) -> None:
        months = {(t.year, t.month) for t in (dt.datetime.fromtimestamp(x, dt.UTC) for x in times)}
        for year, month in sorted(months):
            name, start, end = month_partition(year, month)  # names and dates of ours, never input
            await conn.execute(f"CREATE TABLE IF NOT EXISTS {name} PARTITION OF neardup_documents "
                               f"FOR VALUES FROM ('{start}') TO ('{end}')")  # fmt: skip

    async def verify(self, records: Sequence[FingerprintRecord]) -> set[bytes]:
        """The refs of ``records`` the archive holds completely: the same record (with its keys)
        and filed under every one of its index keys."""
        held = await self.rows([r.ref for r in records])
        return {r.ref for r in records
                if r.ref in held and held[r.ref].record == r and held[r.ref].filed_under == frozenset(r.index_keys)}

    # -- reads -----------------------------------------------------------------------------------
    async def lookup(self, key_rows: IndexKeys | Sequence[Sequence[int]], hashes: Collection[bytes],
                     doc_ids: Collection[str]) -> ColdAnswer:
        """Candidates of each row of index keys (uint64, 0 skipped), the owners of ``hashes`` and
        the decisions of ``doc_ids``: one round trip (a pipeline of three queries)."""
        rows = _key_rows(key_rows)
        asked = np.unique(rows[rows != 0])
        searched = await self._filtered(asked)
        self.keys_asked += int(asked.size)
        self.keys_searched += int(searched.size)
        keys = searched.view(np.int64).tolist()  # the same 64 bits as bigint
        refs = [to_bigint(doc_ref(i)) for i in doc_ids]
        async with self._using("look up a window") as conn, conn.pipeline():
            found = await conn.execute(_CANDIDATES, {"keys": keys}, binary=True)
            owned = await conn.execute("SELECT content_hash, doc_id FROM neardup_refs WHERE content_hash = "
                                       "ANY(%b::bytea[])", (list(hashes),), binary=True)  # fmt: skip
            decided = await conn.execute(_BY_REF.format(columns="d.decision") + " AND d.decision IS NOT NULL",
                                         (refs,), binary=True)  # fmt: skip
            hits, owners, decisions = await found.fetchall(), await owned.fetchall(), await decided.fetchall()
        wanted = set(doc_ids)
        stored = (decode_decision(bytes(d)) for (d,) in decisions)
        return ColdAnswer(_count_hits(rows, _hits(keys, hits)), {bytes(h): i for h, i in owners},
                          {d.doc_id: d for d in stored if d.doc_id in wanted})

    # -- the filter of archived keys ---------------------------------------------------------------
    async def _filtered(self, keys: IndexKeys) -> IndexKeys:
        """``keys`` less those no archived document holds, by the filter once it is loaded (caught
        up with what was archived since first); every key until then, while it loads in the background."""
        if keys.size == 0 or self._filter_budget == 0:
            return keys
        if self._filter is None:
            self._start_loading()
            return keys
        await self.catch_up()
        return keys[self._filter.may_hold(keys)]

    def _start_loading(self) -> None:
        running = self._loading is not None and not self._loading.done()
        if running or time.monotonic() - self._load_failed_at < _RELOAD_AFTER_FAILURE:
            return
        self._loading = asyncio.get_running_loop().create_task(self._load_filter())

    async def filter_loaded(self) -> bool:
        """Load the filter of archived keys now if it is not (waiting for a load under way);
        whether one is in use (False: no filter configured, or the load failed)."""
        if self._filter_budget == 0:
            return False
        if self._filter is None:
            self._start_loading()
            if self._loading is not None:
                await asyncio.gather(self._loading, return_exceptions=True)
        return self._filter is not None

    async def _load_filter(self) -> None:
        """Read the filter ``neardup archive`` saved, or every archived key where none is saved, into
        a new filter on a connection of its own; it replaces the one in use (if any)."""
        started = time.monotonic()
        try:
            with self._errors("load the filter of archived keys"):
                conn = await self._connect()
                try:
                    saved = await self._read_saved(conn, self._filter_budget)
                    loaded, since = saved if saved is not None else await self._read_all_keys(conn, self._filter_budget)
                finally:
                    await conn.close()
        except StoreError as exc:
            self._load_failed_at = time.monotonic()
            log.warning("%s; every index key is asked of the archive until a load succeeds (retried in %.0f s)",
                        exc, _RELOAD_AFTER_FAILURE)
            return
        async with self._filter_lock:
            self._filter, self._filter_tx = loaded, since
        log.info("%s: filter of %d archived keys loaded in %.1f s (%d MB)", self.url, loaded.added,
                 time.monotonic() - started, loaded.bits >> 23)

    async def _read_all_keys(self, conn: psycopg.AsyncConnection[Any], budget: int) -> tuple[KeyFilter, int]:
        """(a filter of every key archived, the oldest transaction running as they were read), in
        one snapshot, a batch of directory rows at a time."""
        async with conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cur = await conn.execute(f"SELECT {_SNAPSHOT_XMIN}, coalesce(sum(cardinality(keys)), 0) FROM neardup_refs")
            row = await cur.fetchone()
            assert row is not None
            since, count = int(row[0]), int(row[1])
            loaded = KeyFilter(filter_bits(count, budget))
            async with conn.cursor(name="neardup_archived_keys", binary=True) as cur:
                await cur.execute(_ALL_KEYS)
                while rows := await cur.fetchmany(_KEYS_BATCH):
                    loaded.add(packed_keys(b"".join(r[0] for r in rows if r[0] is not None), self.url))
        return loaded, since

    async def catch_up(self) -> None:
        """File in the filter the keys of documents archived since its last read (see
        :mod:`neardup.storage.postgres.keyfilter`); load a larger filter in the background when
        this one is crowded."""
        async with self._filter_lock:
            if self._filter is None:
                return
            async with self._using("read what was archived since") as conn:
                keys, self._filter_tx, _ = await _archived_since(conn, self._filter_tx)
            self._filter.add(keys)
            crowded = self._filter.crowded(self._filter_budget)
        if crowded:
            self._start_loading()

    async def _read_saved(self, conn: psycopg.AsyncConnection[Any], budget: int) -> tuple[KeyFilter, int] | None:
        """The saved filter (folded into ``budget`` bytes where it is larger) and the transaction it
        is current up to; None when none is saved or it does not read back as one (then every key
        is read)."""
        cur = await conn.execute(_SAVED_FILTER, binary=True)
        row = await cur.fetchone()
        if row is None:
            return None
        bits, keys, since, data = int(row[0]), int(row[1]), int(row[2]), bytes(row[3])
        try:
            saved = KeyFilter.of_words(bits, np.frombuffer(data, dtype="<u8"), keys)
        except ValueError as exc:
            log.warning("%s: the saved filter of archived keys is unreadable (%s); every key is read", self.url, exc)
            return None
        return saved.folded(budget_bits(budget)), since

    async def save_filter(self, budget: int) -> dict[str, int]:
        """Bring the saved filter up to date for the workers (``neardup archive`` calls it): the
        saved one caught up, or every key read where none is saved or it is crowded, saved again
        once :data:`SAVE_AFTER_ROWS` rows were archived since it was. Returns its sizes and what
        was done (``saved``: 1 when it was written)."""
        async with self._using("save the filter of archived keys") as conn:
            saved = await self._read_saved(conn, budget)
            rows = 0
            if saved is None or saved[0].crowded(budget):
                current, since = await self._read_all_keys(conn, budget)
                write = True
            else:
                current, since = saved
                keys, since, rows = await _archived_since(conn, since)
                current.add(keys)
                write = rows >= SAVE_AFTER_ROWS
            if write:
                await conn.execute(_SAVE_FILTER, (current.bits, current.added, since, current.words.tobytes()))
        return {"bits": current.bits, "keys": current.added, "rows_since_saved": rows, "saved": int(write)}

    def filter_stats(self) -> dict[str, int]:
        """The filter's size (bits, 0: none), keys filed, and the lookups' keys asked and searched."""
        f = self._filter
        return {"filter_bits": f.bits if f else 0, "filter_keys": f.added if f else 0,
                "keys_asked": self.keys_asked, "keys_searched": self.keys_searched}

    async def fetch(self, refs: Collection[bytes]) -> dict[bytes, FingerprintRecord]:
        """Records by ref (absent when not archived, or when the row is another id's: a digest collision)."""
        return {ref: row.record for ref, row in (await self.rows(refs)).items()}

    async def rows(self, refs: Collection[bytes]) -> dict[bytes, ColdRow]:
        """Whole rows by ref: record, decision and times."""
        async with self._using("fetch archived documents") as conn:
            cur = await conn.execute(
                _BY_REF.format(columns="d.ref, d.record, d.decision, d.first_seen, d.published_at, r.keys"),
                ([to_bigint(r) for r in refs],), binary=True)
            raw = await cur.fetchall()
        out: dict[bytes, ColdRow] = {}
        for ref, record, decision, first_seen, published_at, keys in raw:
            rec = _with_keys(decode_record(bytes(record)), keys)
            if rec.ref != from_bigint(ref):
                raise StoreCorruptError(f"{self.url}: an archived row is filed under another document's ref")
            out[rec.ref] = ColdRow(rec, None if decision is None else decode_decision(bytes(decision)),
                                   first_seen, published_at, frozenset(k & _U64 for k in keys))  # fmt: skip
        return out

    async def stats(self) -> dict[str, int]:
        """Documents, index entries (keys filed, a document's repeats counted once), and bytes on
        disk: ``documents_bytes`` the partitions and the directory with their indexes but the GIN
        over the keys, which is ``index_bytes``; and this client's :meth:`filter_stats`."""
        async with self._using("read the archive's sizes") as conn:
            cur = await conn.execute(
                "SELECT (SELECT count(*) FROM neardup_documents), "
                "(SELECT coalesce(sum((SELECT count(DISTINCT k) FROM unnest(keys) k)), 0) FROM neardup_refs), "
                "(SELECT coalesce(sum(pg_total_relation_size(relid)), 0) FROM pg_partition_tree('neardup_documents')) "
                "+ pg_total_relation_size('neardup_refs') - pg_relation_size('neardup_refs_keys'), "
                "pg_relation_size('neardup_refs_keys')")
            row = await cur.fetchone()
        assert row is not None
        documents, entries, doc_bytes, index_bytes = (int(x) for x in row)
        return {"documents": documents, "index_entries": entries, "documents_bytes": doc_bytes,
                "index_bytes": index_bytes, **self.filter_stats()}


__all__ = ["ColdAnswer", "ColdArchive", "ColdDocument", "ColdRow", "from_bigint", "to_bigint"]
