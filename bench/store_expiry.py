"""Memory that comes back: Redis keys and ``used_memory`` before, during and after the TTLs pass.

    .venv/bin/python bench/store_expiry.py [--news 2000] [--wait 10] [--json out.json]

Starts a redis-server of its own (``--hz 50``), opens the store with news kept 2 s (others 3 s,
announcements forever) and 256 index shards, writes 20 announcements (2 index keys each), then
``--news`` news documents (21 index keys each, one shared with the announcements), waits
``--wait`` seconds and reads ``DBSIZE``, the index keys (``SCAN {i*``) and ``INFO used_memory``
at each step. With the time-bucketed index the keys and the memory come back to what the
announcements need; with the layout before it (unbucketed shard keys, no key expiry) the dead
entries stay until later writes sweep them.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neardup.storage import FingerprintRecord, open_store  # noqa: E402
from tests.fixtures.redis_servers import start_redis  # noqa: E402

TTL: dict[str, int | None] = {"news": 2, "announcement": None, "default": 3}


def key(name: str) -> int:
    """A stable nonzero uint64 index key."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big") | 1


def record(doc_id: str, keys: tuple[int, ...], content_type: str) -> FingerprintRecord:
    """A record of the sizes the engine stores (512-byte signature, 192-byte profile)."""
    h = hashlib.blake2b(doc_id.encode()).digest()
    return FingerprintRecord(doc_id=doc_id, content_type=content_type, published_at=1.7e9, content_hash=h[:16],
                             simhash=h[:8], signature=h * 8, profile=h * 3, meta=b"\x01" + doc_id.encode(),
                             shingles=123, length=4567, index_keys=keys)


async def census(s: Any) -> dict[str, int]:
    """Keys, index keys and used memory of the store's server."""
    stats = await s.stats()
    index = [k async for k in s.client.scan_iter(match=s.layout.prefix + b"{i*", count=1000)]
    return {"keys": stats["keys"], "index_keys": len(index), "used_memory": stats["used_memory"]}


async def run(news: int, wait: float) -> dict[str, Any]:
    """The four census points on a throwaway server."""
    with tempfile.TemporaryDirectory(prefix="neardup-bench-expiry-") as tmp:
        server = start_redis(Path(tmp), "--hz", "50")
        s: Any = open_store(f"redis://127.0.0.1:{server.port}", ttl=TTL, index_shards=256)
        try:
            await s.open()
            out = {"empty": await census(s)}
            kept = [record(f"ann-{i}", (key(f"ann-{i}"), key("shared")), "announcement") for i in range(20)]
            await s.commit([], kept)
            out["announcements"] = await census(s)
            docs = [record(f"news-{i}", (*(key(f"n{i}-{b}") for b in range(20)), key("shared")), "news")
                    for i in range(news)]
            for i in range(0, news, 250):
                await s.commit([], docs[i : i + 250])
            out["with_news"] = await census(s)
            await asyncio.sleep(wait)
            out[f"after_{wait:g}_s"] = await census(s)
            return {"benchmark": "store_expiry", "date": time.strftime("%Y-%m-%d"), "news": news, "ttl": TTL,
                    "index_bucket_seconds": getattr(s.layout, "bucket_seconds", None), "census": out}
        finally:
            await s.close()
            server.stop()


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print (or write) its report."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--news", type=int, default=2000)
    p.add_argument("--wait", type=float, default=10.0)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    result = asyncio.run(run(args.news, args.wait))
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
