"""Entity anchors: names (people, places, organisations) as critical-difference entries.

A name token's entries are two one-sided contexts, the k tokens before it and the k after it
(other names in them stand as one mark, so a name replaced everywhere leaves its neighbours'
contexts equal), each with 8 bits of the name's hash as its fill. Two texts that share such a
context but not its name speak of someone else: the same notice about another company is a
distinct document. Each distinct name also gets one presence entry (its fill ``present_fill``,
its context the name's letter set in 24 bits under the fill's 8), so that whether the other text
carries a name at all is asked of 32 bits, not of the 8 a fill has (a text with 30 names has one
whose fill byte matches by chance in one case of nine), and a name written another way
(中国银行 / 中国人民银行, a typo) is told from another name.
The entries join the document's critical-difference profile (``neardup.rules.differences``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neardup.kernels.hashing import FNV_OFFSET, FNV_PRIME, GOLDEN, fmix64, hash_span
from neardup.kernels.simhash import popcount64
from neardup.kernels.text import ALNUM, CJK, DIGIT

NAME_MARK = np.uint64(0x9E3779B97F4A7C15)  # a name inside another name's context
LEFT = np.uint64(0x4C)
RIGHT = np.uint64(0x52)


SCANNED_TABLE = 512  # tables this short are scanned (:func:`_in_sorted`)


@njit(nogil=True, cache=True, inline="always")
def _in_sorted(table, c):
    """Whether ``c`` is in the sorted array ``table``. A table of up to :data:`SCANNED_TABLE`
    entries is scanned whole, without a branch on what it holds (the compiler makes it a vector
    loop): nearly every token misses it, and a binary search's mispredicted branches cost more
    than the whole scan up to about this length (bench/table_lookup.py)."""
    n = table.shape[0]
    if n <= SCANNED_TABLE:
        found = False
        for k in range(n):
            found |= table[k] == c
        return found
    at = np.searchsorted(table, c)
    return at < n and table[at] == c


@njit(nogil=True, cache=True, inline="always")
def _has_any(cps, start, end, table):
    """Whether a code point of ``cps[start:end]`` is in the sorted array ``table``."""
    for c in range(start, end):  # noqa: SIM110 (numba compiles loops, not generators)
        if _in_sorted(table, cps[c]):
            return True
    return False


@njit(nogil=True, cache=True)
def build_name_table(names, canonical):
    """An open-addressing table (load at most a quarter, linear probing) of the distinct non-zero
    hashes ``names`` with their canonical hashes: (slot keys, slot values). A token's lookup
    then costs one or two cache lines, not a binary search over the whole list."""
    size = 1
    while size < 4 * names.shape[0] + 4:
        size *= 2
    mask = np.uint64(size - 1)
    keys = np.zeros(size, dtype=np.uint64)
    values = np.zeros(size, dtype=np.uint64)
    for j in range(names.shape[0]):
        h = names[j]
        i = np.int64(h & mask)
        while keys[i] != 0 and keys[i] != h:
            i = np.int64((np.uint64(i) + np.uint64(1)) & mask)
        keys[i] = h
        values[i] = canonical[j]
    return keys, values


@njit(nogil=True, cache=True)
def name_tokens(tok_hashes, keys, values):
    """Which tokens are names (their hash is a key of the table of :func:`build_name_table`), and
    each name's canonical hash (北京市 and 北京 fill alike)."""
    n = tok_hashes.shape[0]
    flags = np.zeros(n, dtype=np.bool_)
    fills = np.zeros(n, dtype=np.uint64)
    mask = np.uint64(keys.shape[0] - 1)
    for t in range(n):
        h = tok_hashes[t]
        i = np.int64(h & mask)
        for _ in range(keys.shape[0]):  # bounded: a table without an empty slot ends the probe too
            if keys[i] == 0:
                break
            if keys[i] == h:
                flags[t] = True
                fills[t] = values[i]
                break
            i = np.int64((np.uint64(i) + np.uint64(1)) & mask)
    return flags, fills


@njit(nogil=True, cache=True)
def doc_names(tok_hashes, tok_off, names, name_off):
    """Which tokens of each document d are among its own names ``names[name_off[d]:name_off[d+1]]``
    (sorted within each document)."""
    flags = np.zeros(tok_hashes.shape[0], dtype=np.bool_)
    for d in range(tok_off.shape[0] - 1):
        lo, hi = name_off[d], name_off[d + 1]
        if lo == hi:
            continue
        own = names[lo:hi]
        for t in range(tok_off[d], tok_off[d + 1]):
            flags[t] = _in_sorted(own, tok_hashes[t])
    return flags


@njit(nogil=True, cache=True)
def sentence_breaks(cps, starts, ends, tok_off, marks):
    """Whether a sentence ends between token j - 1 and token j (a code point of the sorted
    ``marks`` stands between them); the first token of each document starts one."""
    n = starts.shape[0]
    out = np.zeros(n, dtype=np.bool_)
    for d in range(tok_off.shape[0] - 1):
        for j in range(tok_off[d], tok_off[d + 1]):
            if j == tok_off[d]:
                out[j] = True
                continue
            out[j] = _has_any(cps, ends[j - 1], starts[j], marks)
    return out


@njit(nogil=True, cache=True, inline="always")
def _context(tok_hashes, flags, skip, lo, hi, seed, side):
    """32 bits of the tokens ``lo:hi`` (names as one mark, ``skip`` ones left out), seeded and sided."""
    h = fmix64(np.uint64(seed) ^ side)
    for j in range(lo, hi):
        if not skip[j]:
            h = fmix64(h ^ (NAME_MARK if flags[j] else tok_hashes[j]))
    return h >> np.uint64(32)


@njit(nogil=True, cache=True)
def side_contexts(tok_hashes, flags, seed):
    """(left, right): the contexts (:func:`_context`) of a name whose side is these tokens alone
    (names where ``flags``): what a comparison knows as no place (a name's own other part, The of
    "The Tories said")."""
    skip = np.zeros(tok_hashes.shape[0], dtype=np.bool_)
    n = tok_hashes.shape[0]
    return _context(tok_hashes, flags, skip, 0, n, seed, LEFT), _context(tok_hashes, flags, skip, 0, n, seed, RIGHT)


@njit(nogil=True, cache=True, inline="always")
def _sides(breaks, skip, a, b, i, k):
    """(lo, hi): the tokens ``lo:i`` before token ``i`` and ``i+1:hi`` after it that its name
    contexts read, ``k`` each side at most besides the ``skip`` ones (a company's legal form,
    profile v10), inside token ``i``'s sentence (``breaks``) and its document (tokens ``a:b``).
    One definition for the entries (:func:`entity_entries`) and the slots they are looked up by
    (:func:`slot_contexts`), which must agree exactly."""
    lo = i
    n = 0
    while lo > a and not breaks[lo] and n < k:
        lo -= 1
        n += not skip[lo]
    hi = i + 1
    n = 0
    while hi < b and not breaks[hi] and n < k:
        n += not skip[hi]
        hi += 1
    return lo, hi


@njit(nogil=True, cache=True, inline="always")
def _kept(skip, lo, hi):
    """Whether a token of ``lo:hi`` is not skipped."""
    for j in range(lo, hi):  # noqa: SIM110 (numba compiles loops, not generators)
        if not skip[j]:
            return True
    return False


