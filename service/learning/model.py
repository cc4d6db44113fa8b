"""The learning loop: reviewers' judgements become a versioned model in the fingerprint store.

A :class:`Model` is what feedback changes, on top of the configured lexicon and thresholds:

- *polarity pairs*: in a pair judged "not a duplicate" that the engine merges, a word replaced by
  another in an otherwise equal passage (批准 -> 驳回, approved -> rejected) becomes a pair of
  opposite polarity words of a learned class (or the new word joins the class of the word it
  replaced, with the other sign), so the critical-difference check sees that clause reversed from
  then on; both words also weigh more in the SimHash (*heavier*);
- *lighter words*: words that only one side of a confirmed duplicate carries, in its added or
  removed lines, in at least ``min_support`` confirmed pairs (page furniture: 来源, 责任编辑, ...),
  weigh less in the SimHash;
- *thresholds*: re-calibrated over every labelled pair held (:func:`calibrate`), for the pair
  precision ``target_precision``.

The model is kept in the store as the state ``model`` (every worker and every batch run on that
store decides with the same version; a worker reads it with each window's lookup and adopts a new
version without a restart, and each decision's evidence names it) and, with its predecessors, as
``model-history`` (``neardup model show | history | rollback``). A batch of feedback is taken only
if the model it makes does not lower the pair F1 on the labels already held; otherwise it is
rejected with a message and nothing changes.

What feedback cannot change: documents already stored keep the fingerprints and profiles they were
stored with, so a learned word is an anchor for pairs whose later document was decided after it.
"""

from __future__ import annotations

import difflib
import json
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from neardup.document import Document
from neardup.text.lexicon import Lexicon, load_lexicon

if TYPE_CHECKING:
    from neardup.sketch.similarity import Sketch

MODEL_STATE = "model"
HISTORY_STATE = "model-history"
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|[0-9]+")
_HAN = re.compile(r"[\u4e00-\u9fff]")
MAX_REPLACED_CHARS = 4  # a learned polarity word is short: longer replacements are rewrites


@dataclass(frozen=True, slots=True)
class Label:
    """One labelled pair held by the model: ``b`` is (not) a near-duplicate of ``a``."""

    a: str
    b: str
    is_duplicate: bool


@dataclass(frozen=True)
class Model:
    """A learned model (see the module docstring); version 0 is "nothing learned yet"."""

    version: int = 0
    polarity: tuple[tuple[str, str, str], ...] = ()  # (word, class, sign)
    heavier: tuple[str, ...] = ()
    lighter: tuple[str, ...] = ()
    name_fields: tuple[str, ...] = ()  # words after which a template names someone (申请人), every content type
    # (content type, its field words): what reviewers taught, for the type their pairs were of
    type_name_fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    thresholds: dict[str, float] = field(default_factory=dict)  # ThresholdSettings field -> value
    labels: tuple[Label, ...] = ()
    parent: int = 0
    created_at: float = 0.0
    note: str = ""
    metrics: dict[str, float] = field(default_factory=dict)  # pair scores on the labels held

    def to_bytes(self) -> bytes:
        """The JSON payload stored as the ``model`` state."""
        data = asdict(self)
        data["labels"] = [[x.a, x.b, x.is_duplicate] for x in self.labels]
        data["type_name_fields"] = {t: list(words) for t, words in self.type_name_fields}
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> Model:
        """Inverse of :meth:`to_bytes`."""
        d = json.loads(data)
        return cls(
            version=int(d["version"]),
            polarity=tuple((str(w), str(c), str(s)) for w, c, s in d.get("polarity", [])),
            heavier=tuple(map(str, d.get("heavier", []))),
            lighter=tuple(map(str, d.get("lighter", []))),
            name_fields=tuple(map(str, d.get("name_fields", []))),
            type_name_fields=tuple((str(t), tuple(map(str, words)))
                                   for t, words in sorted(d.get("type_name_fields", {}).items())),
            thresholds={str(k): float(v) for k, v in d.get("thresholds", {}).items()},
            labels=tuple(Label(str(a), str(b), bool(y)) for a, b, y in d.get("labels", [])),
            parent=int(d.get("parent", 0)),
            created_at=float(d.get("created_at", 0.0)),
            note=str(d.get("note", "")),
            metrics={str(k): float(v) for k, v in d.get("metrics", {}).items()},
        )

    def name_fields_by_type(self) -> dict[str, tuple[str, ...]]:
        """Content type -> the field words taught for it (:attr:`name_fields` hold for every type)."""
        return dict(self.type_name_fields)

    def summary(self) -> dict[str, Any]:
        """What ``neardup model show`` prints (the labels by count only)."""
        return {"version": self.version, "parent": self.parent, "created_at": self.created_at, "note": self.note,
                "polarity_pairs": [list(p) for p in self.polarity], "heavier": list(self.heavier),
                "lighter": list(self.lighter), "name_fields": list(self.name_fields),
                "type_name_fields": dict(self.name_fields_by_type()), "thresholds": self.thresholds,
                "labels": {"duplicate": sum(x.is_duplicate for x in self.labels),
                           "not_duplicate": sum(not x.is_duplicate for x in self.labels)},
                "metrics": self.metrics}


