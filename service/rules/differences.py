"""Critical differences: two near-identical texts that say opposite things.

Each polarity word (批准/驳回, rose/fell, 可以/不得, was ...) and each figure in a text is an
*anchor*. An anchor's *context* is the k letters (Chinese) or words (English) on each side of it,
read with punctuation and spaces ignored, negators taken out and other anchors replaced by their
class; its *fill* is what stands at the anchor: the class with its sign and whether a negator
governs it (不予批准, was not), or the figure. Two documents that share a context but disagree on
its fill reversed a decision, flipped a negation or changed a figure: that pair is not a
duplicate, whatever the similarity says. Contexts that only one document has (added boilerplate,
deleted sentences, synonym edits nearby) are ignored, and so is one-sided surplus of a repeated
context (a deleted occurrence); only a *replacement* counts: each side has a fill the other lacks.
A replaced figure counts only where it changed, not where it moved: a deleted sentence joins the
contexts of the figures on either side of it (出口...增长20.9%. [进口...增长2.5%.] 贸易顺差, "6 for
255. [...] staff"), and the figure of the joined context still stands in the other text, under the
context the deletion took away. So a figure replacement whose figure (of either side) is left over
in the other text, in other contexts, at least as often as on its own side is no difference
(:func:`neardup.kernels.profile.replaced_context`); a figure written in place of another is one
more of its kind on its side and still counts. Polarity replacements count wherever their fills
stand (a flipped word's sign is never rare enough to tell a move from a flip).

A polarity word's anchor has two contexts, one per side: the k units before it, and the k after
it, each matched on its own (profile v3). An edit next to the word (a synonym, crawler noise, the
cut of a truncated reprint) then leaves the other side to match; one context over both sides
(v1, v2) missed those flips. Figures and lone negators keep one context over both sides: a
deleted sentence or article joins the one-sided contexts of two different figures (第十七条 /
第十八条), which would read as a changed figure.

Since v4, every polarity word stands in the frame as one mark and its fill hash keeps its sign and
negations, not its class: a reversal across two classes (gained -> lost: direction and outcome)
shares its contexts and is found, while a same-sign word of another class still reads as no
change. Negators in a row are counted (不予不予批准 is a replaced fill of 不予批准, and so is
是否不符合 of 是否符合, where 否 stands before 不); v1-v3 let the first of two stand alone.

In v4 the number of a law's part (第十八条, 第三章) is no anchor: a reordered or deleted article
puts another number before the same words, which read as a changed figure; two versions of a law
are told apart by their version marks (:mod:`neardup.rules.versions`). And 28.90 % (the &nbsp; of a
crawled page) is the figure 28.90%.

v4 also gives each sentence (up to . ! ? ; 。！？；) of at least ``ZH_SENTENCE`` letters or
``EN_SENTENCE`` words one entry: its whole frame as the context (negators taken out, anchors as
their marks), the number of negators in it as the fill ("S0", "S1", ... "S9" for nine or more).
A negation put in front of any word, in the lexicon or not (存在 -> 不存在, 发生 -> 未发生, he
went -> he never went), leaves the sentence's frame equal and changes its count; any other edit in
the sentence changes the frame, so the entry finds no partner and counts for nothing.

A profile is a sorted array of entries (context hash << 16 | fill hash), repeats kept. The context
hash is MurmurHash3 (x86, 32 bits) of the context string, of which the top ``CONTEXT_BITS`` bits
are kept; the fill hash is 8 bits of the polarity part then 8 bits of the figure part, so the kind
of a difference is known from the hashes alone. :meth:`AnchorProfiler.profile_batch` computes a
window's profiles in one kernel call (``neardup.kernels.profile``); :meth:`AnchorProfiler.profile`
is the same definition in plain Python, kept as the reference the kernel is tested against.

Byte formats (what the store keeps), all read:
- v1: b"NP" + version (1 B) + count (2 B) + count x (context hash uint32, fill hash uint16),
  big-endian, sorted, repeats kept (6 bytes an entry).
- v2: contexts delta-coded, polarity bytes through a per-record palette, figure bytes only where
  a figure stands (``neardup.kernels.profile_codec``): lossless; 183 bytes a document against
  v1's 245 on the development set (the contexts, 32 random bits each, dominate).
- v3: v2's layout over one-sided contexts for polarity words.
- v4: v3's layout over class-free polarity marks and fills, negators counted.
- v5: v4, and an English word with a negative prefix (un, in, im, il, ir before a stem
  of four letters or more; dis, non) stands in the frame as its stem and counts as one more
  negator of its sentence: likely -> unlikely, legal -> illegal, agree -> disagree leave the
  sentence's frame equal and change its count, as a negator put before the word does. A word
  that only looks prefixed (interest, understand) is cut the same way in both texts, so it
  changes nothing; it would take an edit that writes the stem in its place (display -> play).
  A stem that is a polarity word makes the word that word negated (disapproved: not approved).
- v6-v8: v5's layout with the entries of names (v6), figures read as values (v7) and identifiers
  read as figures (v8).
- v9: v8's layout; a Chinese person written as several tokens is one name (王/新民 is 王新民, its
  entries' contexts around the whole name), and a run of one-character tokens that starts with a
  common surname is a person (单/兴/缘: the dictionary cut of a name it lacks).
- v10: v9's, and each name has a second letter set (an entry filled
  ``NAME_LETTERS_FILL``, its letters hashed with another seed): two names are written alike only
  if both their sets are. A surname before a name of the dictionary (赵/新民) and one glued to the
  first character of its given name (卫志/刚) are read as people.
- v11: v10's, and a figure more than ``k`` figures from both ends of its run of
  figures (``k``: the units a context sees each side) has its place in the run hashed into its
  context (:func:`in_figure_run`): inside 6-3 6-7 (2-7) 7-6 (7-5) every figure saw only figures
  around it, so two that traded places (6-2 (7-7)) left the same entries.
- v12: v11's, less the one-sided entries that would cross a sentence's edge: a polarity
  word that ends its sentence has no right entry, one that starts it no left entry. That side's
  context was the next (or last) sentence's first (or last) words, which a reordered paragraph or
  a deleted sentence changes: 无效。 followed by the paragraph that followed 支持。 in the other
  copy read as a reversed outcome. The other side still tells a flip of the word.
- v13: v12's, and an English percentage or decimal is one word with the letters after a
  % and an 's (42%m, 2.2's, 12%'s), as a whole number was (719m, 2004's): where two figures traded
  places without their units (42% to 719m / 719 to 42%m) the letters left behind stood as a word
  of their own in one text only, so the two figures' contexts differed and no swap was seen.
- v14: v13's, with English names that only start sentences and Chinese names the dictionary cuts
  read (``neardup.text.entities``).
- v15 (written): v14's, and each figure has a twin entry (:func:`figure_twins`): its context with
  ``TWIN_CONTEXT_BYTE`` XORed into the top byte, its polarity byte, and 8 more bits of its value
  (:func:`twin_fill`) as the figure byte. A fill holds 8 bits of a figure, so two swapped figures
  (19% and 37%, 500 and 7) left the same entries one time in 256.
- v16 (written): v15's, and each weak name (a two-character word the dictionary tags a person
  but that no reading takes for a name: 高峰, 雷达; ``neardup.text.entities.zh_person_words``)
  has its two context entries, as a name's, under ``kprof.WEAK_NAME_BYTE``, and so has each name
  that is such a word of two or three characters, one token (刘晓光, 古建筑), under
  ``kprof.NAME_TWIN_BYTE``; their figure byte is four bits of the first character and four of
  the last. These entries pair only with each other (``kprof.replaced_context``): a weak name
  in place of another, or of a name (both its contexts), that shares neither its first nor its
  last character is another notice, as is a run of one-character words (a name no dictionary
  knows) in a weak name's place (``NameSlots.weak_name_run_at``).
- v17 (written): v16's, with the unit written right after a figure (万亩, 亿元; million, per cent)
  out of the frame (``zh_unit_words``, ``EN_UNIT_WORDS``).
- v18 (written): v17's, and a figure's fill holds its unit (:func:`unit_key`: 5万元 is not 5千元,
  4.2 billion not 4.2 million); a run of numerals right after a figure is its unit's magnitude
  (1.5万亿), not a figure of its own; the letters of a currency against its $ are the figure's
  (HK$6.31bn: out of the frame, in the fill); one numeral beside 分之 is a figure (百分之三,
  三分之一); and a figure's twin has a polarity byte of its own (``TWIN_BYTE``), so no twin reads
  as another figure's fill left over elsewhere (15 -> 30, where 15's twin held 30's figure byte).
A v8 or v9 record is compared with the names read that version's way (:meth:`NameSlots.as_version`).
A record keeps contexts of at least ``CONTEXT_BITS`` bits; they are compared at ``CONTEXT_BITS``.
A record of an older version is compared with the deciding document's profile made the way that
version made them, computed when such a record comes up (:meth:`Profile.critical_against`).
"""

from __future__ import annotations

import re
import struct
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, overload

import mmh3
import numpy as np
import numpy.typing as npt

from neardup.kernels import entities as kent
from neardup.kernels import profile as kprof
from neardup.kernels import profile_codec as codec
from neardup.kernels.profile import replaced_context
from neardup.text.cache import cached_arrays
from neardup.text.entities import (
    COMPANY_FORMS,
    EN_NOT_NAMES,
    FORM_LINKS,
    LINKED_HEADS,
    NAME_FILL_BYTE,
    SECOND_LETTERS_SINCE,
    NameEntries,
    NameSlots,
    canonical_name,
    zh_place_suffixes,
)
from neardup.text.entities import (
    CONTEXT_SEED as NAME_CONTEXT_SEED,
)
from neardup.text.entities import (
    CONTEXT_TOKENS as NAME_CONTEXT_TOKENS,
)
from neardup.text.lexicon import Lexicon, hash_words, in_sorted, load_lexicon

PROFILE_MAGIC = b"NP"
PROFILE_VERSION = 19
ONE_SIDED_SINCE = 3  # profiles of this version and later split polarity contexts by side
CLASS_FREE_SINCE = 4  # ... and mark polarity words alike, fill them by sign, count negators
AFFIX_SINCE = 5  # ... and read English negative prefixes as negators of their sentence
NAMES_SINCE = 6  # ... and carry the entries of names (people, places, organisations)
FIGURE_VALUES_SINCE = 7  # ... and read figures as values: thousands groups (1,200), Chinese numerals (一千二百)
IDENTIFIERS_SINCE = 8  # ... and read letters followed by digits as one figure (a credit code, x5, aud1.102)
FIGURE_RUNS_SINCE = 11  # ... and give a figure deep in a run of figures its place in the run (6-3 6-7 (2-7) 7-6)
SENTENCE_SIDES_SINCE = 12  # ... and give a polarity word no one-sided entry across its sentence's edge
UNIT_TAILS_SINCE = 13  # ... and read an English percentage or decimal with its letters and 's as one word (42%m)
FIGURE_TWINS_SINCE = 15  # ... and give each figure a twin entry: 8 more bits of its value (figure_twins)
WEAK_NAMES_SINCE = 16  # ... and carry the entries of words tagged a person but read as no name (weak names)
FIGURE_UNITS_SINCE = 17  # ... and leave a figure's unit (万亩, 亿元, million) out of the frame (zh_unit_words)
UNIT_FILLS_SINCE = 18  # ... and fill a figure with its unit (5万元, not 5), its twin under a byte of its own
COUNTED_NUMERALS_SINCE = 19  # ... and read one numeral that numbers or counts as a figure (第二次, 三项)
# ... and read a person's tokens as one name (NAME_RUNS_SINCE), then give each name a second letter
# set and read 赵/新民 and 卫志/刚 as people (SECOND_LETTERS_SINCE), and since v14 an English name that
# only starts sentences, a verb's subject (SENTENCE_START_NAMES_SINCE): neardup.text.entities
IDENTIFIER = r"(?<![0-9a-z])(?=[0-9a-z]*[a-z][0-9a-z]*[0-9])[0-9a-z]+(?![0-9a-z])"  # a digit after a letter
NAME_FILL = "@"  # a name's fill: "@" + the name
POLARITY_MARK = "\ue0fd"  # a polarity word in a v4 Chinese frame
POLARITY_WORD = "<polar>"  # ... in a v4 English frame
V1_HEAD = struct.Struct(">2sBH")
V1_ENTRY = np.dtype([("context", ">u4"), ("fill", ">u2")])

# Bits of the context hash compared and stored. Two different contexts of a pair agree by chance
# with probability about (entries x entries) / 2^bits: 32 keeps that below 1e-6 for profiles of
# 40 entries (the development set's mean).
CONTEXT_BITS = 32
HASH_BITS = 32

ZH_CONTEXT = 5  # characters each side
EN_CONTEXT = 3  # words each side
# v11: a run of more figures than this is a list of numbers, not a result (in_figure_run): a
# tennis score of five sets with tie-breaks has 16, a year's monthly series 12
FIGURE_RUN_LONGEST = 20
# sentences shorter than this (frame units) get no entry: two different short sentences would
# share a frame by chance ("是。" / "不是。" in two places of one text)
ZH_SENTENCE = 6
EN_SENTENCE = 4
SENTENCE_ENDS = ".!?;。！？；"
SENTENCE_MARK = "\u00a7"  # starts a sentence's context: no anchor context starts with it
SENTENCE_FILL = "S"
ZH_NUMERALS = "零〇一二两三四五六七八九十百千万亿"
COUNTING_NUMERALS = "一二两三四五六七八九十"  # one of these alone numbers or counts (v19): 第二次, 三项
# v17: the unit a Chinese quantity writes after its figure (a magnitude, about, a measure word or
# a unit: 12万亩, 356.2亿元, 100余人, 5个百分点) is the figure's, left out of the frame: swapped with
# its unit (耕地面积12万亩 ... 总人口35万人 / 耕地面积35万人 ... 总人口12万亩), the figure in its place
# is another, and the swap is seen. The longest unit written is taken whole, never a word's first
# character (第十六条公开: 条, not 条公 of 公里). Not the units of dates and clock times (年 月 日 时):
# a date's figures written together would read as a run
ZH_MAGNITUDES = ("十", "百", "千", "万", "亿", "十万", "百万", "千万", "万亿")
ZH_ABOUT = ("余", "多")
ZH_UNITS = ("个", "件", "人", "名", "位", "户", "家", "只", "头", "条", "张", "元", "角", "分", "吨", "克", "斤", "亩",
            "米", "升", "次", "台", "辆", "架", "艘", "套", "座", "所", "岁", "倍", "项", "起", "批", "场", "篇", "册",
            "份", "期", "届", "层", "枚", "支", "票", "株", "人次", "个月", "百分点", "个百分点", "平方米", "平方公里",
            "平方千米", "立方米", "公里", "千米", "厘米", "毫米", "公斤", "千克", "公顷", "千瓦", "千瓦时", "美元",
            "欧元", "港元", "英镑", "日元", "元人民币")
