"""What one index lookup costs inside Redis: the store's own lookup script, timed per entry.

    .venv/bin/python bench/redis_lookup.py [--entries 20000] [--json out.json]

Starts a redis-server (no persistence), fills index shards the way the store lays them out
(``{prefix}{i<shard hex>}<bucket>`` sorted sets of 13-byte members: check, ref; one key per time
bucket, storage/redis/keys.py) with 1 to 200 members a bucket key and 1 to 7 buckets a shard, runs
the store's lookup script (``storage/redis/store.py``: ``_LOOKUP_LUA``) over ``--entries``
lookups at once, each reading every bucket of its shard, and reads ``INFO commandstats``: the
script's time per entry, and how much of it the ZRANGE BYLEX commands themselves took (the rest
is the script's Lua work: unpacking the entry, building the key names and the range bounds).
Answers three questions of the Redis path: is a lookup dearer when keys hold more members (the
cost per document at 1 M stored), what each bucket a lookup reads adds, and is the time in Redis's
commands or in the script around them.
"""

from __future__ import annotations

import argparse
import json
import random
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from neardup.storage.redis.store import _LOOKUP_LUA, LOOKUP  # noqa: E402
from tests.fixtures.redis_servers import start_redis  # noqa: E402

PREFIX = b"nd:"
SHARDS = 4096
# (members a bucket key, buckets a lookup reads): 78 members is what 1 M documents put in 524,288
# unbucketed shards; 7 buckets is the kept one and 6 timed ones (the default width, a quarter of
# the longest ttl)
GRID = ((1, 1), (8, 1), (32, 1), (78, 1), (120, 1), (200, 1), (8, 3), (8, 7), (32, 3), (32, 7), (12, 7))


def suffixes(buckets: int) -> list[bytes]:
    """The key suffixes of ``buckets`` buckets: the kept one, then timed ones (ends a day apart)."""
    day = 86_400
    first = (int(time.time()) // day + 1) * day
    return [b"k", *(b"%x" % (first + i * day) for i in range(buckets - 1))]


def fill(r: redis.Redis, per_key: int, buckets: int, rng: random.Random) -> None:
    """``SHARDS`` index shards of ``buckets`` bucket keys of ``per_key`` members each."""
    r.flushall()
    pipe = r.pipeline(transaction=False)
    for shard in range(SHARDS):
        for suffix in suffixes(buckets):
            key = PREFIX + b"{i" + f"{shard:x}".encode() + b"}" + suffix
            pipe.zadd(key, {rng.randbytes(5) + rng.randbytes(8): 0 for _ in range(per_key)})
        if shard % 256 == 255:
            pipe.execute()
    pipe.execute()


def measure(r: redis.Redis, entries: int, buckets: int, rng: random.Random) -> dict[str, Any]:
    """One lookup script call over ``entries`` random (shard, check) lookups, each over ``buckets`` buckets."""
    blob = b"".join(struct.pack(">II", i, rng.randrange(SHARDS)) + rng.randbytes(5) for i in range(entries))
    r.config_resetstat()
    started = time.perf_counter()
    # no class sets given: the script reads the buckets listed (class_buckets' fallback)
    r.eval(_LOOKUP_LUA, 0, 0, PREFIX, blob, 0, 1, 0, LOOKUP, b",".join(suffixes(buckets)), 0)
    wall = time.perf_counter() - started
    stats = r.info("commandstats")
    script = stats.get("cmdstat_eval", {}).get("usec", 0)
    zrange = stats.get("cmdstat_zrange", {}).get("usec", 0)
    return {"script_us_per_entry": round(script / entries, 2), "zrange_us_per_entry": round(zrange / entries, 2),
            "lua_share": round(1 - zrange / script, 2) if script else None,
            "client_wall_us_per_entry": round(1e6 * wall / entries, 2)}


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print (or write) its report."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--entries", type=int, default=20_000)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    rng = random.Random(1)
    rows = []
    with tempfile.TemporaryDirectory(prefix="neardup-bench-lookup-") as tmp:
        server = start_redis(Path(tmp))
        try:
            r = redis.Redis(port=server.port)
            version = r.info("server")["redis_version"]
            for per, buckets in GRID:
                fill(r, per, buckets, rng)
                encoding = r.object("encoding", PREFIX + b"{i0}k")
                rows.append({"members_per_key": per, "buckets_per_lookup": buckets,
                             "encoding": encoding.decode() if encoding else None,
                             **measure(r, args.entries, buckets, rng)})
                print(json.dumps(rows[-1]))
        finally:
            server.stop()
    result = {"benchmark": "redis_lookup", "date": time.strftime("%Y-%m-%d"), "entries": args.entries,
              "redis_version": version, "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
