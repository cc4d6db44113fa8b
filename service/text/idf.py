"""``neardup idf build CORPUS``: an IDF table (word, idf per line) learned from the user's corpus."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

from neardup.text.normalize import normalize_batch
from neardup.text.segment import segmenter

EN_WORD = re.compile(r"[a-z0-9]+")


def build_idf(corpus: Path, output: Path, min_df: int = 2, window: int = 1000) -> int:
    """Count document frequencies over a corpus (JSONL, CSV or Parquet; a record that is not an
    object stops it with a one-line :class:`neardup.errors.InputError`) and write ``word idf``
    lines; returns the number of words. Records without a text are skipped.

    Words in fewer than ``min_df`` documents are left out; ``window`` documents are normalised at once.
    """
    seg = segmenter()
    df: Counter[str] = Counter()
    n_docs = 0
    batch: list[str] = []

    def flush() -> None:
        nonlocal n_docs
        for text in normalize_batch(batch).texts:
            cjk = sum(1 for ch in text[:500] if "\u4e00" <= ch <= "\u9fff")
            words = seg.cut(text) if cjk * 4 >= len(text[:500]) // 4 else EN_WORD.findall(text)
            df.update({w for w in words if any(c.isalnum() for c in w)})
            n_docs += 1
        batch.clear()

    from neardup.files.records import read_rows

    for row in read_rows(corpus, hint="CORPUS holds documents with a text field (JSONL, CSV or Parquet)"):
        if isinstance(row.data.get("text"), str):
            batch.append(row.data["text"])
        if len(batch) >= window:
            flush()
    if batch:
        flush()
    rows = [(w, math.log((n_docs + 1) / (c + 1)) + 1.0) for w, c in df.items() if c >= min_df]
    rows.sort(key=lambda r: (-r[1], r[0]))
    output.write_text("".join(f"{w} {idf:.6f}\n" for w, idf in rows), encoding="utf-8")
    return len(rows)
