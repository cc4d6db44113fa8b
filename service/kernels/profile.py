"""Critical-difference profiles over code points: anchors, contexts, fills, and their byte format.

A profile is a sorted uint64 array of (context hash << 16 | fill hash) entries, repeats kept
(see service/rules/differences.py for what an anchor, its context and its fill are). The kernels here
compute a whole window's profiles from its code points in one call, with the same hashes as the
Python reference (``AnchorProfiler.profile``): MurmurHash3 x86_32 of the UTF-8 bytes of the
context and fill strings, which the kernel writes into a scratch buffer instead of building them.

Tables the caller compiles from the lexicon (``neardup.rules.differences``):
- ``ctab``: one byte of flags per code point (KEEP: a word character kept in the Chinese frame;
  TERM: can start a Chinese lexicon term; NUMERAL: a Chinese numeral; DIGIT: ASCII 0-9; AZ09 / AZ:
  the characters of English words);
- the Chinese terms as a trie: ``edge_keys`` (node * CP_RANGE + cp + 1, 0 = empty slot) ->
  ``edge_vals`` (child node), open addressing; ``node_kind`` / ``node_code`` say which term ends at
  a node (affirmator, negator, polarity word with its class-sign code);
- the English words (negators and polarity words) in a hash table of their code points
  (``word_keys`` -> ``word_vals``, verified against ``word_cps``): negator flag, class-sign code;
- per class-sign code: the UTF-8 bytes its fill hash reads (the class and sign, or from v4 the sign
  only), its frame mark (Chinese), its frame word (English; from v4 one mark and one word for
  every class), and whether it is an auxiliary (which takes the negation that follows it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neardup.kernels.entities import carried_name, has_fill
from neardup.kernels.hashing import hash_span
from neardup.kernels.simhash import popcount64

# character flags (ctab)
KEEP = 1
TERM = 2
NUMERAL = 4
DIGIT = 8
AZ09 = 16
AZ = 32
SENTENCE_END = 64  # . ! ? ; and their full-width forms (differences.SENTENCE_ENDS)
UNIT_LONGEST = 8  # characters of the longest unit a Chinese figure is written with (differences.zh_unit_words)
COUNT_UNIT = 2  # a unit trie word that counts or numbers things (个, 项, 届; not 万 or 余 alone): v19

# trie node kinds
NODE_AFFIRMATOR = 1
NODE_NEGATOR = 2
NODE_POLARITY = 3

# anchor kinds
ANCHOR_CLASS = 0  # a polarity word: class and sign, negated n times
ANCHOR_FIGURE = 1  # a figure: '#' + its text, negated at most once
ANCHOR_NEGATOR = 2  # a negator governing no anchor: the fill "N"
ANCHOR_SENTENCE = 3  # a sentence (v4): its frame, the fill "S" + its negators (at most 9)
ANCHOR_NAME = 4  # a name (v6, neardup.kernels.entities): '@' + the name
NAME_FILL_BYTE = 0xB0  # the polarity byte of a name's fill: mmh3("@name", POLARITY_SEED) & 0xFF
WEAK_NAME_BYTE = 0x57  # ... of a word the dictionary tags a person but that is read as no name (v16)
NAME_TWIN_BYTE = 0x5C  # ... of a name of one token, two or three characters, as a weak name's entries (v16)
NAME_PRESENT_FILL = 0xAA00  # a name's presence entry (neardup.kernels.entities): mmh3("@present", ...) & 0xFF, 0
NAME_LETTERS_FILL = 0xC600  # a name's second letter set (v10): mmh3("@letters", ...) & 0xFF, 0
MAX_SENTENCE_NEGATORS = 9
SECTION_SIGN = 0xA7  # starts a sentence's context
DI = ord("第")
ARTICLE_UNITS = np.array([ord(c) for c in "条章节款项编"], dtype=np.uint32)  # differences.ARTICLE_UNITS
LETTER_S = 83
DIGIT_0 = 48

CP_RANGE = 0x110000
WORD_SEED = 0x0F5D
CONTEXT_SEED = 0x0F4A
POLARITY_SEED = 0x0F11
FIGURE_SEED = 0x0F12

M32 = np.uint64(0xFFFFFFFF)
C1 = np.uint64(0xCC9E2D51)
C2 = np.uint64(0x1B873593)
F1 = np.uint64(0x85EBCA6B)
F2 = np.uint64(0xC2B2AE35)
N5 = np.uint64(0xE6546B64)

PIPE = 124
# context sides: a polarity word's anchor gets one entry per side (an edit next to it, crawler
# noise or a cut text on one side leaves the other side's entry to match); figures and lone
# negators keep one entry over both sides (a deletion joins two figures' one-sided contexts:
# 第十七条 / 第十八条 after a deleted article)
BOTH_SIDES = 0
LEFT_SIDE = 1
RIGHT_SIDE = 2
SIDE_MARK = np.array([PIPE, ord("<"), ord(">")], dtype=np.uint8)
SPACE = 32
HASH = 35
LETTER_N = 78
APOSTROPHE = 39
DOT = 46
PERCENT = 37
COMMA = 44
DOLLAR = 36
# Chinese numerals and their values (differences.ZH_NUMERALS, differences.numeral_value)
NUMERAL_CPS = np.array([ord(c) for c in "零〇一二两三四五六七八九十百千万亿"], dtype=np.uint32)
NUMERAL_VALUES = np.array([0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100, 1000, 10**4, 10**8], dtype=np.int64)
NUMERAL_LIMIT = 10**17  # a value past this keeps its characters as its fill
FEN = ord("分")  # 百分之三, 三分之一: a fraction's numerals (v18)
ZHI = ord("之")
ABOUT_CPS = np.array([ord(c) for c in "余多"], dtype=np.uint32)  # differences.ZH_ABOUT: no part of a unit's fill

# English contractions spelled out (differences.EN_CONTRACTIONS), as offsets into CONST_CPS
CONST_CPS = np.array([ord(c) for c in "cannotwillshall"], dtype=np.uint32)
CAN = (0, 3)
NOT = (3, 6)
WILL = (6, 10)
SHALL = (10, 15)
SPELLED = np.array([ord(c) for c in "can'tcannotwon'tshan'tdodoesdid"], dtype=np.uint32)  # contractions, do
DO_FORMS = ((22, 24), (24, 28), (28, 31))  # do, does, did in SPELLED (differences.DO_SUPPORT)


# ---------------------------------------------------------------------------------------------
# MurmurHash3 x86_32 over bytes (what mmh3.hash computes on a str's UTF-8 encoding)
# ---------------------------------------------------------------------------------------------

@njit(nogil=True, cache=True, inline="always")
def _rotl32(x, r):
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & M32


@njit(nogil=True, cache=True)
def murmur3_32(buf, n, seed):
    """MurmurHash3 x86_32 of ``buf[:n]`` (uint8), unsigned: ``mmh3.hash(bytes, seed, signed=False)``."""
    h = np.uint64(seed) & M32
    blocks = n // 4
    for b in range(blocks):
        i = 4 * b
        k = (np.uint64(buf[i]) | (np.uint64(buf[i + 1]) << np.uint64(8)) | (np.uint64(buf[i + 2]) << np.uint64(16))
             | (np.uint64(buf[i + 3]) << np.uint64(24)))
        k = (k * C1) & M32
        k = _rotl32(k, 15)
        k = (k * C2) & M32
        h ^= k
        h = _rotl32(h, 13)
        h = (h * np.uint64(5) + N5) & M32
    tail = blocks * 4
    rest = n & 3
    if rest:
        k = np.uint64(0)
        if rest == 3:
            k ^= np.uint64(buf[tail + 2]) << np.uint64(16)
        if rest >= 2:
            k ^= np.uint64(buf[tail + 1]) << np.uint64(8)
        k ^= np.uint64(buf[tail])
        k = (k * C1) & M32
        k = _rotl32(k, 15)
        k = (k * C2) & M32
        h ^= k
    h ^= np.uint64(n)
    h ^= h >> np.uint64(16)
    h = (h * F1) & M32
    h ^= h >> np.uint64(13)
    h = (h * F2) & M32
    h ^= h >> np.uint64(16)
    return h


@njit(nogil=True, cache=True, inline="always")
def _put_utf8(buf, w, cp):
    """Write code point ``cp`` as UTF-8 at ``buf[w]`` (surrogates as three bytes); the new end."""
    c = np.int64(cp)
    if c < 0x80:
        buf[w] = c
        return w + 1
    if c < 0x800:
        buf[w] = 0xC0 | (c >> 6)
        buf[w + 1] = 0x80 | (c & 0x3F)
        return w + 2
    if c < 0x10000:
        buf[w] = 0xE0 | (c >> 12)
        buf[w + 1] = 0x80 | ((c >> 6) & 0x3F)
        buf[w + 2] = 0x80 | (c & 0x3F)
        return w + 3
    buf[w] = 0xF0 | (c >> 18)
    buf[w + 1] = 0x80 | ((c >> 12) & 0x3F)
    buf[w + 2] = 0x80 | ((c >> 6) & 0x3F)
    buf[w + 3] = 0x80 | (c & 0x3F)
    return w + 4


@njit(nogil=True, cache=True, inline="always")
def _grow(buf, need):
    """``buf`` itself when it holds ``need`` bytes, else a larger empty one."""
    if need <= buf.shape[0]:
        return buf
    return np.empty(2 * need, dtype=np.uint8)


# ---------------------------------------------------------------------------------------------
# fills
# ---------------------------------------------------------------------------------------------

@njit(nogil=True, cache=True, inline="always")
def _put_digits(buf, w, value):
    """Write ``value`` (>= 0) in ASCII digits at ``buf[w:]``; the new write position."""
    n = 1
    rest = value // 10
    while rest > 0:
        n += 1
        rest //= 10
    for i in range(n - 1, -1, -1):
        buf[w + i] = DIGIT_0 + value % 10
        value //= 10
    return w + n


@njit(nogil=True, cache=True, inline="always")
def _numeral(cp):
    """The value of the Chinese numeral ``cp`` (a unit: 10, 100, ...), -1 when it is none."""
    for i in range(NUMERAL_CPS.shape[0]):
        if NUMERAL_CPS[i] == cp:
            return NUMERAL_VALUES[i]
    return -1


@njit(nogil=True, cache=True)
def numeral_value(cps, a, b):
    """The value of the Chinese numerals ``cps[a:b]``: digit by digit without units (二〇二三 is
    2023), else by their units (一千二百 is 1200, 十一 is 11, 三亿五千万 is 350000000); -1 past
    :data:`NUMERAL_LIMIT` or when a character is no numeral (the reference: differences.numeral_value)."""
    units = False
    for i in range(a, b):
        d = _numeral(cps[i])
        if d < 0:
            return np.int64(-1)
        units = units or d >= 10
    total = np.int64(0)
    section = np.int64(0)
    number = np.int64(0)
    for i in range(a, b):
        d = _numeral(cps[i])
        if not units:
            number = number * 10 + d
        elif d < 10:
            number = d
        elif d < 10**4:  # 十, 百, 千: 十二 is 12
            section += (number if number > 0 else 1) * d
            number = 0
        elif d == 10**4:
            total += (section + number) * d
            section = 0
            number = 0
        else:  # 亿 multiplies what came before it, 万 included
            if total + section + number > NUMERAL_LIMIT // d:
                return np.int64(-1)
            total = (total + section + number) * d
            section = 0
            number = 0
        if total > NUMERAL_LIMIT or number > NUMERAL_LIMIT:
            return np.int64(-1)
    return total + section + number


@njit(nogil=True, cache=True)
def _fill_hash(kind, code, negs, cps, fs, fe, fu, ctab, cs_bytes, cs_off, buf, values):
    """(16-bit fill hash, scratch buffer): 8 bits of the polarity part, 8 of the figure part, as
    differences.fill_hash splits the fill string ("N " x negs + class-sign, "N #" / "#" + figure, "N").
    ``values`` (v7): a figure of Chinese numerals fills as its value in digits (二〇二三 as 2023).
    ``fe:fu``: the unit written after a figure (v18; empty before), whose word characters but 余 and
    多 follow the figure in its fill (differences.unit_key)."""
    if kind == ANCHOR_CLASS:
        a = cs_off[code]
        b = cs_off[code + 1]
        buf = _grow(buf, 2 * negs + b - a)
        w = 0
        for _ in range(negs):
            buf[w] = LETTER_N
            buf[w + 1] = SPACE
            w += 2
        for i in range(a, b):
            buf[w] = cs_bytes[i]
            w += 1
        pol = murmur3_32(buf, w, POLARITY_SEED)
        fig = murmur3_32(buf, 0, FIGURE_SEED)
    elif kind == ANCHOR_FIGURE:
        buf[0] = LETTER_N
        pol = murmur3_32(buf, 1 if negs else 0, POLARITY_SEED)
        buf = _grow(buf, 24 + 4 * (fu - fs))
        buf[0] = HASH
        w = 1
        value = numeral_value(cps, fs, fe) if values and _numeral(cps[fs]) >= 0 else np.int64(-1)
        if value >= 0:
            w = _put_digits(buf, w, value)
        else:
            for i in range(fs, fe):
                # 28.90 % fills as 28.90%, 1,200 as 1200, hk$6.31bn (v18) as hk6.31bn
                if cps[i] != SPACE and cps[i] != COMMA and cps[i] != DOLLAR:
                    w = _put_utf8(buf, w, cps[i])
        for i in range(fe, fu):
            if ctab[cps[i]] & KEEP and cps[i] != ABOUT_CPS[0] and cps[i] != ABOUT_CPS[1]:
                w = _put_utf8(buf, w, cps[i])
        fig = murmur3_32(buf, w, FIGURE_SEED)
    elif kind == ANCHOR_SENTENCE:
        buf[0] = LETTER_S
        buf[1] = DIGIT_0 + negs
        pol = murmur3_32(buf, 2, POLARITY_SEED)
        fig = murmur3_32(buf, 0, FIGURE_SEED)
    else:
        buf[0] = LETTER_N
        pol = murmur3_32(buf, 1, POLARITY_SEED)
        fig = murmur3_32(buf, 0, FIGURE_SEED)
    return ((pol & np.uint64(0xFF)) << np.uint64(8)) | (fig & np.uint64(0xFF)), buf


# ---------------------------------------------------------------------------------------------
# lookups
# ---------------------------------------------------------------------------------------------

@njit(nogil=True, cache=True, inline="always")
def _child(edge_keys, edge_vals, node, cp):
    """The trie node under ``node`` by ``cp``; -1 when there is none."""
    key = np.uint64(node) * np.uint64(CP_RANGE) + np.uint64(cp) + np.uint64(1)
    mask = np.uint64(edge_keys.shape[0] - 1)
    s = (key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40) & mask
    while True:
        k = edge_keys[s]
        if k == key:
            return np.int64(edge_vals[s])
        if k == 0:
            return np.int64(-1)
        s = (s + np.uint64(1)) & mask


@njit(nogil=True, cache=True, inline="always")
def _word_key(arr, a, b):
    h = hash_span(arr, a, b, WORD_SEED)
    return h if h != 0 else np.uint64(1)


@njit(nogil=True, cache=True)
def find_word(arr, a, b, word_keys, word_vals, word_cps, word_off):
    """Index of the lexicon word with the code points ``arr[a:b]``; -1 when it is none."""
    key = _word_key(arr, a, b)
    mask = np.uint64(word_keys.shape[0] - 1)
    s = key & mask
    while True:
        k = word_keys[s]
        if k == 0:
            return np.int64(-1)
        if k == key:
            w = np.int64(word_vals[s])
            lo = word_off[w]
            if word_off[w + 1] - lo == b - a:
                same = True
                for i in range(b - a):
                    if word_cps[lo + i] != arr[a + i]:
                        same = False
                        break
                if same:
                    return w
        s = (s + np.uint64(1)) & mask


@njit(nogil=True, cache=True)
def build_word_table(word_cps, word_off):
    """(keys, values) of the open-addressing table :func:`find_word` probes (at most half full)."""
    n = word_off.shape[0] - 1
    size = 2
    while size < 2 * n + 2:
        size *= 2
    keys = np.zeros(size, dtype=np.uint64)
    vals = np.zeros(size, dtype=np.int32)
    mask = np.uint64(size - 1)
    for w in range(n):
        key = _word_key(word_cps, word_off[w], word_off[w + 1])
        s = key & mask
        while keys[s] != 0:
            s = (s + np.uint64(1)) & mask
        keys[s] = key
        vals[s] = w
    return keys, vals


@njit(nogil=True, cache=True)
def build_edge_table(parents, cps, children):
    """(keys, values) of the open-addressing table :func:`_child` probes, from the trie's edges."""
    n = parents.shape[0]
    size = 2
    while size < 2 * n + 2:
        size *= 2
    keys = np.zeros(size, dtype=np.uint64)
    vals = np.zeros(size, dtype=np.int32)
    mask = np.uint64(size - 1)
    for e in range(n):
        key = np.uint64(parents[e]) * np.uint64(CP_RANGE) + np.uint64(cps[e]) + np.uint64(1)
        s = (key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40) & mask
        while keys[s] != 0:
            s = (s + np.uint64(1)) & mask
        keys[s] = key
        vals[s] = children[e]
    return keys, vals


