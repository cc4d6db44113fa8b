"""Every Numba kernel against a slow pure-Python reference (in the style of stumpy's tests).

The references below are written from the kernels' docstrings, on Python ints masked to 64 bits
and plain lists, never by calling a kernel. Random inputs come from numpy Generators with fixed
seeds and from hypothesis. The known-answer tests at the end pin values that must not move
between machines, Python versions or releases (stored signatures and keys depend on them).
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import groupby

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from neardup.kernels import entities as kent
from neardup.kernels import hashing as khash
from neardup.kernels import minhash as kmin
from neardup.kernels import profile as kprof
from neardup.kernels import profile_codec as kcodec
from neardup.kernels import simhash as ksim
from neardup.kernels import text as ktext
from neardup.kernels.entities import SCANNED_TABLE, _in_sorted
from neardup.sketch.fingerprint import (
    SHINGLE_SEED,
    FingerprintConfig,
    Fingerprinter,
    MinHashFamily,
    content_hash,
    permutations,
    splitmix64,
)
from neardup.text.normalize import tables

M64 = (1 << 64) - 1
P31 = (1 << 31) - 1
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
C1 = 0xFF51AFD7ED558CCD
C2 = 0xC4CEB9FE1A85EC53
GOLDEN = 0x9E3779B97F4A7C15
COMBINE_SALT = 0x632BE59BD9B4E019
NEG_SALT = 0x5BD1E9955BD1E995
HI_SALT = 0xA0761D6478BD642F

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------
# slow references
# ---------------------------------------------------------------------------------------------

def ref_fmix64(h: int) -> int:
    h &= M64
    h ^= h >> 33
    h = (h * C1) & M64
    h ^= h >> 33
    h = (h * C2) & M64
    h ^= h >> 33
    return h


def ref_hash_span(cps: list[int], seed: int) -> int:
    """FNV-1a over the code points, seeded with seed * golden ratio, length mixed in, fmix64."""
    h = FNV_OFFSET ^ ((seed * GOLDEN) & M64)
    for c in cps:
        h ^= c
        h = (h * FNV_PRIME) & M64
    return ref_fmix64(h ^ len(cps))


def ref_hash_str(s: str, seed: int = 0) -> int:
    return ref_hash_span([ord(c) for c in s], seed)


def ref_combine(h: int, x: int) -> int:
    return ref_fmix64(((h * GOLDEN) & M64) ^ ((x + COMBINE_SALT) & M64))


def split_docs(values: np.ndarray, offsets: np.ndarray) -> list[list[int]]:
    return [values[offsets[d] : offsets[d + 1]].tolist() for d in range(len(offsets) - 1)]


def join_docs(docs: list[list[int]], dtype: type) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(d) for d in docs])
    flat = np.array([v for d in docs for v in d], dtype=dtype)
    return flat, offsets


def ref_classes(cp: int, classes: np.ndarray) -> int:
    return int(classes[cp]) if cp < classes.shape[0] else ktext.ALNUM


def ref_normalize_doc(doc: list[int], table: np.ndarray, classes: np.ndarray) -> tuple[list[int], bool]:
    """Table per code point (SLOW -> keep and flag, DROP -> remove, beyond the table -> keep),
    then whitespace: runs become one space, none at either end, none between two CJK."""
    slow = False
    mapped: list[int] = []
    for cp in doc:
        m = int(table[cp]) if cp < table.shape[0] else cp
        if m == ktext.SLOW:
            slow, m = True, cp
        if m == ktext.DROP:
            continue
        mapped.append(m)

    def is_space(m: int) -> bool:
        return bool(ref_classes(m, classes) & ktext.SPACE)

    def is_cjk(m: int) -> bool:
        return bool(ref_classes(m, classes) & ktext.CJK)

    runs = [(space, list(g)) for space, g in groupby(mapped, key=is_space)]
    # runs alternate; strip the space runs at both ends
    while runs and runs[0][0]:
        runs.pop(0)
    while runs and runs[-1][0]:
        runs.pop()
    out: list[int] = []
    for i, (space, chars) in enumerate(runs):
        if not space:
            out.extend(chars)
            continue
        left, right = runs[i - 1][1][-1], runs[i + 1][1][0]
        if not (is_cjk(left) and is_cjk(right)):
            out.append(32)
    return out, slow


def ref_word_spans(doc: list[int], base: int, classes: np.ndarray) -> list[tuple[int, int]]:
    def is_word(cp: int) -> bool:
        c = ref_classes(cp, classes)
        return bool(c & ktext.ALNUM) and not c & ktext.CJK

    spans = []
    pos = 0
    for word, g in groupby(doc, key=is_word):
        n = len(list(g))
        if word:
            spans.append((base + pos, base + pos + n))
        pos += n
    return spans


def ref_char_shingles(doc: list[int], classes: np.ndarray, k: int, seed: int) -> list[int]:
    chars = [cp for cp in doc if ref_classes(cp, classes) & ktext.ALNUM]
    if not chars:
        return []
    if len(chars) < k:
        return [ref_hash_span(chars, seed)]
    return [ref_hash_span(chars[j : j + k], seed) for j in range(len(chars) - k + 1)]


def ref_word_shingles(tokens: list[int], k: int, seed: int) -> list[int]:
    if not tokens:
        return []
    span = min(k, len(tokens))
    out = []
    for j in range(len(tokens) - span + 1):
        h = (seed + span) & M64
        for t in tokens[j : j + span]:
            h = ref_combine(h, t)
        out.append(h)
    return out


def ref_minhash(shingles: list[int], a: list[int], b: list[int]) -> list[int]:
    if not shingles:
        return [0xFFFFFFFF] * len(a)
    xs = [(h >> 33) % P31 for h in shingles]
    return [min((ai * x + bi) % P31 for x in xs) for ai, bi in zip(a, b, strict=True)]


def ref_one_permutation(shingles: list[int], bins: int, seed: int) -> list[int]:
    """One permutation hashing with optimal densification, as the kernel's docstring states it."""
    if not shingles:
        return [0xFFFFFFFF] * bins
    mix = ref_fmix64((seed + GOLDEN) & M64)
    kept: list[int | None] = [None] * bins
    for x in shingles:
        h = ref_fmix64(x ^ mix)
        b = ((h >> 32) * bins) >> 32
        v = min(h & 0xFFFFFFFF, 0xFFFFFFFE)
        old = kept[b]
        kept[b] = v if old is None else min(old, v)
    out = []
    for j in range(bins):
        t = 1
        k = j
        while kept[k] is None:
            k = ((ref_fmix64(mix ^ (j << 32) ^ t) >> 32) * bins) >> 32
            t += 1
        value = kept[k]
        assert value is not None
        out.append(value)
    return out


