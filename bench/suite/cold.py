"""``neardup bench cold``: the cold tier (PostgreSQL) on a throwaway cluster.

Two measurements, each in a database of its own on one cluster that :mod:`neardup.bench.pg_server`
starts with ``initdb`` (and stops at the end):

- **volume**: N documents of the development set's sizes (a 140-byte b-bit signature, a 470-byte
  profile, 38 index keys: the default layout's one SimHash block and 37 LSH bands, a decision)
  archived with :meth:`ColdArchive.put` in batches of 1,000, first seen over twelve months (twelve
  partitions). ``archive_docs_per_s`` is the write rate (one transaction a batch);
  ``bytes_per_document`` the documents' partitions and the directory (with the keys arrays) with their indexes
  (``pg_total_relation_size``, after ``VACUUM ANALYZE``) over N; ``lookup_ms`` the
  :meth:`ColdArchive.lookup` of a window of 1,000 documents (38,000 index keys, 1,000 content
  hashes, 1,000 ids), 5 % of them archived ones, as the tiered store sends it for a window of
  announcements, p50 and p99 over the windows, and ``fetch_ms`` the fetch of the records it
  proposed.
- **recall**: real texts as announcements (a type the cold tier keeps), then a reprint of each
  (a sentence dropped, two swapped, a source and an editor line) and a flip (its first figure
  changed). Once with the originals in the warm store, once with all of them moved to the cold
  tier (``neardup archive``'s mover); each time a fresh engine (an empty hot tier) decides the
  variants. The decisions must be the same, and the duplicates found in the cold tier say so.

``scripts/measure_cold_tier.py`` runs the volume measurement against a server of your own (10 M
documents take hours).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import random
import re
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from neardup.bench.corpus import Corpus, load_chinese_texts, reprint
from neardup.bench.report import MachineLoad, Row, environment, number, table

if TYPE_CHECKING:
    from neardup.decision import Decision
    from neardup.document import Document
    from neardup.storage import FingerprintStore
    from neardup.storage.postgres.archive import ColdArchive, ColdDocument

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
# announcements are kept forever (they reach the cold tier), the others expire
TTL: dict[str, int | None] = {"announcement": None, "news": 7 * 86_400, "default": 30 * 86_400}
ENGINE_WINDOW = 100
_FIGURE = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class ColdOptions:
    """What ``neardup bench cold`` was asked for."""

    docs: Path | None
    documents: int
    windows: int
    originals: int
    quick: bool


@dataclass(frozen=True, slots=True)
class Plan:
    """The sizes a run uses (``--quick`` shrinks them)."""

    documents: int
    windows: int
    originals: int
    rate_documents: int = 4000

    @classmethod
    def of(cls, opts: ColdOptions) -> Plan:
        """The sizes for ``opts``."""
        if opts.quick:
            return cls(min(opts.documents, 2000), min(opts.windows, 10), min(opts.originals, 40), 200)
        return cls(opts.documents, opts.windows, opts.originals)


# ------------------------------------------------------------------------------------------- volume


def document(i: int, n: int, rnd: random.Random) -> ColdDocument:
    """The i-th of ``n`` documents, first seen evenly over a year."""
    from neardup.storage.base import DecisionRecord, FingerprintRecord
    from neardup.storage.postgres.archive import ColdDocument

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
    await archive.conn.execute("VACUUM ANALYZE neardup_refs")
    stats = await archive.stats()
    if stats["documents"] != n:
        raise RuntimeError(f"{stats['documents']} documents archived, expected {n}")
    total = stats["documents_bytes"] + stats["index_bytes"]
    return {"documents_bytes": stats["documents_bytes"], "index_bytes": stats["index_bytes"],
            "index_entries": stats["index_entries"], "bytes_per_document": round(total / n, 1)}


def window(sample: list[ColdDocument], rnd: random.Random, hit_share: float = HIT_SHARE
           ) -> tuple[list[list[int]], list[bytes], list[str]]:
    """A window of 1,000 announcements, ``hit_share`` of them archived ones (reprints) and the rest new."""
    keys: list[list[int]] = []
    hashes: list[bytes] = []
    ids: list[str] = []
    for j in range(WINDOW):
        if rnd.random() < hit_share:
            doc = rnd.choice(sample)
            keys.append(list(doc.record.index_keys))
            hashes.append(doc.record.content_hash)
        else:
            keys.append([rnd.getrandbits(64) | 1 for _ in range(KEYS)])
            hashes.append(rnd.randbytes(16))
        ids.append(f"new-{j}")
    return keys, hashes, ids


async def lookups(clients: dict[str, ColdArchive], sample: list[ColdDocument], windows: int,
                  rnd: random.Random, hit_share: float = HIT_SHARE) -> dict[str, Any]:
    """p50/p99 of a window's lookup by each client (the same windows, the clients in turn, the
    order alternated), and of the fetch of what the first one proposed; keys searched a window."""
    look: dict[str, list[float]] = {name: [] for name in clients}
    fetch: list[float] = []
    found = 0
    searched = {name: c.keys_searched for name, c in clients.items()}
    for w in range(windows):
        keys, hashes, ids = window(sample, rnd, hit_share)
        order = list(clients.items())
        answers = {}
        for name, client in order if w % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            answers[name] = await client.lookup(keys, hashes, ids)
            look[name].append((time.perf_counter() - t0) * 1000)
        first = next(iter(clients))
        if any(a != answers[first] for a in answers.values()):
            raise RuntimeError("the archive's clients answered a window differently")
        refs = {ref for row in answers[first].candidates for ref in row}
        t1 = time.perf_counter()
        await clients[first].fetch(refs)
        fetch.append((time.perf_counter() - t1) * 1000)
        found += len(refs)
    q = np.percentile
    out: dict[str, Any] = {}
    for name, ms in look.items():
        out[f"lookup{name}_ms_p50"] = round(float(q(ms, 50)), 1)
        out[f"lookup{name}_ms_p99"] = round(float(q(ms, 99)), 1)
        out[f"keys_searched{name}_per_window"] = round((clients[name].keys_searched - searched[name]) / windows)
    return {**out, "fetch_ms_p50": round(float(q(fetch, 50)), 1), "fetch_ms_p99": round(float(q(fetch, 99)), 1),
            "candidates_per_window": round(found / windows, 1), "windows": windows}


async def archived_sample(archive: ColdArchive, count: int = 20_000) -> list[ColdDocument]:
    """Documents an earlier run archived, read back (to measure an archive filled before)."""
    from neardup.storage.postgres.archive import ColdDocument, from_bigint

    cur = await archive.conn.execute("SELECT ref FROM neardup_refs TABLESAMPLE SYSTEM (5) LIMIT %s", (count,))
    refs = [from_bigint(row[0]) for row in await cur.fetchall()]
    return [ColdDocument(row.record, row.decision, 0.0, None) for row in (await archive.rows(refs)).values()]


async def volume(url: str, n: int, windows: int, reuse: bool = False, texts: list[str] | None = None,
                 rate_documents: int = 0) -> dict[str, Any]:
    """Migrate, archive ``n`` documents (unless ``reuse``: an earlier run filled it), measure:
    lookups with the filter of archived keys (``lookup_ms``, what a worker does) and without it
    (``lookup_unfiltered_ms``), windows with 5 % reprints and windows of reprints only; and, given
    ``texts``, :func:`engine_rates` on ``rate_documents`` of them."""
    from neardup.storage.postgres.archive import ColdArchive

    rnd = random.Random(1)
    archive = ColdArchive(url)
    unfiltered = ColdArchive(url, key_filter_bytes=0)
    await archive.open(migrating=True)
    try:
        out: dict[str, Any] = {"documents": n}
        if reuse:
            sample = await archived_sample(archive)
            # a generator of its own: one seeded as the load's would draw the archived keys again
            rnd = random.Random(2)
        else:
            await archive.migrate()
            rate, sample = await load(archive, n, rnd)
            out["archive_docs_per_s"] = round(rate)
        await unfiltered.open()
        started = time.perf_counter()
        if not await archive.filter_loaded():
            raise RuntimeError("the filter of archived keys did not load")
        out["filter_load_seconds"] = round(time.perf_counter() - started, 2)
        out["filter_bytes"] = archive.filter_stats()["filter_bits"] // 8
        clients = {"": archive, "_unfiltered": unfiltered}
        await lookups(clients, sample, max(1, windows // 10), rnd)  # the index into memory first
        out.update(await sizes(archive, n))
        out.update(await lookups(clients, sample, windows, rnd))
        reprints = await lookups({"": archive}, sample, max(1, windows // 4), rnd, hit_share=1.0)
        out.update({f"reprints_only_{k}": v for k, v in reprints.items() if k.startswith(("lookup", "keys"))})
        if texts and rate_documents:
            out["engine_rates"] = await engine_rates(url, texts, rate_documents)
        return out
    finally:
        await archive.close()
        await unfiltered.close()


async def _rate(store: FingerprintStore, docs: list[Document]) -> float:
    """Documents a second of a fresh engine deciding ``docs`` in windows of :data:`WINDOW` on ``store``."""
    started = time.perf_counter()
    await _decide(store, docs, WINDOW)
    return len(docs) / (time.perf_counter() - started)


async def engine_rates(url: str, texts: list[str], n: int, rounds: int = 2) -> dict[str, Any]:
    """The engine's rate on ``n`` new announcements (none archived), on the memory store alone and
    with the cold tier at ``url`` behind it, with its filter of archived keys loaded and without a
    filter; the three in turn, ``rounds`` times (a fresh memory store each time), after one
    untimed run. The cold tier's cost a window in steady state, as a worker that has been up a
    while pays it."""
    from neardup.document import Document
    from neardup.storage import open_store
    from neardup.storage.postgres.tiered import TieredStore

    docs = [Document(id=d.id, text=d.text, type="announcement")
            for d in Corpus(texts, dup_share=0.3, id_prefix="new").docs(0, n)]  # fmt: skip
    await _rate(open_store("memory://", ttl=TTL), docs[: min(n, WINDOW)])  # the kernels compiled
    rates: dict[str, list[float]] = {"memory_store": [], "cold_tier": [], "cold_tier_unfiltered": []}
    for _ in range(rounds):
        for name in rates:
            filtered = name == "cold_tier"
            store = open_store("memory://", ttl=TTL, archive_key_filter_bytes=None if filtered else 0,
                               archive_url=None if name == "memory_store" else url)
            await store.open()
            try:
                if isinstance(store, TieredStore) and filtered and not await store.cold.filter_loaded():
                    raise RuntimeError("the filter of archived keys did not load")
                rates[name].append(await _rate(store, docs))
            finally:
                await store.close()
    best = {name: max(r) for name, r in rates.items()}
    return {"documents": n, "rounds": rounds, "docs_per_s": {k: [round(x) for x in r] for k, r in rates.items()},
            "cold_tier_slower": round(1 - best["cold_tier"] / best["memory_store"], 3),
            "cold_tier_unfiltered_slower": round(1 - best["cold_tier_unfiltered"] / best["memory_store"], 3)}


# ------------------------------------------------------------------------------------------- recall


def flip(text: str) -> str | None:
    """``text`` with its first figure changed (one more), None if it has none."""
    m = _FIGURE.search(text)
    if m is None:
        return None
    return text[: m.start()] + str(int(m.group()) + 1) + text[m.end():]


@dataclass(frozen=True, slots=True)
class RecallSet:
    """Originals (announcements), and the variants made of them with the original each came from."""

    originals: list[Document]
    reprints: dict[str, str]
    flips: dict[str, str]
    variants: list[Document]


def recall_set(texts: list[str], n: int) -> RecallSet:
    """``n`` originals from ``texts`` (the source texts first), a reprint and a flip of each."""
    from neardup.document import Document

    originals = [Document(id=d.id, text=d.text, type="announcement")
                 for d in Corpus(texts, dup_share=0.0, id_prefix="orig").docs(0, n)]  # fmt: skip
    rng = random.Random(7)
    reprints: dict[str, str] = {}
    flips: dict[str, str] = {}
    variants: list[Document] = []
    for d in originals:
        rid = f"reprint-{d.id}"
        variants.append(Document(id=rid, text=reprint(d.text, rng), type="announcement"))
        reprints[rid] = d.id
        flipped = flip(d.text)
        if flipped is not None:
            fid = f"flip-{d.id}"
            variants.append(Document(id=fid, text=flipped, type="announcement"))
            flips[fid] = d.id
    return RecallSet(originals, reprints, flips, variants)


async def _decide(store: FingerprintStore, docs: list[Document], window: int = ENGINE_WINDOW) -> list[Decision]:
    """A fresh engine (an empty hot tier: a later process) on ``store``, in windows of ``window``."""
    from neardup.config import load_settings
    from neardup.engine import Engine, decide_all

    engine = Engine(load_settings(worker_id="bench-cold", ttl_seconds=TTL), store)
    return await decide_all(engine, docs, window)


def _outcome(d: Decision) -> tuple[str, str, str | None, str | None]:
    return d.id, d.status.value, d.duplicate_of, d.evidence.rule.value if d.evidence.rule else None


def _scores(rs: RecallSet, decided: list[Decision], root: dict[str, str]) -> dict[str, Any]:
    """Reprints found as duplicates of their original's cluster; flips kept apart from it."""
    by_id = {d.id: d for d in decided}

    def merged(vid: str, orig: str) -> bool:
        d = by_id[vid]
        return d.duplicate_of is not None and root.get(d.duplicate_of, d.duplicate_of) == root[orig]

    found = sum(merged(v, o) for v, o in rs.reprints.items())
    kept = sum(not merged(v, o) for v, o in rs.flips.items())
    return {"reprints": len(rs.reprints), "reprints_found": found, "recall": round(found / len(rs.reprints), 4),
            "flips": len(rs.flips), "flips_kept_apart": kept,
            "flips_kept_apart_share": round(kept / len(rs.flips), 4) if rs.flips else None,
            "matched_in_cold_tier": sum(d.evidence.tier == "cold" for d in decided)}


