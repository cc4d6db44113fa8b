"""What the store's write and lookup scripts cost inside Redis, per index entry, for two versions
of the scripts side by side: an A/B of a change to ``storage/redis/lua`` on one server.

    .venv/bin/python bench/redis_scripts.py [--before DIR] [--after DIR] [--docs 300] [--rounds 10] [--json out.json]

Starts a redis-server (no persistence), files ``--stored`` documents of 64 entries into the
default 2**19 index shards with the write script (a keyspace of about half a million bucket keys,
as a store of some tens of thousands of documents has: every key a script touches is a cache miss,
as in production), then, ``--rounds`` times and alternating which goes first, runs each version's
write script on ``--docs`` new documents (64 entries each; a share rechecked under the asked keys,
a share whose bucket key this client saw get its expiry, as a worker's commit sends them) and its
lookup script on ``--docs`` x 39 lookups (one live bucket, as a news-only store reads), and reads
the scripts' time from ``INFO commandstats`` after each. Prints the medians per entry.

``--before`` defaults to the scripts of ``git show HEAD:storage/redis/lua`` (extracted to a
temporary folder), ``--after`` to this checkout's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import redis  # noqa: E402

from neardup.storage.redis.store import EXPIRY_SET, LOOKUP, NO_RECHECK  # noqa: E402
from tests.fixtures.redis_servers import start_redis  # noqa: E402

PREFIX = b"nd:"
SHARDS = 1 << 19  # RedisSettings.index_shards' default
ENTRIES = 64  # index entries a development-set record files (docs/measurements.md)
ASKED = 39  # ... and index keys it asks under
RECHECKED = 0.55  # the share of a record's entries filed under a key it asked (rechecked for races)
EXPIRY_KNOWN = 0.7  # the share whose bucket key the client saw get its expiry (no EXPIREAT sent)
WIDTH = 7 * 86_400 // 4  # the bucket width news alone gives (a quarter of 7 days)
NEWS_TTL = 7 * 86_400
MARGIN = 60
RECHECK_LAG = 30


def scripts(folder: Path) -> tuple[bytes, bytes]:
    """(lookup, write) scripts composed from ``folder`` as ``storage/redis/store.py`` composes them."""

    def part(name: str, **values: int) -> bytes:
        body = (folder / f"{name}.lua").read_bytes()
        for key, value in values.items():
            body = body.replace(b"$" + key.encode(), str(value).encode())
        return body

    head, hits = part("head"), part("live_hits")
    return head + hits + part("lookup"), head + hits + part("write", NO_RECHECK=NO_RECHECK, EXPIRY_SET=EXPIRY_SET)


def head_scripts(into: Path) -> None:
    """Write the committed scripts (``HEAD:storage/redis/lua``) into ``into``."""
    names = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", "HEAD", "storage/redis/lua/"],
                           check=True, capture_output=True, text=True).stdout.split()
    for name in names:
        body = subprocess.run(["git", "-C", str(ROOT), "show", f"HEAD:{name}"], check=True, capture_output=True).stdout
        (into / Path(name).name).write_bytes(body)


def write_blob(rng: np.random.Generator, docs: int, now: int, recheck: float, known: float) -> bytes:
    """Packed index entries of ``docs`` new documents, as ``RedisFingerprintStore._index_entries`` packs them."""
    n = docs * ENTRIES
    rows = np.repeat(np.arange(docs, dtype=np.uint64), ENTRIES)
    rows = np.where(rng.random(n) < recheck, rows, np.uint64(NO_RECHECK))
    rows = np.where(rng.random(n) < known, rows + np.uint64(EXPIRY_SET), rows)
    entries = np.empty(n, dtype=[("shard", ">u4"), ("end", ">u4"), ("member", "V13"), ("row", ">u4")])
    entries["shard"] = rng.integers(0, SHARDS, n)
    entries["end"] = (now + NEWS_TTL) // WIDTH * WIDTH + WIDTH
    entries["member"] = np.frombuffer(rng.bytes(13 * n), dtype="V13")
    entries["row"] = rows
    return entries.tobytes()


def lookup_blob(rng: np.random.Generator, lookups: int) -> bytes:
    """Packed lookups (row, shard, check), as ``RedisFingerprintStore._index_lookups`` packs them."""
    entries = np.empty(lookups, dtype=[("row", ">u4"), ("shard", ">u4"), ("check", "V5")])
    entries["row"] = np.arange(lookups) // ASKED
    entries["shard"] = rng.integers(0, SHARDS, lookups)
    entries["check"] = np.frombuffer(rng.bytes(5 * lookups), dtype="V5")
    return entries.tobytes()


def script_usec(r: redis.Redis, script: bytes, *args: Any) -> int:
    """The server's own time for one call of ``script`` (``INFO commandstats``), microseconds."""
    r.config_resetstat()
    r.eval(script, 0, 0, *args)
    return int(r.info("commandstats")["cmdstat_eval"]["usec"])


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print (or write) its report."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", type=Path, default=None, help="the scripts' folder before (default: HEAD's)")
    p.add_argument("--after", type=Path, default=ROOT / "storage" / "redis" / "lua")
    p.add_argument("--stored", type=int, default=20_000, help="documents filed before timing")
    p.add_argument("--docs", type=int, default=300, help="documents a timed script call")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory(prefix="neardup-bench-scripts-") as tmp:
        before = args.before
        if before is None:
            before = Path(tmp) / "before"
            before.mkdir()
            head_scripts(before)
        versions = {"before": scripts(before), "after": scripts(args.after)}
        server = start_redis(Path(tmp) / "redis")
        try:
            r = redis.Redis(port=server.port)
            now = int(time.time())
            fallback = b"%x" % ((now + NEWS_TTL) // WIDTH * WIDTH + WIDTH)
            write_args = [now, WIDTH, MARGIN, RECHECK_LAG, fallback, 0]
            lookup_args = [now, WIDTH, MARGIN, LOOKUP, fallback, 0]
            for start in range(0, args.stored, 1000):
                r.eval(versions["before"][1], 0, 0, PREFIX, write_blob(rng, min(1000, args.stored - start), now, 0, 0),
                       *write_args)
            keys = r.dbsize()
            timed: dict[str, dict[str, list[float]]] = {v: {"write": [], "lookup": []} for v in versions}
            for i in range(args.rounds):
                for name in (("before", "after") if i % 2 == 0 else ("after", "before")):
                    lookup, write = versions[name]
                    w = write_blob(rng, args.docs, now, RECHECKED, EXPIRY_KNOWN)
                    timed[name]["write"].append(script_usec(r, write, PREFIX, w, *write_args) / (args.docs * ENTRIES))
                    lk = lookup_blob(rng, args.docs * ASKED)
                    timed[name]["lookup"].append(script_usec(r, lookup, PREFIX, lk, *lookup_args) / (args.docs * ASKED))
            version = r.info("server")["redis_version"]
        finally:
            server.stop()
    rows = {name: {"write_us_per_entry": round(statistics.median(t["write"]), 2),
                   "lookup_us_per_key": round(statistics.median(t["lookup"]), 2),
                   "write_runs": [round(x, 2) for x in t["write"]], "lookup_runs": [round(x, 2) for x in t["lookup"]]}
            for name, t in timed.items()}
    result = {"benchmark": "redis_scripts", "date": time.strftime("%Y-%m-%d"), "redis_version": version,
              "bucket_keys": keys, "stored_documents": args.stored, "documents_a_call": args.docs,
              "rounds": args.rounds, "before": str(args.before or "HEAD"), "after": str(args.after), **rows}
    for name, row in rows.items():
        print(f"{name:6} write {row['write_us_per_entry']:5.2f} us an entry, "
              f"lookup {row['lookup_us_per_key']:5.2f} us a key")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
