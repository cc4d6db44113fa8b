"""Measure the cold tier (storage/postgres) at N archived documents: disk per document, the archive's
write rate, and the window lookup's latency.

N documents of the development set's sizes (a 140-byte b-bit signature, a 470-byte profile, 38
index keys: the default layout's one SimHash block and 37 LSH bands, a deflated decision) are
archived with :meth:`ColdArchive.put` in batches of 1,000, first seen over twelve months (twelve
partitions). Then:

- ``bytes_per_document``: the documents' partitions and the index-entry table, each with its
  indexes (``pg_total_relation_size``), after ``VACUUM ANALYZE``, divided by N;
- ``archive_docs_per_s``: the write rate of :meth:`ColdArchive.put` (one transaction a batch);
- ``lookup_ms``: :meth:`ColdArchive.lookup` of a window of 1,000 documents (38,000 index keys,
  1,000 content hashes, 1,000 ids), 5 % of them archived ones, as the tiered store sends it for a
  window of announcements: p50 and p99 over ``--windows`` windows, and :meth:`ColdArchive.fetch`
  of the records the lookup proposed.

Run: ``python scripts/measure_cold_tier.py --documents N --archive postgresql://...`` on an empty
database (the script migrates it); prints one JSON line. ``--reuse`` measures the lookups again on
a database an earlier run filled (no load; the archived documents looked up are sampled from it).
docs/cold-tier.md has the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import random
import time
from typing import Any

import numpy as np

from neardup.storage.base import DecisionRecord, FingerprintRecord
from neardup.storage.postgres.archive import ColdArchive, ColdDocument, from_bigint

BATCH = 1000
WINDOW = 1000
KEYS = 38
HIT_SHARE = 0.05
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC).timestamp()
YEAR = 365 * 86_400
EVIDENCE = json.dumps({"reason": "unique", "rule": None, "matched_id": None, "jaccard": None, "hamming": None,
                       "containment": None, "candidates": 0, "thresholds": {"jaccard_high": 0.7, "jaccard_low": 0.45,
                       "hamming_high": 3, "hamming_low": 12, "containment_high": 0.73, "short_text_chars": 50},
                       "threshold_version": 0, "window_id": "vm-9708:1", "worker_id": "vm-9708",
                       "decided_at": 1796295181.762})  # fmt: skip


def document(i: int, n: int, rnd: random.Random) -> ColdDocument:
    """The i-th of ``n`` documents, first seen evenly over a year."""
    doc_id = f"ann-{i:09d}"
    seen = START + YEAR * i / n
    rec = FingerprintRecord(doc_id, "announcement", seen, rnd.randbytes(16), rnd.randbytes(8), rnd.randbytes(140),
                            rnd.randbytes(470), 1600, 2500, tuple(rnd.getrandbits(64) | 1 for _ in range(KEYS)),
                            b"\x01\x00\x00\x00\x00")  # fmt: skip
    decision = DecisionRecord(doc_id, "unique", None, EVIDENCE, "announcement", rec.content_hash)
    return ColdDocument(rec, decision, seen, seen)


async def load(archive: ColdArchive, n: int, rnd: random.Random) -> tuple[float, list[ColdDocument]]:
    """Archive ``n`` documents; (documents a second, a sample of them to look up later)."""
    sample: list[ColdDocument] = []
    started = time.perf_counter()
    for start in range(0, n, BATCH):
        docs = [document(i, n, rnd) for i in range(start, min(n, start + BATCH))]
        await archive.put(docs)
        sample += rnd.sample(docs, min(len(docs), 20))
    return n / (time.perf_counter() - started), sample


async def sizes(archive: ColdArchive, n: int) -> dict[str, Any]:
    """Bytes on disk per document, after VACUUM ANALYZE."""
    await archive.conn.execute("VACUUM ANALYZE neardup_documents")
    await archive.conn.execute("VACUUM ANALYZE neardup_index")
    stats = await archive.stats()
    assert stats["documents"] == n, stats
    total = stats["documents_bytes"] + stats["index_bytes"]
    return {"documents_bytes": stats["documents_bytes"], "index_bytes": stats["index_bytes"],
            "index_entries": stats["index_entries"], "bytes_per_document": round(total / n, 1)}


def window(sample: list[ColdDocument], rnd: random.Random) -> tuple[list[list[int]], list[bytes], list[str]]:
    """A window of 1,000 announcements, 5 % of them archived ones (reprints) and the rest new."""
    keys: list[list[int]] = []
    hashes: list[bytes] = []
    ids: list[str] = []
    for j in range(WINDOW):
        if rnd.random() < HIT_SHARE:
            doc = rnd.choice(sample)
            keys.append(list(doc.record.index_keys))
            hashes.append(doc.record.content_hash)
        else:
            keys.append([rnd.getrandbits(64) | 1 for _ in range(KEYS)])
            hashes.append(rnd.randbytes(16))
        ids.append(f"new-{j}")
    return keys, hashes, ids


async def lookups(archive: ColdArchive, sample: list[ColdDocument], windows: int,
                  rnd: random.Random) -> dict[str, Any]:
    """p50/p99 of a window's lookup, and of the fetch of what it proposed."""
    look: list[float] = []
    fetch: list[float] = []
    found = 0
    for _ in range(windows):
        keys, hashes, ids = window(sample, rnd)
        t0 = time.perf_counter()
        answer = await archive.lookup(keys, hashes, ids)
        t1 = time.perf_counter()
        refs = {ref for row in answer.candidates for ref in row}
        await archive.fetch(refs)
        t2 = time.perf_counter()
        look.append((t1 - t0) * 1000)
        fetch.append((t2 - t1) * 1000)
        found += len(refs)
    q = np.percentile
    return {"lookup_ms_p50": round(float(q(look, 50)), 1), "lookup_ms_p99": round(float(q(look, 99)), 1),
            "fetch_ms_p50": round(float(q(fetch, 50)), 1), "fetch_ms_p99": round(float(q(fetch, 99)), 1),
            "candidates_per_window": round(found / windows, 1), "windows": windows}


