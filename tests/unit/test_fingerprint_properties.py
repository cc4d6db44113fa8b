"""Properties of whole fingerprints: batching, robustness to paragraph order, byte formats, the
LSH band choice and the SimHash block keys (pigeonhole)."""

from __future__ import annotations

import itertools
import json
import random
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from neardup.kernels import minhash as kmin
from neardup.kernels import text as ktext
from neardup.kernels.hashing import hash_spans
from neardup.sketch.fingerprint import (
    SIG_HEADER,
    SIG_MAGIC,
    SIG_VERSION,
    FingerprintConfig,
    Fingerprinter,
    Fingerprints,
    corrected_jaccard,
    decode_signature,
    decode_simhash,
    encode_signature,
    encode_simhash,
    truncate_signature,
)
from neardup.sketch.index import IndexLayout, candidate_probability, optimal_bands
from neardup.text.lexicon import TOKEN_SEED
from neardup.text.normalize import normalize_batch
from tests.unit.test_normalize import mixed_text

SLOW = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FAST = settings(max_examples=100, deadline=None)


@pytest.fixture(scope="module")
def fp64() -> Fingerprinter:
    return Fingerprinter(FingerprintConfig())


@pytest.fixture(scope="module")
def fp128() -> Fingerprinter:
    return Fingerprinter(FingerprintConfig(simhash_bits=128, num_perm=64))


def paragraphs(text: str) -> list[str]:
    return [p for p in text.split("\n") if p.strip()]


