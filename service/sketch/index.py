"""Candidate index maths (pure): SimHash blocks, MinHash LSH bands, the keys a store files them under.

- SimHash: a Hamming radius k splits the fingerprint into k+1 blocks; two fingerprints within k
  bits agree on at least one block (pigeonhole), so every such pair shares a key.
- MinHash: (bands, rows) minimise the weighted false-positive and false-negative areas of the
  S-curve 1-(1-s^r)^b around the Jaccard threshold, as datasketch does.

Index keys are uint64 (0 means "no key"): a block key is fmix64 of the block value mixed with its
block number, a band key the band's 64-bit hash (band number mixed in). A document without
shingles gets no keys: it has nothing comparable (it can still be an exact copy).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from neardup.kernels import excerpt as kexc
from neardup.kernels.minhash import band_hashes

BAND_SEED = 0xBA4D


def _integrate(f: npt.NDArray[np.float64], x: npt.NDArray[np.float64]) -> float:
    return float(np.sum((f[1:] + f[:-1]) * np.diff(x)) / 2.0)


@lru_cache(maxsize=32)
def optimal_bands(threshold: float, num_perm: int, fp_weight: float = 0.5,
                  fn_weight: float = 0.5) -> tuple[int, int]:
    """(bands, rows) with bands * rows <= num_perm minimising weighted FP + FN probability."""
    best = (1, num_perm)
    best_err = float("inf")
    lo = np.linspace(0.0, threshold, 200)
    hi = np.linspace(threshold, 1.0, 200)
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = _integrate(1.0 - (1.0 - lo**r) ** b, lo)
            fn = _integrate((1.0 - hi**r) ** b, hi)
            err = fp_weight * fp + fn_weight * fn
            if err < best_err:
                best_err, best = err, (b, r)
    return best


def candidate_probability(s: float, bands: int, rows: int) -> float:
    """Probability that a pair of Jaccard ``s`` shares at least one band."""
    return 1.0 - (1.0 - s**rows) ** bands


@dataclass(frozen=True, slots=True)
class IndexLayout:
    """Where a document is filed: SimHash blocks and LSH bands (``bands`` x ``rows``)."""

    simhash_bits: int
    hamming_radius: int
    bands: int
    rows: int

    @classmethod
    def create(cls, simhash_bits: int, hamming_radius: int, num_perm: int, threshold: float,
               fp_weight: float = 0.5, fn_weight: float = 0.5) -> IndexLayout:
        """The layout with the optimal bands for ``threshold`` (see :func:`optimal_bands`)."""
        b, r = optimal_bands(threshold, num_perm, fp_weight, fn_weight)
        return cls(simhash_bits, hamming_radius, b, r)

    def block_bounds(self) -> list[tuple[int, int]]:
        """(start bit, width) of each SimHash block, most significant first."""
        n = self.hamming_radius + 1
        base, extra = divmod(self.simhash_bits, n)
        out: list[tuple[int, int]] = []
        start = 0
        for i in range(n):
            width = base + (1 if i < extra else 0)
            out.append((start, width))
            start += width
        return out

    @property
    def width(self) -> int:
        """Index keys per document."""
        return self.hamming_radius + 1 + self.bands

    def block_values(self, simhash: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
        """(n, blocks) block values of SimHash rows (n, words), most significant block first."""
        n = simhash.shape[0]
        bounds = self.block_bounds()
        out = np.zeros((n, len(bounds)), dtype=np.uint64)
        if simhash.shape[1] == 1:
            col = simhash[:, 0]
            for i, (start, width) in enumerate(bounds):
                shift = np.uint64(64 - start - width)
                out[:, i] = (col >> shift) & np.uint64((1 << width) - 1)
            return out
        for r in range(n):  # 128-bit: Python ints (blocks may straddle the two words)
            value = 0
            for w in simhash[r].tolist():
                value = (value << 64) | int(w)
            for i, (start, width) in enumerate(bounds):
                out[r, i] = (value >> (self.simhash_bits - start - width)) & ((1 << width) - 1) & MASK64
        return out

    def simhash_keys(self, fp_words: npt.NDArray[np.uint64]) -> list[int]:
        """Block keys of one SimHash."""
        return [int(k) for k in self.window_keys(fp_words[None, :], None)[0]]

    def band_keys(self, signatures: npt.NDArray[np.uint32]) -> list[list[int]]:
        """Band keys per signature row."""
        return [[int(k) for k in row] for row in _nonzero(band_hashes(signatures, self.bands, self.rows, BAND_SEED))]

    def window_keys(self, simhash: npt.NDArray[np.uint64], signatures: npt.NDArray[np.uint32] | None,
                    comparable: npt.NDArray[np.bool_] | None = None) -> npt.NDArray[np.uint64]:
        """(n, width) index keys of a window: SimHash blocks, then LSH bands (when signatures are
        given); rows not ``comparable`` (no shingles) get only zeros."""
        blocks = self.block_values(simhash)
        salt = (np.arange(1, blocks.shape[1] + 1, dtype=np.uint64) * np.uint64(GOLDEN))[None, :]
        parts = [_nonzero(fmix64(blocks ^ salt))]
        if signatures is not None:
            parts.append(_nonzero(band_hashes(signatures, self.bands, self.rows, BAND_SEED)))
        keys = np.ascontiguousarray(np.hstack(parts))
        if comparable is not None:
            keys[~comparable] = 0
        return keys


EXCERPT_SALT = 0x5E47E4CE0E1C3A11
EXCERPT_WINDOW = 3  # every run of this many whole sentences has a key of its own (winnowing)
EXCERPT_LEAD = 2  # the first sentences always have keys: a page that cuts an article keeps its lead


def excerpt_keys(contexts: list[list[int]], cap: int, window: int = EXCERPT_WINDOW) -> npt.NDArray[np.uint64]:
    """(n, cap) keys a document is filed under for its excerpts: its sentences' hashes (contexts
    in text order), winnowed: of every ``window`` sentences in a row, the one with the smallest
    hash. A run of ``window`` whole sentences of an article, wherever a page cuts it, picks the
    same one as the article, so an excerpt that keeps that many finds it. The first
    ``EXCERPT_LEAD`` sentences are picked too (a lead cut short may keep fewer whole sentences than
    a window), and the first ``cap`` picks in text order are kept (a lead or an early passage:
    the excerpts pages take). 0: no key."""
    offsets = np.zeros(len(contexts) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in contexts], out=offsets[1:])
    flat = np.fromiter((x for c in contexts for x in c), dtype=np.uint64, count=int(offsets[-1]))
    hashes = _nonzero(fmix64(flat ^ np.uint64(EXCERPT_SALT)))
    out: npt.NDArray[np.uint64] = kexc.winnowed(hashes, offsets, window, EXCERPT_LEAD, cap)
    return out


IMAGE_SALT = 0x1CA9E5B10C6A11D5  # image keys live in a key space of their own: never a text key's
IMAGE_BLOCKS = 4
IMAGE_BLOCK_BITS = 16


def image_keys(phashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """(m, 4) keys an image is filed under: its 64-bit pHash's four 16-bit blocks, each with its
    place (multi-index hashing). Two hashes within 3 bits share a block (pigeonhole); farther
    pairs share one when their differing bits bunch, as a photograph's changed copy's do
    (docs/media.md); a candidate is a proposal, its Hamming distance decides."""
    h = np.asarray(phashes, dtype=np.uint64).reshape(-1, 1)
    shifts = np.arange(IMAGE_BLOCKS - 1, -1, -1, dtype=np.uint64) * np.uint64(IMAGE_BLOCK_BITS)
    blocks = (h >> shifts[None, :]) & np.uint64((1 << IMAGE_BLOCK_BITS) - 1)
    places = (np.arange(IMAGE_BLOCKS, dtype=np.uint64) << np.uint64(IMAGE_BLOCK_BITS))[None, :]
    return _nonzero(fmix64((blocks | places) ^ np.uint64(IMAGE_SALT)))


MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def fmix64(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """MurmurHash3's 64-bit finaliser, elementwise (a bijection: distinct inputs stay distinct)."""
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xFF51AFD7ED558CCD)
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xC4CEB9FE1A85EC53)
    return x ^ (x >> np.uint64(33))


def _nonzero(keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """0 marks "no key": a real key that hashes to 0 becomes 1."""
    keys = keys.copy()
    keys[keys == 0] = 1
    return keys
