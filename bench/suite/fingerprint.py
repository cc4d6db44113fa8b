"""``neardup bench fingerprint`` (also plain ``neardup bench``): the fingerprint path against the
classic stack and peer libraries, same run, same documents, one process (one core). Ratios are
what to compare; absolute seconds vary.

Stacks timed on 3 KB Chinese documents (text cut at 3,000 UTF-8 bytes):
- neardup: normalise + segment (jieba's dictionary, in a kernel) + SimHash + MinHash in batch
  kernels (the engine's path);
- classic: jieba.lcut + a per-token Python SimHash loop + datasketch MinHash (shared permutations);
- peers on the same inputs: datasketch MinHash, rensa RMinHash, the `simhash` package; segmentation
  by jieba, rjieba and neardup's kernel (all without HMM, same tokens).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neardup.bench.corpus import load_chinese_texts
from neardup.bench.report import Row, environment, number, table
from neardup.errors import InputError

DOC_BYTES = 3000


@dataclass(frozen=True, slots=True)
class FingerprintOptions:
    """What ``neardup bench fingerprint`` was asked for."""

    docs: Path | None = None
    n: int = 2000
    quick: bool = False


def load_zh_docs(path: Path | None, n: int, max_bytes: int = DOC_BYTES) -> list[str]:
    """``n`` Chinese texts of about ``max_bytes`` UTF-8 bytes (those shorter than 90 % of it are left
    out), repeated as needed."""
    _, texts = load_chinese_texts(path, max_bytes)
    full = [t for t in texts if len(t.encode("utf-8")) >= max_bytes * 0.9]
    if not full:
        raise InputError(f"no Chinese document of at least {int(max_bytes * 0.9)} bytes", hint="pass --docs FILE")
    reps = (n + len(full) - 1) // len(full)
    return (full * reps)[:n]


def timed(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def classic_simhash(tokens: list[str]) -> int:
    """64-bit SimHash the classic way: per distinct token, 64 Python-level votes weighted by tf."""
    import mmh3

    v = [0] * 64
    for tok, tf in Counter(tokens).items():
        h = mmh3.hash64(tok, signed=False)[0]
        for bit in range(64):
            v[bit] += tf if (h >> bit) & 1 else -tf
    return sum(1 << bit for bit in range(64) if v[bit] > 0)


def shingles(text: str, k: int = 5) -> list[bytes]:
    """Character ``k``-shingles of the letters and digits of ``text``, UTF-8 encoded."""
    chars = [c for c in text if c.isalnum()]
    return ["".join(chars[i : i + k]).encode("utf-8") for i in range(max(1, len(chars) - k + 1))]


def run(args: FingerprintOptions) -> dict[str, Any]:
    """Time every stack; returns the results (documents/s, MB/s, ratios, environment)."""
    import jieba
    import rjieba

    from neardup.sketch.fingerprint import FingerprintConfig, Fingerprinter
    from neardup.text.normalize import normalize_batch

    n = 500 if args.quick else args.n
    n_slow = max(50, n // 10)
    repeat = 1 if args.quick else 3
    texts = load_zh_docs(args.docs, n)
    slow_texts = texts[:n_slow]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    results: dict[str, Any] = {"documents": n, "doc_bytes": round(mb * 1e6 / n), "slow_stack_documents": n_slow}

    fp = Fingerprinter(FingerprintConfig())
    fp.fingerprint(texts[:50])  # compile / load kernels
    jieba.setLogLevel(60)
    jieba.initialize()

    def ours() -> None:
        for i in range(0, n, 1000):
            fp.fingerprint(texts[i : i + 1000])

    t_ours = timed(ours, repeat)
    results["neardup_fingerprint_docs_per_s"] = round(n / t_ours, 1)
    nb = normalize_batch(texts)
    norm = nb.texts
    t_rj = timed(lambda: [rjieba.cut(t, False) for t in norm], repeat)
    results["rjieba_segment_mb_per_s"] = round(mb / t_rj, 2)
    t_seg = timed(lambda: fp.segmenter.spans(nb.cps, nb.offsets), repeat)
    results["neardup_segment_mb_per_s"] = round(mb / t_seg, 2)
    t_norm = timed(lambda: normalize_batch(texts), repeat)
    results["neardup_normalise_docs_per_s"] = round(n / t_norm, 1)

    from datasketch import MinHash

    base = MinHash(num_perm=128, seed=1)
    perms = base.permutations
    scheme = getattr(base, "scheme", None)
    kw = {"scheme": scheme} if scheme is not None else {}

    def classic() -> None:
        for t in slow_texts:
            toks = [w for w in jieba.lcut(t) if w.strip()]
            classic_simhash(toks)
            m = MinHash(num_perm=128, permutations=perms, **kw)
            m.update_batch(shingles(t))

    t_classic = timed(classic, 1)
    results["classic_stack_docs_per_s"] = round(n_slow / t_classic, 1)
    results["speedup_vs_classic"] = round((n / t_ours) / (n_slow / t_classic), 1)

    mb_slow = sum(len(t.encode("utf-8")) for t in slow_texts) / 1e6
    t_jieba = timed(lambda: [jieba.lcut(t, HMM=False) for t in slow_texts], 1)
    results["jieba_segment_mb_per_s"] = round(mb_slow / t_jieba, 2)

    sh = [shingles(t) for t in slow_texts]

    def ds() -> None:
        for s in sh:
            m = MinHash(num_perm=128, permutations=perms, **kw)
            m.update_batch(s)

    results["datasketch_minhash_docs_per_s"] = round(n_slow / timed(ds, repeat), 1)
    try:
        from rensa import RMinHash

        str_sh = [[x.decode("utf-8") for x in s] for s in sh]

        def rn() -> None:
            for s in str_sh:
                m = RMinHash(num_perm=128, seed=1)
                m.update(s)

        results["rensa_minhash_docs_per_s"] = round(n_slow / timed(rn, repeat), 1)
    except ImportError:
        results["rensa_minhash_docs_per_s"] = None
    from neardup.kernels import text as ktext

    batch = normalize_batch(slow_texts)

    def our_minhash() -> None:
        hs, off = ktext.char_shingle_hashes(batch.cps, batch.offsets, fp.classes, 5, 1)
        fp.minhash(*ktext.distinct_per_doc(hs, off))

    results["neardup_minhash_from_text_docs_per_s"] = round(n_slow / timed(our_minhash, repeat), 1)
    try:
        from simhash import Simhash

        toks = [[w for w in rjieba.cut(t) if w.strip()] for t in batch.texts]
        results["simhash_package_docs_per_s"] = round(n_slow / timed(lambda: [Simhash(t) for t in toks], repeat), 1)
    except (ImportError, OverflowError) as exc:
        results["simhash_package_docs_per_s"] = f"failed: {type(exc).__name__}"
    results["ratios"] = {
        "neardup_vs_classic": results["speedup_vs_classic"],
        "neardup_vs_rjieba_segmentation": round(
            results["neardup_segment_mb_per_s"] / results["rjieba_segment_mb_per_s"], 1),
        "rjieba_vs_jieba_segmentation": round(
            results["rjieba_segment_mb_per_s"] / results["jieba_segment_mb_per_s"], 1),
        "neardup_minhash_vs_datasketch": round(results["neardup_minhash_from_text_docs_per_s"]
                                               / results["datasketch_minhash_docs_per_s"], 1),
    }
    if isinstance(results.get("rensa_minhash_docs_per_s"), float):
        results["ratios"]["neardup_minhash_vs_rensa"] = round(
            results["neardup_minhash_from_text_docs_per_s"] / results["rensa_minhash_docs_per_s"], 1)
    results["environment"] = environment("jieba", "rjieba", "datasketch", "rensa", "simhash")
    return results


def summary(r: dict[str, Any]) -> str:
    """The short table ``neardup bench fingerprint`` prints."""
    ratios = r["ratios"]
    return table(f"fingerprint path, {r['documents']} Chinese documents of ~{r['doc_bytes']} bytes, one core", [
        Row("neardup fingerprint path, docs/s", number(r["neardup_fingerprint_docs_per_s"]), "8,000"),
        Row("classic stack (jieba + Python SimHash + datasketch), docs/s", number(r["classic_stack_docs_per_s"])),
        Row("neardup / classic", f"{ratios['neardup_vs_classic']}x"),
        Row("segmentation MB/s: neardup / rjieba / jieba", f"{r['neardup_segment_mb_per_s']} / "
            f"{r['rjieba_segment_mb_per_s']} / {r['jieba_segment_mb_per_s']}"),
        Row("MinHash from text: neardup / datasketch, docs/s", f"{number(r['neardup_minhash_from_text_docs_per_s'])}"
            f" / {number(r['datasketch_minhash_docs_per_s'])}"),
    ])
