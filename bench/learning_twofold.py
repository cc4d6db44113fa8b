"""Two-fold check of the learning loop on a labelled set: learn from one half's labels, score the
engine on the other half with and without the learned model, and the other way round.

    .venv/bin/python bench/learning_twofold.py [--docs ../shared/datasets/docs.jsonl]
        [--pairs ../shared/datasets/pairs.jsonl] [--json RESULTS.json]

A second source: ``bench/other_set.py`` writes a labelled set made from other texts to
/tmp/neardup-other/set (``--docs /tmp/neardup-other/set/docs.jsonl --pairs .../pairs.jsonl``).

The halves split the documents by connected component of the labelled pairs (a document and all
its variants fall in one half), so nothing learned from one half names a document of the other.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from neardup.config import load_settings
from neardup.document import parse_document
from neardup.engine import Engine, decide_all
from neardup.learning.model import Label, Model, learn
from neardup.learning.scoring import UnionFind, score
from neardup.storage.memory import MemoryFingerprintStore

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("negation_flip", "amended_version", "truncation", "synonym_edit", "related_regulation_overlap",
         "entity_zh", "entity_en", "figures_zh", "figures_en")  # the last four: bench/other_set.py's look-alikes


def halves(ids: list[str], pairs: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """Two halves of the documents, whole connected components each (by a stable hash of the root)."""
    import hashlib

    uf = UnionFind(ids)
    for p in pairs:
        uf.union(p["a"], p["b"])
    first: set[str] = set()
    for i in ids:
        if hashlib.blake2b(uf.find(i).encode(), digest_size=2).digest()[0] % 2 == 0:
            first.add(i)
    return first, set(ids) - first


async def run_engine(settings: Any, model: Model, docs: list[Any], pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """F1, precision and recall of the engine (with ``model`` applied) over the labelled pairs."""
    engine = Engine(settings, MemoryFingerprintStore())
    if model.version:
        engine.apply_model(model)
    out = await decide_all(engine, docs, 1000)
    s = score([d.id for d in docs], pairs, {d.doc.id: d.duplicate_of for d in out})
    return {"f1": round(s.f1, 4), "precision": round(s.precision, 4), "recall": round(s.recall, 4),
            **{k: round(v.get("recall", v.get("fpr", 0.0)), 4) for k, v in s.per_kind.items() if k in KINDS}}


async def main() -> None:
    """Run the benchmark and print (or write) its report."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", default=str(ROOT.parent / "shared" / "datasets" / "docs.jsonl"))
    ap.add_argument("--pairs", default=str(ROOT.parent / "shared" / "datasets" / "pairs.jsonl"))
    ap.add_argument("--json")
    args = ap.parse_args()
    docs = [parse_document(line) for line in Path(args.docs).read_bytes().splitlines() if line.strip()]
    by_id = {d.id: d for d in docs}
    pairs = [json.loads(line) for line in Path(args.pairs).read_text().splitlines() if line.strip()]
    settings = load_settings(store_url="memory://", worker_id="twofold")
    h1, h2 = halves([d.id for d in docs], pairs)
    rows = []
    for name, train, test in (("A->B", h1, h2), ("B->A", h2, h1)):
        labels = [Label(p["a"], p["b"], p["label"] == 1) for p in pairs if p["a"] in train]
        started = time.perf_counter()
        model, outcome = await learn(settings, Model(), labels, by_id)
        learned_s = time.perf_counter() - started
        test_docs = [d for d in docs if d.id in test]
        test_pairs = [p for p in pairs if p["a"] in test]
        before = await run_engine(settings, Model(), test_docs, test_pairs)
        after = await run_engine(settings, model if outcome.accepted else Model(), test_docs, test_pairs)
        rows.append({"fold": name, "train_labels": len(labels), "test_pairs": len(test_pairs),
                     "accepted": outcome.accepted, "learned_seconds": round(learned_s, 1),
                     "polarity_words": len(model.polarity), "lighter_words": len(model.lighter),
                     "thresholds": model.thresholds, "before": before, "after": after})
        print(json.dumps(rows[-1], ensure_ascii=False))
    if args.json:
        Path(args.json).write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "folds": rows}, indent=1,
                                              ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main())