# ---------------------------------------------------------------------------------------------
# anchors: Chinese
# ---------------------------------------------------------------------------------------------

@njit(nogil=True, cache=True)
def _zh_token(cps, p, lo, hi, ctab, edge_keys, edge_vals, node_kind, node_code, spaced_percent, grouped,
              identifiers, fractions, counts, unit_keys, unit_vals, unit_kind):
    """(end, node kind, class-sign code) of the token at ``p``: the longest lexicon term, else a
    figure (ASCII digits with an optional decimal part and %, or two or more Chinese numerals),
    kind 0; end -1 when nothing starts at ``p`` (the reference's regex alternatives, in order).
    ``grouped`` (v7): digits in thousands groups are one figure (1,200,000). ``identifiers`` (v8):
    first, a whole run of ASCII letters and digits with a digit after a letter is one figure
    (:func:`_identifier_end`). ``fractions`` (v18): one numeral after or before 分之 is a figure
    (百分之三, 三分之一). ``counts`` (v19): so is one numeral that numbers or counts
    (:func:`_counted_numeral`, over the unit trie ``unit_keys``, ``unit_vals``, ``unit_kind``)."""
    c = ctab[cps[p]]
    if identifiers and c & AZ09:
        q = _identifier_end(cps, p, lo, hi, ctab)
        if q > p:
            return q, np.int64(0), np.int64(-1)
    if c & TERM:
        node = 0
        end = -1
        kind = 0
        code = -1
        q = p
        while q < hi:
            node = _child(edge_keys, edge_vals, node, cps[q])
            if node < 0:
                break
            q += 1
            if node_kind[node] != 0:
                end = q
                kind = np.int64(node_kind[node])
                code = np.int64(node_code[node])
        if end >= 0:
            return end, kind, code
    if c & DIGIT:
        q = p + 1
        while q < hi and ctab[cps[q]] & DIGIT:
            q += 1
        if grouped and q - p <= 3:
            q = _digit_groups(cps, q, hi, ctab)
        if q + 1 < hi and cps[q] == DOT and ctab[cps[q + 1]] & DIGIT:
            q += 2
            while q < hi and ctab[cps[q]] & DIGIT:
                q += 1
        if q < hi and cps[q] == PERCENT:
            q += 1
        elif spaced_percent and q + 1 < hi and cps[q] == SPACE and cps[q + 1] == PERCENT:
            q += 2  # v4: 28.90 % is 28.90%
        return q, np.int64(0), np.int64(-1)
    if c & NUMERAL:
        q = p + 1
        while q < hi and ctab[cps[q]] & NUMERAL:
            q += 1
        if (q - p >= 2 or (fractions and _by_fraction_mark(cps, p, lo, hi))
                or (counts and _counted_numeral(cps, p, lo, hi, unit_keys, unit_vals, unit_kind))):
            return q, np.int64(0), np.int64(-1)
    return np.int64(-1), np.int64(0), np.int64(-1)