PRESENCE_BITS = 24  # bits of a presence entry's letter set (the fill byte takes the other 8 of its context)
# the second letter set of a name (profile v10) hashes its letters with this seed instead: two
# names of three characters share two of 24 bits, and so read as one name written two ways, about
# one time in 30; in both sets, one time in a thousand
SECOND_LETTERS = np.uint64(0x5851F42D4C957F2D)


@njit(nogil=True, cache=True, inline="always")
def presence_context(fill_hash, letters):
    """The 32-bit context of a name's presence entry: the byte its fill has on top (where a
    comparison looks it up), then the name's letter set (:func:`letter_sets`)."""
    return ((fill_hash & np.uint64(0xFF)) << np.uint64(PRESENCE_BITS)) | (letters & np.uint64((1 << PRESENCE_BITS) - 1))


@njit(nogil=True, cache=True)
def letter_sets(cps, starts, ends, flags, pairs, suffixes, seed=GOLDEN):
    """Each name token's letters as a set of ``PRESENCE_BITS`` bits: its characters (Chinese; a
    place without its administrative suffix, sorted ``suffixes``, as its fill reads it) or its
    letter pairs (``pairs``: English, where single letters say little). Two names written alike
    share most of their bits (中国银行 / 中国人民银行, kurosawa / hurosawa); two different
    names few; equal names all, so the set also tells whether a text carries a name. ``seed``:
    the hashes' (:data:`SECOND_LETTERS` for a name's second set)."""
    out = np.zeros(starts.shape[0], dtype=np.uint64)
    for t in range(starts.shape[0]):
        if not flags[t]:
            continue
        a, b = starts[t], ends[t]
        if not pairs and b - a >= 3 and _in_sorted(suffixes, cps[b - 1]):
            b -= 1
        bits = np.uint64(0)
        if pairs and b - a >= 2:
            for c in range(a, b - 1):
                h = fmix64((np.uint64(cps[c]) << np.uint64(21)) ^ np.uint64(cps[c + 1]) ^ seed)
                bits |= np.uint64(1) << (h % np.uint64(PRESENCE_BITS))
        else:
            for c in range(a, b):
                h = fmix64(np.uint64(cps[c]) ^ seed)
                bits |= np.uint64(1) << (h % np.uint64(PRESENCE_BITS))
        out[t] = bits
    return out


@njit(nogil=True, cache=True, inline="always")
def _side_entries(entries, tokens, w, tok_hashes, flags, skip, seed, fill, lo, first, last, hi):
    """Write at ``w`` the entries of a name of tokens ``first..last`` filled ``fill``: its left
    context (tokens ``lo:first``) and its right one (``last+1:hi``), each only where the side
    holds a word; returns the next free index. Both are the name's first token's."""
    if _kept(skip, lo, first):
        entries[w] = (_context(tok_hashes, flags, skip, lo, first, seed, LEFT) << np.uint64(16)) | fill
        tokens[w] = first
        w += 1
    if _kept(skip, last + 1, hi):
        entries[w] = (_context(tok_hashes, flags, skip, last + 1, hi, seed, RIGHT) << np.uint64(16)) | fill
        tokens[w] = first
        w += 1
    return w


@njit(nogil=True, cache=True)
def entity_entries(tok_hashes, tok_off, flags, fills, letters, letters2, breaks, skip, k, seed, fill_byte,
                   present_fill, letters_fill, last, cont):
    """The entries (context << 16 | fill_byte << 8 | name byte) of every name token, two a name,
    and one presence entry (:func:`presence_context` << 16 | ``present_fill``) a distinct name,
    and (``letters2`` not empty, profile v10) one entry of its second letter set
    (:func:`presence_context` of ``letters2[i]`` << 16 | ``letters_fill``),
    sorted within each document; the token of each entry; the entries' document offsets.
    ``fills[i]``: the name hash of token i (where ``flags[i]``) its fill byte is taken from;
    ``letters[i]``: its letter set (:func:`letter_sets`; an English fill reads only its first
    letters, the set all of them). A context stays inside the name's
    sentence (``breaks``): a reordered paragraph or a deleted sentence puts other words before a
    name at a sentence's start, which would read as another name in the same place. ``skip``:
    tokens the contexts leave out (a company's legal form, v10: 股份/有限公司 and 有限公司 leave
    the words after a company alike)."""
    n_docs = tok_off.shape[0] - 1
    second = letters2.shape[0] > 0
    per_name = 4 if second else 3
    total = 0
    for i in range(tok_hashes.shape[0]):
        total += per_name if flags[i] and not cont[i] else 0
    entries = np.empty(total, dtype=np.uint64)
    tokens = np.empty(total, dtype=np.int64)
    doc_off = np.zeros(n_docs + 1, dtype=np.int64)
    w = 0
    fb = np.uint64(fill_byte) << np.uint64(8)
    for d in range(n_docs):
        a, b = tok_off[d], tok_off[d + 1]
        start = w
        for i in range(a, b):
            if not flags[i] or cont[i]:
                continue
            entries[w] = (presence_context(fills[i], letters[i]) << np.uint64(16)) | np.uint64(present_fill)
            tokens[w] = i
            w += 1
            if second:
                entries[w] = (presence_context(fills[i], letters2[i]) << np.uint64(16)) | np.uint64(letters_fill)
                tokens[w] = i
                w += 1
            fill = fb | (fills[i] & np.uint64(0xFF))
            lo, _ = _sides(breaks, skip, a, b, i, k)
            _, hi = _sides(breaks, skip, a, b, last[i], k)
            # a side with no token (the name starts or ends its sentence) is every such name's
            # context: it would pair names that have nothing else in common (a cut "Jame" with a
            # sentence's last name), so only a side with words gives an entry
            w = _side_entries(entries, tokens, w, tok_hashes, flags, skip, seed, fill, lo, i, last[i], hi)
        order = np.argsort(entries[start:w], kind="mergesort")
        entries[start:w] = entries[start:w][order]
        tokens[start:w] = tokens[start:w][order]
        kept = start  # one presence entry a name (the first occurrence's token: stable sort), one second set
        for j in range(start, w):
            v = entries[j]
            if j > start and v == entries[kept - 1] and ((v & np.uint64(0xFFFF)) == np.uint64(present_fill)
                                                         or (v & np.uint64(0xFFFF)) == np.uint64(letters_fill)):
                continue
            entries[kept] = v
            tokens[kept] = tokens[j]
            kept += 1
        w = kept
        doc_off[d + 1] = w
    return entries[:w].copy(), tokens[:w].copy(), doc_off


@njit(nogil=True, cache=True)
def slot_contexts(tok_hashes, tok_off, flags, breaks, skip, k, seed):
    """For every token, the left and the right context a name standing there would have
    (:func:`entity_entries`' contexts): what the other text's name entries are looked up by when
    this text has some other word in the name's place (:func:`one_sided_name`); and whether each
    side holds a word that is no name (``worded``: left, right)."""
    n = tok_hashes.shape[0]
    left = np.empty(n, dtype=np.uint64)
    right = np.empty(n, dtype=np.uint64)
    worded = np.zeros((n, 2), dtype=np.bool_)
    for d in range(tok_off.shape[0] - 1):
        a, b = tok_off[d], tok_off[d + 1]
        for i in range(a, b):
            lo, hi = _sides(breaks, skip, a, b, i, k)
            left[i] = _context(tok_hashes, flags, skip, lo, i, seed, LEFT)
            right[i] = _context(tok_hashes, flags, skip, i + 1, hi, seed, RIGHT)
            for j in range(lo, i):
                worded[i, 0] |= not flags[j] and not skip[j]
            for j in range(i + 1, hi):
                worded[i, 1] |= not flags[j] and not skip[j]
    return left, right, worded


