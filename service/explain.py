"""``neardup explain A B``: everything behind one pair's decision, computed afresh.

Besides the engine's own similarity, rule, critical difference and decision, the report takes the
SimHash apart. Each document's features are rebuilt in Python from the same tokens, the same
64-bit token hashes, the same weight table and the same negation features the kernel uses
(:mod:`neardup.kernels.simhash`), and each distinct feature votes ``w * (1 + ln tf)`` in the
kernel's fixed point (1/1024) on every bit. The sums give the SimHash back bit for bit (the
report says whether they did: ``recomputed_equals_engine``), so for every bit on which the two
documents differ the vote difference ``vote_A - vote_B`` splits exactly into one signed share per
feature: ``sign(feature, bit) * (vote of the feature in A - its vote in B)``. The features with
the largest shares are the words that pushed that bit apart; features that weigh the same on
both sides contribute nothing.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.config.settings import Settings
from neardup.document import Document, parse_document
from neardup.engine import Engine
from neardup.kernels import text as ktext
from neardup.kernels.hashing import combine, fmix64
from neardup.kernels.profile import replaced_context
from neardup.kernels.simhash import HI_SALT, NEG_SALT
from neardup.media.hashes import DocumentImage, ImageRadii, format_hash, hamming, limits_of, radii_of
from neardup.rules.differences import CriticalDifference, Profile, is_sentence_fill, polarity_words, shown_term
from neardup.rules.policy import rule
from neardup.sketch.fingerprint import FingerprintConfig, Fingerprinter, _zh_token_spans
from neardup.sketch.similarity import SketchTable, similarities
from neardup.text.language import Tokenizer, tokenizer_of
from neardup.text.lexicon import NEGATOR_FLAG, hash_words
from neardup.text.normalize import original_span

VOTE_SCALE = 1024.0  # the kernel's fixed point: votes are integers in 1/1024 of a weight unit
TOP_TOKENS = 15
TOP_PUSHERS = 5  # features listed per differing bit
SHINGLE_EXAMPLES = 10
MAX_CRITICAL = 20


@dataclass(frozen=True, slots=True)
class Feature:
    """One distinct SimHash feature of a document, as the kernel weighs it."""

    hash: int
    label: str  # the token, or "negator+token" for a negation feature
    weight: float  # the table weight (times the negation weight for a negation feature)
    tf: int
    vote: int  # round(weight * (1 + ln tf) * 1024), what the kernel adds or subtracts per bit


@dataclass(slots=True)
class FeatureVotes:
    """A document's features and their signed votes per SimHash bit."""

    features: list[Feature]
    signs: npt.NDArray[np.int64]  # (features, 64 * words): +1 where the feature's hash bit is 1, else -1
    words: int

    @property
    def votes(self) -> npt.NDArray[np.int64]:
        """The vote of each feature (fixed point)."""
        return np.array([f.vote for f in self.features], dtype=np.int64)

    @property
    def totals(self) -> npt.NDArray[np.int64]:
        """The kernel's accumulator: the summed signed votes per bit."""
        if not self.features:
            return np.zeros(64 * self.words, dtype=np.int64)
        out: npt.NDArray[np.int64] = self.votes @ self.signs
        return out

    def simhash(self) -> npt.NDArray[np.uint64]:
        """The SimHash these votes give: bit set where the total is positive."""
        on = self.totals > 0
        out = np.zeros(self.words, dtype=np.uint64)
        for wd in range(self.words):
            for bit in np.flatnonzero(on[wd * 64 : (wd + 1) * 64]).tolist():
                out[wd] |= np.uint64(1) << np.uint64(bit)
        return out


def _hash_bits(hashes: list[int], words: int) -> npt.NDArray[np.int64]:
    """+1/-1 per (feature, bit); the second word of a 128-bit SimHash reads fmix64(h ^ HI_SALT)."""
    cols = []
    for wd in range(words):
        hh = np.array([h if wd == 0 else fmix64(np.uint64(h) ^ HI_SALT) for h in hashes], dtype=np.uint64)
        bits = (hh[:, None] >> np.arange(64, dtype=np.uint64)[None, :]) & np.uint64(1)
        cols.append(bits.astype(np.int64) * 2 - 1)
    return np.concatenate(cols, axis=1) if hashes else np.zeros((0, 64 * words), dtype=np.int64)


