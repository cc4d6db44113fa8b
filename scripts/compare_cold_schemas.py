"""Measure the cold tier's volume figures (:func:`neardup.bench.cold.volume`) for an earlier
commit's schema and this tree's, alternating on one throwaway cluster, so that both see the same
machine load: on a shared machine two runs minutes apart differ more than the schemas do.

The earlier commit's ``storage/postgres/{schema,archive}.py`` and ``bench/suite/cold.py`` are read
with ``git show`` into a temporary package (their imports of each other pointed at it); the rest
of neardup is this tree's. Run:
``python scripts/compare_cold_schemas.py --commit 743ea1b --documents 100000 --rounds 2``;
prints one JSON line a measurement (``schema``: ``before`` or ``after``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from neardup.bench import cold
from neardup.bench.pg_server import start_postgres

_FILES = {"storage/postgres/schema.py": "schema", "storage/postgres/archive.py": "archive",
          "bench/suite/cold.py": "cold"}  # fmt: skip


def earlier(commit: str, folder: Path) -> ModuleType:
    """The bench module of ``commit``, importable as ``earlier_cold.cold``."""
    package = folder / "earlier_cold"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for path, name in _FILES.items():
        text = subprocess.run(["git", "show", f"{commit}:{path}"], check=True, capture_output=True, text=True).stdout
        for module in ("schema", "archive"):
            text = text.replace(f"neardup.storage.postgres.{module}", f"earlier_cold.{module}")
        (package / f"{name}.py").write_text(text)
    sys.path.insert(0, str(folder))
    return importlib.import_module("earlier_cold.cold")


def main() -> None:
    """Alternate the two schemas' measurements (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", required=True, help="the earlier commit (its schema is 'before')")
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--windows", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="neardup-compare-") as code, \
            tempfile.TemporaryDirectory(prefix="neardup-compare-pg-") as cluster:
        before = earlier(args.commit, Path(code))
        server = start_postgres(Path(cluster))  # a folder of its own: it is handed to the postgres user
        try:
            for i in range(args.rounds):
                for name, module in (("before", before), ("after", cold)):
                    url = server.create_database(f"{name}_{i}")
                    out = asyncio.run(module.volume(url, args.documents, args.windows))
                    print(json.dumps({"schema": name, "round": i, "postgresql": server.version(), **out}), flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