@njit(nogil=True, cache=True, inline="always")
def _name_at(theirs, ctx, fill_byte, mine, present_fill):
    """The fill (16 bits) of a name entry of ``theirs`` in context ``ctx`` whose name ``mine`` does
    not carry (:func:`carried_name`); 0 when there is none."""
    at = np.searchsorted(theirs, ctx << np.uint64(16))
    while at < theirs.shape[0] and (theirs[at] >> np.uint64(16)) == ctx:
        f = theirs[at] & np.uint64(0xFFFF)
        if (f >> np.uint64(8)) == fill_byte and not carried_name(theirs, mine, f, present_fill):
            return f
        at += 1
    return np.uint64(0)


@njit(nogil=True, cache=True, inline="always")
def has_fill(entries, fill):
    """Whether an entry of ``entries`` has the fill ``fill`` (its 16 low bits), in any context:
    names' presence entries (a record made before they were is compared by fill bytes alone), a
    weak name's word."""
    for t in range(entries.shape[0]):  # noqa: SIM110 (numba compiles loops, not generators)
        if (entries[t] & np.uint64(0xFFFF)) == fill:
            return True
    return False


@njit(nogil=True, cache=True)
def carried_name(owner, other, fill, present_fill):
    """Whether ``other`` carries the name of ``owner`` whose entries have ``fill``: owner's presence
    entries with that fill byte on top of their context are all in ``other`` too (32 bits of the
    name compared; when two names of ``owner`` share the byte, both must be carried, as which one
    the fill stands for is not known)."""
    byte = fill & np.uint64(0xFF)
    found = False
    for t in range(owner.shape[0]):
        v = owner[t]
        if (v & np.uint64(0xFFFF)) != present_fill or (v >> np.uint64(40)) != byte:
            continue
        at = np.searchsorted(other, v)
        if at >= other.shape[0] or other[at] != v:
            return False
        found = True
    return found


@njit(nogil=True, cache=True, inline="always")
def _letters_of(owner, fill, present_fill):
    """The union of the letter sets of ``owner``'s presence entries with ``fill``'s byte."""
    out = np.uint64(0)
    for t in range(owner.shape[0]):
        v = owner[t]
        if (v & np.uint64(0xFFFF)) == present_fill and (v >> np.uint64(40)) == (fill & np.uint64(0xFF)):
            out |= (v >> np.uint64(16)) & np.uint64((1 << PRESENCE_BITS) - 1)
    return out


# words of a slot's two contexts together; a side of one word only when it is a content word
# (在/近日/于 ... 稀树 ... 召开。: 召开 alone after it)
SLOT_CONTEXT_TOKENS = 4


@njit(nogil=True, cache=True, inline="always")
def _sentence_tokens(breaks, t, step):
    """How many tokens of token ``t``'s sentence stand before it (``step`` -1) or after it (1),
    up to three."""
    n = breaks.shape[0]
    count = 0
    j = t
    while count < 3:
        if step < 0:
            if breaks[j] or j == 0:
                break
            j -= 1
        else:
            j += 1
            if j >= n or breaks[j]:
                break
        count += 1
    return count


@njit(nogil=True, cache=True)
def one_sided_name(mine, theirs, left, right, worded, letters, letters2, words, sides, glued, rare, inner, breaks,
                   max_tokens, fill_byte, present_fill, letters_fill):
    """Where a name of ``theirs`` (entries) stands in ``mine``'s text as words ``mine`` does not
    read as a name: tokens t1..t2, two to ``max_tokens`` of them written together (``glued``: no
    punctuation before the token; ``words``: ideographs only and no name of mine; one dictionary
    word there is a synonym, 我国 for 中国, not a name, unless the dictionary rarely sees it:
    ``rare``, 稀树 for 墨西哥) with :data:`SLOT_CONTEXT_TOKENS` tokens of their sentence around
    them, one each side at least (a side of one only when it is a word: ``sides``; a character that is
    no word, a particle's, only inside the slot between words: ``inner``, 廖/全/京), the name's left
    context before t1 and its right context after t2 (``left``, ``right``: :func:`slot_contexts`
    of mine's tokens), one side at least with a word that is no name (``worded``: the right side
    at a sentence's start; two sides of names only, 镇/鹜/窝/村 and 王/素/琴, are the context of
    every name inside a list; one is a list's first or last place), the name not carried by
    ``mine`` and not written alike (half its letters or more shared, ``letters``: every token's
    letter set; where ``theirs`` has second letter sets, v10, in ``letters2`` too). The same notice about another person
    whose name no dictionary knows (何/炼成 for 江泽民). (t1, t2), or (-1, -1). A record needs
    presence entries (v6 records): ``theirs`` a record's, which without them says nothing of its
    names; ``mine`` the deciding text's own, which without them has none."""
    pf = np.uint64(present_fill)
    fb = np.uint64(fill_byte)
    if not has_fill(theirs, pf):  # mine is the deciding text's own profile: no names is none
        return -1, -1
    n = left.shape[0]
    for t1 in range(n):
        if not words[t1]:
            continue
        # a name that starts its sentence has no left entry (entity_entries): its right one, of
        # two words at least, and the name's letters tell, where the other text names it once
        start = breaks[t1]
        before = 0 if start else _sentence_tokens(breaks, t1, -1)
        if not start and before < 2 and not sides[t1 - 1]:
            continue
        f1 = np.uint64(0) if start else _name_at(theirs, left[t1], fb, mine, pf)
        if f1 == 0 and not start:
            continue
        span = letters[t1]
        span2 = letters2[t1]
        for t2 in range(t1 if rare[t1] else t1 + 1, min(n - 1, t1 + max_tokens)):
            if t2 > t1:
                if not (words[t2] or inner[t2]) or breaks[t2] or not glued[t2]:
                    break
                span |= letters[t2]
                span2 |= letters2[t2]
                if not words[t2]:
                    continue
            after = _sentence_tokens(breaks, t2, 1)
            if (after < (2 if start else 1) or before + after < (2 if start else SLOT_CONTEXT_TOKENS)
                    or (after < 2 and not sides[t2 + 1]) or not (worded[t2, 1] or (not start and worded[t1, 0]))):
                continue
            f2 = _name_at(theirs, right[t2], fb, mine, pf)
            if f2 == 0 or (start and not _once(theirs, f2)
                           and not _named_again(theirs, mine, right, letters, letters2, breaks, t1, t2, f2, fb, pf)):
                continue
            one = f2 if start else f1
            name = _letters_of(theirs, one, pf) | _letters_of(theirs, f2, pf)
            if 2 * popcount64(name & span) < popcount64(name | span):
                return t1, t2
            lf = np.uint64(letters_fill)
            name2 = _letters_of(theirs, one, lf) | _letters_of(theirs, f2, lf)
            if name2 and 2 * popcount64(name2 & span2) < popcount64(name2 | span2):
                return t1, t2
    return -1, -1