def apply_to_lexicon(base: Lexicon, model: Model) -> Lexicon:
    """The configured lexicon with the model's words added."""
    if not (model.polarity or model.heavier or model.lighter):
        return base
    polarity = dict(base.polarity)
    for word, cls, sign in model.polarity:
        polarity.setdefault(word, (cls, sign))  # a configured word keeps its configured class
    return replace(base, polarity=polarity, decision=base.decision | frozenset(model.heavier),
                   template=(base.template | frozenset(model.lighter)) - frozenset(model.heavier))


# -- what a pair teaches ---------------------------------------------------------------------
def tokens(text: str) -> list[str]:
    """Words for diffing: jieba's words for Chinese, lower-case words otherwise."""
    if _HAN.search(text):
        from neardup.text.segment import segmenter

        return [t for t in segmenter().cut(text) if t.strip()]
    return _WORD.findall(text.lower())


@lru_cache(maxsize=64)
def word_diff(a: str, b: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, int, int, int, int], ...]]:
    """The words of ``a`` and ``b`` and the edits that turn one into the other (difflib's
    opcodes): one diff a pair, read by each lesson that a pair teaches (replaced words, name
    fields, furniture), not one diff each."""
    ta, tb = tokens(a), tokens(b)
    return tuple(ta), tuple(tb), tuple(difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes())


def replaced_words(a: str, b: str) -> list[tuple[str, str]]:
    """Single short words that ``b`` has where ``a`` has another, in otherwise equal passages."""
    ta, tb, edits = word_diff(a, b)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in edits:
        if op == "replace" and i2 - i1 == 1 and j2 - j1 == 1:
            x, y = ta[i1], tb[j1]
            if x != y and 0 < len(x) <= MAX_REPLACED_CHARS * (1 if _HAN.search(x) else 4) and \
                    0 < len(y) <= MAX_REPLACED_CHARS * (1 if _HAN.search(y) else 4) and \
                    not (x.isdigit() or y.isdigit()):
                out.append((x, y))
    return out


def one_sided_words(a: str, b: str) -> set[str]:
    """Words that one side of a pair inserts where the other has nothing (added page furniture:
    a source line, an editor's name, a share bar), from a word-level diff."""
    ta, tb, edits = word_diff(a, b)
    words: set[str] = set()
    for op, i1, i2, j1, j2 in edits:
        if op in ("insert", "delete"):
            words.update(t for t in (*ta[i1:i2], *tb[j1:j2]) if len(t) > 1 and not t.isdigit())
    return words


@dataclass(frozen=True, slots=True)
class Example:
    """A labelled pair with its texts and what the current model predicts for it."""

    a: Document
    b: Document
    is_duplicate: bool
    predicted: bool


MAX_LIGHTER = 200  # the most frequent furniture words of a batch; the rest is too rare to matter


