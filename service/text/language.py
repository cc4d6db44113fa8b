"""Which language a document is in, and so how it is tokenised and which documents it may match.

The rule of the first version stays first: a text whose Han characters are at least a quarter of
its Latin letters is Chinese (``zh``), else one with Latin letters is English (``en``), else
``other`` (kernel ``detect_lang``). It is taken as certain for a Han-dominated text with no kana
and no Hangul, and for a Latin-dominated text in which English function words are common (see
:data:`EN_MARKERS`). Only the other texts go to the statistical detector, py3langid, whose model
ships inside its wheel (nothing is downloaded); its answer replaces the rule's class only when it
is one of the languages that class may turn out to be (a Han-dominated text: Japanese or Korean;
any other text: any language of :data:`LANG_KINDS`) with confidence at least
:data:`MIN_CONFIDENCE`. So every text the rule classes with certainty keeps its language, tokens
and fingerprints bit for bit.

Tokenisers (:class:`Tokenizer`): Chinese is segmented into jieba words (the SimHash features) and
cut into character k-shingles (MinHash); Japanese, Korean and the other languages written without
spaces between words (Thai, Lao, Khmer, Burmese, Dzongkha) get character bigrams as SimHash
features and the same character k-shingles, with no segmenter; every other language is read as
lower-cased words with word k-shingles, as English always was.

Each language has its own shingle-kind byte in the MinHash signature header (:func:`shingle_kind`),
and two signatures of different kinds are never compared: documents in different languages are
never near-duplicates on the lexical path (exact copies, by content hash, still are). The bytes of
the first version are unchanged (``c`` Chinese; ``w`` English and ``other``); ``j`` is Japanese,
``k`` Korean, and the other languages take ``0x80 + i`` for their index ``i`` in the pinned
:data:`LANG_KINDS` table, to which languages may only be appended.
"""

from __future__ import annotations

import io
import lzma
import re
from array import array
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.text.cache import cached_arrays

# The languages (py3langid 0.4.0 two-letter codes) beyond zh, en, ja and ko. APPEND ONLY: a
# language's position is its shingle-kind byte (0x80 + index) in stored signatures.
LANG_KINDS = (
    "af", "am", "ar", "as", "az", "be", "bg", "bn", "br", "bs", "ca", "cs", "cy", "da", "de", "el", "eo", "es",
    "et", "eu", "fa", "fi", "fr", "fy", "ga", "gd", "gl", "gu", "ha", "he", "hi", "hr", "ht", "hu", "hy", "id",
    "ig", "is", "it", "jv", "ka", "kk", "km", "kn", "ku", "ky", "la", "lg", "ln", "lo", "lt", "lv", "mg", "mk",
    "ml", "mn", "mr", "ms", "my", "ne", "nl", "no", "om", "or", "pa", "pl", "ps", "pt", "qu", "ro", "ru", "sa",
    "si", "sk", "sl", "so", "sq", "sr", "sv", "sw", "ta", "te", "th", "tl", "tr", "ug", "uk", "ur", "uz", "vi",
    "xh", "yo", "zu", "dz", "rw", "se", "sn", "st", "an", "fo", "lb", "wa", "ba", "mt", "nn", "oc", "tg", "tk",
    "tt", "vo"
)
FIRST_KINDS = {"zh": b"c", "en": b"w", "other": b"w", "ja": b"j", "ko": b"k"}
KNOWN_LANGS = frozenset(FIRST_KINDS) | frozenset(LANG_KINDS)
# written without spaces between words: read as characters, like Japanese
UNSPACED = frozenset({"ja", "ko", "th", "lo", "km", "my", "dz"})
CJK_DETECTABLE = frozenset({"ja", "ko"})  # what a Han-dominated text with kana or Hangul may be
OTHER_DETECTABLE = KNOWN_LANGS - {"zh", "other"}  # what any other text may be
# Frequent English words that are not common words of the other Latin-script languages
# (no "a", "in", "is", "of", "to", "for", "on", "was", "die": French, German, Dutch, Polish,
# Scandinavian words too). On the development set they are >= 10% of every English text's words.
EN_MARKERS = frozenset({
    "the", "and", "that", "with", "which", "from", "have", "has", "been", "were", "would", "this", "their", "they",
    "will", "said", "it", "its", "his", "she", "he", "but", "not", "who", "when", "there", "could", "had", "you",
    "what", "after", "than", "more", "about"
})
EN_SHARE = 0.05  # marker share from which a Latin-dominated text is English without asking
MIN_CONFIDENCE = 0.9  # py3langid's normalised probability needed to overrule the rule
DETECT_CHARS = 2000  # the detector reads a text's first characters (its cost grows with length)
# the words the marker share counts: runs of ASCII letters (the markers are ASCII; a Unicode-aware
# class costs twice as much, and a non-English letter only splits a word, lowering the share)
WORD_RE = re.compile(r"[a-z]+")


