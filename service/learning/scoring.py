"""Pair metrics over a labelled set (the definitions of the development set's scorer):
edge precision, pair recall through predicted clusters, F1, hard-negative merge rate, per kind."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


class UnionFind:
    """Disjoint sets of ids (path halving), for clusters of duplicates."""
    def __init__(self, items: Iterable[str]) -> None:
        """Every item starts in a set of its own."""
        self.parent = {x: x for x in items}

    def find(self, x: str) -> str:
        """The representative of ``x``'s set."""
        p = self.parent
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a: str, b: str) -> None:
        """Merge the sets of ``a`` and ``b``."""
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb


def ratio(part: int, whole: int) -> float:
    """``part / whole``, 0 when ``whole`` is 0: precision is 0 when nothing is predicted and recall 0
    when nothing is gold, as the development set's scorer (``../shared/datasets/score.py``) has it."""
    return part / whole if whole else 0.0


def f1_score(precision: float, recall: float) -> float:
    """The harmonic mean of precision and recall (0 when both are 0)."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def prf(tp: int, predicted: int, gold: int) -> tuple[float, float, float]:
    """Precision, recall and F1 of ``tp`` hits among ``predicted`` against ``gold`` (the scorer's
    ``prf``). Every pair score of neardup is computed with these definitions."""
    precision, recall = ratio(tp, predicted), ratio(tp, gold)
    return precision, recall, f1_score(precision, recall)


@dataclass(slots=True)
class Scores:
    """Pair precision, recall and F1 of predicted clusters against gold ones, per pair kind too."""
    precision: float
    recall: float
    f1: float
    hard_negative_fpr: float
    predicted_edges: int
    true_edges: int
    per_kind: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The scores as a JSON-able mapping."""
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "hard_negative_fpr": self.hard_negative_fpr, "predicted_edges": self.predicted_edges,
                "true_edges": self.true_edges, "per_kind": self.per_kind}


def score(ids: Sequence[str], pairs: Sequence[Mapping[str, Any]], duplicate_of: Mapping[str, str | None]) -> Scores:
    """Score ``duplicate_of`` (id -> original or None) against labelled ``pairs`` over ``ids``, as clusters."""
    gold = UnionFind(ids)
    for p in pairs:
        if p["label"] == 1:
            gold.union(p["a"], p["b"])
    pred = UnionFind(ids)
    edges: set[tuple[str, str]] = set()
    for i, t in duplicate_of.items():
        if t is None or t == i or i not in pred.parent or t not in pred.parent:
            continue
        e = (min(i, t), max(i, t))
        if e not in edges:
            edges.add(e)
            pred.union(i, t)
    true_edges = sum(1 for x, y in edges if gold.find(x) == gold.find(y))
    by_kind: dict[tuple[int, str], list[bool]] = defaultdict(list)
    pos_hits: list[bool] = []
    neg_hits: list[bool] = []
    for p in pairs:
        hit = pred.find(p["a"]) == pred.find(p["b"])
        by_kind[(p["label"], p["kind"])].append(hit)
        (pos_hits if p["label"] == 1 else neg_hits).append(hit)
    precision = ratio(true_edges, len(edges))
    recall = ratio(sum(pos_hits), len(pos_hits))  # through predicted clusters, not edges
    f1 = f1_score(precision, recall)
    per_kind: dict[str, dict[str, Any]] = {}
    for (label, kind), hits in sorted(by_kind.items(), key=lambda x: (-x[0][0], x[0][1])):
        per_kind[kind] = {"label": label, "pairs": len(hits),
                          "recall" if label == 1 else "fpr": sum(hits) / len(hits)}
    return Scores(precision, recall, f1, ratio(sum(neg_hits), len(neg_hits)),
                  len(edges), true_edges, per_kind)