def learn_words(model: Model, examples: Sequence[Example], min_support: int = 3,
                configured: Mapping[str, tuple[str, str]] | None = None) -> Model:
    """The model with the polarity pairs and word weights the examples teach.

    A replaced word whose partner already has a class (``configured``: the lexicon's polarity
    words; or learned before) joins that class with the opposite sign: 否决 for 核准 (approval+)
    is approval-. A polarity word's one-sided contexts include its class, so a reversal is seen
    only within one class."""
    polarity = {w: (c, s) for w, c, s in model.polarity}
    known = {**polarity, **(configured or {})}  # a configured word keeps its configured class
    classes = {c for _, c, _ in model.polarity}
    heavier = set(model.heavier)
    stop = load_lexicon().stopwords
    for x, y in _reversing_pairs(examples, min_support, stop):
        if x in known and y in known:
            continue
        if x in known or y in known:
            have, new = (x, y) if x in known else (y, x)
            cls, sign = known[have]
            polarity[new] = known[new] = (cls, "-" if sign == "+" else "+")
        else:
            cls = f"learned{len(classes) + 1}"
            classes.add(cls)
            polarity[x], polarity[y] = known[x], known[y] = (cls, "+"), (cls, "-")
        heavier.update((x, y))
    lighter = set(model.lighter) | _furniture_words(examples, min_support) - heavier
    return replace(model, polarity=tuple((w, c, s) for w, (c, s) in sorted(polarity.items())),
                   heavier=tuple(sorted(heavier)), lighter=tuple(sorted(lighter)),
                   type_name_fields=_typed_name_fields(model, examples, min_support, stop, set(known)))