@njit(nogil=True, cache=True)
def _named_again(theirs, mine, right, letters, letters2, breaks, t1, t2, fill, fill_byte, present_fill):
    """Whether the words ``t1..t2`` at a sentence's start, before a right context where ``theirs``
    names ``fill``, stand so again at another sentence's start, before another context where it
    names it: a name the other text names at several sentences' starts, replaced at each (the same
    notice about another person), not an edit at one place. Words are compared by both letter sets."""
    k = t2 - t1
    for s in range(right.shape[0] - k):
        if s == t1 or not breaks[s]:
            continue
        same = True
        for j in range(k + 1):
            if letters[s + j] != letters[t1 + j] or letters2[s + j] != letters2[t1 + j]:
                same = False
                break
        if same and _name_at(theirs, right[s + k], fill_byte, mine, present_fill) == fill:
            return True
    return False


@njit(nogil=True, cache=True, inline="always")
def _once(theirs, fill):
    """Whether ``theirs`` has one entry of ``fill`` only: a name named once, at the start of its
    sentence (a mention inside a sentence has an entry each side)."""
    count = 0
    for t in range(theirs.shape[0]):
        if (theirs[t] & np.uint64(0xFFFF)) == fill:
            count += 1
    return count == 1


@njit(nogil=True, cache=True)
def slot_words(cps, starts, ends, flags, stops, classes):
    """(which tokens may stand for another text's name, which are words that may stand beside
    one, which may stand inside one between such words: :func:`one_sided_name`). The first:
    ideographs only, none of them a particle, a conjunction or a demonstrative (``stops``, sorted:
    或者, 该), and not a name of this text. The second: ideographs, not a name, and two of them at
    least or no particle (经查 and 男, not 在). The third: one ideograph, no name, that is not of
    the first (全 of 廖/全/京)."""
    out = np.zeros(starts.shape[0], dtype=np.bool_)
    sides = np.zeros(starts.shape[0], dtype=np.bool_)
    inner = np.zeros(starts.shape[0], dtype=np.bool_)
    for t in range(starts.shape[0]):
        if flags[t] or not _han_span(cps, starts[t], ends[t], classes):
            continue
        out[t] = not _has_any(cps, starts[t], ends[t], stops)
        sides[t] = out[t] or ends[t] - starts[t] >= 2
        inner[t] = not out[t] and ends[t] - starts[t] == 1
    return out, sides, inner


@njit(nogil=True, cache=True)
def _han_span(cps, start, end, classes):
    """Whether ``cps[start:end]`` is all Han ideographs (the ``CJK`` flag of ``classes``)."""
    limit = classes.shape[0]
    for c in range(start, end):  # noqa: SIM110 (numba compiles loops, not generators)
        if cps[c] >= limit or not classes[cps[c]] & CJK:
            return False
    return True


@njit(nogil=True, cache=True)
def surname_names(cps, starts, ends, tok_off, tok_hashes, flags, fills, surnames, stops, classes, glued, joined,
                  onto_names):
    """Flag, in place, people the dictionary lacks (Chinese): a surname standing alone as a
    one-character token (``surnames``: sorted code points) followed by a token of one or two
    ideographs (王/新民, 刘/业/定) that holds no particle or preposition (``stops``, sorted:
    黄/的, 李/在 are no people): both tokens are the name; ``glued`` (profile v9): only when
    nothing stands between them (兰，男 is no one). A run of one-character tokens is read by
    :func:`single_char_names`, first. ``onto_names`` (profile v10): the token after the surname
    may be a name of the dictionary already (赵/新民: 新民 is a town too). ``joined``: set, in
    place, on both tokens of every person read (their name is one, :func:`name_runs`)."""
    for d in range(tok_off.shape[0] - 1):
        a, b = tok_off[d], tok_off[d + 1]
        for i in range(a, b - 1):
            if (ends[i] - starts[i] != 1 or flags[i] or (flags[i + 1] and not onto_names)
                    or (glued and starts[i + 1] != ends[i])):
                continue
            m = ends[i + 1] - starts[i + 1]
            if not (_in_sorted(surnames, cps[starts[i]]) and 1 <= m <= 2
                    and _han_span(cps, starts[i + 1], ends[i + 1], classes)
                    and not _has_any(cps, starts[i + 1], ends[i + 1], stops)):
                continue
            for t in (i, i + 1):
                flags[t] = True
                fills[t] = tok_hashes[t]
                joined[t] = True


@njit(nogil=True, cache=True)
def surname_word_names(cps, starts, ends, tok_off, tok_hashes, flags, fills, surnames, tails, stops, classes, joined):
    """Flag, in place, people whose surname jieba glued to the first character of the given
    name (卫志/刚, 周一/鸣, 王国/庆): a token of two ideographs that starts with a surname
    (``surnames``: sorted code points), then one ideograph written together with it that given
    names often end with and that is rarely a word alone (``tails``: sorted code points, 刚 明 轩,
    not 说 起 人), none a particle (``stops``), and after them punctuation, the text's end or a
    word of two characters or more (a third single character is a phrase). Both tokens are one
    person (``joined``, :func:`name_runs`)."""
    for d in range(tok_off.shape[0] - 1):
        a, b = tok_off[d], tok_off[d + 1]
        for i in range(a, b - 1):
            j = i + 1
            if (ends[i] - starts[i] != 2 or ends[j] - starts[j] != 1 or starts[j] != ends[i] or flags[j]
                    or not _in_sorted(surnames, cps[starts[i]]) or not _in_sorted(tails, cps[starts[j]])):
                continue
            if not (_han_span(cps, starts[i], ends[j], classes) and not _has_any(cps, starts[i], ends[j], stops)):
                continue
            if j + 1 < b and starts[j + 1] == ends[j] and ends[j + 1] - starts[j + 1] < 2:
                continue
            for t in (i, j):
                flags[t] = True
                fills[t] = tok_hashes[t]
                joined[t] = True


@njit(nogil=True, cache=True)
def suffix_names(cps, starts, ends, tok_off, tok_hashes, flags, fills, suffixes, stops, classes, short, not_short):
    """Flag, in place, places and bodies the dictionary lacks (Chinese): a one-character suffix
    token (``suffixes``: sorted code points, 村 乡 市 队 ...) after one to three tokens of two to
    four ideographs in all that are no names, as many as there are, the first of them a single
    character or the whole span one word (喻/家/湾/村, 三/庄/乡, 财金/队); a token with a particle,
    a preposition or a demonstrative (``stops``: 据, 该, 全) ends the span. Every token of the
    span is the name. Before a suffix of ``short`` (sorted code points: 市, 县; empty as profiles
    before v14 read), one character alone is a name too (帅/市), where it is none of ``not_short``
    (sorted code points: numerals and suffixes, 两/市, 省/市) and the dictionary did not join the
    two (城市, 超市)."""
    for d in range(tok_off.shape[0] - 1):
        a, b = tok_off[d], tok_off[d + 1]
        for i in range(a + 1, b):
            if ends[i] - starts[i] != 1 or flags[i] or not _in_sorted(suffixes, cps[starts[i]]):
                continue
            if flags[i - 1]:  # a known name's suffix (建德/区) is part of it, as in a name no dictionary has (德清/市)
                flags[i] = True
                fills[i] = tok_hashes[i]
                continue
            first = i
            while (first > a and i - first < 3 and ends[i - 1] - starts[first - 1] <= 4 and not flags[first - 1]
                   and _han_span(cps, starts[first - 1], ends[first - 1], classes)
                   and not _has_any(cps, starts[first - 1], ends[first - 1], stops)):
                first -= 1
            while first < i - 1 and ends[first] - starts[first] != 1:
                first += 1  # several tokens before the suffix: the first a single character
            one = (first == i - 1 and ends[first] - starts[first] == 1 and _in_sorted(short, cps[starts[i]])
                   and not _in_sorted(not_short, cps[starts[first]]))
            if first == i or (ends[i - 1] - starts[first] < 2 and not one):
                continue
            for t in range(first, i + 1):
                flags[t] = True
                fills[t] = tok_hashes[t]