@pytest.fixture(scope="module")
def dev_docs(datasets_dir: Path) -> list[dict[str, str]]:
    with open(datasets_dir / "docs.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="module")
def en_long_docs(dev_docs: list[dict[str, str]]) -> list[dict[str, str]]:
    """English development documents of at least 8 paragraphs."""
    docs = [d for d in dev_docs if d["lang"] == "en" and len(paragraphs(d["text"])) >= 8]
    if len(docs) < 20:
        pytest.skip("too few long English documents in the development set")
    return docs


def row(fps: Fingerprints, i: int) -> tuple[object, ...]:
    return (fps.texts[i], fps.langs[i], fps.content_hashes[i], fps.simhash[i].tolist(),
            fps.signatures[i].tolist(), int(fps.shingle_counts[i]), fps.shingle_kind[i], fps.lengths[i])


# --------------------------------------------------------------------------------------------
# batching
# --------------------------------------------------------------------------------------------

ZH_SAMPLES = ["国务院关于批准城市规划的通知", "這是一個測試。", "股价上涨了5%", "中", ""]
EN_SAMPLES = ["The bank raised rates.", "it was not approved", "a", "  ", "Prices fell 3.5% in May."]
doc_text = st.one_of(mixed_text, st.sampled_from(ZH_SAMPLES + EN_SAMPLES))


def check_batch_equals_single(fp: Fingerprinter, texts: list[str], langs: list[str | None] | None) -> None:
    batch = fp.fingerprint(texts, langs)
    assert len(batch) == len(texts)
    for i, text in enumerate(texts):
        alone = fp.fingerprint([text], [langs[i]] if langs else None)
        assert row(batch, i) == row(alone, 0), i


@SLOW
@given(st.lists(doc_text, max_size=8))
def test_batch_equals_one_by_one(texts: list[str]) -> None:
    check_batch_equals_single(Fingerprinter(FingerprintConfig()), texts, None)


@SLOW
@given(st.lists(st.tuples(doc_text, st.sampled_from([None, "zh", "en", "other", "xx"])), max_size=6))
def test_batch_equals_one_by_one_with_langs_128(pairs: list[tuple[str, str | None]]) -> None:
    fp = Fingerprinter(FingerprintConfig(simhash_bits=128, num_perm=64))
    check_batch_equals_single(fp, [t for t, _ in pairs], [lang for _, lang in pairs])


def test_batch_of_real_documents(fp64: Fingerprinter, dev_docs: list[dict[str, str]]) -> None:
    rng = random.Random(7)
    docs = rng.sample(dev_docs, 24)
    texts = [d["text"] for d in docs]
    batch = fp64.fingerprint(texts)
    assert batch.langs == [d["lang"] for d in docs]
    for i, text in enumerate(texts):
        assert row(batch, i) == row(fp64.fingerprint([text]), 0)
    # the window's order does not matter either
    order = list(range(len(texts)))
    rng.shuffle(order)
    shuffled = fp64.fingerprint([texts[i] for i in order])
    for j, i in enumerate(order):
        assert row(shuffled, j) == row(batch, i)


def test_empty_window_and_empty_documents(fp64: Fingerprinter) -> None:
    assert len(fp64.fingerprint([])) == 0
    fps = fp64.fingerprint(["", "   ", "。，！"])
    assert (fps.signatures == kmin.EMPTY).all()
    assert fps.shingle_counts.tolist() == [0, 0, 0]
    assert fps.simhash.tolist() == [[0], [0], [0]]


# --------------------------------------------------------------------------------------------
# paragraph order
# --------------------------------------------------------------------------------------------

def word_shingles(fp: Fingerprinter, text: str) -> set[int]:
    """The English shingle set the Fingerprinter MinHashes (word 3-grams)."""
    b = normalize_batch([text])
    starts, ends, off = ktext.word_spans(b.cps, b.offsets, fp.classes)
    toks = hash_spans(b.cps, starts, ends, TOKEN_SEED)
    sh, _ = ktext.word_shingle_hashes(toks, off, fp.config.en_shingle, 0x5EED)
    return set(sh.tolist())


def jaccard(fp: Fingerprinter, a: str, b: str) -> float:
    fps = fp.fingerprint([a, b])
    return float(kmin.jaccard_estimates(fps.signatures[0], fps.signatures[1:])[0])


def test_reordering_paragraphs_keeps_jaccard_high(fp64: Fingerprinter,
                                                   en_long_docs: list[dict[str, str]]) -> None:
    """>= 8 paragraphs of real text, shuffled: the MinHash estimate stays >= 0.8.

    A shuffle can only break the word 3-grams that straddle a paragraph boundary, 2 per boundary,
    so the exact Jaccard is >= (S - 2(n-1)) / (S + 2(n-1)) for S shingles and n paragraphs. With
    at least 30 shingles per paragraph that bound is ~0.875, leaving 128 permutations room for
    their sampling error (sd ~0.03). Documents of many short paragraphs (S < 18 (n-1)) can fall
    below 0.8 for real, not by estimation error: test_reordering_bound covers them."""
    rng = random.Random(2024)
    docs = [d for d in en_long_docs
            if len(word_shingles(fp64, d["text"])) >= 30 * len(paragraphs(d["text"]))]
    assert len(docs) >= 20
    worst = (1.0, "")
    for d in docs:
        paras = paragraphs(d["text"])
        for _ in range(2):
            shuffled = paras[:]
            while shuffled == paras:
                rng.shuffle(shuffled)
            worst = min(worst, (jaccard(fp64, d["text"], "\n".join(shuffled)), d["id"]))
    assert worst[0] >= 0.8, f"lowest estimate {worst[0]:.3f} ({worst[1]}) over {len(docs)} documents"


@SLOW
@given(st.data())
def test_reordering_bound(fp64: Fingerprinter, en_long_docs: list[dict[str, str]], data: st.DataObject) -> None:
    """Any long English document, any paragraph order: the exact Jaccard of the shingle sets is
    at least the straddling-shingle bound, and the MinHash estimate is within 0.15 of it."""
    fp = fp64
    d = data.draw(st.sampled_from(en_long_docs))
    paras = paragraphs(d["text"])
    shuffled = data.draw(st.permutations(paras))
    a, b = word_shingles(fp, d["text"]), word_shingles(fp, "\n".join(shuffled))
    exact = len(a & b) / len(a | b)
    cut = 2 * (len(paras) - 1)
    assert exact >= (len(a) - cut) / (len(a) + cut) - 1e-12
    est = jaccard(fp, d["text"], "\n".join(shuffled))
    assert abs(est - exact) <= 0.15, (d["id"], est, exact)


# --------------------------------------------------------------------------------------------
# byte formats
# --------------------------------------------------------------------------------------------

@FAST
@given(hnp.arrays(np.uint32, st.integers(1, 300)), st.sampled_from([b"c", b"w"]), st.integers(1, 255),
       st.integers(0, 2**32 - 1), st.sampled_from([4, 8, 16, 32]), st.sampled_from(["one_permutation", "permutations"]))
def test_signature_round_trip(sig: np.ndarray, kind: bytes, size: int, seed: int, bits: int, family: str) -> None:
    data = encode_signature(sig, kind, size, seed, bits, family)
    assert len(data) == SIG_HEADER.size + (bits * sig.shape[0] + 7) // 8
    assert data[:2] == SIG_MAGIC and data[2] == SIG_VERSION
    back, k, s, sd, b, f = decode_signature(data)
    assert back.dtype == np.uint32 and back.tolist() == (sig & np.uint32((1 << bits) - 1)).tolist()
    assert (k, s, sd, b, f) == (kind, size, seed, bits, family)


@pytest.mark.parametrize(("bits", "body"), [
    (4, bytes([0x81, 0xF0])),  # low nibbles 8, 1, f; the odd count pads a zero nibble
    (8, bytes([0x78, 0x01, 0x0F])),
    (16, bytes([0x56, 0x78, 0xEF, 0x01, 0x00, 0x0F])),
    (32, bytes([0x12, 0x34, 0x56, 0x78, 0xAB, 0xCD, 0xEF, 0x01, 0x00, 0x00, 0x00, 0x0F])),
])
def test_signature_known_answers(bits: int, body: bytes) -> None:
    """The stored byte format, spelled out: a change here breaks every stored signature."""
    sig = np.array([0x12345678, 0xABCDEF01, 0x0000000F], dtype=np.uint32)
    head = b"NM" + bytes([3]) + b"c" + bytes([5]) + (3).to_bytes(2, "big") + (1).to_bytes(4, "big") + bytes([bits])
    want = (sig & np.uint32((1 << bits) - 1 if bits < 32 else 0xFFFFFFFF)).tolist()
    for family, code in (("permutations", 0), ("one_permutation", 1)):
        data = encode_signature(sig, b"c", 5, 1, bits, family)
        assert data == head + bytes([code]) + body
        assert decode_signature(data).values.tolist() == want
        assert decode_signature(data).family == family
    # v2, written before the family byte, was k permutations
    v2 = b"NM" + bytes([2]) + head[3:] + body
    assert decode_signature(v2).values.tolist() == want and decode_signature(v2).family == "permutations"


def test_four_bit_signature_rejects_truncated_data() -> None:
    data = encode_signature(np.arange(5, dtype=np.uint32), b"c", 5, 1, 4)  # 3 body bytes
    with pytest.raises(ValueError):
        decode_signature(data[:-1])


def test_b_bit_jaccard_estimates_agree_with_full_signatures() -> None:
    rng = np.random.default_rng(7)
    fp = Fingerprinter(FingerprintConfig())
    base = [f"w{int(x)}" for x in rng.integers(0, 10**9, 400)]
    texts = [" ".join(base)] + [" ".join(base[: int(len(base) * f)] + [f"z{i}" for i in range(int(400 * (1 - f)))])
                                for f in (0.95, 0.8, 0.6, 0.4, 0.2)]
    fps = fp.fingerprint(texts)
    full = [float(np.mean(fps.signatures[0] == fps.signatures[i])) for i in range(1, len(texts))]
    # chance agreement 2^-b: the corrected estimate strays at most about that far from the full one
    for bits, tolerance in ((4, 0.08), (8, 0.03), (16, 0.01)):
        a = truncate_signature(fps.signatures[0], bits)
        est = [corrected_jaccard(float(np.mean(a == truncate_signature(fps.signatures[i], bits))), bits)
               for i in range(1, len(texts))]
        assert max(abs(x - y) for x, y in zip(est, full, strict=True)) < tolerance


@FAST
@given(hnp.arrays(np.uint32, st.integers(1, 64)), st.binary(min_size=2, max_size=2), st.integers(0, 255))
def test_signature_rejects_wrong_header(sig: np.ndarray, magic: bytes, version: int) -> None:
    data = bytearray(encode_signature(sig, b"w", 3, 1))
    data[:2] = magic
    data[2] = version
    if magic == SIG_MAGIC and version in (1, 2, SIG_VERSION):
        decode_signature(bytes(data))  # v1 (no bits byte) and v2 (no family byte) are still read
    else:
        with pytest.raises(ValueError):
            decode_signature(bytes(data))


def test_signature_rejects_truncated_data() -> None:
    data = encode_signature(np.arange(16, dtype=np.uint32), b"c", 5, 1)
    with pytest.raises((ValueError, struct.error)):
        decode_signature(data[:-1])
    with pytest.raises((ValueError, struct.error)):
        decode_signature(data[: SIG_HEADER.size - 1])


def test_fingerprinter_signature_header(fp64: Fingerprinter) -> None:
    fps = fp64.fingerprint(["国务院关于批准城市规划的通知", "The bank raised interest rates today."])
    for i, (kind, size) in enumerate([(b"c", 5), (b"w", 3)]):
        sig, k, s, seed, bits, family = decode_signature(fp64.encode_signature(fps, i))
        assert (k, s, seed, bits, family) == (kind, size, 1, 8, fp64.config.minhash_family)
        assert sig.tolist() == (fps.signatures[i] & np.uint32(0xFF)).tolist()


@FAST
@given(hnp.arrays(np.uint64, st.sampled_from([1, 2])))
def test_simhash_round_trip(words: np.ndarray) -> None:
    data = encode_simhash(words)
    assert len(data) == 8 * words.shape[0]
    assert int.from_bytes(data, "big") == sum(int(w) << (64 * (len(words) - 1 - i)) for i, w in enumerate(words))
    assert decode_simhash(data).tolist() == words.tolist()


# --------------------------------------------------------------------------------------------
# LSH bands
# --------------------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.floats(0.25, 0.7), st.sampled_from([32, 64, 128, 256]))
def test_optimal_bands_s_curve(threshold: float, num_perm: int) -> None:
    bands, rows = optimal_bands(threshold, num_perm)
    assert bands >= 1 and rows >= 1 and bands * rows <= num_perm
    assert candidate_probability(0.1, bands, rows) < 0.5
    assert candidate_probability(threshold + 0.3, bands, rows) > 0.9
    grid = [candidate_probability(s, bands, rows) for s in np.linspace(0, 1, 21)]
    assert grid == sorted(grid) and grid[0] == 0.0 and grid[-1] == 1.0


@pytest.mark.parametrize("num_perm", [64, 128, 256])
@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7, 0.8])
def test_layout_uses_optimal_bands(num_perm: int, threshold: float) -> None:
    layout = IndexLayout.create(64, 3, num_perm, threshold)
    assert (layout.bands, layout.rows) == optimal_bands(threshold, num_perm)
    assert layout.bands * layout.rows <= num_perm