def _typed_name_fields(model: Model, examples: Sequence[Example], min_support: int, stopwords: frozenset[str],
                       polar: set[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The model's field words per content type with those the examples of each type teach
    (:func:`_name_fields`, over the pairs of that type: an announcement's 申请人 says nothing of
    news)."""
    typed = {t: set(words) for t, words in model.type_name_fields}
    for content_type in sorted({ex.a.type for ex in examples if ex.a.type == ex.b.type}):
        same = [ex for ex in examples if ex.a.type == ex.b.type == content_type]
        typed.setdefault(content_type, set()).update(_name_fields(same, min_support, stopwords, polar))
    return tuple((t, tuple(sorted(words))) for t, words in sorted(typed.items()) if words)


def _name_fields(examples: Sequence[Example], min_support: int, stopwords: frozenset[str],
                 polar: set[str]) -> set[str]:
    """Words that stand before a replaced word in wrong merges of at least ``min_support``
    independent pairs: a template's field that names someone (申请人 X公司, 关于 X 的): the same
    notice about another company is a distinct document. A name itself is one pair's guess; the
    field is what recurs. Polarity words and what punctuation or a stop word precedes are left out."""
    fields: Counter[str] = Counter()
    for ex in examples:
        if ex.predicted and not ex.is_duplicate:
            fields.update(_fields_of(ex.a.text, ex.b.text, stopwords, polar))
    return {w for w, n in fields.items() if n >= min_support}


def _fields_of(a: str, b: str, stopwords: frozenset[str], polar: set[str]) -> set[str]:
    """The words right before each single word ``b`` replaced in ``a`` (not polarity words)."""
    ta, tb, edits = word_diff(a, b)
    out: set[str] = set()
    for op, i1, i2, j1, j2 in edits:
        if op != "replace" or i1 == 0 or i2 - i1 > 3 or j2 - j1 > 3:
            continue
        if any(w in polar for w in ta[i1:i2] + tb[j1:j2]):
            continue
        before = ta[i1 - 1]
        if _learnable(before, stopwords) and not before.isdigit():
            out.add(before)
    return out


def _reversing_pairs(examples: Sequence[Example], min_support: int,
                     stopwords: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """The word pairs replaced in wrong merges (a pair predicted duplicate that is not), sorted
    within each pair, the most frequent first: what was replaced reverses the meaning. A pair is
    learned only from ``min_support`` independent examples or more (one pair's word is a guess:
    、/并, 上海市/北京市), and never when a word is punctuation or a stop word."""
    pairs: Counter[tuple[str, str]] = Counter()
    for ex in examples:
        if ex.predicted and not ex.is_duplicate:
            pairs.update({tuple(sorted(p)) for p in replaced_words(ex.a.text, ex.b.text)  # type: ignore[misc]
                          if _learnable(p[0], stopwords) and _learnable(p[1], stopwords)})
    return [pair for pair, n in pairs.most_common() if n >= min_support]


def _learnable(word: str, stopwords: frozenset[str]) -> bool:
    """Whether ``word`` may become a polarity word: it has a letter or a digit and is no stop word."""
    return any(c.isalnum() for c in word) and word.lower() not in stopwords


def _furniture_words(examples: Sequence[Example], min_support: int) -> set[str]:
    """Words on one side only of true duplicates in at least ``min_support`` pairs (among the
    :data:`MAX_LIGHTER` most frequent): page furniture, not meaning."""
    furniture: Counter[str] = Counter()
    for ex in examples:
        if ex.is_duplicate:
            furniture.update(one_sided_words(ex.a.text, ex.b.text))
    return {w for w, n in furniture.most_common(MAX_LIGHTER) if n >= min_support}


# -- thresholds ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PairScores:
    """Pair-level scores of a prediction over labelled pairs."""

    precision: float
    recall: float
    f1: float
    false_merges: int
    missed: int

    def as_dict(self) -> dict[str, float]:
        """For the model's ``metrics``."""
        return {"pair_precision": round(self.precision, 4), "pair_recall": round(self.recall, 4),
                "pair_f1": round(self.f1, 4)}


def pair_scores(predicted: Iterable[bool], labels: Iterable[bool]) -> PairScores:
    """Precision, recall and F1 of pair predictions (:func:`neardup.learning.scoring.prf`: the
    development set's scorer's definitions)."""
    from neardup.learning.scoring import prf

    p = np.fromiter(predicted, dtype=bool)
    y = np.fromiter(labels, dtype=bool)
    tp, fp, fn = int((p & y).sum()), int((p & ~y).sum()), int((~p & y).sum())
    return PairScores(*prf(tp, tp + fp, tp + fn), fp, fn)


# the learning loop's threshold search: Jaccard only, in a band around the configured rule (labels
# held are few next to the stream, and looser thresholds than these let related regulations
# through, measured two-fold); (name, lowest, highest, coarse step, finest step)
LEARNED_SPACE = (("jaccard_high", 0.60, 0.90, 0.05, 0.05), ("jaccard_low", 0.35, 0.90, 0.05, 0.05))


def calibrate(features: Mapping[str, np.ndarray], base: Mapping[str, float],
              target_precision: float) -> dict[str, float]:
    """Jaccard thresholds with the best pair recall at ``target_precision``, from the engine's own
    pair features (:func:`neardup.learning.evaluate.pair_features` or :func:`stored_features`), by
    :func:`neardup.learning.calibrate.search` over :data:`LEARNED_SPACE`; empty (keep ``base``)
    when none reaches it or the labels are of one kind only."""
    from neardup.learning.calibrate import LabelledPairs, NoOperatingPoint, search
    from neardup.rules.policy import Thresholds

    t0 = Thresholds(base["jaccard_high"], base["jaccard_low"], int(base["hamming_high"]), int(base["hamming_low"]),
                    base["containment_high"], int(base["short_text_chars"]), base["reversal_margin"])
    try:
        point, _ = search(LabelledPairs.from_features(features), t0, target_precision, LEARNED_SPACE)
    except NoOperatingPoint:
        return {}
    return {"jaccard_high": point.thresholds.jaccard_high, "jaccard_low": point.thresholds.jaccard_low}


__all__ = ["HISTORY_STATE", "MODEL_STATE", "Example", "Label", "Model", "PairScores", "apply_to_lexicon",
           "calibrate", "learn_words", "one_sided_words", "overturned_labels", "pair_scores", "replaced_words"]


# -- the loop: feedback in, a new model version out ------------------------------------------------
@dataclass(frozen=True, slots=True)
class Outcome:
    """What a batch of feedback did: the version written (or why none), and the scores."""

    accepted: bool
    version: int
    message: str
    before: dict[str, float]
    after: dict[str, float]
    labels_new: int
    labels_held: int
    overturned: int = 0  # labels held before the batch that it judged the other way (replaced)
    guarded: int = 0  # labels held before the batch that ``before`` and ``after`` score
    metrics: dict[str, float] = field(default_factory=dict)  # the model in force after the batch, as model show
    out_of_fold_before: dict[str, float] = field(default_factory=dict)  # the labels held, each fold by the model
    out_of_fold_after: dict[str, float] = field(default_factory=dict)  # ... by what the other folds teach


def labels_from_feedback(records: Iterable[Any], decisions: Mapping[str, Any]) -> tuple[list[Label], list[str]]:
    """Labels from feedback records; a decision judged is turned into a pair with the document it
    was decided against (its original, or its nearest candidate for a unique one). Returns the
    labels and one line per record that could not be used."""
    from neardup.decision import Status
    from neardup.learning.feedback import DecisionFeedback, PairFeedback

    out: list[Label] = []
    skipped: list[str] = []
    for rec in records:
        if isinstance(rec, PairFeedback):
            out.append(Label(rec.a, rec.b, rec.is_duplicate))
        elif isinstance(rec, DecisionFeedback):
            d = decisions.get(rec.id)
            if d is None:
                skipped.append(f"{rec.id}: no stored decision")
                continue
            evidence = json.loads(d.evidence)
            other = d.duplicate_of or evidence.get("matched_id")
            if not other:
                skipped.append(f"{rec.id}: decided unique with no candidate to judge against")
                continue
            was_duplicate = Status(d.status) is Status.DUPLICATE
            out.append(Label(other, rec.id, was_duplicate == rec.correct))
    return out, skipped


def _pair_key(x: Label) -> tuple[str, str]:
    return (x.a, x.b) if x.a <= x.b else (x.b, x.a)


def overturned_labels(held: Sequence[Label], new: Sequence[Label]) -> int:
    """How many ``held`` labels ``new`` judges the other way (the same pair, in either order; the
    batch's last record on a pair counts): :func:`merge_labels` replaces them."""
    before = {_pair_key(x): x.is_duplicate for x in held}
    after = {_pair_key(x): x.is_duplicate for x in new}
    return sum(1 for key, label in after.items() if key in before and before[key] != label)


def merge_labels(held: Sequence[Label], new: Sequence[Label]) -> tuple[Label, ...]:
    """Held labels with the new ones; a later judgement of a pair supersedes an earlier one."""
    by_pair: dict[tuple[str, str], Label] = {}
    for x in (*held, *new):
        by_pair[_pair_key(x)] = x
    return tuple(by_pair.values())


async def predict(settings: Any, model: Model, labels: Sequence[Label],
                  docs: Mapping[str, Document]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The engine's pair features and predictions under ``model`` (a scratch engine, memory store)."""
    from neardup.engine import Engine
    from neardup.learning.calibrate import LabelledPairs
    from neardup.learning.evaluate import pair_features
    from neardup.storage.memory import MemoryFingerprintStore

    engine = Engine(settings.model_copy(update={"store_url": "memory://"}), MemoryFingerprintStore())
    if model.version or model.polarity or model.thresholds or model.name_fields or model.type_name_fields:
        engine.apply_model(model)
    used = [x for x in labels if x.a in docs and x.b in docs]
    ids = sorted({i for x in used for i in (x.a, x.b)})
    if not used:
        return {}, np.zeros(0, dtype=bool)
    feats = pair_features(engine, [docs[i] for i in ids],
                          [{"a": x.a, "b": x.b, "label": int(x.is_duplicate)} for x in used])
    return feats, LabelledPairs.from_features(feats).predict(engine.thresholds.for_type("default"))


OUT_OF_FOLD = 3  # folds of the labels held that a batch is validated on


def label_folds(labels: Sequence[Label], k: int = OUT_OF_FOLD) -> list[int]:
    """The fold of each label: labels that share a document stay in one fold (a pair learned from
    must not leak into the pairs it is tested on through a common text), the groups dealt to the
    folds in turn in the order of their first label."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for x in labels:
        parent[root(x.a)] = root(x.b)
    fold_of: dict[str, int] = {}
    out = []
    for x in labels:
        group = root(x.a)
        if group not in fold_of:
            fold_of[group] = len(fold_of) % k
        out.append(fold_of[group])
    return out


async def _learned(settings: Any, model: Model, examples: Sequence[Example], calibrate_on: Sequence[Label],
                   docs: Mapping[str, Document], target_precision: float) -> Model:
    """``model`` with the words of ``examples`` and thresholds re-calibrated on ``calibrate_on``."""
    configured = load_lexicon(settings.fingerprint.domain_weights_path).polarity
    candidate = learn_words(model, examples, configured=configured)
    feats, _ = await predict(settings, candidate, calibrate_on, docs)
    if feats:
        base = settings.thresholds.model_copy(update=model.thresholds).model_dump()
        candidate = replace(candidate, thresholds={**model.thresholds, **calibrate(feats, base, target_precision)})
    return candidate


async def out_of_fold(settings: Any, model: Model, taught: Sequence[tuple[Label, Example]], held: Sequence[Label],
                      docs: Mapping[str, Document], target_precision: float,
                      k: int = OUT_OF_FOLD) -> tuple[PairScores, PairScores]:
    """Pair scores on every label held, each fold decided by ``model`` and by what learning
    would make of the other folds (their words, their thresholds): the batch judged on pairs it
    did not learn from."""
    usable = [x for x in held if x.a in docs and x.b in docs]
    folds = label_folds(usable, k)
    truth: list[bool] = []
    before: list[bool] = []
    after: list[bool] = []
    for f in range(k):
        test = [x for x, g in zip(usable, folds, strict=True) if g == f]
        if not test:
            continue
        train = [x for x, g in zip(usable, folds, strict=True) if g != f]
        train_keys = {_pair_key(x) for x in train}
        examples = [e for x, e in taught if _pair_key(x) in train_keys]
        candidate = await _learned(settings, model, examples, train, docs, target_precision)
        _, b = await predict(settings, model, test, docs)
        _, a = await predict(settings, candidate, test, docs)
        truth += [x.is_duplicate for x in test]
        before += b.tolist()
        after += a.tolist()
    return pair_scores(before, truth), pair_scores(after, truth)


async def learn(settings: Any, model: Model, new: Sequence[Label], docs: Mapping[str, Document],
                target_precision: float = 0.99) -> tuple[Model, Outcome]:
    """The next model from ``new`` labels: words from the new pairs, thresholds re-calibrated on
    every label held, and two guards: the labels held before must not be decided worse, and
    out of fold (:func:`out_of_fold`) the batch must not lower the pair F1 of the labels held."""
    held = merge_labels(model.labels, new)
    fresh = [x for x in new if x.a in docs and x.b in docs]
    _, predicted_new = await predict(settings, model, fresh, docs)
    taught = [(x, Example(docs[x.a], docs[x.b], x.is_duplicate, bool(p)))
              for x, p in zip(fresh, predicted_new.tolist(), strict=True)]
    usable_held = [x for x in held if x.a in docs and x.b in docs]
    candidate = await _learned(settings, model, [e for _, e in taught], usable_held, docs, target_precision)
    # the guard: the labels held before this batch must not be decided worse than they were
    usable = [x for x in model.labels if x.a in docs and x.b in docs]
    _, before = await predict(settings, model, usable, docs)
    _, after = await predict(settings, candidate, usable, docs)
    truth = [x.is_duplicate for x in usable]
    s_before, s_after = pair_scores(before.tolist(), truth), pair_scores(after.tolist(), truth)
    oof_before, oof_after = await out_of_fold(settings, model, taught, held, docs, target_precision)
    _, on_all = await predict(settings, candidate, usable_held, docs)
    candidate = replace(candidate, version=model.version + 1, parent=model.version, labels=held,
                        created_at=round(time.time(), 3),
                        metrics=pair_scores(on_all.tolist(), [x.is_duplicate for x in usable_held]).as_dict())
    flipped = overturned_labels(model.labels, new)
    message = (f"model v{candidate.version}: pair F1 {s_before.f1:.4f} -> {s_after.f1:.4f} on the {len(usable)} "
               f"labels held before, {oof_before.f1:.4f} -> {oof_after.f1:.4f} out of fold, "
               f"{candidate.metrics['pair_f1']:.4f} on all {len(held)}; "
               f"{len(candidate.polarity) - len(model.polarity)} polarity words, "
               f"{len(candidate.lighter) - len(model.lighter)} lighter words"
               + (f"; {flipped} label(s) held overturned by this batch" if flipped else ""))
    accepted = s_after.f1 >= s_before.f1 - 1e-12 and oof_after.f1 >= oof_before.f1 - 1e-12
    if s_after.f1 < s_before.f1 - 1e-12:
        message = (f"feedback rejected: it would lower the pair F1 on the {len(usable)} labels held from "
                   f"{s_before.f1:.4f} to {s_after.f1:.4f}; nothing was changed")
    elif not accepted:
        message = (f"feedback rejected: out of fold ({OUT_OF_FOLD} folds of the {len(usable_held)} labels held, "
                   f"each decided by what the others teach) it would lower the pair F1 from {oof_before.f1:.4f} "
                   f"to {oof_after.f1:.4f}; nothing was changed")
    return candidate, Outcome(accepted, candidate.version if accepted else model.version, message,
                              s_before.as_dict(), s_after.as_dict(), len(new), len(held), flipped, len(usable),
                              candidate.metrics if accepted else model.metrics,
                              oof_before.as_dict(), oof_after.as_dict())


async def read_model(store: Any) -> tuple[Model, list[dict[str, Any]]]:
    """The store's current model (version 0 when none) and its history (oldest first)."""
    from neardup.storage import WindowQuery

    states = (await store.lookup(WindowQuery(state_names=[MODEL_STATE, HISTORY_STATE]))).states
    model = Model.from_bytes(states[MODEL_STATE].payload) if MODEL_STATE in states else Model()
    history = json.loads(states[HISTORY_STATE].payload) if HISTORY_STATE in states else []
    return model, history


async def write_model(store: Any, model: Model, history: list[dict[str, Any]]) -> bool:
    """Make ``model`` the store's current one (compare-and-set on its version) and record it."""
    from neardup.storage import StateValue

    if not await store.write_state(MODEL_STATE, StateValue(model.version, model.to_bytes())):
        return False
    entry = {**model.summary(), "payload": model.to_bytes().decode()}
    new_history = [*history, entry]
    await store.write_state(HISTORY_STATE, StateValue(len(new_history), json.dumps(new_history).encode()))
    return True


# -- the service's path: labels judged on the fingerprints the store already holds ---------------
async def stored_features(settings: Any, store: Any, labels: Sequence[Label]) -> tuple[list[Label], dict[str, Any]]:
    """Pair features of labelled pairs from the records in ``store`` (no texts needed): the
    engine's similarity and its critical-difference and version checks on the stored profiles."""
    from neardup.sketch.similarity import SketchTable, similarities
    from neardup.storage import doc_ref

    ids = sorted({i for x in labels for i in (x.a, x.b)})
    records = await store.fetch([doc_ref(i) for i in ids])
    fp = settings.fingerprint
    sketches = _readable_sketches(records.values(), fp)
    used = [x for x in labels if x.a in sketches and x.b in sketches]
    if not used:
        return [], {}
    order = sorted({i for x in used for i in (x.a, x.b)})
    row = {i: n for n, i in enumerate(order)}
    table = SketchTable.of([sketches[i] for i in order], fp.num_perm, 2 if fp.simhash_bits == 128 else 1)
    a = np.array([row[x.a] for x in used], dtype=np.int64)
    b = np.array([row[x.b] for x in used], dtype=np.int64)
    sims = similarities(table, b, a)
    critical = np.array([_critical_pair(sketches[x.a], sketches[x.b]) for x in used], dtype=bool)
    return used, {"jaccard": sims.jaccard, "hamming": sims.hamming.astype(np.float64),
                  "containment": sims.containment, "comparable": sims.comparable, "critical": critical,
                  "label": np.array([int(x.is_duplicate) for x in used])}


def _readable_sketches(records: Iterable[Any], fp: Any) -> dict[str, Sketch]:
    """doc id -> the sketch of each stored record that reads with the fingerprint settings ``fp``."""
    from neardup.sketch.similarity import Sketch

    sketches: dict[str, Sketch] = {}
    for rec in records:
        try:
            sketch = Sketch.from_record(rec, fp.seed, fp.num_perm, fp.minhash_family)
        except ValueError:
            continue
        if sketch.decodes():  # the critical check reads every profile
            sketches[rec.doc_id] = sketch
    return sketches


def _critical_pair(a: Sketch, b: Sketch) -> bool:
    """The engine's veto on stored sketches: different versions, or a replaced context in the profiles."""
    from neardup.kernels.profile import replaced_context
    from neardup.rules.versions import different_versions

    if different_versions(a.marks, b.marks):
        return True
    return len(a.profile) > 0 and len(b.profile) > 0 and int(replaced_context(b.profile, a.profile)) >= 0


async def learn_thresholds_from_store(settings: Any, store: Any, model: Model, new: Sequence[Label],
                                      target_precision: float = 0.99) -> tuple[Model, Outcome]:
    """The next model from labels the service received (the ``feedback`` topic): thresholds
    re-calibrated on the stored fingerprints of every pair held, with the same harm guard as
    :func:`learn`. Words are learned only by ``neardup feedback --docs`` (they need the texts)."""
    from neardup.learning.calibrate import LabelledPairs
    from neardup.rules.policy import Thresholds

    held = merge_labels(model.labels, new)
    used, feats = await stored_features(settings, store, held)
    if not used:
        return model, Outcome(False, model.version, "no labelled pair has both documents in the store",
                              {}, {}, len(new), len(held), metrics=model.metrics)
    base = settings.thresholds.model_copy(update=model.thresholds)
    candidate = replace(model, thresholds={**model.thresholds,
                                           **calibrate(feats, base.model_dump(), target_precision)})
    old_keys = {_pair_key(x) for x in model.labels}
    mask = np.array([_pair_key(x) in old_keys for x in used], dtype=bool)
    truth = feats["label"] == 1
    pairs = LabelledPairs.from_features(feats)

    def predicted(m: Model) -> np.ndarray:
        return pairs.predict(Thresholds.from_settings(settings.thresholds.model_copy(update=m.thresholds)))

    s_before = pair_scores(predicted(model)[mask].tolist(), truth[mask].tolist())
    s_after = pair_scores(predicted(candidate)[mask].tolist(), truth[mask].tolist())
    # out of fold: each fold's thresholds calibrated on the other folds' pairs only
    folds = np.array(label_folds(used), dtype=np.int64)
    oof = np.zeros(len(used), dtype=bool)
    for f in np.unique(folds).tolist():
        train = {k: v[folds != f] for k, v in feats.items()}
        fold_model = replace(model, thresholds={**model.thresholds,
                                                **calibrate(train, base.model_dump(), target_precision)})
        oof[folds == f] = predicted(fold_model)[folds == f]
    oof_before, oof_after = pair_scores(predicted(model).tolist(), truth.tolist()), pair_scores(oof.tolist(),
                                                                                             truth.tolist())
    accepted = s_after.f1 >= s_before.f1 - 1e-12 and oof_after.f1 >= oof_before.f1 - 1e-12
    candidate = replace(candidate, version=model.version + 1, parent=model.version, labels=held,
                        created_at=round(time.time(), 3),
                        metrics=pair_scores(predicted(candidate).tolist(), truth.tolist()).as_dict())
    if accepted:
        message = f"model v{candidate.version}: thresholds {candidate.thresholds} from {len(used)} stored pairs"
    elif s_after.f1 < s_before.f1 - 1e-12:
        message = f"feedback rejected: pair F1 on the labels held would fall from {s_before.f1:.4f} to {s_after.f1:.4f}"
    else:
        message = (f"feedback rejected: out of fold the pair F1 of the labels held would fall from "
                   f"{oof_before.f1:.4f} to {oof_after.f1:.4f}")
    return candidate, Outcome(accepted, candidate.version if accepted else model.version, message,
                              s_before.as_dict(), s_after.as_dict(), len(new), len(held),
                              overturned_labels(model.labels, new), int(mask.sum()),
                              candidate.metrics if accepted else model.metrics,
                              oof_before.as_dict(), oof_after.as_dict())
