"""Profile byte formats v2 to v17: sorted context hashes delta-coded, fills through a per-record palette.

v3 to v17 are v2's layout with their version byte: v3's entries are one-sided contexts for polarity
words, v4's also class-free, v5's read English negative prefixes, v6's add names, v7's read
figures as values (thousands groups, Chinese numerals; service/rules/differences.py), v8's read
identifiers (runs of letters and digits) as figures, v9's read people cut into tokens, v10's
give each name a second letter set, v11's give a figure deep in a run of figures its place in
the run, v12's leave out one-sided entries across a sentence's edge, v13's read an English
percentage or decimal with its letters and 's as one word, v14's read names that only start
sentences and names the dictionary cuts, v15's give each figure a twin entry (8 more bits of its
value), v16's carry weak names (words tagged a person but read as no name), v17's leave a figure's
unit out of its context (12万亩 as 12, 159 million as 159), so a record is compared with entries
made its version's way only. A record (all integers big-endian, bits most significant first):

    b"NP" | version (0x02 to 0x11) | count (LEB128 varint)
    and when count > 0:
    context bits C (1 B) | Rice parameter k (1 B) | palette size - 1 (1 B) | palette (P B) |
    figure flags (ceil(P / 8) B) | bit stream, padded with zeros to a byte

The entries are (context << 16 | polarity byte << 8 | figure byte), sorted, contexts of C bits.
The palette lists the distinct polarity bytes of the record in ascending order; a palette entry
is flagged when some entry with it has a figure byte other than ``empty_figure`` (the hash of no
figure). Per entry, the stream holds the context's difference from the previous one (from 0 for
the first) Rice-coded with parameter k (quotient in unary: that many 1s and a 0, then k low
bits), the palette index in ceil(log2 P) bits, and the figure byte (8 bits) when its palette
entry is flagged. Nothing is lost: decoding gives back the entries exactly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAGIC0 = 78  # "N"
MAGIC1 = 80  # "P"
# the layout is the same; what the contexts cover differs (module docstring)
VERSIONS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19)

# decode status codes (the caller turns them into one-line errors)
OK = 0
TRUNCATED = 1
BAD_HEADER = 2
TRAILING = 3


@njit(nogil=True, cache=True, inline="always")
def _bits_for(n):
    """Bits of an index below ``n``: ceil(log2 n), 0 for n <= 1."""
    b = 0
    while (1 << b) < n:
        b += 1
    return b


@njit(nogil=True, cache=True, inline="always")
def _put_bits(buf, base, bit, value, count):
    """Write the low ``count`` bits of ``value`` (at most 56) at bit offset ``bit`` after byte
    ``base``, most significant first, a byte's worth at a time (into a zeroed buffer)."""
    while count > 0:
        room = 8 - (bit & 7)
        n = room if count > room else count
        part = (value >> np.uint64(count - n)) & np.uint64((1 << n) - 1)
        buf[base + (bit >> 3)] |= np.uint8(part << np.uint64(room - n))
        bit += n
        count -= n
    return bit


@njit(nogil=True, cache=True, inline="always")
def _get_bits(data, base, bit, count):
    """The ``count`` bits (at most 56) at bit offset ``bit`` after byte ``base``, most significant
    first, read a byte's worth at a time (:func:`_put_bits` wrote them)."""
    value = np.uint64(0)
    while count > 0:
        room = 8 - (bit & 7)
        n = room if count > room else count
        part = (np.uint64(data[base + (bit >> 3)]) >> np.uint64(room - n)) & np.uint64((1 << n) - 1)
        value = (value << np.uint64(n)) | part
        bit += n
        count -= n
    return value


@njit(nogil=True, cache=True)
def _rice_bits(entries, lo, hi, k):
    """Stream bits of the contexts' differences Rice-coded with parameter ``k``."""
    total = 0
    prev = np.uint64(0)
    for i in range(lo, hi):
        ctx = entries[i] >> np.uint64(16)
        total += np.int64((ctx - prev) >> np.uint64(k)) + 1 + k
        prev = ctx
    return total


@njit(nogil=True, cache=True)
def _rice_parameter(entries, lo, hi, bits):
    """(k, stream bits of the contexts): the smallest k of 0 to ``bits`` minimising the Rice code
    of the contexts' differences. The code's length is convex in k (going from k to k + 1 adds
    one bit an entry and saves ceil(d >> k / 2) of each difference d, a saving that never grows
    with k), so the search starts at log2 of the mean difference and walks to the minimum,
    down first (to its smallest k where two are equal), in two or three passes, not ``bits`` + 1."""
    mean = (entries[hi - 1] >> np.uint64(16)) // np.uint64(hi - lo)
    k = 0
    while k < bits and (mean >> np.uint64(k + 1)) > np.uint64(0):
        k += 1
    best = _rice_bits(entries, lo, hi, k)
    down = False
    while k > 0:
        lower = _rice_bits(entries, lo, hi, k - 1)
        if lower > best:
            break
        k -= 1
        best = lower
        down = True
    while not down and k < bits:  # the minimum is above the start only where nothing below was as short
        higher = _rice_bits(entries, lo, hi, k + 1)
        if higher >= best:
            break
        k += 1
        best = higher
    return k, best


@njit(nogil=True, cache=True)
def encoded_size_bound(n):
    """Bytes that a record of ``n`` entries takes at most."""
    return 3 + 10 + 3 + 256 + 32 + (n * (1 + 32 + 8 + 8) + 7) // 8 + 1


