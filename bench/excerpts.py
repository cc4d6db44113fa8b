"""Excerpts of long real texts: does each find its article, and do unrelated long texts' excerpts
stay apart?

    .venv/bin/python bench/other_sources.py            # writes /tmp/neardup-other/other.jsonl
    .venv/bin/python bench/excerpts.py [--docs DOCS.jsonl ...] [--seed 5] [--per-kind 200]
                                       [--json RESULTS.json]

Originals are texts of 800 characters or more of the development set and of the other sources
(documents derived from nothing). Kinds, one excerpt of one original each, decided after the
originals by the engine on the memory store in windows, as the batch CLI does:

- ``lead20`` / ``lead40``: the first fifth / two fifths of the text (a lead cut at "read more");
- ``middle``: 150 to 400 characters from anywhere after the first quarter, cut inside sentences;
- ``middle_flipped``: such a passage with its first 可以 / 应当 / 批准 / will / can made its
  opposite (不得 / 不应当 / 不予批准 / will not / cannot): it must stay apart (the critical-difference
  checks apply to the shared part).

The report gives the share of each kind that joined its original's cluster (for the flipped
kind: merged, target 0). Nothing is tuned on these pairs.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fresh_variants import decide, report
from lookalikes import DATASETS, OTHER, load
from report import emit

MIN_CHARS = 800
FLIPS = (("可以", "不得"), ("应当", "不应当"), ("批准", "不予批准"), ("will ", "will not "), ("can ", "cannot "))
Pair = tuple[str, str, str]


def middle(text: str, rng: random.Random) -> str:
    """150-400 characters from after the first quarter."""
    n = rng.randint(150, 400)
    start = rng.randint(len(text) // 4, len(text) - n - 1)
    return text[start : start + n]


def flipped(passage: str) -> str | None:
    """``passage`` with its first flippable word made its opposite (None when it has none). An
    English word is flipped where it stands as a word, never inside one (American is no "can")."""
    for word, opposite in FLIPS:
        at = re.search(("(?<![A-Za-z])" if word.isascii() else "") + re.escape(word), passage)
        if at:
            return passage[: at.start()] + opposite + passage[at.end() :]
    return None


def excerpt(text: str, kind: str, rng: random.Random) -> str | None:
    """One excerpt of ``kind`` of ``text``."""
    if kind == "lead20":
        return text[: len(text) // 5]
    if kind == "lead40":
        return text[: 2 * len(text) // 5]
    if kind == "middle":
        return middle(text, rng)
    return flipped(middle(text, rng))


def build(docs: list[dict[str, str]], seed: int, per_kind: int) -> tuple[list[dict[str, str]], list[Pair],
                                                                           list[Pair]]:
    """(originals + excerpts, (original, excerpt, kind) pairs that should join, flipped pairs)."""
    rng = random.Random(seed)
    pool = [d for d in docs if len(d["text"]) >= MIN_CHARS]
    rng.shuffle(pool)
    kinds = ("lead20", "lead40", "middle", "middle_flipped")
    made: dict[str, list[Pair]] = {k: [] for k in kinds}
    out: list[dict[str, str]] = []
    used: list[dict[str, str]] = []
    for n, d in enumerate(pool):
        kind = kinds[n % len(kinds)]
        if len(made[kind]) >= per_kind:
            continue
        text = excerpt(d["text"], kind, rng)
        if text is None:
            continue
        vid = f"{kind}-{len(made[kind]):04d}"
        out.append({"id": vid, "text": text, "lang": d.get("lang", "")})
        made[kind].append((d["id"], vid, kind))
        used.append(d)
    positives = [p for k in kinds[:3] for p in made[k]]
    return used + out, positives, made["middle_flipped"]


def main() -> None:
    """Run the benchmark and print (or write) its report."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, action="append",
                    help="originals (JSONL, id/text/lang); default: the development set and other sources")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--per-kind", type=int, default=200)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    paths = args.docs or [DATASETS / "docs.jsonl", OTHER / "other.jsonl"]
    docs, positives, flips = build(load(paths), args.seed, args.per_kind)
    duplicate_of = asyncio.run(decide(docs))
    result: dict[str, Any] = {"bench": "excerpts", "seed": args.seed, "documents": len(docs),
                              "sources": [str(p) for p in paths], **report(duplicate_of, positives, flips)}
    emit(result, args.json)


if __name__ == "__main__":
    main()
