"""Text normalisation: HTML, NFKC, width, case, punctuation, whitespace, traditional -> simplified.

The per-character work runs in one Numba kernel over a window of documents, driven by a
code-point table built here once (and cached on disk): NFKC of each single code point, lowered,
punctuation folded to ASCII, traditional characters mapped to simplified. Code points whose NFKC
is not a single character, or that compose with neighbours (combining marks, conjoining jamo),
are flagged and their documents take the full ``unicodedata.normalize`` path first, so the result
always equals NFKC + the folds (a property test checks it).
"""

from __future__ import annotations

import hashlib
import html
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import overload

import numpy as np
import numpy.typing as npt

from neardup.kernels import text as ktext
from neardup.text.cache import cached_arrays

DATA = Path(__file__).resolve().parent / "data"
TABLE_SIZE = 0x30000  # BMP + SMP + SIP; above that code points pass through unchanged
TABLE_VERSION = 6

# folded after NFKC: CJK and typographic punctuation -> ASCII. Not the enumeration comma 、: it is
# never a thousands separator, and folded to "," it made one number of a list (104、320国道 read
# as 104,320)
PUNCT_FOLD = {
    "。": ".", "｡": ".", "，": ",", "；": ";", "：": ":", "？": "?", "！": "!",
    "“": '"', "”": '"', "„": '"', "‟": '"', "「": '"', "」": '"', "『": '"', "』": '"',
    "‘": "'", "’": "'", "‚": "'", "‛": "'", "`": "'", "´": "'",
    "《": "<", "》": ">", "〈": "<", "〉": ">", "【": "[", "】": "]", "〔": "[", "〕": "]",
    "（": "(", "）": ")", "〖": "[", "〗": "]",
    "—": "-", "–": "-", "―": "-", "‐": "-", "‑": "-", "‒": "-", "−": "-", "～": "~", "〜": "~",
    "…": ".", "‥": ".", "·": "·", "・": "·", "•": "·",
}
DROP_CHARS = "\u00ad\u200b\u200c\u200d\u2060\ufeff\u180e"


def is_decoration(ch: str) -> bool:
    """A page's bullets and ornaments (▲ ■ ◆ ● ★: the geometric shapes and the two stars), read as
    a space: layout, not words. A crawl leaves them inside words too (新华▲社, 江▲西省), where the
    name reader would read two names."""
    cp = ord(ch)
    return 0x25A0 <= cp <= 0x25FF or cp in (0x2605, 0x2606)

TAG_RE = re.compile(r"<[^>]{0,2000}>")
SCRIPT_RE = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
BREAK_TAG_RE = re.compile(r"<\s*(br|/p|p|/div|div|li|/li|tr|/tr|h[1-6]|/h[1-6])\b[^>]*>", re.IGNORECASE)


def _load_t2s() -> dict[int, int]:
    table: dict[int, int] = {}
    for line in (DATA / "t2s_chars.tsv").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        t, s = line.split("\t")
        table[ord(t)] = ord(s)
    return table


def _composes(ch: str, cat: str, norm: str) -> bool:
    """Whether ``ch`` (of category ``cat``, NFKC ``norm``) may compose with its neighbours: a mark,
    a Hangul letter or a combining character, before or after NFKC."""
    cp = ord(ch)
    if cat.startswith("M") or 0x1100 <= cp <= 0x11FF or 0x3130 <= cp <= 0x318F or unicodedata.combining(ch) != 0:
        return True
    # a single-character result can still compose with its neighbours: half-width katakana
    # voiced marks (U+FF9E -> U+3099) and half-width / circled Hangul letters (-> conjoining jamo)
    return any(
        unicodedata.combining(c) != 0 or unicodedata.category(c).startswith("M") or 0x1100 <= ord(c) <= 0x11FF
        for c in norm
    )


