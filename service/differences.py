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
(context hash uint32, fill hash uint16), big-endian, sorted, repeats kept. The fill hash is 8 bits
of the polarity part then 8 bits of the figure part, so the kind of a difference is known from
the hashes alone.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from functools import lru_cache

import mmh3
import numpy as np
import numpy.typing as npt

from neardup.kernels.profile import replaced_context
from neardup.lexicon import Lexicon, load_lexicon

PROFILE_MAGIC = b"NP"
PROFILE_VERSION = 1
HEAD = struct.Struct(">2sBH")
ENTRY_DTYPE = np.dtype([("context", ">u4"), ("fill", ">u2")])
MAX_ENTRIES = 0xFFFF

ZH_CONTEXT = 5  # characters each side
EN_CONTEXT = 3  # words each side
ZH_NUMERALS = "零〇一二两三四五六七八九十百千万亿"
NON_ALNUM = re.compile(r"[\W_]+")
EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?(?:\.[0-9]+)?%?")
EN_CONTRACTIONS = {"can't": ["can", "not"], "cannot": ["can", "not"], "won't": ["will", "not"],
                   "shan't": ["shall", "not"]}
FIGURE_MARK = "\ue0fe"


@dataclass(frozen=True, slots=True)
class CriticalDifference:
    kind: str  # "polarity" | "figure"
    text: str  # the passage of the document being decided
    fill: str

    def as_evidence(self) -> dict[str, object]:
        return {"kind": self.kind, "passage": self.text[:200], "term": self.fill}


@lru_cache(maxsize=65536)
def fill_hash(fill: str) -> int:
    """8 bits of the polarity part (class, sign, negation), 8 bits of the figure."""
    if fill.startswith("N #"):
        polarity, figure = "N", fill[2:]
    elif fill.startswith("#"):
        polarity, figure = "", fill
    else:
        polarity, figure = fill, ""
    return (mmh3.hash(polarity, 0x0F11, signed=False) & 0xFF) << 8 | (mmh3.hash(figure, 0x0F12, signed=False) & 0xFF)


def _context_hash(context: str) -> int:
    return mmh3.hash(context, 0x0F4A, signed=False)


@dataclass(slots=True)
class Profile:
    """The anchors of one document: sorted entries plus, for evidence, where each came from."""

    entries: npt.NDArray[np.uint64]  # sorted (context << 16 | fill)
    fills: list[str]  # in entry order
    positions: list[int]  # text offsets, in entry order
    text: str

    def encode(self) -> bytes:
        n = min(len(self.entries), MAX_ENTRIES)
        packed = np.empty(n, dtype=ENTRY_DTYPE)
        packed["context"] = (self.entries[:n] >> np.uint64(16)).astype(np.uint32)
        packed["fill"] = (self.entries[:n] & np.uint64(0xFFFF)).astype(np.uint16)
        return HEAD.pack(PROFILE_MAGIC, PROFILE_VERSION, n) + packed.tobytes()

    def critical_against(self, theirs: npt.NDArray[np.uint64]) -> CriticalDifference | None:
        """The first shared context whose fills were replaced (each side has one the other lacks)."""
        if len(self.entries) == 0 or len(theirs) == 0:
            return None
        i = int(replaced_context(self.entries, theirs))
        if i < 0:
            return None
        mine = int(self.entries[i])
        ctx = mine >> 16
        lo, hi = np.searchsorted(theirs, [ctx << 16, (ctx << 16) | 0xFFFF], side="left")
        their_fills = {int(x) & 0xFFFF for x in theirs[lo : hi + 1] if int(x) >> 16 == ctx}
        other = next(iter(their_fills - {mine & 0xFFFF}), mine & 0xFFFF)
        kind = "polarity" if (mine >> 8 & 0xFF) != (other >> 8 & 0xFF) else "figure"
        at = self.positions[i]
        return CriticalDifference(kind, self.text[max(0, at - 12) : at + 16], self.fills[i])


