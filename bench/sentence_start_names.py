"""Look-alikes whose changed name only starts sentences: the same English story about another
company or person, where the text names it only as its sentences' first word (Virgin was told
..., Microsoft has said ...). Each must stay apart from its original; the report says how many
were merged.

    .venv/bin/python bench/other_sources.py            # writes /tmp/neardup-other/other.jsonl
    .venv/bin/python bench/sentence_start_names.py [--docs DOCS.jsonl ...] [--seed 1] [--count 250]
                                                   [--json RESULTS.json]

``bench/lookalikes.py``'s English names are runs of capitalised words inside a sentence, which
profile v13 already read as names. Here the name is one the corpus writes inside a sentence in
other documents (a capitalised word after a lower-case one, two documents at least) and never in
lower case: a name by the corpus's own usage, not by the rule under test. This document writes it
only at a sentence's
start (after an end mark; not on its first line, a headline) and as a whole name (no capitalised
word after it: the Andrew of Andrew Bud is a person's first name), and it is replaced everywhere
by another such name the text does not hold. Originals are the development set's and the other sources' English
texts derived from nothing, decided first, then the look-alikes, by the engine on the memory
store in windows.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fresh_variants import decide, report
from lookalikes import DATASETS, OTHER, load
from report import emit

from neardup.text.entities import EN_NOT_NAMES

INSIDE = re.compile(r"(?<=[a-z0-9,;] )[A-Z][a-z]{2,}(?![A-Za-z])")  # a name inside a sentence
WORD = re.compile(r"(?<![A-Za-z])[A-Z][a-z]{2,}(?![A-Za-z])")
LOWER = re.compile(r"(?<![A-Za-z])[a-z]+(?![A-Za-z])")
NEXT_CAPITAL = re.compile(r"[ -][A-Z]")
AFTER_MARK = re.compile(r"[.!?][\"'”’]?\s+$")


def corpus_names(docs: list[dict[str, str]]) -> set[str]:
    """Words written as names inside a sentence in two documents or more and never in lower case
    (Home of Home Secretary and a title-case headline's words are words)."""
    seen: Counter[str] = Counter()
    lower: set[str] = set()
    for d in docs:
        seen.update({w for w in INSIDE.findall(d["text"]) if w.lower() not in EN_NOT_NAMES})
        lower.update(LOWER.findall(d["text"]))
    return {w for w, n in seen.items() if n >= 2 and w.lower() not in lower}


def starts_only(text: str, names: set[str]) -> list[str]:
    """The names of ``names`` this text writes only at a sentence's start, past its first line,
    and each time as a whole name (no capitalised word after it: Andrew of Andrew Bud is not)."""
    body_at = text.find("\n") + 1 if "\n" in text else 0
    places: dict[str, list[bool]] = {}
    for m in WORD.finditer(text):
        if m.group() in names:
            start = m.start() >= body_at and bool(AFTER_MARK.search(text[max(0, m.start() - 4) : m.start()]))
            places.setdefault(m.group(), []).append(start and not NEXT_CAPITAL.match(text, m.end()))
    return sorted(w for w, at in places.items() if all(at))


def build(docs: list[dict[str, str]], seed: int, count: int) -> tuple[list[dict[str, str]], list[tuple[str, str, str]]]:
    """(originals + look-alikes, (original, look-alike, kind) pairs)."""
    rng = random.Random(seed)
    english = [d for d in docs if d.get("lang") == "en"]
    names = corpus_names(english)
    pool = sorted(names)
    order = english[:]
    rng.shuffle(order)
    originals: list[dict[str, str]] = []
    variants: list[dict[str, str]] = []
    pairs: list[tuple[str, str, str]] = []
    for d in order:
        if len(pairs) >= count:
            break
        found = starts_only(d["text"], names)
        if not found:
            continue
        name = rng.choice(found)
        other = rng.choice([w for w in pool if w not in d["text"]])
        vid = f"entity_en_start-{len(pairs):04d}"
        originals.append(d)
        renamed = re.sub(rf"(?<![A-Za-z]){name}(?![A-Za-z])", other, d["text"])
        variants.append({"id": vid, "text": renamed, "lang": "en"})
        pairs.append((d["id"], vid, "entity_en_start"))
    return originals + variants, pairs


def main() -> None:
    """Run the benchmark and print (or write) its report."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, action="append",
                    help="originals (JSONL, id/text/lang); default: the development set and other sources")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=250)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    paths = args.docs or [DATASETS / "docs.jsonl", OTHER / "other.jsonl"]
    docs, pairs = build(load(paths), args.seed, args.count)
    result: dict[str, Any] = {"bench": "sentence_start_names", "seed": args.seed, "documents": len(docs),
                              "sources": [str(p) for p in paths], **report(asyncio.run(decide(docs)), [], pairs)}
    for key in ("recall", "positive_pairs", "recall_by_kind"):
        result.pop(key)
    emit(result, args.json)


if __name__ == "__main__":
    main()
