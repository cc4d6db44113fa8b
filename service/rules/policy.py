"""The decision policy: the hybrid rule, the veto chain, and the pure decision of a window.

A candidate pair is *similar* when any of these holds (first match names the rule):

1. ``jaccard``:     J >= jaccard_high
2. ``simhash``:     Hamming <= hamming_high  and  J >= jaccard_low / 2
3. ``hybrid``:      J >= jaccard_low  and  Hamming <= hamming_low
4. ``containment``: C >= containment_high  and  J >= jaccard_low / 2

(J, Hamming, C: :mod:`neardup.sketch.similarity`.) Containment catches truncations and excerpts, the
SimHash rules catch edits that move many shingles but few weighted words (synonyms). SimHash and
containment never decide alone: each needs half the low Jaccard, so a shared template cannot make
two different documents duplicates.

A similar pair is a duplicate unless a veto of the chain below stops it; the chain runs over a
document's similar candidates from the most similar down. Of the candidates that pass every veto,
the document joins the cluster most of them belong to, through its most similar member there
(*most carried*): a copy of the part two versions share (a truncated reprint of a story whose
other copy flipped a word further on) goes with the version more copies carry, not with whichever
sketch came out a hair more similar. The vetoes:

1. *short text*: either text is shorter than ``short_text_chars`` normalised characters and the
   contents differ (a 40-character notice has too few shingles for an estimate): skip it;
2. *critical difference* (:mod:`neardup.rules.differences`): the pair shares a clause whose polarity,
   figure or name was replaced (不予批准 / 给予批准, a changed amount, figures that traded places,
   another company named everywhere): skip it, and remember it;
   Two versions of one regulation (different version marks, :mod:`neardup.rules.versions`) count as a
   critical difference too;
3. *reversal nearer*: a skipped critical candidate is nearer than this one by more than
   ``reversal_margin``: stop. The nearest document says the opposite; a much looser match must not
   pull this reversal into that document's cluster through a third one. Nearness is the larger of
   J and C: a truncated copy holds about half the shingles of its original (J near 0.5) but lies
   all inside it, and is as near as a flip of the original; by J alone an original whose flip came
   before it could never join its own cut copy;
4. *cluster conflict*: this candidate belongs to the cluster of a critical candidate (it is that
   candidate, its cluster's original, or a member of the same cluster) that is more similar by
   more than ``cluster_margin`` (default -1: any critical candidate, however similar): skip it.
   Joining it would put this document in one cluster with a document it contradicts, through a
   third document that shares neither side of the contradiction (a truncated reprint, an
   excerpt). A record names its cluster's original, not the document it matched, so a chain
   (a flip, a truncated copy that joined it, a sentence-deleted copy that joined that) is one
   cluster to this test.

:func:`decide_window` applies all of it to a whole window at once. It is a pure function of the
window's sketches, its candidates and the thresholds: no I/O, testable without a store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from neardup.config.settings import ThresholdSettings
from neardup.decision import CriticalEvidence, ImageEvidence, Reason, Rule, Status
from neardup.rules.differences import Profile, sentence_contexts_of
from neardup.rules.versions import different_versions
from neardup.sketch.similarity import PairSimilarities, Similarity, Sketch, SketchTable, similarities

RULES: tuple[Rule | None, ...] = (None, Rule.JACCARD, Rule.SIMHASH, Rule.HYBRID, Rule.CONTAINMENT, Rule.EXCERPT)
EXCERPT_CODE = RULES.index(Rule.EXCERPT)
EXCERPT_SHARED = 2  # an excerpt shares at least this many whole sentences with its article
# below this containment estimate no pair is looked at as an excerpt: the estimate is rough at an
# excerpt's Jaccard, but a part of an article is never this far from it (bench/excerpts.py)
EXCERPT_MIN_CONTAINMENT = 0.3
# one whole sentence shared makes an excerpt when the containment estimate says the text is a
# part: a true part of 150-400 characters estimates 0.5-0.6 at an excerpt's Jaccard (0.05), a
# boilerplate sentence beside unrelated text far less (bench/excerpts.py: 187 -> 189 of 200
# middle passages at 0.5 instead of containment_high, nothing else changed on any quality set)
EXCERPT_ONE_SENTENCE = 0.5


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The rule's thresholds in force for one window; ``version`` names the shared adaptive state
    they came from (0: the configured values)."""

    jaccard_high: float
    jaccard_low: float
    hamming_high: int
    hamming_low: int
    containment_high: float
    short_text_chars: int
    reversal_margin: float
    cluster_margin: float = -1.0
    version: int = 0
    excerpt_sentences: float = 0.8
    excerpt_min_chars: int = 100

    @classmethod
    def from_settings(cls, t: ThresholdSettings) -> Thresholds:
        """The configured thresholds (version 0)."""
        return cls(t.jaccard_high, t.jaccard_low, t.hamming_high, t.hamming_low, t.containment_high,
                   t.short_text_chars, t.reversal_margin, t.cluster_margin,
                   excerpt_sentences=t.excerpt_sentences, excerpt_min_chars=t.excerpt_min_chars)

    def as_evidence(self) -> dict[str, float | int]:
        """The thresholds as every decision's evidence shows them."""
        return {
            "jaccard_high": round(self.jaccard_high, 4),
            "jaccard_low": self.jaccard_low,
            "hamming_high": self.hamming_high,
            "hamming_low": self.hamming_low,
            "containment_high": self.containment_high,
            "short_text_chars": self.short_text_chars,
        }