def ref_band_hashes(sig: list[int], bands: int, rows: int, seed: int) -> list[int]:
    out = []
    for bnd in range(bands):
        h = seed ^ (((bnd + 1) * GOLDEN) & M64)
        for v in sig[bnd * rows : (bnd + 1) * rows]:
            h ^= v
            h = (h * FNV_PRIME) & M64
        h ^= h >> 33
        h = (h * C1) & M64
        h ^= h >> 33
        out.append(h)
    return out


def ref_feature_weights(tokens: list[int], table: dict[int, tuple[float, int]], default: float,
                        neg_weight: float) -> list[tuple[int, float]]:
    out: list[tuple[int, float]] = []
    prev_neg = False
    for h in tokens:
        weight, flag = table.get(h, (default, 0))
        if weight > 0:
            out.append((h, weight))
            if prev_neg:
                out.append((ref_combine(h, NEG_SALT), weight * neg_weight))
        prev_neg = bool(flag & 1)
    return out


def ref_simhash(features: list[tuple[int, float]], words: int) -> tuple[list[int], list[float]]:
    """(fingerprint words, |accumulator| per bit). Equal hashes merge into one feature of weight
    w * (1 + ln tf), rounded to 1/1024 (exact integer sums); each feature votes +w / -w per bit;
    a bit is set when its sum is > 0."""
    tf: dict[int, int] = {}
    weight: dict[int, float] = {}
    for h, w in features:
        tf[h] = tf.get(h, 0) + 1
        weight.setdefault(h, w)
    acc = [0] * (64 * words)
    for h in sorted(tf):
        w = round(weight[h] * (1.0 + math.log(tf[h])) * 1024.0)
        for wd in range(words):
            hh = h if wd == 0 else ref_fmix64(h ^ HI_SALT)
            for bit in range(64):
                acc[wd * 64 + bit] += w if (hh >> bit) & 1 else -w
    fp = [sum(1 << bit for bit in range(64) if acc[wd * 64 + bit] > 0) for wd in range(words)]
    return fp, [abs(v) / 1024.0 for v in acc]


# ---------------------------------------------------------------------------------------------
# random inputs
# ---------------------------------------------------------------------------------------------

# code points of every kind the normaliser treats differently
ALPHABET = np.array(
    [ord(c) for c in "abcXYZ019 \t\n\u3000\u00a0.,;!?-'\"()"]
    + [ord(c) for c in "的是批准不予上涨下跌這個國〇"]
    + [0xFF21, 0xFF41, 0xFF10, 0xFF0C, 0x3002, 0x300C]  # full width, CJK punctuation
    + [0x0301, 0x0308, 0xFB01, 0x2460, 0x00BD]  # combining marks, ligature, circled, fraction
    + [0x200B, 0x00AD, 0xFEFF, 0x0007]  # zero-width and control
    + [0x3131, 0x314F, 0xAC00, 0x1100, 0xFF76, 0xFF9E]  # Hangul, half-width katakana
    + [0x20000, 0x2A6D6, 0x30001, 0x10FFFD],  # CJK ext B, beyond the table
    dtype=np.uint32,
)


def random_docs(rng: np.random.Generator, n_docs: int, max_len: int) -> list[list[int]]:
    docs = []
    for _ in range(n_docs):
        n = int(rng.integers(0, max_len + 1))
        if rng.random() < 0.5:
            docs.append(rng.choice(ALPHABET, size=n).tolist())
        else:  # any code point of the tables' range, plus some beyond
            docs.append(rng.integers(0, 0x31000, size=n).tolist())
    return docs


def random_hashes(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False)


@pytest.fixture(scope="module")
def norm_tables() -> tuple[np.ndarray, np.ndarray]:
    return tables(True)


# ---------------------------------------------------------------------------------------------
# hashing
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fmix64_matches_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = [0, 1, M64, 1 << 63, *random_hashes(rng, 200).tolist()]
    for v in values:
        assert int(khash.fmix64(np.uint64(v))) == ref_fmix64(v)


@FAST
@given(st.lists(st.integers(0, 0x10FFFF), max_size=40), st.integers(0, 2**32 - 1),
       st.integers(0, 5), st.integers(0, 5))
def test_hash_span_matches_reference(cps: list[int], seed: int, pad_l: int, pad_r: int) -> None:
    arr = np.array([7] * pad_l + cps + [9] * pad_r, dtype=np.uint32)
    got = khash.hash_span(arr, pad_l, pad_l + len(cps), np.uint64(seed))
    assert int(got) == ref_hash_span(cps, seed)


def test_hash_spans_and_combine_match_reference() -> None:
    rng = np.random.default_rng(11)
    cps = rng.integers(0, 0x110000, size=500).astype(np.uint32)
    starts = rng.integers(0, 500, size=300)
    ends = np.minimum(starts + rng.integers(0, 12, size=300), 500)
    got = khash.hash_spans(cps, starts.astype(np.int64), ends.astype(np.int64), 3)
    want = [ref_hash_span(cps[s:e].tolist(), 3) for s, e in zip(starts, ends, strict=True)]
    assert got.tolist() == want
    for h, x in zip(random_hashes(rng, 50).tolist(), random_hashes(rng, 50).tolist(), strict=True):
        assert int(khash.combine(np.uint64(h), np.uint64(x))) == ref_combine(h, x)


def test_hash_span_separates_length_and_seed() -> None:
    assert ref_hash_span([], 0) != ref_hash_span([0], 0)
    assert ref_hash_span([1, 2], 0) != ref_hash_span([2, 1], 0)
    assert ref_hash_span([1, 2], 0) != ref_hash_span([1, 2], 1)


# ---------------------------------------------------------------------------------------------
# text kernels
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_normalize_batch_matches_reference(seed: int, norm_tables: tuple[np.ndarray, np.ndarray]) -> None:
    table, classes = norm_tables
    rng = np.random.default_rng(100 + seed)
    docs = random_docs(rng, 40, 60)
    docs += [[], [32, 32], [0x3000, ord("的"), 32, ord("是"), 32], [ord("a"), 0x200B, 32, 32, ord("b")]]
    cps, offsets = join_docs(docs, np.uint32)
    out, out_off, slow = ktext.normalize_batch(cps, offsets, table, classes)
    assert out_off[0] == 0 and out_off[-1] == out.shape[0]
    for d, doc in enumerate(docs):
        want, want_slow = ref_normalize_doc(doc, table, classes)
        assert out[out_off[d] : out_off[d + 1]].tolist() == want, d
        assert bool(slow[d]) == want_slow, d


@FAST
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30),
                max_size=6))
def test_normalize_batch_matches_reference_hypothesis(texts: list[str]) -> None:
    table, classes = tables(True)
    docs = [[ord(c) for c in t] for t in texts]
    cps, offsets = join_docs(docs, np.uint32)
    out, out_off, slow = ktext.normalize_batch(cps, offsets, table, classes)
    for d, doc in enumerate(docs):
        want, want_slow = ref_normalize_doc(doc, table, classes)
        assert out[out_off[d] : out_off[d + 1]].tolist() == want
        assert bool(slow[d]) == want_slow