# ... and so are the unit words an English quantity writes after its number (159 million, 80 per
# cent, 60 people), up to two of them (84 million barrels): not part of the figure's word, they
# were its context, and swapped along with it they hid the swap
EN_UNIT_WORDS = ("million", "billion", "trillion", "thousand", "hundred", "bn", "mn", "percent", "per", "cent", "pc",
                 "points", "people", "euros", "dollars", "pounds", "yuan", "yen", "shares", "barrels", "tonnes", "tons",
                 "metres", "meters", "miles", "km", "kg", "acres", "hectares", "votes", "seats")
EN_UNIT_RUN = 2
NON_ALNUM = re.compile(r"[\W_]+")
EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?(?:\.[0-9]+[a-z]*)?%?")
# v7: one to three digits with thousands groups are one word, with what follows them (1,200m)
GROUPED_DIGITS = r"[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])"
EN_WORD_V7 = re.compile(rf"(?:{GROUPED_DIGITS}[a-z0-9]*|[a-z0-9]+)(?:'[a-z]+)?(?:\.[0-9]+[a-z]*)?%?")
# v13: a decimal or a percentage with the letters after a % and an 's is one word (42%m, 2.2's, 12%'s)
EN_WORD_V13 = re.compile(rf"(?:{GROUPED_DIGITS}[a-z0-9]*|[a-z0-9]+)(?:'[a-z]+)?"
                         r"(?:(?:\.[0-9]+[a-z]*(?:%[a-z]*)?|%[a-z]*)(?:'[a-z]+)?)?")
DO_SUPPORT = frozenset({"do", "does", "did"})  # left out of a sentence's frame before a negator
EN_CONTRACTIONS = {"can't": ["can", "not"], "cannot": ["can", "not"], "won't": ["will", "not"],
                   "shan't": ["shall", "not"]}
FIGURE_MARK = "\ue0fe"
NO_FIGURE = mmh3.hash("", kprof.FIGURE_SEED, signed=False) & 0xFF  # the figure byte of a fill without one
# v15: a figure's fill holds 8 bits of its value, so two swapped figures looked alike once in 256
# (19% and 37%, 500 and 7); its twin entry holds 8 more, under the figure's context with this
# byte XORed into its top (a place no other anchor's context is, but for a 32-bit chance)
TWIN_SEED = 0x7B1C
TWIN_CONTEXT_BYTE = 0xA5
# v18: a twin's polarity byte is one of its own (not a figure's: "" 0x7A, "N" 0xE7; no polarity
# word's, sentence's or name's either). Under the figure's byte a twin's 8 bits read as the figure
# byte of another figure: 15 changed to 30 in one place read as a moved 30, where the twin of 15
# had 30's figure byte (one figure change in about 128)
TWIN_BYTE = 0x3C
NEGATED_TWIN_BYTE = 0x3D


SENTENCE_END = re.compile("[" + re.escape(SENTENCE_ENDS) + "]")
SENTENCE_PIECE = re.compile("[^" + re.escape(SENTENCE_ENDS) + "]+|([" + re.escape(SENTENCE_ENDS) + "])")
Sentences = list[tuple[int, int, int, int]]  # (frame start, frame end, negators, text offset of the start)


class _SentenceRun:
    """The sentences of a frame as the reference reads it: each ends at an end mark or the text's end."""

    __slots__ = ("found", "minimum", "negators", "start", "starts", "text_at")

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum
        self.found: Sentences = []
        self.starts = {0}  # every frame offset a sentence starts at, however short
        self.start = self.negators = self.text_at = 0

    def close(self, end: int, next_text_at: int) -> None:
        """The sentence ends at frame offset ``end``; the next starts at ``next_text_at`` in the text."""
        if end - self.start >= self.minimum:
            self.found.append((self.start, end, self.negators, self.text_at))
        self.starts.add(end)
        self.start, self.negators, self.text_at = end, 0, next_text_at


@dataclass(frozen=True, slots=True)
class CriticalDifference:
    """A replaced fill: its kind ("polarity" | "figure"), the passage around it and the fill."""

    kind: str
    text: str  # the passage of the document being decided
    fill: str
    other_fill_hash: int = -1  # the other text's fill in the same context (a sentence's names its count)
    swapped_with: str = ""  # this text's fill that stands where the other text has this one (a swap)
    start: int = -1  # the passage's span in the profiled (normalised) text
    end: int = -1
    words: str = ""  # a polarity word as the text writes it, with its negators (不予批准, was not)

    def as_evidence(self) -> dict[str, object]:
        """The difference as a decision's evidence shows it, in words: "negators in the sentence: 1
        (the other text: 0)", "figures swapped: 980 <-> 1200", "entity: 中兴通讯 (the other text
        names another)", "figure: 980 (the other text has another)", "polarity: 不予批准
        (approval+, negated) vs the other text: +, not negated"."""
        return {"kind": self.kind, "passage": self.text[:200], "term": self.term()}

    def term(self) -> str:
        """What differs, in words."""
        if is_sentence_fill(self.fill):
            theirs = SENTENCE_COUNT_OF.get(self.other_fill_hash, "?")
            return f"negators in the sentence: {self.fill[1:]} (the other text: {theirs})"
        if self.kind == "polarity":
            theirs = POLARITY_OF.get(self.other_fill_hash, "another polarity")
            return f"polarity: {self.words or self.fill} ({describe_polarity(self.fill)}) vs the other text: {theirs}"
        mine = shown_term(self.fill.lstrip("N ").lstrip("#@"))
        if self.swapped_with:
            theirs = shown_term(self.swapped_with.lstrip("N ").lstrip("#@"))
            return f"{'names' if self.kind == 'entity' else 'figures'} swapped: {mine} <-> {theirs}"
        if self.kind == "entity":
            return f"entity: {mine} (the other text names another in its place)"
        if self.kind == "figure":
            return f"figure: {mine} (the other text has another)"
        return self.fill


TERM_CHARS = 40  # a figure or name longer than this is shown cut (a 100,000-digit figure is one anchor)


def shown_term(term: str) -> str:
    """``term`` as the evidence shows it: at most :data:`TERM_CHARS` characters."""
    return term if len(term) <= TERM_CHARS else term[: TERM_CHARS - 3] + "..."


def _en_words(version: int) -> re.Pattern[str]:
    """The English word pattern of profile ``version`` (the reference's reading of words)."""
    if version >= UNIT_TAILS_SINCE:
        return EN_WORD_V13
    return EN_WORD_V7 if version >= FIGURE_VALUES_SINCE else EN_WORD


@lru_cache(maxsize=65536)
def comparable(version: int) -> int:
    """The scheme a record version's entries are made by, as the version a text is profiled at to
    be compared with such a record: v1 and v2 share one (same contexts, other bytes); v3 and v4
    each have their own; v5 and v6 share v6's (v6 adds the entries of names, which a v5 record
    lacks and so never pairs); v7 has its own (figures read as values: 1,200 and 一千二百 are 1200),
    and so have v8 (identifiers read as figures: 91440300ma5dab1234, x5), v9 (a person's
    tokens read as one name, 王/新民 as 王新民, and one-character runs read: 单/兴/缘), v10
    (second letter sets; 赵/新民 and 卫志/刚 read as people), v11 (a figure deep in a run of
    figures has its place in the run in its context: 6-3 6-7 (2-7) 7-6), v12 (no one-sided
    entry across a sentence's edge), v13 (an English percentage or decimal read with its
    letters and 's: 42%m, 2.2's), v14 (an English name that only starts sentences read:
    Virgin was told); v15 and v16 share v16's (v16 adds the entries of weak names, which pair only
    with weak names, and a v15 record has none); v17 has its own (a figure's context without its
    unit: 12万亩 as 12, 159 million as 159), and so have v18 (the unit in the figure's fill, a
    twin under a byte of its own) and v19 (one numeral that numbers or counts read as a figure:
    第二次, 三项)."""
    if version < ONE_SIDED_SINCE:
        return min(version, 2)
    if version in (FIGURE_TWINS_SINCE, WEAK_NAMES_SINCE):
        return WEAK_NAMES_SINCE
    return NAMES_SINCE if version in (AFFIX_SINCE, NAMES_SINCE) else version


NUMERAL_VALUES = dict(zip(ZH_NUMERALS, kprof.NUMERAL_VALUES.tolist(), strict=True))


def numeral_value(text: str) -> int | None:
    """The value of a figure of Chinese numerals (二〇二三 is 2023, 一千二百 is 1200), None when it
    is out of range or not all numerals: the reference of ``kernels.profile.numeral_value``."""
    values = [NUMERAL_VALUES.get(c, -1) for c in text]
    if not values or min(values) < 0:
        return None
    units = max(values) >= 10
    total = section = number = 0
    for d in values:
        if not units:
            number = number * 10 + d
        elif d < 10:
            number = d
        elif d < 10**4:
            section += (number or 1) * d
            number = 0
        elif d == 10**4:
            total, section, number = total + (section + number) * d, 0, 0
        else:
            total, section, number = (total + section + number) * d, 0, 0
        if max(total, number) > kprof.NUMERAL_LIMIT:
            return None
    return total + section + number


def figure_text(written: str, values: bool = False) -> str:
    """A figure as its fill spells it: without spaces, thousands separators and dollar signs
    (28.90 % is 28.90%, 1,200 is 1200; only v7 reads a separator into a figure, only v18 the
    letters of a currency: hk$6.31bn is hk6.31bn); with ``values`` (v7), Chinese
    numerals as their value in digits (二〇二三 is 2023: a reprint may write a date either way)."""
    value = numeral_value(written) if values and written[:1] in NUMERAL_VALUES else None
    return str(value) if value is not None else written.replace(" ", "").replace(",", "").replace("$", "")


def class_free(fill: str) -> str:
    """A polarity fill as v4 hashes it: negations and sign, no class ("N approval+" -> "N +")."""
    if _figure_or_bare(fill) or is_sentence_fill(fill):
        return fill
    head = fill[: len(fill) - len(fill.lstrip("N "))]
    return head + fill[-1]


def _fill_parts(fill: str) -> tuple[str, str]:
    """(polarity part, figure part) of a fill: "N #12" -> ("N", "#12"), "#12" -> ("", "#12"),
    "N approval+" -> ("N approval+", "")."""
    if fill.startswith("N #"):
        return "N", fill[2:]
    if fill.startswith("#"):
        return "", fill
    return fill, ""


def fill_hash(fill: str) -> int:
    """8 bits of the polarity part (class, sign, negation), 8 bits of the figure."""
    polarity, figure = _fill_parts(fill)
    return ((mmh3.hash(polarity, kprof.POLARITY_SEED, signed=False) & 0xFF) << 8
            | (mmh3.hash(figure, kprof.FIGURE_SEED, signed=False) & 0xFF))


def unit_key(written: str) -> str:
    """A figure's unit as its fill holds it after the figure (v18): its word characters but 余 and
    多 (万余人 as 万人, "per cent" as percent): a copy that writes 3万多人 for 3万余人 says the same."""
    return "".join(c for c in written if c.isalnum() and c not in ZH_ABOUT)


def figure_fill(written: str, values: bool = False) -> str:
    """The fill of a figure written ``written`` in the text, not negated ("#" + :func:`figure_text`)."""
    return "#" + figure_text(written, values)


def _context_hash(context: str) -> int:
    return mmh3.hash(context, kprof.CONTEXT_SEED, signed=False)


def in_figure_run(context: int, before: int, after: int, k: int) -> int:
    """The context hash of a figure that is the ``before``-th of its run of figures from the start
    and the ``after``-th from the end (v11). More than ``k`` figures from both ends its context
    sees figures only, as every figure's there does (6-3 6-7 (2-7) 7-6 (7-5)), and figures that
    traded places inside the run would cancel out; there the context is hashed again with the
    figure's place from the nearer end. A run of more than :data:`FIGURE_RUN_LONGEST` figures is a
    list of numbers (telephone numbers, codes), whose places crawler noise moves (a figure split in
    two): its figures keep their contexts. The reference of ``kernels.profile._in_figure_run``."""
    if before <= k or after <= k or before + after - 1 > FIGURE_RUN_LONGEST:
        return context
    place = before if before <= after else -after
    return mmh3.hash(struct.pack("<Ii", context, place), kprof.CONTEXT_SEED, signed=False)


def _figures_around(units: Sequence[str], i: int, figure: str) -> tuple[int, int]:
    """How many figures in a row (units equal to ``figure``) end at unit ``i``, and start there."""
    before = after = 0
    while i - before >= 0 and units[i - before] == figure:
        before += 1
    while i + after < len(units) and units[i + after] == figure:
        after += 1
    return before, after


class KernelFills(Sequence[str]):
    """The fill strings of a kernel-made profile, built only when read (evidence needs one or two)."""

    __slots__ = ("_codes", "_fig_a", "_fig_b", "_fig_u", "_kinds", "_names", "_negs", "_text", "_values")

    def __init__(self, kinds: npt.NDArray[np.int8], codes: npt.NDArray[np.int32], negs: npt.NDArray[np.int32],
                 spans: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]],
                 names: Sequence[str], text: str, values: bool = False) -> None:
        """Fills of entries described by anchor kind, class-sign code, negations and figure span
        (``spans``: starts, ends and unit ends, v18; ``values``: Chinese numerals as their value,
        :func:`figure_text`)."""
        self._kinds, self._codes, self._negs = kinds, codes, negs
        self._fig_a, self._fig_b, self._fig_u = spans
        self._names = names
        self._text = text
        self._values = values

    def __len__(self) -> int:
        """Entries."""
        return len(self._kinds)

    @property
    def kinds(self) -> npt.NDArray[np.int8]:
        """The anchor kind of each entry (``neardup.kernels.profile.ANCHOR_*``)."""
        return self._kinds

    @property
    def span_ends(self) -> npt.NDArray[np.int64]:
        """Where each figure, name or sentence entry's span ends in the text (a sentence's: after
        its mark, or at the text's end)."""
        return self._fig_b

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        """The fill of entry ``i`` as the reference spells it ("N approval+", "#60", "N")."""
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        kind = int(self._kinds[i])
        if kind == kprof.ANCHOR_CLASS:
            return "N " * int(self._negs[i]) + self._names[int(self._codes[i])]
        if kind == kprof.ANCHOR_FIGURE:
            b = int(self._fig_b[i])
            figure = figure_fill(self._text[int(self._fig_a[i]) : b], self._values)
            return ("N " if self._negs[i] else "") + figure + unit_key(self._text[b : int(self._fig_u[i])])
        if kind == kprof.ANCHOR_SENTENCE:
            return SENTENCE_FILL + str(int(self._negs[i]))
        if kind == kprof.ANCHOR_NAME:
            return NAME_FILL + self._text[int(self._fig_a[i]) : int(self._fig_b[i])]
        return "N"

    def __iter__(self) -> Iterator[str]:
        """Fills in entry order."""
        return (self[j] for j in range(len(self)))