def rule_codes(j: npt.NDArray[np.float64], h: npt.NDArray[np.int64], c: npt.NDArray[np.float64],
               t: Thresholds) -> npt.NDArray[np.int8]:
    """Index into :data:`RULES` of the first rule each pair meets (0: none), vectorised."""
    half_low = t.jaccard_low / 2
    out = np.zeros(j.shape[0], dtype=np.int8)
    cases = (
        (4, (c >= t.containment_high) & (j >= half_low)),
        (3, (j >= t.jaccard_low) & (h <= t.hamming_low)),
        (2, (h <= t.hamming_high) & (j >= half_low)),
        (1, j >= t.jaccard_high),
    )
    for code, hit in cases:  # last assignment wins: the first rule in the docstring's order
        out[hit] = code
    return out


def rule(sim: Similarity, t: Thresholds) -> Rule | None:
    """The rule one pair meets (the same code path as the window's)."""
    code = rule_codes(np.array([sim.jaccard]), np.array([sim.hamming]), np.array([sim.containment]), t)
    return RULES[int(code[0])]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The pure core's answer for one document (the engine adds window, worker and time)."""

    status: Status
    reason: Reason
    rule: Rule | None = None
    matched: str | None = None
    similarity: Similarity | None = None
    candidates: int = 0
    critical: CriticalEvidence | None = None
    race: bool = False  # set by the engine's race re-check, never by the pure core
    cluster: str | None = None  # the original of the cluster joined: the match's own original, or the match
    cosine: float | None = None  # set by the engine's translation check, never by the pure core
    image: ImageEvidence | None = None  # set by the image rule (neardup.rules.images), never by the pure core


@dataclass(slots=True)
class WindowCase:
    """Everything :func:`decide_window` needs.

    Rows ``0 .. n-1`` of ``table`` are the window's documents in decision order (earlier
    ``published_at`` first: the earlier one is the original); the other rows are candidates from
    the hot tier and the store. ``pairs`` are (window row, candidate row); a window row may be the
    candidate of a later window row. ``stored_owner[i]``: the id that holds row i's content hash in
    the store, if the engine looked it up.
    """

    table: SketchTable
    n: int
    profiles: Sequence[Profile]
    pairs: npt.NDArray[np.int64]  # (k, 2)
    stored_owner: Sequence[str | None]
    counters: dict[str, int] = field(default_factory=dict)  # vetoes applied, by name (metrics)