def test_band_keys_share_all_bands_but_the_changed_one() -> None:
    layout = IndexLayout.create(64, 3, 128, 0.5)
    rng = np.random.default_rng(3)
    sig = rng.integers(0, 2**31 - 1, size=(1, 128), dtype=np.uint32)
    other = sig.copy()
    other[0, 2 * layout.rows] ^= 1  # a row of band 2
    a, b = layout.band_keys(np.vstack([sig, other]))
    assert len(a) == layout.bands and all(0 < k < 2**64 for k in a)
    assert [x == y for x, y in zip(a, b, strict=True)] == [j != 2 for j in range(layout.bands)]
    assert len(set(a)) == layout.bands  # the band number keeps equal band values apart


# --------------------------------------------------------------------------------------------
# SimHash blocks (pigeonhole)
# --------------------------------------------------------------------------------------------

def flip(words: np.ndarray, bits: list[int]) -> np.ndarray:
    value = 0
    for w in words.tolist():
        value = (value << 64) | int(w)
    for b in bits:
        value ^= 1 << b
    n = words.shape[0]
    return np.array([(value >> (64 * (n - 1 - i))) & ((1 << 64) - 1) for i in range(n)], dtype=np.uint64)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([64, 128]), st.integers(0, 12), st.data())
def test_within_radius_share_a_key(bits: int, radius: int, data: st.DataObject) -> None:
    layout = IndexLayout(bits, radius, 16, 8)
    words = data.draw(hnp.arrays(np.uint64, bits // 64))
    k = data.draw(st.integers(0, radius))
    flipped = data.draw(st.lists(st.integers(0, bits - 1), min_size=k, max_size=k, unique=True))
    a, b = layout.simhash_keys(words), layout.simhash_keys(flip(words, flipped))
    assert len(a) == radius + 1
    assert set(a) & set(b), (radius, flipped)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([64, 128]), st.integers(1, 12), st.data())
def test_one_flip_per_block_shares_no_key(bits: int, radius: int, data: st.DataObject) -> None:
    """The radius is tight: radius + 1 flips, one in each block, leave no key in common."""
    layout = IndexLayout(bits, radius, 16, 8)
    words = data.draw(hnp.arrays(np.uint64, bits // 64))
    # bit positions count from the most significant bit in block_bounds, from the least in flip()
    flipped = [bits - 1 - (start + data.draw(st.integers(0, width - 1))) for start, width in layout.block_bounds()]
    a, b = layout.simhash_keys(words), layout.simhash_keys(flip(words, flipped))
    assert not set(a) & set(b)


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("radius", [0, 1, 3, 6, 7, 10])
def test_blocks_partition_the_fingerprint(bits: int, radius: int) -> None:
    bounds = IndexLayout(bits, radius, 1, 1).block_bounds()
    assert len(bounds) == radius + 1
    assert bounds[0][0] == 0 and sum(w for _, w in bounds) == bits
    assert all(s1 + w1 == s2 for (s1, w1), (s2, _) in itertools.pairwise(bounds))
    assert max(w for _, w in bounds) - min(w for _, w in bounds) <= 1


def test_real_fingerprints_within_radius_share_a_key(fp64: Fingerprinter) -> None:
    layout = IndexLayout(64, 3, 16, 8)
    rng = np.random.default_rng(5)
    fps = fp64.fingerprint(["国务院关于批准城市规划的通知", "Prices fell 3.5% in May, the office said."])
    for words in fps.simhash:
        for _ in range(50):
            k = int(rng.integers(0, 4))
            bits = rng.choice(64, size=k, replace=False).tolist()
            assert set(layout.simhash_keys(words)) & set(layout.simhash_keys(flip(words, bits)))