@njit(nogil=True, cache=True)
def _counted_numeral(cps, p, lo, hi, unit_keys, unit_vals, unit_kind):
    """Whether the one numeral at ``p``, one to ten, numbers or counts (v19): right after 第
    (第二次, 第三届: another template notice's number) but not a law's part (第二条 keeps its
    characters in the frame: a reordered amendment's items name their articles), or right before
    a unit of things (三项, 两名, 五个: :data:`COUNT_UNIT` words of the unit trie)."""
    value = _numeral(cps[p])
    if value < 1 or value > 10:
        return False
    if p > lo and cps[p - 1] == DI:
        return not _article_number(cps, p, p + 1, lo, hi)
    node = np.int64(0)
    for r in range(p + 1, min(hi, p + 1 + UNIT_LONGEST)):
        node = _child(unit_keys, unit_vals, node, cps[r])
        if node < 0:
            return False
        if unit_kind[node] == COUNT_UNIT:
            return True
    return False


@njit(nogil=True, cache=True, inline="always")
def _by_fraction_mark(cps, p, lo, hi):
    """Whether the numeral at ``p`` is written right after or right before 分之 (百分之三, 三分之一)."""
    after = p - 2 >= lo and cps[p - 2] == FEN and cps[p - 1] == ZHI
    return after or (p + 2 < hi and cps[p + 1] == FEN and cps[p + 2] == ZHI)


@njit(nogil=True, cache=True, inline="always")
def _identifier_end(cps, p, lo, hi, ctab):
    """End of the identifier at ``p``, or ``p``: a run of ASCII letters and digits that starts
    there (none before it), with a digit after a letter (91440300ma5dab1234, x5, mp5901): a
    credit code, a model or a ticker is one figure, so a letter that differs is a figure that
    differs (profile v8). A number and its unit (500ma, 3g) stay a figure and letters."""
    if p > lo and ctab[cps[p - 1]] & AZ09:
        return p
    q = p
    letters = False
    coded = False
    while q < hi and ctab[cps[q]] & AZ09:
        if ctab[cps[q]] & AZ:
            letters = True
        elif letters:
            coded = True
        q += 1
    return q if coded else p


@njit(nogil=True, cache=True, inline="always")
def _any_flagged(cps, a, b, ctab, flag):
    """Whether a character of ``cps[a:b]`` has ``flag`` in ``ctab`` (DIGIT: a digit; KEEP: a word character)."""
    for i in range(a, b):  # noqa: SIM110 (numba compiles loops, not generators)
        if ctab[cps[i]] & flag:
            return True
    return False


@njit(nogil=True, cache=True, inline="always")
def _digit_groups(cps, q, hi, ctab):
    """End of the thousands groups (a comma and three digits, no fourth) from ``q``, or ``q``: a
    separator does not split a figure (1,200 and 980 trade places as 1200 and 980 do)."""
    while (q + 4 <= hi and cps[q] == COMMA and ctab[cps[q + 1]] & DIGIT and ctab[cps[q + 2]] & DIGIT
           and ctab[cps[q + 3]] & DIGIT and (q + 4 == hi or not ctab[cps[q + 4]] & DIGIT)):
        q += 4
    return q


@njit(nogil=True, cache=True, inline="always")
def _put_anchor(at, kinds, codes, negs, fig_a, fig_b, fig_u, pos, n, unit, kind, code, neg, text_at, fs, fe):
    """Write anchor ``n`` (at frame unit ``unit``, ``text_at`` in the document's text; a figure's
    span ``fs:fe`` in the window's code points, its unit, none yet, ending at ``fe``) and return
    n + 1: one layout for both languages."""
    at[n] = unit
    kinds[n] = kind
    codes[n] = code
    negs[n] = neg
    pos[n] = text_at
    if kind == ANCHOR_FIGURE:
        fig_a[n] = fs
        fig_b[n] = fe
        fig_u[n] = fe
    return n + 1


@njit(nogil=True, cache=True, inline="always")
def _article_number(cps, start, end, lo, hi):
    """Whether the figure cps[start:end] numbers a law's part: 第 before it, 条 章 节 款 项 or 编
    after it (differences._article_number)."""
    if start <= lo or end >= hi or cps[start - 1] != DI:
        return False
    c = cps[end]
    for u in ARTICLE_UNITS:  # noqa: SIM110 (a loop numba compiles; any() over a generator it does not)
        if c == u:
            return True
    return False


@njit(nogil=True, cache=True, inline="always")
def _close_sentence(sents, ns, start, end, negators, text_at, text_end, minimum, starts):
    """Record the sentence frame[start:end] (rows of ``sents``: start, end, negators, text offset,
    text end: after its mark, or the text's end) when it has at least ``minimum`` units; the new
    sentence count. ``starts[end]``: a sentence starts at unit ``end`` (whatever its length)."""
    starts[end] = True
    if end - start >= minimum:
        sents[ns, 0] = start
        sents[ns, 1] = end
        sents[ns, 2] = min(negators, MAX_SENTENCE_NEGATORS)
        sents[ns, 3] = text_at
        sents[ns, 4] = text_end
        return ns + 1
    return ns


@njit(nogil=True, cache=True)
def _zh_anchors(cps, lo, hi, ctab, edge_keys, edge_vals, node_kind, node_code, word_keys, word_vals,
                word_cps, word_off, word_pol, digit_keys, zh_marks, figure_mark, frame, at, kinds, codes, negs,
                fig_a, fig_b, fig_u, pos, counted, sents, min_sentence, grouped, identifiers, starts, unit_keys,
                unit_vals, unit_kind, whole_units, fractions, counts):
    """Frame (word characters, each anchor as one mark), anchors and sentences of the Chinese text
    ``cps[lo:hi]``: (anchor count, frame length, sentence count). ``counted``: negators in a row
    add up (v4); else the first of two stands alone (v1-v3). ``grouped``: thousands groups (v7).
    ``identifiers``: runs of ASCII letters and digits (v8). ``starts``: set at every unit a
    sentence starts at (:func:`_close_sentence`). ``unit_keys``, ``unit_vals``, ``unit_kind``
    (v17; an empty trie before): the units a figure is written with, as a trie (万亩, 亿元,
    个百分点); the longest written right after a figure is the figure's, out of the frame
    (:func:`_past_unit`): a figure swapped with another along with its unit (耕地面积12万亩 ...
    总人口35万人 / 耕地面积35万人 ... 总人口12万亩) keeps its place's context, and the swap is seen.
    ``fig_u``: where each figure's unit ends (its figure's end where it has none). ``whole_units``
    (v18): a run of numerals does not end a unit (1.5万亿: a magnitude, not another figure).
    ``fractions`` (v18): one numeral beside 分之 is a figure (:func:`_zh_token`); ``counts`` (v19):
    so is one that numbers or counts (第二次, 三项)."""
    n = 0
    length = 0
    negated_at = -1  # frame length when the last negator ended
    run = 0  # negators in a row ending there
    ns = 0
    s_start = 0
    s_negs = 0
    s_at = 0
    p = lo
    while p < hi:
        c = ctab[cps[p]]
        if c & (TERM | DIGIT | NUMERAL) or (identifiers and c & AZ):
            end, kind, code = _zh_token(cps, p, lo, hi, ctab, edge_keys, edge_vals, node_kind, node_code, counted,
                                          grouped, identifiers, fractions, counts, unit_keys, unit_vals, unit_kind)
        else:
            end = -1
        if end < 0:
            if c & KEEP:  # a word character between tokens: part of the frame
                frame[length] = cps[p]
                length += 1
            elif c & SENTENCE_END:
                ns = _close_sentence(sents, ns, s_start, length, s_negs, s_at, p + 1 - lo, min_sentence, starts)
                s_start = length
                s_negs = 0
                s_at = p + 1 - lo
            p += 1
            continue
        start = p
        p = end
        if kind == NODE_AFFIRMATOR:
            continue  # 给予 批准 reads as 批准
        neg = run if negated_at == length else 0
        if kind == NODE_NEGATOR:
            s_negs += 1
            if neg and not counted:
                n = _put_anchor(at, kinds, codes, negs, fig_a, fig_b, fig_u, pos, n, length, ANCHOR_NEGATOR, -1, 0,
                                start - lo, 0, 0)
            run = neg + 1 if counted else 1
            negated_at = length
            continue
        negated_at = -1
        if kind == 0 and digit_keys:
            w = find_word(cps, start, end, word_keys, word_vals, word_cps, word_off)
            if w >= 0 and word_pol[w] >= 0:
                kind = NODE_POLARITY
                code = np.int64(word_pol[w])
        anchor = ANCHOR_CLASS if kind == NODE_POLARITY else ANCHOR_FIGURE
        put = n
        if not (counted and anchor == ANCHOR_FIGURE and _article_number(cps, start, end, lo, hi)):
            n = _put_anchor(at, kinds, codes, negs, fig_a, fig_b, fig_u, pos, n, length, anchor, code,
                            neg if anchor == ANCHOR_CLASS else min(neg, 1), start - lo, start, end)
        frame[length] = zh_marks[code] if anchor == ANCHOR_CLASS else figure_mark
        length += 1
        if anchor == ANCHOR_FIGURE and unit_kind.shape[0] > 1:
            p = _past_unit(cps, p, lo, hi, ctab, edge_keys, edge_vals, node_kind, node_code, counted, grouped,
                           identifiers, unit_keys, unit_vals, unit_kind, whole_units, fractions, counts)
            if n > put:
                fig_u[n - 1] = p
    ns = _close_sentence(sents, ns, s_start, length, s_negs, s_at, hi - lo, min_sentence, starts)
    return n, length, ns


