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

Profile byte format v1 (what the store keeps): b"NP" + version (1 B) + count (2 B) + count x
(context hash uint32, fill hash uint16), big-endian, repeats kept. The fill hash is 8 bits of the
polarity part then 8 bits of the figure part, so the kind of a difference is known from hashes.
"""

from __future__ import annotations

import re
import struct
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import mmh3

from service.lexicon import Lexicon, load_lexicon

PROFILE_MAGIC = b"NP"
PROFILE_VERSION = 1
HEAD = struct.Struct(">2sBH")
ENTRY = struct.Struct(">IH")
MAX_ENTRIES = 0xFFFF

ZH_CONTEXT = 5  # characters each side
EN_CONTEXT = 3  # words each side
ZH_NUMERALS = "零〇一二两三四五六七八九十百千万亿"
NON_ALNUM = re.compile(r"[\W_]+")
EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?(?:\.[0-9]+)?%?")
EN_CONTRACTIONS = {"can't": ["can", "not"], "cannot": ["can", "not"], "won't": ["will", "not"],
                   "shan't": ["shall", "not"]}
PLACEHOLDER = "\ue000"


@dataclass(frozen=True, slots=True)
class Anchor:
    context: str
    fill: str  # "approval+", "N approval+", "#3.5%", "N" (a lone negator)
    text: str  # the words around it, for evidence

    @property
    def is_figure(self) -> bool:
        return self.fill.startswith("#")


@dataclass(frozen=True, slots=True)
class CriticalDifference:
    kind: str  # "polarity" | "figure"
    text: str  # the passage of the document being decided
    fill: str
    other_fill_differs: bool = True

    def as_evidence(self) -> dict[str, object]:
        return {"kind": self.kind, "passage": self.text[:200], "term": self.fill}


class AnchorProfiler:
    def __init__(self, lexicon: Lexicon | None = None) -> None:
        lex = lexicon or load_lexicon()
        self.lexicon = lex
        self.polarity = lex.polarity
        self.neg_zh = set(lex.negators_zh)
        self.neg_en = set(lex.negators_en)
        self.aff_zh = set(lex.affirmators_zh)
        zh_terms = sorted({w for w in lex.polarity if not w.isascii()} | self.neg_zh | self.aff_zh,
                          key=len, reverse=True)
        # longest first: 不予批准 -> 不予 + 批准, 无效 stays one word
        self.zh_re = re.compile(
            "|".join(map(re.escape, zh_terms)) + rf"|[0-9]+(?:\.[0-9]+)?%?|[{ZH_NUMERALS}]{{2,}}"
        )
        self.class_mark = {cls: PLACEHOLDER + cls[:3] for cls, _ in lex.polarity.values()}

    # one pass: frame units (letters or words) with anchors as placeholders
    def _zh_units(self, text: str) -> tuple[list[str], list[tuple[int, str, int]]]:
        units: list[str] = []
        anchors: list[tuple[int, str, int]] = []  # (unit index, fill, text position)
        pos = 0
        negated_at = -1  # units length when the last negator ended
        for m in self.zh_re.finditer(text):
            seg = NON_ALNUM.sub("", text[pos : m.start()])
            units.extend(seg)
            tok = m.group()
            neg = negated_at == len(units)
            if tok in self.aff_zh:
                pos = m.end()  # 给予 批准 reads as 批准: out of the frame, nothing in the fill
                continue
            if tok in self.neg_zh:
                negated_at = len(units)
                if neg:  # two negators in a row: keep the first as a lone anchor
                    anchors.append((len(units), "N", m.start()))
                pos = m.end()
                continue
            if neg:
                negated_at = -1
            if tok in self.polarity:
                cls, sign = self.polarity[tok]
                anchors.append((len(units), ("N " if neg else "") + cls + sign, m.start()))
                units.append(self.class_mark[cls])
            else:
                anchors.append((len(units), ("N " if neg else "") + "#" + tok, m.start()))
                units.append(PLACEHOLDER + "#")
            pos = m.end()
        units.extend(NON_ALNUM.sub("", text[pos:]))
        return units, anchors

    def _en_units(self, text: str) -> tuple[list[str], list[tuple[int, str, int]]]:
        units: list[str] = []
        anchors: list[tuple[int, str, int]] = []
        pending_neg = False
        for m in EN_WORD.finditer(text):
            raw = m.group()
            words = EN_CONTRACTIONS.get(raw)
            if words is None:
                words = [raw[:-3], "not"] if raw.endswith("n't") and len(raw) > 3 else [raw]
            for w in words:
                if w in self.neg_en:
                    last = anchors[-1] if anchors else None
                    if last is not None and last[0] == len(units) - 1 and last[1].startswith("auxiliary"):
                        anchors[-1] = (last[0], "N " + last[1], last[2])  # was not, will not
                    else:
                        pending_neg = True
                    continue
                if w in self.polarity:
                    cls, sign = self.polarity[w]
                    anchors.append((len(units), ("N " if pending_neg else "") + cls + sign, m.start()))
                    units.append(self.class_mark[cls])
                elif w[0].isdigit():
                    anchors.append((len(units), ("N " if pending_neg else "") + "#" + w, m.start()))
                    units.append(PLACEHOLDER + "#")
                else:
                    if pending_neg:
                        anchors.append((len(units), "N", m.start()))
                    units.append(w)
                pending_neg = False
        return units, anchors

    def anchors(self, text: str, lang: str) -> list[Anchor]:
        zh = lang == "zh"
        units, found = self._zh_units(text) if zh else self._en_units(text)
        k = ZH_CONTEXT if zh else EN_CONTEXT
        sep = "" if zh else " "
        out: list[Anchor] = []
        for idx, fill, at in found:
            lone = fill == "N"
            left = units[max(0, idx - k) : idx]
            right = units[idx + (0 if lone else 1) : idx + (0 if lone else 1) + k]
            context = sep.join(left) + "|" + sep.join(right)
            out.append(Anchor(context, fill, text[max(0, at - 12) : at + 16]))
        return out


def _context_hash(context: str) -> int:
    return mmh3.hash(context, 0x0F4A, signed=False)


def _fill_hash(anchor: Anchor) -> int:
    polarity, figure = ("", anchor.fill) if anchor.is_figure else (anchor.fill, "")
    if anchor.fill.startswith("N #"):
        polarity, figure = "N", anchor.fill[2:]
    return (mmh3.hash(polarity, 0x0F11, signed=False) & 0xFF) << 8 | (mmh3.hash(figure, 0x0F12, signed=False) & 0xFF)


def encode_profile(anchors: list[Anchor]) -> bytes:
    entries = sorted((_context_hash(a.context), _fill_hash(a)) for a in anchors)[:MAX_ENTRIES]
    return HEAD.pack(PROFILE_MAGIC, PROFILE_VERSION, len(entries)) + b"".join(ENTRY.pack(*e) for e in entries)


def decode_profile(data: bytes) -> dict[int, Counter[int]]:
    """context hash -> fill hashes (with repeats) of a stored document."""
    magic, version, count = HEAD.unpack_from(data)
    if magic != PROFILE_MAGIC or version != PROFILE_VERSION:
        raise ValueError("not a neardup v1 critical-difference profile")
    out: dict[int, Counter[int]] = {}
    for i in range(count):
        context, fill = ENTRY.unpack_from(data, HEAD.size + i * ENTRY.size)
        out.setdefault(context, Counter())[fill] += 1
    return out


@dataclass(slots=True)
class AnchorIndex:
    """All anchors of the document being decided, by context hash."""

    by_context: dict[int, list[tuple[int, Anchor]]]

    @classmethod
    def build(cls, anchors: list[Anchor]) -> AnchorIndex:
        by_context: dict[int, list[tuple[int, Anchor]]] = {}
        for a in anchors:
            by_context.setdefault(_context_hash(a.context), []).append((_fill_hash(a), a))
        return cls(by_context)

    def critical_against(self, stored: dict[int, Counter[int]]) -> CriticalDifference | None:
        """The first shared context whose fills were replaced (each side has one the other lacks)."""
        for context, fills in stored.items():
            mine = self.by_context.get(context)
            if not mine:
                continue
            my_fills = Counter(f for f, _ in mine)
            only_mine = my_fills - fills
            only_theirs = fills - my_fills
            if not only_mine or not only_theirs:
                continue
            fill_hash = next(iter(only_mine))
            anchor = next(a for f, a in mine if f == fill_hash)
            theirs = next(iter(only_theirs))
            kind = "polarity" if (fill_hash >> 8) != (theirs >> 8) else "figure"
            return CriticalDifference(kind, anchor.text, anchor.fill)
        return None


@lru_cache(maxsize=4)
def profiler(lexicon_path: str | None = None) -> AnchorProfiler:
    return AnchorProfiler(load_lexicon(lexicon_path))