@pytest.mark.parametrize("seed", range(4))
def test_word_spans_matches_reference(seed: int, norm_tables: tuple[np.ndarray, np.ndarray]) -> None:
    _, classes = norm_tables
    rng = np.random.default_rng(200 + seed)
    docs = [*random_docs(rng, 30, 50), [], [ord("a")] * 7, [ord(" "), ord("a"), ord(" ")] * 9]
    cps, offsets = join_docs(docs, np.uint32)
    starts, ends, doc_off = ktext.word_spans(cps, offsets, classes)
    for d, doc in enumerate(docs):
        lo, hi = doc_off[d], doc_off[d + 1]
        got = list(zip(starts[lo:hi].tolist(), ends[lo:hi].tolist(), strict=True))
        assert got == ref_word_spans(doc, int(offsets[d]), classes)


def test_word_spans_worst_case_capacity(norm_tables: tuple[np.ndarray, np.ndarray]) -> None:
    """Alternating word / non-word characters give the most spans per code point."""
    _, classes = norm_tables
    docs = [[ord("a"), 32] * 50 + [ord("a")], [ord("a")], [ord("b"), ord(",")] * 3 + [ord("c")]]
    cps, offsets = join_docs(docs, np.uint32)
    _starts, _, doc_off = ktext.word_spans(cps, offsets, classes)
    assert np.diff(doc_off).tolist() == [51, 1, 4]


@pytest.mark.parametrize("k", [1, 3, 5])
def test_char_shingle_hashes_matches_reference(k: int, norm_tables: tuple[np.ndarray, np.ndarray]) -> None:
    _, classes = norm_tables
    rng = np.random.default_rng(300 + k)
    docs = [*random_docs(rng, 30, 40), [], [ord(",")] * 4, [ord("甲"), ord("乙")]]
    cps, offsets = join_docs(docs, np.uint32)
    out, doc_off = ktext.char_shingle_hashes(cps, offsets, classes, k, SHINGLE_SEED)
    for d, doc in enumerate(docs):
        assert out[doc_off[d] : doc_off[d + 1]].tolist() == ref_char_shingles(doc, classes, k, SHINGLE_SEED)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_word_shingle_hashes_matches_reference(k: int) -> None:
    rng = np.random.default_rng(400 + k)
    docs = [random_hashes(rng, int(rng.integers(0, 12))).tolist() for _ in range(40)] + [[], [5], [5, 5]]
    toks, offsets = join_docs(docs, np.uint64)
    out, off = ktext.word_shingle_hashes(toks, offsets, k, SHINGLE_SEED)
    for d, doc in enumerate(docs):
        assert out[off[d] : off[d + 1]].tolist() == ref_word_shingles(doc, k, SHINGLE_SEED)


def test_distinct_per_doc_matches_reference() -> None:
    rng = np.random.default_rng(500)
    docs = [rng.integers(0, 8, size=int(rng.integers(0, 20))).tolist() for _ in range(50)] + [[]]
    # equal low bits: one long probe chain in the kernel's hash set; a long document after short ones
    docs += [[(int(v) << 20) for v in rng.integers(0, 30, size=60)], [0, 0, M64, M64, 1 << 63]]
    docs += [random_hashes(rng, 300).tolist() * 2, [3]]
    values, offsets = join_docs(docs, np.uint64)
    got, off = ktext.distinct_per_doc(values, offsets)
    # each document's distinct values, in order of first occurrence
    assert [got[off[d] : off[d + 1]].tolist() for d in range(len(docs))] == [list(dict.fromkeys(d)) for d in docs]


def test_detect_lang(norm_tables: tuple[np.ndarray, np.ndarray]) -> None:
    _, classes = norm_tables
    texts = ["这是中文 text", "plain english text", "12345 ...", "", "okay fine 中", "ab 中"]
    docs = [[ord(c) for c in t] for t in texts]
    cps, offsets = join_docs(docs, np.uint32)
    assert ktext.detect_lang(cps, offsets, classes).tolist() == [0, 1, 2, 2, 1, 0]  # zh when 4 * Han >= Latin


# ---------------------------------------------------------------------------------------------
# MinHash
# ---------------------------------------------------------------------------------------------

def edge_hashes() -> list[int]:
    """Shingle hashes whose x = h >> 33 lands on 0, P - 1, P (== 0 mod P) and 2**31."""
    return [0, (P31 - 1) << 33, P31 << 33, (P31 << 33) | ((1 << 33) - 1), M64, 1 << 63]


@pytest.mark.parametrize(("num_perm", "seed"), [(16, 1), (128, 1), (64, 42)])
def test_minhash_batch_matches_reference(num_perm: int, seed: int) -> None:
    a, b = permutations(num_perm, seed)
    rng = np.random.default_rng(600 + num_perm + seed)
    docs = [random_hashes(rng, int(rng.integers(0, 30))).tolist() for _ in range(25)]
    docs += [[], edge_hashes(), [M64]]
    shingles, offsets = join_docs(docs, np.uint64)
    got = kmin.minhash_batch(shingles, offsets, a, b)
    assert got.shape == (len(docs), num_perm) and got.dtype == np.uint32
    for d, doc in enumerate(docs):
        assert got[d].tolist() == ref_minhash(doc, a.tolist(), b.tolist()), d


def test_minhash_extreme_permutations() -> None:
    """a and b at the ends of their ranges: a*x + b is the largest the kernel ever folds."""
    a = np.array([1, P31 - 1, P31 - 1, 2], dtype=np.uint64)
    b = np.array([0, P31 - 1, 0, P31 - 1], dtype=np.uint64)
    docs = [edge_hashes(), [((P31 - 1) << 33)], [1 << 33]]
    shingles, offsets = join_docs(docs, np.uint64)
    got = kmin.minhash_batch(shingles, offsets, a, b)
    for d, doc in enumerate(docs):
        assert got[d].tolist() == ref_minhash(doc, a.tolist(), b.tolist())


@pytest.mark.parametrize(("bins", "seed"), [(16, 1), (128, 1), (100, 42), (1024, 3)])
def test_one_permutation_batch_matches_reference(bins: int, seed: int) -> None:
    rng = np.random.default_rng(900 + bins + seed)
    # from one shingle (every other bin borrowed) to many more shingles than bins
    docs = [random_hashes(rng, int(rng.integers(0, 3 * bins))).tolist() for _ in range(25)]
    docs += [[], [7], edge_hashes(), [M64]]
    shingles, offsets = join_docs(docs, np.uint64)
    got = kmin.one_permutation_batch(shingles, offsets, bins, seed)
    assert got.shape == (len(docs), bins) and got.dtype == np.uint32
    for d, doc in enumerate(docs):
        assert got[d].tolist() == ref_one_permutation(doc, bins, seed), d
        assert (got[d] == kmin.EMPTY).all() == (not doc)  # only a document without shingles is EMPTY