@njit(nogil=True, cache=True)
def _past_unit(cps, p, lo, hi, ctab, edge_keys, edge_vals, node_kind, node_code, counted, grouped, identifiers,
               unit_keys, unit_vals, unit_kind, numerals, fractions, counts):
    """Where the text goes on after the unit written at ``p``, right after a figure: past the
    longest unit of the trie (``unit_kind`` nonzero where one ends) whose characters start no
    token (a term, a figure: those are read as such, ``fractions`` and ``counts`` as :func:`_zh_token` reads
    them; ``numerals``, v18: but a run of numerals, 万亿 of 1.5万亿), or ``p`` where none is written."""
    node = np.int64(0)
    best = p
    for r in range(p, min(hi, p + UNIT_LONGEST)):
        c = ctab[cps[r]]
        if c & (TERM | DIGIT | NUMERAL) or (identifiers and c & AZ):  # the unit ends where a token starts
            end, kind, _ = _zh_token(cps, r, lo, hi, ctab, edge_keys, edge_vals, node_kind, node_code, counted,
                                     grouped, identifiers, fractions, counts, unit_keys, unit_vals, unit_kind)
            if end >= 0 and not (numerals and kind == 0 and c & NUMERAL):
                break
        node = _child(unit_keys, unit_vals, node, cps[r])
        if node < 0:
            break
        if unit_kind[node] != 0:
            best = r + 1
    return best


@njit(nogil=True, cache=True)
def _zh_context(frame, length, i, bare, k, side, buf):
    """Context hash of the anchor at frame offset ``i``: k characters each side around '|'
    (``side`` BOTH_SIDES), the k before and '<' (LEFT_SIDE), or '>' and the k after (RIGHT_SIDE)."""
    w = 0
    if side == BOTH_SIDES:
        for x in range(max(0, i - k), i):
            w = _put_utf8(buf, w, frame[x])
    elif side == LEFT_SIDE:  # the anchor's class mark too: a one-sided context is one class's
        for x in range(max(0, i - k), i + 1):
            w = _put_utf8(buf, w, frame[x])
    buf[w] = SIDE_MARK[side]
    w += 1
    if side != LEFT_SIDE:
        a = i if bare or side == RIGHT_SIDE else i + 1
        for x in range(a, min(length, i + 1 + k if side == RIGHT_SIDE else a + k)):
            w = _put_utf8(buf, w, frame[x])
    return murmur3_32(buf, w, CONTEXT_SEED)


@njit(nogil=True, cache=True)
def _zh_sentence(frame, a, b, buf):
    """(context hash, scratch buffer) of the sentence frame[a:b]: the section sign and its letters."""
    buf = _grow(buf, 2 + 4 * (b - a))
    buf[0] = 0xC2  # U+00A7 in UTF-8
    buf[1] = SECTION_SIGN
    w = 2
    for x in range(a, b):
        w = _put_utf8(buf, w, frame[x])
    return murmur3_32(buf, w, CONTEXT_SEED), buf


# ---------------------------------------------------------------------------------------------
# anchors: English (and other languages)
# ---------------------------------------------------------------------------------------------

@njit(nogil=True, cache=True)
def _en_word_end(cps, p, hi, ctab, grouped, unit_tails):
    """End of the word at ``p``: ``[a-z0-9]+(?:'[a-z]+)?(?:\\.[0-9]+[a-z]*)?%?``. A decimal keeps
    its unit as a whole number does (57.2m as 110m, 2.7bn): two figures that trade places then
    take their contexts along alike ($110m (£57.2m) / $57.2m (£110m)). ``grouped`` (v7): one to
    three digits and thousands groups are one word with what follows them (1,200m as 1200m).
    ``unit_tails`` (v13): a percentage keeps the letters after it (42%m) and a decimal or a
    percentage its 's (2.2's, 12%'s), as a whole number does (719m, 2004's): a figure is one word
    whatever it is written with, so two that trade places (42% to 719m / 719 to 42%m) share their
    contexts."""
    q = p + 1
    while q < hi and ctab[cps[q]] & AZ09:
        q += 1
    if grouped and q - p <= 3 and _all_digits(cps, p, q, ctab):
        g = _digit_groups(cps, q, hi, ctab)
        if g > q:
            q = g
            while q < hi and ctab[cps[q]] & AZ09:
                q += 1
    if q + 1 < hi and cps[q] == APOSTROPHE and ctab[cps[q + 1]] & AZ:
        q += 2
        while q < hi and ctab[cps[q]] & AZ:
            q += 1
    tail = False  # a decimal or a percentage was read: its 's may follow (v13)
    if q + 1 < hi and cps[q] == DOT and ctab[cps[q + 1]] & DIGIT:
        q += 2
        while q < hi and ctab[cps[q]] & DIGIT:
            q += 1
        while q < hi and ctab[cps[q]] & AZ:
            q += 1
        tail = unit_tails
    if q < hi and cps[q] == PERCENT:
        q += 1
        while unit_tails and q < hi and ctab[cps[q]] & AZ:
            q += 1
        tail = unit_tails
    if tail and q + 1 < hi and cps[q] == APOSTROPHE and ctab[cps[q + 1]] & AZ:
        q += 2
        while q < hi and ctab[cps[q]] & AZ:
            q += 1
    return q


@njit(nogil=True, cache=True, inline="always")
def _all_digits(cps, a, b, ctab):
    """Whether ``cps[a:b]`` are all digits."""
    for i in range(a, b):  # noqa: SIM110 (numba compiles loops, not generators)
        if not ctab[cps[i]] & DIGIT:
            return False
    return True


@njit(nogil=True, cache=True, inline="always")
def _spells(cps, a, b, lo, hi):
    """Whether ``cps[a:b]`` spells ``SPELLED[lo:hi]``."""
    if b - a != hi - lo:
        return False
    for i in range(b - a):  # noqa: SIM110 (a loop numba compiles; all() over a generator it does not)
        if cps[a + i] != SPELLED[lo + i]:
            return False
    return True


@njit(nogil=True, cache=True)
def _split_contraction(cps, s, e):
    """The words of the token ``cps[s:e]`` as (source, start, end) triples, source 0 = the text,
    1 = CONST_CPS; the second word is (-1, 0, 0) when there is one word."""
    if e - s > 3 and cps[e - 3] == ord("n") and cps[e - 2] == APOSTROPHE and cps[e - 1] == ord("t"):
        if _spells(cps, s, e, 0, 5):  # can't
            return (1, CAN[0], CAN[1]), (1, NOT[0], NOT[1])
        if _spells(cps, s, e, 11, 16):  # won't
            return (1, WILL[0], WILL[1]), (1, NOT[0], NOT[1])
        if _spells(cps, s, e, 16, 22):  # shan't
            return (1, SHALL[0], SHALL[1]), (1, NOT[0], NOT[1])
        return (0, s, e - 3), (1, NOT[0], NOT[1])
    if _spells(cps, s, e, 5, 11):  # cannot
        return (1, CAN[0], CAN[1]), (1, NOT[0], NOT[1])
    return (0, s, e), (-1, 0, 0)


