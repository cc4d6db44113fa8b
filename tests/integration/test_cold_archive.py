"""The cold tier on a real PostgreSQL (tests/fixtures/postgres.py): migrations, archived rows and
their index entries, the window lookup, verification, errors by cause, secrets never shown."""

from __future__ import annotations

import datetime as dt
import hashlib
from urllib.parse import urlsplit

import psycopg
import pytest

from neardup.storage import DecisionRecord, FingerprintRecord
from neardup.storage.codec import encode_record
from neardup.storage.errors import StoreAuthError, StoreError, StoreUnavailableError
from neardup.storage.postgres.archive import _CANDIDATES, ColdArchive, ColdDocument, key_bigint, to_bigint
from neardup.storage.postgres.schema import LATEST, month_partition
from tests.fixtures.net import free_port

pytestmark = pytest.mark.integration

JAN = dt.datetime(2026, 1, 15, tzinfo=dt.UTC).timestamp()
MAR = dt.datetime(2026, 3, 2, tzinfo=dt.UTC).timestamp()


def h(name: str, n: int = 16) -> bytes:
    return hashlib.blake2b(name.encode(), digest_size=n).digest()


def key(name: str) -> int:
    """A nonzero uint64 index key; half of them above 2**63 (a negative bigint in PostgreSQL)."""
    return int.from_bytes(h("k" + name, 8), "big") | 1


def record(doc_id: str, keys: tuple[int, ...]) -> FingerprintRecord:
    return FingerprintRecord(doc_id, "announcement", JAN, h("c" + doc_id), h("s" + doc_id, 8), h("g" + doc_id, 64) * 8,
                             h("p" + doc_id, 64), 120, 3000, keys, b"\x01meta")


def cold(doc_id: str, keys: tuple[int, ...], first_seen: float = JAN) -> ColdDocument:
    decision = DecisionRecord(doc_id, "unique", None, '{"reason": "unique"}', "announcement", h("c" + doc_id))
    return ColdDocument(record(doc_id, keys), decision, first_seen, None)


async def migrated(url: str) -> ColdArchive:
    archive = ColdArchive(url)
    await archive.open(migrating=True)
    await archive.migrate()
    return archive


async def test_migrate_is_versioned_and_idempotent(postgres_url: str) -> None:
    archive = ColdArchive(postgres_url)
    await archive.open(migrating=True)
    try:
        assert await archive.schema_version() == 0
        assert await archive.migrate() == list(range(1, LATEST + 1))
        assert await archive.migrate() == []  # a rerun applies nothing
        assert await archive.schema_version() == LATEST
    finally:
        await archive.close()


async def test_an_unmigrated_archive_is_refused_with_the_command_to_run(postgres_url: str) -> None:
    with pytest.raises(StoreError) as caught:
        await ColdArchive(postgres_url).open()
    assert "neardup archive migrate" in caught.value.one_line()