async def archived_sample(archive: ColdArchive, count: int = 20_000) -> list[ColdDocument]:
    """Documents an earlier run archived, read back (``--reuse``)."""
    cur = await archive.conn.execute("SELECT ref FROM neardup_refs TABLESAMPLE SYSTEM (5) LIMIT %s", (count,))
    refs = [from_bigint(row[0]) for row in await cur.fetchall()]
    return [ColdDocument(row.record, row.decision, 0.0, None) for row in (await archive.rows(refs)).values()]


async def main(n: int, url: str, windows: int, reuse: bool) -> dict[str, Any]:
    """Migrate, archive ``n`` documents (unless ``reuse``), measure; the JSON-ready figures."""
    rnd = random.Random(1)
    archive = ColdArchive(url)
    await archive.open(migrating=True)
    try:
        out: dict[str, Any] = {"documents": n}
        if reuse:
            sample = await archived_sample(archive)
            # a generator of its own: one seeded as the load's would draw the archived keys again
            rnd = random.Random(2)
            await lookups(archive, sample, max(1, windows // 10), rnd)  # the index into memory first
        else:
            await archive.migrate()
            rate, sample = await load(archive, n, rnd)
            out["archive_docs_per_s"] = round(rate)
        out.update(await sizes(archive, n))
        out.update(await lookups(archive, sample, windows, rnd))
        return out
    finally:
        await archive.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--archive", required=True, help="postgresql://USER:PASSWORD@HOST:PORT/DB (an empty database)")
    parser.add_argument("--windows", type=int, default=200)
    parser.add_argument("--reuse", action="store_true", help="measure again on a database an earlier run filled")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args.documents, args.archive, args.windows, args.reuse))))