def test_one_permutation_estimates_jaccard_like_permutations() -> None:
    """Both families estimate the Jaccard similarity of two shingle sets without bias; one
    permutation hashing (sampling without replacement) with no more spread than k permutations."""
    rng = np.random.default_rng(901)
    a, b = permutations(128, 1)
    errors: dict[str, list[float]] = {"one": [], "perm": []}
    for trial in range(60):
        base = random_hashes(rng, 1200)
        shift = 10 * trial  # J = (600 - shift) / (600 + shift): from 1 down to 0.005
        x, y = base[:600], base[shift:shift + 600]
        truth = (600 - shift) / (600 + shift)
        shingles, offsets = join_docs([x.tolist(), y.tolist()], np.uint64)
        one = kmin.one_permutation_batch(shingles, offsets, 128, 1)
        perm = kmin.minhash_batch(shingles, offsets, a, b)
        errors["one"].append(float(np.mean(one[0] == one[1])) - truth)
        errors["perm"].append(float(np.mean(perm[0] == perm[1])) - truth)
    for e in errors.values():
        assert abs(np.mean(e)) < 0.02  # no bias beyond the spread of 60 trials
    assert np.sqrt(np.mean(np.square(errors["one"]))) <= 1.2 * np.sqrt(np.mean(np.square(errors["perm"])))
    assert np.sqrt(np.mean(np.square(errors["one"]))) < 0.05  # about sqrt(J(1-J)/128)


def test_permutations_follow_splitmix64() -> None:
    a, b = permutations(32, 7)
    state = 7
    for i in range(32):
        state, r1 = splitmix64(state)
        state, r2 = splitmix64(state)
        assert int(a[i]) == 1 + r1 % (P31 - 1) and int(b[i]) == r2 % P31
    assert (a >= 1).all() and (a < P31).all() and (b < P31).all()


@pytest.mark.parametrize(("bands", "rows"), [(1, 16), (4, 4), (16, 1), (5, 3)])
def test_band_hashes_matches_reference(bands: int, rows: int) -> None:
    rng = np.random.default_rng(700 + bands)
    sigs = rng.integers(0, 2**32, size=(20, 16), dtype=np.uint32)
    sigs[0] = 0xFFFFFFFF
    got = kmin.band_hashes(sigs, bands, rows, 0xBA4D)
    assert got.shape == (20, bands)
    for d in range(20):
        assert got[d].tolist() == ref_band_hashes(sigs[d].tolist(), bands, rows, 0xBA4D)


def test_jaccard_estimates_matches_reference() -> None:
    rng = np.random.default_rng(800)
    sig = rng.integers(0, 4, size=64).astype(np.uint32)
    others = rng.integers(0, 4, size=(30, 64)).astype(np.uint32)
    others[0] = sig
    got = kmin.jaccard_estimates(sig, others)
    want = [sum(int(x == y) for x, y in zip(sig.tolist(), row, strict=True)) / 64 for row in others.tolist()]
    assert got.tolist() == want
    assert got[0] == 1.0


# ---------------------------------------------------------------------------------------------
# SimHash
# ---------------------------------------------------------------------------------------------

def random_weight_table(rng: np.random.Generator, vocab: np.ndarray) -> dict[int, tuple[float, int]]:
    table: dict[int, tuple[float, int]] = {}
    for h in vocab.tolist():
        if rng.random() < 0.7:
            w = 0.0 if rng.random() < 0.15 else float(rng.uniform(0.1, 12.0))
            table[h] = (w, 1 if rng.random() < 0.15 else 0)
    return table


def slot_table(table: dict[int, tuple[float, int]]) -> tuple[np.ndarray, ...]:
    """The open-addressing weight table the kernels read (neardup.kernels.simhash.build_hash_table)."""
    keys = np.array(list(table), dtype=np.uint64)
    weights = np.array([table[k][0] for k in table], dtype=np.float64)
    flags = np.array([table[k][1] for k in table], dtype=np.uint8)
    return tuple(ksim.build_hash_table(keys, weights, flags))


@pytest.mark.parametrize("seed", range(3))
def test_feature_weights_matches_reference(seed: int) -> None:
    rng = np.random.default_rng(900 + seed)
    vocab = random_hashes(rng, 40)
    table = random_weight_table(rng, vocab)
    docs = [rng.choice(vocab, size=int(rng.integers(0, 25))).tolist() for _ in range(30)] + [[]]
    toks, offsets = join_docs(docs, np.uint64)
    fh, fw, off = ksim.feature_weights(toks, offsets, *slot_table(table), 2.5, 4.0)
    for d, doc in enumerate(docs):
        got = list(zip(fh[off[d] : off[d + 1]].tolist(), fw[off[d] : off[d + 1]].tolist(), strict=True))
        assert got == ref_feature_weights(doc, table, 2.5, 4.0)


def test_weight_table_lookup_with_collisions() -> None:
    """Keys that all share their low bits (one probe chain, wrapping past the last slot), key 0,
    and absent tokens that land in the middle of the chain."""
    rng = np.random.default_rng(950)
    keys = [0, *[(int(v) << 12) | 0xFFF for v in rng.integers(1, 2**40, size=20)]]
    table = {k: (float(i + 1), i % 2) for i, k in enumerate(keys)}
    absent = [(int(v) << 12) | 0xFFF for v in rng.integers(2**41, 2**42, size=10)] + [1, 0xFFF]
    docs = [keys + absent, absent[::-1] + keys[::-1]]
    toks, offsets = join_docs(docs, np.uint64)
    fh, fw, off = ksim.feature_weights(toks, offsets, *slot_table(table), 0.75, 4.0)
    for d, doc in enumerate(docs):
        got = list(zip(fh[off[d] : off[d + 1]].tolist(), fw[off[d] : off[d + 1]].tolist(), strict=True))
        assert got == ref_feature_weights(doc, table, 0.75, 4.0)
    empty = ksim.build_hash_table(np.zeros(0, np.uint64), np.zeros(0), np.zeros(0, np.uint8))
    fh, fw, _ = ksim.feature_weights(toks, offsets, *empty, 0.75, 4.0)
    assert fw.tolist() == [0.75] * len(toks)