async def recall(url: str, rs: RecallSet) -> dict[str, Any]:
    """The variants decided against the originals in the warm store, then in the cold tier."""
    from neardup.storage import open_store
    from neardup.storage.postgres.archive import ColdArchive
    from neardup.storage.postgres.mover import move
    from neardup.storage.postgres.tiered import TieredStore

    warm_only = open_store("memory://", ttl=TTL)
    originals = await _decide(warm_only, rs.originals)
    expected = await _decide(warm_only, rs.variants)
    # an original that is itself a duplicate of an earlier one stands for its cluster's first
    root = {d.id: d.duplicate_of or d.id for d in originals}

    archive = ColdArchive(url)
    await archive.open(migrating=True)
    await archive.migrate()
    await archive.close()
    tiered = open_store("memory://", ttl=TTL, archive_url=url)
    if not isinstance(tiered, TieredStore):
        raise RuntimeError("a store with archive_url is not tiered")
    await tiered.open()
    try:
        await _decide(tiered, rs.originals)
        report = await move(tiered.warm, tiered.cold, older_than=0)
        left = (await tiered.stats())["records"]
        started = time.perf_counter()
        got = await _decide(tiered, rs.variants)
        seconds = time.perf_counter() - started
    finally:
        await tiered.close()
    same = [_outcome(d) for d in got] == [_outcome(d) for d in expected]
    differ = [a[0] for a, b in zip((_outcome(d) for d in got), (_outcome(d) for d in expected), strict=True)
              if a != b]  # fmt: skip
    return {"originals": len(rs.originals), "moved_to_cold": report.moved, "left_in_warm_store": left,
            "warm": _scores(rs, expected, root), "cold": _scores(rs, got, root),
            "same_decisions": same, "differing_ids": differ[:20],
            "cold_variants_docs_per_s": round(len(rs.variants) / seconds) if seconds > 0 else None}


