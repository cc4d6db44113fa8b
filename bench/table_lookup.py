"""Membership in a short sorted table, as the name kernels ask it of every token: the kernels'
``_in_sorted`` (a table of up to ``SCANNED_TABLE`` entries scanned whole) against a binary search
(``np.searchsorted``), on random Chinese code points and table sizes of the kernels' tables.

    .venv/bin/python bench/table_lookup.py [--lookups 800000] [--json RESULTS.json]

Nearly every lookup misses (a token is rarely a surname or a head word); the binary search's
branches are then unpredictable, and the scan's compare-and-or loop is compiled to vector code.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import emit

from neardup.kernels.entities import SCANNED_TABLE, _in_sorted

SIZES = (8, 54, 211, 512, 875)  # byline markers, stop characters, surnames, the scan's limit, given-name tails


@njit(inline="always")
def _searched(table: npt.NDArray[Any], c: Any) -> bool:
    at = np.searchsorted(table, c)
    return at < table.shape[0] and table[at] == c


@njit
def _count(values: npt.NDArray[Any], table: npt.NDArray[Any], lookup: Any) -> int:
    """How many of ``values`` ``lookup`` finds in ``table`` (numba compiles one loop per lookup)."""
    n = 0
    for i in range(values.shape[0]):
        n += lookup(table, values[i])
    return n


def _ns_a_lookup(lookup: Any, values: npt.NDArray[Any], table: npt.NDArray[Any], rounds: int = 5) -> tuple[float, int]:
    found = _count(values, table, lookup)  # compiled for these types before timing
    best = min(_timed(lookup, values, table) for _ in range(rounds))
    return round(best / len(values) * 1e9, 2), int(found)


def _timed(lookup: Any, values: npt.NDArray[Any], table: npt.NDArray[Any]) -> float:
    t = time.perf_counter()
    _count(values, table, lookup)
    return time.perf_counter() - t


def main() -> None:
    """Time both lookups on two key types and five table sizes; print and write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lookups", type=int, default=800_000)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    rows = []
    for dtype in (np.uint32, np.uint64):
        values = rng.integers(0x4E00, 0xA000, args.lookups).astype(dtype)
        for size in SIZES:
            table = np.unique(rng.integers(0x4E00, 0xA000, size).astype(dtype))
            kernel, found = _ns_a_lookup(_in_sorted, values, table)
            searched, same = _ns_a_lookup(_searched, values, table)
            assert found == same
            rows.append({"dtype": np.dtype(dtype).name, "entries": int(table.shape[0]), "found": found,
                         "kernel_ns": kernel, "binary_search_ns": searched,
                         "scanned": bool(table.shape[0] <= SCANNED_TABLE)})
    emit({"bench": "table_lookup", "date": time.strftime("%Y-%m-%d"), "lookups": args.lookups,
          "scanned_table": SCANNED_TABLE, "rows": rows}, args.json)


if __name__ == "__main__":
    main()
