"""Measure the persistence formats considered for the ``file://`` store (storage/file.py).

For N documents of realistic sizes (a 140-byte b-bit signature, a 470-byte profile, 36 index
keys, a 450-character evidence), persisted a window of 1,000 at a time (claims, records and
decisions, fsynced per window), each format in a process of its own:

- ``persist_ms_per_window``: the format's own cost per window (encode, write, fsync);
- ``decode_s``: reading everything back into record, claim and decision objects;
- ``bytes`` on disk;

for ``sqlite`` (the store's schema, WAL, synchronous=FULL, one transaction per window), ``jsonl``
(JSON lines, bytes as base64) and ``binary`` (an append-only log of framed entries: length,
crc32, fixed numbers, field lengths, fields). The in-memory work is the same for every format and
is reported once, for the store as built (``store``: FileFingerprintStore's commit +
put_decisions per window, and its ``open``, which also builds the in-memory index).

Run: ``python scripts/measure_file_store.py [N]`` (default 100000); prints one JSON line.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neardup.storage.base import Claim, DecisionRecord, FingerprintRecord
from neardup.storage.file import SCHEMA, FileFingerprintStore

WINDOW = 1000
EVIDENCE = json.dumps({"reason": "unique", "rule": None, "matched_id": None, "jaccard": None, "hamming": None,
                       "containment": None, "candidates": 0, "thresholds": {"jaccard_high": 0.7, "jaccard_low": 0.45,
                       "hamming_high": 3, "hamming_low": 12, "containment_high": 0.73, "short_text_chars": 50},
                       "threshold_version": 0, "window_id": "vm-9708:1", "worker_id": "vm-9708",
                       "decided_at": 1796295181.762})  # fmt: skip
Writer = Callable[[list[FingerprintRecord]], None]


def documents(n: int) -> list[FingerprintRecord]:
    """``n`` records with the sizes of the development set's."""
    rnd = random.Random(1)
    return [FingerprintRecord(f"doc-{i:08d}", "news", 1.7e9 + i, rnd.randbytes(16), rnd.randbytes(8),
                              rnd.randbytes(140), rnd.randbytes(470), 1600, 2500,
                              tuple(rnd.getrandbits(63) | 1 for _ in range(36))) for i in range(n)]  # fmt: skip


def keys_blob(r: FingerprintRecord) -> bytes:
    """The index keys as the store keeps them (uint64 little-endian)."""
    return struct.pack(f"<{len(r.index_keys)}Q", *r.index_keys)


def per_window(docs: list[FingerprintRecord], write: Writer) -> float:
    """Mean milliseconds of ``write`` per window."""
    spent = []
    for start in range(0, len(docs), WINDOW):
        t0 = time.perf_counter()
        write(docs[start:start + WINDOW])
        spent.append(time.perf_counter() - t0)
    return round(1000 * sum(spent) / len(spent), 1)


def timed(read: Callable[[], Any]) -> float:
    """Seconds ``read`` takes."""
    t0 = time.perf_counter()
    read()
    return round(time.perf_counter() - t0, 2)


