"""Redis memory per stored document, measured on a redis-server this script starts and stops.

    .venv/bin/python bench/store_memory.py [N] [--index-keys 24] [--signature-bytes 512] ...

Loads N synthetic fingerprint records through RedisFingerprintStore.add (the real layout: packed
records, sharded listpack index buckets) with realistic sizes (128 x uint32 MinHash = 512 B,
64-bit SimHash, ~200 B profile, 4 SimHash block keys + LSH band keys per document, a share of near-
duplicates that reuse most of an original's keys), then claims and decisions, and prints one JSON
object: bytes per document for records + index (the design target), for claims and decisions, a
record/index split from MEMORY USAGE samples, the bucket key encodings, and a query rate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from neardup.storage.base import DecisionRecord, FingerprintRecord, TTLPolicy
from neardup.storage.keys import KeyLayout
from neardup.storage.redis import RedisFingerprintStore

DAY = 86_400
TTL = {"news": 7 * DAY, "announcement": None, "default": 30 * DAY}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    server = shutil.which("redis-server")
    if not server:
        sys.exit("redis-server not on PATH (apt-get install redis-server)")
    port = free_port()
    args = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    args += ["--dir", str(workdir), "--logfile", str(workdir / "redis.log")]
    proc = subprocess.Popen(
        args,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("redis-server did not start")


class Corpus:
    """Synthetic documents: originals with fresh keys, near-duplicates that share most of theirs."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.rng = random.Random(args.seed)
        self.args = args
        self.bands = args.index_keys - args.simhash_blocks
        self.recent: list[list[bytes]] = []

    def keys(self) -> list[bytes]:
        rng, a = self.rng, self.args
        if self.recent and rng.random() < a.dup_rate:
            orig = rng.choice(self.recent)
            out = []
            for i, k in enumerate(orig):
                keep = a.dup_block_share if i < a.simhash_blocks else a.dup_band_share
                out.append(k if rng.random() < keep else self.fresh(i))
            return out
        out = [self.fresh(i) for i in range(a.index_keys)]
        if len(self.recent) < 20_000:
            self.recent.append(out)
        else:
            self.recent[rng.randrange(20_000)] = out
        return out

    def fresh(self, i: int) -> bytes:
        if i < self.args.simhash_blocks:  # 64-bit SimHash in 4 blocks of 16 bits
            return b"S" + bytes([i]) + self.rng.randbytes(2)
        return b"M" + bytes([i - self.args.simhash_blocks]) + self.rng.randbytes(8)

    def record(self, n: int) -> FingerprintRecord:
        a, rng = self.args, self.rng
        x = rng.random()
        ctype = "news" if x < a.news_share else ("announcement" if x > 1 - a.announcement_share else "blog")
        return FingerprintRecord(
            doc_id=f"https://news.example.com/{n // 1000}/{n:09d}.html",  # ~40-byte URL ids
            content_type=ctype,
            published_at=1.767e9 + n,
            content_hash=rng.randbytes(16),
            simhash=rng.randbytes(8),
            signature=rng.randbytes(a.signature_bytes),
            profile=rng.randbytes(a.profile_bytes),
            shingles=rng.randrange(50, 5000),
            length=rng.randrange(200, 20_000),
            index_keys=tuple(self.keys()),
        )


async def used_memory(client: Any) -> int:
    return int((await client.info("memory"))["used_memory"])


async def sample_keys(client: Any, match: bytes, n: int) -> list[bytes]:
    out: list[bytes] = []
    async for key in client.scan_iter(match=match, count=1000):
        out.append(key)
        if len(out) >= n:
            break
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="neardup-bench-redis-") as tmp:
        proc, port = start_server(Path(tmp))
        try:
            return await measure(args, port)
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)