def decide_window(case: WindowCase, thresholds: Thresholds | Sequence[Thresholds]) -> list[Verdict]:
    """Decide every document of a window: exact copies first, then near-duplicates, vetoes applied.

    ``thresholds``: one for the whole window, or one per window row (by its content type).
    """
    per_row = [thresholds] * case.n if isinstance(thresholds, Thresholds) else list(thresholds)
    exact_of = _exact_owners(case)
    pairs = case.pairs
    if pairs.shape[0]:
        # an exact copy is decided already, and is nobody's original (b past the window: a stored one)
        exact = np.fromiter((e is not None for e in exact_of), dtype=np.bool_, count=case.n)
        a, b = pairs[:, 0], pairs[:, 1]
        in_window = b < case.n
        pairs = pairs[~exact[a] & ~(in_window & exact[np.where(in_window, b, 0)])]
    sims = similarities(case.table, pairs[:, 0], pairs[:, 1])
    codes = _codes_per_row(sims, per_row)
    _drop_undecodable(case, sims, codes)
    _excerpts(case, sims, codes, per_row)
    _count(case, "language", int((~sims.comparable).sum()))
    by_row = _group(pairs[:, 0], case.n)
    verdicts: list[Verdict] = []
    for i in range(case.n):
        owner = exact_of[i]
        if owner is not None:
            verdicts.append(Verdict(Status.DUPLICATE, Reason.EXACT, Rule.EXACT, owner, Similarity(1.0, 0, 1.0), 1))
            continue
        idx = by_row[i]
        v = _near(case, i, idx, sims, codes, per_row[i]) if idx.size else Verdict(Status.UNIQUE, Reason.UNIQUE)
        if v.status is Status.DUPLICATE and v.matched:
            case.table.sketches[i].original = v.cluster or v.matched  # a later row of this window sees its cluster
        verdicts.append(v)
    return verdicts


def _drop_undecodable(case: WindowCase, sims: PairSimilarities, codes: npt.NDArray[np.int8]) -> None:
    """Make incomparable, in place, the pairs whose stored candidate's profile the rules would
    read (a rule met, or an excerpt's containment) but which does not decode: compared with
    nothing, as a record of another format. Stored profiles are decoded here, on first need."""
    need = np.flatnonzero(sims.comparable & ((codes > 0) | (sims.containment >= EXCERPT_MIN_CONTAINMENT)))
    sketches = case.table.sketches
    bad = [p for p in need.tolist() if int(sims.right[p]) >= case.n and not sketches[int(sims.right[p])].decodes()]
    if bad:
        sims.comparable[bad] = False
        codes[bad] = 0
        _count(case, "format", len(bad))


def _codes_per_row(sims: PairSimilarities, per_row: Sequence[Thresholds]) -> npt.NDArray[np.int8]:
    """Rule codes of every pair under the thresholds of its deciding row; 0 for incomparable pairs."""
    codes = np.zeros(sims.left.shape[0], dtype=np.int8)
    distinct = {t: None for t in per_row}
    rows_thr = np.array([list(distinct).index(t) for t in per_row], dtype=np.int64) if len(distinct) > 1 else None
    for n, t in enumerate(distinct):
        mask = slice(None) if rows_thr is None else rows_thr[sims.left] == n
        codes[mask] = rule_codes(sims.jaccard[mask], sims.hamming[mask], sims.containment[mask], t)
    codes[~sims.comparable] = 0
    return codes


def _excerpts(case: WindowCase, sims: PairSimilarities, codes: npt.NDArray[np.int8],
              per_row: Sequence[Thresholds]) -> None:
    """Mark, in ``codes``, the pairs no other rule met where the deciding row is an excerpt of the
    candidate: the shorter text, at least ``excerpt_min_chars`` long, whose sentences stand whole
    in the longer one (:func:`excerpt_share` at least ``excerpt_sentences``, and
    :data:`EXCERPT_SHARED` of them, or one with a containment of at least :data:`EXCERPT_ONE_SENTENCE`).
    Sentences are compared by their profile entries' contexts (the whole sentence's frame), which
    every stored record keeps: a far better account of a 15 % containment than the MinHash
    estimate, whose error at such a Jaccard is as large as the value."""
    sketches = case.table.sketches
    lengths = np.fromiter((s.length for s in sketches), dtype=np.int64, count=len(sketches))
    min_chars = np.array([t.excerpt_min_chars for t in per_row], dtype=np.int64)
    left, right = lengths[sims.left], lengths[sims.right]
    # only the shorter text of a pair no other rule met, long enough, can be an excerpt
    candidate = (codes == 0) & sims.comparable & (sims.containment >= EXCERPT_MIN_CONTAINMENT)
    open_pairs = np.flatnonzero(candidate & (left < right) & (left >= min_chars[sims.left])).tolist()
    theirs: dict[int, set[int]] = {}  # candidate row -> its sentence contexts, made once a window
    mine: dict[int, list[int]] = {}  # window row -> its sentence contexts in text order
    for p in open_pairs:
        i, c = int(sims.left[p]), int(sims.right[p])
        if i not in mine:
            mine[i] = case.profiles[i].sentence_contexts()
        if not mine[i]:  # one whole sentence may do (below): a lead cut inside its second
            continue
        if c not in theirs:
            theirs[c] = sentence_contexts_of(sketches[c].profile)
        shared, share = excerpt_share(mine[i], theirs[c])
        t = per_row[i]
        # one whole sentence shared is enough when the shingles agree it is a part (a lead of one
        # long sentence cut inside the next): a boilerplate sentence alone is not
        enough = shared >= EXCERPT_SHARED or (shared >= 1 and sims.containment[p] >= EXCERPT_ONE_SENTENCE)
        if enough and share >= t.excerpt_sentences:
            codes[p] = EXCERPT_CODE


