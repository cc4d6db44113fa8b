"""``neardup calibrate``: the rule's thresholds from labelled pairs, by ROC, for a target pair precision.

What is measured is the engine's own decision of each labelled pair (B decided with A as its only
candidate): the engine's similarity of the pair (:func:`neardup.learning.evaluate.pair_features`: J,
Hamming and containment from :func:`neardup.sketch.similarity.similarities` over the stored sketches,
and the critical-difference veto), the engine's rule (:func:`neardup.rules.policy.rule_codes`) under
:class:`~neardup.rules.policy.Thresholds` built with :func:`dataclasses.replace`, and the engine's
other vetoes (an exact copy is always a duplicate; a text shorter than ``short_text_chars`` is
only ever an exact one).

The search: the five parameters of the rule (``jaccard_high``, ``jaccard_low``, ``hamming_high``,
``hamming_low``, ``containment_high``) jointly, coarse to fine. A coarse grid covers every
ordered combination (Jaccard and containment in steps of 0.08, Hamming in steps of 4); then, four
times, the few best points so far are refined on the grid of half the step around them (every
parameter one half step down, kept or up, together), down to steps of 0.01 and 1 bit; the
loosest of the equally good points are refined as well (they border the gains). A point is
better when it reaches the target precision and has the higher pair recall; ties go to the higher
precision, then to the point nearest the configured thresholds (the labels do not tell those
apart, so the configuration is changed no more than they ask for). Nothing reaching the target
is an error, with the best precision seen.

Guarding against tuning to one set: the pairs are split in two halves by connected component of
documents (no document in both halves); the search runs on each half and the point it chooses is
scored on the other half. ``calibrate`` prints both folds next to the point chosen on all pairs.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import click
import numpy as np
import numpy.typing as npt

from neardup.cli import config_option, load_cli_settings
from neardup.config.settings import Settings, ThresholdSettings
from neardup.document import Document
from neardup.errors import InputError
from neardup.files.outputs import Named, OutputFile, check_paths
from neardup.files.records import check_readable, read_documents, read_pairs
from neardup.learning.scoring import Scores, UnionFind, prf, score
from neardup.rules.policy import Thresholds, rule_codes
from neardup.storage.extras import require_extra

# a searched parameter: (name, lowest, highest, coarse step, finest step)
Axis = tuple[str, float, float, float, float]
# calibrate's search: the five parameters of the rule
SEARCH: tuple[Axis, ...] = (
    ("jaccard_high", 0.20, 1.00, 0.08, 0.01),
    ("jaccard_low", 0.04, 1.00, 0.08, 0.01),
    ("hamming_high", 0, 32, 4, 1),
    ("hamming_low", 0, 32, 4, 1),
    ("containment_high", 0.52, 1.00, 0.08, 0.01),
)
KEEP = 4  # best points refined at each level
BAND = 0.05  # the adaptive jaccard_high stays within this of the calibrated one
ROC_FILES = ("roc_simhash.png", "roc_minhash.png")
REPORT_FILES = (*ROC_FILES, "calibration.json")


# --------------------------------------------------------------------------- labelled pairs
@dataclass(frozen=True, slots=True)
class LabelledPairs:
    """Labelled pairs with the engine's features of each (row p is pair p)."""

    a: tuple[str, ...]
    b: tuple[str, ...]
    kind: tuple[str, ...]
    label: npt.NDArray[np.bool_]
    jaccard: npt.NDArray[np.float64]
    hamming: npt.NDArray[np.int64]
    containment: npt.NDArray[np.float64]
    comparable: npt.NDArray[np.bool_]
    critical: npt.NDArray[np.bool_]
    exact: npt.NDArray[np.bool_]
    min_length: npt.NDArray[np.int64]

    @classmethod
    def of(cls, pairs: Sequence[Mapping[str, Any]], feats: Mapping[str, npt.NDArray[Any]]) -> LabelledPairs:
        """From the pair records and :func:`neardup.learning.evaluate.pair_features` of them."""
        return cls(tuple(str(p["a"]) for p in pairs), tuple(str(p["b"]) for p in pairs),
                   tuple(str(p.get("kind", "")) for p in pairs), feats["label"] == 1,
                   feats["jaccard"].astype(np.float64), feats["hamming"].astype(np.int64),
                   feats["containment"].astype(np.float64), feats["comparable"].astype(bool),
                   feats["critical"].astype(bool), feats["exact"].astype(bool),
                   feats["min_length"].astype(np.int64))

    @classmethod
    def from_features(cls, feats: Mapping[str, npt.NDArray[Any]]) -> LabelledPairs:
        """From pair features alone (no ids): :func:`neardup.learning.evaluate.pair_features` or
        :func:`neardup.learning.model.stored_features`; without ``exact`` / ``min_length`` (stored
        fingerprints), no pair is an exact copy and none is too short."""
        n = len(feats["label"])
        blank = ("",) * n
        exact = feats.get("exact")
        min_length = feats.get("min_length")
        return cls(blank, blank, blank, np.asarray(feats["label"]) == 1,
                   feats["jaccard"].astype(np.float64), feats["hamming"].astype(np.int64),
                   feats["containment"].astype(np.float64), feats["comparable"].astype(bool),
                   feats["critical"].astype(bool),
                   exact.astype(bool) if exact is not None else np.zeros(n, dtype=bool),
                   min_length.astype(np.int64) if min_length is not None
                   else np.full(n, np.iinfo(np.int64).max, dtype=np.int64))  # fmt: skip

    def __len__(self) -> int:
        """Pairs."""
        return len(self.a)

    def subset(self, mask: npt.NDArray[np.bool_]) -> LabelledPairs:
        """The pairs where ``mask`` is True."""
        idx = np.flatnonzero(mask).tolist()
        cut: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            cut[f.name] = tuple(v[i] for i in idx) if isinstance(v, tuple) else v[mask]
        return LabelledPairs(**cut)

    def predict(self, t: Thresholds) -> npt.NDArray[np.bool_]:
        """The engine's decision of each pair under ``t``: an exact copy, or similar by the rule,
        comparable, long enough and without a critical difference."""
        codes = rule_codes(self.jaccard, self.hamming, self.containment, t)
        near = (codes > 0) & self.comparable & ~self.critical & (self.min_length >= t.short_text_chars)
        out: npt.NDArray[np.bool_] = self.exact | near
        return out