def tokens(fingerprinter: Fingerprinter, text: str, lang: str) -> list[str]:
    """The tokens the fingerprinter hashes for one normalised ``text``: jieba words with a letter
    or digit for Chinese, character bigrams for the languages read as characters (Japanese,
    Korean, ...), maximal runs of non-CJK letters and digits otherwise."""
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint32)
    offsets = np.array([0, cps.shape[0]], dtype=np.int64)
    classes = fingerprinter.classes
    tokenizer = tokenizer_of(lang)
    if tokenizer is Tokenizer.CHARACTERS:
        starts, ends, _ = ktext.char_bigram_spans(cps, offsets, classes)
    elif tokenizer is Tokenizer.CHINESE:
        if fingerprinter.config.segment_hmm:
            starts, ends, off = _zh_token_spans([text], offsets, True)
        else:
            starts, ends, off = fingerprinter.segmenter.spans(cps, offsets)
        starts, ends, _ = ktext.keep_word_spans(cps, starts, ends, off, classes)
    else:
        starts, ends, _ = ktext.word_spans(cps, offsets, classes)
    return [text[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]


def feature_votes(fingerprinter: Fingerprinter, text: str, lang: str) -> FeatureVotes:
    """The SimHash features of one normalised ``text`` with the kernel's weights and votes.

    The kernel's steps, in Python: each token's weight from the table (the default weight for a
    token it lacks); a token of weight 0 is no feature; a weighted token right after a negator
    adds the feature ``combine(hash, NEG_SALT)`` with ``weight * negation_weight``; equal
    features merge, keeping the first weight and counting tf.
    """
    table = fingerprinter.weights
    toks = tokens(fingerprinter, text, lang)
    hashes = hash_words(toks)
    if len(table.keys):
        idx = np.minimum(np.searchsorted(table.keys, hashes), len(table.keys) - 1)
        found = table.keys[idx] == hashes
        weights = np.where(found, table.weights[idx], table.default_weight)
        flags = np.where(found, table.flags[idx], 0)
    else:
        weights = np.full(len(toks), table.default_weight)
        flags = np.zeros(len(toks), dtype=np.uint8)
    merged: dict[int, list[Any]] = {}  # hash -> [label, weight, tf], first occurrence order

    def emit(h: int, label: str, weight: float) -> None:
        entry = merged.setdefault(h, [label, weight, 0])
        entry[2] += 1

    prev_neg = False
    for k, (tok, h, w) in enumerate(zip(toks, hashes.tolist(), weights.tolist(), strict=True)):
        if w > 0.0:
            emit(h, tok, w)
            if prev_neg:
                emit(combine(np.uint64(h), NEG_SALT), f"{toks[k - 1]}+{tok}", w * table.negation_weight)
        prev_neg = bool(int(flags[k]) & NEGATOR_FLAG)
    features = [Feature(h, label, w, tf, round(w * (1.0 + math.log(tf)) * VOTE_SCALE))
                for h, (label, w, tf) in merged.items()]
    return FeatureVotes(features, _hash_bits([f.hash for f in features], fingerprinter.words), fingerprinter.words)


@dataclass(frozen=True, slots=True)
class Push:
    """One feature's share of a bit's vote difference (A minus B), in weight units."""

    feature: str
    delta: float
    side: str  # "a", "b" or "both" (present in both with another vote)


@dataclass(frozen=True, slots=True)
class BitAttribution:
    """One differing SimHash bit: both totals and the features that pushed it apart."""

    bit: int
    a: int
    b: int
    vote_a: float
    vote_b: float
    pushed_by: list[Push]

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"bit": self.bit, "a": self.a, "b": self.b, "vote_a": self.vote_a, "vote_b": self.vote_b,
                "pushed_by": [{"feature": p.feature, "delta": p.delta, "side": p.side} for p in self.pushed_by]}