@pytest.mark.parametrize(("seed", "words"), [(0, 1), (1, 1), (2, 2), (3, 2)])
def test_simhash_batch_matches_reference(seed: int, words: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    vocab = random_hashes(rng, 30)
    table = random_weight_table(rng, vocab)
    docs = [rng.choice(vocab, size=int(rng.integers(0, 40))).tolist() for _ in range(30)] + [[]]
    toks, offsets = join_docs(docs, np.uint64)
    fh, fw, f_off = ksim.feature_weights(toks, offsets, *slot_table(table), 1.5, 4.0)
    got = ksim.simhash_batch(fh, fw, f_off, words)
    assert got.shape == (len(docs), words)
    for d, doc in enumerate(docs):
        want, margin = ref_simhash(ref_feature_weights(doc, table, 1.5, 4.0), words)
        for wd in range(words):
            diff = int(got[d, wd]) ^ want[wd]
            # a bit whose vote sums to ~0 may round either way; every other bit must agree
            undecided = sum(1 << bit for bit in range(64) if margin[wd * 64 + bit] < 1e-9)
            assert diff & ~undecided == 0, (d, wd, hex(diff))


def test_simhash_merges_repeats_with_log_tf() -> None:
    """One feature repeated 3 times weighs w (1 + ln 3) (< 3 w): two other features outvote it."""
    h1, h2 = 0xFFFFFFFFFFFFFFFF, 0
    fh = np.array([h1, h1, h1, h2], dtype=np.uint64)
    fw = np.array([1.0, 1.0, 1.0, 2.5], dtype=np.float64)
    got = ksim.simhash_batch(fh, fw, np.array([0, 4], dtype=np.int64), 1)
    assert int(got[0, 0]) == 0  # 1 + ln 3 = 2.0986 < 2.5
    fw[3] = 2.0
    got = ksim.simhash_batch(fh, fw, np.array([0, 4], dtype=np.int64), 1)
    assert int(got[0, 0]) == M64


def test_hamming_distances_matches_reference() -> None:
    rng = np.random.default_rng(1100)
    for words in (1, 2):
        fp = random_hashes(rng, words)
        others = random_hashes(rng, 40 * words).reshape(40, words)
        others[0] = fp
        others[1] = ~fp
        got = ksim.hamming_distances(fp, others)
        want = [sum(bin(int(x) ^ int(y)).count("1") for x, y in zip(fp.tolist(), row, strict=True))
                for row in others.tolist()]
        assert got.tolist() == want
        assert got[0] == 0 and got[1] == 64 * words


# ---------------------------------------------------------------------------------------------
# critical-difference profiles
# ---------------------------------------------------------------------------------------------

def ref_replaced_context(mine: list[int], theirs: list[int]) -> int:
    """Cancel equal entries pairwise (first occurrences first); the first entry of ``mine`` left
    over whose context (entry >> 16) also has a leftover in ``theirs``, unless that context's
    leftovers are a moved figure (one polarity byte, fill bits 8-15, on both sides, and a fill of
    one side left over in the other under other contexts at least as often as on its own side) or,
    names only, one renamed in part (both names still carried by the other text, or written alike);
    -1 when none."""
    budget = Counter(theirs)
    left_mine: list[tuple[int, int]] = []  # (index, entry)
    for i, v in enumerate(mine):
        if budget[v] > 0:
            budget[v] -= 1
        else:
            left_mine.append((i, v))
    left_theirs = list((Counter(theirs) - Counter(mine)).elements())

    def weak(v: int) -> bool:
        return (v >> 8) & 0xFF in (kprof.WEAK_NAME_BYTE, kprof.NAME_TWIN_BYTE)

    def twin(f: int) -> bool:
        return f >> 8 == kprof.NAME_TWIN_BYTE

    weak_mine = [(i, v) for i, v in left_mine if weak(v)]
    weak_theirs = sorted(v for v in left_theirs if weak(v))
    left_mine = [(i, v) for i, v in left_mine if not weak(v)]
    left_theirs = [v for v in left_theirs if not weak(v)]

    def moved(ctx: int) -> bool:
        here_mine = [v & 0xFFFF for _, v in left_mine if v >> 16 == ctx]
        here_theirs = [v & 0xFFFF for v in left_theirs if v >> 16 == ctx]
        if len({f >> 8 for f in here_mine + here_theirs}) != 1:
            return False
        if crossed(ctx):
            return False  # crossed by another shared context: the fills traded places
        all_mine = Counter(v & 0xFFFF for _, v in left_mine)
        all_theirs = Counter(v & 0xFFFF for v in left_theirs)
        mine_elsewhere = Counter(v & 0xFFFF for _, v in left_mine if v >> 16 != ctx)
        theirs_elsewhere = Counter(v & 0xFFFF for v in left_theirs if v >> 16 != ctx)
        return (any(all_mine[f] <= theirs_elsewhere[f] for f in here_mine)
                or any(all_theirs[f] <= mine_elsewhere[f] for f in here_theirs))

    def crossed(ctx: int) -> bool:
        here_mine = [v & 0xFFFF for _, v in left_mine if v >> 16 == ctx]
        here_theirs = [v & 0xFFFF for v in left_theirs if v >> 16 == ctx]
        mine_set = {v for _, v in left_mine}
        theirs_set = set(left_theirs)
        return any(x != y and ((c << 16) | y) in mine_set and ((c << 16) | x) in theirs_set
                   for x in here_mine for y in here_theirs for c in {v >> 16 for _, v in left_mine} - {ctx})

    def partial_rename(ctx: int) -> bool:
        here_mine = [v & 0xFFFF for _, v in left_mine if v >> 16 == ctx]
        here_theirs = [v & 0xFFFF for v in left_theirs if v >> 16 == ctx]
        if any(f >> 8 != kprof.NAME_FILL_BYTE for f in here_mine + here_theirs):
            return False
        def renamed(x: int, y: int) -> bool:  # another name, in this mention or everywhere
            carried = carries(mine, theirs, x) + carries(theirs, mine, y)
            elsewhere = any(v >> 16 != ctx and v & 0xFFFF == x and ((v >> 16) << 16 | y) in left_theirs
                            for _, v in left_mine)
            presence = any(v & 0xFFFF == kprof.NAME_PRESENT_FILL for v in mine) and any(
                v & 0xFFFF == kprof.NAME_PRESENT_FILL for v in theirs)
            return carried == 0 or (carried == 1 and presence and elsewhere)

        return not any(x != y and not alike(x, y) and renamed(x, y) for x in here_mine for y in here_theirs)

    def names_only(ctx: int) -> bool:
        fills = ([v & 0xFFFF for _, v in left_mine if v >> 16 == ctx]
                 + [v & 0xFFFF for v in left_theirs if v >> 16 == ctx])
        return all(f >> 8 == kprof.NAME_FILL_BYTE for f in fills)

    def carries(owner: list[int], other: list[int], fill: int) -> bool:
        present = [v for v in owner if v & 0xFFFF == kprof.NAME_PRESENT_FILL]
        if not present or not any(v & 0xFFFF == kprof.NAME_PRESENT_FILL for v in other):
            return fill in {v & 0xFFFF for v in other}
        named = [v for v in present if v >> 40 == fill & 0xFF]
        return bool(named) and all(v in other for v in named)

    def alike(x: int, y: int) -> bool:
        def sets(owner: list[int], fill: int) -> list[int]:
            return [(v >> 16) & 0xFFFFFF for v in owner
                    if v & 0xFFFF == kprof.NAME_PRESENT_FILL and v >> 40 == fill & 0xFF]
        return any(2 * bin(a & b).count("1") > bin(a | b).count("1") for a in sets(mine, x) for b in sets(theirs, y))

    their_contexts = {v >> 16 for v in left_theirs}
    for i, v in left_mine:
        if v >> 16 not in their_contexts:
            continue
        # names: replaced unless renamed in part (both still carried, or written alike); others: unless moved
        ctx = v >> 16
        if not partial_rename(ctx) if names_only(ctx) else not moved(ctx):
            return i
    # weak names pair with weak names and names' twins only (two twins never): another one in the
    # place, neither its first nor its last letter shared (4 bits of each), neither held by the
    # other text anywhere; against a twin, the same two in another context too (both sides)
    for i, v in weak_mine:
        x = v & 0xFFFF
        for u in weak_theirs:
            y = u & 0xFFFF
            if u >> 16 != v >> 16 or (twin(x) and twin(y)) or x & 0xF0 == y & 0xF0 or x & 0xF == y & 0xF:
                continue
            if any(w & 0xFFFF == x for w in theirs) or any(w & 0xFFFF == y for w in mine):
                continue
            if not (twin(x) or twin(y)) or any(
                    c >> 16 != v >> 16 and c & 0xFFFF == x and ((c >> 16) << 16 | y) in weak_theirs
                    for _, c in weak_mine):
                return i
    return -1


# figures, polarity words, names, weak names and names' twins (0x5713 shares the last letter of 0x5723)
RANDOM_FILLS = (0x0001, 0x0002, 0x0101, 0x0203, 0xB001, 0xB002, 0x5712, 0x5721, 0x5713, 0x5C34, 0x5C23)


def random_profile(rng: np.random.Generator, n: int, contexts: int, fills: int) -> list[int]:
    """Entries over a few contexts and fills; names' presence entries (fill byte on top of the
    context) in about half the profiles."""
    ctx = rng.integers(0, contexts, size=n)
    fill = rng.integers(0, fills, size=n)
    out = [int(c) << 16 | RANDOM_FILLS[int(f)] for c, f in zip(ctx, fill, strict=True)]
    if rng.random() < 0.5:
        out += [((byte << 24) | int(rng.integers(0, 3))) << 16 | kprof.NAME_PRESENT_FILL
                for byte in rng.integers(1, 3, size=int(rng.integers(0, 4))).tolist()]
    return sorted(out)


@pytest.mark.parametrize("seed", range(4))
def test_replaced_context_matches_reference(seed: int) -> None:
    rng = np.random.default_rng(1200 + seed)
    for _ in range(300):
        contexts, fills = int(rng.integers(1, 8)), int(rng.integers(1, len(RANDOM_FILLS) + 1))
        mine = random_profile(rng, int(rng.integers(0, 12)), contexts, fills)
        theirs = random_profile(rng, int(rng.integers(0, 12)), contexts, fills)
        if rng.random() < 0.3:  # mostly shared, as for near-duplicates
            theirs = sorted(mine[: int(rng.integers(0, len(mine) + 1))] + theirs[:2])
        got = kprof.replaced_context(np.array(mine, dtype=np.uint64), np.array(theirs, dtype=np.uint64))
        assert int(got) == ref_replaced_context(mine, theirs), (mine, theirs)


def test_replaced_context_cases() -> None:
    def run(mine: list[int], theirs: list[int]) -> int:
        return int(kprof.replaced_context(np.array(mine, dtype=np.uint64), np.array(theirs, dtype=np.uint64)))

    c = 7 << 16
    assert run([c | 1], [c | 2]) == 0  # replaced fill
    # a weak name in another's place: another unless a character is shared in place, or the other
    # text holds it elsewhere (a list reordered), and never against a name
    w1, w2, w3, d0 = 0x5712, 0x5721, 0x5713, 3 << 16
    assert run([c | w1], [c | w2]) == 0
    assert run([c | w1], [c | w3]) == -1
    assert run([c | w1, d0 | w2], [c | w2, d0 | w1]) == -1
    assert run([c | w1], [c | 0xB001]) == -1
    assert run([d0 | 1, c | w1], [d0 | 2, c | w2]) == 0  # the replaced figure is found first
    # a weak name in a name's place (its twin): only where both sides of it show the same two
    t1, t2 = 0x5C34, 0x5C43
    assert run([c | w1], [c | t1]) == -1
    assert run([d0 | w1, c | w1], [d0 | t1, c | t1]) == 0
    assert run([d0 | t1, c | t1], [d0 | w1, c | w1]) == 0
    assert run([d0 | t1, c | t1], [d0 | t2, c | t2]) == -1  # two names are the names' entries' to tell
    assert run([c | 1, c | 2], [c | 1]) == -1  # surplus on one side only (added occurrence)
    assert run([c | 1], [c | 1, c | 1]) == -1  # deleted repeat
    assert run([c | 1, c | 1], [c | 1, c | 2]) == 1  # repeat replaced: the second one is left over
    assert run([(1 << 16) | 3, c | 1], [(2 << 16) | 4, c | 2]) == 1  # other contexts only one-sided
    # a deleted sentence joins two figures' contexts: the figure left here stands in the other text
    # under the context the deletion took away (moved), either way round; a changed one does not
    assert run([c | 1], [(2 << 16) | 1, c | 2]) == -1
    assert run([(2 << 16) | 2, c | 1], [c | 2]) == -1
    assert run([(1 << 16) | 3, c | 1], [(2 << 16) | 3, c | 2]) == 1
    # written in place of another, a figure is one more of its kind on its side: not moved
    assert run([(1 << 16) | 1, c | 1], [(2 << 16) | 1, c | 2]) == 1
    # two figures that traded places (受理1200件，办结980件 / 受理980件，办结1200件) cross: not moved
    d = 9 << 16
    assert run([c | 1, d | 2], [c | 2, d | 1]) == 0
    assert run([c | 1, d | 2, (3 << 16) | 5], [c | 2, d | 1, (3 << 16) | 5]) == 0
    # ... while one context joined by a deletion crosses nothing (the case above stays moved)
    assert run([c | 1, d | 2], [c | 2, (4 << 16) | 1]) == -1
    # names: another name everywhere counts; one that the text still carries elsewhere does not,
    # unless the words on both sides of that mention (two contexts) stayed and only the name changed
    n1, n2 = kprof.NAME_FILL_BYTE << 8 | 1, kprof.NAME_FILL_BYTE << 8 | 2
    f, g = 11 << 16, 13 << 16
    assert run([c | n1, d | n1], [c | n2, d | n2]) == 0
    assert run([c | n1, d | n1], [c | n2, d | n1]) == -1
    assert run([c | n1, f | n1, d | n1], [c | n2, f | n2, d | n1]) == -1  # by fill bytes: a typo
    q1, q2 = ((1 << 24) | 5) << 16 | kprof.NAME_PRESENT_FILL, ((2 << 24) | 6) << 16 | kprof.NAME_PRESENT_FILL
    # with presence entries, a mention renamed whole (成都 ... 成都市一环路 / 文锦渡一环路)
    assert run([c | n1, f | n1, d | n1, q1], [c | n2, f | n2, d | n1, q1, q2]) == 0
    assert run([c | n1, d | n2, g | n1], [c | n2, d | n2, g | n1]) == -1  # both names carried: moved
    # polarity replacements (another polarity byte) count wherever their fills stand
    assert run([c | 0x0101], [(2 << 16) | 0x0101, c | 0x0201]) == 0
    assert run([], [c]) == -1 and run([c], []) == -1
    top = (0xFFFFFFFF << 16)
    assert run([top | 0xFFFF], [top | 0xFFFE]) == 0


# ---------------------------------------------------------------------------------------------
# known answers: these literals were computed ONCE from the code as of this commit (the pure
# Python references above agree with them). They pin stored data across machines and releases:
# if one changes, every stored signature, key and profile is invalid, so bump the format versions.
# ---------------------------------------------------------------------------------------------

KNOWN_HASH_SPAN = {
    ("", 0): 0xEFD01F60BA992926,
    ("a", 0): 0x25AD9D1B70DE62D1,
    ("hello", 0): 0x3AFF9CFCCE477975,
    ("批准", 0): 0xB2B697409B4C4F3F,
    ("hello", 1): 0x5D8F6A78DC6189B7,
}


@pytest.mark.parametrize(("text", "seed"), list(KNOWN_HASH_SPAN))
def test_hash_span_known_answers(text: str, seed: int) -> None:
    want = KNOWN_HASH_SPAN[(text, seed)]
    assert ref_hash_str(text, seed) == want
    cps = np.array([ord(c) for c in text], dtype=np.uint32)
    assert int(khash.hash_span(cps, 0, len(text), np.uint64(seed))) == want


def test_minhash_permutations_known_answers() -> None:
    a, b = permutations(128, 1)
    assert a[:4].tolist() == [1294668924, 1568727337, 401541412, 1503522406]
    assert b[:4].tolist() == [1667631020, 1371919918, 380574338, 502725525]


ZH_SENTENCE = "国务院关于批准《城市规划条例》的通知：各省、自治区、直辖市人民政府，现将有关事项通知如下。"
EN_SENTENCE = "The central bank said on Tuesday that interest rates will rise by 0.5 percent next month."
KNOWN_SIMHASH = {"zh": 0xB2F737489B4FC7A7, "en": 0x308A02042A12909D}
KNOWN_SIGNATURE = {  # the first 8 values; a sentence has fewer shingles than bins, so some repeat
    ("zh", "one_permutation"): [1008084363, 2671525462, 2376349244, 3783008667, 2048841400, 2376349244, 210587419,
                                2671525462],
    ("en", "one_permutation"): [3224378782, 426101892, 3224378782, 1270575921, 1639093327, 1978690148, 4060151105,
                                1270575921],
    ("zh", "permutations"): [88685654, 13031328, 82349927, 248687739, 23193507, 257999058, 460897, 162008710],
    ("en", "permutations"): [95013363, 52630283, 102803641, 149892021, 1609034, 300970977, 262242711, 140328981],
}


@pytest.mark.parametrize(("lang", "family"), list(KNOWN_SIGNATURE))
def test_fingerprint_known_answers(lang: str, family: MinHashFamily) -> None:
    fps = Fingerprinter(FingerprintConfig(minhash_family=family)).fingerprint(
        [ZH_SENTENCE if lang == "zh" else EN_SENTENCE])
    assert fps.langs == [lang]
    assert int(fps.simhash[0, 0]) == KNOWN_SIMHASH[lang]
    assert fps.signatures[0, :8].tolist() == KNOWN_SIGNATURE[lang, family]


def test_content_hash_known_answer() -> None:
    assert content_hash("neardup 近似重复 v1").hex() == "27cc598eaa408ab35374cecb68a907ff"


def test_keep_word_spans_drops_spans_without_letters_or_digits(norm_tables: tuple[np.ndarray, np.ndarray]) -> None:
    from neardup.kernels.text import keep_word_spans

    _, classes = norm_tables
    text = "批准,. 2024年 !?"
    cps = np.frombuffer(text.encode("utf-32-le"), dtype="<u4").astype(np.uint32)
    bounds = [(0, 2), (2, 3), (3, 4), (4, 5), (5, 9), (9, 10), (10, 11), (11, 12)]
    starts = np.array([b[0] for b in bounds], dtype=np.int64)
    ends = np.array([b[1] for b in bounds], dtype=np.int64)
    s, e, off = keep_word_spans(cps, starts, ends, np.array([0, 5, 8], dtype=np.int64), classes)
    assert [text[a:b] for a, b in zip(s.tolist(), e.tolist(), strict=True)] == ["批准", "2024", "年"]
    assert off.tolist() == [0, 2, 3]


# ---------------------------------------------------------------------------------------------
# timestamp masking: the kernel against the regular expression it replaces (neardup.text.stamps)
# ---------------------------------------------------------------------------------------------

STAMP_PIECES = ["2009-07-22 10:30:15", "2009年07月23日 08:05", "2009/7/2 9:05", "10:30", "1:5", "12:345", "3:1",
                ":", "::", ":00", " : ", "2024年1月1日", " ", "\u3000", "\xa0", "\n", "日", "月", "年", "-", "/",
                ".", "1", "22", "333", "4444", "55555", "٣٤", "０", "x", "中", "t"]


def test_stamp_spans_match_the_regular_expression() -> None:
    from neardup.text.stamps import mask_timestamps, mask_timestamps_batch

    rng = np.random.default_rng(8)
    for _ in range(300):
        texts = ["".join(rng.choice(STAMP_PIECES, size=int(rng.integers(0, 14)))) for _ in range(40)]
        assert mask_timestamps_batch(texts) == [mask_timestamps(t) for t in texts]


@FAST
@given(st.lists(st.text(alphabet=st.sampled_from("0123456789 :-/.年月日\u3000٣x"), max_size=40), max_size=8))
def test_stamp_spans_match_the_regular_expression_hypothesis(texts: list[str]) -> None:
    from neardup.text.stamps import mask_timestamps, mask_timestamps_batch

    assert mask_timestamps_batch(texts) == [mask_timestamps(t) for t in texts]


def test_stamp_spans_cases() -> None:
    from neardup.text.stamps import MASK, mask_timestamps_batch

    texts = ["发布时间:2009-07-22 10:30:15 来源", "比分3:1,12:30:456", "", "2009年07月22日16:45更新"]
    got = mask_timestamps_batch(texts)
    assert got[0] == "发布时间:" + MASK * 19 + " 来源"
    assert got[1] == texts[1]  # 3:1 is a score, 12:30:456 no clock time
    assert got[2] == ""
    assert got[3] == MASK * 16 + "更新"


@pytest.mark.parametrize("size", [0, 1, 8, SCANNED_TABLE, SCANNED_TABLE + 1, 2000])
@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_table_membership_scanned_or_searched_is_plain_membership(size: int, dtype: type) -> None:
    """The name kernels' membership test (a short table scanned whole, a longer one searched)
    against Python's ``in``, on both sides of the scan's limit, hits and misses alike."""
    rng = np.random.default_rng(size)
    table = np.unique(rng.integers(0, 5 * max(size, 1), size).astype(dtype))
    values = rng.integers(0, 5 * max(size, 1) + 3, 500).astype(dtype)
    members = set(table.tolist())
    assert [bool(_in_sorted(table, v)) for v in values] == [int(v) in members for v in values]
    assert all(_in_sorted(table, v) for v in table)


# ---------------------------------------------------------------------------------------------
# a person's run of one-character tokens (single_char_names, verb_run_names)
# ---------------------------------------------------------------------------------------------

RUN_SURNAMES, RUN_STOPS, RUN_VERBS = "王单张", "的了", "说摄"


def ref_surname_runs(words: list[str], glued: list[bool], flags: list[bool], max_run: int,
                     verbs: str | None) -> list[bool]:
    """The flags after single_char_names (``verbs`` None) or verb_run_names, from their
    docstrings, token by token: a run of one-ideograph tokens written together (none a stop,
    none flagged) begun by a surname after no such token; two to ``max_run`` of them are a
    person, or ``max_run`` + 1 whose last is a verb are a person and the verb."""
    flags = flags[:]

    def single(t: int) -> bool:
        return len(words[t]) == 1 and not flags[t] and "\u4e00" <= words[t] <= "\u9fff" and words[t] not in RUN_STOPS

    i = 0
    while i < len(words):
        if not (single(i) and words[i] in RUN_SURNAMES and not (i > 0 and glued[i] and single(i - 1))):
            i += 1
            continue
        j = i + 1
        while j < len(words) and glued[j] and single(j):
            j += 1
        if verbs is None and 2 <= j - i <= max_run:
            flags[i:j] = [True] * (j - i)
        elif verbs is not None and j - i == max_run + 1 and words[j - 1] in verbs:
            flags[i:j - 1] = [True] * (j - 1 - i)
        i = j
    return flags


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["王", "单", "张", "兴", "缘", "说", "摄", "的", "学者", "，", "A"]),
                          st.sampled_from([True, True, True, False]),  # written together with the one before
                          st.sampled_from([False, False, False, False, True])),  # flagged by an earlier reading
                min_size=1, max_size=24))
