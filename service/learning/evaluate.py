"""``neardup eval``: run the engine over a labelled set, score it, plot it, recommend thresholds."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neardup.config.settings import Settings
from neardup.document import Document
from neardup.engine import Engine, decide_all
from neardup.explain import image_report
from neardup.files.records import read_documents, read_pairs
from neardup.learning.scoring import UnionFind, score
from neardup.media.hashes import ImageRadii, limits_of, radii_of
from neardup.rules.policy import Thresholds
from neardup.rules.versions import different_versions
from neardup.sketch.similarity import SketchTable, similarities


def pair_features(engine: Engine, docs: Sequence[Any], pairs: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """Jaccard, Hamming, containment and critical flag of every labelled pair, computed as the
    engine computes them (:func:`neardup.sketch.similarity.similarities` over the stored precision), and
    what the engine's other vetoes read: ``exact`` (same normalised content) and ``min_length``
    (the shorter normalised text, for ``short_text_chars``)."""
    w = engine._prepare(list(docs), time.time())
    row = {d.id: i for i, d in enumerate(w.docs)}
    table = SketchTable.of(w.sketches, engine.settings.fingerprint.num_perm, w.fps.simhash.shape[1])
    a = np.array([row[p["a"]] for p in pairs], dtype=np.int64)
    b = np.array([row[p["b"]] for p in pairs], dtype=np.int64)
    sims = similarities(table, b, a)
    crit = np.array([different_versions(w.sketches[x].marks, w.sketches[y].marks)
                     or w.profiles[y].critical_against(w.profiles[x].entries, jaccard=float(j)) is not None
                     for x, y, j in zip(a.tolist(), b.tolist(), sims.jaccard.tolist(), strict=True)], dtype=bool)
    labels = np.array([p["label"] for p in pairs])
    hashes = w.fps.content_hashes
    exact = np.array([hashes[x] == hashes[y] for x, y in zip(a.tolist(), b.tolist(), strict=True)], dtype=bool)
    lengths = np.array(w.fps.lengths, dtype=np.int64)
    return {"jaccard": sims.jaccard, "hamming": sims.hamming.astype(np.float64), "containment": sims.containment,
            "comparable": sims.comparable, "critical": crit, "label": labels, "exact": exact,
            "min_length": np.minimum(lengths[a], lengths[b])}


@dataclass(frozen=True, slots=True)
class ImagePair:
    """A labelled pair whose two documents both carry usable images: the nearest pair of their
    images in pHash bits as the image rule measures b after a (by a view when that is nearer and
    within the views' radius), the radius that distance is held to (the views' when it is a view's;
    the smaller ones for a picture of little structure), and whether the engine merged them."""

    a: str
    b: str
    label: int
    kind: str
    merged: bool
    phash_hamming: int
    radius: int
    within_radius: bool


def image_pairs(docs: Sequence[Document], pairs: Sequence[Mapping[str, Any]], merged: np.ndarray,
                radii: ImageRadii) -> list[ImagePair]:
    """:class:`ImagePair` of every labelled pair whose documents both carry images, in pair order
    (:func:`neardup.explain.image_report`'s nearest pair, as ``neardup explain`` shows it)."""
    by_id = {d.id: d for d in docs}
    out = []
    for p, m in zip(pairs, merged.tolist(), strict=True):
        da, db = by_id[p["a"]], by_id[p["b"]]
        report = image_report(da, db, radii) if da.images and db.images else None
        nearest = report["nearest"] if report else None
        if nearest is not None:
            by_view = nearest["phash_hamming"] != nearest["whole_phash_hamming"]
            out.append(ImagePair(p["a"], p["b"], int(p["label"]), str(p.get("kind") or ""), bool(m),
                                 nearest["phash_hamming"], nearest["view_radius" if by_view else "radius"],
                                 nearest["within_radius"]))
    return out


def image_lines(found: Sequence[ImagePair], shown: int = 20) -> list[str]:
    """The eval table's lines for the pairs with images: a count, then the first ``shown`` pairs."""
    if not found:
        return []
    lines = [f"pairs with images on both sides {len(found)}  (pHash bits of their nearest images, as the image "
             f"rule measures b after a)",
             f"{'a':16s} {'b':16s} {'label':>5s} {'merged':>6s} {'bits':>4s} {'radius':>6s} {'within':>6s}"]
    for p in found[:shown]:
        lines.append(f"{p.a[:16]:16s} {p.b[:16]:16s} {p.label:5d} {'yes' if p.merged else 'no':>6s} "
                     f"{p.phash_hamming:4d} {p.radius:6d} {'yes' if p.within_radius else 'no':>6s}")
    if len(found) > shown:
        lines.append(f"... {len(found) - shown} more in metrics.json (image_pairs)")
    return lines


# eval's recommendation: the two Jaccard thresholds; (name, lowest, highest, coarse step, finest step)
RECOMMEND_SPACE = (("jaccard_high", 0.50, 0.95, 0.05, 0.05), ("jaccard_low", 0.30, 0.95, 0.05, 0.05))


def recommend(settings: Settings, feats: dict[str, np.ndarray], target_precision: float) -> dict[str, Any]:
    """The (jaccard_high, jaccard_low) pair with the best pair recall at >= target pair precision:
    :func:`neardup.learning.calibrate.search` over :data:`RECOMMEND_SPACE`."""
    from neardup.learning.calibrate import LabelledPairs, NoOperatingPoint, search

    try:
        point, _ = search(LabelledPairs.from_features(feats), Thresholds.from_settings(settings.thresholds),
                          target_precision, RECOMMEND_SPACE)
    except NoOperatingPoint as exc:
        return {"note": str(exc)}
    return {"jaccard_high": point.thresholds.jaccard_high, "jaccard_low": point.thresholds.jaccard_low,
            "pair_precision": round(point.counts.precision, 4), "pair_recall": round(point.counts.recall, 4)}


def plots(report: Path, feats: dict[str, np.ndarray], merged: np.ndarray, scores: Any) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    report.mkdir(parents=True, exist_ok=True)
    pos = feats["label"] == 1
    files: list[str] = []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    bins = np.linspace(0, 1, 41)
    axes[0].hist(feats["jaccard"][pos], bins=bins, alpha=0.6, label="duplicates (label 1)")
    axes[0].hist(feats["jaccard"][~pos], bins=bins, alpha=0.6, label="hard negatives (label 0)")
    axes[0].set_xlabel("MinHash Jaccard estimate")
    axes[0].set_ylabel("pairs")
    axes[0].legend()
    sim = 1 - feats["hamming"] / 64
    axes[1].hist(sim[pos], bins=bins, alpha=0.6, label="duplicates")
    axes[1].hist(sim[~pos], bins=bins, alpha=0.6, label="hard negatives")
    axes[1].set_xlabel("SimHash similarity (1 - Hamming/64)")
    axes[1].legend()
    fig.tight_layout()
    fig.savefig(report / "similarity_histograms.png", dpi=110)
    plt.close(fig)
    files.append("similarity_histograms.png")

    # ROC of the Jaccard estimate as a score, with the engine's operating point
    order = np.argsort(-feats["jaccard"])
    y = pos[order]
    tpr = np.concatenate([[0], np.cumsum(y) / max(1, y.sum())])
    fpr = np.concatenate([[0], np.cumsum(~y) / max(1, (~y).sum())])
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot(fpr, tpr, label="Jaccard alone")
    op_fpr = merged[~pos].mean() if (~pos).any() else 0.0
    op_tpr = merged[pos].mean() if pos.any() else 0.0
    ax.scatter([op_fpr], [op_tpr], color="red", zorder=3, label=f"engine (FPR {op_fpr:.3f}, recall {op_tpr:.3f})")
    ax.set_xlabel("false-positive rate (label-0 pairs merged)")
    ax.set_ylabel("recall (label-1 pairs merged)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(report / "roc.png", dpi=110)
    plt.close(fig)
    files.append("roc.png")

    cm = np.array([[int((merged & pos).sum()), int((~merged & pos).sum())],
                   [int((merged & ~pos).sum()), int((~merged & ~pos).sum())]])
    fig, ax = plt.subplots(figsize=(4.5, 4))
    ax.imshow(cm, cmap="Blues")
    for (r, c), v in np.ndenumerate(cm):
        ax.text(c, r, str(v), ha="center", va="center", fontsize=14)
    ax.set_xticks([0, 1], ["merged", "kept apart"])
    ax.set_yticks([0, 1], ["label 1", "label 0"])
    ax.set_title("labelled pairs")
    fig.tight_layout()
    fig.savefig(report / "confusion_matrix.png", dpi=110)
    plt.close(fig)
    files.append("confusion_matrix.png")
    return files


async def run_eval(settings: Settings, docs_path: Path, pairs_path: Path, report: Path | None,
                   target_precision: float = 0.99) -> dict[str, Any]:
    """Decide the documents of ``docs_path`` and score the decisions against the labelled pairs of
    ``pairs_path`` (each JSONL, CSV or Parquet; a bad record is a one-line :class:`InputError`);
    plots and ``metrics.json`` into ``report`` when given."""
    docs = read_documents(docs_path, settings.normalize, image_limits=limits_of(settings.images))
    pairs = read_pairs(pairs_path, {d.id for d in docs})
    engine = await Engine.open(settings)
    try:
        started = time.perf_counter()
        decisions = await decide_all(engine, docs, settings.window.max_count)
        elapsed = time.perf_counter() - started
        dup_of = {d.doc.id: d.duplicate_of for d in decisions}
        ids = [d.id for d in docs]
        scores = score(ids, pairs, dup_of)
        uf = UnionFind(ids)
        for i, t in dup_of.items():
            if t:
                uf.union(i, t)
        merged = np.array([uf.find(p["a"]) == uf.find(p["b"]) for p in pairs])
        feats = pair_features(engine, docs, pairs)
        with_images = image_pairs(docs, pairs, merged, radii_of(settings.images))
        rec = recommend(settings, feats, target_precision)
        files = plots(report, feats, merged, scores) if report else []
    finally:
        await engine.close()
    labels = feats["label"] == 1
    lines = [
        f"documents {len(docs)}  labelled pairs {len(pairs)}  ({int(labels.sum())} duplicate, "
        f"{int((~labels).sum())} hard negative)  engine {len(docs) / elapsed:.0f} docs/s",
        f"precision {scores.precision:.4f}  recall {scores.recall:.4f}  F1 {scores.f1:.4f}  "
        f"hard-negative FPR {scores.hard_negative_fpr:.4f}",
        f"{'kind':32s} {'label':>5s} {'pairs':>6s} {'metric':>8s}",
    ]
    for kind, v in scores.per_kind.items():
        m = "recall" if v["label"] == 1 else "fpr"
        lines.append(f"{kind:32s} {v['label']:5d} {v['pairs']:6d} {m:>6s} {v[m]:.4f}")
    lines += image_lines(with_images)
    lines.append(f"recommended thresholds at pair precision >= {target_precision}: {json.dumps(rec)}")
    if files:
        lines.append(f"plots: {', '.join(str(report / f) for f in files)}")  # type: ignore[operator]
    metrics = {**scores.as_dict(), "documents": len(docs), "pairs": len(pairs),
               "documents_per_second": len(docs) / elapsed, "recommended": rec,
               "thresholds": engine.thresholds.for_type("default").as_evidence(),
               "image_pairs": [asdict(p) for p in with_images]}
    if report:
        (report / "metrics.json").write_text(json.dumps(metrics, indent=1, ensure_ascii=False))
    return {"metrics": metrics, "table": "\n".join(lines)}


__all__ = ["ImagePair", "image_lines", "image_pairs", "pair_features", "recommend", "run_eval"]