@njit(nogil=True, cache=True)
def titled_names(cps, starts, ends, tok_off, tok_hashes, flags, fills, titles, surnames, stops, classes):
    """Flag, in place, people the dictionary lacks (Chinese) by the title after them: one or two
    tokens of two or three ideographs in all before a title (``titles``: sorted token hashes of
    同志, 先生, 女士 ...), the first a surname (``surnames``: sorted code points, the common ones
    :func:`surname_names` leaves out as words too, 高, 马, 金), none a particle (``stops``): 高/卫东/同志."""
    for d in range(tok_off.shape[0] - 1):
        a, b = tok_off[d], tok_off[d + 1]
        for i in range(a + 1, b):
            if not _in_sorted(titles, tok_hashes[i]) or flags[i - 1]:
                continue
            for first in (i - 1, i - 2):
                if first < a or flags[first] or not _in_sorted(surnames, cps[starts[first]]):
                    continue
                n = ends[i - 1] - starts[first]
                if not (2 <= n <= 3 and _han_span(cps, starts[first], ends[i - 1], classes)
                        and not _has_any(cps, starts[first] + 1, ends[i - 1], stops)):
                    continue
                if first == i - 2 and flags[i - 1]:
                    continue
                for t in range(first, i):
                    flags[t] = True
                    fills[t] = tok_hashes[t]
                break


@njit(nogil=True, cache=True)
def body_names(cps, starts, ends, tok_off, tok_hashes, flags, fills, heads, links, linked_heads, stops, classes, brands,
               brand_chars):
    """Flag, in place, companies and institutions the dictionary lacks (Chinese): one to three
    words of two characters or more, eight in all, no names, before a head word (``heads``: sorted token
    hashes of 有限公司, 银行, 事务所 ...) and the words a company's form puts between (``links``:
    股份, 有限 ...): 长沙市/金鹰/建筑工程/有限公司 names 金鹰 and 建筑工程; ``linked_heads`` (公司)
    end a name only after a link word (有限责任/公司: the dictionary cuts 有限责任公司 so, while 电力/公司
    is no company of that name). Before those words, a
    brand the dictionary cuts into characters, two to four one-character tokens
    (商/软/冠/联/科技/有限公司, 华/腾/电子/有限公司), is a name too, and its tokens are one
    (``brands``: set on them, in place: :func:`name_runs` joins them); ``brand_chars``: the most
    characters of such a brand (0: none, as profiles before v14 read). A token with a particle,
    a demonstrative or a preposition (``stops``: 本/公司, 该/公司) ends the span; so does a name (the
    city before a company)."""
    for d in range(tok_off.shape[0] - 1):
        a, b = tok_off[d], tok_off[d + 1]
        for i in range(a + 1, b):
            if not (_in_sorted(heads, tok_hashes[i])
                    or (_in_sorted(linked_heads, tok_hashes[i]) and _in_sorted(links, tok_hashes[i - 1]))):
                continue
            last = i - 1
            while last > a and _in_sorted(links, tok_hashes[last]):
                last -= 1
            first = last + 1
            while (first > a and last - first < 2 and not flags[first - 1]
                   and ends[first - 1] - starts[first - 1] >= 2 and ends[last] - starts[first - 1] <= 8
                   and _han_span(cps, starts[first - 1], ends[first - 1], classes)
                   and not _has_any(cps, starts[first - 1], ends[first - 1], stops)
                   and not _in_sorted(links, tok_hashes[first - 1])):
                first -= 1
            cut = first  # a brand cut into characters, before the words
            while (cut > a and first - cut < brand_chars and ends[last] - starts[cut - 1] <= 8
                   and _single(cps, starts, ends, flags, stops, classes, cut - 1)):
                cut -= 1
            if first - cut >= 2:
                for t in range(cut, first):
                    brands[t] = True
                first = cut
            if first > last or ends[last] - starts[first] < 2:
                continue
            for t in range(first, last + 1):
                flags[t] = True
                fills[t] = tok_hashes[t]


@njit(nogil=True, cache=True)
def byline_names(starts, ends, tok_off, tok_hashes, flags, markers, headed, sources, span, reach):
    """Unflag, in place, names in the ``span`` tokens after an editor marker (``markers``: sorted
    token hashes of 责任编辑, 校对 ...), written together (吴/霞 after 责任编辑:): the editor a
    reprint names is its own furniture, not what the notice is about. What follows a break (作者:
    飘雪 [河南行情]) is the page's text again. A marker of ``headed`` (作者) is one only within
    ``reach`` tokens after a marker of ``sources`` (来源): a page's header line names its source
    and an author of its own (来源：新浪网　作者：赵磊), while an author under a story's title
    (作者：杨子毅) is the story's, whose reprints keep it."""
    for d in range(tok_off.shape[0] - 1):
        a, b = tok_off[d], tok_off[d + 1]
        for i in range(a, b):
            if _in_sorted(markers, tok_hashes[i]) or (_in_sorted(headed, tok_hashes[i])
                                                      and _after_source(tok_hashes, sources, a, i, reach)):
                for j in range(i + 1, min(b, i + 1 + span)):
                    if j > i + 1 and starts[j] != ends[j - 1]:
                        break
                    flags[j] = False


@njit(nogil=True, cache=True, inline="always")
def _after_source(tok_hashes, sources, a, i, reach):
    """Whether one of the ``reach`` tokens before token ``i`` (its document's first is ``a``) is a
    source marker (``sources``, sorted)."""
    for j in range(max(a, i - reach), i):  # noqa: SIM110 (numba compiles loops, not generators)
        if _in_sorted(sources, tok_hashes[j]):
            return True
    return False


@njit(nogil=True, cache=True)
def marker_names(cps, starts, tok_off, tok_hashes, flags, fills, markers, docs, classes):
    """Flag, in place, the token after a field marker (``markers``: sorted token hashes of words
    reviewers taught, 申请人, 关于) as a name, when it starts with a letter or an ideograph: the
    field a template fills with another company or person. Only in the documents ``docs`` says
    (the markers of one content type)."""
    limit = classes.shape[0]
    for d in range(tok_off.shape[0] - 1):
        if not docs[d]:
            continue
        a, b = tok_off[d], tok_off[d + 1]
        for i in range(a, b - 1):
            if flags[i + 1] or not _in_sorted(markers, tok_hashes[i]):
                continue
            c = cps[starts[i + 1]]
            if c < limit and classes[c] & (CJK | ALNUM) and not classes[c] & DIGIT:
                flags[i + 1] = True
                fills[i + 1] = tok_hashes[i + 1]