@njit(nogil=True, cache=True)
def encode_batch(entries, doc_off, bits, empty_figure, version):
    """Records (``version`` 2, 3 or 4) of the sorted entries of each document (rows
    doc_off[d]:doc_off[d+1]), contexts of ``bits`` bits: (bytes, byte offsets per document)."""
    n_docs = doc_off.shape[0] - 1
    bound = 0
    for d in range(n_docs):
        bound += encoded_size_bound(doc_off[d + 1] - doc_off[d])
    buf = np.zeros(bound, dtype=np.uint8)
    out_off = np.zeros(n_docs + 1, dtype=np.int64)
    index = np.empty(256, dtype=np.int64)
    flagged = np.zeros(256, dtype=np.bool_)
    w = 0
    for d in range(n_docs):
        lo = doc_off[d]
        hi = doc_off[d + 1]
        n = hi - lo
        buf[w] = MAGIC0
        buf[w + 1] = MAGIC1
        buf[w + 2] = version
        w += 3
        v = n
        while True:
            if v < 0x80:
                buf[w] = v
                w += 1
                break
            buf[w] = 0x80 | (v & 0x7F)
            v >>= 7
            w += 1
        if n == 0:
            out_off[d + 1] = w
            continue
        index[:] = -1
        flagged[:] = False
        for i in range(lo, hi):
            pol = np.int64((entries[i] >> np.uint64(8)) & np.uint64(0xFF))
            index[pol] = 0
            if np.int64(entries[i] & np.uint64(0xFF)) != empty_figure:
                flagged[pol] = True
        palette = 0
        for pol in range(256):
            if index[pol] == 0:
                index[pol] = palette
                palette += 1
        k, _ = _rice_parameter(entries, lo, hi, bits)
        buf[w] = bits
        buf[w + 1] = k
        buf[w + 2] = palette - 1
        w += 3
        flags = w + palette
        for pol in range(256):
            if index[pol] >= 0:
                buf[w + index[pol]] = pol
                if flagged[pol]:
                    buf[flags + (index[pol] >> 3)] |= np.uint8(0x80 >> (index[pol] & 7))
        w = flags + (palette + 7) // 8
        idx_bits = _bits_for(palette)
        bit = 0
        prev = np.uint64(0)
        for i in range(lo, hi):
            ctx = entries[i] >> np.uint64(16)
            delta = ctx - prev
            prev = ctx
            q = np.int64(delta >> np.uint64(k))
            while q > 0:  # the quotient in unary: that many 1s
                m = q if q < 56 else 56
                bit = _put_bits(buf, w, bit, np.uint64((1 << m) - 1), m)
                q -= m
            bit += 1  # the unary code's closing 0
            bit = _put_bits(buf, w, bit, delta, k)
            pol = np.int64((entries[i] >> np.uint64(8)) & np.uint64(0xFF))
            bit = _put_bits(buf, w, bit, np.uint64(index[pol]), idx_bits)
            if flagged[pol]:
                bit = _put_bits(buf, w, bit, entries[i] & np.uint64(0xFF), 8)
        w += (bit + 7) >> 3
        out_off[d + 1] = w
    return buf[:w], out_off


@njit(nogil=True, cache=True)
def decode(data, empty_figure):
    """(status, entries, context bits) of one v2, v3 or v4 record (uint8 array); status OK or why not.
    Entries of an unflagged palette entry get ``empty_figure`` as their figure byte."""
    empty = np.zeros(0, dtype=np.uint64)
    size = data.shape[0]
    if size < 4 or data[0] != MAGIC0 or data[1] != MAGIC1 or data[2] not in VERSIONS:
        return BAD_HEADER, empty, 0
    r = 3
    n = 0
    shift = 0
    while True:
        if r >= size or shift > 56:
            return TRUNCATED, empty, 0
        b = np.int64(data[r])
        r += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            break
    if n == 0:
        return (OK if r == size else TRAILING), empty, 0
    if r + 3 > size:
        return TRUNCATED, empty, 0
    bits = np.int64(data[r])
    k = np.int64(data[r + 1])
    palette = np.int64(data[r + 2]) + 1
    r += 3
    if bits < 1 or bits > 32 or k > bits:
        return BAD_HEADER, empty, 0
    if r + palette + (palette + 7) // 8 > size:
        return TRUNCATED, empty, 0
    pols = data[r : r + palette]
    flags = r + palette
    r = flags + (palette + 7) // 8
    # every entry takes at least one bit: a count beyond the stream is corrupt, not a huge allocation
    if n > 8 * (size - r):
        return TRUNCATED, empty, 0
    idx_bits = _bits_for(palette)
    out = np.empty(n, dtype=np.uint64)
    total = 8 * (size - r)
    bit = 0
    ctx = np.uint64(0)
    for i in range(n):
        q = 0
        while True:
            if bit >= total:
                return TRUNCATED, empty, 0
            one = (data[r + (bit >> 3)] >> (7 - (bit & 7))) & 1
            bit += 1
            if one == 0:
                break
            q += 1
        if bit + k + idx_bits > total:
            return TRUNCATED, empty, 0
        ctx += (np.uint64(q) << np.uint64(k)) | _get_bits(data, r, bit, k)
        bit += k
        idx = np.int64(_get_bits(data, r, bit, idx_bits))
        bit += idx_bits
        if idx >= palette:
            return BAD_HEADER, empty, 0
        fig = np.uint64(empty_figure)
        if (data[flags + (idx >> 3)] >> (7 - (idx & 7))) & 1:
            if bit + 8 > total:
                return TRUNCATED, empty, 0
            fig = _get_bits(data, r, bit, 8)
            bit += 8
        out[i] = (ctx << np.uint64(16)) | (np.uint64(pols[idx]) << np.uint64(8)) | fig
    if (bit + 7) >> 3 != size - r:
        return TRAILING, empty, 0
    return OK, out, bits
