"""Lookups across tiers on a real PostgreSQL: the same decisions whichever tier holds the earlier
document, ``tier: cold`` in the evidence of a duplicate found there, replays and exact copies of
archived documents, and warm-store memory that goes down by what was moved (Redis)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from neardup.config import load_settings
from neardup.decision import Decision, Reason, Status
from neardup.document import Document, parse_document
from neardup.engine import Engine, decide_all
from neardup.storage import FingerprintStore, open_store
from neardup.storage.postgres.archive import ColdArchive
from neardup.storage.postgres.mover import move
from neardup.storage.postgres.tiered import TieredStore

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample.jsonl"
TTL: dict[str, int | None] = {"announcement": None, "news": 7 * 86_400, "default": 30 * 86_400}


def announcements() -> list[Document]:
    """The bundled sample as announcements (a type the cold tier keeps), in file order."""
    return [parse_document(json.dumps({**json.loads(line), "type": "announcement"}).encode())
            for line in SAMPLE.read_bytes().splitlines() if line.strip()]  # fmt: skip


async def migrated(url: str) -> ColdArchive:
    archive = ColdArchive(url)
    await archive.open(migrating=True)
    await archive.migrate()
    await archive.close()
    return archive


async def decide(store: FingerprintStore, docs: list[Document]) -> list[Decision]:
    """A fresh engine (an empty hot tier: a later process) on ``store``."""
    engine = Engine(load_settings(worker_id="test", ttl_seconds=TTL), store)
    return await decide_all(engine, docs, 50)


def outcome(d: Decision) -> tuple[str, str, str | None, str | None]:
    rule = d.evidence.rule.value if d.evidence.rule else None
    return d.id, d.status.value, d.duplicate_of, rule


async def test_the_same_decisions_whichever_tier_holds_the_originals(postgres_url: str) -> None:
    docs = announcements()
    first, later = docs[:100], docs[100:]
    warm_only = open_store("memory://", ttl=TTL)
    await decide(warm_only, first)
    expected = await decide(warm_only, later)

    tiered = open_store("memory://", ttl=TTL, archive_url=postgres_url)
    assert isinstance(tiered, TieredStore)
    await migrated(postgres_url)
    await tiered.open()
    try:
        await decide(tiered, first)
        stored = (await tiered.stats())["records"]
        report = await move(tiered.warm, tiered.cold, older_than=0)
        assert report.moved == report.copied == stored > 0 and (await tiered.stats())["records"] == 0
        got = await decide(tiered, later)
        assert [outcome(d) for d in got] == [outcome(d) for d in expected]
        archived = {d.id for d in first}
        from_cold = [d for d in got if d.duplicate_of in archived]
        assert from_cold and all(d.evidence.tier == "cold" for d in from_cold)
        # the tier is the matched document's, also for a unique one kept apart by a critical difference
        assert all((d.evidence.tier == "cold") == (d.evidence.matched_id in archived) for d in got)
        assert "tier" in from_cold[0].to_record()["evidence"]
    finally:
        await tiered.close()


async def test_archived_documents_replay_and_own_their_exact_copies(postgres_url: str) -> None:
    docs = announcements()[:20]
    await migrated(postgres_url)
    tiered = open_store("memory://", ttl=TTL, archive_url=postgres_url)
    assert isinstance(tiered, TieredStore)
    await tiered.open()
    try:
        before = await decide(tiered, docs)
        await move(tiered.warm, tiered.cold, older_than=0)
        replays = await decide(tiered, docs)
        assert all(d.evidence.replay for d in replays)
        assert [outcome(d) for d in replays] == [outcome(d) for d in before]
        copies = [Document(id=f"copy-{d.id}", text=d.text, type="announcement") for d in docs]
        decided = await decide(tiered, copies)
        originals = {d.id: (d.duplicate_of or d.id) for d in before}
        for copy, orig in zip(decided, docs, strict=True):
            assert copy.status is Status.DUPLICATE and copy.evidence.reason is Reason.EXACT
            assert copy.duplicate_of == originals[orig.id] and copy.evidence.tier == "cold"
        assert (await tiered.stats())["records"] == 0  # the copies' claims were the archive's: nothing stored
    finally:
        await tiered.close()


async def test_other_types_are_not_looked_up_in_the_cold_tier(postgres_url: str) -> None:
    docs = announcements()[:30]
    await migrated(postgres_url)
    tiered = open_store("memory://", ttl=TTL, archive_url=postgres_url)
    assert isinstance(tiered, TieredStore)
    await tiered.open()
    try:
        await decide(tiered, docs)
        await move(tiered.warm, tiered.cold, older_than=0)
        news = [Document(id=f"news-{d.id}", text=d.text, type="news") for d in docs]
        assert all(d.status is Status.UNIQUE for d in await decide(tiered, news))
    finally:
        await tiered.close()


class _MovedDuringLookup:
    """A warm store whose lookup is when ``neardup archive`` moves every kept document to the cold
    tier (copied there, then deleted here), as another process could at any time."""

    def __init__(self, tiered: TieredStore) -> None:
        self.tiered, self.inner = tiered, tiered.warm

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def lookup(self, query: Any) -> Any:
        await move(self.inner, self.tiered.cold, older_than=0)
        return await self.inner.lookup(query)


async def test_a_document_moved_while_a_window_looks_up_is_found_in_one_tier(postgres_url: str) -> None:
    """The warm store is read before the cold tier (and the filter of archived keys catches up
    after it): a document the warm read no longer finds was archived before the cold read."""
    docs = announcements()
    await migrated(postgres_url)
    warm_only = open_store("memory://", ttl=TTL)
    await decide(warm_only, docs[:100])
    expected = await decide(warm_only, docs[100:])
    tiered = open_store("memory://", ttl=TTL, archive_url=postgres_url)
    assert isinstance(tiered, TieredStore)
    await tiered.open()
    try:
        assert await tiered.cold.filter_loaded()  # loaded while the archive was empty
        await decide(tiered, docs[:100])
        tiered.warm = _MovedDuringLookup(tiered)  # type: ignore[assignment]
        got = await decide(tiered, docs[100:])
        assert [outcome(d) for d in got] == [outcome(d) for d in expected]
        assert any(d.evidence.tier == "cold" for d in got)
    finally:
        await tiered.close()


async def test_redis_memory_goes_down_by_what_was_moved(redis_server: str, postgres_url: str) -> None:
    options: dict[str, Any] = {"key_prefix": f"t{uuid.uuid4().hex[:12]}", "retry_seconds": 20}
    docs = announcements()
    await migrated(postgres_url)
    tiered = open_store(redis_server, ttl=TTL, archive_url=postgres_url, **options)
    assert isinstance(tiered, TieredStore)
    await tiered.open()
    try:
        before = await decide(tiered, docs)
        stored = await tiered.warm.stats()
        report = await move(tiered.warm, tiered.cold, older_than=0, batch=37)
        after = await tiered.warm.stats()
        records = sum(d.evidence.reason is not Reason.EXACT for d in before)
        assert report.moved == report.copied == records and report.unverified == 0
        assert (await tiered.cold.stats())["documents"] == records
        # each moved document took its record, decision and claim keys (its index members are in shards)
        assert stored["keys"] - after["keys"] >= 2 * records
        assert after["used_memory"] < stored["used_memory"] - 500 * records
        assert (await tiered.warm.kept()).documents == []
        again = await move(tiered.warm, tiered.cold, older_than=0)
        assert (again.seen, again.moved, again.copied) == (0, 0, 0)
        replays = await decide(tiered, docs)
        assert [outcome(d) for d in replays] == [outcome(d) for d in before]
    finally:
        await tiered.close()