def excerpt_share(sentences: list[int], article: set[int]) -> tuple[int, float]:
    """(how many of ``sentences``, in text order, stand in ``article``; their share) where a
    first or last sentence the article lacks does not count: a page cuts a passage inside its
    edge sentences. An excerpt has every other sentence in the article; a text that mixes it
    with another has half."""
    lo, hi = 0, len(sentences)
    if hi and sentences[0] not in article:
        lo = 1
    if hi > lo and sentences[hi - 1] not in article:
        hi -= 1
    inner = sentences[lo:hi]
    shared = sum(1 for x in inner if x in article)
    return shared, shared / len(inner) if inner else 0.0


def _exact_owners(case: WindowCase) -> list[str | None]:
    """Per window row: the id it exactly copies (stored owner, else the first earlier row with the
    same content), or None when it is the first of its content."""
    sketches = case.table.sketches
    first_row: dict[bytes, int] = {}
    out: list[str | None] = []
    for i in range(case.n):
        s = sketches[i]
        owner = case.stored_owner[i]
        if owner is not None and owner != s.doc_id:
            out.append(owner)
            continue
        earlier = first_row.setdefault(s.content_hash, i)
        out.append(sketches[earlier].doc_id if earlier != i else None)
    return out


def _group(rows: npt.NDArray[np.int64], n: int) -> list[npt.NDArray[np.int64]]:
    """Pair indices per window row."""
    order = np.argsort(rows, kind="stable")
    bounds = np.searchsorted(rows[order], np.arange(n + 1))
    return [order[bounds[i]:bounds[i + 1]] for i in range(n)]


def _count(case: WindowCase, name: str, k: int = 1) -> None:
    if k:
        case.counters[name] = case.counters.get(name, 0) + k


def _near(case: WindowCase, i: int, idx: npt.NDArray[np.int64], sims: PairSimilarities,
          codes: npt.NDArray[np.int8], t: Thresholds) -> Verdict:
    """The veto chain over row ``i``'s similar candidates, most similar first."""
    sketches = case.table.sketches
    comparable = idx[sims.comparable[idx]]
    similar = comparable[codes[comparable] > 0]
    _count(case, "similarity", int(comparable.size - similar.size))
    order = sorted(similar.tolist(), key=lambda p: (-sims.jaccard[p], sims.hamming[p], sketches[sims.right[p]].doc_id))
    conflicts = _conflicts(case, i, order, sims)
    passed = _passing(case, sketches[i], order, sims, conflicts, t)
    if passed:
        p = _most_carried([sketches[int(sims.right[q])] for q in passed], passed)
        cand = sketches[int(sims.right[p])]
        return Verdict(Status.DUPLICATE, Reason.NEAR, RULES[int(codes[p])], cand.doc_id, sims.at(p), int(idx.size),
                       cluster=cand.original or cand.doc_id)
    best = None
    if comparable.size:
        b = int(comparable[np.argmax(sims.jaccard[comparable])])
        best = (sketches[int(sims.right[b])].doc_id, sims.at(b))
    first = next(iter(conflicts), None)
    return Verdict(Status.UNIQUE, Reason.CRITICAL if conflicts else Reason.UNIQUE, None,
                   best[0] if best else None, best[1] if best else None, int(idx.size),
                   conflicts[first] if first is not None else None)


