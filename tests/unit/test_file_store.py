"""The ``file://`` store (storage/file.py): one process at a time with a clear error for the second,
writable or refused at start, every window durable as it is decided (a run killed -9 resumes),
files of the wrong shape refused in one line."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from neardup.storage.base import Claim, DecisionRecord, FingerprintRecord, TTLPolicy
from neardup.storage.errors import StoreCorruptError
from neardup.storage.file import FileFingerprintStore, StoreLockedError, lock_path
from tests.unit.test_cli import ROOT, SAMPLE, neardup, one_error_line

LINES = SAMPLE.read_bytes().splitlines(keepends=True)
SMALL_WINDOWS = {"NEARDUP_WINDOW__MAX_COUNT": "10"}


def record(doc_id: str, ctype: str = "news") -> FingerprintRecord:
    return FingerprintRecord(doc_id, ctype, 1.7e9, doc_id.encode().ljust(16, b"."), b"s" * 8, b"g" * 16, b"p",
                             10, 100, (7, 9))  # fmt: skip


async def decide(store: FileFingerprintStore, doc_id: str, ctype: str = "news") -> None:
    """One window of one document: claim and record, then the decision."""
    rec = record(doc_id, ctype)
    await store.commit([Claim(rec.content_hash, doc_id, ctype)], [rec])
    await store.put_decisions([DecisionRecord(doc_id, "unique", None, "{}", ctype, rec.content_hash)])


def rows(path: Path, table: str) -> list[tuple[object, ...]]:
    """The rows of ``table``, read by another connection (what a killed run leaves is what is on disk)."""
    with sqlite3.connect(path) as db:
        return db.execute(f"SELECT * FROM {table}").fetchall()


def popen(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "neardup", *args], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env)  # fmt: skip


def wait_for(check: object, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


# --------------------------------------------------------------------------- in process
async def test_each_window_is_on_disk_when_put_decisions_returns(tmp_path: Path) -> None:
    path = tmp_path / "store"
    store = FileFingerprintStore(path)
    await store.open()
    await decide(store, "a")
    assert [r[0] for r in rows(path, "decisions")] == ["a"]  # not only at close
    assert len(rows(path, "records")) == 1 and len(rows(path, "claims")) == 1
    await store.close()


async def test_a_second_open_of_the_same_store_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    first = FileFingerprintStore(tmp_path / "store")
    await first.open()
    second = FileFingerprintStore(tmp_path / "." / "store")
    with pytest.raises(StoreLockedError, match=rf"in use by another neardup process \(pid {os.getpid()}\)"):
        await second.open()
    await decide(first, "a")
    await first.close()
    await second.open()
    assert set(await second.get_decisions(["a"])) == {"a"}
    await second.close()


async def test_close_drops_expired_rows_and_folds_the_write_ahead_log(tmp_path: Path) -> None:
    now = [1000.0]
    path = tmp_path / "store"
    store = FileFingerprintStore(path, ttl=TTLPolicy(by_type={"news": 10, "law": None}), clock=lambda: now[0])
    await store.open()
    await decide(store, "short", "news")
    await decide(store, "kept", "law")
    now[0] += 60
    await store.close()
    assert [r[0] for r in rows(path, "decisions")] == ["kept"]
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    again = FileFingerprintStore(path, clock=lambda: now[0])
    await again.open()
    assert set(await again.get_decisions(["short", "kept"])) == {"kept"}
    await again.close()


@pytest.mark.parametrize("content", [b"[1, 2]", b'{"format": "neardup-store", "version": 2}',
                                     b"SQLite format 3\x00junk"])  # fmt: skip
async def test_a_file_that_is_not_a_store_is_refused_and_left_alone(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "store"
    path.write_bytes(content)
    with pytest.raises(StoreCorruptError, match=r"not a neardup-store v\d+ file|store file"):
        await FileFingerprintStore(path).open()
    assert path.read_bytes() == content


async def test_another_sqlite_database_and_rows_of_the_wrong_shape_are_corrupt(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE notes (x)")
    with pytest.raises(StoreCorruptError, match=r"not a neardup-store v\d+ file"):
        await FileFingerprintStore(other).open()
    path = tmp_path / "store"
    store = FileFingerprintStore(path)
    await store.open()
    await decide(store, "a")
    await store.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE records SET index_keys = x'0102'")  # not a whole uint64
    with pytest.raises(StoreCorruptError, match="wrong shape"):
        await FileFingerprintStore(path).open()


V4_RECORDS = """CREATE TABLE records (ref BLOB PRIMARY KEY, id TEXT NOT NULL, type TEXT NOT NULL,
    published_at REAL NOT NULL, content_hash BLOB NOT NULL, simhash BLOB NOT NULL, signature BLOB NOT NULL,
    profile BLOB NOT NULL, shingles INTEGER NOT NULL, length INTEGER NOT NULL, index_keys BLOB NOT NULL,
    expires REAL NOT NULL, meta BLOB NOT NULL)"""


async def test_image_hashes_survive_close_and_open(tmp_path: Path) -> None:
    from dataclasses import replace

    path = tmp_path / "store"
    store = FileFingerprintStore(path)
    await store.open()
    pic = replace(record("pic"), images=(0x8F373714ACFCF4D0, 2**64 - 1))
    await store.commit([Claim(pic.content_hash, "pic", "news")], [pic, record("plain")])
    await store.put_decisions([])
    await store.close()
    again = FileFingerprintStore(path)
    await again.open()
    got = await again.fetch([pic.ref, record("plain").ref])
    assert got[pic.ref] == pic and got[record("plain").ref].images == ()
    await again.close()


async def test_a_store_written_before_images_is_upgraded_at_open(tmp_path: Path) -> None:
    """A v4 file (no image column) opens: its records read with no images, new ones keep theirs."""
    from dataclasses import replace

    path = tmp_path / "store"
    old = record("old")
    with sqlite3.connect(path) as db:
        db.execute(V4_RECORDS)
        db.execute("INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (old.ref, "old", "news", 1.7e9, old.content_hash, old.simhash, old.signature, old.profile, 10, 100,
                    (7).to_bytes(8, "little") + (9).to_bytes(8, "little"), float("inf"), b""))
        db.execute("PRAGMA application_id=1852077424")
        db.execute("PRAGMA user_version=4")
    store = FileFingerprintStore(path)
    await store.open()
    assert (await store.fetch([old.ref]))[old.ref] == old
    new = replace(record("new"), images=(5,))
    await store.commit([], [new])
    await store.put_decisions([])
    await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 6
    reopened = FileFingerprintStore(path)
    await reopened.open()
    assert (await reopened.fetch([old.ref, new.ref])) == {old.ref: old, new.ref: new}
    await reopened.close()


async def test_a_store_written_before_image_structure_is_upgraded_at_open(tmp_path: Path) -> None:
    """A v5 file (images, no structure column) opens: its records read with no structure known,
    new ones keep theirs."""
    from dataclasses import replace

    path = tmp_path / "store"
    old = replace(record("old"), images=(5,))
    with sqlite3.connect(path) as db:
        db.execute(V4_RECORDS)
        db.execute("ALTER TABLE records ADD COLUMN images BLOB NOT NULL DEFAULT x''")
        db.execute("INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (old.ref, "old", "news", 1.7e9, old.content_hash, old.simhash, old.signature, old.profile, 10, 100,
                    (7).to_bytes(8, "little") + (9).to_bytes(8, "little"), float("inf"), b"",
                    (5).to_bytes(8, "little")))
        db.execute("PRAGMA application_id=1852077424")
        db.execute("PRAGMA user_version=5")
    store = FileFingerprintStore(path)
    await store.open()
    assert (await store.fetch([old.ref]))[old.ref] == old
    new = replace(record("new"), images=(5, 6), image_structure=(2, 255))
    await store.commit([], [new])
    await store.put_decisions([])
    await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 6
    reopened = FileFingerprintStore(path)
    await reopened.open()
    assert (await reopened.fetch([old.ref, new.ref])) == {old.ref: old, new.ref: new}
    await reopened.close()


# --------------------------------------------------------------------------- the CLI
def test_a_store_that_cannot_be_written_fails_at_start_in_one_line(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    out = tmp_path / "out.jsonl"
    res = neardup("dedup", str(SAMPLE), "-q", "-o", str(out), "--store", f"file://{not_a_folder}/store")
    assert res.returncode == 1 and "store" in one_error_line(res)
    assert not out.exists()  # refused before any decision was written
    folder = tmp_path / "folder"
    folder.mkdir()
    res = neardup("dedup", str(SAMPLE), "-q", "-o", str(out), "--store", f"file://{folder}")
    assert res.returncode == 1 and str(folder) in one_error_line(res) and not out.exists()


def test_a_file_of_the_wrong_shape_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "store"
    path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    res = neardup("dedup", str(SAMPLE), "-q", "-o", os.devnull, "--store", f"file://{path}")
    assert res.returncode == 1 and str(path) in one_error_line(res)


def test_two_runs_on_one_store_the_second_is_refused_and_nothing_is_lost(tmp_path: Path) -> None:
    store = tmp_path / "store"
    first = popen("dedup", "-", "-q", "--store", f"file://{store}", "-o", str(tmp_path / "first.jsonl"))
    assert first.stdin is not None
    first.stdin.write(b"".join(LINES[:100]))
    first.stdin.flush()
    wait_for(lambda: lock_path(store).exists() and lock_path(store).read_text().strip() == str(first.pid),
             "the first run to lock the store")  # fmt: skip
    second = neardup("dedup", str(SAMPLE), "-q", "--store", f"file://{store}", "-o", str(tmp_path / "second.jsonl"))
    assert second.returncode == 1
    assert f"in use by another neardup process (pid {first.pid})" in one_error_line(second)
    assert not (tmp_path / "second.jsonl").exists()
    _, err = first.communicate(b"".join(LINES[100:]), timeout=300)
    assert first.returncode == 0, err.decode()[-2000:]
    again = neardup("dedup", str(SAMPLE), "-q", "--store", f"file://{store}")
    assert again.returncode == 0, again.stderr.decode()[-2000:]
    assert all(json.loads(line)["evidence"].get("replay") for line in again.stdout.splitlines())


def test_a_run_killed_9_resumes_decided_documents_are_replays(tmp_path: Path) -> None:
    store = tmp_path / "store"
    run = popen("dedup", "-", "-q", "--store", f"file://{store}", env=SMALL_WINDOWS)
    assert run.stdin is not None and run.stdout is not None
    stdin = run.stdin

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError):  # killed before it read them all: mid-run indeed
            stdin.write(b"".join(LINES[:120]))
            stdin.flush()

    threading.Thread(target=feed, daemon=True).start()  # while this thread reads the decisions
    printed: list[dict[str, object]] = []
    while len(printed) < 50:  # decided and written out; the run then waits for more input
        line = run.stdout.readline()
        assert line, run.stderr.read().decode()[-2000:] if run.stderr else "no output"
        printed.append(json.loads(line))
    run.send_signal(signal.SIGKILL)
    run.wait(30)
    assert run.returncode == -signal.SIGKILL

    resumed = neardup("dedup", str(SAMPLE), "-q", "--store", f"file://{store}", env=SMALL_WINDOWS)
    assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
    after = {d["id"]: d for d in map(json.loads, resumed.stdout.splitlines())}
    assert list(after) == [json.loads(line)["id"] for line in LINES]  # every document, once, in order
    for d in printed:
        again = after[str(d["id"])]
        assert again["evidence"].get("replay"), d["id"]
        assert (again["status"], again["duplicate_of"]) == (d["status"], d["duplicate_of"])
    decided_now = [d for d in after.values() if not d["evidence"].get("replay")]
    assert len(decided_now) >= len(LINES) - 120  # the documents the killed run never saw were decided

    clean = neardup("dedup", str(SAMPLE), "-q", "--store", f"file://{tmp_path / 'clean'}", env=SMALL_WINDOWS)
    assert clean.returncode == 0, clean.stderr.decode()[-2000:]
    expected = [(d["id"], d["status"], d["duplicate_of"]) for d in map(json.loads, clean.stdout.splitlines())]
    assert [(d["id"], d["status"], d["duplicate_of"]) for d in after.values()] == expected
