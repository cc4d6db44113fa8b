"""Image hashes over batches of small grayscale arrays: the DCT perceptual hash and the difference hash.

Both are the ``imagehash`` package's algorithms (``phash`` with hash_size 8 and highfreq_factor 4,
``dhash`` with hash_size 8) on pixels the caller has already decoded and resized:

- pHash: the 2-D DCT-II of a 32x32 image, its top-left 8x8 coefficients, each bit 1 where the
  coefficient is above their median;
- dHash: a 9-wide, 8-high image, each bit 1 where a pixel is brighter than its left neighbour.

Bits are packed row-major with the first bit as the most significant, so ``f"{h:016x}"`` is the
hex string ``str(imagehash.phash(...))`` prints. The DCT is a product with a fixed cosine basis in
plain loops (no BLAS, no fastmath): the same sums in the same order, so the same bits on every
machine.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Coefficients are kept as whole millionths: a coefficient that is zero in exact arithmetic (every
# one but the first of a flat image, most of a one-way gradient's) then is zero, as scipy's FFT
# gives it to imagehash, instead of its rounding noise (1e-10 here) deciding a bit; two coefficients
# equal in exact arithmetic (a symmetric image's) tie the same way. Coefficients reach 1e6, so the
# scaled values stay exact integers in float64.
SCALE = 1e6
PHASH_SIDE = 32  # the image side the DCT runs over (imagehash: hash_size 8 x highfreq_factor 4)
HASH_SIDE = 8  # 8x8 coefficients or differences: 64 bits
DHASH_WIDTH = HASH_SIDE + 1


def dct_basis() -> np.ndarray:
    """The first 8 rows of the unnormalised DCT-II matrix of size 32 (``scipy.fftpack.dct``'s scale).

    Row k, column n: 2 cos(pi k (2n + 1) / 64). Only 8 rows are needed: the hash keeps the 8x8
    lowest frequencies.
    """
    k = np.arange(HASH_SIDE, dtype=np.float64)[:, None]
    n = np.arange(PHASH_SIDE, dtype=np.float64)[None, :]
    return 2.0 * np.cos(np.pi * k * (2.0 * n + 1.0) / (2.0 * PHASH_SIDE))


@njit(nogil=True, cache=True)
def _low_frequencies(pixels, basis):
    """C X C^T restricted to the top-left 8x8, for one 32x32 image (C: the 8x32 basis)."""
    rows = np.zeros((HASH_SIDE, PHASH_SIDE), dtype=np.float64)  # C X: the DCT down each column
    for k in range(HASH_SIDE):
        for j in range(PHASH_SIDE):
            acc = 0.0
            for i in range(PHASH_SIDE):
                acc += basis[k, i] * np.float64(pixels[i, j])
            rows[k, j] = acc
    low = np.zeros(HASH_SIDE * HASH_SIDE, dtype=np.float64)  # (C X) C^T: then along each row
    for k in range(HASH_SIDE):
        for m in range(HASH_SIDE):
            acc = 0.0
            for j in range(PHASH_SIDE):
                acc += rows[k, j] * basis[m, j]
            low[k * HASH_SIDE + m] = np.rint(acc * SCALE)
    return low


@njit(nogil=True, cache=True)
def _phash_bits(low):
    """The 64 bits of a pHash: a bit per coefficient of ``low`` above their median, first bit highest."""
    middle = HASH_SIDE * HASH_SIDE // 2
    ordered = np.sort(low)
    median = (ordered[middle - 1] + ordered[middle]) / 2.0  # numpy.median of an even count
    h = np.uint64(0)
    for b in range(HASH_SIDE * HASH_SIDE):
        h = (h << np.uint64(1)) | np.uint64(1 if low[b] > median else 0)
    return h


@njit(nogil=True, cache=True)
def phash_batch(pixels, basis):
    """64-bit pHash of each 32x32 uint8 image in ``pixels`` (n, 32, 32); ``basis`` from :func:`dct_basis`."""
    n = pixels.shape[0]
    out = np.zeros(n, dtype=np.uint64)
    for d in range(n):
        out[d] = _phash_bits(_low_frequencies(pixels[d], basis))
    return out


@njit(nogil=True, cache=True)
def _structure(pixels, low):
    """Percent (0..100, rounded down) of one 32x32 image's variance that lies beyond the 8x8
    lowest frequencies its pHash reads; 0 for a flat image.

    By Parseval the orthonormal DCT keeps the pixels' energy, so the variance (the energy beyond
    the DC coefficient) is the pixels' own, and the part the hash reads is ``low`` rescaled from
    scipy's unnormalised DCT-II to the orthonormal one (a factor 1/(4N) per axis on the first
    coefficient, 1/(2N) on the others)."""
    total = 0.0
    mean_sum = 0.0
    for i in range(PHASH_SIDE):
        for j in range(PHASH_SIDE):
            p = np.float64(pixels[i, j])
            total += p * p
            mean_sum += p
    variance = total - mean_sum * mean_sum / (PHASH_SIDE * PHASH_SIDE)
    if variance <= 0.0:
        return 0
    read = 0.0
    for k in range(HASH_SIDE):
        for m in range(HASH_SIDE):
            if k == 0 and m == 0:
                continue
            wk = 0.25 if k == 0 else 0.5
            wm = 0.25 if m == 0 else 0.5
            c = low[k * HASH_SIDE + m] / SCALE
            read += c * c * wk * wm / (PHASH_SIDE * PHASH_SIDE)
    beyond = 1.0 - read / variance
    return int(np.floor(100.0 * min(1.0, max(0.0, beyond))))


@njit(nogil=True, cache=True)
def phash_structure_batch(pixels, basis):
    """:func:`phash_batch`'s hashes and, from the same coefficients, each image's structure
    (:func:`_structure`: the percent of its variance beyond the frequencies the hash reads), as
    uint64 and uint8 arrays of n."""
    n = pixels.shape[0]
    hashes = np.zeros(n, dtype=np.uint64)
    structure = np.zeros(n, dtype=np.uint8)
    for d in range(n):
        low = _low_frequencies(pixels[d], basis)
        hashes[d] = _phash_bits(low)
        structure[d] = _structure(pixels[d], low)
    return hashes, structure


@njit(nogil=True, cache=True)
def dhash_batch(pixels):
    """64-bit dHash of each 8-high, 9-wide uint8 image in ``pixels`` (n, 8, 9)."""
    n = pixels.shape[0]
    out = np.zeros(n, dtype=np.uint64)
    for d in range(n):
        h = np.uint64(0)
        for r in range(HASH_SIDE):
            for c in range(HASH_SIDE):
                h = (h << np.uint64(1)) | np.uint64(1 if pixels[d, r, c + 1] > pixels[d, r, c] else 0)
        out[d] = h
    return out


@njit(nogil=True, cache=True)
def view_phash_batch(bases, rows, row_of, columns):
    """64-bit pHash-like hash of each view of each image: ``bases`` (n, S, S) float64 images,
    ``rows`` (r, 8, S) the distinct products of the DCT basis with a view's resampling down
    (``row_of[v]``: view v's), ``columns`` (views, S, 8) those across, transposed. A view's 8x8
    low frequencies are ``rows[row_of[v]] B columns[v]``; the first product is made once for the
    views that share it (a crop of the left edge resamples no row). A bit per coefficient above
    their median, packed as :func:`phash_batch` packs. Plain loops in a fixed order, so the same
    bits on every machine, and no BLAS thread pool."""
    n = bases.shape[0]
    views = columns.shape[0]
    distinct = rows.shape[0]
    side = bases.shape[1]
    out = np.zeros((n, views), dtype=np.uint64)
    middle = HASH_SIDE * HASH_SIDE // 2
    across = np.zeros((distinct, HASH_SIDE, side), dtype=np.float64)
    low = np.zeros(HASH_SIDE * HASH_SIDE, dtype=np.float64)
    for d in range(n):
        for u in range(distinct):
            for k in range(HASH_SIDE):  # rows[u] B: each row of the basis down the image's columns
                for j in range(side):
                    across[u, k, j] = 0.0
                for i in range(side):
                    r = rows[u, k, i]
                    for j in range(side):
                        across[u, k, j] += r * bases[d, i, j]
        for v in range(views):
            u = row_of[v]
            for k in range(HASH_SIDE):  # then across each row, eight sums at once (each in j order)
                for m in range(HASH_SIDE):
                    low[k * HASH_SIDE + m] = 0.0
                for j in range(side):
                    a = across[u, k, j]
                    for m in range(HASH_SIDE):
                        low[k * HASH_SIDE + m] += a * columns[v, j, m]
            ordered = np.sort(low)
            median = (ordered[middle - 1] + ordered[middle]) / 2.0
            h = np.uint64(0)
            for b in range(HASH_SIDE * HASH_SIDE):
                h = (h << np.uint64(1)) | np.uint64(1 if low[b] > median else 0)
            out[d, v] = h
    return out