@example([("学者", True, False), ("单", True, False), ("兴", True, False), ("缘", True, False), ("学者", True, False)])
@example([("学者", True, False), ("张", True, False), ("兴", True, False), ("缘", True, False), ("说", True, False)])
def test_surname_runs_match_reference(tokens: list[tuple[str, bool, bool]]) -> None:
    words = [w for w, _, _ in tokens]
    glued = [i == 0 or g for i, (_, g, _) in enumerate(tokens)]
    flagged = [f for _, _, f in tokens]
    cps = np.array([ord(c) for c in "".join(words)], dtype=np.uint32)
    starts, ends, at = [], [], 0
    for w, g in zip(words, glued, strict=True):
        at += 0 if g else 1  # a gap: not written together
        starts.append(at)
        at += len(w)
        ends.append(at)
    gapped = np.zeros(at, dtype=np.uint32)
    for w, a in zip(words, starts, strict=True):
        gapped[a : a + len(w)] = [ord(c) for c in w]
    cps = gapped
    n = len(words)
    surnames, stops = (np.array(sorted(map(ord, x)), dtype=np.uint32) for x in (RUN_SURNAMES, RUN_STOPS))
    classes = tables(True)[1]
    for verbs in (None, RUN_VERBS):
        flags, fills, joined = np.array(flagged, dtype=np.bool_), np.zeros(n, dtype=np.uint64), np.zeros(n, np.bool_)
        args = (cps, np.array(starts), np.array(ends), np.array([0, n]), np.arange(n, dtype=np.uint64) + np.uint64(1),
                flags, fills, surnames, stops, classes, 3)
        if verbs is None:
            kent.single_char_names(*args)
        else:
            kent.verb_run_names(*args, np.array(sorted(map(ord, verbs)), dtype=np.uint32), joined)
        assert flags.tolist() == ref_surname_runs(words, glued, flagged, 3, verbs)