@dataclass(frozen=True, slots=True)
class Counts:
    """Confusion counts of pair decisions against labels."""

    tp: int
    fp: int
    positives: int
    negatives: int

    @classmethod
    def of(cls, predicted: npt.NDArray[np.bool_], label: npt.NDArray[np.bool_]) -> Counts:
        """Count ``predicted`` against ``label``."""
        return cls(int((predicted & label).sum()), int((predicted & ~label).sum()), int(label.sum()),
                   int((~label).sum()))

    @property
    def precision(self) -> float:
        """Pairs decided duplicates that are labelled duplicates (0 when none is decided: :func:`prf`)."""
        return prf(self.tp, self.tp + self.fp, self.positives)[0]

    @property
    def recall(self) -> float:
        """Labelled duplicates decided duplicates (0 when none is labelled: :func:`prf`)."""
        return prf(self.tp, self.tp + self.fp, self.positives)[1]

    def reaches(self, target: float) -> bool:
        """Some pair decided a duplicate, at pair precision >= ``target``."""
        return self.tp > 0 and self.tp >= target * (self.tp + self.fp) - 1e-9

    def to_dict(self) -> dict[str, float | int]:
        """JSON form."""
        return {"pair_precision": round(self.precision, 4), "pair_recall": round(self.recall, 4),
                "tp": self.tp, "fp": self.fp, "fn": self.positives - self.tp, "pairs": self.positives + self.negatives}