def bit_attribution(fa: FeatureVotes, fb: FeatureVotes, top: int = TOP_PUSHERS) -> list[BitAttribution]:
    """For every bit where the two recomputed SimHashes differ, the ``top`` features with the
    largest share of ``vote_A - vote_B`` (signed: positive pulls A's bit up relative to B's)."""
    index: dict[int, int] = {}
    labels: list[str] = []
    for f in [*fa.features, *fb.features]:
        if f.hash not in index:
            index[f.hash] = len(labels)
            labels.append(f.label)
    n = len(labels)
    va = np.zeros(n, dtype=np.int64)
    vb = np.zeros(n, dtype=np.int64)
    for f in fa.features:
        va[index[f.hash]] = f.vote
    for f in fb.features:
        vb[index[f.hash]] = f.vote
    signs = _hash_bits(list(index), fa.words)
    in_a = np.zeros(n, dtype=bool)
    in_a[[index[f.hash] for f in fa.features]] = True
    in_b = np.zeros(n, dtype=bool)
    in_b[[index[f.hash] for f in fb.features]] = True
    ta, tb = fa.totals, fb.totals
    out: list[BitAttribution] = []
    for bit in np.flatnonzero((ta > 0) != (tb > 0)).tolist():
        share = signs[:, bit] * (va - vb)
        order = [k for k in np.argsort(-np.abs(share), kind="stable")[:top].tolist() if share[k] != 0]
        pushes = [Push(labels[k], round(int(share[k]) / VOTE_SCALE, 3),
                       "both" if in_a[k] and in_b[k] else "a" if in_a[k] else "b") for k in order]
        out.append(BitAttribution(bit, int(ta[bit] > 0), int(tb[bit] > 0), round(int(ta[bit]) / VOTE_SCALE, 3),
                                  round(int(tb[bit]) / VOTE_SCALE, 3), pushes))
    return out


def shingles(fingerprinter: Fingerprinter, text: str, lang: str) -> set[str]:
    """The distinct shingles the MinHash of one normalised ``text`` is over, as text: k-grams of
    its letters and digits for the languages read as characters (Chinese, Japanese, ...), k-grams
    of its tokens otherwise (one shingle of all of them when there are fewer than k)."""
    cfg = fingerprinter.config
    if tokenizer_of(lang) is not Tokenizer.WORDS:
        classes = fingerprinter.classes
        units = [c for c in text if ord(c) >= classes.shape[0] or classes[ord(c)] & ktext.ALNUM]
        k, sep = cfg.zh_shingle, ""
    else:
        units = tokens(fingerprinter, text, lang)
        k, sep = cfg.en_shingle, " "
    if not units:
        return set()
    if len(units) < k:
        return {sep.join(units)}
    return {sep.join(units[i : i + k]) for i in range(len(units) - k + 1)}


def critical_differences(mine: Profile, theirs: npt.NDArray[np.uint64]) -> list[CriticalDifference]:
    """Every shared context whose fills were replaced, by the engine's own test (the kernel's
    :func:`replaced_context` and :meth:`Profile.critical_against`, which stop at the first): after
    each one found, that context's entries leave both profiles and the test runs again (entries of
    different contexts never cancel each other, so the others are found as the engine would). A
    polarity word's two one-sided entries are one difference: both leave ``mine`` together. A
    sentence's negator count (v4) is listed only when no word differs: it is there for the negations
    the word lists miss, and a flipped word changes its sentence's count too."""
    found: list[CriticalDifference] = []
    words = ~mine.sentence_mask()
    if not words.all():
        first = mine.critical_against(theirs)
        if first is not None and not is_sentence_fill(first.fill):
            mine = mine.keep(words)
    while len(found) < MAX_CRITICAL and len(mine.entries) and len(theirs):
        i = int(replaced_context(mine.entries, theirs))
        diff = mine.critical_against(theirs)
        if i < 0 or diff is None:
            break
        found.append(diff)
        ctx = mine.entries[i] >> np.uint64(16)
        mine = mine.keep(((mine.entries >> np.uint64(16)) != ctx) & (np.asarray(mine.positions) != mine.positions[i]))
        theirs = theirs[(theirs >> np.uint64(16)) != ctx]
    return found