def _conflicts(case: WindowCase, i: int, order: list[int], sims: PairSimilarities) -> dict[int, CriticalEvidence]:
    """The candidates (in ``order``) that differ critically from row ``i``, with their evidence."""
    conflicts: dict[int, CriticalEvidence] = {}
    for p in order:
        found = _conflict(case, i, case.table.sketches[int(sims.right[p])], sims.at(p))
        if found is not None:
            _count(case, "critical" if found.kind != "version" else "version")
            conflicts[p] = found
    return conflicts


def _passing(case: WindowCase, me: Sketch, order: list[int], sims: PairSimilarities,
             conflicts: dict[int, CriticalEvidence], t: Thresholds) -> list[int]:
    """The candidates (in ``order``) the vetoes let through: not too short, not conflicting, not
    much farther than a conflicting one, and not in a conflicting candidate's cluster."""
    sketches = case.table.sketches
    # the clusters a conflicting candidate belongs to: this document must not join them either
    conflicting = {c for p in conflicts for c in _cluster(sketches[int(sims.right[p])])}
    first = next(iter(conflicts), None)
    nearness = np.maximum(sims.jaccard, sims.containment)
    passed: list[int] = []
    for p in order:
        cand = sketches[int(sims.right[p])]
        if min(me.length, cand.length) < t.short_text_chars and cand.content_hash != me.content_hash:
            _count(case, "short_text")
            continue
        if p in conflicts:
            continue
        if first is not None and nearness[first] - nearness[p] > t.reversal_margin:
            _count(case, "reversal_nearer")
            break
        if conflicting & set(_cluster(cand)) and sims.jaccard[first] - sims.jaccard[p] > t.cluster_margin:
            _count(case, "cluster_conflict")
            continue
        passed.append(p)
    return passed


def _most_carried(cands: list[Sketch], passed: list[int]) -> int:
    """Of the candidates that passed the vetoes (most similar first), the most similar one of the
    cluster that most of them belong to (a cluster is named by its original)."""
    roots = [c.original or c.doc_id for c in cands]
    votes = Counter(roots)
    return passed[max(range(len(cands)), key=lambda k: votes[roots[k]])]  # max keeps the first of the most


def _cluster(s: Sketch) -> tuple[str, ...]:
    """The ids that name a candidate's cluster: itself and the original it joined."""
    return (s.doc_id, s.original) if s.original else (s.doc_id,)


def _conflict(case: WindowCase, i: int, cand: Sketch, sim: Similarity) -> CriticalEvidence | None:
    """A critical difference between row ``i`` and ``cand``: a replaced polarity or figure in a
    shared clause, or another version of the same regulation (different version marks)."""
    me = case.table.sketches[i]
    if different_versions(me.marks, cand.marks):
        return CriticalEvidence("version", "", "version marks differ", cand.doc_id, sim.jaccard, sim.hamming)
    diff = case.profiles[i].critical_against(cand.profile, cand.profile_version, jaccard=sim.jaccard,
                                             their_length=cand.length)
    if diff is None:
        return None
    ev = diff.as_evidence()
    return CriticalEvidence(str(ev["kind"]), str(ev["passage"]), str(ev["term"]), cand.doc_id, sim.jaccard,
                            sim.hamming, normalized_span=(diff.start, diff.end) if diff.start >= 0 else None)


def similar_candidates(table: SketchTable, row: int, candidates: Sequence[int], profile: Profile,
                       t: Thresholds) -> list[tuple[int, Similarity, Rule]]:
    """Candidate rows similar to ``row`` with no critical difference, most similar first (the race
    re-check after a store insert applies the same rule and the same critical-difference veto)."""
    if not candidates:
        return []
    right = np.asarray(candidates, dtype=np.int64)
    sims = similarities(table, np.full(right.shape[0], row, dtype=np.int64), right)
    codes = _codes_per_row(sims, [t])
    out = []
    for p in np.argsort(-sims.jaccard, kind="stable").tolist():
        cand = table.sketches[int(right[p])]
        jaccard = float(sims.jaccard[p])
        if codes[p] and cand.decodes() and profile.critical_against(cand.profile, cand.profile_version,
                                                                    jaccard=jaccard, their_length=cand.length) is None:
            out.append((int(right[p]), sims.at(p), RULES[int(codes[p])] or Rule.JACCARD))
    return out


__all__ = ["RULES", "Thresholds", "Verdict", "WindowCase", "decide_window", "rule", "rule_codes",
           "similar_candidates"]