# --------------------------------------------------------------------------- the search
@dataclass(frozen=True, slots=True)
class OperatingPoint:
    """Thresholds and the pair decisions they give on the pairs searched."""

    thresholds: Thresholds
    counts: Counts


class NoOperatingPoint(InputError):
    """No thresholds reach the target pair precision on the labelled pairs."""


def searched(t: Thresholds) -> dict[str, float | int]:
    """The searched parameters of ``t``."""
    return {name: getattr(t, name) for name, *_ in SEARCH}


def _valid(v: Mapping[str, float]) -> bool:
    return v["jaccard_low"] <= v["jaccard_high"] and v["hamming_high"] <= v["hamming_low"]


def _coarse(space: Sequence[Axis], base: Mapping[str, float]) -> Iterator[dict[str, float]]:
    """Every point of the coarse grid of ``space``; the parameters outside it keep ``base``'s values."""
    axes = []
    for _name, lo, hi, step, _fine in space:
        n = round((hi - lo) / step)
        axes.append([round(hi - k * step, 4) for k in range(n + 1)])  # from the top: hi is always on it
    for combo in itertools.product(*axes):
        v = {**base, **dict(zip([s[0] for s in space], combo, strict=True))}
        if _valid(v):
            yield v


def _around(v: Mapping[str, float], scale: float, space: Sequence[Axis]) -> Iterator[dict[str, float]]:
    """The points one step (``scale`` x the coarse step, never below the finest) down, kept or up
    from ``v`` in every parameter of ``space`` at once, inside the bounds."""
    axes = []
    for name, lo, hi, step, fine in space:
        s = max(fine, step * scale)
        axes.append(sorted({round(min(hi, max(lo, v[name] + d * s)), 4) for d in (-1, 0, 1)}))
    for combo in itertools.product(*axes):
        p = {**v, **dict(zip([s[0] for s in space], combo, strict=True))}
        if _valid(p):
            yield p


def _thresholds(base: Thresholds, v: Mapping[str, float]) -> Thresholds:
    return replace(base, jaccard_high=float(v["jaccard_high"]), jaccard_low=float(v["jaccard_low"]),
                   hamming_high=int(v["hamming_high"]), hamming_low=int(v["hamming_low"]),
                   containment_high=float(v["containment_high"]))


def _distance(t: Thresholds, base: Thresholds) -> float:
    """How far ``t`` moved from ``base`` (Hamming bits count as 1/16 of a Jaccard unit)."""
    return (abs(t.jaccard_high - base.jaccard_high) + abs(t.jaccard_low - base.jaccard_low)
            + abs(t.containment_high - base.containment_high)
            + (abs(t.hamming_high - base.hamming_high) + abs(t.hamming_low - base.hamming_low)) / 16)


def _looseness(t: Thresholds) -> float:
    """How much ``t`` lets through: lower Jaccard and containment, wider Hamming radii."""
    return (t.hamming_high + t.hamming_low) / 16 - (t.jaccard_high + t.jaccard_low + t.containment_high)


