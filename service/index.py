"""Candidate index maths (pure): SimHash blocks, MinHash LSH bands, the keys a store files them under.

- SimHash: a Hamming radius k splits the fingerprint into k+1 blocks; two fingerprints within k
  bits agree on at least one block (pigeonhole), so every such pair shares a key.
- MinHash: (bands, rows) minimise the weighted false-positive and false-negative areas of the
  S-curve 1-(1-s^r)^b around the Jaccard threshold, as datasketch does.

Key bytes: b"S" + block number (1 B) + block value (big-endian, whole bytes);
b"M" + band number (1 B) + band hash (8 B).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

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
    return 1.0 - (1.0 - s**rows) ** bands


@dataclass(frozen=True, slots=True)
class IndexLayout:
    simhash_bits: int
    hamming_radius: int
    bands: int
    rows: int

    @classmethod
    def create(cls, simhash_bits: int, hamming_radius: int, num_perm: int, threshold: float,
               fp_weight: float = 0.5, fn_weight: float = 0.5) -> IndexLayout:
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

    def simhash_keys(self, fp_words: npt.NDArray[np.uint64]) -> list[bytes]:
        value = 0
        for w in fp_words.tolist():
            value = (value << 64) | int(w)
        keys: list[bytes] = []
        for i, (start, width) in enumerate(self.block_bounds()):
            shift = self.simhash_bits - start - width
            block = (value >> shift) & ((1 << width) - 1)
            keys.append(b"S" + bytes([i]) + block.to_bytes((width + 7) // 8, "big"))
        return keys

    def band_keys(self, signatures: npt.NDArray[np.uint32]) -> list[list[bytes]]:
        hashes = band_hashes(signatures, self.bands, self.rows, BAND_SEED)
        return [
            [b"M" + bytes([j]) + int(h).to_bytes(8, "big") for j, h in enumerate(row.tolist())]
            for row in hashes
        ]