@njit(nogil=True, cache=True, inline="always")
def _lower_ascii_hash(cps, start, end, seed):
    """:func:`neardup.kernels.hashing.hash_span` of ``cps[start:end]`` with A-Z lower-cased."""
    h = FNV_OFFSET ^ (np.uint64(seed) * GOLDEN)
    for i in range(start, end):
        c = cps[i]
        if 65 <= c <= 90:
            c += 32
        h ^= np.uint64(c)
        h *= FNV_PRIME
    return fmix64(h ^ np.uint64(end - start))


@njit(nogil=True, cache=True, inline="always")
def _ascii_letter(c):
    return 65 <= c <= 90 or 97 <= c <= 122


@njit(nogil=True, cache=True, inline="always")
def _space(c):
    return c == 32 or c == 9 or c == 10 or c == 13 or c == 160


@njit(nogil=True, cache=True)
def _lower_words(cps, a, b, seed):
    """The sorted, distinct hashes of the words ``cps[a:b]`` writes in lower case (ASCII letters)."""
    out = np.empty(max(1, (b - a) // 2), dtype=np.uint64)
    w = 0
    i = a
    while i < b:
        if 97 <= cps[i] <= 122 and (i == a or not _ascii_letter(cps[i - 1])):
            j = i + 1
            while j < b and _ascii_letter(cps[j]):
                j += 1
            out[w] = _lower_ascii_hash(cps, i, j, seed)
            w += 1
            i = j
        else:
            i += 1
    return np.unique(out[:w])


@njit(nogil=True, cache=True)
def _starts_sentence(cps, a, b, i):
    """Whether the word at ``i`` starts a sentence: after a sentence's end mark (and a closing
    quote) and spaces, after a wire story's dateline (a dash after a parenthesis or a word in
    capitals: LONDON (Reuters) - , PARIS - ),
    right after an opening quote, or first on a line that ends as a sentence does (not a
    headline's or a list's line)."""
    if i > a and (cps[i - 1] == 34 or cps[i - 1] == 8220):
        return True
    j = i - 1
    line_start = False
    while j >= a and _space(cps[j]):
        line_start |= cps[j] == 10
        j -= 1
    if j - 3 >= a and (cps[j] == 45 or cps[j] == 8211 or cps[j] == 8212) and j < i - 1 and cps[j - 1] == 32:
        p, q = cps[j - 2], cps[j - 3]
        if p == 41 or (65 <= p <= 90 and 65 <= q <= 90):  # a dateline's dash: LONDON (Reuters) - , PARIS -
            return True
    if j >= a and (cps[j] == 34 or cps[j] == 39 or cps[j] == 8221 or cps[j] == 8217):
        j -= 1
    if j >= a and (cps[j] == 46 or cps[j] == 33 or cps[j] == 63) and j < i - 1:
        return True
    if not (line_start or j < a):
        return False
    e = i
    while e < b and cps[e] != 10:
        e += 1
    e -= 1
    while e > i and _space(cps[e]):
        e -= 1
    c = cps[e]
    return c == 46 or c == 33 or c == 63 or c == 34 or c == 39 or c == 8221 or c == 8217


@njit(nogil=True, cache=True, inline="always")
def _next_word(cps, b, j):
    """The end of the lower-case word that starts after one space at ``j`` (``j`` when there is none)."""
    if j + 1 >= b or cps[j] != 32 or not 97 <= cps[j + 1] <= 122:
        return j
    k = j + 1
    while k < b and _ascii_letter(cps[k]):
        k += 1
    return k


@njit(nogil=True, cache=True)
def _place_compound(cps, b, j, places, seed):
    """Whether a hyphen and one of ``places`` (hashes of lower-case participles: based, born,
    listed), a whole word, follow ``j``: the word before is where a body is based, listed or born
    (Edinburgh-based developer ...)."""
    if j + 1 >= b or cps[j] != 45:
        return False
    k = j + 1
    while k < b and 97 <= cps[k] <= 122:
        k += 1
    if k == j + 1 or (k < b and _ascii_letter(cps[k])):
        return False
    return _in_sorted(places, _lower_ascii_hash(cps, j + 1, k, seed))


@njit(nogil=True, cache=True)
def _appositive(cps, b, j):
    """Whether an article and a lower-case word follow the space at ``j`` (a, an, the): the
    apposition that introduces a name (Technorati, a blog search engine, tracks ...)."""
    k = _next_word(cps, b, j)
    article = (k - j == 2 and cps[j + 1] == 97) or (k - j == 3 and cps[j + 1] == 97 and cps[j + 2] == 110) or (
        k - j == 4 and cps[j + 1] == 116 and cps[j + 2] == 104 and cps[j + 3] == 101)
    return article and _next_word(cps, b, k) > k


@njit(nogil=True, cache=True)
def _subject_of_verb(cps, b, j, verbs, adverbs, seed):
    """Whether the word that ends at ``j`` is a sentence's subject, as a name is: followed by 's,
    by a space and one of ``verbs`` (hashes of lower-case words: said, has, acquired, ...), maybe
    after one of ``adverbs`` (Britain now has), or by "and" or a comma and a capitalised word (France,
    Britain and Germany; Tories and Lib Dems), or by a comma and an apposition (Technorati, a blog
    search engine, tracks), a comma not after a word in -ly (Separately, Google)."""
    possessive = j + 1 < b and (cps[j] == 39 or cps[j] == 8217) and cps[j + 1] == 115
    if possessive and (j + 2 >= b or not _ascii_letter(cps[j + 2])):
        return True
    adverb = cps[j - 2] == 108 and cps[j - 1] == 121  # -ly: Separately, Google said
    comma = j + 2 < b and cps[j] == 44 and cps[j + 1] == 32 and not adverb
    if comma and (65 <= cps[j + 2] <= 90 or _appositive(cps, b, j + 1)):
        return True
    k = _next_word(cps, b, j)
    if k == j:
        return False
    if k - j == 4 and cps[j + 1] == 97 and cps[j + 2] == 110 and cps[j + 3] == 100:  # "and"
        return k + 1 < b and cps[k] == 32 and 65 <= cps[k + 1] <= 90
    word = _lower_ascii_hash(cps, j + 1, k, seed)
    if _in_sorted(verbs, word):
        return True
    if not _in_sorted(adverbs, word):
        return False
    m = _next_word(cps, b, k)
    return m > k and _in_sorted(verbs, _lower_ascii_hash(cps, k + 1, m, seed))


@njit(nogil=True, cache=True)
def _run_end(cps, b, j):
    """The end of the run of capitalised words (one space apart) that continues after ``j``: the
    subject of Acme Corp said is the whole run."""
    while j + 1 < b and cps[j] == 32 and 65 <= cps[j + 1] <= 90:
        k = j + 2
        while k < b and _ascii_letter(cps[k]):
            k += 1
        j = k
    return j


@njit(nogil=True, cache=True)
def _sentence_start_names(cps, a, b, seed, min_letters, stop, start_stop, verbs, adverbs, places, out, w):
    """Append to ``out`` from ``w`` the hashes of the words that start a sentence as the subject
    of one of ``verbs`` (or with 's) or before a hyphen and one of ``places``, capitalised and
    then lower-case letters only, that the text never writes in lower case and that are in
    neither ``stop`` nor ``start_stop`` (words any
    sentence may start with: However, Police); returns the new end. The text's lower-case words
    are gathered once it has such a word, not for every text."""
    lower = np.zeros(0, dtype=np.uint64)
    gathered = False
    i = a
    while i < b:
        if 65 <= cps[i] <= 90 and (i == a or not _ascii_letter(cps[i - 1])):
            j = i + 1
            while j < b and 97 <= cps[j] <= 122:
                j += 1
            whole = j - i >= min_letters and (j >= b or not _ascii_letter(cps[j]))
            end = _run_end(cps, b, j)
            subject = whole and (_subject_of_verb(cps, b, end, verbs, adverbs, seed)
                                 or _place_compound(cps, b, end, places, seed))
            if subject and _starts_sentence(cps, a, b, i):
                h = _lower_ascii_hash(cps, i, j, seed)
                if not (_in_sorted(stop, h) or _in_sorted(start_stop, h)):
                    if not gathered:
                        lower = _lower_words(cps, a, b, seed)
                        gathered = True
                    if not _in_sorted(lower, h):
                        out[w] = h
                        w += 1
            i = j
        else:
            i += 1
    return w


@njit(nogil=True, cache=True)
def capitalised_names(cps, offsets, seed, min_letters, stop, start_stop, verbs, adverbs, places, sentence_starts):
    """The lower-cased token hashes of the words each raw English text capitalises inside a
    sentence (a capital after a lower-case letter, a digit, a comma or a semicolon and a space,
    then ``min_letters - 1`` or more letters), less the sorted hashes ``stop``; with
    ``sentence_starts`` (profile v14) also those that start a sentence as a verb's subject or
    before a participle of place (:func:`_sentence_start_names`: Virgin was told, Microsoft has
    said, Edinburgh-based, where a text names
    someone only at its sentences' starts). Distinct and sorted within each text, with each
    text's offsets into them."""
    n_docs = offsets.shape[0] - 1
    out = np.empty(max(1, cps.shape[0] // 2), dtype=np.uint64)
    off = np.zeros(n_docs + 1, dtype=np.int64)
    w = 0
    for d in range(n_docs):
        a, b = offsets[d], offsets[d + 1]
        start_w = w
        i = a + 2
        while i < b:
            c = cps[i]
            p = cps[i - 2]
            if 65 <= c <= 90 and cps[i - 1] == 32 and (97 <= p <= 122 or 48 <= p <= 57 or p == 44 or p == 59):
                j = i + 1
                while j < b and (97 <= cps[j] <= 122 or 65 <= cps[j] <= 90):
                    j += 1
                if j - i >= min_letters:
                    h = _lower_ascii_hash(cps, i, j, seed)
                    if not _in_sorted(stop, h):
                        out[w] = h
                        w += 1
                i = j
            else:
                i += 1
        if sentence_starts:
            w = _sentence_start_names(cps, a, b, seed, min_letters, stop, start_stop, verbs, adverbs, places, out, w)
        mine = np.sort(out[start_w:w])
        k = start_w
        for q in range(mine.shape[0]):
            if q == 0 or mine[q] != mine[q - 1]:
                out[k] = mine[q]
                k += 1
        w = k
        off[d + 1] = w
    return out[:w].copy(), off


@njit(nogil=True, cache=True)
def merge_order(first, first_off, second, second_off):
    """The order that merges two arrays sorted within each document (``second`` placed after
    ``first`` in one concatenated array): indices into that concatenation, document by document,
    and the merged documents' offsets."""
    n_first = first.shape[0]
    order = np.empty(n_first + second.shape[0], dtype=np.int64)
    off = np.zeros(first_off.shape[0], dtype=np.int64)
    w = 0
    for d in range(first_off.shape[0] - 1):
        i, i_end = first_off[d], first_off[d + 1]
        j, j_end = second_off[d], second_off[d + 1]
        while i < i_end or j < j_end:
            if j >= j_end or (i < i_end and first[i] <= second[j]):
                order[w] = i
                i += 1
            else:
                order[w] = n_first + j
                j += 1
            w += 1
        off[d + 1] = w
    return order, off


@njit(nogil=True, cache=True)
def single_char_names(cps, starts, ends, tok_off, tok_hashes, flags, fills, surnames, stops, classes, max_run):
    """Flag, in place, people the dictionary lacks written as one-character tokens: jieba's
    dictionary cut leaves a name it does not know as its characters (单/兴/缘, 张/元/方). A run
    of two to ``max_run`` such tokens written together, the first a surname (``surnames``:
    sorted code points), none a particle or a preposition (``stops``) nor flagged already, and
    not followed by another such token (a longer run of single characters is a phrase)."""
    begins, run_ends = _surname_runs(cps, starts, ends, tok_off, flags, surnames, stops, classes)
    for r in range(begins.shape[0]):
        if run_ends[r] - begins[r] <= max_run:
            for t in range(begins[r], run_ends[r]):
                flags[t] = True
                fills[t] = tok_hashes[t]


@njit(nogil=True, cache=True)
def _surname_runs(cps, starts, ends, tok_off, flags, surnames, stops, classes):
    """(first tokens, ends) of the runs of two or more one-character tokens (:func:`_single`)
    written together that a surname's token begins where no such token stands right before it,
    in every document. Either reading may flag the runs it finds: a run's flags change where no
    other run begins (the token after a run is none of them written together with it)."""
    begins = np.empty(starts.shape[0], dtype=np.int64)
    run_ends = np.empty(starts.shape[0], dtype=np.int64)
    n = 0
    for d in range(tok_off.shape[0] - 1):
        a, b = tok_off[d], tok_off[d + 1]
        for i in range(a, b):
            # the cheap tests first, in statements of their own: in one chain of conditions the
            # compiler scanned the surnames for every token, five times the cost of the pass
            if ends[i] - starts[i] != 1 or flags[i]:
                continue
            if not _in_sorted(surnames, cps[starts[i]]):
                continue
            if not _single(cps, starts, ends, flags, stops, classes, i) or (
                    i > a and starts[i] == ends[i - 1] and _single(cps, starts, ends, flags, stops, classes, i - 1)):
                continue
            j = i + 1
            while j < b and starts[j] == ends[j - 1] and _single(cps, starts, ends, flags, stops, classes, j):
                j += 1
            if j - i >= 2:
                begins[n] = i
                run_ends[n] = j
                n += 1
    return begins[:n], run_ends[:n]


@njit(nogil=True, cache=True)
def verb_run_names(cps, starts, ends, tok_off, tok_hashes, flags, fills, surnames, stops, classes, max_run, verbs,
                   joined):
    """Flag, in place, a person :func:`single_char_names` leaves as a phrase because the verb it
    is the subject of follows it (任/婷/宇/说, 张/生/贵/摄): a run of ``max_run`` + 1 one-character
    tokens written together, the first a surname (``surnames``), the last a verb (``verbs``,
    sorted code points), none a particle nor flagged by any reading before (so that only names
    are added), begun after no other such token. Its first ``max_run`` tokens are the person;
    ``joined`` is set on them."""
    begins, run_ends = _surname_runs(cps, starts, ends, tok_off, flags, surnames, stops, classes)
    for r in range(begins.shape[0]):
        if run_ends[r] - begins[r] == max_run + 1 and _in_sorted(verbs, cps[starts[run_ends[r] - 1]]):
            for t in range(begins[r], run_ends[r] - 1):
                flags[t] = True
                fills[t] = tok_hashes[t]
                joined[t] = True


@njit(nogil=True, cache=True)
def lead_surname_names(cps, starts, ends, tok_off, tok_hashes, flags, fills, leads, tails, stops, classes, joined):
    """Flag, in place, people whose surname is also a preposition (``leads``: sorted code points,
    于 "at"), which the particles of :func:`single_char_names` leave out: the surname as a token
    alone, then one or two one-character tokens written together with it, each a character given
    names end with (``tails``, sorted: 于/丽, 于/艳/琳), not followed by another one-character
    token (a longer run is a phrase). jieba's dictionary holds the preposition's phrases as words
    (于是, 位于, 今年): what it leaves as characters after it is a name far more often.
    ``joined``: set, in place, on every token of a person read."""
    for d in range(tok_off.shape[0] - 1):
        a, b = tok_off[d], tok_off[d + 1]
        for i in range(a, b - 1):
            if not (ends[i] - starts[i] == 1 and not flags[i] and _in_sorted(leads, cps[starts[i]])):
                continue
            j = i + 1
            while (j < b and j - i <= 2 and starts[j] == ends[j - 1]
                   and _single(cps, starts, ends, flags, stops, classes, j) and _in_sorted(tails, cps[starts[j]])):
                j += 1
            phrase = j < b and starts[j] == ends[j - 1] and _single(cps, starts, ends, flags, stops, classes, j)
            if j == i + 1 or phrase:
                continue
            for t in range(i, j):
                flags[t] = True
                fills[t] = tok_hashes[t]
                joined[t] = True


@njit(nogil=True, cache=True, inline="always")
def _single(cps, starts, ends, flags, stops, classes, t):
    """Whether token ``t`` is one ideograph, no particle (``stops``), not flagged a name."""
    return (ends[t] - starts[t] == 1 and not flags[t] and _han_span(cps, starts[t], ends[t], classes)
            and not _in_sorted(stops, cps[starts[t]]))


@njit(nogil=True, cache=True)
def name_runs(cps, starts, ends, tok_off, flags, fills, pieces, seed):
    """Join, in place, a name written as several tokens (王/新民, 单/兴/缘: ``pieces`` says which
    flagged tokens the patterns found; a dictionary's name stands alone) into one: the first
    token's fill becomes the hash of the whole run, the others are its continuation. Returns
    (the last token of each token's name, which tokens continue a name)."""
    n = starts.shape[0]
    last = np.arange(n)
    cont = np.zeros(n, dtype=np.bool_)
    for d in range(tok_off.shape[0] - 1):
        a, b = tok_off[d], tok_off[d + 1]
        i = a
        while i < b:
            if not (flags[i] and pieces[i]):
                i += 1
                continue
            j = i + 1
            while j < b and flags[j] and pieces[j] and starts[j] == ends[j - 1]:
                j += 1
            if j - i >= 2:
                fills[i] = hash_span(cps, starts[i], ends[j - 1], seed)
                for t in range(i, j):
                    last[t] = j - 1
                    cont[t] = t > i
            i = j
    return last, cont


@njit(nogil=True, cache=True, inline="always")
def end_letters(first, last):
    """A weak name's letters byte: four bits of its first character, then four of its last."""
    return ((fmix64(np.uint64(first)) >> np.uint64(60)) << np.uint64(4)) | (fmix64(np.uint64(last)) >> np.uint64(60))


@njit(nogil=True, cache=True)
def weak_name_entries(cps, starts, ends, tok_hashes, tok_off, weak, flags, breaks, skip, k, seed, fill_byte):
    """The context entries (context << 16 | ``fill_byte`` << 8 | letters byte) of every ``weak``
    token: a word the dictionary tags a person but reads as no name (高峰, 雷达), contexts as a
    name's (:func:`entity_entries`, names where ``flags``). Its low byte holds four bits of its
    first character and four of its last (:func:`end_letters`), so that a word written with one
    of them changed or another put before it (林子 / 林木, 师傅 / 老师傅) is told from another
    word; the token of each entry; the entries' document offsets."""
    n_docs = tok_off.shape[0] - 1
    total = 0
    for i in range(tok_hashes.shape[0]):
        total += 2 if weak[i] else 0
    entries = np.empty(total, dtype=np.uint64)
    tokens = np.empty(total, dtype=np.int64)
    doc_off = np.zeros(n_docs + 1, dtype=np.int64)
    w = 0
    fb = np.uint64(fill_byte) << np.uint64(8)
    for d in range(n_docs):
        a, b = tok_off[d], tok_off[d + 1]
        start = w
        for i in range(a, b):
            if not weak[i]:
                continue
            fill = fb | end_letters(cps[starts[i]], cps[ends[i] - 1])
            lo, hi = _sides(breaks, skip, a, b, i, k)
            w = _side_entries(entries, tokens, w, tok_hashes, flags, skip, seed, fill, lo, i, i, hi)
        order = np.argsort(entries[start:w], kind="mergesort")
        entries[start:w] = entries[start:w][order]
        tokens[start:w] = tokens[start:w][order]
        doc_off[d + 1] = w
    return entries[:w].copy(), tokens[:w].copy(), doc_off


@njit(nogil=True, cache=True)
def weak_name_run(mine, theirs, left, right, single, glued, breaks, cps, starts, fill_byte, max_tokens):
    """Where ``theirs`` has a weak name (:func:`weak_name_entries`: its left entry under
    ``left[t1]`` and its right entry under ``right[t2]``, one fill) that ``mine``'s text writes
    as a run of two to ``max_tokens`` one-character words written together (``single``,
    ``glued``): a name no dictionary knows in the place of a word a tagger takes for a person (高峰
    / 蔚/少/辉). Not where ``mine`` has that weak name too, nor where the run's first or last
    character is the weak name's (:func:`end_letters`: 高/锋 for 高峰 is a typo).
    (t1, t2), or (-1, -1)."""
    wb = np.uint64(fill_byte)
    n = left.shape[0]
    for t1 in range(n - 1):
        if not single[t1]:
            continue
        lo = np.searchsorted(theirs, left[t1] << np.uint64(16))
        while lo < theirs.shape[0] and (theirs[lo] >> np.uint64(16)) == left[t1]:
            fill = theirs[lo] & np.uint64(0xFFFF)
            lo += 1
            if (fill >> np.uint64(8)) != wb or has_fill(mine, fill):
                continue
            for t2 in range(t1 + 1, min(n, t1 + max_tokens)):
                if not single[t2] or not glued[t2] or breaks[t2]:
                    break
                run = end_letters(cps[starts[t1]], cps[starts[t2]])
                if ((run ^ fill) & np.uint64(0xF0)) == 0 or ((run ^ fill) & np.uint64(0xF)) == 0:
                    continue
                if _in_sorted(theirs, (right[t2] << np.uint64(16)) | fill):
                    return t1, t2
    return -1, -1