def search(pairs: LabelledPairs, base: Thresholds, target: float,
           space: Sequence[Axis] = SEARCH) -> tuple[OperatingPoint, int]:
    """The operating point with the best pair recall at pair precision >= ``target`` (see the
    module docstring), and how many points were evaluated. :class:`NoOperatingPoint` when none
    reaches the target. ``space``: the parameters searched, with their bounds and steps (the rest
    keep ``base``'s values); every threshold search of neardup is this one, over its own space."""
    if not pairs.label.any() or pairs.label.all():
        raise NoOperatingPoint("the labelled pairs need both duplicates (label 1) and non-duplicates (label 0)",
                               hint="add pairs of the missing label")
    seen: dict[tuple[float, ...], tuple[tuple[Any, ...], OperatingPoint]] = {}

    def visit(v: Mapping[str, float]) -> None:
        key = tuple(v[s[0]] for s in SEARCH)
        if key in seen:
            return
        t = _thresholds(base, v)
        c = Counts.of(pairs.predict(t), pairs.label)
        ok = c.reaches(target)
        seen[key] = ((ok, c.recall if ok else c.precision, c.precision, -_distance(t, base)), OperatingPoint(t, c))

    def best(k: int) -> list[OperatingPoint]:
        return [op for _, op in sorted(seen.values(), key=lambda x: x[0], reverse=True)[:k]]

    def frontier(k: int) -> list[OperatingPoint]:
        # among equally good points the loosest ones border the gains: refined too, or ties broken
        # toward the configuration would keep the search away from them
        return [op for _, op in sorted(seen.values(), key=lambda x: (x[0][:2], _looseness(x[1].thresholds)),
                                       reverse=True)[:k]]

    for v in _coarse(space, searched(base)):
        visit(v)
    scale = 1.0
    while any(step * scale > fine + 1e-9 for *_, step, fine in space):
        scale /= 2
        for op in {id(op): op for op in [*best(KEEP), *frontier(KEEP)]}.values():
            for v in _around(searched(op.thresholds), scale, space):
                visit(v)
    top = best(1)[0]
    if not top.counts.reaches(target):
        raise NoOperatingPoint(
            f"no thresholds reach pair precision {target} on these {len(pairs)} pairs "
            f"(best {top.counts.precision:.4f} at recall {top.counts.recall:.4f})",
            hint="lower --target-precision, or check the labels")
    return top, len(seen)


def adaptive_band(pairs: LabelledPairs, point: OperatingPoint, target: float) -> tuple[float, float]:
    """(floor, ceiling) for the adaptive ``jaccard_high``: within :data:`BAND` of the calibrated
    value, and no lower than the lowest value (others fixed) that still reaches the target
    precision on the pairs, nor than ``jaccard_low``."""
    t = point.thresholds
    floor = t.jaccard_high
    step = 0.01
    while floor - step >= max(t.jaccard_low, t.jaccard_high - BAND) - 1e-9:
        lower = replace(t, jaccard_high=round(floor - step, 4))
        if not Counts.of(pairs.predict(lower), pairs.label).reaches(target):
            break
        floor = lower.jaccard_high
    return round(floor, 4), round(min(1.0, t.jaccard_high + BAND), 4)