def _versus(diff: CriticalDifference, mine: Profile, other: Profile) -> str:
    """What ``other`` has where ``mine`` has the difference ``diff`` (both texts are at hand):
    "不予批准 vs 给予批准", "980 vs 1200"; "" when the other's entry cannot be found."""
    if diff.swapped_with or is_sentence_fill(diff.fill):
        return ""
    ctx = next((int(e) >> 16 for e, fill, at in zip(mine.entries, mine.fills, mine.positions, strict=True)
                if fill == diff.fill and diff.start <= int(at) < diff.end), -1)
    for e, fill, at in zip(other.entries, other.fills, other.positions, strict=True):
        if int(e) >> 16 == ctx and fill != diff.fill:
            theirs = (polarity_words(other.text, int(at)) if diff.kind == "polarity"
                      else shown_term(fill.lstrip("N ").lstrip("#@")))
            return f"{diff.words or shown_term(diff.fill.lstrip('N ').lstrip('#@'))} vs {theirs}"
    return ""


def _difference(diff: CriticalDifference, mine: Profile, other: Profile, text: str,
                config: FingerprintConfig) -> dict[str, Any]:
    """A difference as the report gives it: the evidence's fields, the passage quoted from
    ``text`` (B as given) with its offsets there where they can be traced, and, where the other
    text's side is found, both sides in words ("polarity: 不予批准 vs 给予批准")."""
    out: dict[str, Any] = dict(diff.as_evidence())
    span = original_span(text, diff.start, diff.end, t2s=config.t2s, html_strip=config.strip_html)
    if span is not None:
        out["passage"], out["at"] = text[span[0] : span[1]], list(span)
    versus = _versus(diff, mine, other)
    if versus:
        out["versus"] = f"{diff.kind}: {versus}"
    return out


def _side(fps: Any, row: int, doc_id: str, votes: FeatureVotes) -> dict[str, Any]:
    recomputed = votes.simhash()
    top = sorted(votes.features, key=lambda f: -f.weight)[:TOP_TOKENS]
    return {
        "id": doc_id, "lang": fps.langs[row], "chars": fps.lengths[row], "shingles": int(fps.shingle_counts[row]),
        "simhash": [f"{int(x):016x}" for x in fps.simhash[row]],
        "top_weighted_tokens": [(f.label, round(f.weight, 3)) for f in top],
        "features": len(votes.features),
        "recomputed_simhash": [f"{int(x):016x}" for x in recomputed],
    }