@njit(nogil=True, cache=True, inline="always")
def _negative_prefix(cps, a, b):
    """Letters of a negative prefix on the word cps[a:b] (un, in, im, il, ir before a stem of at
    least four letters; dis, non before one of at least four), else 0: profile v5's negation
    inside the word (unlikely, illegal, disagree)."""
    n = b - a
    if n >= 6:
        c0 = cps[a]
        c1 = cps[a + 1]
        if c0 == 0x75 and c1 == 0x6E:  # un
            return 2
        if c0 == 0x69 and (c1 == 0x6E or c1 == 0x6D or c1 == 0x6C or c1 == 0x72):  # in im il ir
            return 2
    if n >= 7:
        c0 = cps[a]
        c1 = cps[a + 1]
        c2 = cps[a + 2]
        if (c0 == 0x64 and c1 == 0x69 and c2 == 0x73) or (c0 == 0x6E and c1 == 0x6F and c2 == 0x6E):  # dis non
            return 3
    return 0


@njit(nogil=True, cache=True)
def _en_anchors(cps, lo, hi, ctab, word_keys, word_vals, word_cps, word_off, word_neg, word_pol, aux, const_cps,
                u_src, u_a, u_b, u_skip, at, kinds, codes, negs, fig_a, fig_b, fig_u, pos, sents, min_sentence,
                affixes, grouped, identifiers, starts, unit_tails, word_unit, unit_run, currencies):
    """Frame units, anchors and sentences of the English text ``cps[lo:hi]``: (anchor count, unit
    count, sentence count). ``u_skip[u]``: unit u is a do, does or did that a negator follows
    (do-support: "do not like" is the negation of "like"), left out of its sentence's frame.
    ``affixes`` (v5): a word with a negative prefix (:func:`_negative_prefix`) is its stem in the
    frame and one more negator of its sentence, so unlikely / likely is a sentence's negation; a
    stem that is a polarity word is that word negated (disapproved: not approved). ``grouped``:
    thousands groups are part of a figure (v7, :func:`_en_word_end`). ``identifiers`` (v8): a word
    with a digit anywhere is a figure (x5, aud1.102), not only one that starts with a digit.
    ``unit_tails`` (v13): a percentage or a decimal is one word with its letters and 's (42%m).
    ``unit_run`` (v17; 0 before): up to this many unit words (``word_unit``: million, per cent,
    people) written right after a figure are the figure's, out of the frame, as a Chinese unit is;
    ``fig_u`` ends each figure's unit words (its figure's end where it has none). ``currencies``
    (v18): the letters of a currency written before its $ (HK$, A$, US$) are the figure's, out of
    the frame and in its fill, as a unit after it is.

    A unit is (source, start, end): source 0 = the text, 1 = CONST_CPS, 2 = the frame word of
    class-sign code ``start`` (its '<class>'), 3 = '#' (a figure)."""
    n = 0
    units = 0
    pending = False
    ns = 0
    s_start = 0
    s_negs = 0
    s_at = 0
    last_do = False  # the last unit is a do, does or did
    units_after = 0  # unit words that may still follow the last figure
    currency = -1  # where the letters of a currency before its $ start, right before a figure (HK$6.31bn)
    p = lo
    while p < hi:
        if not ctab[cps[p]] & AZ09:
            if ctab[cps[p]] & SENTENCE_END:
                units_after = 0
                ns = _close_sentence(sents, ns, s_start, units, s_negs, s_at, p + 1 - lo, min_sentence, starts)
                s_start = units
                s_negs = 0
                s_at = p + 1 - lo
            p += 1
            continue
        s = p
        e = _en_word_end(cps, p, hi, ctab, grouped, unit_tails)
        p = e
        first, second = _split_contraction(cps, s, e)
        for part in range(2):
            src, a, b = first if part == 0 else second
            if src < 0:
                break
            if src == 0:
                w = find_word(cps, a, b, word_keys, word_vals, word_cps, word_off)
                digit = (ctab[cps[a]] & DIGIT) != 0 or (identifiers and _any_flagged(cps, a, b, ctab, DIGIT))
            else:
                w = find_word(const_cps, a, b, word_keys, word_vals, word_cps, word_off)
                digit = False
            if units_after > 0 and src == 0 and w >= 0 and word_unit[w]:
                units_after -= 1
                if not _any_flagged(cps, fig_u[n - 1], a, ctab, KEEP):  # 20 pc, not 20个按键...pc
                    fig_u[n - 1] = b
                continue
            units_after = 0
            if currencies and src == 0 and not digit and b + 1 < hi and cps[b] == DOLLAR and ctab[cps[b + 1]] & DIGIT:
                currency = a
                continue
            prefix = currency if currency >= 0 and digit else a
            currency = -1
            if w >= 0 and word_neg[w]:
                s_negs += 1
                if last_do:
                    u_skip[units - 1] = True
                if n > 0 and at[n - 1] == units - 1 and kinds[n - 1] == ANCHOR_CLASS and aux[codes[n - 1]]:
                    negs[n - 1] += 1  # was not, was not not
                else:
                    pending = True
                continue
            code = word_pol[w] if w >= 0 else -1
            if w < 0 and affixes and src == 0 and not digit:
                stem = find_word(cps, a + _negative_prefix(cps, a, b), b, word_keys, word_vals, word_cps, word_off)
                if stem >= 0 and stem != w and word_pol[stem] >= 0:  # disapproved: approved, negated
                    code = word_pol[stem]
                    pending = True
                    s_negs += 1
            if code >= 0 or digit or pending:
                anchor = ANCHOR_CLASS if code >= 0 else ANCHOR_FIGURE if digit else ANCHOR_NEGATOR
                n = _put_anchor(at, kinds, codes, negs, fig_a, fig_b, fig_u, pos, n, units, anchor, code,
                                1 if pending and anchor != ANCHOR_NEGATOR else 0, s - lo, prefix, b)
            if code >= 0:
                u_src[units] = 2
                u_a[units] = code
            elif digit:
                u_src[units] = 3
            else:
                cut = _negative_prefix(cps, a, b) if affixes and src == 0 else 0
                s_negs += 1 if cut else 0
                u_src[units] = src
                u_a[units] = a + cut
                u_b[units] = b
            u_skip[units] = False
            last_do = src == 0 and (_spells(cps, a, b, DO_FORMS[0][0], DO_FORMS[0][1])
                                    or _spells(cps, a, b, DO_FORMS[1][0], DO_FORMS[1][1])
                                    or _spells(cps, a, b, DO_FORMS[2][0], DO_FORMS[2][1]))
            units += 1
            pending = False
            units_after = unit_run if digit and code < 0 else 0
    ns = _close_sentence(sents, ns, s_start, units, s_negs, s_at, hi - lo, min_sentence, starts)
    return n, units, ns


@njit(nogil=True, cache=True)
def _put_unit(buf, w, u, cps, const_cps, u_src, u_a, u_b, cw_cps, cw_off):
    src = u_src[u]
    if src == 0:
        for x in range(u_a[u], u_b[u]):
            w = _put_utf8(buf, w, cps[x])
    elif src == 1:
        for x in range(u_a[u], u_b[u]):
            w = _put_utf8(buf, w, const_cps[x])
    elif src == 2:
        code = u_a[u]
        for x in range(cw_off[code], cw_off[code + 1]):
            w = _put_utf8(buf, w, cw_cps[x])
    else:
        buf[w] = HASH
        w += 1
    return w


@njit(nogil=True, cache=True)
def _unit_len(u, u_src, u_a, u_b, cw_off):
    src = u_src[u]
    if src == 2:
        return cw_off[u_a[u] + 1] - cw_off[u_a[u]]
    if src == 3:
        return 1
    return u_b[u] - u_a[u]


@njit(nogil=True, cache=True)
def _en_context(units, i, bare, k, side, cps, const_cps, u_src, u_a, u_b, cw_cps, cw_off, buf):
    """(context hash, scratch buffer) of the anchor at unit ``i``: k words each side, joined by
    spaces, around '|' (``side`` BOTH_SIDES), or one side only, as :func:`_zh_context`."""
    # one-sided: the anchor's own unit (its '<class>') is part of the context, as in _zh_context
    lo = i if side == RIGHT_SIDE else max(0, i - k)
    before = i + 1 if side == LEFT_SIDE else i
    a = i if bare or side == RIGHT_SIDE else i + 1
    hi = a if side == LEFT_SIDE else min(units, i + 1 + k if side == RIGHT_SIDE else a + k)
    need = 4 + 2 * k
    for u in range(lo, before):
        need += 4 * _unit_len(u, u_src, u_a, u_b, cw_off)
    for u in range(a, hi):
        need += 4 * _unit_len(u, u_src, u_a, u_b, cw_off)
    buf = _grow(buf, need)
    w = 0
    for u in range(lo, before):
        if u > lo:
            buf[w] = SPACE
            w += 1
        w = _put_unit(buf, w, u, cps, const_cps, u_src, u_a, u_b, cw_cps, cw_off)
    buf[w] = SIDE_MARK[side]
    w += 1
    for u in range(a, hi):
        if u > a:
            buf[w] = SPACE
            w += 1
        w = _put_unit(buf, w, u, cps, const_cps, u_src, u_a, u_b, cw_cps, cw_off)
    return murmur3_32(buf, w, CONTEXT_SEED), buf


