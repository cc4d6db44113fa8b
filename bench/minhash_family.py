"""The two MinHash families side by side: whole ``neardup dedup`` processes and the batch engine,
interleaved in one run so that the load of a shared machine falls on both alike.

    .venv/bin/python bench/minhash_family.py [--n 6400] [--repeats 3] [--json RESULTS.json]

For each repeat, one ``neardup dedup`` process per family (``NEARDUP_FINGERPRINT__MINHASH_FAMILY``)
over the same documents (``neardup bench pipeline``'s corpus: the development set's Chinese texts,
then copies and mixtures of them), pinned to one core, then the batch engine alone on the memory
store per family (windows of 1,000, after a warm-up window). Reports each family's best and median
seconds, the ratio of the medians, and whether both families decided the same number of documents
unique. The quality side of the comparison is ``bench/quality.py --set
fingerprint.minhash_family=permutations`` and the fresh draws.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from report import emit

from neardup.bench.corpus import Corpus, write_jsonl
from neardup.bench.pipeline import WARMUP_DOCS, bench_cpu, dedup_command, engine_rate, load_chinese_texts, pinned

FAMILIES = ("one_permutation", "permutations")
ENV = "NEARDUP_FINGERPRINT__MINHASH_FAMILY"


def dedup_seconds(source: Path, output: Path, family: str) -> tuple[float, int]:
    """Wall seconds of one whole ``neardup dedup`` process and how many documents it left unique."""
    env = dict(os.environ, **{ENV: family})
    started = time.perf_counter()
    subprocess.run(dedup_command(source, output), check=True, env=env, capture_output=True)
    seconds = time.perf_counter() - started
    with output.open(encoding="utf-8") as fh:
        unique = sum('"status": "unique"' in line for line in fh)
    return seconds, unique


def engine_docs_per_s(docs: list[Any], warmup: list[Any], family: str) -> float:
    """The batch engine's documents/s on the memory store with ``family`` (settings from the environment)."""
    os.environ[ENV] = family
    try:
        return float(asyncio.run(engine_rate(docs, warmup, 1000))["documents_per_second"])
    finally:
        del os.environ[ENV]


def summary(values: list[float], best: Any = min) -> dict[str, Any]:
    """Every one of repeated measurements, the best and the median."""
    return {"all": [round(v, 3) for v in values], "best": round(best(values), 3),
            "median": round(statistics.median(values), 3)}


def main() -> None:
    """Run the benchmark and print (or write) its report."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=6400)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    _, texts = load_chinese_texts(None)
    corpus = Corpus(texts)
    docs = list(corpus.docs(0, args.n))
    warmup = list(corpus.docs(args.n, WARMUP_DOCS))
    seconds: dict[str, list[float]] = {f: [] for f in FAMILIES}
    rates: dict[str, list[float]] = {f: [] for f in FAMILIES}
    unique: dict[str, set[int]] = {f: set() for f in FAMILIES}
    with tempfile.TemporaryDirectory(prefix="neardup-bench-family-") as tmp:
        source = Path(tmp) / "docs.jsonl"
        write_jsonl(source, docs)
        with pinned(bench_cpu()):
            for family in FAMILIES:  # warm: numba caches, page cache
                dedup_seconds(source, Path(tmp) / "warm.jsonl", family)
            for _ in range(args.repeats):
                for family in FAMILIES:
                    s, u = dedup_seconds(source, Path(tmp) / f"{family}.jsonl", family)
                    seconds[family].append(s)
                    unique[family].add(u)
                    rates[family].append(engine_docs_per_s(docs, warmup, family))
    one, perm = (statistics.median(seconds[f]) for f in FAMILIES)
    emit({
        "benchmark": "minhash_family",
        "documents": args.n,
        "repeats": args.repeats,
        "dedup_seconds": {f: summary(seconds[f]) for f in FAMILIES},
        "engine_docs_per_s": {f: summary(rates[f], max) for f in FAMILIES},
        "dedup_speedup_of_one_permutation": round(perm / one, 2),
        "engine_speedup_of_one_permutation": round(statistics.median(rates["one_permutation"])
                                                   / statistics.median(rates["permutations"]), 2),
        "unique_documents": {f: sorted(unique[f]) for f in FAMILIES},
        "date": time.strftime("%Y-%m-%d"),
    }, args.json)


if __name__ == "__main__":
    main()
