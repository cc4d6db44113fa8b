"""Code-point kernels: table-driven normalisation, word spans, shingle hashes.

Character classes (bit flags in the uint8 class table built by service/text/normalize.py):
SPACE=1, ALNUM=2 (letters and digits of any script), CJK=4 (Han ideographs), DIGIT=8.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neardup.kernels.hashing import combine, hash_span, per_doc_table

SPACE = 1
ALNUM = 2
CJK = 4
DIGIT = 8

SLOW = -1  # the code point needs full NFKC (expansion or composition): the caller handles it
DROP = -2  # control and zero-width characters


@njit(nogil=True, cache=True, inline="always")
def _normalize_doc(cps, lo, hi, table, classes, out, src, w):
    """Normalise ``cps[lo:hi]`` into ``out`` from ``w`` (and, where ``src`` has room, each output
    character's source offset into ``src``): (the new ``w``, whether a code point needs full NFKC)."""
    limit = table.shape[0]
    slow = False
    pending_space = False
    prev_cjk = False
    emitted = False
    at = 0  # source offset of the character being read (a pending space comes from the first blank)
    for i in range(lo, hi):
        cp = cps[i]
        m = np.int64(cp)
        if cp < limit:
            m = np.int64(table[cp])
        if m == SLOW:
            slow = True
            m = np.int64(cp)
        elif m == DROP:
            continue
        c = classes[m] if m < limit else ALNUM
        if c & SPACE:
            if not pending_space:
                at = i
            pending_space = emitted
            continue
        is_cjk = (c & CJK) != 0
        if pending_space and not (prev_cjk and is_cjk):
            out[w] = 32
            if src.shape[0] > w:
                src[w] = at - lo
            w += 1
        pending_space = False
        out[w] = np.uint32(m)
        if src.shape[0] > w:
            src[w] = i - lo
        w += 1
        emitted = True
        prev_cjk = is_cjk
    return w, slow


@njit(nogil=True, cache=True)
def normalize_batch(cps, offsets, table, classes):
    """Map every code point through ``table``; collapse whitespace runs to one space, drop it
    between two CJK characters and at both ends. Returns (out, out_offsets, slow_flags)."""
    n = offsets.shape[0] - 1
    out = np.empty(cps.shape[0], dtype=np.uint32)
    out_off = np.zeros(n + 1, dtype=np.int64)
    slow = np.zeros(n, dtype=np.bool_)
    no_sources = np.empty(0, dtype=np.int64)
    w = 0
    for d in range(n):
        w, slow[d] = _normalize_doc(cps, offsets[d], offsets[d + 1], table, classes, out, no_sources, w)
        out_off[d + 1] = w
    return out[:w], out_off, slow


@njit(nogil=True, cache=True)
def normalize_sources(cps, table, classes):
    """One text as :func:`normalize_batch` normalises it, with the source offset of each output
    character (evidence quotes the original): (out, sources, whether it needs full NFKC)."""
    out = np.empty(cps.shape[0], dtype=np.uint32)
    src = np.empty(cps.shape[0], dtype=np.int64)
    w, slow = _normalize_doc(cps, 0, cps.shape[0], table, classes, out, src, 0)
    return out[:w], src[:w], slow


@njit(nogil=True, cache=True)
def detect_lang(cps, offsets, classes):
    """0 = zh (Han-dominated), 1 = en (Latin letters), 2 = other."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.int8)
    limit = classes.shape[0]
    for d in range(n):
        cjk = 0
        latin = 0
        for i in range(offsets[d], offsets[d + 1]):
            cp = cps[i]
            if cp < limit and classes[cp] & CJK:
                cjk += 1
            elif (cp >= 65 and cp <= 90) or (cp >= 97 and cp <= 122):
                latin += 1
        if cjk > 0 and cjk * 4 >= latin:
            out[d] = 0
        elif latin > 0:
            out[d] = 1
        else:
            out[d] = 2
    return out


@njit(nogil=True, cache=True)
def word_spans(cps, offsets, classes):
    """Maximal runs of non-CJK letters/digits, per document. Returns (starts, ends, doc_offsets)."""
    n = offsets.shape[0] - 1
    starts = np.empty(cps.shape[0] // 2 + n + 1, dtype=np.int64)
    ends = np.empty_like(starts)
    doc_off = np.zeros(n + 1, dtype=np.int64)
    limit = classes.shape[0]
    k = 0
    for d in range(n):
        start = -1
        for i in range(offsets[d], offsets[d + 1]):
            cp = cps[i]
            c = classes[cp] if cp < limit else ALNUM
            is_word = (c & ALNUM) != 0 and (c & CJK) == 0
            if is_word:
                if start < 0:
                    start = i
            elif start >= 0:
                starts[k] = start
                ends[k] = i
                k += 1
                start = -1
        if start >= 0:
            starts[k] = start
            ends[k] = offsets[d + 1]
            k += 1
        doc_off[d + 1] = k
    return starts[:k], ends[:k], doc_off


@njit(nogil=True, cache=True)
def char_shingle_hashes(cps, offsets, classes, k, seed):
    """Hashes of k-grams over each document's letters and digits (spaces and punctuation are
    skipped, so width, punctuation and line-break changes do not move a shingle). A document
    with fewer than k such characters yields one shingle of all of them (none if it has none)."""
    n = offsets.shape[0] - 1
    buf = np.empty(cps.shape[0], dtype=np.uint32)
    out = np.empty(cps.shape[0] + n, dtype=np.uint64)
    doc_off = np.zeros(n + 1, dtype=np.int64)
    limit = classes.shape[0]
    w = 0
    for d in range(n):
        m = 0
        for i in range(offsets[d], offsets[d + 1]):
            cp = cps[i]
            c = classes[cp] if cp < limit else ALNUM
            if c & ALNUM:
                buf[m] = cp
                m += 1
        if m == 0:
            doc_off[d + 1] = w
            continue
        if m < k:
            out[w] = hash_span(buf, 0, m, seed)
            w += 1
        else:
            for j in range(m - k + 1):
                out[w] = hash_span(buf, j, j + k, seed)
                w += 1
        doc_off[d + 1] = w
    return out[:w], doc_off


@njit(nogil=True, cache=True)
def word_shingle_hashes(token_hashes, doc_offsets, k, seed):
    """Hashes of k consecutive tokens per document (one shingle of all tokens when fewer)."""
    n = doc_offsets.shape[0] - 1
    out = np.empty(token_hashes.shape[0] + n, dtype=np.uint64)
    off = np.zeros(n + 1, dtype=np.int64)
    w = 0
    for d in range(n):
        a = doc_offsets[d]
        b = doc_offsets[d + 1]
        m = b - a
        if m > 0:
            span = k if m >= k else m
            for j in range(a, b - span + 1):
                h = np.uint64(seed) + np.uint64(span)
                for t in range(j, j + span):
                    h = combine(h, token_hashes[t])
                out[w] = h
                w += 1
        off[d + 1] = w
    return out[:w], off


@njit(nogil=True, cache=True)
def distinct_per_doc(hashes, doc_offsets):
    """Each document's distinct values, first occurrence order kept (open-addressing set,
    reused across documents). Returns (values, offsets); offsets[d+1]-offsets[d] is the count."""
    n = doc_offsets.shape[0] - 1
    longest, size = per_doc_table(doc_offsets)
    mask = np.uint64(size - 1)
    slots = np.zeros(size, dtype=np.uint64)
    used = np.zeros(size, dtype=np.bool_)
    touched = np.empty(longest, dtype=np.int64)
    out = np.empty(hashes.shape[0], dtype=np.uint64)
    off = np.zeros(n + 1, dtype=np.int64)
    w = 0
    for d in range(n):
        c = 0
        for s in range(doc_offsets[d], doc_offsets[d + 1]):
            h = hashes[s]
            i = np.int64(h & mask)
            while used[i] and slots[i] != h:
                i = np.int64((np.uint64(i) + np.uint64(1)) & mask)
            if not used[i]:
                used[i] = True
                slots[i] = h
                touched[c] = i
                c += 1
                out[w] = h
                w += 1
        for t in range(c):
            used[touched[t]] = False
        off[d + 1] = w
    return out[:w], off


@njit(nogil=True, cache=True)
def keep_word_spans(cps, starts, ends, doc_offsets, classes):
    """Drop spans with no letter or digit (punctuation, spaces): they carry no content, and as
    weighted features they would pull every document's SimHash the same way."""
    n = doc_offsets.shape[0] - 1
    out_s = np.empty_like(starts)
    out_e = np.empty_like(ends)
    off = np.zeros(n + 1, dtype=np.int64)
    limit = classes.shape[0]
    w = 0
    for d in range(n):
        for t in range(doc_offsets[d], doc_offsets[d + 1]):
            keep = False
            for i in range(starts[t], ends[t]):
                cp = cps[i]
                if cp >= limit or classes[cp] & ALNUM:
                    keep = True
                    break
            if keep:
                out_s[w] = starts[t]
                out_e[w] = ends[t]
                w += 1
        off[d + 1] = w
    return out_s[:w], out_e[:w], off