async def test_put_files_rows_by_month_with_their_index_entries(postgres_url: str) -> None:
    a, b, c = key("a"), key("b"), key("c")
    archive = await migrated(postgres_url)
    try:
        assert await archive.put([cold("d1", (a, b)), cold("d2", (b, c), MAR)]) == 2
        assert await archive.put([cold("d1", (a, b)), cold("d2", (b, c), MAR)]) == 0  # idempotent
        stats = await archive.stats()
        assert (stats["documents"], stats["index_entries"]) == (2, 4)
        cur = await archive.conn.execute("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                                         "WHERE i.inhparent = 'neardup_documents'::regclass ORDER BY 1")
        assert [r[0] for r in await cur.fetchall()] == ["neardup_documents_202601", "neardup_documents_202603"]
        cur = await archive.conn.execute("SELECT d.record, r.keys FROM neardup_documents d JOIN neardup_refs r "
                                         "USING (ref) WHERE d.doc_id = 'd1'")
        row = await cur.fetchone()
        # the warm codec's bytes without the index keys, which are the directory's array, in order
        assert row is not None and bytes(row[0]) == encode_record(record("d1", (a, b)))
        assert row[1] == [key_bigint(a), key_bigint(b)]
        rows = await archive.rows([record("d1", ()).ref])
        assert rows[record("d1", ()).ref].record == record("d1", (a, b))  # read back with its keys
    finally:
        await archive.close()


async def test_one_lookup_answers_candidates_owners_and_decisions(postgres_url: str) -> None:
    a, b, c, x = key("a"), key("b"), key("c"), key("x")
    archive = await migrated(postgres_url)
    try:
        await archive.put([cold("d1", (a, b)), cold("d2", (b, c))])
        ref1, ref2 = record("d1", ()).ref, record("d2", ()).ref
        answer = await archive.lookup([[a, b, 0], [x], [c]], [h("cd2"), h("nobody")], ["d1", "zz"])
        assert answer.candidates == [{ref1: 2, ref2: 1}, {}, {ref2: 1}]
        assert answer.owners == {h("cd2"): "d2"}
        assert set(answer.decisions) == {"d1"} and answer.decisions["d1"].status == "unique"
        fetched = await archive.fetch([ref1, b"\0" * 8])
        assert list(fetched) == [ref1] and fetched[ref1].doc_id == "d1" and fetched[ref1].meta == b"\x01meta"
    finally:
        await archive.close()


async def test_a_windows_keys_are_searched_in_the_keys_index_however_large_the_directory(postgres_url: str) -> None:
    """The planner guesses a key slice's rows from a default selectivity (33,000 a slice at 3.3 M
    documents); pulled up into one join, the slices' searches were planned as a walk of the whole
    directory in ref order, its primary key, which spares DISTINCT ON the sort of all those
    guessed rows (minutes a window at 3.3 M documents). Here the sort is made to look dearer
    than any walk, as millions of documents make it: each slice must stay a search of the GIN
    index all the same."""
    archive = await migrated(postgres_url)
    try:
        await archive.put([cold(f"d{i}", (key(f"a{i}"), key(f"b{i}"))) for i in range(200)])
        conn = archive.conn
        await conn.execute("ANALYZE neardup_refs")
        await conn.execute("SET enable_sort = off")  # this connection only: closed below
        keys = [key_bigint(key(f"q{i}")) for i in range(2500)]
        cur = await conn.execute("EXPLAIN " + _CANDIDATES, {"keys": keys}, binary=True)
        plan = "\n".join(str(row[0]) for row in await cur.fetchall())
        assert "Bitmap Index Scan on neardup_refs_keys" in plan, plan
        assert "neardup_refs_pkey" not in plan and "Seq Scan on neardup_refs" not in plan, plan
        answer = await archive.lookup([[key("a7"), key("q1")]], [], [])
        assert answer.candidates == [{record("d7", ()).ref: 1}]
    finally:
        await archive.close()


async def test_verify_needs_the_same_record_and_every_entry(postgres_url: str) -> None:
    a, b = key("a"), key("b")
    archive = await migrated(postgres_url)
    try:
        await archive.put([cold("d1", (a, b)), cold("d2", (a,))])
        await archive.conn.execute("UPDATE neardup_refs SET keys = array_remove(keys, %s) WHERE ref = %s",
                                   (key_bigint(b), to_bigint(record("d1", ()).ref)))
        held = await archive.verify([record("d1", (a, b)), record("d2", (a,)), record("d3", (a,))])
        assert held == {record("d2", ()).ref}
    finally:
        await archive.close()


async def test_migration_2_folds_version_1_entries_into_arrays_and_keeps_every_document(postgres_url: str) -> None:
    """An archive written by schema version 1 (index entries as rows, records with their keys)
    migrates to the arrays without losing a document: lookups, reads, verification and idempotent
    puts answer as for documents archived after it."""
    a, b, c, x = key("a"), key("b"), key("c"), key("x")
    old = [cold("d1", (a, b)), cold("d2", (b, c), MAR), cold("d3", ())]
    archive = ColdArchive(postgres_url)
    await archive.open(migrating=True)
    try:
        assert await archive.migrate(up_to=1) == [1]
        await _put_version_1(archive, old)
        assert await archive.migrate() == list(range(2, LATEST + 1))
        cur = await archive.conn.execute("SELECT to_regclass('neardup_index')")
        assert (await cur.fetchone()) == (None,)
        assert await archive.put(old) == 0  # already archived: nothing doubled
        assert await archive.put([cold("d4", (c, x))]) == 1
        stats = await archive.stats()
        assert (stats["documents"], stats["index_entries"]) == (4, 6)
        ref = {d: record(d, ()).ref for d in ("d1", "d2", "d3", "d4")}
        answer = await archive.lookup([[a, b], [c], [x]], [h("cd3")], ["d2"])
        assert answer.candidates == [{ref["d1"]: 2, ref["d2"]: 1}, {ref["d2"]: 1, ref["d4"]: 1}, {ref["d4"]: 1}]
        assert answer.owners == {h("cd3"): "d3"} and set(answer.decisions) == {"d2"}
        rows = await archive.rows(list(ref.values()))
        assert [rows[ref[d.record.doc_id]].record for d in old] == [d.record for d in old]
        assert await archive.verify([d.record for d in old]) == {ref["d1"], ref["d2"], ref["d3"]}
    finally:
        await archive.close()


async def _put_version_1(archive: ColdArchive, docs: list[ColdDocument]) -> None:
    """What version 1's put wrote: a directory row, a row with the record and its keys, and one
    index row per (key, document)."""
    from neardup.storage.codec import encode_decision

    conn = archive.conn
    for d in docs:
        r, seen = to_bigint(d.record.ref), dt.datetime.fromtimestamp(d.first_seen, dt.UTC)
        name, start, end = month_partition(seen.year, seen.month)
        await conn.execute(f"CREATE TABLE IF NOT EXISTS {name} PARTITION OF neardup_documents "
                           f"FOR VALUES FROM ('{start}') TO ('{end}')")
        await conn.execute("INSERT INTO neardup_refs VALUES (%s, %s, %s, %s)",
                           (r, d.record.content_hash, d.record.doc_id, seen))
        await conn.execute("INSERT INTO neardup_documents (ref, doc_id, content_type, content_hash, record, "
                           "decision, first_seen) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                           (r, d.record.doc_id, d.record.content_type, d.record.content_hash,
                            encode_record(d.record, with_keys=True),
                            None if d.decision is None else encode_decision(d.decision), seen))
        for k in set(d.record.index_keys):
            await conn.execute("INSERT INTO neardup_index VALUES (%s, %s)", (key_bigint(k), r))


