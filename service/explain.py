"""``neardup explain A B``: everything behind one pair's decision, computed afresh."""

from __future__ import annotations

from typing import Any

import numpy as np

from neardup.config.settings import Settings
from neardup.differences import decode_profile
from neardup.document import parse_document
from neardup.engine import Engine
from neardup.kernels.minhash import jaccard_estimates
from neardup.kernels.simhash import hamming_distances
from neardup.lexicon import hash_words
from neardup.policy import Similarity, containment
from neardup.segment import segmenter


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
    engine = await Engine.open(settings.model_copy(update={"store_url": "memory://"}))
    try:
        da = parse_document(a)
        db = parse_document(b)
        fp = engine.fingerprinter.fingerprint([da.text, db.text], [da.lang, db.lang])
        j = float(jaccard_estimates(fp.signatures[0], fp.signatures[1][None, :])[0])
        h = int(hamming_distances(fp.simhash[0], fp.simhash[1][None, :])[0])
        c = containment(j, int(fp.shingle_counts[0]), int(fp.shingle_counts[1]))
        diff_bits = [
            w * 64 + bit for w in range(fp.simhash.shape[1]) for bit in range(64)
            if (int(fp.simhash[0, w]) ^ int(fp.simhash[1, w])) >> bit & 1
        ]
        cfg = engine.fingerprinter.config
        sa = _shingles(fp.texts[0], fp.langs[0], cfg.zh_shingle, cfg.en_shingle)
        sb = _shingles(fp.texts[1], fp.langs[1], cfg.zh_shingle, cfg.en_shingle)
        profile_a = engine.profiler.profile(fp.texts[0], fp.langs[0])
        critical = engine.profiler.profile(fp.texts[1], fp.langs[1]).critical_against(
            decode_profile(profile_a.encode()))
        rule = engine.policy.rule(Similarity(j, h * 64 // (64 * fp.simhash.shape[1]), c))
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
            "jaccard_estimate": round(j, 4),
            "hamming": h,
            "differing_simhash_bits": diff_bits,
            "containment": round(c, 4),
            "rule": rule,
            "critical_difference": critical.as_evidence() if critical else None,
            "thresholds": engine.policy.thresholds(),
            "decision_for_b_after_a": {"status": decision.status, "duplicate_of": decision.duplicate_of,
                                       "evidence": decision.evidence},
        }
    finally:
        await engine.close()


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