# --------------------------------------------------------------------------- sqlite
def measure_sqlite(docs: list[FingerprintRecord], folder: Path) -> dict[str, float]:
    """The store's schema and statements, without the store around them."""
    path = folder / "store.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.executescript(SCHEMA)
    inf = float("inf")

    def write(chunk: list[FingerprintRecord]) -> None:
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT OR REPLACE INTO claims VALUES (?, ?, ?)",
                       [(r.content_hash, r.doc_id, inf) for r in chunk])  # fmt: skip
        db.executemany("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       [(r.ref, r.doc_id, r.content_type, r.published_at, r.content_hash, r.simhash, r.signature,
                         r.profile, r.shingles, r.length, keys_blob(r), inf) for r in chunk])  # fmt: skip
        db.executemany("INSERT OR REPLACE INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [(r.doc_id, "unique", None, EVIDENCE, r.content_type, r.content_hash, inf) for r in chunk])
        db.execute("COMMIT")

    ms = per_window(docs, write)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()

    def read() -> None:
        db = sqlite3.connect(path)
        for row in db.execute("SELECT id, type, published_at, content_hash, simhash, signature, profile, shingles, "
                              "length, index_keys FROM records"):  # fmt: skip
            FingerprintRecord(*row[:9], struct.unpack(f"<{len(row[9]) // 8}Q", row[9]))
        for row in db.execute("SELECT hash, id, expires FROM claims"):
            Claim(row[0], row[1], "news")
        for row in db.execute("SELECT id, status, duplicate_of, evidence, type, content_hash FROM decisions"):
            DecisionRecord(*row)
        db.close()

    return {"persist_ms_per_window": ms, "decode_s": timed(read), "bytes": path.stat().st_size}


# --------------------------------------------------------------------------- JSON lines
def _b64(x: bytes) -> str:
    return base64.b64encode(x).decode("ascii")


def measure_jsonl(docs: list[FingerprintRecord], folder: Path) -> dict[str, float]:
    """JSON lines, bytes as base64."""
    path = folder / "store.jsonl"
    with path.open("ab") as fh:

        def write(chunk: list[FingerprintRecord]) -> None:
            lines = [json.dumps({"op": "c", "hash": _b64(r.content_hash), "id": r.doc_id, "expires": None})
                     for r in chunk]  # fmt: skip
            lines += [json.dumps({"op": "r", "id": r.doc_id, "type": r.content_type, "published_at": r.published_at,
                                  "content_hash": _b64(r.content_hash), "simhash": _b64(r.simhash),
                                  "signature": _b64(r.signature), "profile": _b64(r.profile), "shingles": r.shingles,
                                  "length": r.length, "index_keys": list(r.index_keys), "expires": None})
                      for r in chunk]  # fmt: skip
            lines += [json.dumps({"op": "d", "id": r.doc_id, "status": "unique", "duplicate_of": None,
                                  "evidence": EVIDENCE, "type": r.content_type, "content_hash": _b64(r.content_hash),
                                  "expires": None}) for r in chunk]  # fmt: skip
            fh.write(("\n".join(lines) + "\n").encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())

        ms = per_window(docs, write)

    def read() -> None:
        with path.open("rb") as fh:
            for line in fh:
                o = json.loads(line)
                if o["op"] == "r":
                    FingerprintRecord(o["id"], o["type"], o["published_at"], base64.b64decode(o["content_hash"]),
                                      base64.b64decode(o["simhash"]), base64.b64decode(o["signature"]),
                                      base64.b64decode(o["profile"]), o["shingles"], o["length"],
                                      tuple(o["index_keys"]))  # fmt: skip
                elif o["op"] == "c":
                    Claim(base64.b64decode(o["hash"]), o["id"], "news")
                else:
                    DecisionRecord(o["id"], o["status"], o["duplicate_of"], o["evidence"], o["type"],
                                   base64.b64decode(o["content_hash"]))  # fmt: skip

    return {"persist_ms_per_window": ms, "decode_s": timed(read), "bytes": path.stat().st_size}


# --------------------------------------------------------------------------- binary log
_FRAME = struct.Struct("<II")  # body length, crc32
_HEADS = {b"R": struct.Struct("<cddQQ7I"), b"C": struct.Struct("<cd2I"), b"D": struct.Struct("<cd6I")}


def _entry(kind: bytes, numbers: tuple[float | int, ...], fields: list[bytes]) -> bytes:
    body = b"".join([_HEADS[kind].pack(kind, *numbers, *map(len, fields)), *fields])
    return _FRAME.pack(len(body), zlib.crc32(body)) + body


def _fields(body: bytes) -> tuple[tuple[Any, ...], list[bytes]]:
    head = _HEADS[body[:1]]
    values = head.unpack_from(body)
    count = len(values) - 1 - {b"R": 4, b"C": 1, b"D": 1}[body[:1]]
    at, out = head.size, []
    for n in values[-count:]:
        out.append(body[at:at + n])
        at += n
    return values, out


def measure_binary(docs: list[FingerprintRecord], folder: Path) -> dict[str, float]:
    """An append-only log of framed binary entries."""
    path = folder / "store.log"
    inf = float("inf")
    with path.open("ab") as fh:

        def write(chunk: list[FingerprintRecord]) -> None:
            entries = [_entry(b"C", (inf,), [r.content_hash, r.doc_id.encode()]) for r in chunk]
            entries += [_entry(b"R", (inf, r.published_at, r.shingles, r.length),
                               [r.doc_id.encode(), r.content_type.encode(), r.content_hash, r.simhash, r.signature,
                                r.profile, keys_blob(r)]) for r in chunk]  # fmt: skip
            entries += [_entry(b"D", (inf,), [r.doc_id.encode(), b"unique", b"", EVIDENCE.encode(),
                                              r.content_type.encode(), r.content_hash]) for r in chunk]  # fmt: skip
            fh.write(b"".join(entries))
            fh.flush()
            os.fsync(fh.fileno())

        ms = per_window(docs, write)

    def read() -> None:
        data, pos = path.read_bytes(), 0
        while pos < len(data):
            length, crc = _FRAME.unpack_from(data, pos)
            body = data[pos + _FRAME.size:pos + _FRAME.size + length]
            if zlib.crc32(body) != crc:
                raise ValueError(f"bad entry at {pos}")
            values, f = _fields(body)
            if body[:1] == b"R":
                FingerprintRecord(f[0].decode(), f[1].decode(), values[2], f[2], f[3], f[4], f[5], values[3], values[4],
                                  struct.unpack(f"<{len(f[6]) // 8}Q", f[6]))  # fmt: skip
            elif body[:1] == b"C":
                Claim(f[0], f[1].decode(), "news")
            else:
                DecisionRecord(f[0].decode(), f[1].decode(), f[2].decode() or None, f[3].decode(), f[4].decode(), f[5])
            pos += _FRAME.size + length

    return {"persist_ms_per_window": ms, "decode_s": timed(read), "bytes": path.stat().st_size}


# --------------------------------------------------------------------------- the store as built
def measure_store(docs: list[FingerprintRecord], folder: Path) -> dict[str, float]:
    """FileFingerprintStore: memory work and persistence per window, and a whole open."""
    path = folder / "store"

    async def run() -> dict[str, float]:
        store = FileFingerprintStore(path)
        await store.open()
        spent: list[float] = []
        for start in range(0, len(docs), WINDOW):
            chunk = docs[start:start + WINDOW]
            t0 = time.perf_counter()
            await store.commit([Claim(r.content_hash, r.doc_id, r.content_type) for r in chunk], chunk)
            await store.put_decisions([DecisionRecord(r.doc_id, "unique", None, EVIDENCE, r.content_type,
                                                      r.content_hash) for r in chunk])  # fmt: skip
            spent.append(time.perf_counter() - t0)
        await store.close()
        t0 = time.perf_counter()
        again = FileFingerprintStore(path)
        await again.open()
        opened = time.perf_counter() - t0
        await again.close()
        return {"ms_per_window": round(1000 * sum(spent) / len(spent), 1), "open_s": round(opened, 2)}

    return asyncio.run(run())


MEASURES = {"sqlite": measure_sqlite, "jsonl": measure_jsonl, "binary": measure_binary, "store": measure_store}


def main() -> None:
    """Print every format's figures as one JSON line (``N NAME``: one of them, in this process)."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    if len(sys.argv) > 2:
        with tempfile.TemporaryDirectory(prefix=f"neardup-measure-{sys.argv[2]}-") as folder:
            print(json.dumps(MEASURES[sys.argv[2]](documents(n), Path(folder))))
        return
    out: dict[str, object] = {"documents": n, "window": WINDOW}
    for name in MEASURES:
        run = subprocess.run([sys.executable, __file__, str(n), name], capture_output=True, text=True, check=True)
        out[name] = json.loads(run.stdout)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