# ---------------------------------------------------------------------------------------------- run


def run(opts: ColdOptions) -> dict[str, Any]:
    """The whole benchmark (module docstring) on a cluster made for it; returns the results."""
    from neardup.bench.pg_server import postgres_bin, start_postgres

    postgres_bin()  # refuse before any work when PostgreSQL is not installed
    load_ = MachineLoad()
    plan = Plan.of(opts)
    source, texts = load_chinese_texts(opts.docs)
    rs = recall_set(texts, plan.originals)
    result: dict[str, Any] = {
        "benchmark": "cold",
        "corpus": {"source_file": str(source), "source_texts": len(texts),
                   "kinds": dict(Counter(d.id.split("-")[0] for d in rs.variants))},
    }
    with tempfile.TemporaryDirectory(prefix="neardup-bench-cold-") as tmp:
        server = start_postgres(Path(tmp))
        try:
            version = server.version()
            result["volume"] = asyncio.run(volume(server.create_database("volume"), plan.documents, plan.windows,
                                                  texts=texts, rate_documents=plan.rate_documents))
            result["recall"] = asyncio.run(recall(server.create_database("recall"), rs))
        finally:
            server.stop()
    result["machine"] = load_.result()
    result["environment"] = environment("psycopg", postgresql=version)
    return result