class Tokenizer(Enum):
    """How a language's text becomes SimHash features and MinHash shingles."""

    CHINESE = "chinese"  # jieba words; character k-shingles
    CHARACTERS = "characters"  # character bigrams; character k-shingles
    WORDS = "words"  # lower-cased words; word k-shingles


def tokenizer_of(lang: str) -> Tokenizer:
    """The tokeniser of a language code (any code of :data:`KNOWN_LANGS`)."""
    if lang == "zh":
        return Tokenizer.CHINESE
    return Tokenizer.CHARACTERS if lang in UNSPACED else Tokenizer.WORDS


def shingle_kind(lang: str) -> bytes:
    """The shingle-kind byte of a language's MinHash signatures (see the module docstring)."""
    first = FIRST_KINDS.get(lang)
    if first is not None:
        return first
    return bytes([0x80 + LANG_KINDS.index(lang)])


def english_share(text: str) -> float:
    """The share of the words of a normalised (lower-cased) text that are :data:`EN_MARKERS`, in
    its first :data:`DETECT_CHARS` characters (what the detector would read): 36 us an English
    text where the whole text read by a Unicode class cost 67."""
    words = WORD_RE.findall(text, 0, DETECT_CHARS)
    return sum(map(EN_MARKERS.__contains__, words)) / len(words) if words else 0.0


@dataclass(frozen=True, slots=True)
class Guess:
    """The detector's answer for one text: a py3langid code and its normalised probability."""

    lang: str
    confidence: float


class LanguageDetector:
    """py3langid's model from its wheel, loaded on first use, then kept. The wheel ships it
    LZMA-compressed (1.1 s to read); its arrays are cached uncompressed with the other derived
    tables (:func:`neardup.text.cache.cached_arrays`, 68 MB), which reads in a few hundredths."""

    @cached_property
    def identifier(self) -> Any:
        """py3langid's identifier with normalised probabilities (its own instance: the module's
        shared one may be restricted to some languages by other code)."""
        from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

        path = MODEL_DIR / MODEL_FILE
        stat = path.stat()
        model = cached_arrays(f"langid-{stat.st_size}-{int(stat.st_mtime)}", lambda: _model_arrays(path))
        return LanguageIdentifier(np.asarray(model["ptc"]), np.asarray(model["pc"]), model["classes"].tolist(),
                                  _stdlib_array(model["nextmove"]), model["out_feat"].tolist(), norm_probs=True,
                                  tk_row=_stdlib_array(model["nextmove_row"]))

    def guess(self, text: str) -> Guess:
        """The most likely language of ``text`` (its first :data:`DETECT_CHARS` characters)."""
        lang, confidence = self.identifier.classify(text[:DETECT_CHARS])
        return Guess(str(lang), float(confidence))


LANGID_ARRAYS = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")  # py3langid's model layout


def _model_arrays(path: Path) -> dict[str, npt.NDArray[np.generic]]:
    """The arrays of py3langid's LZMA-compressed npz model (no pickles in it)."""
    with lzma.open(path) as fh, np.load(io.BytesIO(fh.read()), allow_pickle=False) as data:
        return {k: data[k] for k in LANGID_ARRAYS}


def _stdlib_array(values: npt.NDArray[np.generic]) -> array[int]:
    """An unsigned integer array as the stdlib ``array`` py3langid's tokenizer indexes."""
    out = array({2: "H", 4: "I", 8: "Q"}[values.dtype.itemsize])
    out.frombytes(np.ascontiguousarray(values).tobytes())
    return out


def rule_is_certain(rule: str, kana: int, hangul: int, text: str) -> bool:
    """True when the first version's class ``rule`` of a normalised ``text`` with ``kana`` kana and
    ``hangul`` Hangul letters is taken as it is (see the module docstring)."""
    if rule == "zh":
        return kana == 0 and hangul == 0
    return rule == "en" and english_share(text) >= EN_SHARE


def resolve(rule: str, guess: Guess) -> str:
    """The language of a text the rule classed ``rule`` without certainty, given the detector's guess."""
    allowed = CJK_DETECTABLE if rule == "zh" else OTHER_DETECTABLE
    return guess.lang if guess.lang in allowed and guess.confidence >= MIN_CONFIDENCE else rule
