"""``neardup explain A B``: everything behind one pair's decision, computed afresh."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from neardup.config.settings import Settings
from neardup.document import parse_document
from neardup.engine import Engine
from neardup.lexicon import hash_words
from neardup.policy import rule
from neardup.segment import segmenter
from neardup.similarity import SketchTable, similarities


def _weighted_tokens(engine: Engine, text: str, lang: str, top: int = 15) -> list[tuple[str, float]]:
    toks = segmenter().cut(text) if lang == "zh" else text.split()
    toks = [t for t in toks if any(ch.isalnum() for ch in t)]
    if not toks:
        return []
    table = engine.fingerprinter.weights
    hashes = hash_words(toks)
    idx = np.searchsorted(table.keys, hashes)
    idx = np.minimum(idx, len(table.keys) - 1)
    found = table.keys[idx] == hashes
    weights = np.where(found, table.weights[idx], table.default_weight)
    uniq: dict[str, float] = {}
    for t, w in zip(toks, weights.tolist(), strict=True):
        uniq[t] = w
    return sorted(uniq.items(), key=lambda kv: -kv[1])[:top]


def _shingles(text: str, lang: str, k_zh: int, k_en: int) -> set[str]:
    if lang == "zh":
        chars = [c for c in text if c.isalnum()]
        return {"".join(chars[i : i + k_zh]) for i in range(max(1, len(chars) - k_zh + 1))}
    words = [w for w in text.split() if w]
    return {" ".join(words[i : i + k_en]) for i in range(max(1, len(words) - k_en + 1))}


async def explain_pair(settings: Settings, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Explain the pair (a, b) with a fresh engine on an in-memory store (see :func:`explain_with`)."""
    engine = await Engine.open(settings.model_copy(update={"store_url": "memory://"}))
    try:
        return await explain_with(engine, a, b)
    finally:
        await engine.close()


async def explain_with(engine: Engine, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Everything behind B's decision when A came first, with the numbers the engine uses: the
    same sketches (b-bit signatures as stored), the same :func:`neardup.similarity.similarities`,
    the same rule and veto. ``engine`` should be on an empty in-memory store (B is decided after A)."""
    da = parse_document(a)
    db = parse_document(b)
    w = engine._prepare([da, db], time.time())
    fp = w.fps
    table = SketchTable.of(w.sketches, engine.settings.fingerprint.num_perm, fp.simhash.shape[1])
    sims = similarities(table, np.array([1]), np.array([0]))
    sim = sims.at(0)
    thresholds = engine.thresholds.for_type(db.type)
    diff_bits = [
        wd * 64 + bit for wd in range(fp.simhash.shape[1]) for bit in range(64)
        if (int(fp.simhash[0, wd]) ^ int(fp.simhash[1, wd])) >> bit & 1
    ]
    cfg = engine.fingerprinter.config
    sa = _shingles(fp.texts[0], fp.langs[0], cfg.zh_shingle, cfg.en_shingle)
    sb = _shingles(fp.texts[1], fp.langs[1], cfg.zh_shingle, cfg.en_shingle)
    critical = w.profiles[1].critical_against(w.profiles[0].entries)
    await engine.decide([da])
    decision = await engine.check(db)
    return {
        "a": {"id": da.id, "lang": fp.langs[0], "chars": fp.lengths[0], "shingles": int(fp.shingle_counts[0]),
              "simhash": [f"{int(x):016x}" for x in fp.simhash[0]],
              "top_weighted_tokens": _weighted_tokens(engine, fp.texts[0], fp.langs[0])},
        "b": {"id": db.id, "lang": fp.langs[1], "chars": fp.lengths[1], "shingles": int(fp.shingle_counts[1]),
              "simhash": [f"{int(x):016x}" for x in fp.simhash[1]],
              "top_weighted_tokens": _weighted_tokens(engine, fp.texts[1], fp.langs[1])},
        "exact_shingle_jaccard": round(len(sa & sb) / max(1, len(sa | sb)), 4),
        "shared_shingles": len(sa & sb),
        "shared_shingle_examples": sorted(sa & sb)[:10],
        "jaccard_estimate": sim.jaccard,
        "signature_bits": int(table.bits.min()),
        "hamming": sim.hamming,
        "differing_simhash_bits": diff_bits,
        "containment": sim.containment,
        "comparable": bool(sims.comparable[0]),
        "rule": rule(sim, thresholds) if sims.comparable[0] else None,
        "critical_difference": critical.as_evidence() if critical else None,
        "thresholds": thresholds.as_evidence(),
        "decision_for_b_after_a": {"status": decision.status.value, "duplicate_of": decision.duplicate_of,
                                   "evidence": decision.evidence.to_dict()},
    }


def format_report(r: dict[str, Any]) -> str:
    lines = []
    for side in ("a", "b"):
        s = r[side]
        toks = ", ".join(f"{t}:{w:.1f}" for t, w in s["top_weighted_tokens"])
        lines.append(f"{side.upper()} {s['id']}  lang={s['lang']} chars={s['chars']} shingles={s['shingles']} "
                     f"simhash={' '.join(s['simhash'])}")
        lines.append(f"   top weighted tokens: {toks}")
    lines.append(f"shared shingles {r['shared_shingles']} (exact Jaccard {r['exact_shingle_jaccard']}), "
                 f"e.g. {r['shared_shingle_examples'][:5]}")
    lines.append(f"MinHash Jaccard estimate {r['jaccard_estimate']}  containment {r['containment']}")
    lines.append(f"SimHash Hamming distance {r['hamming']}  differing bits {r['differing_simhash_bits']}")
    lines.append(f"similarity rule: {r['rule'] or 'none (not similar)'}")
    crit = r["critical_difference"]
    lines.append(f"critical difference: {crit if crit else 'none'}")
    d = r["decision_for_b_after_a"]
    lines.append(f"decision for B after A: {d['status']}" + (f" of {d['duplicate_of']}" if d["duplicate_of"] else ""))
    lines.append(f"thresholds: {r['thresholds']}")
    return "\n".join(lines)