@dataclass(slots=True)
class Profile:
    """The anchors of one document: sorted entries plus, for evidence, where each came from."""

    entries: npt.NDArray[np.uint64]  # sorted (context << 16 | fill)
    fills: Sequence[str]  # in entry order
    positions: Sequence[int]  # text offsets, in entry order
    text: str
    data: bytes | None = field(default=None, repr=False)  # the record, when already encoded
    bits: int = CONTEXT_BITS  # of the contexts in ``entries``
    version: int = PROFILE_VERSION  # the record version whose contexts ``entries`` has
    # how to profile this text the way records of another version were made (set by the profiler)
    remade: Callable[[int], Profile] | None = field(default=None, repr=False)
    _as: dict[int, Profile] = field(default_factory=dict, repr=False)
    _without_furniture: Profile | None = field(default=None, repr=False)  # made once, on the first near pair
    _without_cut_word: Profile | None = field(default=None, repr=False)  # made once, on the first near pair
    # (contexts, starts, ends) of the sentence entries in text order, made once
    _sentences: tuple[list[int], npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = field(default=None,
                                                                                               repr=False)
    # this text's tokens as places of another text's names (set for the documents being decided)
    name_slots: NameSlots | None = field(default=None, repr=False)
    _placeless_rows: npt.NDArray[np.bool_] | None = field(default=None, repr=False)  # made once (:meth:`_placeless`)

    def encode(self) -> bytes:
        """The record the store keeps (v3; v2 for a profile made the v2 way)."""
        if self.data is None:
            self.data = encode_entries(self.entries, self.bits, self.version)
        return self.data

    def sentence_mask(self) -> npt.NDArray[np.bool_]:
        """Which entries are sentences' (v4), not anchors'."""
        if isinstance(self.fills, KernelFills):
            return self.fills.kinds == kprof.ANCHOR_SENTENCE
        return np.fromiter(map(is_sentence_fill, self.fills), dtype=np.bool_, count=len(self.fills))

    def sentence_contexts(self, min_chars: int = 0) -> list[int]:
        """The contexts of this text's sentences at least ``min_chars`` long, in text order, each
        once: what an excerpt shares with its article (a sentence's context is its whole frame)."""
        contexts, starts, ends = self._sentence_bounds()
        lengths = (ends - starts).tolist()
        return list(dict.fromkeys(c for c, n in zip(contexts, lengths, strict=True) if n >= min_chars))

    def _sentence_bounds(self) -> tuple[list[int], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(contexts, starts, ends) of this text's sentence entries, in text order (made once)."""
        if self._sentences is None:
            self._sentences = self._sentence_spans()
        return self._sentences

    def _sentence_spans(self) -> tuple[list[int], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        positions = np.asarray(self.positions, dtype=np.int64)
        if isinstance(self.fills, KernelFills):  # the kernel's own ends, as a window of one reads them
            return _window_sentences(self.entries, positions, self.fills.kinds, self.fills.span_ends,
                                     np.array([0, len(self.entries)], dtype=np.int64))[0]
        rows = np.flatnonzero(self.sentence_mask())
        starts = positions[rows]
        order = np.argsort(starts, kind="stable")
        rows, starts = rows[order], starts[order]
        # each sentence ends at the first sentence mark after its start, or with the text
        marks = np.append(np.fromiter((m.end() for m in SENTENCE_END.finditer(self.text)), dtype=np.int64),
                          len(self.text))
        ends = marks[np.searchsorted(marks[:-1], starts, side="right")]
        return (self.entries[rows] >> np.uint64(16)).tolist(), starts, ends

    def keep(self, mask: npt.NDArray[np.bool_]) -> Profile:
        """The profile of the entries where ``mask`` holds (same text, bits and version)."""
        kept = mask.tolist()
        return Profile(self.entries[mask], [f for f, k in zip(self.fills, kept, strict=True) if k],
                       [p for p, k in zip(self.positions, kept, strict=True) if k], self.text,
                       bits=self.bits, version=self.version, remade=self.remade, name_slots=self.name_slots)

    def figure_mask(self) -> npt.NDArray[np.bool_]:
        """Which entries are figures'."""
        if isinstance(self.fills, KernelFills):
            return self.fills.kinds == kprof.ANCHOR_FIGURE
        return np.fromiter(map(_is_figure_fill, self.fills), dtype=np.bool_, count=len(self.fills))

    def compared_at(self, jaccard: float) -> Profile:
        """The profile as a pair of this Jaccard compares it: without its header's figures when the
        two texts share their body (:data:`BODY_MATCH_JACCARD`), else all of it."""
        return self.without_furniture_figures() if jaccard >= BODY_MATCH_JACCARD else self

    def without_furniture_figures(self) -> Profile:
        """The profile less the figures of a short first sentence (:func:`furniture_spans`): a
        reprint's own header numbers (转载第2次 编号00012。), not the notice's. Made once a profile:
        a document is compared with every candidate of its window."""
        if self._without_furniture is None:
            self._without_furniture = self._furniture_dropped()
        return self._without_furniture

    def _furniture_dropped(self) -> Profile:
        return self._dropped_in(furniture_spans(self.text), self.figure_mask)

    def _dropped_in(self, spans: Sequence[tuple[int, int]], which: Callable[[], npt.NDArray[np.bool_]]) -> Profile:
        """The profile less the entries of ``which`` kind (a mask, asked only when needed) that
        stand in one of ``spans``; this one when there are none."""
        if not spans or len(self.entries) == 0:
            return self
        at = np.asarray(self.positions, dtype=np.int64)
        inside = np.zeros(len(at), dtype=np.bool_)
        for a, b in spans:
            inside |= (at >= a) & (at < b)
        drop = inside & which()
        return self.keep(~drop) if drop.any() else self

    def without_cut_word(self) -> Profile:
        """The profile less the polarity words and figures of a last word the text was cut in or
        after (:func:`cut_word_span`): a page cut at "will" or "1" may have dropped the "not" or
        the "200" that follows. Made once a profile."""
        if self._without_cut_word is None:
            self._without_cut_word = self._cut_word_dropped()
        return self._without_cut_word

    def _cut_word_dropped(self) -> Profile:
        span = cut_word_span(self.text)
        return self._dropped_in([span] if span else [], lambda: ~self.sentence_mask())

    def critical_against(self, theirs: npt.NDArray[np.uint64], version: int = PROFILE_VERSION,
                         jaccard: float = 0.0, their_length: int | None = None) -> CriticalDifference | None:
        """The first shared context whose fills were replaced (each side has one the other lacks).

        ``version``: of the record ``theirs`` was decoded from. Entries of an older record are
        compared with this text's profile made that version's way (computed once, when one comes up).
        ``jaccard``: the pair's; at :data:`BODY_MATCH_JACCARD` or more the two texts share their
        body, so a figure in a short header sentence is the reprint's furniture and not compared.
        ``their_length``: the other text's length in characters, when known (a sentence this text
        added is told from one it rewrote around a new name by it; a shorter text's last word may
        have been cut, :meth:`without_cut_word`)."""
        mine = self._compared_as(version, jaccard, their_length)
        if mine is not self:
            return mine.critical_against(theirs, version, their_length=their_length)
        if len(self.entries) == 0 or len(theirs) == 0:
            return None
        # compared as places: not a name's mention whose context is its own other part, on this
        # side, and on the other side not the same entries (they would have cancelled out)
        placeless = self._placeless()
        placed = np.flatnonzero(~placeless)
        compared = theirs[~in_sorted(theirs, self.entries[placeless])] if placeless.any() else theirs
        j = int(replaced_context(self.entries[placed], compared)) if len(placed) and len(compared) else -1
        i = int(placed[j]) if j >= 0 else -1
        if i < 0:
            return (self._other_name(theirs) or self._new_name(theirs, their_length, version)
                    or self._another_credit(theirs, version) or self._weak_name_run(theirs))
        if is_sentence_fill(self.fills[i]):  # a word's difference names the word: look for one first
            words = np.flatnonzero(~self.sentence_mask() & ~placeless)
            j = int(replaced_context(self.entries[words], compared)) if len(words) else -1
            i = int(words[j]) if j >= 0 else i
        return self._replaced_at(i, theirs)

    def _compared_as(self, version: int, jaccard: float, their_length: int | None) -> Profile:
        """The profile that compares for this pair, one step at a time (each is compared again):
        without the header's figures when the bodies match, without a cut last word when this
        text is the shorter, made the way records of ``version`` were; else this one."""
        body = self.compared_at(jaccard)
        if body is not self:
            return body
        if their_length is not None and len(self.text) < their_length:  # a shorter text may be a cut copy
            cut = self.without_cut_word()
            if cut is not self:
                return cut
        scheme = comparable(version)
        if scheme == comparable(self.version):
            return self
        if self.remade is None:
            raise ValueError(f"a v{self.version} profile cannot be compared with a v{version} record")
        if scheme not in self._as:
            self._as[scheme] = self.remade(scheme)
        return self._as[scheme]

    def _replaced_at(self, i: int, theirs: npt.NDArray[np.uint64]) -> CriticalDifference:
        """The critical difference of entry ``i``, whose context ``theirs`` fills otherwise."""
        mine = int(self.entries[i])
        ctx = mine >> 16
        lo, hi = np.searchsorted(theirs, [ctx << 16, (ctx << 16) | 0xFFFF], side="left")
        their_fills = {int(x) & 0xFFFF for x in theirs[lo : hi + 1] if int(x) >> 16 == ctx}
        other = next(iter(their_fills - {mine & 0xFFFF}), mine & 0xFFFF)
        kind = difference_kind(mine & 0xFFFF, other)
        at = int(self.positions[i])
        if is_sentence_fill(self.fills[i]):  # the whole sentence: its negator can be anywhere in it
            end = SENTENCE_END.search(self.text, at)
            start, stop = at, end.end() if end else len(self.text)
        else:
            start, stop = max(0, at - 12), min(len(self.text), at + 16)
        swapped = self._swap_partner(i, other) if kind in ("figure", "entity") else ""
        quoted = polarity_words(self.text, at) if kind == "polarity" and not is_sentence_fill(self.fills[i]) else ""
        return CriticalDifference(kind, self.text[start:stop].strip(), self.fills[i], other, swapped, start, stop,
                                  quoted)

    def _other_name(self, theirs: npt.NDArray[np.uint64]) -> CriticalDifference | None:
        """The entity difference of a name of the other text that this one writes, in the same
        place, as words it does not read as a name (:class:`neardup.text.entities.NameSlots`),
        outside the sentences the other text has too."""
        if self.name_slots is None or not len(_present_lacking(theirs, self.entries)):
            return None  # every name of the other text is carried here (most reprints): nothing to look up
        return self._placed_in_words(theirs, self.name_slots.other_name_at)

    def _weak_name_run(self, theirs: npt.NDArray[np.uint64]) -> CriticalDifference | None:
        """The entity difference of a weak name of the other text (profile v16: 高峰, a word a
        tagger takes for a person) that this one writes, in the same place, as a name no
        dictionary knows (蔚/少/辉), outside the sentences the other text has too."""
        if self.name_slots is None or not len(_weak_lacking(theirs, self.entries)):
            return None  # every weak name of the other text stands here too (most reprints): nothing to place
        return self._placed_in_words(theirs, self.name_slots.weak_name_run_at)

    def _placed_in_words(self, theirs: npt.NDArray[np.uint64], place: Callable[
            [npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.int64]],
            tuple[int, int] | None]) -> CriticalDifference | None:
        """The entity difference at the text span where ``place`` (a :class:`NameSlots` method)
        finds a name of the other text written as this text's words, outside the sentences both
        texts have (no name was replaced there)."""
        _, starts, ends = self._sentence_bounds()
        shared = ~self._sentences_missing(theirs)
        span = place(self.entries, theirs, starts[shared], ends[shared])
        if span is None:
            return None
        start, end = span
        return CriticalDifference("entity", self.text[max(0, start - 12) : end + 12].strip(),
                                  NAME_FILL + self.text[start:end], start=max(0, start - 12),
                                  end=min(len(self.text), end + 12))

    def _another_credit(self, theirs: npt.NDArray[np.uint64],
                        version: int = PROFILE_VERSION) -> CriticalDifference | None:
        """The entity difference of a credit in brackets, (陈醉) where the other text has (唐运张): a
        Chinese name of this text that the other neither carries nor writes alike stands only in a
        credit (:func:`credit_span`), and the other text has a name this one lacks (nor writes alike)
        that stood alone as well (no mention entries under its fill byte: no words beside it in
        its sentence), or, in a credit of several names ((王彦田周亮) where the other has
        (韦凯辉周亮)), one mentioned once where the credit's other names are the other text's too,
        one of them beside another name there (:meth:`_neighbour_replaced`). A name alone has no
        context to be compared by, and names side by side have each other's, so neither the
        replaced contexts nor a new name's sentences see it; the same story under another
        author's name is another document. A credit after a byline's word (记者, 编辑) is furniture."""
        new = [v for v in self._names_theirs_lack(theirs, version) if self._credited(v)]
        if not new:
            return None
        their_new = _new_names(theirs, self.entries)
        mentions = [int(((theirs & np.uint64(0xFFFF)) == _mention_fill(w)).sum()) for w in their_new]
        if 0 not in mentions and not (any(m <= MENTIONED_ONCE for m in mentions)
                                      and any(self._neighbour_replaced(v, theirs) for v in new)):
            return None
        row = int(np.searchsorted(self.entries, np.uint64(new[0])))
        at, name = int(self.positions[row]), self.fills[row]
        start, end = max(0, at - 12), min(len(self.text), at + len(name) + 12)
        return CriticalDifference("entity", self.text[start:end].strip(), name, start=start, end=end)

    def _credit_of(self, present: int) -> tuple[int, int] | None:
        """The credit (:func:`credit_span`) the Chinese name of presence entry ``present`` stands
        in at its first mention, where no byline's word opens it; None where it stands in none."""
        row = int(np.searchsorted(self.entries, np.uint64(present)))
        at, name = int(self.positions[row]), self.fills[row].removeprefix(NAME_FILL)
        if not _ideographic(name) or _furniture_name(self.text, at, at + len(name), reporter=True):
            return None
        return credit_span(self.text, at, at + len(name))

    def _credited(self, present: int) -> bool:
        """Whether every mention of the name of presence entry ``present`` stands in its credit
        (:meth:`_credit_of`)."""
        span = self._credit_of(present)
        return span is not None and all(span[0] <= int(self.positions[r]) < span[1]
                                        for r in self._mentions(present).tolist())

    def _neighbour_replaced(self, present: int, theirs: npt.NDArray[np.uint64]) -> bool:
        """Whether the other names in the credit of the name of presence entry ``present`` are all
        names the other text carries, one of them beside another name there: a mention entry of it
        in the credit that the other text lacks, and one in the other text that this one lacks."""
        span = self._credit_of(present)
        if span is None:
            return False
        carried = in_sorted(self.entries, theirs)
        replaced = False
        for other in _presence(self.entries).tolist():
            rows = self._mentions(other)
            inside = rows[[span[0] <= int(self.positions[r]) < span[1] for r in rows.tolist()]]
            if other == present or not len(inside):
                continue
            if not carried[np.searchsorted(self.entries, np.uint64(other))]:
                return False
            theirs_only = ~in_sorted(theirs, self.entries) & ((theirs & np.uint64(0xFFFF)) == _mention_fill(other))
            replaced |= bool(not carried[inside].all() and theirs_only.any())
        return replaced

    def _new_name(self, theirs: npt.NDArray[np.uint64], their_length: int | None,
                  version: int = PROFILE_VERSION) -> CriticalDifference | None:
        """The entity difference of a name of this text that the other text never names, where
        the other has some words it does not read as a name (刘/业/定 for 施行): every sentence of
        this text that names it is missing from the other, at most one other sentence is missing,
        this text has no more sentences than the other, and the two lengths differ by less than
        half the named sentences (they were rewritten around the name: not added, cut off or
        edited all over); and either the named sentences share an anchor (a figure, a polarity
        word, another name, in the same context) with the other text, all of them but one (a
        headline naming only it) and two in three at least, one at least, or they were swapped for
        as many of the other's around the name alone (:meth:`_swapped_around`). A mention in a
        byline or a source website's name is furniture (:func:`_furniture_name`) and left out; a
        name named only there is no difference."""
        if len(theirs) == 0:
            return None
        new = self._names_theirs_lack(theirs, version)
        # a record's sentence entries share their fills with polarity words' (a sentence's
        # negators read as a polarity): counted together, more on this side means sentences added
        if not new or _sentence_like(self.entries) > _sentence_like(theirs):
            return None
        _, starts, ends = self._sentence_bounds()
        missing = self._sentences_missing(theirs).tolist()
        added = 0 if their_length is None else len(self.text) - their_length
        positions = np.asarray(self.positions, dtype=np.int64)
        own = self._anchor_mask()
        anchors = own & _held_as_often(self.entries, theirs)  # ... that the other text has too
        carried = [self._present_name(v) for v in _present_carried(self.entries, theirs).tolist()]
        for present in new:
            if self._read_one_off(present, carried):
                continue
            rows = self._mentions(present, new)
            if not len(rows):
                continue  # named only in a byline or as a website
            where = positions[rows]
            if (self._rewritten_around(present, where, missing, (starts, ends), added, (own, anchors), theirs)
                    and not self._cut_by_a_space(rows, present, theirs)):
                pos = int(where[0])
                return CriticalDifference("entity", self.text[max(0, pos - 12) : pos + 16].strip(),
                                          self.fills[int(rows[0])], start=max(0, pos - 12),
                                          end=min(len(self.text), pos + 16))
        return None

    def _read_one_off(self, present: int, carried: list[str]) -> bool:
        """Whether the Chinese name of presence entry ``present`` is a name both texts carry
        (``carried``: their names) read one character longer or shorter: 刘臣恢 in a copy's title
        line, joined to the next line's 公司, where both texts read 刘臣 before 带着 (the dictionary
        cuts a name by the word after it); 解放军 of 解放军报 where a title line cuts the sentence.
        The same name, not another."""
        name = self._present_name(present)
        return _ideographic(name) and any(
            min(len(name), len(other)) >= 2 and abs(len(name) - len(other)) == 1
            and (name.startswith(other) or other.startswith(name)) for other in carried)

    def _cut_by_a_space(self, rows: npt.NDArray[np.int64], present: int, theirs: npt.NDArray[np.uint64]) -> bool:
        """Whether the English name of presence entry ``present`` (its mention entries ``rows``)
        is a word a page's space or markup cut in two (Gar<br/>y, Bec&nbsp;kham, Januar y):
        joined with the lower-case letters after its first mention, it is written as a name the
        other text has (the same letters and fill byte; this one may write it whole elsewhere),
        or as a word that is no name (a month)."""
        at = int(self.positions[int(rows[0])])
        end = self._name_ends(rows[:1])[0]
        rest = _CUT_REST.match(self.text, end)
        if rest is None or not self.text[at:end].isascii():
            return False
        joined = (self.text[at:end] + rest[1]).lower()
        if joined in EN_NOT_NAMES:
            return True
        cps = np.frombuffer(joined.encode("utf-32-le"), dtype="<u4").astype(np.uint32)
        one = np.zeros(1, dtype=np.int64)
        letters = int(kent.letter_sets(cps, one, np.array([len(joined)], dtype=np.int64), np.ones(1, dtype=np.bool_),
                                       True, zh_place_suffixes())[0])
        return any(_letters(v) == letters and _fill_byte(v) == _fill_byte(present) for v in _presence(theirs).tolist())

    def _rewritten_around(self, present: int, where: npt.NDArray[np.int64], missing: list[bool],
                          sentences: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]], added: int,
                          masks: tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]],
                          theirs: npt.NDArray[np.uint64]) -> bool:
        """Whether the sentences (``sentences``: starts, ends; ``missing`` from the other text)
        that name the name of presence entry ``present`` at ``where`` were rewritten around it
        (:meth:`_new_name`); ``added``: how much longer this text is; ``masks``: the anchor mask,
        and its anchors the other text has too."""
        starts, ends = sentences
        own, anchors = masks
        named = _sentences_of(where, starts, ends)
        if not named or not (all(missing[k] for k in named) and sum(missing) <= len(named) + 1
                             and 2 * abs(added) < int(sum(ends[k] - starts[k] for k in named))):
            return False
        positions = np.asarray(self.positions, dtype=np.int64)
        anchored = sum(bool(anchors[(positions >= starts[k]) & (positions < ends[k])].any()) for k in named)
        if anchored >= max(1, min(len(named) - 1, -(-2 * len(named) // 3))):
            return True
        runs = self._runs_around(where)
        room = sum(max(SWAPPED_NAME_CHARS, b - a) for a, b in runs)  # a swap changes the length by a name's
        return (sum(missing) == len(named) and abs(added) <= room
                and self._swapped_around(present, [(int(starts[k]), int(ends[k])) for k in named], own, theirs, runs))

    def _sentences_missing(self, theirs: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
        """Which of this text's sentences (:meth:`_sentence_bounds`, in text order) the other
        text's entries ``theirs`` lack."""
        contexts = self._sentence_bounds()[0]
        return ~in_sorted(np.asarray(contexts, dtype=np.uint64), theirs >> np.uint64(16))

    def _anchor_mask(self) -> npt.NDArray[np.bool_]:
        """Which entries are anchors: figures, polarity words and names (not sentences, not presence entries)."""
        fills = self.entries & np.uint64(0xFFFF)
        return (~self.sentence_mask() & (fills != np.uint64(kprof.NAME_PRESENT_FILL))
                & (fills != np.uint64(kprof.NAME_LETTERS_FILL))
                & ((fills >> np.uint64(8)) != np.uint64(kprof.WEAK_NAME_BYTE))
                & ((fills >> np.uint64(8)) != np.uint64(kprof.NAME_TWIN_BYTE)))

    def _runs_around(self, where: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
        """The text span of the names written together (浙江省/明辉/农业/开发: one company read as
        several names) around each distinct mention at ``where``, with a company's legal form
        written after them (股份有限公司)."""
        rows = np.flatnonzero((self.entries >> np.uint64(8)) & np.uint64(0xFF) == np.uint64(NAME_FILL_BYTE))
        spans = sorted(set(zip(np.asarray(self.positions, dtype=np.int64)[rows].tolist(), self._name_ends(rows),
                               strict=True)))
        runs: list[tuple[int, int]] = []
        for a, b in spans:
            if runs and a <= runs[-1][1]:
                runs[-1] = (runs[-1][0], max(runs[-1][1], b))
            else:
                runs.append((a, b))
        runs = [(a, _legal_form_end(self.text, b)) for a, b in runs]
        return [next(((a, b) for a, b in runs if a <= w < b), (w, w)) for w in sorted(set(where.tolist()))]

    def _swapped_around(self, present: int, sentences: list[tuple[int, int]], anchors: npt.NDArray[np.bool_],
                        theirs: npt.NDArray[np.uint64], runs: list[tuple[int, int]] | None = None) -> bool:
        """Whether this text's ``sentences`` (spans), the only ones the other text lacks, were
        swapped for as many of the other's around the name of presence entry ``present`` alone:
        the other text lacks as many sentences and polarity words of this one as this one lacks
        of its own inside them, and, fewer than :data:`SWAPPED_MANY`, they hold no anchor
        (``anchors``: :meth:`_anchor_mask`) but the name's and those whose fill the other text
        has (a figure or another name there, not found in the other text, says a sentence was
        cut, not rewritten: two copies that each dropped another one); ``runs``: the spans of the
        names written together with the name's mentions, which are its parts."""
        positions = np.asarray(self.positions, dtype=np.int64)
        inside = np.zeros(len(positions), dtype=np.bool_)
        for start, end in sentences:
            inside |= (positions >= start) & (positions < end)
        fills = self.entries & np.uint64(0xFFFF)
        # an anchor whose fill the other text has elsewhere moved its context with the name (a
        # figure a few characters after it): a sentence rewritten around the name, not one cut
        others = anchors & (fills != _mention_fill(present)) & ~np.isin(fills, theirs & np.uint64(0xFFFF))
        for a, b in runs or ():  # the other names written together with it are the same name's parts
            others &= (positions < a) | (positions >= b)
        if len(sentences) < SWAPPED_MANY and (others & inside).any():
            return False
        # sentences and polarity words share their fills in a record: what the other text lacks of
        # this one's, this one lacks as much of the other's, inside the named sentences alone
        # (a polarity word beside the name changed with it on both sides)
        mine_like = _SENTENCE_FILL_TABLE[(self.entries & np.uint64(0xFFFF)).astype(np.intp)] & inside
        lacking = int((~in_sorted(self.entries[mine_like] >> np.uint64(16), theirs >> np.uint64(16))).sum())
        their_like = theirs[_SENTENCE_FILL_TABLE[(theirs & np.uint64(0xFFFF)).astype(np.intp)]]
        return int((~in_sorted(their_like >> np.uint64(16), self.entries >> np.uint64(16))).sum()) == lacking

    def _mentions(self, present: int, cut: Sequence[int] = ()) -> npt.NDArray[np.int64]:
        """The rows of the name entries that mention the name of presence entry ``present``, told
        by the name itself from another name whose fill shares its byte, bylines and website names
        left out (:func:`_furniture_name`); with those of the names among presence entries ``cut``
        that are its start (姚梅 of 姚梅慧: where the dictionary cut it short)."""
        fills = self.entries & np.uint64(0xFFFF)
        name = self._present_name(present)
        cut_names = {v: self._present_name(v) for v in cut if v != present} if _ideographic(name) else {}
        starts = {v: other for v, other in cut_names.items() if name.startswith(other)}
        keys = {name, *starts.values()}
        rows = np.flatnonzero(np.isin(fills, [_mention_fill(v) for v in [present, *starts]]))
        keep = [_name_key(self.fills[r]) in keys and not _furniture_name(self.text, int(self.positions[r]), end)
                for r, end in zip(rows.tolist(), self._name_ends(rows), strict=True)]
        return rows[np.asarray(keep, dtype=np.bool_)] if len(rows) else rows

    def _present_name(self, present: int) -> str:
        """The name of presence entry ``present`` (:func:`_name_key`)."""
        return _name_key(self.fills[int(np.searchsorted(self.entries, np.uint64(present)))])

    def _placeless(self) -> npt.NDArray[np.bool_]:
        """Which entries are name mentions whose context on one side is only the name's own other
        part, written on to it (Tommy of "to Tommy Haas.", Marat of "beat Marat Safin."): every
        full name at a sentence's edge has that context, so compared as a place it would pair two
        people that share nothing else (a sentence deleted in one copy, another in the other); so
        is a name's side that is one of :data:`WEAK_WORDS` alone (The of "The Tories said"). A name
        beside another across punctuation (a list: Voyce; King, Dawson) keeps its place."""
        if self._placeless_rows is None:
            self._placeless_rows = self._written_on_names()
        return self._placeless_rows

    def _written_on_names(self) -> npt.NDArray[np.bool_]:
        """:meth:`_placeless`, computed."""
        left, right = _names_only_contexts()
        ctx = self.entries >> np.uint64(16)
        names = ((self.entries >> np.uint64(8)) & np.uint64(0xFF)) == np.uint64(NAME_FILL_BYTE)
        on_left, on_right = names & in_sorted(ctx, left), names & in_sorted(ctx, right)
        out = names & in_sorted(ctx, _weak_contexts())
        rows = np.flatnonzero(on_left | on_right)
        for r, end in zip(rows.tolist(), self._name_ends(rows), strict=True):
            at = int(self.positions[r])
            out[r] = _written_on(self.text, end, 1) if on_right[r] else _written_on(self.text, at - 1, -1)
        return out

    def _name_ends(self, rows: npt.NDArray[np.int64]) -> list[int]:
        """Where the names of entries ``rows`` end in the text."""
        if isinstance(self.fills, KernelFills):
            return self.fills.span_ends[rows].tolist()
        return [int(self.positions[r]) + len(self.fills[r]) - len(NAME_FILL) for r in rows.tolist()]

    def _names_theirs_lack(self, theirs: npt.NDArray[np.uint64], version: int = PROFILE_VERSION) -> list[int]:
        """The presence entries of this text's names the other neither carries nor writes alike.
        None when the other side, a record of ``version``, has no presence entries and may be a
        v5 record, which says nothing of names it lacks (v5 and v6 share their scheme); a record
        of v7 or later without them read no name."""
        if not len(_present_lacking(self.entries, theirs)):
            return []
        if (comparable(version) <= NAMES_SINCE
                and not kent.has_fill(theirs, np.uint64(kprof.NAME_PRESENT_FILL))):
            return []
        return _new_names(self.entries, theirs)

    def _swap_partner(self, i: int, other: int) -> str:
        """The fill of this text's entry, in another context than entry ``i``'s, whose fill the
        other text has in ``i``'s context: the figure or name the two texts swapped ("" if none)."""
        if is_sentence_fill(self.fills[i]) or other == int(self.entries[i]) & 0xFFFF:
            return ""
        ctx = int(self.entries[i]) >> 16
        for j in np.flatnonzero((self.entries & np.uint64(0xFFFF)) == np.uint64(other)).tolist():
            if int(self.entries[j]) >> 16 != ctx:
                return self.fills[j]
        return ""


# the rest of a word a space cut off a name: one space, then lower-case letters up to the word's end
_CUT_REST = re.compile(r" ([a-z]+)\b")


def credit_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The credit ``text[start:end]`` stands in, as (first, last) offsets of what it holds: brackets
    holding nothing but a few names' Chinese characters, spaces between them allowed ((王彦田周亮)
    after a story). None when it is none."""
    bracket = max(text.rfind(c, max(0, end - CREDIT_LONGEST - 1), start) for c in OPEN_BRACKETS)
    last = min((i for i in (text.find(c, end, start + CREDIT_LONGEST + 1) for c in CLOSE_BRACKETS) if i >= 0),
               default=-1)
    held = text[bracket + 1 : last].strip()
    if bracket < 0 or last < 0 or not held:
        return None
    return (bracket + 1, last) if all("\u3400" <= c <= "\u9fff" or c in " \u3000" for c in held) else None


def _furniture_name(text: str, start: int, end: int, reporter: bool = False) -> bool:
    """Whether the name at ``text[start:end]`` is a byline's (:data:`BYLINE_BEFORE`; ``reporter``:
    a reporter's too, :data:`CREDIT_BYLINE_BEFORE`) or a source website's (:data:`SITE_AFTER`): the
    page's, not the story's."""
    byline = CREDIT_BYLINE_BEFORE if reporter else BYLINE_BEFORE
    return bool(byline.search(text[max(0, start - 28) : start]) or SITE_AFTER.match(text, end - 1))


def _sentence_like(entries: npt.NDArray[np.uint64]) -> int:
    """How many entries have a sentence's fill (sentences and polarity words alike)."""
    return int(_SENTENCE_FILL_TABLE[(entries & np.uint64(0xFFFF)).astype(np.int64)].sum())


def _sentences_of(where: npt.NDArray[np.int64], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
                  ) -> list[int]:
    """The sentences (``starts``, ``ends``) that hold the positions ``where``; none when one is
    outside them all (a mention in a sentence too short for an entry: too short to judge)."""
    at = np.searchsorted(starts, where, side="right") - 1
    if (at < 0).any() or not (where < ends[at]).all():
        return []
    return sorted(set(at.tolist()))


def _name_key(fill: str) -> str:
    """A name entry's fill as the name it reads (北京市 and 北京 one place, case left out)."""
    return canonical_name(fill.removeprefix(NAME_FILL)).lower()


def _ideographic(name: str) -> bool:
    """Whether a name holds an ideograph (a Chinese name)."""
    return any("\u3400" <= c <= "\u9fff" for c in name)


@lru_cache(maxsize=1)
def _names_only_contexts() -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """The contexts of a name mention whose left / right side holds one to
    :data:`NAME_CONTEXT_TOKENS` names and no other word (:func:`neardup.kernels.entities.side_contexts`),
    each sorted."""
    sides = [kent.side_contexts(np.zeros(m, dtype=np.uint64), np.ones(m, dtype=np.bool_), np.uint64(NAME_CONTEXT_SEED))
             for m in range(1, NAME_CONTEXT_TOKENS + 1)]
    return (np.sort(np.array([left for left, _ in sides], dtype=np.uint64)),
            np.sort(np.array([right for _, right in sides], dtype=np.uint64)))


# a word that stands alone beside a name at its sentence's edge says nothing of where the name
# stands (The Tories said / The Lib Dems called: two sentences that two copies each cut)
WEAK_WORDS = ("the", "a", "an", "and", "but", "or", "as", "in", "on", "at", "by", "for", "from", "of", "to",
              "with", "mr", "mrs", "ms", "dr", "在", "据", "由", "对", "与", "和", "从", "向", "经", "于")


@lru_cache(maxsize=1)
def _weak_contexts() -> npt.NDArray[np.uint64]:
    """The contexts of a name mention whose side is one of :data:`WEAK_WORDS` alone, sorted."""
    alone = np.zeros(1, dtype=np.bool_)
    sides = [kent.side_contexts(np.array([w], dtype=np.uint64), alone, np.uint64(NAME_CONTEXT_SEED))
             for w in hash_words(list(WEAK_WORDS)).tolist()]
    return np.sort(np.array([c for side in sides for c in side], dtype=np.uint64))


def _written_on(text: str, at: int, step: int) -> bool:
    """Whether the word next to ``text[at]`` (going ``step``: 1 right, -1 left, from just outside a
    name) is written on to it: an ideograph there, or one space and then a letter or digit."""
    if not 0 <= at < len(text):
        return False
    if _ideographic(text[at]):
        return True
    nxt = at + step
    return text[at] == " " and 0 <= nxt < len(text) and text[nxt].isalnum()


def _held_as_often(mine: npt.NDArray[np.uint64], theirs: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
    """Which entries of ``mine`` (sorted) ``theirs`` (sorted) holds at least as many times: an
    anchor of a phrase this text repeats, which the other has once, may be the other copy's
    (the Y Vote Mock Elections of a quote and of the first sentence, where the other text cut the
    quote's sentence)."""
    if not len(mine) or not len(theirs):
        return np.zeros(len(mine), dtype=np.bool_)
    lo = np.searchsorted(theirs, mine, side="left")
    held = np.searchsorted(theirs, mine, side="right") - lo
    first = np.searchsorted(mine, mine, side="left")
    mine_count = np.searchsorted(mine, mine, side="right") - first
    return np.asarray(held >= mine_count)


def _presence(entries: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """The presence entries (one a name) among ``entries``."""
    return entries[(entries & np.uint64(0xFFFF)) == np.uint64(kprof.NAME_PRESENT_FILL)]


def _letters(present: int) -> int:
    """A presence entry's letter set (24 bits)."""
    return (present >> 16) & 0xFFFFFF


def _fill_byte(present: int) -> int:
    """A presence entry's fill byte: the low byte of its name's mention entries' fill."""
    return (present >> 40) & 0xFF


def _mention_fill(present: int) -> np.uint64:
    """The 16-bit fill of the mention entries of the name of presence entry ``present``."""
    return np.uint64((kprof.NAME_FILL_BYTE << 8) | _fill_byte(present))


def _window_sentences(entries: npt.NDArray[np.uint64], positions: npt.NDArray[np.int64],
                      kinds: npt.NDArray[np.int8], ends: npt.NDArray[np.int64],
                      doc_off: npt.NDArray[np.int64]) -> list[tuple[list[int], npt.NDArray[np.int64],
                                                                  npt.NDArray[np.int64]]]:
    """Each document's sentence entries (:meth:`Profile._sentence_bounds`: contexts, starts and
    ends in text order) from a window's kernel arrays, in one pass over the window: made a
    document at a time they cost a dozen small numpy calls each."""
    rows = np.flatnonzero(kinds == kprof.ANCHOR_SENTENCE)
    docs = np.searchsorted(doc_off, rows, side="right") - 1
    order = np.lexsort((positions[rows], docs))  # by document, then start; ties in entry order
    rows, docs = rows[order], docs[order]
    starts = positions[rows].astype(np.int64)
    stops = ends[rows].astype(np.int64)
    contexts = (entries[rows] >> np.uint64(16)).tolist()
    cuts = np.searchsorted(docs, np.arange(len(doc_off)), side="left").tolist()
    return [(contexts[cuts[d] : cuts[d + 1]], starts[cuts[d] : cuts[d + 1]], stops[cuts[d] : cuts[d + 1]])
            for d in range(len(doc_off) - 1)]


def _weak_lacking(owner: npt.NDArray[np.uint64], other: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """The fills of ``owner``'s weak names (profile v16) that ``other`` has nowhere."""
    fills = owner & np.uint64(0xFFFF)
    weak = fills[(fills >> np.uint64(8)) == np.uint64(kprof.WEAK_NAME_BYTE)]
    return weak[~np.isin(weak, other & np.uint64(0xFFFF))]


def _present_lacking(owner: npt.NDArray[np.uint64], other: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """The presence entries (names) of ``owner`` that ``other`` lacks (both sorted)."""
    present = _presence(owner)
    return present[~in_sorted(present, other)] if len(present) else present


def _present_carried(owner: npt.NDArray[np.uint64], other: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """The presence entries (names) of ``owner`` that ``other`` carries too (both sorted)."""
    present = _presence(owner)
    return present[in_sorted(present, other)]


def _second_sets(entries: npt.NDArray[np.uint64]) -> dict[int, list[int]]:
    """Fill byte -> the second letter sets (v10) of ``entries``' names with that byte."""
    out: dict[int, list[int]] = {}
    for v in entries[(entries & np.uint64(0xFFFF)) == np.uint64(kprof.NAME_LETTERS_FILL)].tolist():
        out.setdefault(_fill_byte(v), []).append(_letters(v))
    return out


def _second_alike(mine: dict[int, list[int]], theirs: dict[int, list[int]], byte: int, other: int) -> bool:
    """Whether the second letter sets of a name of fill byte ``byte`` (in ``mine``) and one of
    ``other`` (in ``theirs``) are written alike; true where either has none (older records)."""
    a, b = mine.get(byte), theirs.get(other)
    return not a or not b or any(_written_alike(x, y) for x in a for y in b)


def _second_alike_within(sets: list[int]) -> bool:
    """Whether two names of one text that share their fill byte (``sets``: their second letter
    sets, v10) are written alike: true with fewer than two sets (an older record, or one set)."""
    return len(sets) < 2 or any(_written_alike(x, y) for i, x in enumerate(sets) for y in sets[i + 1 :])


def _new_names(owner: npt.NDArray[np.uint64], other: npt.NDArray[np.uint64]) -> list[int]:
    """The presence entries of ``owner``'s names that ``other`` neither carries nor writes alike
    (:func:`_names_not_alike`)."""
    return _names_not_alike(_present_lacking(owner, other), _present_lacking(other, owner),
                            _present_carried(owner, other), _second_sets(owner), _second_sets(other))


def _names_not_alike(lacking: npt.NDArray[np.uint64], their_present: npt.NDArray[np.uint64],
                     carried: npt.NDArray[np.uint64], mine2: dict[int, list[int]] | None = None,
                     theirs2: dict[int, list[int]] | None = None) -> list[int]:
    """The presence entries ``lacking`` (names the other text lacks) whose names are written alike
    (half their letters or more shared) neither with a name of the other text this one lacks
    (``their_present``: a name both texts carry is no other spelling of a new one) nor, under the
    same fill byte, with a name both carry (``carried``: Gabri of a page's noise in Gabri&nbsp;el;
    one name in 256 shares a byte, few of them letters too). ``mine2``, ``theirs2``: the second
    letter sets of each side (v10, :func:`_second_sets`), alike too where both have them."""
    m2, t2 = mine2 or {}, theirs2 or {}

    def other_spelling(v: int) -> bool:
        # the same letters under another fill byte are two names whose letter sets collide (沂蒙
        # and 中国, two bits each): a name written another way has other letters too (中国人民银行)
        return any(_written_alike(_letters(v), _letters(o))
                   and (_letters(v) != _letters(o) or _fill_byte(v) == _fill_byte(o))
                   and _second_alike(m2, t2, _fill_byte(v), _fill_byte(o)) for o in their_present.tolist())

    def cut_carried(v: int) -> bool:
        return any(_fill_byte(c) == _fill_byte(v) and _written_alike(_letters(v), _letters(c))
                   and _second_alike_within(m2.get(_fill_byte(v), [])) for c in carried.tolist())

    return [v for v in lacking.tolist() if not other_spelling(v) and not cut_carried(v)]


def _written_alike(letters: int, other: int) -> bool:
    """Whether two names' letter sets share half their letters or more, and two of them at least
    (a one-character name, the surname token of 王/新民, shares its one letter, by a 24-bit set's
    collisions, with about one name in twelve); or one set, of three letters or more, is all in
    the other: a name cut short (Terr itory, a page's space inside Territory; 解放军 of
    中国人民解放军)."""
    shared = (letters & other).bit_count()
    if shared >= 3 and shared == min(letters.bit_count(), other.bit_count()):
        return True
    return shared >= 2 and 2 * shared >= (letters | other).bit_count()


def _join_names(names: NameEntries, entries: npt.NDArray[np.uint64], *columns: npt.NDArray[np.generic]) -> tuple[
        npt.NDArray[Any], ...]:
    """The kernel's profile columns (entries, positions, kinds, codes, negations, figure starts,
    figure ends, unit ends, document offsets) with the name entries joined, sorted within each document."""
    kinds, codes, negs = columns[1], columns[2], columns[3]
    n_names = len(names.entries)
    extra = (names.starts, np.full(n_names, kprof.ANCHOR_NAME, dtype=kinds.dtype),
             np.full(n_names, -1, dtype=codes.dtype), np.zeros(n_names, dtype=negs.dtype), names.starts, names.ends,
             names.ends)
    return _join(entries, columns, names.entries, extra, names.doc_off)


def _join(entries: npt.NDArray[np.uint64], columns: Sequence[npt.NDArray[Any]], more: npt.NDArray[np.uint64],
          more_columns: Sequence[npt.NDArray[Any]], more_off: npt.NDArray[np.int64]) -> tuple[npt.NDArray[Any], ...]:
    """Profile columns (entries, then positions ... figure ends, document offsets) with the
    entries ``more`` (sorted within each document, ``more_off``) and their columns joined, sorted
    within each document."""
    doc_off = columns[-1]
    order, out_off = kent.merge_order(entries, doc_off, more, more_off)
    joined = [np.concatenate([col, extra.astype(col.dtype)])[order]
              for col, extra in zip(columns[:-1], more_columns, strict=True)]
    return (np.concatenate([entries, more])[order], *joined, out_off)


def twin_fill(fill: str) -> int:
    """The byte of a figure's fill ("#12", "N #12") that its twin entry holds (v15)."""
    return mmh3.hash(_fill_parts(fill)[1], TWIN_SEED, signed=False) & 0xFF


def figure_twins(entries: npt.NDArray[np.uint64], fills: Sequence[str], bits: int,
                 own_byte: bool = True) -> npt.NDArray[np.uint64]:
    """The twin entries (v15) of figure entries ``entries`` with fills ``fills``, whose contexts
    have ``bits`` bits: the context with :data:`TWIN_CONTEXT_BYTE` XORed into its top byte (so
    that a record kept with more bits, compared at fewer, still has it there), the polarity byte
    (``own_byte``, v18: :data:`TWIN_BYTE`, or :data:`NEGATED_TWIN_BYTE` for a negated figure), and
    :func:`twin_fill` in place of the figure byte."""
    salt = np.uint64(TWIN_CONTEXT_BYTE) << np.uint64(bits - 8 + 16)
    twins = np.fromiter(map(twin_fill, fills), dtype=np.uint64, count=len(fills))
    if not own_byte:
        return ((entries ^ salt) & ~np.uint64(0xFF)) | twins
    negated = np.fromiter((f.startswith("N ") for f in fills), dtype=np.bool_, count=len(fills))
    polarity = np.where(negated, np.uint64(NEGATED_TWIN_BYTE), np.uint64(TWIN_BYTE)).astype(np.uint64)
    return ((entries ^ salt) & ~np.uint64(0xFFFF)) | polarity << np.uint64(8) | twins


def _join_figure_twins(texts: Sequence[str], bits: int, version: int, entries: npt.NDArray[np.uint64],
                       *columns: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], ...]:
    """The kernel's profile columns (as :func:`_join_names` takes them) with each figure's twin
    entry joined (v15), sorted within each document; a twin has its figure's columns."""
    _, kinds, _, negs, fig_a, fig_b, fig_u, doc_off = columns
    rows = np.flatnonzero(kinds == kprof.ANCHOR_FIGURE)
    docs = np.searchsorted(doc_off, rows, side="right") - 1
    values = version >= FIGURE_VALUES_SINCE
    fills = [("N " if n else "") + figure_fill(texts[d][a:b], values) + unit_key(texts[d][b:u])
             for d, n, a, b, u in zip(docs.tolist(), negs[rows].tolist(), fig_a[rows].tolist(), fig_b[rows].tolist(),
                                      fig_u[rows].tolist(), strict=True)]
    twins = figure_twins(entries[rows], fills, bits, version >= UNIT_FILLS_SINCE)
    order = np.lexsort((twins, docs))
    more_off = np.searchsorted(docs[order], np.arange(len(doc_off)), side="left").astype(np.int64)
    picked = rows[order]
    return _join(entries, columns, twins[order], [column[picked] for column in columns[:-1]], more_off)


FURNITURE_CHARS = 30  # a first sentence this short may be a reprint's header
# a sentence mark, but not the point of a decimal (455.64)
_FURNITURE_END = re.compile("[" + re.escape(SENTENCE_ENDS.replace(".", "")) + r"]|(?<![0-9])\.|\.(?![0-9])")
SWAPPED_NAME_CHARS = 3  # sentences swapped around a name alone: the lengths differ by at most this a mention,
# or by the mention's own length, with the names written together with it (a company read in parts)
# ... and this many of them, each rewritten and nothing else, are the name's whatever else they hold
# (two copies that each cut another sentence differ in one sentence each, not in three)
SWAPPED_MANY = 3
# a company's legal form written after its name (众盛信息技术/股份有限公司): the readers leave it
# out of the name, but a swap for another company changes the length by the whole name's
_LEGAL_FORM = re.compile("(?:" + "|".join(sorted(FORM_LINKS, key=len, reverse=True)) + ")*(?:"
                         + "|".join(sorted((*COMPANY_FORMS, *LINKED_HEADS), key=len, reverse=True)) + ")")


def _legal_form_end(text: str, end: int) -> int:
    """Where a name that ends at ``end`` of ``text`` ends with the legal form written after it."""
    form = _LEGAL_FORM.match(text, end)
    return form.end() if form else end


# a name right after one of these, after the byline's other names (编辑 张三、李四) or after the
# name's own first tokens (作者:赵/磊), is a byline's (来源:中国政府网, by jane smith, source:
# associated press): furniture; a name once the sentence goes on past the byline is the story's
PAGE_BYLINE_WORDS = ("来源", "作者", "编辑", "通讯员", "摄影", "供稿")
# ... and a reporter's (记者): the same story under another reporter's name is another story, so a
# reporter is the story's where a sentence was rewritten around another name in its place
# (本报记者曹照琴谢国明 / 本报记者曹照琴田小楠); only a credit standing alone, compared with no
# context (:meth:`Profile._another_credit`), leaves it out, as a deleted sentence can take a
# credit with it while a footer adds names (记者从宜昌市获悉 is no byline: the story goes on)
REPORTER_WORDS = ("记者",)


def _byline_before(words: Sequence[str]) -> re.Pattern[str]:
    """What stands before a byline's name: one of ``words``, then the byline's other names."""
    return re.compile(r"(?:(?:" + "|".join(words) + r")[:：/\s]*"
                      r"(?:[^\W\d_]{1,4}[,，、/\s]+){0,3}(?![从在到对据])[^\W\d_]{0,3}"
                      r"|(?:^|[.!?;\n]\s?)(?:by|source|credit|photo):? [^.!?;\n]{0,24})$")


BYLINE_BEFORE = _byline_before(PAGE_BYLINE_WORDS)
CREDIT_BYLINE_BEFORE = _byline_before(PAGE_BYLINE_WORDS + REPORTER_WORDS)
# ... and a name that ends in 网, or right before this, is a website's, the page's source (央视网,
# 中国政府网, 中国新闻网; not 网络, 网友)
SITE_AFTER = re.compile(r"[^\W\d_]{0,3}?网(?![络友民页点格球])")  # matched from the name's last character
OPEN_BRACKETS, CLOSE_BRACKETS = "(（[【", ")）]】"  # around a credit (normalised text: ASCII brackets)
CREDIT_LONGEST = 12  # characters a credit holds: four names of three
MENTIONED_ONCE = 2  # mention entries of a name mentioned once: a context each side at most
BODY_MATCH_JACCARD = 0.9  # two texts this similar share their body: header and footer figures are furniture


def furniture_spans(text: str) -> list[tuple[int, int]]:
    """The text span of a first sentence of at most ``FURNITURE_CHARS`` characters ended by a
    sentence mark: the header a reprint prepends (转载第2次 编号00012。). A short last sentence is
    no furniture: a notice ends with its own batch or document number (（第2批）). A decimal point
    ends no sentence (以455.64分的总分夺得冠军: the opening figures of a story are its own)."""
    first = _FURNITURE_END.search(text, 0, FURNITURE_CHARS + 1)
    if first is not None and first.end() < len(text):
        return [(0, first.end())]
    return []


# a text that ends in a word or number written in ASCII, no sentence mark or closing quote after it:
# its last character one of these, the word's others these or an apostrophe or a point
_CUT_WORD_LAST = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz%")
_CUT_WORD_CHARS = _CUT_WORD_LAST | frozenset("'’.．")


def cut_word_span(text: str) -> tuple[int, int] | None:
    """The span of the last word of a text cut inside a sentence (it ends with a letter or a
    digit: "... nights will", "... 受理1"), or None. English puts its negator after an auxiliary
    (will not, were not) and a number's digits run on: the word before a cut cannot be judged.
    A Chinese negator comes before its verb, so a cut after a Chinese word loses none.

    Read backwards from the text's end: as a regular expression searched from the front, it was
    tried at every position (78 us a text of the development set)."""
    end = len(text.rstrip())
    if end == 0 or text[end - 1] not in _CUT_WORD_LAST:
        return None
    start = end - 1
    while start > 0 and text[start - 1] in _CUT_WORD_CHARS:
        start -= 1
    return start, len(text)


_NAME_BYTES = (NAME_FILL_BYTE, kprof.WEAK_NAME_BYTE, kprof.NAME_TWIN_BYTE)  # the polarity bytes of names' fills


def difference_kind(mine: int, other: int) -> str:
    """What a replaced fill (16 bits) against the other text's fill in its context changed:
    "entity" (a name), "polarity" (another polarity byte) or "figure"."""
    if (mine >> 8) in _NAME_BYTES and (other >> 8) in _NAME_BYTES:
        return "entity"
    return "polarity" if (mine >> 8) != (other >> 8) else "figure"


def encode_entries(entries: npt.NDArray[np.uint64], bits: int | None = None,
                   version: int = PROFILE_VERSION) -> bytes:
    """The record (v2, v3 or v4) of sorted entries whose contexts have ``bits`` bits (default CONTEXT_BITS)."""
    if version not in codec.VERSIONS:
        raise ValueError(f"profile records are written as v{codec.VERSIONS[0]}-v{codec.VERSIONS[-1]}, not v{version}")
    data, _ = codec.encode_batch(entries, np.array([0, len(entries)], dtype=np.int64),
                                 CONTEXT_BITS if bits is None else bits, NO_FIGURE, version)
    return data.tobytes()


def profile_version(data: bytes) -> int:
    """The version byte of a stored profile record (0 when it is none)."""
    return data[2] if len(data) > 2 and data[:2] == PROFILE_MAGIC else 0


def _project(entries: npt.NDArray[np.uint64], bits: int, to_bits: int) -> npt.NDArray[np.uint64]:
    """Entries with contexts of ``bits`` bits as contexts of ``to_bits`` (their top bits), sorted."""
    if bits < to_bits:
        raise ValueError(f"profile with {bits}-bit contexts, {to_bits} are compared")
    if bits == to_bits:
        return entries
    shift = np.uint64(bits - to_bits)
    ctx = (entries >> np.uint64(16)) >> shift
    out = (ctx << np.uint64(16)) | (entries & np.uint64(0xFFFF))
    out.sort()
    return out


DECODE_ERRORS = {codec.TRUNCATED: "truncated", codec.BAD_HEADER: "bad header", codec.TRAILING: "trailing bytes"}


def decode_profile(data: bytes, bits: int | None = None) -> npt.NDArray[np.uint64]:
    """Sorted (context << 16 | fill) entries of a stored v1 to v4 profile (which:
    :func:`profile_version`), contexts of ``bits`` bits (default CONTEXT_BITS); ValueError when
    ``data`` is no profile or too coarse."""
    to_bits = CONTEXT_BITS if bits is None else bits
    version = profile_version(data)
    if version == 1 and len(data) >= V1_HEAD.size:
        count = V1_HEAD.unpack_from(data)[2]
        if len(data) != V1_HEAD.size + V1_ENTRY.itemsize * count:
            raise ValueError("critical-difference profile v1 of the wrong length")
        packed = np.frombuffer(data, dtype=V1_ENTRY, count=count, offset=V1_HEAD.size)
        out = (packed["context"].astype(np.uint64) << np.uint64(16)) | packed["fill"].astype(np.uint64)
        out.sort()
        return _project(out, HASH_BITS, to_bits)
    if version in codec.VERSIONS:
        status, entries, record_bits = codec.decode(np.frombuffer(data, dtype=np.uint8), NO_FIGURE)
        if status != codec.OK:
            raise ValueError(f"critical-difference profile v{version}: {DECODE_ERRORS[status]}")
        return _project(entries, int(record_bits), to_bits) if len(entries) else entries
    raise ValueError("not a neardup v1-v4 critical-difference profile")


# ---------------------------------------------------------------------------------------------
# the lexicon compiled for the kernel
# ---------------------------------------------------------------------------------------------

def _base_char_table() -> npt.NDArray[np.uint8]:
    """Flags of every code point that do not depend on the lexicon: KEEP (a word character, what
    the reference's ``[\\W_]+`` keeps), DIGIT, AZ09, AZ. Cached on disk by Unicode version."""
    def build() -> dict[str, npt.NDArray[np.generic]]:
        keep = np.fromiter((chr(c).isalnum() for c in range(kprof.CP_RANGE)), dtype=np.bool_, count=kprof.CP_RANGE)
        table = np.where(keep, kprof.KEEP, 0).astype(np.uint8)
        for c in "0123456789":
            table[ord(c)] |= kprof.DIGIT | kprof.AZ09
        for c in "abcdefghijklmnopqrstuvwxyz":
            table[ord(c)] |= kprof.AZ09 | kprof.AZ
        return {"table": table}

    return cached_arrays(f"profile-chars-{unicodedata.unidata_version}-1", build)["table"].astype(np.uint8)


def _check_classes(pairs: Sequence[tuple[str, str]]) -> None:
    """Refuse a polarity class whose fill would read as a figure, a bare negation or a sentence."""
    for cls, sign in pairs:
        if (cls + sign).startswith("#") or cls + sign == "N" or is_sentence_fill(cls + sign):
            raise ValueError(f"polarity class {cls!r} with sign {sign!r} reads as a figure, a bare negation "
                             "or a sentence")


def _char_table(zh_terms: Sequence[str]) -> npt.NDArray[np.uint8]:
    """The character flags with the lexicon's: a term's first character, numerals, sentence ends."""
    ctab = _base_char_table().copy()
    for term in zh_terms:
        ctab[ord(term[0])] |= kprof.TERM
    for ch in ZH_NUMERALS:
        ctab[ord(ch)] |= kprof.NUMERAL
    for ch in SENTENCE_ENDS:
        ctab[ord(ch)] |= kprof.SENTENCE_END
    return ctab


@dataclass(frozen=True, slots=True)
class KernelTables:
    """The lexicon as the profile kernel reads it (see ``neardup.kernels.profile``)."""

    ctab: npt.NDArray[np.uint8]
    edge_keys: npt.NDArray[np.uint64]
    edge_vals: npt.NDArray[np.int32]
    node_kind: npt.NDArray[np.int8]
    node_code: npt.NDArray[np.int32]
    word_keys: npt.NDArray[np.uint64]
    word_vals: npt.NDArray[np.int32]
    word_cps: npt.NDArray[np.uint32]
    word_off: npt.NDArray[np.int64]
    word_neg: npt.NDArray[np.bool_]
    word_unit: npt.NDArray[np.bool_]
    word_pol: npt.NDArray[np.int32]
    digit_keys: bool
    cs_bytes: npt.NDArray[np.uint8]
    cs_off: npt.NDArray[np.int64]
    aux: npt.NDArray[np.bool_]
    zh_marks: npt.NDArray[np.uint32]
    cw_cps: npt.NDArray[np.uint32]
    cw_off: npt.NDArray[np.int64]


def _cps(words: Sequence[str]) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """Concatenated code points of ``words`` and their offsets."""
    off = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in words], out=off[1:])
    cps = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint32)
    return cps, off


def _trie(terms: Sequence[str], kind_of: dict[str, tuple[int, int]]) -> tuple[
        npt.NDArray[np.uint64], npt.NDArray[np.int32], npt.NDArray[np.int8], npt.NDArray[np.int32]]:
    """The Chinese terms as a trie: (edge keys, edge values, node kinds, node codes)."""
    children: dict[tuple[int, int], int] = {}
    kinds = [0]
    codes = [-1]
    for term in terms:
        node = 0
        for ch in term:
            nxt = children.get((node, ord(ch)))
            if nxt is None:
                nxt = children[(node, ord(ch))] = len(kinds)
                kinds.append(0)
                codes.append(-1)
            node = nxt
        kinds[node], codes[node] = kind_of[term]
    parents = np.array([p for p, _ in children], dtype=np.int64)
    cps = np.array([c for _, c in children], dtype=np.int64)
    keys, vals = kprof.build_edge_table(parents, cps, np.array(list(children.values()), dtype=np.int32))
    return keys, vals, np.array(kinds, dtype=np.int8), np.array(codes, dtype=np.int32)


class AnchorProfiler:
    """Profiles of documents under one lexicon: :meth:`profile_batch` for a window (the kernel),
    :meth:`profile` for one text (the Python reference)."""

    def __init__(self, lexicon: Lexicon | None = None, context_bits: int = CONTEXT_BITS) -> None:
        """Compile ``lexicon`` (default: the bundled one); contexts keep ``context_bits`` bits."""
        lex = lexicon or load_lexicon()
        if not 1 <= context_bits <= HASH_BITS:
            raise ValueError(f"context bits must be 1 to {HASH_BITS}, not {context_bits}")
        self.lexicon = lex
        self.context_bits = context_bits
        self.polarity = lex.polarity
        self.neg_zh = set(lex.negators_zh)
        self.neg_en = set(lex.negators_en)
        self.aff_zh = set(lex.affirmators_zh)
        zh_terms = sorted({w for w in lex.polarity if not w.isascii()} | self.neg_zh | self.aff_zh,
                          key=len, reverse=True)
        for word in [*zh_terms, *lex.polarity, *self.neg_en]:
            if not word:
                raise ValueError("the lexicon lists an empty polarity word, negator or affirmator")
        # longest first: 不予批准 -> 不予 + 批准, 无效 stays one word. The lookahead on the first
        # characters lets the scan skip most positions at once (re tries every alternative otherwise)
        starts = "".join(sorted({w[0] for w in zh_terms})) + "0-9" + ZH_NUMERALS
        terms = f"(?=[{starts}])(?:" + "|".join(map(re.escape, zh_terms))
        # v4: a space before the % sign belongs to the figure (28.90&nbsp;% of a crawled page)
        self.zh_re = re.compile(terms + rf"|[0-9]+(?:\.[0-9]+)?(?: ?%)?|[{ZH_NUMERALS}]{{2,}})")
        self.zh_re_v7 = re.compile(terms + rf"|{GROUPED_DIGITS}(?:\.[0-9]+)?(?: ?%)?|[0-9]+(?:\.[0-9]+)?(?: ?%)?"
                                   rf"|[{ZH_NUMERALS}]{{2,}})")
        # v8: first, a run of letters and digits with a digit after a letter is one figure (a credit
        # code, x5; not a number and its unit, 500ma)
        self.zh_re_v8 = re.compile(IDENTIFIER + "|" + self.zh_re_v7.pattern)
        # v18: and one numeral right after or before 分之 (百分之三, 三分之一)
        self.zh_re_v18 = re.compile(self.zh_re_v8.pattern + rf"|(?<=分之)[{ZH_NUMERALS}]|[{ZH_NUMERALS}](?=分之)")
        # v19: one numeral, one to ten, after 第 (not a law's part, 第二条) or else before a unit of
        # things (kernels.profile._counted_numeral)
        counting = "|".join(map(re.escape, ZH_UNITS))
        self.zh_re_v19 = re.compile(self.zh_re_v18.pattern + rf"|(?<=第)[{COUNTING_NUMERALS}](?![{ARTICLE_UNITS}])"
                                    rf"|(?<!第)[{COUNTING_NUMERALS}](?=(?:{counting}))")
        self.zh_re_v3 = re.compile(terms + rf"|[0-9]+(?:\.[0-9]+)?%?|[{ZH_NUMERALS}]{{2,}})")
        classes = sorted({cls for cls, _ in lex.polarity.values()})
        self.class_mark = {cls: chr(0xE000 + i) for i, cls in enumerate(classes)}
        self.en_class_word = {cls: "<" + cls + ">" for cls in classes}
        self.names = sorted({cls + sign for cls, sign in lex.polarity.values()})
        self.tables = self._compile(zh_terms, class_free=True)
        self.classed_tables = self._compile(zh_terms, class_free=False)  # for v2 and v3 profiles
        # the units a Chinese figure is written with, as the kernel's trie (v17); before, none
        self.units = _trie(zh_unit_words(), {w: (kprof.COUNT_UNIT if w in ZH_UNITS else 1, -1)
                                             for w in zh_unit_words()})[:3]
        self.no_units = _trie((), {})[:3]

    def _mark(self, cls: str, version: int) -> str:
        return POLARITY_MARK if version >= CLASS_FREE_SINCE else self.class_mark[cls]

    def _class_word(self, cls: str, version: int) -> str:
        return POLARITY_WORD if version >= CLASS_FREE_SINCE else self.en_class_word[cls]

    def _term_kinds(self, zh_terms: list[str], code_of: dict[tuple[str, str], int]) -> dict[str, tuple[int, int]]:
        """Each Chinese term's trie node: (kind, polarity code)."""
        kind_of: dict[str, tuple[int, int]] = {}
        for term in zh_terms:
            if term in self.aff_zh:
                kind_of[term] = (kprof.NODE_AFFIRMATOR, -1)
            elif term in self.neg_zh:
                kind_of[term] = (kprof.NODE_NEGATOR, -1)
            else:
                kind_of[term] = (kprof.NODE_POLARITY, code_of[self.lexicon.polarity[term]])
        return kind_of

    def _compile(self, zh_terms: list[str], class_free: bool) -> KernelTables:
        lex = self.lexicon
        pairs = sorted(set(lex.polarity.values()), key=lambda p: p[0] + p[1])
        code_of = {p: i for i, p in enumerate(pairs)}
        _check_classes(pairs)
        edge_keys, edge_vals, node_kind, node_code = _trie(zh_terms, self._term_kinds(zh_terms, code_of))
        ctab = _char_table(zh_terms)
        words = sorted(set(lex.polarity) | self.neg_en | set(EN_UNIT_WORDS))
        word_cps, word_off = _cps(words)
        word_keys, word_vals = kprof.build_word_table(word_cps, word_off)
        names = [cls + sign for cls, sign in pairs]
        hashed = [sign if class_free else cls + sign for cls, sign in pairs]  # what a fill hash reads
        cs_bytes = np.frombuffer("".join(hashed).encode("utf-8"), dtype=np.uint8).copy()
        cs_off = np.zeros(len(hashed) + 1, dtype=np.int64)
        np.cumsum([len(n.encode("utf-8")) for n in hashed], out=cs_off[1:])
        version = CLASS_FREE_SINCE if class_free else ONE_SIDED_SINCE
        cw_cps, cw_off = _cps([self._class_word(cls, version) for cls, _ in pairs])
        return KernelTables(
            ctab=ctab, edge_keys=edge_keys, edge_vals=edge_vals, node_kind=node_kind, node_code=node_code,
            word_keys=word_keys, word_vals=word_vals, word_cps=word_cps, word_off=word_off,
            word_neg=np.array([w in self.neg_en for w in words], dtype=np.bool_),
            word_unit=np.array([w in EN_UNIT_WORDS for w in words], dtype=np.bool_),
            word_pol=np.array([code_of[lex.polarity[w]] if w in lex.polarity else -1 for w in words], dtype=np.int32),
            digit_keys=any(w.isascii() and w[0].isdigit() for w in lex.polarity),
            cs_bytes=cs_bytes, cs_off=cs_off,
            aux=np.array([n.lstrip("N ").startswith("auxiliary") for n in names], dtype=np.bool_),
            zh_marks=np.array([ord(self._mark(cls, version)) for cls, _ in pairs], dtype=np.uint32),
            cw_cps=cw_cps, cw_off=cw_off,
        )

    # ----------------------------------------------------------------------------- the kernel
    def profile_batch(self, texts: Sequence[str], langs: Sequence[str],
                      version: int = PROFILE_VERSION, names: NameEntries | None = None,
                      slots: Sequence[NameSlots | None] | None = None) -> list[Profile]:
        """The profiles of a window (``langs[i]`` "zh" reads ``texts[i]`` as Chinese, anything
        else as English), each with its record already encoded; equal to :meth:`profile`.
        ``version`` 2 or 3 makes them the way those records were made (v2: one context over both
        sides; v3: one per side, classes in contexts and fills, the first of two negators alone).
        ``names``: the window's name entries (:mod:`neardup.text.entities`), joined to the profiles
        of v6 and later; ``slots``: each text's tokens as places of other texts' names
        (:class:`neardup.text.entities.NameSlots`), kept on the profiles of v6 and later."""
        if version not in codec.VERSIONS:
            raise ValueError(f"profiles are made as v{codec.VERSIONS[0]}-v{codec.VERSIONS[-1]}, not v{version}")
        if len(texts) != len(langs):
            raise ValueError(f"{len(texts)} texts but {len(langs)} languages")
        if not texts:
            return []
        t = self.tables if version >= CLASS_FREE_SINCE else self.classed_tables
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(x) for x in texts], out=offsets[1:])
        cps = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint32)
        is_zh = np.array([lang == "zh" for lang in langs], dtype=np.bool_)
        entries, positions, kinds, codes, negs, fig_a, fig_b, fig_u, doc_off = kprof.profile_batch(
            cps, offsets, is_zh, t.ctab, t.edge_keys, t.edge_vals, t.node_kind, t.node_code, t.word_keys,
            t.word_vals, t.word_cps, t.word_off, t.word_neg, t.word_pol, t.digit_keys, t.cs_bytes, t.cs_off, t.aux,
            t.zh_marks, ord(FIGURE_MARK), t.cw_cps, t.cw_off, ZH_CONTEXT, EN_CONTEXT, HASH_BITS - self.context_bits,
            version >= ONE_SIDED_SINCE, version >= CLASS_FREE_SINCE, ZH_SENTENCE, EN_SENTENCE,
            version >= AFFIX_SINCE, version >= FIGURE_VALUES_SINCE, version >= IDENTIFIERS_SINCE,
            FIGURE_RUN_LONGEST if version >= FIGURE_RUNS_SINCE else 0, version >= SENTENCE_SIDES_SINCE,
            version >= UNIT_TAILS_SINCE, *(self.units if version >= FIGURE_UNITS_SINCE else self.no_units),
            t.word_unit, EN_UNIT_RUN if version >= FIGURE_UNITS_SINCE else 0, version >= UNIT_FILLS_SINCE,
            version >= COUNTED_NUMERALS_SINCE)
        if version >= FIGURE_TWINS_SINCE:
            entries, positions, kinds, codes, negs, fig_a, fig_b, fig_u, doc_off = _join_figure_twins(
                texts, self.context_bits, version, entries, positions, kinds, codes, negs, fig_a, fig_b, fig_u, doc_off)
        if names is not None and version < WEAK_NAMES_SINCE:
            names = names.without(np.uint64(kprof.WEAK_NAME_BYTE)).without(np.uint64(kprof.NAME_TWIN_BYTE))
        if names is not None and version >= NAMES_SINCE and len(names.entries):
            entries, positions, kinds, codes, negs, fig_a, fig_b, fig_u, doc_off = _join_names(
                names, entries, positions, kinds, codes, negs, fig_a, fig_b, fig_u, doc_off)
        data, data_off = codec.encode_batch(entries, doc_off, self.context_bits, NO_FIGURE, version)
        raw = data.tobytes()
        bounds = doc_off.tolist()
        byte_bounds = data_off.tolist()
        sentences = _window_sentences(entries, positions, kinds, fig_b, doc_off)
        out = []
        for d, text in enumerate(texts):
            a, b = bounds[d], bounds[d + 1]
            fills = KernelFills(kinds[a:b], codes[a:b], negs[a:b], (fig_a[a:b], fig_b[a:b], fig_u[a:b]), self.names,
                                text, version >= FIGURE_VALUES_SINCE)
            slot = slots[d] if slots is not None and version >= NAMES_SINCE else None
            out.append(Profile(entries[a:b], fills, positions[a:b], text, raw[byte_bounds[d] : byte_bounds[d + 1]],
                               self.context_bits, version, self._remade(text, langs[d], version, names, d, slot),
                               _sentences=sentences[d], name_slots=slot))
        return out

    def _remade(self, text: str, lang: str, version: int, names: NameEntries | None, d: int,
                slots: NameSlots | None) -> Callable[[int], Profile] | None:
        """How to make ``text``'s profile of an older version (compared with records of it), with
        its names (document ``d``'s of ``names``) where that version has them. An English text's
        names are read the v14 way for records of every version: v14 only adds names that start
        sentences, whose entries and their neighbours' changed contexts pair with nothing of an
        older record (a reprint still merges with a v13 record, tests/unit/test_engine.py)."""
        if version <= codec.VERSIONS[0]:
            return None

        def remade(older: int) -> Profile:
            own = names.document(d) if names is not None else None
            slot = slots
            if own is not None and slots is not None and older < SECOND_LETTERS_SINCE:
                own, slot = slots.as_version(own, older)
            return self.profile_batch([text], [lang], version=older, names=own, slots=[slot])[0]

        return remade

    # ----------------------------------------------------------------------------- the reference
    def _zh(self, text: str, version: int = PROFILE_VERSION) -> tuple[str, list[tuple[int, str, int]], _SentenceRun]:
        """Frame string (one character a unit), anchors (frame offset, fill, text offset) and
        sentences (``found``: frame start, frame end, negators, text offset; ``starts``)."""
        pieces: list[str] = []
        anchors: list[tuple[int, str, int]] = []
        sentences = _SentenceRun(ZH_SENTENCE)
        length = 0
        pos = 0
        negated_at = -1  # frame length when the last negator ended
        run = 0  # negators in a row ending there (v4 counts them)
        counted = version >= CLASS_FREE_SINCE
        polarity = self.polarity
        zh_re = (self.zh_re_v19 if version >= COUNTED_NUMERALS_SINCE else self.zh_re_v18 if version >= UNIT_FILLS_SINCE
                 else self.zh_re_v8 if version >= IDENTIFIERS_SINCE
                 else self.zh_re_v7 if version >= FIGURE_VALUES_SINCE
                 else self.zh_re if counted else self.zh_re_v3)

        def gap(a: int, b: int) -> int:
            """Frame length after the text between tokens, closing a sentence at each end mark."""
            n = length
            for piece in SENTENCE_PIECE.finditer(text, a, b):
                if piece.group(1) is None:
                    kept = NON_ALNUM.sub("", piece.group())
                    pieces.append(kept)
                    n += len(kept)
                else:
                    sentences.close(n, piece.end())
            return n

        while (m := zh_re.search(text, pos)) is not None:
            length = gap(pos, m.start())
            pos = m.end()
            tok = m.group()
            if tok in self.aff_zh:
                continue  # 给予 批准 reads as 批准: out of the frame, nothing in the fill
            neg = run if negated_at == length else 0
            if tok in self.neg_zh:
                sentences.negators += 1
                if neg and not counted:  # v1-v3: two negators in a row, the first stands alone
                    anchors.append((length, "N", m.start()))
                run = neg + 1 if counted else 1
                negated_at = length
                continue
            negated_at = -1
            hit = polarity.get(tok)
            if hit is not None:
                anchors.append((length, "N " * neg + hit[0] + hit[1], m.start()))
                pieces.append(self._mark(hit[0], version))
            else:
                unit = self._unit_end(text, pos, zh_re, version) if version >= FIGURE_UNITS_SINCE else pos
                if not (counted and _article_number(text, m.start(), m.end())):
                    figure = figure_fill(tok, version >= FIGURE_VALUES_SINCE)
                    written = unit_key(text[pos:unit]) if version >= UNIT_FILLS_SINCE else ""
                    anchors.append((length, ("N " if neg else "") + figure + written, m.start()))
                pieces.append(FIGURE_MARK)
                pos = unit
            length += 1
        length = gap(pos, len(text))
        sentences.close(length, len(text))
        return "".join(pieces), anchors, sentences

    def _unit_end(self, text: str, at: int, zh_re: re.Pattern[str], version: int) -> int:
        """Where the unit written at ``at``, right after a figure, ends (v17; ``at`` where none is):
        the longest of :func:`zh_unit_words`, not past the start of a token. Since v18 a run of
        numerals is no such start (1.5万亿, 5千万元: a magnitude, not another figure)."""
        end = at
        while end < min(len(text), at + kprof.UNIT_LONGEST):
            token = zh_re.match(text, end)
            if token and not (version >= UNIT_FILLS_SINCE and self._numeral_run(token.group())):
                break
            end += 1
        return _past_units(text, at, end)

    def _numeral_run(self, token: str) -> bool:
        """Whether a Chinese token is a run of numerals, not a term (一律) or digits."""
        return (token[0] in NUMERAL_VALUES and token not in self.polarity and token not in self.neg_zh
                and token not in self.aff_zh)

    def _en(self, text: str, version: int = PROFILE_VERSION) -> tuple[list[str], list[tuple[int, str, int]],
                                                                     _SentenceRun, set[int]]:
        """Units, anchors, sentences, and the units that are do-support (a do, does or did that a
        negator follows: "do not like" negates "like"), which sentence frames leave out."""
        reader = _EnReader(self, version, text)
        pos = 0
        for m in _en_words(version).finditer(text):
            for end in SENTENCE_END.finditer(text, pos, m.start()):
                reader.sentences.close(len(reader.units), end.end())
                reader.units_after = 0
            pos = m.end()
            raw = m.group()
            words = EN_CONTRACTIONS.get(raw)
            if words is None:
                words = [raw[:-3], "not"] if raw.endswith("n't") and len(raw) > 3 else [raw]
            for w in words:
                reader.word(w, m.start())
        for end in SENTENCE_END.finditer(text, pos):
            reader.sentences.close(len(reader.units), end.end())
        reader.sentences.close(len(reader.units), len(text))
        return reader.units, reader.anchors, reader.sentences, reader.support

    def profile(self, text: str, lang: str, version: int = PROFILE_VERSION) -> Profile:
        """The profile of one text, in plain Python: the reference :meth:`profile_batch` is tested against."""
        # units[a:b] as context text: characters (Chinese) or words joined by spaces
        support: set[int] = set()
        if lang == "zh":
            units, found, read = self._zh(text, version)
            k = ZH_CONTEXT
            sep = ""
        else:
            units, found, read, support = self._en(text, version)  # type: ignore[assignment]
            k = EN_CONTEXT
            sep = " "
        sentences = read.found
        contexts = _anchor_contexts(units, found, _Framing(k, sep, FIGURE_MARK if lang == "zh" else "#"), version,
                                    read.starts)
        if version >= CLASS_FREE_SINCE:
            most = kprof.MAX_SENTENCE_NEGATORS
            contexts += [(SENTENCE_MARK + sep.join(units[u] for u in range(a, b) if u not in support),
                          SENTENCE_FILL + str(min(n, most)), at, (0, 0)) for a, b, n, at in sentences]
        shift = HASH_BITS - self.context_bits
        hashed = class_free if version >= CLASS_FREE_SINCE else str
        keys = np.fromiter(((in_figure_run(_context_hash(c), *run, k) >> shift << 16) | fill_hash(hashed(f))
                            for c, f, _, run in contexts), dtype=np.uint64, count=len(contexts))
        fills = [c[1] for c in contexts]
        offsets = [c[2] for c in contexts]
        if version >= FIGURE_TWINS_SINCE:
            figures = [j for j, f in enumerate(fills) if _is_figure_fill(f)]
            keys = np.concatenate([keys, figure_twins(keys[figures], [fills[j] for j in figures], self.context_bits,
                                                      version >= UNIT_FILLS_SINCE)])
            fills += [fills[j] for j in figures]
            offsets += [offsets[j] for j in figures]
        order = np.argsort(keys, kind="stable").tolist()
        older = (lambda v: self.profile(text, lang, version=v)) if version > codec.VERSIONS[0] else None
        return Profile(keys[order], [fills[j] for j in order], [offsets[j] for j in order], text,
                       bits=self.context_bits, version=version, remade=older)


@dataclass(frozen=True, slots=True)
class _Framing:
    """How the reference writes a context: ``k`` units each side, joined by ``sep``; ``figure``:
    a figure's unit."""

    k: int
    sep: str
    figure: str


@lru_cache(maxsize=1)
def zh_unit_words() -> tuple[str, ...]:
    """Every unit a Chinese figure may be written with (v17): a magnitude, then about, then a unit,
    any of them left out but not all (万, 万余人, 亿元, 个百分点)."""
    words = {m + a + u for m in ("", *ZH_MAGNITUDES) for a in ("", *ZH_ABOUT) for u in ("", *ZH_UNITS)}
    words.discard("")
    assert max(map(len, words)) <= kprof.UNIT_LONGEST
    return tuple(sorted(words, key=lambda w: (-len(w), w)))


def _past_units(text: str, start: int, end: int) -> int:
    """Where the frame goes on after a figure that ends at ``start`` (v17): past the longest unit
    (:func:`zh_unit_words`) written right after it, not past ``end`` (the next token)."""
    unit = _zh_unit_pattern().match(text, start, end)
    return unit.end() if unit else start


@lru_cache(maxsize=1)
def _zh_unit_pattern() -> re.Pattern[str]:
    """:func:`zh_unit_words` as one pattern, the longest first (what a match takes)."""
    return re.compile("|".join(map(re.escape, zh_unit_words())))


# (context, fill, text offset, figures in a row up to and from the anchor: a figure's place in its run)
_Context = tuple[str, str, int, tuple[int, int]]


def _anchor_contexts(units: Sequence[str], found: list[tuple[int, str, int]], framing: _Framing, version: int,
                     starts: set[int]) -> list[_Context]:
    """The reference's contexts of the anchors ``found`` (unit, fill, text offset) among ``units``;
    ``starts``: the units a sentence starts at (v12: no one-sided entry across a sentence's edge)."""
    k, sep = framing.k, framing.sep
    one_sided = version >= ONE_SIDED_SINCE
    runs = version >= FIGURE_RUNS_SINCE
    edges = starts if version >= SENTENCE_SIDES_SINCE else set()
    last = len(units) if edges else -1
    contexts: list[_Context] = []
    for i, fill, at in found:
        if one_sided and not _figure_or_bare(fill):
            # each side with the anchor's own unit (its class mark): one class's context
            if i not in edges:
                contexts.append((sep.join(units[max(0, i - k) : i + 1]) + "<", fill, at, (0, 0)))
            if i + 1 != last and i + 1 not in edges:
                contexts.append((">" + sep.join(units[i : i + 1 + k]), fill, at, (0, 0)))
        else:
            after = units[i : i + k] if fill == "N" else units[i + 1 : i + 1 + k]
            run = _figures_around(units, i, framing.figure) if runs and _is_figure_fill(fill) else (0, 0)
            contexts.append((sep.join(units[max(0, i - k) : i]) + "|" + sep.join(after), fill, at, run))
    return contexts


class _EnReader:
    """The English reference's state while it reads a text word by word (:meth:`AnchorProfiler._en`)."""

    def __init__(self, profiler: AnchorProfiler, version: int, text: str) -> None:
        self.profiler = profiler
        self.text = text
        self.version = version
        self.units: list[str] = []
        self.anchors: list[tuple[int, str, int]] = []
        self.sentences = _SentenceRun(EN_SENTENCE)
        self.support: set[int] = set()
        self.last_do = False
        self.pending_neg = False
        self.units_after = 0  # unit words that may still follow the last figure (v17)
        self.unit_end = 0  # where the last figure or its last unit word ends in the text (v18)
        self.currency = ""  # the letters of a currency before its $, right before a figure (v18: HK$6.31bn)

    def word(self, w: str, at: int) -> None:
        """Read the word ``w`` of the match at text offset ``at``."""
        if self.units_after and w in EN_UNIT_WORDS:  # the figure's unit (v17): 159 million
            self._unit_word(w, at)
            return
        self.units_after = 0
        if self._currency_before_figure(w, at):
            self.currency = w  # HK$, A$: the figure's, as its unit after it is
            return
        currency, self.currency = self.currency, ""
        if w in self.profiler.neg_en:
            self._negator()
            return
        polarity = self.profiler.polarity
        hit = polarity.get(w)
        cut = negative_prefix(w) if self.version >= AFFIX_SINCE and not w[0].isdigit() else 0
        if hit is None and cut and w[cut:] in polarity:  # disapproved: approved, negated
            hit = polarity[w[cut:]]
            self.pending_neg = True
            self.sentences.negators += 1
        neg = "N " if self.pending_neg else ""
        if hit is not None:
            self.anchors.append((len(self.units), neg + hit[0] + hit[1], at))
            self.units.append(self.profiler._class_word(hit[0], self.version))
        elif w[0].isdigit() or (self.version >= IDENTIFIERS_SINCE and any(c.isdigit() for c in w)):
            self.anchors.append((len(self.units), neg + figure_fill(currency + w), at))
            self.units.append("#")
            self.units_after = EN_UNIT_RUN if self.version >= FIGURE_UNITS_SINCE else 0
            self.unit_end = at + len(w)
        else:
            if self.pending_neg:
                self.anchors.append((len(self.units), "N", at))
            self.sentences.negators += 1 if cut else 0
            self.units.append(w[cut:])
        self.last_do = w in DO_SUPPORT
        self.pending_neg = False

    def _unit_word(self, w: str, at: int) -> None:
        """A unit word after the last figure (v17: out of the frame); v18 writes it into the
        figure's fill (159 million is not 159 billion) where nothing but spaces stands between."""
        self.units_after -= 1
        if self.version >= UNIT_FILLS_SINCE and not NON_ALNUM.sub("", self.text[self.unit_end : at]):
            unit, fill, where = self.anchors[-1]
            self.anchors[-1] = (unit, fill + unit_key(w), where)
            self.unit_end = at + len(w)

    def _currency_before_figure(self, w: str, at: int) -> bool:
        """Whether the word ``w`` at ``at`` is a currency's letters written before its $ and a
        figure (v18: HK$6.31bn, A$2.6bn): the figure's, out of the frame and in its fill."""
        end = at + len(w)
        return (self.version >= UNIT_FILLS_SINCE and not any(c.isdigit() for c in w)
                and self.text[end : end + 1] == "$" and self.text[end + 1 : end + 2].isdigit())

    def _negator(self) -> None:
        """A negator: it negates the auxiliary just read (was not), or the next word."""
        self.sentences.negators += 1
        if self.last_do:
            self.support.add(len(self.units) - 1)
        last = self.anchors[-1] if self.anchors else None
        if last is not None and last[0] == len(self.units) - 1 and last[1].lstrip("N ").startswith("auxiliary"):
            self.anchors[-1] = (last[0], "N " + last[1], last[2])  # was not, was not not
        else:
            self.pending_neg = True


ARTICLE_UNITS = "条章节款项编"  # 第十八条, 第三章, ...: what a law's numbered parts are called


def _article_number(text: str, start: int, end: int) -> bool:
    """Whether the figure text[start:end] numbers a law's part (第十八条): v4 makes it no anchor.
    A reordered or deleted article puts another number before the same words (第十八条 / 第十九条
    放射性药品的…), which read as a changed figure; versions are told apart by their marks."""
    return text[start - 1 : start] == "第" and end < len(text) and text[end] in ARTICLE_UNITS


def negative_prefix(word: str) -> int:
    """Letters of a negative prefix on an English word (v5): un, in, im, il, ir before a stem of
    at least four letters, dis or non before one of at least four; else 0."""
    if len(word) >= 6 and (word[:2] == "un" or (word[0] == "i" and word[1] in "nmlr")):
        return 2
    if len(word) >= 7 and word[:3] in ("dis", "non"):
        return 3
    return 0


def is_sentence_fill(fill: str) -> bool:
    """Whether ``fill`` is a sentence's ("S0" ... "S9")."""
    return len(fill) == 2 and fill[0] == SENTENCE_FILL and fill[1].isdigit()


# a sentence fill's hash -> its count, to name the other side of a sentence's difference
def describe_polarity(fill: str) -> str:
    """A polarity fill in words: its class and sign (+: the affirming word of a pair, 批准, rose;
    -: the other, 驳回, fell) and how often a negator governs it ("N approval+" -> "approval+,
    negated")."""
    negations = 0
    while fill.startswith("N "):
        fill, negations = fill[2:], negations + 1
    said = {0: "not negated", 1: "negated"}.get(negations, f"negated {negations} times")
    return f"{fill}, {said}" if fill else said


# a polarity fill hash (class-free, as profiles of v4 and later hash them) -> its words
POLARITY_OF = {fill_hash("N " * n + sign): describe_polarity("N " * n + sign)
               for n in range(kprof.MAX_SENTENCE_NEGATORS + 1) for sign in "+-"}


@lru_cache(maxsize=1)
def _quoted_words() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The bundled lexicon's polarity words and the words that govern them (negators; 给予,
    准予: affirmators), longest first (what a quote looks for)."""
    lex = load_lexicon()
    by_length = lambda words: tuple(sorted(set(words), key=len, reverse=True))  # noqa: E731
    return by_length(lex.polarity), by_length((*lex.negators_zh, *lex.affirmators_zh, *lex.negators_en))


EN_TOKEN = re.compile(r"[a-z0-9']+")


def polarity_words(text: str, at: int) -> str:
    """The polarity word at ``at`` of a profiled text with the negators that govern it, as the
    text writes them (不予批准; was not; never approved): what a reader looks for in the passage."""
    polar, negators = _quoted_words()
    if at < len(text) and unicodedata.category(text[at]) == "Lo":  # Chinese: negators stand before the word
        word = next((w for w in polar if text.startswith(w, at)), text[at : at + 2])
        start = at
        while (neg := next((n for n in negators if text.endswith(n, 0, start)), "")):
            start -= len(neg)
        return text[start : at + len(word)]
    tokens = list(EN_TOKEN.finditer(text))
    k = next((j for j, m in enumerate(tokens) if m.start() <= at < m.end()), -1)
    if k < 0:
        return ""
    lo, hi = k, k
    if k > 0 and tokens[k - 1].group() in negators:
        lo = k - 1
    if k + 1 < len(tokens) and tokens[k + 1].group() in negators:
        hi = k + 1
    return text[tokens[lo].start() : tokens[hi].end()]


def sentence_contexts_of(entries: npt.NDArray[np.uint64]) -> set[int]:
    """The sentence contexts among a stored profile's entries (v4 and later; none before), told by
    their fill hashes alone: an anchor whose 16-bit fill equals a sentence count's comes along,
    which is harmless where the set is asked whether it holds a sentence (contexts of anchors and
    of sentences are hashes of different strings)."""
    is_sentence = _SENTENCE_FILL_TABLE[(entries & np.uint64(0xFFFF)).astype(np.intp)]
    return set((entries[is_sentence] >> np.uint64(16)).tolist())


SENTENCE_COUNT_OF = {fill_hash(f"{SENTENCE_FILL}{n}"): str(n) for n in range(kprof.MAX_SENTENCE_NEGATORS + 1)}
_SENTENCE_FILL_TABLE = np.zeros(1 << 16, dtype=np.bool_)  # fill -> whether it is a sentence's (a lookup, not a search)
_SENTENCE_FILL_TABLE[sorted(SENTENCE_COUNT_OF)] = True


def _is_figure_fill(fill: str) -> bool:
    """Whether a fill is a figure's ("#12", "N #12")."""
    return fill.lstrip("N ").startswith("#")


def _figure_or_bare(fill: str) -> bool:
    """Whether a fill is a figure's ("#12", "N #12") or a lone negator's ("N"): one context over both sides."""
    return fill == "N" or _is_figure_fill(fill)


@lru_cache(maxsize=4)
def profiler(lexicon_path: str | None = None) -> AnchorProfiler:
    """The profiler of the lexicon at ``lexicon_path`` (default: the bundled one), built once."""
    return AnchorProfiler(load_lexicon(lexicon_path))