def summary(r: dict[str, Any]) -> str:
    """The short table ``neardup bench cold`` prints."""
    v, rc = r["volume"], r["recall"]
    er = v["engine_rates"]
    warm, cold = rc["warm"], rc["cold"]
    return table(f"cold: PostgreSQL {r['environment']['servers']['postgresql']}, {number(v['documents'])} archived "
                 f"documents, windows of {WINDOW:,}", [
        Row("archive rate: docs/s", number(v["archive_docs_per_s"])),
        Row("on disk per document: bytes (tables + indexes)", number(v["bytes_per_document"]), "1,500"),
        Row(f"window lookup p50 / p99: ms ({v['windows']} windows, {HIT_SHARE:.0%} reprints)",
            f"{v['lookup_ms_p50']:.1f} / {v['lookup_ms_p99']:.1f}", "p99 200"),
        Row("the same without the filter of archived keys",
            f"{v['lookup_unfiltered_ms_p50']:.1f} / {v['lookup_unfiltered_ms_p99']:.1f}"),
        Row("keys searched a window, with / without the filter",
            f"{number(v['keys_searched_per_window'])} / {number(v['keys_searched_unfiltered_per_window'])}"),
        Row("window lookup p50 / p99, windows of reprints only: ms",
            f"{v['reprints_only_lookup_ms_p50']:.1f} / {v['reprints_only_lookup_ms_p99']:.1f}"),
        Row("filter of archived keys: MB, load seconds",
            f"{v['filter_bytes'] / 2**20:.1f}, {v['filter_load_seconds']:.2f}"),
        Row(f"engine on {number(er['documents'])} new announcements: slower with the cold tier, "
            "with / without the filter", f"{er['cold_tier_slower']:.1%} / {er['cold_tier_unfiltered_slower']:.1%}",
            "10%"),
        Row("fetch of its candidates p50 / p99: ms", f"{v['fetch_ms_p50']:.1f} / {v['fetch_ms_p99']:.1f}"),
        Row(f"reprint recall, warm store / cold tier ({warm['reprints']} reprints)",
            f"{warm['recall']:.4f} / {cold['recall']:.4f}", "equal"),
        Row(f"flips kept apart, warm / cold ({warm['flips']} flips)",
            f"{warm['flips_kept_apart']} / {cold['flips_kept_apart']}", "equal"),
        Row("the same decisions in both", "yes" if rc["same_decisions"] else f"no ({len(rc['differing_ids'])}+)"),
        Row("machine otherwise idle", "yes" if r["machine"]["otherwise_idle"] else
            f"no ({r['machine']['other_processes_cpu_share']:.0%} of the CPU used by others)"),
    ])  # fmt: skip
