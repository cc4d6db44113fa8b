"""``neardup archive migrate`` and ``neardup archive`` as a user runs them, against a real PostgreSQL:
the schema command is idempotent, and an archive killed with SIGKILL in the middle of its work
loses and doubles nothing once it is run again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from neardup.config import load_settings
from neardup.engine import Engine, decide_all
from neardup.storage import FingerprintRecord, TTLPolicy
from neardup.storage.file import FileFingerprintStore
from neardup.storage.postgres.archive import ColdArchive
from neardup.storage.postgres.schema import LATEST
from tests.integration.test_tiered_store import SAMPLE, TTL, announcements

pytestmark = pytest.mark.integration

NEARDUP = [sys.executable, "-m", "neardup"]


def neardup(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NEARDUP, *args], capture_output=True, text=True, timeout=timeout, check=False)


async def filled_store(path: Path) -> list[FingerprintRecord]:
    """The sample as announcements, decided into a file store; returns the records it holds."""
    store = FileFingerprintStore(path, ttl=TTLPolicy(by_type=TTL))
    await store.open()
    await decide_all(Engine(load_settings(worker_id="test", ttl_seconds=TTL), store), announcements(), 50)
    records = [d.record for d in (await store.kept(count=10_000)).documents]
    await store.close()
    return records


def cold_count(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM neardup_documents").fetchone()
    return int(row[0]) if row else 0


def test_migrate_twice_applies_once_and_never_prints_the_password(postgres_url: str) -> None:
    password = postgres_url.split(":")[2].split("@")[0]
    first, second = neardup("archive", "migrate", "--archive", postgres_url), neardup("archive", "migrate",
                                                                                      "--archive", postgres_url)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert json.loads(first.stdout)["applied"] == list(range(1, LATEST + 1))
    assert json.loads(second.stdout)["applied"] == []
    assert password not in first.stdout + first.stderr + second.stdout + second.stderr


def test_an_unreachable_archive_is_one_line(tmp_path: Path) -> None:
    res = neardup("archive", "--store", f"file://{tmp_path / 's.db'}", "--archive",
                  "postgresql://u:Secr3t@127.0.0.1:1/db")
    assert res.returncode == 1 and "Secr3t" not in res.stderr
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("neardup: error:") and "127.0.0.1" in res.stderr


def test_archive_killed_mid_run_loses_and_doubles_nothing(tmp_path: Path, postgres_url: str) -> None:
    path = tmp_path / "store.db"
    records = asyncio.run(filled_store(path))
    assert len(records) > 100
    assert neardup("archive", "migrate", "--archive", postgres_url).returncode == 0
    command = [*NEARDUP, "archive", "--older-than", "0s", "--batch", "3", "--store", f"file://{path}",
               "--archive", postgres_url]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while proc.poll() is None and cold_count(postgres_url) < len(records) // 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    at_kill = cold_count(postgres_url)
    assert proc.returncode == -signal.SIGKILL and 0 < at_kill < len(records)  # killed in the middle

    rerun = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["unverified"] == 0 and report["store_after"]["records"] == 0
    # the rerun copies what the killed run had not, and forgets also what it had copied but not forgotten
    assert report["copied"] == len(records) - at_kill and report["moved"] >= report["copied"]
    # and saves the filter of archived keys the workers start from (none was saved before)
    assert report["key_filter"]["saved"] == 1 and report["key_filter"]["keys"] > 0
    asyncio.run(_nothing_lost_or_doubled(postgres_url, path, records))


async def _nothing_lost_or_doubled(url: str, path: Path, records: list[FingerprintRecord]) -> None:
    cold = ColdArchive(url)
    await cold.open()
    try:
        cur = await cold.conn.execute("SELECT count(*), count(DISTINCT ref) FROM neardup_documents")
        assert await cur.fetchone() == (len(records), len(records))
        rows = await cold.rows([r.ref for r in records])
        assert {ref: row.record for ref, row in rows.items()} == {r.ref: r for r in records}
        assert (await cold.stats())["index_entries"] == sum(len(set(r.index_keys)) for r in records)
    finally:
        await cold.close()
    warm = FileFingerprintStore(path)
    await warm.open()
    try:
        stats = await warm.stats()
        assert stats["records"] == stats["bucket_entries"] == stats["claims"] == 0
    finally:
        await warm.close()


def test_the_batch_cli_decides_against_the_cold_tier(tmp_path: Path, postgres_url: str) -> None:
    """neardup dedup --archive: originals archived by neardup archive are still found, and say so."""
    lines = [json.dumps({**json.loads(line), "type": "announcement"}, ensure_ascii=False)
             for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    first, later = tmp_path / "first.jsonl", tmp_path / "later.jsonl"
    first.write_text("\n".join(lines[:100]) + "\n", encoding="utf-8")
    later.write_text("\n".join(lines[100:]) + "\n", encoding="utf-8")
    store = ["--store", f"file://{tmp_path / 'store.db'}", "--archive", postgres_url]
    password = postgres_url.split(":")[2].split("@")[0]
    assert neardup("archive", "migrate", "--archive", postgres_url).returncode == 0
    assert neardup("dedup", str(first), "-o", str(tmp_path / "first.out.jsonl"), "-q", *store).returncode == 0
    moved = neardup("archive", "--older-than", "0s", *store)
    assert moved.returncode == 0 and json.loads(moved.stdout)["moved"] > 0, moved.stderr
    run = neardup("dedup", str(later), "-o", str(tmp_path / "later.out.jsonl"), "-q", *store)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stderr.strip().splitlines()[-1])
    assert summary["archive"].startswith("postgresql://neardup:***@") and password not in run.stderr
    rows = [json.loads(line) for line in (tmp_path / "later.out.jsonl").read_text(encoding="utf-8").splitlines()]
    archived = {json.loads(line)["id"] for line in lines[:100]}
    from_cold = [r for r in rows if r["duplicate_of"] in archived]
    assert from_cold and all(r["evidence"]["tier"] == "cold" for r in from_cold)