# --------------------------------------------------------------------------- two folds
def component_halves(a: Sequence[str], b: Sequence[str], label: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Split pairs in two halves (True: the second) by connected component of the documents they
    link, so that no document is in both; components go, largest first, to the half that keeps
    the counts of duplicates and of non-duplicates closer to even."""
    uf = UnionFind([*a, *b])
    for x, y in zip(a, b, strict=True):
        uf.union(x, y)
    comp: dict[str, list[int]] = {}
    for p, x in enumerate(a):
        comp.setdefault(uf.find(x), []).append(p)
    half = np.zeros(len(a), dtype=bool)
    pos = [0, 0]
    neg = [0, 0]
    for members in sorted(comp.values(), key=lambda m: (-len(m), min(m))):
        dp = int(label[members].sum())
        dn = len(members) - dp
        side = min((0, 1), key=lambda s: (abs(pos[s] + dp - pos[1 - s]) + abs(neg[s] + dn - neg[1 - s]), s))
        pos[side] += dp
        neg[side] += dn
        half[members] = side == 1
    return half


@dataclass(frozen=True, slots=True)
class Fold:
    """Calibrated on one half, scored on the other."""

    calibrated_on: int
    chosen: OperatingPoint | None  # None: no point reaches the target on that half
    held_out: Counts | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"calibrated_on_pairs": self.calibrated_on,
                "thresholds": searched(self.chosen.thresholds) if self.chosen else None,
                "on_calibration_half": self.chosen.counts.to_dict() if self.chosen else None,
                "on_other_half": self.held_out.to_dict() if self.held_out else None, "note": self.note}


def two_fold(pairs: LabelledPairs, base: Thresholds, target: float) -> tuple[npt.NDArray[np.bool_], list[Fold]]:
    """The halves (see :func:`component_halves`) and, for each, the point chosen on it scored on the other."""
    half = component_halves(pairs.a, pairs.b, pairs.label)
    folds = []
    for side in (False, True):
        train, test = pairs.subset(half == side), pairs.subset(half != side)
        try:
            chosen, _ = search(train, base, target)
        except NoOperatingPoint as exc:
            folds.append(Fold(len(train), None, None, exc.args[0]))
            continue
        folds.append(Fold(len(train), chosen, Counts.of(test.predict(chosen.thresholds), test.label)))
    return half, folds


# --------------------------------------------------------------------------- input
def load_docs(path: Path, settings: Settings) -> list[Document]:
    """The documents of a JSONL, CSV or Parquet file, validated as ``dedup`` validates them; a bad
    record or a repeated id is an :class:`InputError` naming the line
    (:func:`neardup.files.records.read_documents`)."""
    return read_documents(path, settings.normalize)


def load_pairs(path: Path, ids: set[str]) -> list[Mapping[str, Any]]:
    """Labelled pairs ``{"a", "b", "label": 0|1, "kind"?}`` of a JSONL, CSV or Parquet file, each
    naming two different documents of ``ids``; anything else is an :class:`InputError` naming the
    line (:func:`neardup.files.records.read_pairs`)."""
    return list(read_pairs(path, ids))


# --------------------------------------------------------------------------- the settings file
def calibrated_settings(settings: Settings, point: OperatingPoint, band: tuple[float, float],
                        target: float) -> Settings:
    """``settings`` with the calibrated thresholds, the adaptive band and the target precision
    (validated as any settings are)."""
    t = point.thresholds
    th = ThresholdSettings.model_validate({
        **settings.thresholds.model_dump(), **searched(t), "target_precision": target,
        "adaptive_floor": band[0], "adaptive_ceiling": band[1],
        # the SimHash radius stays where it was calibrated (the adaptive one never leaves [floor, ceiling])
        "adaptive_hamming_floor": t.hamming_high, "adaptive_hamming_ceiling": t.hamming_high,
    })
    return settings.model_copy(update={"thresholds": th})


PINNED = ("normalize", "fingerprint", "index", "thresholds")  # what decides similarity and candidates


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    return json.dumps(str(v), ensure_ascii=False)  # JSON string escapes are TOML basic-string escapes


def settings_toml(settings: Settings, header: Sequence[str]) -> str:
    """The sections :data:`PINNED` of ``settings`` as TOML (unset optional values left out), after
    ``header`` as comment lines; checked to read back to the same values."""
    lines = [f"# {line}" for h in header for line in h.splitlines()]
    data = {name: getattr(settings, name).model_dump() for name in PINNED}
    for name, values in data.items():
        lines.append(f"\n[{name}]")
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in values.items() if v is not None)
    text = "\n".join(lines) + "\n"
    back = tomllib.loads(text)
    if any(back[name] != {k: v for k, v in data[name].items() if v is not None} for name in PINNED):
        raise RuntimeError("the calibrated settings do not read back as written")  # an invariant, not input
    return text


# --------------------------------------------------------------------------- ROC plots
def roc_plots(paths: Mapping[str, str], pairs: LabelledPairs, point: OperatingPoint) -> None:
    """ROC curves of the Hamming distance (SimHash) and of the Jaccard estimate (MinHash) alone,
    over the labelled pairs, with the calibrated thresholds and the whole rule marked; written as
    PNG to ``paths[name]`` for each name of :data:`ROC_FILES`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = point.thresholds
    pos, neg = pairs.label, ~pairs.label
    rule_fpr = float(pairs.predict(t)[neg].mean())
    rule_tpr = float(pairs.predict(t)[pos].mean())

    def rates(hit: npt.NDArray[np.bool_]) -> tuple[float, float]:
        return float(hit[neg].mean()), float(hit[pos].mean())

    Curve = tuple[str, str, list[float], Callable[[float], npt.NDArray[np.bool_]], list[tuple[str, float]]]
    curves: list[Curve] = [
        ("roc_simhash.png", "SimHash: Hamming distance <= d", list(range(-1, 65)), lambda d: pairs.hamming <= d,
         [(f"hamming_high = {t.hamming_high}", t.hamming_high), (f"hamming_low = {t.hamming_low}", t.hamming_low)]),
        ("roc_minhash.png", "MinHash: Jaccard estimate >= j",
         sorted({1.01, *pairs.jaccard.tolist(), 0.0}, reverse=True), lambda j: pairs.jaccard >= j,
         [(f"jaccard_high = {t.jaccard_high}", t.jaccard_high), (f"jaccard_low = {t.jaccard_low}", t.jaccard_low)]),
    ]
    for name, title, sweep, hit, marks in curves:
        pts = [rates(hit(x)) for x in sweep]
        fpr, tpr = [p[0] for p in pts], [p[1] for p in pts]
        fig, ax = plt.subplots(figsize=(5.5, 5.5))
        ax.plot(fpr, tpr, label=f"{title} (AUC {float(np.trapezoid(tpr, fpr)):.3f})")
        for (text, value), marker in zip(marks, ("o", "s"), strict=True):
            x, y = rates(hit(value))
            ax.scatter([x], [y], marker=marker, s=50, zorder=3, label=f"{text}: FPR {x:.3f}, recall {y:.3f}")
        ax.scatter([rule_fpr], [rule_tpr], marker="*", s=160, color="red", zorder=4,
                   label=f"calibrated rule: FPR {rule_fpr:.3f}, recall {rule_tpr:.3f}")
        ax.set_xlabel("false-positive rate (label-0 pairs)")
        ax.set_ylabel("recall (label-1 pairs)")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"{len(pairs)} labelled pairs")
        ax.legend(loc="lower right", fontsize=7)
        fig.tight_layout()
        fig.savefig(paths[name], dpi=110, format="png")
        plt.close(fig)


