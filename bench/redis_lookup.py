"""What one index lookup costs inside Redis: the store's own lookup script, timed per entry.

    .venv/bin/python bench/redis_lookup.py [--entries 20000] [--json out.json]

Starts a redis-server (no persistence), fills index shards the way the store lays them out
(``{prefix}{i<shard hex>}`` sorted sets of 17-byte members: check, expiry, ref) with 1 to 200
members a shard, runs the store's lookup script (``storage/redis/store.py``: ``_LOOKUP_LUA``) over
``--entries`` lookups at once, and reads ``INFO commandstats``: the script's time per entry, and
how much of it the ZRANGE BYLEX commands themselves took (the rest is the script's Lua work:
unpacking the entry, building the key name and the range bounds). Answers two questions of the
Redis path: is a lookup dearer when shards hold more members (the cost per document at 1 M
stored), and is the time in Redis's commands or in the script around them.
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

from neardup.storage.redis.store import _LOOKUP_LUA  # noqa: E402
from tests.fixtures.redis_servers import start_redis  # noqa: E402

PREFIX = b"nd:"
SHARDS = 4096
MEMBERS_PER_SHARD = (1, 8, 32, 78, 120, 200)  # 78: what 1 M documents put in 524,288 shards


def fill(r: redis.Redis, per_shard: int, rng: random.Random) -> None:
    """``SHARDS`` index shards of ``per_shard`` live members each."""
    r.flushall()
    expiry = struct.pack(">I", int(time.time()) + 86_400)
    pipe = r.pipeline(transaction=False)
    for shard in range(SHARDS):
        key = PREFIX + b"{i" + f"{shard:x}".encode() + b"}"
        pipe.zadd(key, {rng.randbytes(5) + expiry + rng.randbytes(8): 0 for _ in range(per_shard)})
        if shard % 256 == 255:
            pipe.execute()
    pipe.execute()


def measure(r: redis.Redis, entries: int, rng: random.Random) -> dict[str, Any]:
    """One lookup script call over ``entries`` random (shard, check) lookups."""
    blob = b"".join(struct.pack(">II", i, rng.randrange(SHARDS)) + rng.randbytes(5) for i in range(entries))
    r.config_resetstat()
    started = time.perf_counter()
    r.eval(_LOOKUP_LUA, 0, 0, PREFIX, int(time.time()), blob)
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
            for per in MEMBERS_PER_SHARD:
                fill(r, per, rng)
                encoding = r.object("encoding", PREFIX + b"{i0}")
                rows.append({"members_per_shard": per, "encoding": encoding.decode() if encoding else None,
                             **measure(r, args.entries, rng)})
                print(json.dumps(rows[-1]))
        finally:
            server.stop()
    result = {"benchmark": "redis_lookup", "date": time.strftime("%Y-%m-%d"), "entries": args.entries,
              "redis_version": version, "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
