"""The workers' filter of archived keys on a real PostgreSQL (tests/fixtures/postgres.py): a
window's keys that no archived document holds are not searched, and nothing archived is missed,
whether it was archived before the filter loaded, after, or by a transaction still running while
the filter caught up."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from neardup.storage.postgres.archive import DEFAULT_KEY_FILTER_BYTES, ColdArchive, key_bigint, to_bigint
from tests.integration.test_cold_archive import cold, h, key, migrated

pytestmark = pytest.mark.integration


def new_keys(tag: str, n: int = 38) -> list[int]:
    return [key(f"{tag}-{i}") for i in range(n)]


async def test_keys_no_archived_document_holds_are_not_searched(postgres_url: str) -> None:
    archived = [cold(f"d{i}", tuple(new_keys(f"d{i}"))) for i in range(200)]
    filtered, unfiltered = await migrated(postgres_url), ColdArchive(postgres_url, key_filter_bytes=0)
    await unfiltered.open()
    try:
        await filtered.put(archived)
        assert await filtered.filter_loaded() and not await unfiltered.filter_loaded()
        window = [list(d.record.index_keys) for d in archived[:10]] + [new_keys(f"new{j}") for j in range(190)]
        answer = await filtered.lookup(window, [h("cd3")], ["d4"])
        assert answer == await unfiltered.lookup(window, [h("cd3")], ["d4"])  # the same answer
        assert [bool(c) for c in answer.candidates] == [True] * 10 + [False] * 190
        stats = filtered.filter_stats()
        assert stats["keys_asked"] == 200 * 38 and stats["filter_keys"] == 200 * 38
        # the 380 keys of the ten archived ones, and a few of the 7,220 new keys that it lets through
        assert 380 <= stats["keys_searched"] < 380 + 0.05 * 7_220
        assert unfiltered.filter_stats()["keys_searched"] == 200 * 38
    finally:
        await filtered.close()
        await unfiltered.close()


async def test_what_another_client_archives_after_the_load_is_found(postgres_url: str) -> None:
    worker, archiver = await migrated(postgres_url), await migrated(postgres_url)
    try:
        await archiver.put([cold("d1", tuple(new_keys("d1")))])
        assert await worker.filter_loaded()
        late = cold("d2", tuple(new_keys("d2")))
        await archiver.put([late])
        answer = await worker.lookup([list(late.record.index_keys)], [], [])
        assert answer.candidates == [{late.record.ref: 38}]
    finally:
        await worker.close()
        await archiver.close()


async def test_a_row_of_a_transaction_running_while_the_filter_caught_up_is_read_later(postgres_url: str) -> None:
    """The catch-up reads from the oldest transaction still running at the last read: a row that
    transaction commits afterwards (its id older than rows already read) is not skipped."""
    worker, archiver = await migrated(postgres_url), await migrated(postgres_url)
    slow = cold("slow", tuple(new_keys("slow")))
    try:
        assert await worker.filter_loaded()
        async with archiver.conn.transaction():
            await archiver.conn.execute(
                "INSERT INTO neardup_refs (ref, content_hash, doc_id, first_seen, keys) VALUES (%s, %s, %s, %s, %s)",
                (to_bigint(slow.record.ref), slow.record.content_hash, "slow", dt.datetime.now(dt.UTC),
                 [key_bigint(k) for k in slow.record.index_keys]))
            await archiver.conn.execute("SELECT 1")
            quick = cold("quick", tuple(new_keys("quick")))
            other = await migrated(postgres_url)
            await other.put([quick])  # a later transaction, committed first
            await other.close()
            answer = await worker.lookup([list(quick.record.index_keys), list(slow.record.index_keys)], [], [])
            assert answer.candidates == [{quick.record.ref: 38}, {}]  # the slow one is not committed yet
        answer = await worker.lookup([list(slow.record.index_keys)], [], [])
        assert answer.candidates == [{slow.record.ref: 38}]
    finally:
        await worker.close()
        await archiver.close()


async def test_documents_archived_before_migration_3_are_in_the_filter(postgres_url: str) -> None:
    """A directory row written by schema version 2 (no archived_tx) gets one as it migrates."""
    archive = ColdArchive(postgres_url)
    await archive.open(migrating=True)
    try:
        assert await archive.migrate(up_to=2) == [1, 2]
        old = cold("old", tuple(new_keys("old")))
        await archive.conn.execute("INSERT INTO neardup_refs (ref, content_hash, doc_id, first_seen, keys) "
                           "VALUES (%s, %s, %s, %s, %s)",
                           (to_bigint(old.record.ref), old.record.content_hash, "old", dt.datetime.now(dt.UTC),
                            [key_bigint(k) for k in old.record.index_keys]))
        assert await archive.migrate() == [3, 4]
        assert await archive.filter_loaded() and archive.filter_stats()["filter_keys"] == 38
        answer = await archive.lookup([list(old.record.index_keys)], [], [])
        assert answer.candidates == [{old.record.ref: 38}]
        assert archive.filter_stats()["keys_searched"] == 38
    finally:
        await archive.close()



@asynccontextmanager
async def archive_at(url: str, *, migrate: bool = False, key_filter_bytes: int = DEFAULT_KEY_FILTER_BYTES
                     ) -> AsyncIterator[ColdArchive]:
    """A client of the archive at ``url`` (migrated first, or a worker's: opened, its filter
    loading), closed on the way out."""
    if migrate:
        archive = await migrated(url)
    else:
        archive = ColdArchive(url, key_filter_bytes=key_filter_bytes)
        await archive.open()
    try:
        yield archive
    finally:
        await archive.close()


async def test_a_saved_filter_is_where_a_worker_starts_and_it_catches_up(postgres_url: str) -> None:
    """neardup archive saves the filter; a worker loads it instead of reading every key, then reads
    only what was archived since: documents archived before and after the save are both found."""
    before = [cold(f"b{i}", tuple(new_keys(f"b{i}"))) for i in range(30)]
    after = cold("after", tuple(new_keys("after")))
    async with archive_at(postgres_url, migrate=True) as archiver:
        await archiver.put(before)
        first = await archiver.save_filter(1 << 20)
        assert first["saved"] == 1 and first["keys"] == 30 * 38
        again = await archiver.save_filter(1 << 20)  # nothing archived since: left as it is
        assert again["saved"] == 0 and again["rows_since_saved"] == 0
        await archiver.conn.execute("DELETE FROM neardup_refs WHERE doc_id = 'b0'")  # the filter still holds b0
        await archiver.put([after])
        async with archive_at(postgres_url) as worker:
            assert await worker.filter_loaded()
            assert worker.filter_stats()["filter_keys"] == 30 * 38  # the saved filter's count: no key read again
            window = [list(d.record.index_keys) for d in (before[1], after, before[0])]
            answer = await worker.lookup(window, [], [])
            assert answer.candidates == [{before[1].record.ref: 38}, {after.record.ref: 38}, {}]
            # b0's keys passed the filter (it was saved with them) and were searched: nothing held them
            assert worker.filter_stats()["keys_searched"] == 3 * 38


async def test_a_saved_filter_larger_than_a_workers_budget_is_folded(postgres_url: str) -> None:
    docs = [cold(f"d{i}", tuple(new_keys(f"d{i}"))) for i in range(3_000)]
    async with archive_at(postgres_url, migrate=True) as archiver:
        await archiver.put(docs)
        assert (await archiver.save_filter(1 << 24))["bits"] == 1 << 21  # sized for its keys (114,000 x 10 bits)
        async with archive_at(postgres_url, key_filter_bytes=1 << 17) as worker:  # room for 2**20 bits
            assert await worker.filter_loaded() and worker.filter_stats()["filter_bits"] == 1 << 20
            answer = await worker.lookup([list(d.record.index_keys) for d in docs], [], [])
            assert [set(c) for c in answer.candidates] == [{d.record.ref} for d in docs]


async def test_an_unreadable_saved_filter_is_set_aside_and_every_key_read(postgres_url: str) -> None:
    doc = cold("d", tuple(new_keys("d")))
    async with archive_at(postgres_url, migrate=True) as archiver:
        await archiver.put([doc])
        await archiver.save_filter(1 << 20)
        await archiver.conn.execute("UPDATE neardup_key_filter SET data = 'short'::bytea")
        async with archive_at(postgres_url) as worker:
            assert await worker.filter_loaded() and worker.filter_stats()["filter_keys"] == 38
            assert (await worker.lookup([list(doc.record.index_keys)], [], [])).candidates == [{doc.record.ref: 38}]