# --------------------------------------------------------------------------- the run
@dataclass(frozen=True, slots=True)
class Calibration:
    """Everything ``calibrate`` found."""

    target: float
    documents: int
    pairs: LabelledPairs
    point: OperatingPoint
    evaluated: int
    seconds: float
    band: tuple[float, float]
    settings: Settings
    halves: npt.NDArray[np.bool_]
    folds: list[Fold]
    dedup: Counts  # what dedup with the settings decides, pairs read through its clusters
    dedup_scores: Scores

    def to_dict(self) -> dict[str, Any]:
        """The figures, as ``calibration.json`` holds them."""
        p = self.pairs
        return {
            "target_precision": self.target, "documents": self.documents, "pairs": len(p),
            "duplicates": int(p.label.sum()), "non_duplicates": int((~p.label).sum()),
            "thresholds": searched(self.point.thresholds),
            "adaptive_floor": self.band[0], "adaptive_ceiling": self.band[1],
            "pairs_decided_alone": self.point.counts.to_dict(),
            "dedup": {**self.dedup.to_dict(), "edge_precision": round(self.dedup_scores.precision, 4),
                      "f1": round(self.dedup_scores.f1, 4)},
            "two_fold": [f.to_dict() for f in self.folds],
            "fold_sizes": [int((~self.halves).sum()), int(self.halves.sum())],
            "points_evaluated": self.evaluated, "search_seconds": round(self.seconds, 3),
        }


def cluster_counts(pairs: Sequence[Mapping[str, Any]], ids: Sequence[str],
                   duplicate_of: Mapping[str, str | None]) -> Counts:
    """The labelled pairs that decisions put in one cluster (``duplicate_of`` links, transitively)."""
    uf = UnionFind(ids)
    for i, t in duplicate_of.items():
        if t is not None and t in uf.parent:
            uf.union(i, t)
    merged = np.array([uf.find(p["a"]) == uf.find(p["b"]) for p in pairs], dtype=bool)
    return Counts.of(merged, np.array([p["label"] == 1 for p in pairs], dtype=bool))