@njit(nogil=True, cache=True)
def _en_sentence(a, b, cps, const_cps, u_src, u_a, u_b, u_skip, cw_cps, cw_off, buf):
    """(context hash, scratch buffer) of the sentence of units a:b: the section sign and its words
    joined by spaces, do-support left out."""
    need = 2 + (b - a)
    for u in range(a, b):
        need += 4 * _unit_len(u, u_src, u_a, u_b, cw_off)
    buf = _grow(buf, need)
    buf[0] = 0xC2
    buf[1] = SECTION_SIGN
    w = 2
    first = True
    for u in range(a, b):
        if u_skip[u]:
            continue
        if not first:
            buf[w] = SPACE
            w += 1
        first = False
        w = _put_unit(buf, w, u, cps, const_cps, u_src, u_a, u_b, cw_cps, cw_off)
    return murmur3_32(buf, w, CONTEXT_SEED), buf


# ---------------------------------------------------------------------------------------------
# a window
# ---------------------------------------------------------------------------------------------

@njit(nogil=True, cache=True)
def _resized(a, used, cap):
    """A copy of ``a[:used]`` with room for ``cap`` rows."""
    out = np.empty(cap, dtype=a.dtype)
    out[:used] = a[:used]
    return out


@njit(nogil=True, cache=True, inline="always")
def _figures_in_row(units, length, i, step, figure):
    """How many figures in a row stand from unit ``i`` on, going ``step`` (1 or -1), the figure
    there included: ``units`` a Chinese frame (a figure is ``figure``, its mark) or an English
    text's unit sources (a figure is source 3)."""
    d = 0
    while 0 <= i + step * d < length and units[i + step * d] == figure:
        d += 1
    return d


@njit(nogil=True, cache=True)
def _in_figure_run(ctx, before, after, k, longest, buf):
    """(context hash, scratch buffer) of a figure that is the ``before``-th of its run of figures
    from the start and the ``after``-th from the end (v11). More than ``k`` figures from both ends,
    its context sees figures only, as every figure's there does (6-3 6-7 (2-7) 7-6 (7-5)), so
    figures that traded places inside a run would cancel out; there the context is hashed again
    with the figure's place from the nearer end (``before``, or minus ``after``; 4 bytes
    little-endian after the context's 4), as ``differences.in_figure_run``. A run of more than
    ``longest`` figures is a list of numbers (telephone numbers, codes), not a result: a figure
    split in two by crawler noise would move every place after it, so its figures keep their
    contexts."""
    if before <= k or after <= k or before + after - 1 > longest:
        return ctx, buf
    place = before if before <= after else -after
    buf = _grow(buf, 8)
    c = np.uint64(ctx)
    n = np.uint64(np.uint32(np.int32(place)))
    for b in range(4):
        buf[b] = np.uint8((c >> np.uint64(8 * b)) & np.uint64(0xFF))
        buf[4 + b] = np.uint8((n >> np.uint64(8 * b)) & np.uint64(0xFF))
    return murmur3_32(buf, 8, CONTEXT_SEED), buf


@njit(nogil=True, cache=True, inline="always")
def _sentence_side(starts, u, length, side):
    """Whether ``side`` of the anchor at unit ``u`` is its sentence's edge (v12): the anchor ends
    its sentence (RIGHT_SIDE: the next unit starts another, or there is none) or starts it."""
    if side == RIGHT_SIDE:
        return u + 1 >= length or starts[u + 1]
    return u == 0 or starts[u]


@njit(nogil=True, cache=True)
def profile_batch(cps, offsets, is_zh, ctab, edge_keys, edge_vals, node_kind, node_code, word_keys, word_vals,
                  word_cps, word_off, word_neg, word_pol, digit_keys, cs_bytes, cs_off, aux, zh_marks, figure_mark,
                  cw_cps, cw_off, k_zh, k_en, context_shift, one_sided, counted, min_zh, min_en, affixes,
                  figure_values, identifiers, figure_runs, sentence_sides, unit_tails, unit_keys, unit_vals,
                  unit_kind, word_unit, en_unit_run, unit_fills, counted_numerals):
    """Profiles of a window: document d is rows doc_off[d]:doc_off[d+1] of (entries, positions,
    kinds, codes, negations, figure starts, figure ends, unit ends), sorted by entry (stably, as the
    reference's argsort). Entries are (context hash >> context_shift) << 16 | fill hash; positions
    and figure spans are offsets in the document's text. ``one_sided``: a polarity word's anchor
    gives two entries, its left and its right context (profile v3); else one over both (v1, v2).
    ``counted``: Chinese negators in a row add up, and each sentence of at least ``min_zh``
    letters (``min_en`` words) gets an entry (v4). ``affixes``: negative prefixes of English words
    count as negators of their sentence (v5, :func:`_en_anchors`). ``figure_values``: figures
    read as values (v7): a thousands separator is part of its figure (1,200 is one figure, filled
    as 1200) and Chinese numerals fill as their value (一千二百 fills as 1200). ``identifiers``:
    runs of ASCII letters and digits are figures (v8: a credit code's letter, x5 / x3).
    ``figure_runs``: a figure deep in a run of at most this many figures has its place in the run
    in its context (v11, :func:`_in_figure_run`; 0: none). ``sentence_sides`` (v12): a polarity
    word that ends its sentence gives no right entry, and one that starts it no left entry: that
    side's context would be another sentence's, which a reordered or shortened copy changes (a
    paragraph moved after 不予支持。 put its first words where another 支持。's were).
    ``unit_tails`` (v13): an English percentage or decimal is one word with the letters and the 's
    after it (:func:`_en_word_end`). ``unit_keys``, ``unit_vals``, ``unit_kind`` (v17, a trie;
    empty before): the unit a Chinese figure is written with is left out of the frame
    (:func:`_zh_anchors`), and so are up to ``en_unit_run`` English unit words (``word_unit``;
    0: none, before v17) written after a figure (:func:`_en_anchors`). ``unit_fills`` (v18): a
    figure's fill holds its unit (5万元 is not 5千元, $4.2 billion not $4.2 million); before, the unit
    was nowhere, neither in the frame nor in the fill. ``counted_numerals`` (v19): one Chinese
    numeral that numbers or counts is a figure (第二次, 三项: :func:`_counted_numeral`). The class-free marks and
    fills of v4 are in the tables the caller passes."""
    n_docs = offsets.shape[0] - 1
    cap = cps.shape[0] // 16 + 64  # about one anchor in 40 characters: grown when a window has more
    entries = np.empty(cap, dtype=np.uint64)
    positions = np.empty(cap, dtype=np.int64)
    kinds_out = np.empty(cap, dtype=np.int8)
    codes_out = np.empty(cap, dtype=np.int32)
    negs_out = np.empty(cap, dtype=np.int32)
    fa_out = np.empty(cap, dtype=np.int64)
    fb_out = np.empty(cap, dtype=np.int64)
    fu_out = np.empty(cap, dtype=np.int64)
    doc_off = np.zeros(n_docs + 1, dtype=np.int64)
    longest = 1
    for d in range(n_docs):
        longest = max(longest, offsets[d + 1] - offsets[d] + 1)
    frame = np.empty(longest, dtype=np.uint32)
    at = np.empty(longest, dtype=np.int64)
    kinds = np.empty(longest, dtype=np.int8)
    codes = np.empty(longest, dtype=np.int64)
    negs = np.empty(longest, dtype=np.int64)
    fig_a = np.zeros(longest, dtype=np.int64)
    fig_b = np.zeros(longest, dtype=np.int64)
    fig_u = np.zeros(longest, dtype=np.int64)
    pos = np.empty(longest, dtype=np.int64)
    sents = np.empty((longest, 5), dtype=np.int64)
    starts = np.zeros(longest + 2, dtype=np.bool_)  # a sentence starts at this unit (cleared after each document)
    min_zh_sentence = min_zh if counted else longest + 1  # no sentence entries before v4
    min_en_sentence = min_en if counted else longest + 1
    u_src = np.empty(2 * longest, dtype=np.int8)
    u_a = np.zeros(2 * longest, dtype=np.int64)
    u_b = np.zeros(2 * longest, dtype=np.int64)
    u_skip = np.zeros(2 * longest, dtype=np.bool_)
    keys = np.empty(2 * longest, dtype=np.uint64)
    src = np.empty(2 * longest, dtype=np.int64)  # the anchor of each key
    buf = np.empty(max(256, 8 * k_zh + 8), dtype=np.uint8)  # a Chinese context always fits
    shift = np.uint64(context_shift)
    w = 0
    for d in range(n_docs):
        lo = offsets[d]
        hi = offsets[d + 1]
        if is_zh[d]:
            n, length, ns = _zh_anchors(cps, lo, hi, ctab, edge_keys, edge_vals, node_kind, node_code, word_keys,
                                        word_vals, word_cps, word_off, word_pol, digit_keys, zh_marks, figure_mark,
                                        frame, at, kinds, codes, negs, fig_a, fig_b, fig_u, pos, counted, sents,
                                        min_zh_sentence, figure_values, identifiers, starts, unit_keys,
                                        unit_vals, unit_kind, unit_fills, unit_fills, counted_numerals)
        else:
            n, length, ns = _en_anchors(cps, lo, hi, ctab, word_keys, word_vals, word_cps, word_off, word_neg,
                                        word_pol, aux, CONST_CPS, u_src, u_a, u_b, u_skip, at, kinds, codes, negs,
                                        fig_a, fig_b, fig_u, pos, sents, min_en_sentence, affixes, figure_values,
                                        identifiers, starts, unit_tails, word_unit, en_unit_run, unit_fills)
        m = 0
        for j in range(n):
            bare = kinds[j] == ANCHOR_NEGATOR
            fill, buf = _fill_hash(kinds[j], codes[j], negs[j], cps, fig_a[j], fig_b[j],
                                   fig_u[j] if unit_fills else fig_b[j], ctab, cs_bytes, cs_off, buf, figure_values)
            split = one_sided and kinds[j] == ANCHOR_CLASS
            for side in (LEFT_SIDE, RIGHT_SIDE) if split else (BOTH_SIDES, -1):
                if side < 0:
                    break
                if sentence_sides and split and _sentence_side(starts, at[j], length, side):
                    continue
                if is_zh[d]:
                    ctx = _zh_context(frame, length, at[j], bare, k_zh, side, buf)
                else:
                    ctx, buf = _en_context(length, at[j], bare, k_en, side, cps, CONST_CPS, u_src, u_a, u_b,
                                           cw_cps, cw_off, buf)
                if figure_runs > 0 and kinds[j] == ANCHOR_FIGURE:
                    if is_zh[d]:
                        before = _figures_in_row(frame, length, at[j], -1, figure_mark)
                        after = _figures_in_row(frame, length, at[j], 1, figure_mark)
                    else:
                        before = _figures_in_row(u_src, length, at[j], -1, 3)
                        after = _figures_in_row(u_src, length, at[j], 1, 3)
                    ctx, buf = _in_figure_run(ctx, before, after, k_zh if is_zh[d] else k_en, figure_runs, buf)
                keys[m] = ((ctx >> shift) << np.uint64(16)) | fill
                src[m] = j
                m += 1
        for t in range(ns):  # each sentence as one more anchor row, after the anchors
            j = n + t
            at[j] = sents[t, 0]
            kinds[j] = ANCHOR_SENTENCE
            codes[j] = -1
            negs[j] = sents[t, 2]
            pos[j] = sents[t, 3]
            fig_a[j] = sents[t, 3]  # a sentence's span, in its text: the excerpt keys read its length
            fig_b[j] = sents[t, 4]
            fig_u[j] = sents[t, 4]
            fill, buf = _fill_hash(ANCHOR_SENTENCE, -1, negs[j], cps, 0, 0, 0, ctab, cs_bytes, cs_off, buf, False)
            if is_zh[d]:
                ctx, buf = _zh_sentence(frame, sents[t, 0], sents[t, 1], buf)
            else:
                ctx, buf = _en_sentence(sents[t, 0], sents[t, 1], cps, CONST_CPS, u_src, u_a, u_b, u_skip, cw_cps,
                                        cw_off, buf)
            keys[m] = ((ctx >> shift) << np.uint64(16)) | fill
            src[m] = j
            m += 1
        starts[: length + 2] = False
        order = np.argsort(keys[:m], kind="mergesort")
        if w + m > cap:
            cap = 2 * (w + m)
            entries = _resized(entries, w, cap)
            positions = _resized(positions, w, cap)
            kinds_out = _resized(kinds_out, w, cap)
            codes_out = _resized(codes_out, w, cap)
            negs_out = _resized(negs_out, w, cap)
            fa_out = _resized(fa_out, w, cap)
            fb_out = _resized(fb_out, w, cap)
            fu_out = _resized(fu_out, w, cap)
        for t in range(m):
            entries[w] = keys[order[t]]
            o = src[order[t]]
            positions[w] = pos[o]
            kinds_out[w] = kinds[o]
            codes_out[w] = codes[o]
            negs_out[w] = negs[o]
            fa_out[w] = fig_a[o] - lo if kinds[o] == ANCHOR_FIGURE else fig_a[o] if kinds[o] == ANCHOR_SENTENCE else 0
            fb_out[w] = fig_b[o] - lo if kinds[o] == ANCHOR_FIGURE else fig_b[o] if kinds[o] == ANCHOR_SENTENCE else 0
            fu_out[w] = fig_u[o] - lo if kinds[o] == ANCHOR_FIGURE and unit_fills else fb_out[w]
            w += 1
        doc_off[d + 1] = w
    return (entries[:w], positions[:w], kinds_out[:w], codes_out[:w], negs_out[:w], fa_out[:w], fb_out[:w],
            fu_out[:w], doc_off)


