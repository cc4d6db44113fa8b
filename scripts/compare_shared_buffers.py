"""The cold tier's window lookup with PostgreSQL's ``shared_buffers`` large enough for the keys'
index and at the default 128 MB, on the same archive.

A throwaway cluster (``neardup.bench.pg_server``) is filled with N documents
(:func:`neardup.bench.cold.volume`, as ``scripts/measure_cold_tier.py`` does) with
``shared_buffers`` at ``--large``; then the lookups are measured again (``--reuse``) with the
server restarted at 128 MB and at ``--large`` alternately, ``--rounds`` times each. Prints one
JSON line a measurement. About 12 minutes at 1,000,000 documents on two cores.

    python scripts/compare_shared_buffers.py --documents 1000000 --large 3GB
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from neardup.bench.cold import volume
from neardup.bench.pg_server import restart_postgres, start_postgres

DEFAULT = "128MB"


def main() -> None:
    """Load, then measure alternately (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--large", default="3GB", help="shared_buffers that holds the keys' index")
    parser.add_argument("--windows", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="neardup-shared-buffers-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o777)  # the server may run as nobody
        server = start_postgres(folder, {"shared_buffers": args.large})
        url = server.create_database("archive")
        started = time.monotonic()
        loaded = asyncio.run(volume(url, args.documents, args.windows, False))
        print(json.dumps({"shared_buffers": args.large, "load": True, **loaded,
                          "load_seconds": round(time.monotonic() - started)}), flush=True)
        try:
            for buffers in [DEFAULT, args.large] * args.rounds:
                server = restart_postgres(server, folder, {"shared_buffers": buffers})
                r = asyncio.run(volume(url, args.documents, args.windows, True))
                kept = {k: v for k, v in r.items() if k.startswith(("lookup", "fetch", "documents", "bytes"))}
                print(json.dumps({"shared_buffers": buffers, **kept}), flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
