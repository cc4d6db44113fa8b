"""``neardup search`` across the warm store and the cold tier on a real PostgreSQL: every
near-duplicate with its tier, rule, similarity and times, the cluster's first publisher, --since
and --limit, and a negation flip that is not listed."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from neardup.config import load_settings
from neardup.document import Document
from neardup.engine import Engine, decide_all
from neardup.search import Searcher, answer, searcher_for, select
from neardup.storage import TTLPolicy
from neardup.storage.file import FileFingerprintStore
from neardup.storage.postgres.archive import ColdArchive
from neardup.storage.postgres.mover import move
from neardup.storage.postgres.tiered import TieredStore
from tests.integration.test_tiered_store import TTL, migrated

pytestmark = pytest.mark.integration

NOTICE = (
    "关于某某公司变更经营范围申请的批复\n各有关单位：经审查，某某公司提交的变更经营范围申请材料齐全，"
    "符合相关规定。根据《行政许可法》第三十八条的规定，决定给予批准。该公司应当自本批复下达之日起"
    "三十日内办理变更登记手续，逾期未办理的，本批复自动失效。特此批复。\n二〇二四年三月十五日"
)
REPRINT = "来源：某某市人民政府网\n" + NOTICE + "\n责任编辑：王五"
FLIP = NOTICE.replace("给予批准", "不予批准")
JAN, MAR = (dt.datetime(2024, m, 15, tzinfo=dt.UTC).timestamp() for m in (1, 3))


def announcement(doc_id: str, text: str, published_at: float | None = None) -> Document:
    return Document(id=doc_id, text=text, type="announcement", published_at=published_at)


async def history(path: Path, url: str) -> None:
    """The original (published in March) archived to the cold tier; a reprint dated January
    decided later, still warm; a third copy, warm, published after both."""
    await migrated(url)
    store = TieredStore(FileFingerprintStore(path, ttl=TTLPolicy(by_type=TTL)), ColdArchive(url),
                        TTLPolicy(by_type=TTL))  # fmt: skip
    await store.open()
    try:
        settings = load_settings(worker_id="test", ttl_seconds=TTL)
        await decide_all(Engine(settings, store), [announcement("orig", NOTICE, MAR)], 10)
        await move(store.warm, store.cold, older_than=0)
        decided = await decide_all(Engine(settings, store), [announcement("reprint", REPRINT, JAN),
                                                             announcement("later", NOTICE + "（转载）")], 10)
        assert [d.duplicate_of for d in decided] == ["orig", "orig"]
    finally:
        await store.close()


async def searcher_run(path: Path, url: str, query: str | None, doc_id: str | None) -> list[dict[str, object]]:
    warm, cold = FileFingerprintStore(path, ttl=TTLPolicy(by_type=TTL)), ColdArchive(url)
    await warm.open()
    await cold.open()
    try:
        searcher = Searcher(Engine(load_settings(worker_id="test", ttl_seconds=TTL), warm), warm, cold)
        found = await (searcher.by_id(doc_id) if doc_id else searcher.by_text(query or "", "announcement"))
        return select(found, None, 100)
    finally:
        await warm.close()
        await cold.close()


def test_search_lists_every_near_duplicate_across_tiers(tmp_path: Path, postgres_url: str) -> None:
    path = tmp_path / "store.db"
    asyncio.run(history(path, postgres_url))
    rows = asyncio.run(searcher_run(path, postgres_url, REPRINT, None))
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == {"orig", "reprint", "later"}
    assert by_id["orig"]["tier"] == "cold" and by_id["reprint"]["tier"] == "warm"
    assert all(r["first_publisher"] == "reprint" for r in rows)  # published in January, the earliest
    assert by_id["orig"]["published_at"] == "2024-03-15T00:00:00Z"
    assert all(str(r["first_seen"]).endswith("Z") and r["rule"] for r in rows)
    assert rows[0]["id"] == "reprint" and rows[0]["jaccard"] == 1.0  # the most similar first: itself

    by_stored_id = asyncio.run(searcher_run(path, postgres_url, None, "orig"))
    assert {r["id"] for r in by_stored_id} == {"reprint", "later"}  # not itself
    assert asyncio.run(searcher_run(path, postgres_url, FLIP, None)) == []  # 不予批准: no near-duplicate


def test_search_command_prints_json_lines_with_since_and_limit(tmp_path: Path, postgres_url: str) -> None:
    path = tmp_path / "store.db"
    asyncio.run(history(path, postgres_url))
    base = [sys.executable, "-m", "neardup", "search", "--store", f"file://{path}", "--archive", postgres_url]

    def run(*args: str) -> list[dict[str, object]]:
        res = subprocess.run([*base, *args], capture_output=True, text=True, timeout=120, check=False)
        assert res.returncode == 0, res.stderr
        assert postgres_url.split("@")[0].split(":")[-1] not in res.stdout + res.stderr  # the password
        return [json.loads(line) for line in res.stdout.splitlines()]

    assert {r["id"] for r in run("--id", "later")} == {"orig", "reprint"}
    assert len(run("--id", "later", "--limit", "1")) == 1
    assert run("--id", "later", "--since", "2999-01-01") == []
    usage = subprocess.run(base, capture_output=True, text=True, timeout=120, check=False)
    assert usage.returncode == 2 and "either TEXT or --id" in usage.stderr


def test_the_workers_search_request_is_bounded_and_says_what_is_wrong(tmp_path: Path, postgres_url: str) -> None:
    path = tmp_path / "store.db"
    asyncio.run(history(path, postgres_url))

    async def ask(body: bytes) -> tuple[int, dict[str, object]]:
        settings = load_settings(worker_id="test", ttl_seconds=TTL, archive_url=postgres_url)
        engine = await Engine.open(settings, store=TieredStore(FileFingerprintStore(path, ttl=TTLPolicy(by_type=TTL)),
                                                               ColdArchive(postgres_url), TTLPolicy(by_type=TTL)))
        try:
            return await answer(searcher_for(engine), body)
        finally:
            await engine.close()

    status, found = asyncio.run(ask(json.dumps({"text": REPRINT, "type": "announcement", "limit": 2}).encode()))
    assert status == 200 and found["first_publisher"] == "reprint"
    assert [m["id"] for m in found["matches"]] == ["reprint", "orig"]  # type: ignore[index]
    status, found = asyncio.run(ask(b'{"id": "later", "since": "2999-01-01"}'))
    assert (status, found["matches"]) == (200, [])
    for body, error in ((b"{nope", "not JSON"), (b'{"text": "a", "id": "b"}', '"text" or "id"'),
                        (b'{"id": "a", "limit": 1000}', "limit"), (b'{"text": "   "}', "text")):
        status, refused = asyncio.run(ask(body))
        assert status == 400 and error in str(refused["error"]), refused
    status, missing = asyncio.run(ask(b'{"id": "nobody"}'))
    assert status == 404 and missing["reason"] == "not_found"