def _mapped(cp: int, t2s_map: dict[int, int]) -> int:
    """What the kernel makes of ``cp``: one code point, ``DROP``, or ``SLOW`` (normalised in Python)."""
    if 0xD800 <= cp <= 0xDFFF:
        return ktext.DROP
    ch = chr(cp)
    if ch.isspace() or is_decoration(ch):
        return 32
    cat = unicodedata.category(ch)
    if ch in DROP_CHARS or cat == "Cc" or cat == "Cf":
        return ktext.DROP
    norm = unicodedata.normalize("NFKC", ch)
    if len(norm) == 1 and is_decoration(norm):  # a half-width one (U+FFED)
        return 32
    composes = _composes(ch, cat, norm)
    norm = PUNCT_FOLD.get(norm, norm)
    low = norm.lower()
    if len(low) == 1:
        norm = low
    if composes or len(norm) != 1:
        return ktext.SLOW
    m = ord(norm)
    return t2s_map.get(m, m)


def _char_class(cp: int) -> int:
    """The class bits (SPACE, ALNUM, DIGIT, CJK) of a mapped (output) character."""
    if 0xD800 <= cp <= 0xDFFF:
        return 0
    ch = chr(cp)
    if ch.isspace():
        return ktext.SPACE
    c = 0
    if ch.isalnum():
        c |= ktext.ALNUM
    if ch.isdigit():
        c |= ktext.DIGIT
    if (0x3400 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp < TABLE_SIZE) and ch.isalpha():
        c |= ktext.CJK
    if ch == "〇":
        c |= ktext.CJK | ktext.ALNUM
    return c


def _build_tables(t2s: bool) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint8]]:
    t2s_map = _load_t2s() if t2s else {}
    table = np.fromiter((_mapped(cp, t2s_map) for cp in range(TABLE_SIZE)), dtype=np.int32, count=TABLE_SIZE)
    classes = np.fromiter(map(_char_class, range(TABLE_SIZE)), dtype=np.uint8, count=TABLE_SIZE)
    return table, classes


@lru_cache(maxsize=2)
def tables(t2s: bool = True) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint8]]:
    """The code-point table and class table, cached on disk by content version."""
    key = hashlib.sha1(
        f"{TABLE_VERSION}|{unicodedata.unidata_version}|{t2s}|{sorted(PUNCT_FOLD.items())}".encode()
        + (DATA / "t2s_chars.tsv").read_bytes()
    ).hexdigest()[:16]
    def build() -> dict[str, npt.NDArray[np.generic]]:
        table, classes = _build_tables(t2s)
        return {"table": table, "classes": classes}

    arrays = cached_arrays(f"normtable-{key}", build)
    return arrays["table"].astype(np.int32, copy=False), arrays["classes"].astype(np.uint8, copy=False)


# what strip_html does to markup, in order (source_offsets traces the same steps)
MARKUP_STEPS = ((SCRIPT_RE, " "), (BREAK_TAG_RE, "\n"), (TAG_RE, " "))
# an escaped ampersand before a lower-case letter, after a letter, is a crawl's, inside a word (no&amp;t,
# n&amp;ot, F&amp;rench): dropped before the entities are read, or the negation or the name would read as
# two words; between capitals it is the name's own (AT&amp;T, R&amp;D)
AMP_IN_WORD_RE = re.compile(r"(?<=[A-Za-z])&amp;(?=[a-z])")

# The buttons and captions a crawl keeps of a page (Click here, | Print |, 返回搜狐，查看更多), dropped
# wherever they stand: left inside a word they make other words of it, read as another name
# (AuClick herestralia for Australia, 赵返回搜狐，查看更多天衡 for 赵天衡) or a negation split in two
# (was n| Print |ot). Only phrases no story writes as its own words.
PAGE_FURNITURE_RE = re.compile(
    r"[Cc]lick here|Read more|Continue reading|\| ?Print ?\||\[(?:Image|Photo|Video)\]"
    r"|返回搜狐[，,]?查看更多|点击(?:图片)?进入下一页|点击查看大图|点击阅读全文|[（(]图片来源[：:][^）)\n]{0,12}[）)]|\[图\]")
# cheap tests first: most texts hold none of them (a search of the pattern costs 40 us a text)
PAGE_FURNITURE_ANCHORS = ("lick here", "Read more", "Continue reading", "Print", "[", "返回搜狐", "点击", "图片来源")


def _has_page_furniture(text: str) -> bool:
    return any(a in text for a in PAGE_FURNITURE_ANCHORS) and PAGE_FURNITURE_RE.search(text) is not None