async def measure(args: argparse.Namespace, port: int) -> dict[str, Any]:
    store = RedisFingerprintStore(
        f"redis://127.0.0.1:{port}",
        TTLPolicy(by_type=TTL),
        index_shards=args.shards,
        max_connections=8,
        keep_index_keys=not args.drop_index_keys,
    )
    await store.open()
    client = store.client
    version = (await client.info("server"))["redis_version"]
    listpack_max = (await client.config_get("zset-max-listpack-entries")).get("zset-max-listpack-entries")
    corpus = Corpus(args)
    base = await used_memory(client)

    t0 = time.perf_counter()
    sample: list[FingerprintRecord] = []
    for start in range(0, args.n, args.batch):
        batch = [corpus.record(i) for i in range(start, min(args.n, start + args.batch))]
        if len(sample) < 2000:
            sample += batch[:20]
        await store.add(batch)
        if args.progress and start // args.batch % 100 == 0:
            print(f"{start + len(batch)} documents, {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    load_s = time.perf_counter() - t0
    after_add = await used_memory(client)

    # record/index split: MEMORY USAGE of sampled record keys (key, value and dict overhead)
    rec_keys = await sample_keys(client, b"nd:{d*}r", 2000)
    rec_bytes = [int(await client.memory_usage(k, samples=0)) for k in rec_keys]
    per_record = sum(rec_bytes) / max(1, len(rec_bytes))
    bucket_keys = await sample_keys(client, b"nd:{i*", 5000)
    encodings: dict[str, int] = {}
    cards: list[int] = []
    bucket_bytes: list[int] = []
    for k in bucket_keys:
        enc = (await client.object("encoding", k)).decode()
        encodings[enc] = encodings.get(enc, 0) + 1
        cards.append(int(await client.zcard(k)))
        bucket_bytes.append(int(await client.memory_usage(k, samples=0)))
    n_bucket_keys = int(await client.dbsize()) - args.n  # every other key is a record
    per_bucket_key = sum(bucket_bytes) / max(1, len(bucket_bytes))

    # query rate: the documents' own keys, as the engine looks a window up
    t1 = time.perf_counter()
    found = 0
    for i in range(0, len(sample), 100):
        res = await store.query([r.index_keys for r in sample[i : i + 100]])
        found += sum(len(s) for s in res)
    query_s = time.perf_counter() - t1

    for start in range(0, args.n, args.batch):
        ids = range(start, min(args.n, start + args.batch))
        await store.claim_exact(
            [(os.urandom(16), f"https://news.example.com/{i // 1000}/{i:09d}.html", "news") for i in ids]
        )
    after_claims = await used_memory(client)
    evidence = json.dumps(
        {"jaccard": 0.8123, "hamming": 7, "containment": 0.91, "candidates": 3, "rule": "jaccard_high"}
    )
    for start in range(0, args.n, args.batch):
        ids = range(start, min(args.n, start + args.batch))
        await store.put_decisions(
            [
                DecisionRecord(f"https://news.example.com/{i // 1000}/{i:09d}.html", "unique", None, evidence, "news")
                for i in ids
            ]
        )
    after_decisions = await used_memory(client)
    dbsize = int(await client.dbsize())
    await store.close()

    n = args.n
    per_doc = (after_add - base) / n
    return {
        "documents": n,
        "redis_version": version,
        "zset_max_listpack_entries": int(listpack_max),
        "index_keys_per_doc": args.index_keys,
        "signature_bytes": args.signature_bytes,
        "profile_bytes": args.profile_bytes,
        "dup_rate": args.dup_rate,
        "records_keep_index_keys": not args.drop_index_keys,
        "index_shards": args.shards,
        "bytes_per_doc": round(per_doc, 1),  # records + index: the 400-byte target
        "record_bytes_per_doc": round(per_record, 1),
        # MEMORY USAGE of sampled bucket keys, scaled to all of them
        "index_bytes_per_doc": round(per_bucket_key * n_bucket_keys / n, 1),
        "index_bytes_per_entry": round(per_bucket_key * n_bucket_keys / n / args.index_keys, 2),
        # the rest: expiry-dict entries and the main dict's bucket arrays
        "other_bytes_per_doc": round(per_doc - per_record - per_bucket_key * n_bucket_keys / n, 1),
        "bucket_keys": n_bucket_keys,
        "claim_bytes_per_doc": round((after_claims - after_add) / n, 1),
        "decision_bytes_per_doc": round((after_decisions - after_claims) / n, 1),
        "all_bytes_per_doc": round((after_decisions - base) / n, 1),
        "used_memory_bytes": after_decisions,
        "keys": dbsize,
        "bucket_key_encodings_sampled": encodings,
        "bucket_key_mean_members": round(sum(cards) / max(1, len(cards)), 1),
        "bucket_key_max_members": max(cards, default=0),
        "load_docs_per_s": round(n / load_s),
        "query_docs_per_s": round(len(sample) / query_s) if sample else None,
        "query_mean_candidates": round(found / max(1, len(sample)), 2),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("n", nargs="?", type=int, default=1_000_000, help="documents to load")
    p.add_argument("--index-keys", type=int, default=24, help="index keys per document (blocks + bands)")
    p.add_argument("--simhash-blocks", type=int, default=4)
    p.add_argument("--signature-bytes", type=int, default=512, help="512 = 128 x uint32; 128 = 128 x 8-bit")
    p.add_argument("--profile-bytes", type=int, default=200)
    p.add_argument("--dup-rate", type=float, default=0.3, help="share of near-duplicates")
    p.add_argument("--dup-band-share", type=float, default=0.6, help="bands a near-duplicate shares")
    p.add_argument("--dup-block-share", type=float, default=0.85, help="SimHash blocks it shares")
    p.add_argument("--news-share", type=float, default=1.0, help="rest: 'blog' (default ttl), announcements")
    p.add_argument("--announcement-share", type=float, default=0.0)
    p.add_argument(
        "--shards",
        type=int,
        default=0,
        help="index_shards; 0: sized as an operator would for N documents a day (32-64 per key)",
    )
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--drop-index-keys", action="store_true", help="store records without their index keys")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--progress", action="store_true")
    args = p.parse_args(argv)
    if not args.shards:
        # the N documents land in one news bucket (2 sub-shards): aim at 32-64 entries per key,
        # well under 128 because SimHash block keys come in clumps (16-bit values: ~15 documents
        # each at 1M) and a key over zset-max-listpack-entries costs ~5x per member
        subs = KeyLayout().sub_shards(TTL["news"] or DAY)
        args.shards = 1 << max(0, int(args.n * args.index_keys / (32 * subs)).bit_length() - 1)
    KeyLayout(index_shards=args.shards)  # validates
    print(json.dumps(asyncio.run(run(args)), indent=1))


if __name__ == "__main__":
    main()