def decode_profile(data: bytes) -> npt.NDArray[np.uint64]:
    """Sorted (context << 16 | fill) entries of a stored profile."""
    magic, version, count = HEAD.unpack_from(data)
    if magic != PROFILE_MAGIC or version != PROFILE_VERSION:
        raise ValueError("not a neardup v1 critical-difference profile")
    packed = np.frombuffer(data, dtype=ENTRY_DTYPE, count=count, offset=HEAD.size)
    out = (packed["context"].astype(np.uint64) << np.uint64(16)) | packed["fill"].astype(np.uint64)
    out.sort()
    return out


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
        # longest first: 不予批准 -> 不予 + 批准, 无效 stays one word. The lookahead on the first
        # characters lets the scan skip most positions at once (re tries every alternative otherwise)
        starts = "".join(sorted({w[0] for w in zh_terms})) + "0-9" + ZH_NUMERALS
        self.zh_re = re.compile(
            f"(?=[{starts}])(?:" + "|".join(map(re.escape, zh_terms))
            + rf"|[0-9]+(?:\.[0-9]+)?%?|[{ZH_NUMERALS}]{{2,}})"
        )
        classes = sorted({cls for cls, _ in lex.polarity.values()})
        self.class_mark = {cls: chr(0xE000 + i) for i, cls in enumerate(classes)}
        self.en_class_word = {cls: "<" + cls + ">" for cls in classes}

    def _zh(self, text: str) -> tuple[str, list[tuple[int, str, int]]]:
        """Frame string (one character a unit) and anchors (frame offset, fill, text offset)."""
        pieces: list[str] = []
        anchors: list[tuple[int, str, int]] = []
        length = 0
        pos = 0
        negated_at = -1  # frame length when the last negator ended
        polarity = self.polarity
        for m in self.zh_re.finditer(text):
            seg = NON_ALNUM.sub("", text[pos : m.start()])
            pieces.append(seg)
            length += len(seg)
            pos = m.end()
            tok = m.group()
            if tok in self.aff_zh:
                continue  # 给予 批准 reads as 批准: out of the frame, nothing in the fill
            neg = negated_at == length
            if tok in self.neg_zh:
                if neg:  # two negators in a row: the first stands alone
                    anchors.append((length, "N", m.start()))
                negated_at = length
                continue
            negated_at = -1
            hit = polarity.get(tok)
            if hit is not None:
                anchors.append((length, ("N " if neg else "") + hit[0] + hit[1], m.start()))
                pieces.append(self.class_mark[hit[0]])
            else:
                anchors.append((length, ("N " if neg else "") + "#" + tok, m.start()))
                pieces.append(FIGURE_MARK)
            length += 1
        pieces.append(NON_ALNUM.sub("", text[pos:]))
        return "".join(pieces), anchors

    def _en(self, text: str) -> tuple[list[str], list[tuple[int, str, int]]]:
        units: list[str] = []
        anchors: list[tuple[int, str, int]] = []
        pending_neg = False
        polarity = self.polarity
        for m in EN_WORD.finditer(text):
            raw = m.group()
            words = EN_CONTRACTIONS.get(raw)
            if words is None:
                words = [raw[:-3], "not"] if raw.endswith("n't") and len(raw) > 3 else [raw]
            for w in words:
                if w in self.neg_en:
                    last = anchors[-1] if anchors else None
                    if last is not None and last[0] == len(units) - 1 and last[1].lstrip("N ").startswith("auxiliary"):
                        anchors[-1] = (last[0], "N " + last[1], last[2])  # was not, was not not
                    else:
                        pending_neg = True
                    continue
                hit = polarity.get(w)
                if hit is not None:
                    anchors.append((len(units), ("N " if pending_neg else "") + hit[0] + hit[1], m.start()))
                    units.append(self.en_class_word[hit[0]])
                elif w[0].isdigit():
                    anchors.append((len(units), ("N " if pending_neg else "") + "#" + w, m.start()))
                    units.append("#")
                else:
                    if pending_neg:
                        anchors.append((len(units), "N", m.start()))
                    units.append(w)
                pending_neg = False
        return units, anchors

    def profile(self, text: str, lang: str) -> Profile:
        if lang == "zh":
            frame, found = self._zh(text)
            k = ZH_CONTEXT
            contexts = [
                frame[max(0, i - k) : i] + "|" + (frame[i : i + k] if fill == "N" else frame[i + 1 : i + 1 + k])
                for i, fill, _ in found
            ]
        else:
            units, found = self._en(text)
            k = EN_CONTEXT
            contexts = [
                " ".join(units[max(0, i - k) : i]) + "|"
                + " ".join(units[i : i + k] if fill == "N" else units[i + 1 : i + 1 + k])
                for i, fill, _ in found
            ]
        keys = np.fromiter(((_context_hash(c) << 16) | fill_hash(f) for c, (_, f, _) in zip(contexts, found,
                                                                                           strict=True)),
                           dtype=np.uint64, count=len(found))
        order = np.argsort(keys, kind="stable")
        return Profile(keys[order], [found[j][1] for j in order.tolist()],
                       [found[j][2] for j in order.tolist()], text)


@lru_cache(maxsize=4)
def profiler(lexicon_path: str | None = None) -> AnchorProfiler:
    return AnchorProfiler(load_lexicon(lexicon_path))
