"""jieba's dictionary segmentation (no HMM) over code points, emitting token spans.

The algorithm is jieba's ``cut(HMM=False)``: text splits into blocks of
``[\u4E00-\u9FD5a-zA-Z0-9+#&._%-]`` and the rest; inside a block every position gets the dictionary
words starting there (its DAG, found through a prefix table), the best route maximises the sum of
log word frequencies (ties to the longer word), and runs of single ASCII letters or digits merge
into one token; outside blocks ``\\r\\n`` is one token and every other character its own.

The prefix table maps hash_span(prefix) -> frequency (0 for a prefix that is not a word), in an
open-addressing table; prefixes are hashed incrementally with the same FNV-1a/fmix64 as
service/kernels/hashing.py, so no string is ever built.

The cut reads a coded copy of it (:func:`coded_tables`): each frequency replaced by its index in a
small table of log probabilities (log(freq) - log(total), computed once, so no log per word found),
and a one-megabyte bit filter of the prefix hashes in front of it. The table (32 MB) is probed at
random and each probe is a cache miss; most probes are for a two-character fragment that is no
prefix of any word (71 % of the positions of the development set), and the filter, which fits in
the core's L2 cache, answers most of those.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from neardup.kernels.hashing import FNV_OFFSET, FNV_PRIME, fmix64


@njit(nogil=True, cache=True, inline="always")
def _in_block(cp):
    return (
        (cp >= 0x4E00 and cp <= 0x9FD5)
        or (cp >= 97 and cp <= 122)
        or (cp >= 65 and cp <= 90)
        or (cp >= 48 and cp <= 57)
        or cp == 43 or cp == 35 or cp == 38 or cp == 46 or cp == 95 or cp == 37 or cp == 45
    )


@njit(nogil=True, cache=True, inline="always")
def _is_ascii_alnum(cp):
    return (cp >= 97 and cp <= 122) or (cp >= 65 and cp <= 90) or (cp >= 48 and cp <= 57)


@njit(nogil=True, cache=True)
def build_prefix_table(word_cps, word_offsets, freqs):
    """(table, max word length) from dictionary words in file order. ``table`` is (size, 2) uint64:
    column 0 the prefix hash (0 = empty slot), column 1 its frequency; key and value share a cache
    line, so a probe costs one memory access."""
    n = word_offsets.shape[0] - 1
    total_prefixes = word_offsets[n]
    size = 1
    while size < 2 * total_prefixes + 2:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.zeros((size, 2), dtype=np.uint64)
    longest = 1
    for w in range(n):
        a = word_offsets[w]
        b = word_offsets[w + 1]
        longest = max(longest, b - a)
        h = FNV_OFFSET
        for i in range(a, b):
            h ^= np.uint64(word_cps[i])
            h *= FNV_PRIME
            key = _prefix_key(h, i - a + 1)
            s = np.int64(key & mask)
            while table[s, 0] != 0 and table[s, 0] != key:
                s = np.int64((np.uint64(s) + np.uint64(1)) & mask)
            if i == b - 1:
                table[s, 0] = key  # the word itself: its frequency, the last line winning
                table[s, 1] = np.uint64(freqs[w])
            elif table[s, 0] == 0:
                table[s, 0] = key  # a prefix not seen before: frequency 0
                table[s, 1] = 0
    return table, longest


FILTER_BITS = 23  # 2^23 bits (1 MB): about 6 % false positives for jieba's 500 thousand prefixes


@njit(nogil=True, cache=True)
def coded_tables(table, log_total):
    """(coded table, log probabilities, prefix filter) from a prefix table: the coded table holds,
    instead of a frequency f, the index of log(f) - log_total in the log probabilities (index 0 is
    frequency 0, a prefix only); the filter has bit (key >> (64 - FILTER_BITS)) set for every key."""
    size = table.shape[0]
    used = 0
    for s in range(size):
        if table[s, 0] != 0:
            used += 1
    freqs = np.zeros(used + 1, dtype=np.uint64)  # a leading 0: index 0 is always frequency 0
    j = 1
    for s in range(size):
        if table[s, 0] != 0:
            freqs[j] = table[s, 1]
            j += 1
    distinct = np.unique(freqs)
    logs = np.zeros(distinct.shape[0], dtype=np.float64)
    for i in range(1, distinct.shape[0]):
        logs[i] = math.log(np.int64(distinct[i])) - log_total  # as the cut computed it per word
    coded = table.copy()
    bloom = np.zeros((1 << FILTER_BITS) // 64, dtype=np.uint64)
    shift = np.uint64(64 - FILTER_BITS)
    for s in range(size):
        key = table[s, 0]
        if key != 0:
            coded[s, 1] = np.uint64(np.searchsorted(distinct, table[s, 1]))
            b = key >> shift
            bloom[b >> np.uint64(6)] |= np.uint64(1) << (b & np.uint64(63))
    return coded, logs, bloom


@njit(nogil=True, cache=True, inline="always")
def _maybe_prefix(bloom, key):
    """False when ``key`` is certainly no prefix hash of the table (the filter's bit is clear)."""
    b = key >> np.uint64(64 - FILTER_BITS)
    return (bloom[b >> np.uint64(6)] >> (b & np.uint64(63))) & np.uint64(1) != 0


@njit(nogil=True, cache=True)
def single_char_table(table):
    """Value (frequency, or its code in a coded table) of every one-character prefix of the Basic
    Multilingual Plane (-1: none), read directly instead of probing the hash table for the first
    character at each position."""
    single = np.full(0x10000, -1, dtype=np.int64)
    for cp in range(0x10000):
        h = FNV_OFFSET
        h ^= np.uint64(cp)
        h *= FNV_PRIME
        single[cp] = _lookup(table, _prefix_key(h, 1))
    return single


@njit(nogil=True, cache=True, inline="always")
def _nonzero(key):
    return key if key != 0 else np.uint64(1)


@njit(nogil=True, cache=True, inline="always")
def _prefix_key(h, length):
    """The table key of a prefix of ``length`` characters whose running FNV hash is ``h``: the one
    definition the table is built and probed by."""
    return _nonzero(fmix64(h ^ np.uint64(length)))


@njit(nogil=True, cache=True, inline="always")
def _lookup(table, key):
    """Frequency of a prefix hash, -1 when it is no prefix of any word."""
    mask = np.uint64(table.shape[0] - 1)
    s = np.int64(key & mask)
    while True:
        k = table[s, 0]
        if k == key:
            return np.int64(table[s, 1])
        if k == 0:
            return np.int64(-1)
        s = np.int64((np.uint64(s) + np.uint64(1)) & mask)


@njit(nogil=True, cache=True)
def _cut_block(cps, lo, hi, table, single, logs, bloom, longest, log_total, starts, ends, w, best, nxt):
    n = hi - lo
    best[n] = 0.0  # scratch arrays shared by all blocks: allocating per block costs more than the cut
    for k in range(n - 1, -1, -1):
        # the DAG of position k: words text[k:i+1] found while the fragment is a known prefix
        h = FNV_OFFSET
        found_any = False
        top = -1e300
        top_end = k
        limit = min(n, k + longest)
        for i in range(k, limit):
            cp = cps[lo + i]
            h ^= np.uint64(cp)
            h *= FNV_PRIME
            if i == k and cp < 0x10000:
                f = single[cp]
            else:
                key = _prefix_key(h, i - k + 1)
                f = _lookup(table, key) if _maybe_prefix(bloom, key) else np.int64(-1)
            if f < 0:
                break
            if f > 0:  # a word: f codes its log probability
                found_any = True
                score = logs[f] + best[i + 1]
                if score >= top:  # ties go to the longer word, as Python's max over (score, end)
                    top = score
                    top_end = i
        if not found_any:
            # only the single character: its frequency counts as 1 (log 1 = 0)
            top = -log_total + best[k + 1]
            top_end = k
        best[k] = top
        nxt[k] = top_end
    x = 0
    buf_start = -1
    while x < n:
        y = nxt[x] + 1
        if y - x == 1 and _is_ascii_alnum(cps[lo + x]):
            if buf_start < 0:
                buf_start = x
        else:
            if buf_start >= 0:
                starts[w] = lo + buf_start
                ends[w] = lo + x
                w += 1
                buf_start = -1
            starts[w] = lo + x
            ends[w] = lo + y
            w += 1
        x = y
    if buf_start >= 0:
        starts[w] = lo + buf_start
        ends[w] = lo + n
        w += 1
    return w


@njit(nogil=True, cache=True)
def segment_batch(cps, offsets, table, single, logs, bloom, longest, log_total):
    """Token spans per document: (starts, ends, doc_offsets). ``table``, ``single``, ``logs`` and
    ``bloom``: :func:`coded_tables` and :func:`single_char_table` of its coded table."""
    n_docs = offsets.shape[0] - 1
    starts = np.empty(cps.shape[0] + 1, dtype=np.int64)
    ends = np.empty(cps.shape[0] + 1, dtype=np.int64)
    doc_off = np.zeros(n_docs + 1, dtype=np.int64)
    best = np.empty(cps.shape[0] + 1, dtype=np.float64)
    nxt = np.empty(cps.shape[0] + 1, dtype=np.int64)
    w = 0
    for d in range(n_docs):
        i = offsets[d]
        end = offsets[d + 1]
        while i < end:
            cp = cps[i]
            if _in_block(cp):
                j = i + 1
                while j < end and _in_block(cps[j]):
                    j += 1
                w = _cut_block(cps, i, j, table, single, logs, bloom, longest, log_total, starts, ends, w, best,
                               nxt)
                i = j
            else:
                j = i + 1
                if cp == 13 and j < end and cps[j] == 10:
                    j += 1  # \r\n is one token
                starts[w] = i
                ends[w] = j
                w += 1
                i = j
        doc_off[d + 1] = w
    return starts[:w], ends[:w], doc_off


@njit(nogil=True, cache=True)
def word_codes(cps, starts, ends, table):
    """Each token's value in a coded table (``coded_tables``: the index of its log probability),
    0 for a token that is no word of the dictionary (a lone character the cut fell back to)."""
    out = np.zeros(starts.shape[0], dtype=np.int64)
    for t in range(starts.shape[0]):
        h = FNV_OFFSET
        for i in range(starts[t], ends[t]):
            h ^= np.uint64(cps[i])
            h *= FNV_PRIME
        out[t] = max(_lookup(table, _prefix_key(h, ends[t] - starts[t])), 0)
    return out