async def run_calibration(settings: Settings, docs_path: Path, pairs_path: Path, target: float) -> Calibration:
    """Calibrate on the labelled pairs, then decide every document with the calibrated settings
    as ``dedup`` would (memory store, windows of ``window.max_count``) and score that too."""
    from neardup.engine import Engine, decide_all
    from neardup.learning.evaluate import pair_features

    settings = settings.model_copy(update={"store_url": "memory://"})
    docs = load_docs(docs_path, settings)
    raw_pairs = load_pairs(pairs_path, {d.id for d in docs})
    engine = await Engine.open(settings)
    try:
        pairs = LabelledPairs.of(raw_pairs, pair_features(engine, docs, raw_pairs))
    finally:
        await engine.close()
    base = Thresholds.from_settings(settings.thresholds)
    started = time.perf_counter()
    point, evaluated = search(pairs, base, target)
    seconds = time.perf_counter() - started
    halves, folds = two_fold(pairs, base, target)
    band = adaptive_band(pairs, point, target)
    calibrated = calibrated_settings(settings, point, band, target)
    engine = await Engine.open(calibrated)
    try:
        decisions = await decide_all(engine, docs, calibrated.window.max_count)
    finally:
        await engine.close()
    dup_of = {d.doc.id: d.duplicate_of for d in decisions}
    ids = [d.id for d in docs]
    return Calibration(target, len(docs), pairs, point, evaluated, seconds, band, calibrated, halves, folds,
                       cluster_counts(raw_pairs, ids, dup_of), score(ids, raw_pairs, dup_of))


def _counts_line(c: Counts) -> str:
    return (f"pair precision {c.precision:.4f}  pair recall {c.recall:.4f}  "
            f"(tp {c.tp}, fp {c.fp}, fn {c.positives - c.tp} of {c.positives + c.negatives} pairs)")


def _thresholds_line(t: Thresholds) -> str:
    return "  ".join(f"{k} {v}" for k, v in searched(t).items())


def report_lines(c: Calibration) -> list[str]:
    """What ``calibrate`` prints."""
    p = c.pairs
    lines = [
        f"documents {c.documents}  labelled pairs {len(p)} ({int(p.label.sum())} duplicate, "
        f"{int((~p.label).sum())} non-duplicate)  {c.evaluated} points searched in {c.seconds:.1f} s",
        f"chosen for pair precision >= {c.target}: {_thresholds_line(c.point.thresholds)}",
        f"  each pair decided alone (B after A): {_counts_line(c.point.counts)}",
        f"  dedup with these settings on these documents (pairs through its clusters): {_counts_line(c.dedup)}; "
        f"scorer's edge precision {c.dedup_scores.precision:.4f}, F1 {c.dedup_scores.f1:.4f}",
        f"  adaptive jaccard_high kept in [{c.band[0]}, {c.band[1]}]; SimHash radius fixed at "
        f"{c.point.thresholds.hamming_high}",
        f"two-fold (pairs split by connected component of documents: {int((~c.halves).sum())} / "
        f"{int(c.halves.sum())} pairs, no document in both halves):",
    ]
    for n, f in enumerate(c.folds, 1):
        if f.chosen is None or f.held_out is None:
            lines.append(f"  fold {n}: calibrated on {f.calibrated_on} pairs: {f.note}")
            continue
        lines.append(f"  fold {n}: calibrated on {f.calibrated_on} pairs -> {_thresholds_line(f.chosen.thresholds)}")
        lines.append(f"          on the other half: {_counts_line(f.held_out)}")
    return lines


