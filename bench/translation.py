"""The translation check on real parallel text: Linux manual pages and their Chinese translations
(``bench/parallel_manpages.py`` writes them to /tmp/neardup-parallel).

    .venv/bin/python bench/parallel_manpages.py
    .venv/bin/python bench/translation.py [--data /tmp/neardup-parallel] [--json RESULTS.json]

Three measurements: (1) cosines of each page and its translation against those of different pages
(every English page with every other page's Chinese translation: hard negatives, one narrow
field); (2) two folds by page name: the lowest threshold that keeps different pages above it at
most ``--max-false-rate`` of pairs on one half, applied to the other; (3) the engine itself with
the check enabled at the configured threshold (``translation.threshold``) and at each fold's,
deciding every document in a shuffled order: of the documents it calls translations, how many
joined their own page's other language and how many another page.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from report import emit

from neardup.config import load_settings
from neardup.decision import Rule
from neardup.document import parse_document
from neardup.engine import Engine, decide_all
from neardup.rules.translation import TranslationCheck


def fold_of(name: str) -> int:
    """0 or 1, fixed by the page's name."""
    return zlib.crc32(name.encode()) & 1


def pick_threshold(pos: npt.NDArray[np.float64], neg: npt.NDArray[np.float64], max_false_rate: float) -> float:
    """The lowest cosine (two decimals) at which at most ``max_false_rate`` of ``neg`` is at or above."""
    for t in np.arange(0.50, 1.0001, 0.01):
        if (neg >= t).mean() <= max_false_rate:
            return round(float(t), 2)
    return 1.0


def rates(pos: npt.NDArray[np.float64], neg: npt.NDArray[np.float64], t: float) -> dict[str, Any]:
    """Recall of translations and the share of different-page pairs at or above ``t``."""
    return {"threshold": t, "recall": round(float((pos >= t).mean()), 4),
            "false_pairs": int((neg >= t).sum()), "false_rate": round(float((neg >= t).mean()), 6)}


async def engine_run(docs: list[dict[str, str]], pairs: list[dict[str, Any]], threshold: float,
                     seed: int) -> dict[str, Any]:
    """The engine with the check on, every document in a shuffled order (windows of 1,000)."""
    order = list(docs)
    random.Random(seed).shuffle(order)
    settings = load_settings(worker_id="bench", store_url="memory://",
                             translation={"enabled": True, "threshold": threshold})
    engine = await Engine.open(settings)
    started = time.perf_counter()
    try:
        decisions = await decide_all(engine, [parse_document(d) for d in order], settings.window.max_count)
    finally:
        await engine.close()
    seconds = time.perf_counter() - started
    page = {d["id"]: d["id"].split(":", 1)[1] for d in docs}
    # the lexical path joins pages of one language too (a page that includes another by .so)
    joined = {d.id: d.duplicate_of for d in decisions if d.duplicate_of and d.evidence.rule is Rule.TRANSLATION}
    found = sum(joined.get(p["a"]) == p["b"] or joined.get(p["b"]) == p["a"] for p in pairs)
    wrong = sum(page[i] != page[o] for i, o in joined.items())
    return {"threshold": threshold, "decided_by_translation": len(joined),
            "its_own_translation": found, "another_page": wrong, "of_pages": len(pairs),
            "docs_per_s": round(len(docs) / seconds, 1)}


def main() -> None:
    """Run the benchmark and print (or write) its report."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("/tmp/neardup-parallel"))
    ap.add_argument("--max-false-rate", type=float, default=0.001)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    with open(args.data / "docs.jsonl", encoding="utf-8") as fh:
        docs = [json.loads(line) for line in fh if line.strip()]
    with open(args.data / "pairs.jsonl", encoding="utf-8") as fh:
        pairs = [json.loads(line) for line in fh if line.strip()]
    settings = load_settings()
    check = TranslationCheck(settings.translation, 0, 0.0)
    text = {d["id"]: d["text"] for d in docs}
    started = time.perf_counter()
    en = check.embed([text[p["a"]] for p in pairs])
    zh = check.embed([text[p["b"]] for p in pairs])
    embed_ms = (time.perf_counter() - started) * 1000 / (2 * len(pairs))
    cos = (en @ zh.T).astype(np.float64)
    folds = np.array([fold_of(p["a"]) for p in pairs])
    different = ~np.eye(len(pairs), dtype=bool)
    pos_all, neg_all = np.diag(cos), cos[different]
    result: dict[str, Any] = {
        "pages": len(pairs), "different_page_pairs": int(different.sum()),
        "embed_ms_per_document": round(embed_ms, 1), "head_chars": settings.translation.head_chars,
        "cosine": {"translations_mean": round(float(pos_all.mean()), 4),
                   "translations_p10": round(float(np.percentile(pos_all, 10)), 4),
                   "different_mean": round(float(neg_all.mean()), 4),
                   "different_p99_9": round(float(np.percentile(neg_all, 99.9)), 4),
                   "different_max": round(float(neg_all.max()), 4)},
        "at_configured": rates(pos_all, neg_all, settings.translation.threshold),
        "max_false_rate": args.max_false_rate, "folds": [],
    }
    for train in (0, 1):
        tr, te = folds == train, folds != train
        t = pick_threshold(np.diag(cos)[tr], cos[np.ix_(tr, tr)][different[np.ix_(tr, tr)]], args.max_false_rate)
        result["folds"].append({"chosen_on": f"fold {train}", **rates(
            np.diag(cos)[te], cos[np.ix_(te, te)][different[np.ix_(te, te)]], t)})
    thresholds = sorted({settings.translation.threshold, *(f["threshold"] for f in result["folds"])})
    result["engine"] = [asyncio.run(engine_run(docs, pairs, t, args.seed)) for t in thresholds]
    result["date"] = time.strftime("%Y-%m-%d")
    emit(result, args.json)


if __name__ == "__main__":
    main()
