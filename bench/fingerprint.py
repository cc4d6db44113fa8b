"""Run `neardup bench` and keep its JSON under bench/results/ (dated)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

from neardup.cli import main

if __name__ == "__main__":
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    path = out / f"fingerprint-{dt.date.today().isoformat()}.json"
    sys.exit(main(["bench", "--json", str(path), *sys.argv[1:]]))
