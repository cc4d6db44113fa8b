"""Weighted SimHash over token features.

Per document: token hashes with weights (0 = ignore). Equal hashes are merged (distinct
features), a feature's weight is w * (1 + ln tf). A negator token followed by a weighted token
adds a combined feature (negator, token) with weight ``neg_weight`` * the token's weight, so
"不予 批准" is a different, heavy feature from "批准".
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from neardup.kernels.hashing import combine, fmix64, per_doc_table

NEG_SALT = np.uint64(0x5BD1E9955BD1E995)
HI_SALT = np.uint64(0xA0761D6478BD642F)


@njit(nogil=True, cache=True)
def build_hash_table(keys, weights, flags):
    """Open-addressing table (load <= 0.5, linear probing) of distinct non-zero uint64 keys."""
    size = 1
    while size < 2 * keys.shape[0] + 2:
        size *= 2
    mask = np.uint64(size - 1)
    slot_keys = np.zeros(size, dtype=np.uint64)
    slot_weights = np.zeros(size, dtype=np.float64)
    slot_flags = np.zeros(size, dtype=np.uint8)
    slot_used = np.zeros(size, dtype=np.bool_)
    for j in range(keys.shape[0]):
        h = keys[j]
        i = np.int64(h & mask)
        while slot_used[i] and slot_keys[i] != h:
            i = np.int64((np.uint64(i) + np.uint64(1)) & mask)
        slot_used[i] = True
        slot_keys[i] = h
        slot_weights[i] = weights[j]
        slot_flags[i] = flags[j]
    return slot_keys, slot_weights, slot_flags, slot_used


@njit(nogil=True, cache=True)
def feature_weights(token_hashes, doc_offsets, slot_keys, slot_weights, slot_flags, slot_used,
                    default_weight, neg_weight):
    """Look each token up in the weight table (see build_hash_table) and emit (feature hash,
    weight) per doc, adding negation features. flags: 1 = negator."""
    n = doc_offsets.shape[0] - 1
    cap = token_hashes.shape[0] * 2 + 1
    fh = np.empty(cap, dtype=np.uint64)
    fw = np.empty(cap, dtype=np.float64)
    off = np.zeros(n + 1, dtype=np.int64)
    w = 0
    mask = np.uint64(slot_keys.shape[0] - 1)
    for d in range(n):
        prev_neg = False
        for t in range(doc_offsets[d], doc_offsets[d + 1]):
            h = token_hashes[t]
            i = np.int64(h & mask)
            while slot_used[i] and slot_keys[i] != h:
                i = np.int64((np.uint64(i) + np.uint64(1)) & mask)
            weight = default_weight
            flag = 0
            if slot_used[i]:
                weight = slot_weights[i]
                flag = slot_flags[i]
            if weight > 0.0:
                fh[w] = h
                fw[w] = weight
                w += 1
                if prev_neg:
                    fh[w] = combine(h, NEG_SALT)
                    fw[w] = weight * neg_weight
                    w += 1
            prev_neg = (flag & 1) != 0
        off[d + 1] = w
    return fh[:w], fw[:w], off


@njit(nogil=True, cache=True)
def simhash_batch(feature_hashes, feature_weights_, doc_offsets, words):
    """``words`` = 1 (64-bit) or 2 (128-bit). Returns uint64 array (n, words).

    Equal features are merged first (an open-addressing table counting tf), then each distinct
    feature votes w * (1 + ln tf) on every bit, branch-free. Votes are fixed point (1/1024) in
    int64, so the sum is exact and independent of the order features arrive in."""
    n = doc_offsets.shape[0] - 1
    out = np.zeros((n, words), dtype=np.uint64)
    acc = np.zeros(64 * words, dtype=np.int64)
    longest, size = per_doc_table(doc_offsets)
    mask = np.uint64(size - 1)
    slot_h = np.zeros(size, dtype=np.uint64)
    slot_w = np.zeros(size, dtype=np.float64)
    slot_tf = np.zeros(size, dtype=np.int64)
    touched = np.empty(longest, dtype=np.int64)
    for d in range(n):
        lo = doc_offsets[d]
        hi = doc_offsets[d + 1]
        if hi == lo:
            continue
        c = 0
        for s in range(lo, hi):
            h = feature_hashes[s]
            i = np.int64(h & mask)
            while slot_tf[i] > 0 and slot_h[i] != h:
                i = np.int64((np.uint64(i) + np.uint64(1)) & mask)
            if slot_tf[i] == 0:
                slot_h[i] = h
                slot_w[i] = feature_weights_[s]  # the first occurrence's weight, as when sorted
                touched[c] = i
                c += 1
            slot_tf[i] += 1
        acc[:] = 0
        for t in range(c):
            i = touched[t]
            h = slot_h[i]
            vote = np.int64(round(slot_w[i] * (1.0 + math.log(slot_tf[i])) * 1024.0))
            slot_tf[i] = 0
            for wd in range(words):
                hh = h if wd == 0 else fmix64(h ^ HI_SALT)
                base = wd * 64
                for bit in range(64):
                    sign = np.int64((hh >> np.uint64(bit)) & np.uint64(1)) * 2 - 1
                    acc[base + bit] += sign * vote
        for wd in range(words):
            v = np.uint64(0)
            for bit in range(64):
                if acc[wd * 64 + bit] > 0:
                    v |= np.uint64(1) << np.uint64(bit)
            out[d, wd] = v
    return out


@njit(nogil=True, cache=True)
def popcount64(x):
    """Set bits of a 64-bit word (SWAR popcount, no lookup table)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(nogil=True, cache=True)
def hamming_distances(fp, others):
    """Bits that differ between fingerprint ``fp`` (words,) and each row of ``others``."""
    m = others.shape[0]
    out = np.empty(m, dtype=np.int64)
    for j in range(m):
        d = 0
        for wd in range(fp.shape[0]):
            d += popcount64(fp[wd] ^ others[j, wd])
        out[j] = d
    return out