async def explain_pair(settings: Settings, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Explain the pair (a, b) with a fresh engine on an in-memory store (see :func:`explain_with`)."""
    engine = await Engine.open(settings.model_copy(update={"store_url": "memory://"}))
    try:
        return await explain_with(engine, a, b)
    finally:
        await engine.close()


async def explain_with(engine: Engine, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Everything behind B's decision when A came first, with the numbers the engine uses: the
    same sketches (b-bit signatures as stored), the same :func:`neardup.sketch.similarity.similarities`,
    the same rule and veto, and the SimHash votes rebuilt from the kernel's features (see the
    module docstring). ``engine`` should be on an empty in-memory store (B is decided after A)."""
    limits = limits_of(engine.settings.images)
    da = parse_document(a, image_limits=limits)
    db = parse_document(b, image_limits=limits)
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
    fper = engine.fingerprinter
    va = feature_votes(fper, fp.texts[0], fp.langs[0])
    vb = feature_votes(fper, fp.texts[1], fp.langs[1])
    sa = shingles(fper, fp.texts[0], fp.langs[0])
    sb = shingles(fper, fp.texts[1], fp.langs[1])
    mine = w.profiles[1].compared_at(sim.jaccard)
    found = [_difference(d, mine, w.profiles[0], db.text, fper.config)
             for d in critical_differences(mine, w.profiles[0].entries)]
    await engine.decide([da])
    decision = await engine.check(db)
    side_a, side_b = _side(fp, 0, da.id, va), _side(fp, 1, db.id, vb)
    return {
        "a": side_a,
        "b": side_b,
        "exact_shingle_jaccard": round(len(sa & sb) / max(1, len(sa | sb)), 4),
        "shared_shingles": len(sa & sb),
        "shared_shingle_examples": sorted(sa & sb)[:SHINGLE_EXAMPLES],
        "differing_shingles": {"only_a": len(sa - sb), "only_b": len(sb - sa),
                               "examples_a": sorted(sa - sb)[:SHINGLE_EXAMPLES],
                               "examples_b": sorted(sb - sa)[:SHINGLE_EXAMPLES]},
        "jaccard_estimate": sim.jaccard,
        "signature_bits": int(table.bits.min()),
        "hamming": sim.hamming,
        "differing_simhash_bits": diff_bits,
        "simhash_attribution": {
            "recomputed_equals_engine": side_a["recomputed_simhash"] == side_a["simhash"]
            and side_b["recomputed_simhash"] == side_b["simhash"],
            "vote_unit": "weight x (1 + ln tf), summed with the sign of the feature's hash bit",
            "bits": [x.to_dict() for x in bit_attribution(va, vb)],
        },
        "containment": sim.containment,
        "comparable": bool(sims.comparable[0]),
        "rule": rule(sim, thresholds) if sims.comparable[0] else None,
        "critical_difference": found[0] if found else None,
        "critical_differences": found,
        "thresholds": thresholds.as_evidence(),
        "decision_for_b_after_a": {"status": decision.status.value, "duplicate_of": decision.duplicate_of,
                                   "evidence": decision.evidence.to_dict()},
        "images": image_report(da, db, radii_of(engine.settings.images)),
    }


def _image(image: DocumentImage) -> dict[str, Any]:
    h = image.hashes
    return {"index": image.index, "phash": h.phash_hex, "dhash": format_hash(h.dhash) if h.dhash is not None else None,
            "width": h.width, "height": h.height, "structure": h.structure, "url": image.url}


def image_report(da: Document, db: Document, radii: ImageRadii) -> dict[str, Any] | None:
    """Each side's images (hashes, size, structure, url) and the ones not used, and the nearest
    pair of images of A and B in pHash bits as the image rule measures B after A (B's whole pHash
    within the pair's radius or one of its views within its views' radius of A's whole pHash,
    :meth:`~neardup.media.hashes.ImageRadii.of`; the whole pHashes' distance when neither), the
    whole pHashes' own distance and dHash bits too; None when neither document carries images."""
    if not (da.images or db.images or da.images_rejected or db.images_rejected):
        return None
    pairs = []
    for x in da.images:
        for y in db.images:
            radius, view_radius = radii.of(y.hashes.structure, x.hashes.structure)
            match = y.hashes.match_bits(x.hashes.phash, radius, view_radius, radii.corners(view_radius))
            pairs.append((hamming(x.hashes.phash, y.hashes.phash) if match is None else match, match is None,
                          x.index, y.index, x, y, radius, view_radius))
    nearest = None
    if pairs:
        bits, beyond, ia, ib, x, y, radius, view_radius = min(pairs, key=lambda p: (p[1], p[0], p[2], p[3]))
        dh = hamming(x.hashes.dhash, y.hashes.dhash) if x.hashes.dhash is not None and y.hashes.dhash is not None \
            else None
        nearest = {"a_image": ia, "b_image": ib, "phash_hamming": bits,
                   "whole_phash_hamming": hamming(x.hashes.phash, y.hashes.phash), "dhash_hamming": dh,
                   "radius": radius, "view_radius": view_radius, "within_radius": not beyond}
    return {"a": [_image(i) for i in da.images], "b": [_image(i) for i in db.images],
            "a_rejected": [r.to_dict() for r in da.images_rejected],
            "b_rejected": [r.to_dict() for r in db.images_rejected], "nearest": nearest}


def _pushes(bit: dict[str, Any]) -> str:
    return ", ".join(f"{p['feature']} {p['delta']:+.2f} ({p['side']})" for p in bit["pushed_by"]) or "-"


def format_report(r: dict[str, Any]) -> str:
    """The report as text, one fact a line."""
    lines = []
    for side in ("a", "b"):
        s = r[side]
        toks = ", ".join(f"{t}:{w:.1f}" for t, w in s["top_weighted_tokens"])
        lines.append(f"{side.upper()} {s['id']}  lang={s['lang']} chars={s['chars']} shingles={s['shingles']} "
                     f"simhash={' '.join(s['simhash'])}")
        lines.append(f"   top weighted tokens: {toks}")
    lines.append(f"shared shingles {r['shared_shingles']} (exact Jaccard {r['exact_shingle_jaccard']}), "
                 f"e.g. {r['shared_shingle_examples'][:5]}")
    ds = r["differing_shingles"]
    lines.append(f"shingles only in A: {ds['only_a']}, e.g. {ds['examples_a'][:5]}")
    lines.append(f"shingles only in B: {ds['only_b']}, e.g. {ds['examples_b'][:5]}")
    lines.append(f"MinHash Jaccard estimate {r['jaccard_estimate']}  containment {r['containment']}")
    lines.append(f"SimHash Hamming distance {r['hamming']}  differing bits {r['differing_simhash_bits']}")
    att = r["simhash_attribution"]
    if not att["recomputed_equals_engine"]:
        lines.append("   (the recomputed votes do not give the engine's SimHash: attribution below is approximate)")
    for bit in att["bits"]:
        lines.append(f"   bit {bit['bit']:3d}: A={bit['a']} (vote {bit['vote_a']:+.2f})  "
                     f"B={bit['b']} (vote {bit['vote_b']:+.2f})  pushed by {_pushes(bit)}")
    lines.append(f"similarity rule: {r['rule'] or 'none (not similar)'}")
    found = r["critical_differences"]
    if not found:
        lines.append("critical difference: none")
    for k, diff in enumerate(found):
        lines.append(f"{'critical difference' if k == 0 else '   also'}: {diff.get('versus') or diff['term']}")
        lines.append(f"   {'where' if k == 0 else '     where'}: {diff['passage']}")
    if r.get("images"):
        lines += image_lines(r["images"])
    d = r["decision_for_b_after_a"]
    lines.append(f"decision for B after A: {d['status']}" + (f" of {d['duplicate_of']}" if d["duplicate_of"] else ""))
    lines += evidence_image_lines(d["evidence"])
    lines.append("thresholds: " + ", ".join(f"{name} {value}" for name, value in r["thresholds"].items()))
    return "\n".join(lines)


def image_lines(images: dict[str, Any]) -> list[str]:
    """The images part of a report in words: what each side carries, and its nearest pair."""
    lines = []
    for side in ("a", "b"):
        held = ", ".join(f"image {i['index']} pHash {i['phash']}" + (f" ({i['url']})" if i["url"] else "")
                         for i in images[side]) or "none usable"
        lines.append(f"images of {side.upper()}: {held}")
        lines += [f"   image {x['index']} not used: {x['reason']}: {x['detail']}" for x in images[f"{side}_rejected"]]
    n = images["nearest"]
    if n is not None:
        dh = f", dHash {n['dhash_hamming']} bits" if n["dhash_hamming"] is not None else ""
        radius = f"the radius of {n['radius']}"
        if n["whole_phash_hamming"] != n["phash_hamming"]:  # a crop: one of B's views is nearer
            dh = f" from B's nearest view ({n['whole_phash_hamming']} whole to whole){dh}"
            radius = f"the views' radius of {n['view_radius']}"
        verdict = "within" if n["within_radius"] else "beyond"
        lines.append(f"nearest images: A's image {n['a_image']} and B's image {n['b_image']} differ by "
                     f"{n['phash_hamming']} pHash bits{dh}, {verdict} {radius}")
    return lines


def evidence_image_lines(evidence: dict[str, Any]) -> list[str]:
    """A decision's image evidence in words (``evidence.image``, ``evidence.shared_image``)."""
    lines = []
    image, shared = evidence.get("image"), evidence.get("shared_image")
    if image:
        lines.append(f"   by its image: image {image['image']} is {image['against']}'s image {image['their_image']} "
                     f"({image['hamming']} pHash bits apart, radius {image['radius']}), and its text is too short "
                     f"to tell them apart")
    if shared:
        lines.append(f"   shares a photograph with {shared['against']}: image {shared['image']} is its image "
                     f"{shared['their_image']} ({shared['hamming']} pHash bits apart); the texts differ, so the "
                     f"photograph alone does not make a duplicate")
    lines += [f"   image {x['index']} not used: {x['reason']}" for x in evidence.get("images_rejected") or ()]
    return lines