async def test_wrong_password_is_an_auth_error_that_never_shows_the_password(postgres_url: str) -> None:
    parts = urlsplit(postgres_url)
    url = parts._replace(netloc=f"neardup:Wr0ngSecret@{parts.hostname}:{parts.port}").geturl()
    with pytest.raises(StoreAuthError) as caught:
        await ColdArchive(url).open()
    line = caught.value.one_line()
    assert "Wr0ngSecret" not in line and "***" in line and "\n" not in line


async def test_unreachable_archive_is_one_line_unavailable() -> None:
    url = f"postgresql://neardup:s3cret@127.0.0.1:{free_port()}/db"
    with pytest.raises(StoreUnavailableError) as caught:
        await ColdArchive(url, connect_timeout=2).open()
    assert "s3cret" not in caught.value.one_line() and "127.0.0.1" in caught.value.one_line()


async def test_password_authentication_is_required(postgres_url: str) -> None:
    parts = urlsplit(postgres_url)
    with pytest.raises(psycopg.OperationalError, match="password"):
        await psycopg.AsyncConnection.connect(parts._replace(netloc=f"neardup@{parts.hostname}:{parts.port}").geturl(),
                                              connect_timeout=5)


async def test_a_dropped_connection_fails_one_call_and_the_next_connects_again(postgres_url: str) -> None:
    archive = await migrated(postgres_url)
    try:
        await archive.put([cold("d1", (key("a"),))])
        cur = await archive.conn.execute("SELECT pg_backend_pid()")
        row = await cur.fetchone()
        assert row is not None
        with psycopg.connect(postgres_url, autocommit=True) as admin:  # a restart or failover, as a client sees it
            admin.execute("SELECT pg_terminate_backend(%s)", (row[0],))
        with pytest.raises(StoreUnavailableError):
            await archive.lookup([[key("a")]], [], [])
        answer = await archive.lookup([[key("a")]], [], [])  # a worker's retry of the window
        assert answer.candidates == [{record("d1", ()).ref: 1}]
    finally:
        await archive.close()