def header_lines(c: Calibration, docs: str, pairs: str) -> list[str]:
    """The comment block of the written settings file."""
    return [
        "written by neardup calibrate: the rule's thresholds chosen by ROC on labelled pairs",
        f"documents {json.dumps(docs, ensure_ascii=False)}, pairs {json.dumps(pairs, ensure_ascii=False)}, "
        f"target pair precision {c.target}",
        f"each pair decided alone: {_counts_line(c.point.counts)}",
        f"dedup on those documents: {_counts_line(c.dedup)}",
        "the [normalize], [fingerprint] and [index] sections are the settings the thresholds were measured under",
        "NEARDUP_* variables still take precedence over this file",
    ]


# --------------------------------------------------------------------------- the command
@click.command("calibrate", short_help="Choose the rule's thresholds from labelled pairs.")
@click.option("--docs", required=True, metavar="DOCS", help="Documents (id, text): JSONL, CSV or Parquet.")
@click.option("--pairs", required=True, metavar="PAIRS",
              help='Labelled pairs, JSONL, CSV or Parquet: {"a": ID, "b": ID, "label": 0 or 1, "kind": optional}.')
@click.option("--target-precision", type=click.FloatRange(0.0, 1.0, min_open=True), metavar="P",
              help="Pair precision to reach (default: setting thresholds.target_precision, 0.99).")
@click.option("-o", "--output", required=True, metavar="CONFIG.toml",
              help="The settings file to write (for neardup dedup --config and the workers).")
@click.option("--report", metavar="DIR", help="Folder for the ROC curves (PNG) and calibration.json.")
@config_option
def calibrate_command(docs: str, pairs: str, target_precision: float | None, output: str, report: str | None,
                      config_path: str | None) -> None:
    """Choose the rule's thresholds from labelled pairs (ROC): the best pair recall at the target pair precision.

    Prints the chosen point, what dedup with it decides on DOCS, and a two-fold check (calibrated on
    one half of the pairs, scored on the other); writes CONFIG.toml and, with --report, the ROC
    curves of SimHash and MinHash with the chosen points marked.
    """
    if not output.endswith(".toml"):
        raise click.BadParameter("the settings file must end in .toml", param_hint="'-o' / '--output'")
    for path in (docs, pairs):
        check_readable(path)
    reads = [Named("--docs", docs), Named("--pairs", pairs), *([Named("--config", config_path)] if config_path else [])]
    extra = [Named("--report", str(Path(report) / name)) for name in REPORT_FILES] if report else []
    check_paths(reads, [Named("-o/--output", output), *extra])
    if report:
        require_extra("matplotlib", "plots", "calibrate --report (ROC plots)")
    settings = load_cli_settings(config_path, store_url="memory://")
    target = settings.thresholds.target_precision if target_precision is None else target_precision
    result = asyncio.run(run_calibration(settings, Path(docs), Path(pairs), target))
    outputs = {n.path: OutputFile(n.path) for n in [Named("-o/--output", output), *extra]}
    try:
        Path(outputs[output].target).write_text(settings_toml(result.settings, header_lines(result, docs, pairs)),
                                                encoding="utf-8")
        if report:
            targets = {name: outputs[str(Path(report) / name)].target for name in REPORT_FILES}
            roc_plots(targets, result.pairs, result.point)
            Path(targets["calibration.json"]).write_text(json.dumps(result.to_dict(), indent=1), encoding="utf-8")
        for out in outputs.values():
            out.commit()
    finally:
        for out in outputs.values():
            out.discard()
    click.echo("\n".join(report_lines(result)))
    click.echo(f"wrote {output}" + (f"; ROC curves and calibration.json in {report}" if report else ""))


__all__ = [
    "BAND",
    "REPORT_FILES",
    "SEARCH",
    "Axis",
    "Calibration",
    "Counts",
    "Fold",
    "LabelledPairs",
    "NoOperatingPoint",
    "OperatingPoint",
    "adaptive_band",
    "calibrate_command",
    "calibrated_settings",
    "cluster_counts",
    "component_halves",
    "header_lines",
    "load_docs",
    "load_pairs",
    "report_lines",
    "roc_plots",
    "run_calibration",
    "search",
    "searched",
    "settings_toml",
    "two_fold",
]