# ---------------------------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------------------------

@njit(nogil=True, cache=True)
def _count_fill(entries, at, count, fill, skip_ctx):
    """How many of ``entries[at[0..count)]`` have the fill ``fill`` (in a context other than
    ``skip_ctx``; pass a value above any context to count them all)."""
    found = 0
    for t in range(count):
        v = entries[at[t]]
        if (v & np.uint64(0xFFFF)) == fill and (v >> np.uint64(16)) != skip_ctx:
            found += 1
    return found


@njit(nogil=True, cache=True)
def _all_polarity(mine, left_mine, i0, i1, theirs, left_theirs, j0, j1, pol):
    """Whether every leftover of a context, ``left_mine[i0:i1]`` and ``left_theirs[j0:j1]``, has
    the polarity byte ``pol``."""
    for s in range(i0, i1):
        if (mine[left_mine[s]] >> np.uint64(8) & np.uint64(0xFF)) != pol:
            return False
    for t in range(j0, j1):  # noqa: SIM110 (numba compiles loops, not generators)
        if (theirs[left_theirs[t]] >> np.uint64(8) & np.uint64(0xFF)) != pol:
            return False
    return True


@njit(nogil=True, cache=True)
def _moved_figure(mine, left_mine, i0, i1, na, theirs, left_theirs, j0, j1, nb, ctx):
    """Whether the replacement in context ``ctx`` (leftovers ``left_mine[i0:i1]`` of ``mine`` and
    ``left_theirs[j0:j1]`` of ``theirs``) is a figure that moved, not one that changed: every fill
    of it has one polarity byte (only figures differ), and a fill of one side is left over in the
    other, under other contexts, at least as often as it is left over on its own side. A deleted
    sentence joins the contexts of two figures (出口...增长20.9%. [进口...增长2.5%.] 贸易顺差): the
    20.9% of the joined context still stands in the other text, in the context the deletion took
    away. A figure written in place of another is one more of its kind on its side (2018 -> 2022
    where both texts also carry 2022 elsewhere), which no moving explains."""
    pol = mine[left_mine[i0]] >> np.uint64(8) & np.uint64(0xFF)
    if not _all_polarity(mine, left_mine, i0, i1, theirs, left_theirs, j0, j1, pol):
        return False
    if _swapped(mine, left_mine, i0, i1, na, theirs, left_theirs, j0, j1, nb, ctx):
        return False
    everywhere = np.uint64(1) << np.uint64(48)  # no context is this large
    for s in range(i0, i1):
        fill = mine[left_mine[s]] & np.uint64(0xFFFF)
        if _count_fill(mine, left_mine, na, fill, everywhere) <= _count_fill(theirs, left_theirs, nb, fill, ctx):
            return True
    for t in range(j0, j1):
        fill = theirs[left_theirs[t]] & np.uint64(0xFFFF)
        if _count_fill(theirs, left_theirs, nb, fill, everywhere) <= _count_fill(mine, left_mine, na, fill, ctx):
            return True
    return False


@njit(nogil=True, cache=True)
def _has_entry(entries, at, count, ctx, fill):
    """Whether one of ``entries[at[0..count)]`` is (``ctx``, ``fill``)."""
    want = (ctx << np.uint64(16)) | fill
    for t in range(count):  # noqa: SIM110 (numba compiles loops, not generators)
        if entries[at[t]] == want:
            return True
    return False


@njit(nogil=True, cache=True)
def _swapped(mine, left_mine, i0, i1, na, theirs, left_theirs, j0, j1, nb, ctx):
    """Whether the replacement in context ``ctx`` (mine x, theirs y) is crossed by another shared
    context where mine has y and theirs has x: two figures (or names) that traded places
    (受理1200件，办结980件 / 受理980件，办结1200件; 3比1 / 1比3). A moved paragraph takes its
    contexts along and a deleted sentence joins two contexts into a new one; neither crosses."""
    for s in range(i0, i1):
        x = mine[left_mine[s]] & np.uint64(0xFFFF)
        for t in range(j0, j1):
            y = theirs[left_theirs[t]] & np.uint64(0xFFFF)
            if x != y and _same_pair_elsewhere(mine, left_mine, na, theirs, left_theirs, nb, ctx, y, x):
                return True
    return False


@njit(nogil=True, cache=True)
def _carries(owner, other, fill, presence):
    """Whether ``other`` carries the name of ``owner`` whose entries have ``fill``: owner's presence
    entries with that fill byte on top of their context are all in ``other`` too (32 bits of the
    name compared; when two names of ``owner`` share the byte, both must be carried, as which one
    the fill stands for is not known). Without presence entries on both sides (``presence``
    false), whether ``other`` has the fill."""
    if not presence:
        return has_fill(other, fill)
    return carried_name(owner, other, fill, np.uint64(NAME_PRESENT_FILL))


