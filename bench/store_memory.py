"""Redis memory per stored document at scale, from what the engine really stores.

    .venv/bin/python bench/store_memory.py [N] [--set SECTION.NAME=VALUE ...] [--no-simhash-blocks]
                                           [--shards S] [--json out.json]

1. Runs the engine over the development set (bench/quality.py: memory store, the given settings)
   and keeps every ``commit`` and ``put_decisions`` it makes: real ids, signatures, profiles,
   meta, index keys (``engine.layout.width`` per document), evidence, and the real mix of unique
   documents, near-duplicates (both stored with a record) and exact copies (a decision only). The
   quality of those settings (F1, precision, recall, per kind) comes with it.
2. Starts its own redis-server (no persistence) and replays those calls through
   ``RedisFingerprintStore.commit`` / ``put_decisions`` until N documents are decided: copy c of
   the set gets ids of the same length (the first digits replaced by c), content hashes and index
   keys rehashed with c (equal stays equal within a copy, nothing collides across copies), so the
   key, value and index sizes are the engine's own.
3. Loads in four phases and reads ``INFO memory`` after each, so that every byte lands in one
   category: claims (``commit(claims, [])``), records without index entries, the same records
   again with their index entries (same values: the difference is the index), decisions. It also
   samples ``MEMORY USAGE`` per key kind, reads ``ZCARD`` of every index key (the time buckets of
   each shard) against ``zset-max-listpack-entries`` and samples ``OBJECT ENCODING``. Every
   document is written within minutes, so each shard holds one bucket key per ttl in use (and the
   kept one): a store filled over weeks spreads the same entries over more bucket keys.

``--formats v2`` writes records and decisions in the value formats before the compact ones
(version 2: content type as text, published_at as a double, evidence as JSON text; the encoders
below are copies of those at commit c547aa0), for the "before" row of the README's table.

Prints one JSON object (also written with --json). Bytes per document = bytes / documents decided.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import itertools

import quality
from report import emit

from neardup.bench.net import free_port
from neardup.config import load_settings
from neardup.engine import store_options
from neardup.sketch.index import fmix64
from neardup.storage import Claim, DecisionRecord, FingerprintRecord, TTLPolicy
from neardup.storage import redis as redis_store
from neardup.storage.redis import store as redis_store_module
from neardup.storage.redis.store import RedisFingerprintStore, _put_bytes, _put_int

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
KINDS = {"records": b"{d*}r", "decisions": b"{d*}v", "claims": b"{x*}", "index": b"{i*"}


def encode_record_v2(rec: FingerprintRecord) -> bytes:
    """Record format version 2 (storage/redis/store.py at c547aa0, with meta)."""
    out = bytearray((2,))
    _put_bytes(out, rec.doc_id.encode("utf-8", "surrogatepass"))
    _put_bytes(out, rec.content_type.encode("utf-8"))
    out += struct.pack(">d", rec.published_at)
    _put_int(out, rec.shingles)
    _put_int(out, rec.length)
    for part in (rec.content_hash, rec.simhash, rec.signature, rec.profile, rec.meta):
        _put_bytes(out, part)
    return bytes(out)


def encode_decision_v2(d: DecisionRecord) -> bytes:
    """Decision format version 2 (storage/redis/store.py at c547aa0): the evidence as JSON text."""
    out = bytearray((2,))
    _put_bytes(out, d.doc_id.encode("utf-8", "surrogatepass"))
    _put_bytes(out, d.status.encode("utf-8"))
    if d.duplicate_of is None:
        out.append(0)
    else:
        out.append(1)
        _put_bytes(out, d.duplicate_of.encode("utf-8", "surrogatepass"))
    _put_bytes(out, d.evidence.encode("utf-8"))
    _put_bytes(out, d.content_type.encode("utf-8"))
    _put_bytes(out, d.content_hash)
    return bytes(out)


def start_server(workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    """A redis-server of our own on a free loopback port, without persistence."""
    server = shutil.which("redis-server")
    if not server:
        sys.exit("redis-server not on PATH (apt-get install redis-server)")
    port = free_port()
    args = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(workdir), "--logfile", str(workdir / "redis.log")]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("redis-server did not start")


class Copier:
    """Copy ``c`` of the captured calls: same-length ids, rehashed content hashes and index keys."""

    def __init__(self, ids: list[str], copies: int) -> None:
        """Copies of ``ids``, numbered from 0 (``copies`` of them in all)."""
        self.digits = max(1, len(str(copies - 1)))
        tails = [i[self.digits :] for i in ids]
        # the ids' tails must stay distinct once their heads are replaced by the copy number;
        # otherwise ids grow by a prefix instead (longer than the real ones, and said so)
        self.same_length = min(len(i) for i in ids) > self.digits and len(set(tails)) == len(ids)
        self.c = 0

    def id(self, doc_id: str | None) -> str | None:
        """The id in copy ``c``: as long as the original where that keeps ids distinct."""
        if doc_id is None:
            return None
        head = f"{self.c:0{self.digits}d}"
        return head + doc_id[self.digits :] if self.same_length else f"{head}~{doc_id}"

    def hash(self, content_hash: bytes) -> bytes:
        """The content hash in copy ``c``."""
        return hashlib.blake2b(content_hash + self.c.to_bytes(4, "big"), digest_size=len(content_hash)).digest()

    def keys(self, keys: tuple[int, ...]) -> tuple[int, ...]:
        """The index keys in copy ``c`` (never 0, which means no key)."""
        if not keys:
            return ()
        mixed = fmix64(np.array(keys, dtype=np.uint64) ^ (np.uint64(self.c + 1) * GOLDEN))
        mixed[mixed == 0] = 1
        return tuple(int(k) for k in mixed)

    def claim(self, cl: Claim) -> Claim:
        """The claim in copy ``c``."""
        return Claim(self.hash(cl.content_hash), self.id(cl.doc_id) or "", cl.content_type)

    def record(self, rec: FingerprintRecord, with_index: bool) -> FingerprintRecord:
        """The record in copy ``c``; without its index keys unless ``with_index``."""
        return replace(rec, doc_id=self.id(rec.doc_id) or "", content_hash=self.hash(rec.content_hash),
                       index_keys=self.keys(rec.index_keys) if with_index else ())

    def decision(self, d: DecisionRecord) -> DecisionRecord:
        """The decision in copy ``c``, its evidence naming the copied ids."""
        ev = json.loads(d.evidence)
        if ev.get("matched_id"):
            ev["matched_id"] = self.id(ev["matched_id"])
        if isinstance(ev.get("critical"), dict) and ev["critical"].get("against"):
            ev["critical"]["against"] = self.id(ev["critical"]["against"])
        evidence = json.dumps(ev, ensure_ascii=False, allow_nan=False)  # as the engine writes it
        return replace(d, doc_id=self.id(d.doc_id) or "", duplicate_of=self.id(d.duplicate_of),
                       evidence=evidence, content_hash=self.hash(d.content_hash))


class SpreadClock:
    """The store's clock (``time`` in storage/redis/store.py) moved ahead by ``step`` seconds a
    window of the index phase, so that the index entries land in the time buckets of a store filled
    over ``--spread-days`` days (ahead, never back: a bucket key's EXPIREAT must stay in the future)."""

    def __init__(self, step: float) -> None:
        """``step``: seconds the clock advances per window (0: the real clock)."""
        self.step = step
        self.ahead = 0.0

    def time(self) -> float:
        """The real time plus the windows written so far."""
        return time.time() + self.ahead

    @contextlib.contextmanager
    def window(self) -> Iterator[None]:
        """One window written at the moved clock; the next one a step later."""
        if not self.step:
            yield
            return
        real = redis_store_module.time
        redis_store_module.time = types.SimpleNamespace(time=self.time, monotonic=time.monotonic,  # type: ignore[assignment]
                                                        perf_counter=time.perf_counter)
        try:
            yield
        finally:
            redis_store_module.time = real
            self.ahead += self.step


def plan(captured: quality.Captured, n: int) -> list[tuple[int, int, set[str] | None]]:
    """(copy, window, ids kept or None for all) until ``n`` documents are decided."""
    out: list[tuple[int, int, set[str] | None]] = []
    left, c = n, 0
    while left > 0:
        for w, decisions in enumerate(captured.decisions):
            if left <= 0:
                break
            if len(decisions) <= left:
                out.append((c, w, None))
                left -= len(decisions)
            else:
                out.append((c, w, {d.doc_id for d in decisions[:left]}))
                left = 0
        c += 1
    return out


def windows(captured: quality.Captured, steps: list[tuple[int, int, set[str] | None]], copier: Copier
            ) -> Iterator[tuple[list[Claim], list[FingerprintRecord], list[DecisionRecord]]]:
    """The captured window writes of each step (a window's commit and its decisions share its index)."""
    for c, w, keep in steps:
        copier.c = c
        claims, records = captured.commits[w]
        decisions = captured.decisions[w]
        if keep is not None:
            claims = [x for x in claims if x.doc_id in keep]
            records = [x for x in records if x.doc_id in keep]
            decisions = [x for x in decisions if x.doc_id in keep]
        yield claims, records, decisions


async def used(client: Any) -> dict[str, int]:
    """Redis' own memory figures (INFO memory)."""
    info = await client.info("memory")
    return {k: int(info[k]) for k in ("used_memory", "used_memory_dataset", "used_memory_rss")}


async def sample_usage(client: Any, prefix: bytes, pattern: bytes, n: int) -> tuple[float, int]:
    """(mean MEMORY USAGE, keys seen) of up to ``n`` keys matching ``prefix + pattern``."""
    sizes: list[int] = []
    async for key in client.scan_iter(match=prefix + pattern, count=1000):
        sizes.append(int(await client.memory_usage(key, samples=0)))
        if len(sizes) >= n:
            break
    return (sum(sizes) / len(sizes) if sizes else 0.0), len(sizes)


async def index_census(client: Any, store: RedisFingerprintStore, limit: int) -> dict[str, Any]:
    """ZCARD of every index key (each shard's time buckets, storage/redis/keys.py), and OBJECT
    ENCODING of a sample."""
    keys = [key async for key in client.scan_iter(match=store.layout.prefix + b"{i*", count=10_000)]
    cards = np.zeros(len(keys), dtype=np.int64)
    step = 10_000
    for lo in range(0, len(keys), step):
        pipe = client.pipeline(transaction=False)
        for key in keys[lo : lo + step]:
            pipe.zcard(key)
        cards[lo : lo + step] = await pipe.execute()
    encodings: dict[str, int] = {}
    rng = np.random.default_rng(1)
    sample = rng.choice(len(keys), size=min(len(keys), 2000), replace=False) if keys else np.zeros(0, np.int64)
    fullest = np.argsort(cards)[-20:]
    for i in np.concatenate([sample, fullest]).tolist():
        raw = await client.object("encoding", keys[int(i)])
        if raw is not None:
            name = raw.decode() if isinstance(raw, bytes) else str(raw)
            encodings[name] = encodings.get(name, 0) + 1
    shards = store.layout.index_shards
    kept = sum(key.endswith(b"k") for key in keys)
    shards_used = {key.rsplit(b"}", 1)[0] for key in keys}
    return {
        "index_shards": shards,
        "bucket_seconds": store.layout.bucket_seconds,
        "index_keys": len(keys),
        "shards_used": len(shards_used),
        "kept_bucket_keys": kept,
        "timed_bucket_keys": len(keys) - kept,
        "entries": int(cards.sum()),
        "entries_per_key_mean": round(float(cards.mean()), 1) if keys else 0.0,
        "entries_per_key_p99_9": int(np.percentile(cards, 99.9)) if keys else 0,
        "entries_per_key_max": int(cards.max()) if keys else 0,
        "zset_max_listpack_entries": limit,
        "keys_over_listpack_limit": int((cards > limit).sum()),
        "encodings_sampled_incl_20_fullest": encodings,
        # shards for a mean of 64 entries a bucket key (the fullest near 2x that): about entries / 64 / the
        # buckets a shard holds, a power of 2
        "suggested_index_shards": 1 << max(0, math.ceil(math.log2(max(1, int(cards.sum())) / 64
                                                                  / max(1.0, len(keys) / max(1, len(shards_used)))))),
    }


async def measure(args: argparse.Namespace, port: int) -> dict[str, Any]:
    """Decide the sample, store copies of it in Redis and measure the memory a document takes."""
    overrides = quality.parse_sets(args.sets)
    report, captured = await quality.run(overrides, args.no_simhash_blocks)
    settings = load_settings(**overrides)
    options = store_options(settings.model_copy(update={"store_url": "redis://"}))
    if args.shards:
        options["index_shards"] = args.shards
    if args.bucket_seconds:
        options["index_bucket_seconds"] = args.bucket_seconds
    options["max_connections"] = 8
    store = RedisFingerprintStore(f"redis://127.0.0.1:{port}", TTLPolicy(by_type=dict(settings.ttl_seconds)),
                                  **options)
    await store.open()
    client = store.client
    server = await client.info("server")
    config = await client.config_get("zset-max-listpack-*")
    limit = int(config["zset-max-listpack-entries"])
    steps = plan(captured, args.n)
    copier = Copier([d.doc_id for ds in captured.decisions for d in ds], steps[-1][0] + 1)

    phases: dict[str, dict[str, int]] = {"empty": await used(client)}
    seconds: dict[str, float] = {}
    counts = {"claims": 0, "records": 0, "index_entries": 0, "decisions": 0}

    async def phase(name: str, write: Any) -> None:
        t0 = time.perf_counter()
        for i, (claims, records, decisions) in enumerate(windows(captured, steps, copier)):
            await write(claims, records, decisions)
            if args.progress and i % 100 == 0:
                print(f"{name}: window {i} of {len(steps)}, {time.perf_counter() - t0:.0f}s", file=sys.stderr)
        seconds[name] = round(time.perf_counter() - t0, 1)
        phases[name] = await used(client)

    async def claims_only(claims: list[Claim], _r: list[FingerprintRecord], _d: list[DecisionRecord]) -> None:
        counts["claims"] += len(claims)
        await store.commit([copier.claim(c) for c in claims], [])

    async def records_only(_c: list[Claim], records: list[FingerprintRecord], _d: list[DecisionRecord]) -> None:
        counts["records"] += len(records)
        await store.commit([], [copier.record(r, with_index=False) for r in records])

    clock = SpreadClock(args.spread_days * 86_400 / max(1, len(steps)))

    async def with_index(_c: list[Claim], records: list[FingerprintRecord], _d: list[DecisionRecord]) -> None:
        counts["index_entries"] += sum(len(r.index_keys) for r in records)
        with clock.window():
            await store.commit([], [copier.record(r, with_index=True) for r in records])

    async def decisions_only(_c: list[Claim], _r: list[FingerprintRecord], decisions: list[DecisionRecord]) -> None:
        counts["decisions"] += len(decisions)
        await store.put_decisions([copier.decision(d) for d in decisions])

    await phase("claims", claims_only)
    await phase("records", records_only)
    await phase("index", with_index)
    await phase("decisions", decisions_only)

    prefix = settings.redis.key_prefix.encode() + b":"
    usage = {kind: await sample_usage(client, prefix, pattern, 2000) for kind, pattern in KINDS.items()}
    census = await index_census(client, store, limit)
    dbsize = int(await client.dbsize())
    await store.close()

    n = counts["decisions"]
    order = ["empty", "claims", "records", "index", "decisions"]
    per_doc = {name: round((phases[name]["used_memory"] - phases[prev]["used_memory"]) / n, 1)
               for prev, name in itertools.pairwise(order)}
    total = phases["decisions"]["used_memory"] - phases["empty"]["used_memory"]
    return {
        "documents": n,
        "bytes_per_document": round(total / n, 1),  # INFO used_memory, every key counted
        "bytes_per_document_by_kind": per_doc,
        "rss_bytes_per_document": round((phases["decisions"]["used_memory_rss"]
                                         - phases["empty"]["used_memory_rss"]) / n, 1),
        "counts": counts,
        "per_record": {
            "index_entries": round(counts["index_entries"] / max(1, counts["records"]), 1),
            "index_bytes_per_entry": round(per_doc["index"] * n / max(1, counts["index_entries"]), 2),
        },
        "memory_usage_sampled_mean": {kind: round(v[0], 1) for kind, v in usage.items()},
        "index": census,
        "keys": dbsize,
        "ids_same_length_as_dev_set": copier.same_length,
        "load_seconds": seconds,
        "index_written_over_days": args.spread_days,
        "redis_version": server["redis_version"],
        "zset_max_listpack": {k: int(v) for k, v in config.items()},
        "engine": report,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """:func:`measure` on a throwaway redis-server."""
    with tempfile.TemporaryDirectory(prefix="neardup-bench-redis-") as tmp:
        proc, port = start_server(Path(tmp))
        try:
            return await measure(args, port)
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print (or write) its report."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("n", nargs="?", type=int, default=1_000_000, help="documents to decide (default 1,000,000)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="SECTION.NAME=VALUE",
                   help="a setting, as NEARDUP_SECTION__NAME would set it")
    p.add_argument("--no-simhash-blocks", action="store_true", help="experiment: index LSH bands only")
    p.add_argument("--shards", type=int, default=0, help="index shards (default: redis.index_shards)")
    p.add_argument("--bucket-seconds", type=int, default=0,
                   help="index bucket width (default: redis.index_bucket_seconds, else a quarter of the longest ttl)")
    p.add_argument("--spread-days", type=float, default=0.0,
                   help="file the index entries as if written over this many days (the buckets of a store in "
                        "steady state), not within minutes")
    p.add_argument("--json", type=Path, default=None, help="also write the result here")
    p.add_argument("--formats", choices=["current", "v2"], default="current",
                   help="v2: the record and decision value formats before the compact ones")
    p.add_argument("--progress", action="store_true")
    args = p.parse_args(argv)
    if args.formats == "v2":  # the store calls these module functions by name
        redis_store.encode_record = encode_record_v2
        redis_store.encode_decision = encode_decision_v2
    result = asyncio.run(run(args))
    result["value_formats"] = args.formats
    emit(result, args.json)


if __name__ == "__main__":
    main()
