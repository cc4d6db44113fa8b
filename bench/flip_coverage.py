"""Every single negation flip of every development document, judged by the critical-difference
check alone (no similarity, no index, no clusters).

    .venv/bin/python bench/flip_coverage.py [--profile-version 3] [--docs ../shared/datasets/docs.jsonl]
        [--pairs bench/world_flips.tsv] [--json RESULTS.json]

For each document and each place where the set's own negation-flip edit could act (the word pairs
and the skip rule of ``Editor.negation_flip`` in ../shared/datasets/build.py), the copy with that one
word flipped is profiled and compared with the original's stored record, both ways, as the engine
compares a document with a candidate. A flip counts as found when both directions report a
critical difference. The set's own flips are a sample of one to three of these places per
document; this covers all of them, so a shape of text that hides a flip shows up even where the
set's sample never drew it (and a hidden set from other sources might).

``--pairs FILE`` flips other word pairs instead (TAB-separated, ``#`` comments; Chinese and English
told apart by the word's letters): ``bench/world_flips.tsv`` puts a negator in front of words that
no lexicon list names, a negation the set's edit never makes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from report import emit

from neardup.rules.differences import PROFILE_VERSION, decode_profile, profiler
from neardup.text.normalize import normalize_text

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ROOT.parent / "shared" / "datasets"


def flip_pairs(build_py: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The (word, flipped) pairs of the set's negation-flip edit: Chinese, English."""
    spec = importlib.util.spec_from_file_location("dataset_build", build_py)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {build_py}")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    return list(build.ZH_NEG_FLIPS), list(build.EN_NEG_FLIPS)


def read_pairs(path: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(word, flipped) pairs of a TAB-separated file: Chinese, English (ASCII words)."""
    zh: list[tuple[str, str]] = []
    en: list[tuple[str, str]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip():
            raise SystemExit(f"{path}:{n}: expected WORD<TAB>FLIPPED")
        (en if parts[0].isascii() else zh).append((parts[0], parts[1]))
    return zh, en


def single_flips(text: str, lang: str, pairs: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(word, flipped word, flipped text) for every place the edit could flip one word of ``text``."""
    out = []
    for word, flipped in pairs:
        for m in re.finditer(re.escape(word), text):
            if lang == "zh" and text[max(0, m.start() - 1) : m.start()] in "不未非无没":
                continue  # the edit's own skip rule: 不同意 is not flipped again
            out.append((word, flipped, text[: m.start()] + flipped + text[m.end() :]))
    return out


def coverage(docs: list[dict[str, Any]], zh: list[tuple[str, str]], en: list[tuple[str, str]],
             version: int) -> dict[str, Any]:
    """Flips tried and missed, in all and per word pair, with up to three missed passages each."""
    prof = profiler()
    tried: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    for d in docs:
        lang = d["lang"]
        flips = single_flips(d["text"], lang, zh if lang == "zh" else en)
        if not flips:
            continue
        original = prof.profile(normalize_text(d["text"]), lang, version=version)
        stored = decode_profile(original.encode())
        for word, flipped, text in flips:
            key = f"{word.strip()} -> {flipped.strip()}"
            tried[key] += 1
            mine = prof.profile(normalize_text(text), lang, version=version)
            found = (mine.critical_against(stored, version) is not None
                     and original.critical_against(decode_profile(mine.encode()), version) is not None)
            if not found:
                missed[key] += 1
                at = text.find(flipped.strip())
                examples.setdefault(key, [])
                if len(examples[key]) < 3:
                    examples[key].append(text[max(0, at - 12) : at + 20].replace("\n", " "))
    total, lost = sum(tried.values()), sum(missed.values())
    return {"profile_version": version, "flips": total, "missed": lost, "missed_rate": round(lost / max(total, 1), 5),
            "missed_by_pair": {k: f"{missed[k]}/{tried[k]}" for k in sorted(missed, key=lambda k: -missed[k])},
            "examples": examples}


def main() -> None:
    """Run the benchmark and print (or write) its report."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, default=DATASETS / "docs.jsonl")
    ap.add_argument("--build", type=Path, default=DATASETS / "build.py", help="the set's build.py (its flip pairs)")
    ap.add_argument("--pairs", type=Path, default=None, help="other (word, flipped) pairs, TAB-separated")
    ap.add_argument("--profile-version", type=int, choices=(2, 3, 4, 5), default=PROFILE_VERSION)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    zh, en = read_pairs(args.pairs) if args.pairs else flip_pairs(args.build)
    with open(args.docs, encoding="utf-8") as fh:
        docs = [json.loads(line) for line in fh if line.strip()]
    started = time.perf_counter()
    result = coverage(docs, zh, en, args.profile_version)
    result["pairs"] = str(args.pairs or args.build)
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["date"] = time.strftime("%Y-%m-%d")
    emit(result, args.json)


if __name__ == "__main__":
    main()
