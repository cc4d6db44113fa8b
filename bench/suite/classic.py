"""The classic near-duplicate stack as one whole process, for ``neardup bench pipeline`` to time.

    python -m neardup.bench.classic INPUT.jsonl OUTPUT.jsonl

What a team would write with the usual libraries, document by document: NFKC + lower case;
jieba.lcut; a 64-bit SimHash over the tokens (mmh3 per token, 64 Python-level votes weighted by
tf); a datasketch MinHash (128 permutations) over character 5-shingles; an MD5 set for exact
copies; datasketch MinHashLSH (threshold 0.3, as neardup's index) and a 4-block SimHash index for
candidates; a candidate is a duplicate when its estimated Jaccard is at least 0.7 or its SimHash
is within 3 bits. Every decision is written as a JSON line (id, status, duplicate_of), and a
summary JSON object goes to stdout.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

NUM_PERM = 128
LSH_THRESHOLD = 0.3
JACCARD_HIGH = 0.7
HAMMING_RADIUS = 3
BLOCKS = HAMMING_RADIUS + 1
SHINGLE = 5


# the same as neardup.bench.fingerprint.classic_simhash, copied on purpose: this process is timed
# whole and must import nothing of neardup
def _simhash(tokens: list[str]) -> int:
    import mmh3

    v = [0] * 64
    for tok, tf in Counter(tokens).items():
        h = mmh3.hash64(tok, signed=False)[0]
        for bit in range(64):
            v[bit] += tf if (h >> bit) & 1 else -tf
    return sum(1 << bit for bit in range(64) if v[bit] > 0)


def _blocks(h: int) -> list[tuple[int, int]]:
    width = 64 // BLOCKS
    return [(i, (h >> (i * width)) & ((1 << width) - 1)) for i in range(BLOCKS)]


def dedup(source: Path, output: Path) -> dict[str, Any]:
    """Decide every document of ``source`` (JSONL with id and text); returns counts and timings."""
    import jieba
    from datasketch import MinHash, MinHashLSH

    started = time.perf_counter()
    jieba.setLogLevel(60)
    jieba.initialize()
    base = MinHash(num_perm=NUM_PERM, seed=1)
    # datasketch >= 2 wants the scheme of shared permutations named
    scheme = {"scheme": base.scheme} if getattr(base, "scheme", None) is not None else {}
    lsh = MinHashLSH(threshold=LSH_THRESHOLD, num_perm=NUM_PERM)
    exact: dict[str, str] = {}
    by_block: dict[tuple[int, int], list[str]] = defaultdict(list)
    stored: dict[str, tuple[MinHash, int]] = {}
    counts: Counter[str] = Counter()
    with source.open(encoding="utf-8") as src, output.open("w", encoding="utf-8") as out:
        for line in src:
            obj = json.loads(line)
            doc_id, text = str(obj["id"]), unicodedata.normalize("NFKC", obj["text"]).lower()
            text = "".join(text.split())
            digest = hashlib.md5(text.encode("utf-8")).hexdigest()
            match: str | None = exact.get(digest)
            reason = "exact" if match else "unique"
            if match is None:
                sim = _simhash([w for w in jieba.lcut(text) if w.strip()])
                chars = [c for c in text if c.isalnum()]
                m = MinHash(num_perm=NUM_PERM, permutations=base.permutations, **scheme)
                m.update_batch(["".join(chars[i:i + SHINGLE]).encode("utf-8")
                                for i in range(max(1, len(chars) - SHINGLE + 1))])
                candidates = set(lsh.query(m))
                for block in _blocks(sim):
                    candidates.update(by_block[block])
                for other in sorted(candidates):
                    om, osim = stored[other]
                    if m.jaccard(om) >= JACCARD_HIGH or bin(sim ^ osim).count("1") <= HAMMING_RADIUS:
                        match, reason = other, "near"
                        break
                if match is None:
                    exact[digest] = doc_id
                    lsh.insert(doc_id, m)
                    for block in _blocks(sim):
                        by_block[block].append(doc_id)
                    stored[doc_id] = (m, sim)
            counts[reason] += 1
            out.write(json.dumps({"id": doc_id, "status": "unique" if match is None else "duplicate",
                                  "duplicate_of": match}, ensure_ascii=False) + "\n")
    seconds = time.perf_counter() - started
    total = sum(counts.values())
    return {"documents": total, "by_reason": dict(counts), "seconds": round(seconds, 3),
            "documents_per_second": round(total / seconds, 1) if seconds > 0 else None}


def main(argv: list[str]) -> int:
    """``INPUT OUTPUT``: run :func:`dedup` and print its summary as JSON."""
    if len(argv) != 2:
        print("usage: python -m neardup.bench.classic INPUT.jsonl OUTPUT.jsonl", file=sys.stderr)
        return 2
    print(json.dumps(dedup(Path(argv[0]), Path(argv[1]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