def strip_html(text: str) -> str:
    """Tags, entities and page furniture (:data:`PAGE_FURNITURE_RE`) out; block tags become line
    breaks. Cheap when there is none."""
    if "<" in text:
        for pattern, replacement in MARKUP_STEPS:
            text = pattern.sub(replacement, text)
    if "&" in text:
        text = html.unescape(AMP_IN_WORD_RE.sub("", text))
    if _has_page_furniture(text):
        text = PAGE_FURNITURE_RE.sub("", text)
    return text


@dataclass(frozen=True, slots=True)
class NormalizedBatch:
    """Normalised code points of a window: doc d is cps[offsets[d]:offsets[d+1]]."""

    cps: npt.NDArray[np.uint32]
    offsets: npt.NDArray[np.int64]
    texts: list[str]


def _to_cps(texts: list[str]) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    raw = "".join(texts).encode("utf-32-le", "surrogatepass")
    return np.frombuffer(raw, dtype="<u4").astype(np.uint32, copy=False), offsets


def _splice(out: npt.NDArray[np.uint32], out_off: npt.NDArray[np.int64], redo: list[int],
            f_out: npt.NDArray[np.uint32], f_off: npt.NDArray[np.int64]) -> tuple[
            npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """The batch ``out`` with documents ``redo`` (ascending) replaced by the rows of ``f_out``."""
    lengths = np.diff(out_off)
    lengths[redo] = np.diff(f_off)
    new_off = np.zeros(out_off.shape[0], dtype=np.int64)
    np.cumsum(lengths, out=new_off[1:])
    pieces = []
    done = 0  # documents before this one are in pieces
    for k, d in enumerate(redo):
        pieces += [out[out_off[done] : out_off[d]], f_out[f_off[k] : f_off[k + 1]]]
        done = d + 1
    pieces.append(out[out_off[done] : out_off[-1]])
    return np.concatenate(pieces), new_off


def normalize_batch(texts: list[str], t2s: bool = True, html_strip: bool = True) -> NormalizedBatch:
    """Normalise a batch of texts in one kernel call (see the module docstring for what is folded)."""
    table, classes = tables(t2s)
    if html_strip:
        texts = [strip_html(t) for t in texts]
    cps, offsets = _to_cps(texts)
    out, out_off, slow = ktext.normalize_batch(cps, offsets, table, classes)
    if slow.any():
        # full NFKC for the few documents that need composition or expansion, then the table; the
        # kernel normalises each document on its own, so only those documents run again
        redo = np.flatnonzero(slow).tolist()
        f_cps, f_offsets = _to_cps([unicodedata.normalize("NFKC", texts[d]) for d in redo])
        f_out, f_out_off, _ = ktext.normalize_batch(f_cps, f_offsets, table, classes)
        # a letter lowered after NFKC may compose with its mark only now (Ｗ̊ -> w + ring -> ẘ, whose
        # capital has no composed form): composed here, normalised text normalises to itself
        f_out, f_out_off = _to_cps([unicodedata.normalize("NFC", t) for t in _decoded(f_out, f_out_off)])
        out, out_off = _splice(out, out_off, redo, f_out, f_out_off)
    return NormalizedBatch(out, out_off, _decoded(out, out_off))


def _decoded(cps: npt.NDArray[np.uint32], offsets: npt.NDArray[np.int64]) -> list[str]:
    """The texts of code points ``cps`` split at ``offsets`` (:func:`_to_cps` undone)."""
    raw = cps.tobytes()
    return [raw[4 * a : 4 * b].decode("utf-32-le", "surrogatepass") for a, b in
            zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]


def normalize_text(text: str, t2s: bool = True, html_strip: bool = True) -> str:
    """One text through :func:`normalize_batch`."""
    return normalize_batch([text], t2s=t2s, html_strip=html_strip).texts[0]


# ------------------------------------------------------------------------------ source offsets

ENTITY_RE = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;?)")