# ---------------------------------------------------------------------------------------------
# the profile codec's Rice parameter and bit writer
# ---------------------------------------------------------------------------------------------

def ref_rice_parameter(contexts: list[int], bits: int) -> tuple[int, int]:
    """Every k of 0 to ``bits`` tried: the smallest k whose Rice code of the contexts'
    differences is the shortest, and that length in bits."""
    deltas = [b - a for a, b in zip([0, *contexts], contexts, strict=False)]
    costs = [sum((d >> k) + 1 + k for d in deltas) for k in range(bits + 1)]
    return costs.index(min(costs)), min(costs)


@FAST
@given(st.integers(1, 32).flatmap(lambda bits: st.tuples(
    st.just(bits), st.lists(st.integers(0, (1 << bits) - 1), min_size=1, max_size=80))))
def test_rice_parameter_matches_exhaustive_search(case: tuple[int, list[int]]) -> None:
    bits, values = case
    contexts = sorted(values)
    entries = np.array([c << 16 for c in contexts], dtype=np.uint64)
    k, length = kcodec._rice_parameter(entries, 0, len(entries), bits)
    assert (k, length) == ref_rice_parameter(contexts, bits)


@FAST
@given(st.lists(st.tuples(st.integers(0, (1 << 56) - 1), st.integers(0, 56)), max_size=30))
def test_put_bits_writes_what_a_bit_at_a_time_writes(fields: list[tuple[int, int]]) -> None:
    """... and get_bits reads each field back."""
    size = sum(count for _, count in fields) // 8 + 2
    buf, ref = np.zeros(size, dtype=np.uint8), [0] * (8 * size)
    bit = 0
    for value, count in fields:
        for i in range(count):
            ref[bit + i] = (value >> (count - 1 - i)) & 1
        bit = kcodec._put_bits(buf, 0, bit, np.uint64(value), count)
    assert bit == sum(count for _, count in fields)
    assert np.unpackbits(buf).tolist() == ref
    bit = 0
    for value, count in fields:
        assert int(kcodec._get_bits(buf, 0, bit, count)) == value & ((1 << count) - 1)
        bit += count
