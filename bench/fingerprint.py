"""Run ``neardup bench fingerprint``; its JSON lands in bench/results/fingerprint-DATE.json."""

from __future__ import annotations

import sys

from neardup.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "fingerprint", *sys.argv[1:]]))