@njit(nogil=True, cache=True)
def kana_hangul_counts(cps, offsets):
    """Per document, (kana, Hangul) letters: Japanese and Korean marks that a Han- or
    Latin-dominated text may carry, so the language rule above is not the last word on it."""
    n = offsets.shape[0] - 1
    out = np.zeros((n, 2), dtype=np.int64)
    for d in range(n):
        for i in range(offsets[d], offsets[d + 1]):
            cp = cps[i]
            if (cp >= 0x3041 and cp <= 0x30FA) or (cp >= 0x31F0 and cp <= 0x31FF):
                out[d, 0] += 1
            elif (cp >= 0xAC00 and cp <= 0xD7A3) or (cp >= 0x1100 and cp <= 0x11FF):
                out[d, 1] += 1
    return out


@njit(nogil=True, cache=True)
def char_bigram_spans(cps, offsets, classes):
    """Spans of adjacent letter/digit pairs inside each run of letters and digits (any script),
    and a one-character span for a run of one: the SimHash features of a text with no
    segmenter (Japanese, Korean). Returns (starts, ends, doc_offsets)."""
    n = offsets.shape[0] - 1
    starts = np.empty(cps.shape[0] + n, dtype=np.int64)
    ends = np.empty_like(starts)
    doc_off = np.zeros(n + 1, dtype=np.int64)
    limit = classes.shape[0]
    k = 0
    for d in range(n):
        run = 0
        for i in range(offsets[d], offsets[d + 1] + 1):
            is_word = False
            if i < offsets[d + 1]:
                cp = cps[i]
                is_word = cp >= limit or (classes[cp] & ALNUM) != 0
            if is_word:
                run += 1
                if run >= 2:
                    starts[k] = i - 1
                    ends[k] = i + 1
                    k += 1
            else:
                if run == 1:
                    starts[k] = i - 1
                    ends[k] = i
                    k += 1
                run = 0
        doc_off[d + 1] = k
    return starts[:k], ends[:k], doc_off
