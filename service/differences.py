"""Critical differences: two near-identical texts that say opposite things.

Each text is cut into clauses. In a clause, polarity words (批准/驳回, rose/fell, 可以/不得 ...)
are replaced by their class, negators are removed, and figures are replaced by a placeholder;
what was taken out, in order, is the clause's *fill*, what is left is its *frame*. Two documents
whose clauses share a frame but not a fill reversed a decision, flipped a negation or changed a
figure: that pair is not a duplicate, whatever the similarity says. Clauses that only one
document has (added boilerplate, deleted sentences, synonym edits) change frames, not fills, and
are ignored.

A stored document keeps only its clauses with a non-empty fill (the others cannot be reversed
without a polarity word, negator or figure at that place), packed as the profile byte format v1:
b"NP" + version (1 B) + count (2 B) + count x (frame hash uint32, fill hash uint16), big-endian;
the fill hash is 8 bits of the polarity items (negators, polarity classes) then 8 bits of the
figures, so the kind of a difference can be named from the hashes alone.
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

CLAUSE_SPLIT = re.compile(r"[,.!?;:\"()\[\]<>\n|/~·]+")
ZH_MIN_FRAME = 6
EN_MIN_FRAME = 4
EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
EN_CONTRACTIONS = {"can't": ["can", "not"], "cannot": ["can", "not"], "won't": ["will", "not"],
                   "shan't": ["shall", "not"]}


@dataclass(frozen=True, slots=True)
class Clause:
    frame: str
    fill: tuple[str, ...]
    text: str


@dataclass(frozen=True, slots=True)
class CriticalDifference:
    kind: str  # "polarity" | "figure"
    clause: str  # the clause of the document being decided
    fill: tuple[str, ...]

    def as_evidence(self) -> dict[str, object]:
        return {"kind": self.kind, "clause": self.clause[:200], "terms": list(self.fill)}


class ClauseProfiler:
    def __init__(self, lexicon: Lexicon | None = None) -> None:
        lex = lexicon or load_lexicon()
        self.lexicon = lex
        zh_terms = sorted(
            {w for w in lex.polarity if not w.isascii()} | set(lex.negators_zh), key=len, reverse=True
        )
        # longest first: 不予批准 -> 不予 + 批准, 无效 stays one word
        self.zh_re = re.compile(
            "|".join(map(re.escape, zh_terms)) + r"|[0-9]+(?:\.[0-9]+)?%?|[零〇一二两三四五六七八九十百千万亿]{2,}"
        )
        self.en_neg = set(lex.negators_en)

    def _zh_clause(self, text: str) -> tuple[str, tuple[str, ...]]:
        frame: list[str] = []
        fill: list[str] = []
        pos = 0
        pol = self.lexicon.polarity
        for m in self.zh_re.finditer(text):
            frame.append(text[pos : m.start()])
            tok = m.group()
            if tok in pol:
                cls, sign = pol[tok]
                frame.append("\ue000" + cls[0])
                fill.append(cls + sign)
            elif tok[0].isdigit() or tok[0] in "零〇一二两三四五六七八九十百千万亿":
                frame.append("\ue001")
                fill.append("#" + tok)
            else:
                fill.append("N")  # negator: out of the frame, into the fill
            pos = m.end()
        frame.append(text[pos:])
        flat = "".join(ch for ch in "".join(frame) if ch.isalnum() or ch >= "\ue000")
        return flat, tuple(fill)

    def _en_clause(self, text: str) -> tuple[str, tuple[str, ...]]:
        frame: list[str] = []
        fill: list[str] = []
        pol = self.lexicon.polarity
        for raw in EN_WORD.findall(text):
            words = EN_CONTRACTIONS.get(raw)
            if words is None:
                words = [raw[:-3], "not"] if raw.endswith("n't") else [raw]
            for w in words:
                if w in self.en_neg:
                    fill.append("N")
                elif w in pol:
                    cls, sign = pol[w]
                    frame.append("<" + cls + ">")
                    fill.append(cls + sign)
                elif w[0].isdigit():
                    frame.append("#")
                    fill.append("#" + w)
                else:
                    frame.append(w)
        return " ".join(frame), tuple(fill)

    def clauses(self, text: str, lang: str) -> list[Clause]:
        zh = lang == "zh"
        make = self._zh_clause if zh else self._en_clause
        out: list[Clause] = []
        pend_frame: list[str] = []
        pend_fill: list[str] = []
        pend_text: list[str] = []
        for part in CLAUSE_SPLIT.split(text):
            if not part.strip():
                continue
            frame, fill = make(part)
            pend_frame.append(frame)
            pend_fill.extend(fill)
            pend_text.append(part)
            joined = ("" if zh else " ").join(f for f in pend_frame if f)
            size = len(joined) if zh else joined.count(" ") + 1
            if size >= (ZH_MIN_FRAME if zh else EN_MIN_FRAME):
                out.append(Clause(joined, tuple(pend_fill), ",".join(pend_text)))
                pend_frame, pend_fill, pend_text = [], [], []
        if pend_frame:
            joined = ("" if zh else " ").join(f for f in pend_frame if f)
            if joined:
                out.append(Clause(joined, tuple(pend_fill), ",".join(pend_text)))
        return out


def _frame_hash(frame: str) -> int:
    return mmh3.hash(frame, 0x0F4A, signed=False)


def _fill_hash(clause: Clause) -> int:
    polarity = "\x1f".join(x for x in clause.fill if not x.startswith("#"))
    figures = "\x1f".join(x for x in clause.fill if x.startswith("#"))
    return (mmh3.hash(polarity, 0x0F11, signed=False) & 0xFF) << 8 | (mmh3.hash(figures, 0x0F12, signed=False) & 0xFF)


def encode_profile(clauses: list[Clause]) -> bytes:
    # repeats are kept: a clause that occurs twice and is reversed once is still told apart
    entries = sorted((_frame_hash(c.frame), _fill_hash(c)) for c in clauses if c.fill)
    entries = entries[:0xFFFF]
    return HEAD.pack(PROFILE_MAGIC, PROFILE_VERSION, len(entries)) + b"".join(ENTRY.pack(*e) for e in entries)


def decode_profile(data: bytes) -> dict[int, Counter[int]]:
    """frame hash -> fill hashes (with repeats) of the stored clauses."""
    magic, version, count = HEAD.unpack_from(data)
    if magic != PROFILE_MAGIC or version != PROFILE_VERSION:
        raise ValueError("not a neardup v1 clause profile")
    out: dict[int, Counter[int]] = {}
    for i in range(count):
        frame, fill = ENTRY.unpack_from(data, HEAD.size + i * ENTRY.size)
        out.setdefault(frame, Counter())[fill] += 1
    return out


@dataclass(slots=True)
class ClauseIndex:
    """All clauses of the document being decided, keyed by frame hash."""

    by_frame: dict[int, list[tuple[int, Clause]]]

    @classmethod
    def build(cls, clauses: list[Clause]) -> ClauseIndex:
        by_frame: dict[int, list[tuple[int, Clause]]] = {}
        for c in clauses:
            by_frame.setdefault(_frame_hash(c.frame), []).append((_fill_hash(c), c))
        return cls(by_frame)

    def critical_against(self, stored: dict[int, Counter[int]]) -> CriticalDifference | None:
        """The first shared frame whose fills were *replaced*: each side has a fill the other
        lacks. One-sided surplus is a deleted or added occurrence, not a reversal."""
        for frame, fills in stored.items():
            mine = self.by_frame.get(frame)
            if not mine:
                continue
            my_fills = Counter(f for f, _ in mine)
            only_mine = my_fills - fills
            only_theirs = fills - my_fills
            if not only_mine or not only_theirs:
                continue
            fill_hash = next(iter(only_mine))
            clause = next(c for f, c in mine if f == fill_hash)
            theirs = next(iter(only_theirs))
            kind = "polarity" if (fill_hash >> 8) != (theirs >> 8) else "figure"
            return CriticalDifference(kind, clause.text, clause.fill)
        return None


@lru_cache(maxsize=4)
def profiler(lexicon_path: str | None = None) -> ClauseProfiler:
    return ClauseProfiler(load_lexicon(lexicon_path))