@njit(nogil=True, cache=True)
def _written_alike(mine, theirs, x, y):
    """Whether a name of ``mine`` with fill ``x`` and one of ``theirs`` with fill ``y`` that the
    other lacks share more than half of their letters (presence entries' letter sets,
    ``neardup.kernels.entities.letter_sets``): one name written two ways (中国银行 / 中国人民银行,
    动画部 / 动画片部, a typo: kurosawa / hurosawa), not two names (王新民 / 王新明 share half).
    Where both sides have second letter sets (v10), those must share more than half too: one
    24-bit set alone makes two names of three characters alike about one time in 30."""
    if not _alike_in(mine, theirs, x, y, np.uint64(NAME_PRESENT_FILL)):
        return False
    return _alike_in(mine, theirs, x, y, np.uint64(NAME_LETTERS_FILL), True)


@njit(nogil=True, cache=True)
def _alike_in(mine, theirs, x, y, present, missing=False):
    """Whether a letter set (entries with fill ``present``) of ``mine``'s name of fill byte ``x``
    shares more than half its bits with one of ``theirs``' of ``y``; ``missing`` where either
    side has none."""
    low = np.uint64(0xFFFFFF)
    seen = False
    for s in range(mine.shape[0]):
        v = mine[s]
        if (v & np.uint64(0xFFFF)) != present or (v >> np.uint64(40)) != (x & np.uint64(0xFF)):
            continue
        a = (v >> np.uint64(16)) & low
        for t in range(theirs.shape[0]):
            u = theirs[t]
            if (u & np.uint64(0xFFFF)) != present or (u >> np.uint64(40)) != (y & np.uint64(0xFF)):
                continue
            seen = True
            b = (u >> np.uint64(16)) & low
            if 2 * popcount64(a & b) > popcount64(a | b):
                return True
    return missing and not seen


@njit(nogil=True, cache=True)
def _partial_rename(mine, left_mine, i0, i1, na, theirs, left_theirs, j0, j1, nb, ctx):
    """Whether the replacement in a context is of names (every fill has ``NAME_FILL_BYTE``) that
    both texts carry elsewhere (a name moved in a list), or that are one name written two ways (a
    typo, lon&g; 中国银行 / 中国人民银行), not another company, person or place: one the other
    text never names, whether it took the old name's place everywhere or in one mention of several
    (成都 ... 成都市一环路 / 成都 ... 文锦渡一环路; told by both contexts of the mention, and only
    where both texts have presence entries: by fill bytes alone, as older records are compared, a
    name carried is a typo). The caller has seen that every fill of the context is a name's."""
    pf = np.uint64(NAME_PRESENT_FILL)
    presence = has_fill(mine, pf) and has_fill(theirs, pf)  # once, not at every pair of fills
    for s in range(i0, i1):
        x = mine[left_mine[s]] & np.uint64(0xFFFF)
        for t in range(j0, j1):
            y = theirs[left_theirs[t]] & np.uint64(0xFFFF)
            if x == y or _written_alike(mine, theirs, x, y):
                continue
            carried = int(_carries(mine, theirs, x, presence)) + int(_carries(theirs, mine, y, presence))
            if carried == 0 or (carried == 1 and presence
                                and _same_pair_elsewhere(mine, left_mine, na, theirs, left_theirs, nb, ctx, x, y)):
                return False
    return True


@njit(nogil=True, cache=True)
def _same_pair_elsewhere(mine, left_mine, na, theirs, left_theirs, nb, ctx, x, y):
    """Whether another context than ``ctx`` has ``x`` left over in ``mine`` and ``y`` in
    ``theirs``: the name's other side, so the words on both sides of the mention are the same and
    only the name changed."""
    for u in range(na):
        v = mine[left_mine[u]]
        other = v >> np.uint64(16)
        if other != ctx and (v & np.uint64(0xFFFF)) == x and _has_entry(theirs, left_theirs, nb, other, y):
            return True
    return False


@njit(nogil=True, cache=True, inline="always")
def _context_end(entries, left, at, count, ctx):
    """The end of the run of leftovers ``left[at:count]`` whose entries have context ``ctx``."""
    while at < count and (entries[left[at]] >> np.uint64(16)) == ctx:
        at += 1
    return at


@njit(nogil=True, cache=True, inline="always")
def _is_weak(entry):
    """Whether an entry is a weak name's or a name's twin (:data:`WEAK_NAME_BYTE`,
    :data:`NAME_TWIN_BYTE`): entries that pair only with each other (:func:`_replaced_weak`)."""
    byte = entry >> np.uint64(8) & np.uint64(0xFF)
    return byte == np.uint64(WEAK_NAME_BYTE) or byte == np.uint64(NAME_TWIN_BYTE)


@njit(nogil=True, cache=True)
def _replaced_weak(mine, left_mine, na, theirs, left_theirs, nb):
    """Index in ``mine`` of the first weak name's entry whose context the other text fills with
    another weak name (both words the dictionary tags a person: 雷达 / 普渡), or with a name's twin
    (a name of one token: 古建筑 / 林子) where both sides of the word show the same two (the
    name's other context too: a name and a word that only share the words after them are no
    swap), that shares neither its first nor its last letter (four bits of each: not 林子 / 林木,
    修正 / 匡正, 师傅 / 老师傅) and that neither
    text has anywhere else (not a list reordered); -1 when there is none. Twins of two names
    are left to the names' own entries. Leftovers ``left_mine[:na]`` and ``left_theirs[:nb]``
    are the weak and twin entries left after cancelling equal ones, sorted by context."""
    tb = np.uint64(NAME_TWIN_BYTE)
    i = 0
    j = 0
    while i < na and j < nb:
        ca = mine[left_mine[i]] >> np.uint64(16)
        cb = theirs[left_theirs[j]] >> np.uint64(16)
        if ca < cb:
            i += 1
        elif ca > cb:
            j += 1
        else:
            i1 = _context_end(mine, left_mine, i, na, ca)
            j1 = _context_end(theirs, left_theirs, j, nb, ca)
            for s in range(i, i1):
                x = mine[left_mine[s]] & np.uint64(0xFFFF)
                for t in range(j, j1):
                    y = theirs[left_theirs[t]] & np.uint64(0xFFFF)
                    twins = int((x >> np.uint64(8)) == tb) + int((y >> np.uint64(8)) == tb)
                    if twins == 2:
                        continue
                    if (x & np.uint64(0xF0)) == (y & np.uint64(0xF0)) or (x & np.uint64(0xF)) == (y & np.uint64(0xF)):
                        continue
                    if has_fill(theirs, x) or has_fill(mine, y):
                        continue
                    if twins == 0 or _same_pair_elsewhere(mine, left_mine, na, theirs, left_theirs, nb, ca, x, y):
                        return left_mine[s]
            i = i1
            j = j1
    return -1


@njit(nogil=True, cache=True)
def replaced_context(mine, theirs):
    """Index in ``mine`` of the first entry whose context has, after cancelling equal entries
    pairwise, a fill left on both sides (a replacement) that is not a moved figure
    (:func:`_moved_figure`) or, of names, not a rename in part (:func:`_partial_rename`); then,
    where there is none, of a weak name replaced by another (:func:`_replaced_weak`: weak names'
    entries pair only with each other); -1 when there is none. Names do not move as figures do:
    their contexts stay inside a sentence, so no deleted sentence joins two of them."""
    n = mine.shape[0]
    m = theirs.shape[0]
    left_mine = np.empty(n, dtype=np.int64)
    left_theirs = np.empty(m, dtype=np.int64)
    weak_mine = np.empty(n, dtype=np.int64)
    weak_theirs = np.empty(m, dtype=np.int64)
    a = 0
    b = 0
    na = 0
    nb = 0
    wa = 0
    wb = 0
    while a < n or b < m:
        if a < n and b < m and mine[a] == theirs[b]:
            a += 1
            b += 1
        elif b >= m or (a < n and mine[a] < theirs[b]):
            if _is_weak(mine[a]):
                weak_mine[wa] = a
                wa += 1
            else:
                left_mine[na] = a
                na += 1
            a += 1
        else:
            if _is_weak(theirs[b]):
                weak_theirs[wb] = b
                wb += 1
            else:
                left_theirs[nb] = b
                nb += 1
            b += 1
    # both leftovers are sorted by context: look for a context present in both
    i = 0
    j = 0
    while i < na and j < nb:
        ca = mine[left_mine[i]] >> np.uint64(16)
        cb = theirs[left_theirs[j]] >> np.uint64(16)
        if ca < cb:
            i += 1
        elif ca > cb:
            j += 1
        else:
            i1 = _context_end(mine, left_mine, i, na, ca)
            j1 = _context_end(theirs, left_theirs, j, nb, ca)
            names = _all_polarity(mine, left_mine, i, i1, theirs, left_theirs, j, j1, np.uint64(NAME_FILL_BYTE))
            if names and not _partial_rename(mine, left_mine, i, i1, na, theirs, left_theirs, j, j1, nb, ca):
                return left_mine[i]
            if not names and not _moved_figure(mine, left_mine, i, i1, na, theirs, left_theirs, j, j1, nb, ca):
                return left_mine[i]
            i = i1
            j = j1
    return _replaced_weak(mine, weak_mine, wa, theirs, weak_theirs, wb)