def _substituted(chars: str, src: list[int], pattern: re.Pattern[str],
                 replace: str | Callable[[re.Match[str]], str]) -> tuple[str, list[int]]:
    """``pattern.sub(replace, chars)`` with the source offset of every character kept: what a
    match is replaced by comes from the match's first character."""
    out: list[str] = []
    out_src: list[int] = []
    last = 0
    for m in pattern.finditer(chars):
        out.append(chars[last : m.start()])
        out_src += src[last : m.start()]
        new = replace if isinstance(replace, str) else replace(m)
        out.append(new)
        out_src += [src[m.start()]] * len(new)
        last = m.end()
    out.append(chars[last:])
    out_src += src[last:]
    return "".join(out), out_src


def _stripped_with_sources(text: str) -> tuple[str, list[int]]:
    """:func:`strip_html` of ``text`` and, for each of its characters, the offset in ``text``."""
    chars, src = text, list(range(len(text)))
    if "<" in chars:
        for pattern, replacement in MARKUP_STEPS:
            chars, src = _substituted(chars, src, pattern, replacement)
    if "&" in chars:
        chars, src = _substituted(chars, src, AMP_IN_WORD_RE, "")
        chars, src = _substituted(chars, src, ENTITY_RE, lambda m: html.unescape(m.group()))
    if _has_page_furniture(chars):
        chars, src = _substituted(chars, src, PAGE_FURNITURE_RE, "")
    return chars, src


class SourceOffsets(Sequence[int]):
    """For each character of a normalised text, the offset in the original text of the character it
    came from, read where asked (evidence needs a passage's two ends, not every character's)."""

    __slots__ = ("_normalised", "_stripped")

    def __init__(self, stripped: list[int], normalised: npt.NDArray[np.int64]) -> None:
        """``stripped``: the original offset of each character markup stripping kept;
        ``normalised``: the stripped character each normalised one came from."""
        self._stripped = stripped
        self._normalised = normalised

    def __len__(self) -> int:
        """Characters of the normalised text."""
        return len(self._normalised)

    @overload
    def __getitem__(self, i: int) -> int: ...

    @overload
    def __getitem__(self, i: slice) -> list[int]: ...

    def __getitem__(self, i: int | slice) -> int | list[int]:
        """The original offset of normalised character ``i``."""
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self._stripped[int(self._normalised[i])]


def source_offsets(text: str, t2s: bool = True, html_strip: bool = True) -> SourceOffsets | None:
    """For each character of ``normalize_text(text)``, the offset of the character of ``text`` it
    came from, so that evidence can quote the original rather than the normalised text: the
    kernel's own loop with offsets kept (:func:`neardup.kernels.text.normalize_sources`). A text
    that needs full NFKC is traced one character at a time (a character expanded on its own);
    None when that does not give the normalised text back (characters composed across code
    points), and the caller quotes the normalised text."""
    chars, src = _stripped_with_sources(text) if html_strip else (text, list(range(len(text))))
    table, classes = tables(t2s)
    cps, _ = _to_cps([chars])
    out, out_src, slow = ktext.normalize_sources(cps, table, classes)
    if slow:  # each character's own NFKC, traced
        pieces = [unicodedata.normalize("NFKC", ch) for ch in chars]
        src = [at for piece, at in zip(pieces, src, strict=True) for _ in piece]
        cps, _ = _to_cps(["".join(pieces)])
        out, out_src, _ = ktext.normalize_sources(cps, table, classes)
    if (slow or chars is not text) and out.tobytes().decode("utf-32-le", "surrogatepass") != normalize_text(
            text, t2s=t2s, html_strip=html_strip):
        return None  # the kernel's path and this one read the text otherwise: no offsets rather than wrong ones
    return SourceOffsets(src, out_src)


def original_span(text: str, start: int, end: int, t2s: bool = True, html_strip: bool = True) -> tuple[int, int] | None:
    """The span of ``text`` that the normalised span ``[start, end)`` came from (None when it
    cannot be traced, :func:`source_offsets`)."""
    src = source_offsets(text, t2s=t2s, html_strip=html_strip)
    if src is None or not 0 <= start < end <= len(src):
        return None
    last = src[end - 1]
    stop = last + 1
    while stop < len(text) and (end >= len(src) or src[end] > stop) and unicodedata.combining(text[stop]):
        stop += 1  # a mark that composed into the span's last character
    return src[start], stop
