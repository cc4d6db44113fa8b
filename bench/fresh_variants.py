"""Fresh variants of the development set's originals, made with the set's own edit operations and
a new seed, decided by the engine in a shuffled order: a second draw of the same kind of set.

    .venv/bin/python bench/fresh_variants.py [--seed 11] [--originals DOCS.jsonl] [--json RESULTS.json]

For each original of ../shared/datasets (a document derived from nothing), two variants by edit
operations of ``Editor`` in ../shared/datasets/build.py drawn at random (boilerplate, punctuation,
paragraph reorder, truncation, sentence deletion, crawler noise, combined without the synonym step,
exact copy: the synonym and traditional-character edits need resources the set does not ship), and
for 30 % of them a negation flip. The report gives recall over (original, variant) pairs by edit,
over (variant, variant) pairs of one original, and how many flips end in one cluster with their
original or with one of its variants. Nothing is tuned on it; it shows what a new draw of the
development set's edits does, where the set's own draw is small (a hidden set from other sources
is such a draw).

``--originals DOCS.jsonl`` takes the originals from other texts (``{"id", "text", "lang"}`` per
line) instead of the set's: the same edits on documents of other sources, as a hidden set is
made. ``bench/other_sources.py`` writes such a file from real texts that packages on the package
index and Debian ship.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from report import emit

from neardup.config import load_settings
from neardup.document import parse_document
from neardup.engine import Engine, decide_all
from neardup.learning.scoring import UnionFind

DATASETS = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"
OPS = ("boilerplate_added", "punctuation_width_change", "paragraph_reorder", "truncation", "sentence_deletion",
       "crawler_noise", "combined", "exact_duplicate")
Pair = tuple[str, str, str]


def load_build(path: Path) -> Any:
    """The set's build.py as a module (its ``Editor``)."""
    spec = importlib.util.spec_from_file_location("dataset_build", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    return build


def set_originals(datasets: Path) -> list[dict[str, str]]:
    """The development set's documents derived from nothing."""
    with open(datasets / "provenance.jsonl", encoding="utf-8") as fh:
        derived = {p["id"]: p["derived_from"] for p in map(json.loads, fh)}
    with open(datasets / "docs.jsonl", encoding="utf-8") as fh:
        return [d for d in map(json.loads, fh) if derived[d["id"]] is None]


def draw(datasets: Path, seed: int, originals: list[dict[str, str]]
         ) -> tuple[list[dict[str, str]], list[Pair], list[Pair]]:
    """(documents in a shuffled order, positive pairs, flip pairs)."""
    rng = random.Random(seed)
    editor = load_build(datasets / "build.py").Editor(rng, {}, None)
    ctx = {"titles": [d["text"][:20] for d in originals]}
    docs: list[dict[str, str]] = []
    positives: list[Pair] = []
    flips: list[Pair] = []
    for base in originals:
        d = {**base, "title": None}
        docs.append({"id": base["id"], "text": base["text"], "lang": base["lang"]})
        made: list[tuple[str, str]] = []
        for k in range(2):
            op = rng.choice(OPS)
            text = getattr(editor, op)(d, ctx)
            if text and text != base["text"]:
                vid = f"{base['id']}-{op}-{k}"
                docs.append({"id": vid, "text": text, "lang": base["lang"]})
                made.append((vid, op))
                positives.append((base["id"], vid, op))
        if len(made) == 2:
            positives.append((made[0][0], made[1][0], "variant_vs_variant"))
        if rng.random() < 0.3:
            text = editor.negation_flip(d, None)
            if text:
                fid = base["id"] + "-flip"
                docs.append({"id": fid, "text": text, "lang": base["lang"]})
                flips += [(base["id"], fid, "flip_vs_original")] + [(vid, fid, "flip_vs_variant") for vid, _ in made]
    rng.shuffle(docs)
    return docs, positives, flips


async def decide(docs: list[dict[str, str]]) -> dict[str, str | None]:
    """duplicate_of per id, the engine on the memory store in windows as the batch CLI."""
    settings = load_settings()
    parsed = [parse_document(d, max_bytes=settings.normalize.max_bytes) for d in docs]
    engine = await Engine.open(settings)
    try:
        decisions = await decide_all(engine, parsed, settings.window.max_count)
    finally:
        await engine.close()
    return {d.doc.id: d.duplicate_of for d in decisions}


def report(duplicate_of: dict[str, str | None], positives: list[Pair], flips: list[Pair]) -> dict[str, Any]:
    """Recall by kind and flips merged by kind."""
    clusters = UnionFind(list(duplicate_of))
    for doc_id, original in duplicate_of.items():
        if original:
            clusters.union(doc_id, original)

    def rates(pairs: list[Pair]) -> dict[str, str]:
        total: Counter[str] = Counter()
        joined: Counter[str] = Counter()
        for a, b, kind in pairs:
            total[kind] += 1
            joined[kind] += clusters.find(a) == clusters.find(b)
        return {k: f"{joined[k]}/{total[k]} = {joined[k] / total[k]:.4f}" for k in sorted(total)}

    found = sum(clusters.find(a) == clusters.find(b) for a, b, _ in positives)
    return {"recall": round(found / max(len(positives), 1), 4), "positive_pairs": len(positives),
            "recall_by_kind": rates(positives), "merged_by_kind": rates(flips)}


def main() -> None:
    """Run the benchmark and print (or write) its report."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--originals", type=Path, default=None, help="other texts as the originals (JSONL)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    if args.originals:
        with open(args.originals, encoding="utf-8") as fh:
            originals = [json.loads(line) for line in fh if line.strip()]
    else:
        originals = set_originals(args.datasets)
    docs, positives, flips = draw(args.datasets, args.seed, originals)
    started = time.perf_counter()
    result = {"seed": args.seed, "originals": str(args.originals or "the development set's"),
              "documents": len(docs), **report(asyncio.run(decide(docs)), positives, flips),
              "seconds": round(time.perf_counter() - started, 1), "date": time.strftime("%Y-%m-%d")}
    emit(result, args.json)


if __name__ == "__main__":
    main()
