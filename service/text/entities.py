"""Names in a text: which tokens are people, places and organisations, for the entity check.

Chinese names are the words jieba's dictionary tags as names (nr, nrt, nrfg: people; ns: places;
nt: organisations), looked up by token hash inside a kernel, and people it lacks by pattern (a
surname standing alone before a short word: :data:`SURNAMES`); a place's administrative suffix is
not part of its fill (:func:`canonical_name`). English names are
the words a text capitalises inside a sentence (after a lower-case word, a digit or a comma), as
the normalised text has lost its case; a capital at a sentence's start says nothing. They fill by
their first ``EN_FILL_LETTERS`` letters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from neardup.kernels import entities as kent
from neardup.kernels import profile as kprof
from neardup.text.cache import cached_arrays
from neardup.text.lexicon import TOKEN_SEED, hash_words
from neardup.text.segment import jieba_dict_path

NAME_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt"})
# jieba tags many two-character words nr that are no names (修正, 陈述, 花布: a surname's character
# and another); a three-character nr word is nearly always a person (江泽民)
MIN_NAME_CHARS = {"nr": 3}
EN_FILL_LETTERS = 3  # an English name fills by its first letters: crawler noise inside it (lon&g) reads alike
# the polarity byte of a name's fill (the kernel's constant): no polarity word, figure or
# sentence fill hashes to it (tests/unit/test_lookalikes.py)
NAME_FILL_BYTE = kprof.NAME_FILL_BYTE
PLACE_SUFFIXES = "省市县区镇乡村州"
CONTEXT_TOKENS = 3  # tokens each side of a name
CONTEXT_SEED = 0x0E17
EN_MIN_LETTERS = 3  # "Ph" of ph&innaeus is noise
# capitalised inside a sentence, yet no name: title-case articles, pronouns and particles; days and months
EN_NOT_NAMES = frozenset({
    "a", "an", "the", "and", "or", "but", "of", "in", "on", "at", "to", "for", "from", "by", "with", "as",
    "is", "are", "was", "were", "be", "it", "its", "this", "that", "these", "those", "he", "she", "they",
    "we", "you", "his", "her", "their", "our", "your", "i", "mr", "mrs", "ms", "dr", "my", "me", "him",
    "them", "not", "no",
    # days and months are when, not who or where: a reprint may name the day it is printed
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february",
    "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
})
SENTENCE_MARKS = np.array(sorted(map(ord, ".!?;。！？；\n")), dtype=np.uint32)  # in the normalised text


def canonical_name(word: str) -> str:
    """A Chinese name as its fill reads it: a place without its administrative suffix
    (北京市 and 北京 are one place)."""
    if len(word) >= 3 and word[-1] in PLACE_SUFFIXES:
        return word[:-1]
    return word


@lru_cache(maxsize=1)
def zh_name_table() -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """The dictionary's names as a lookup table (:func:`neardup.kernels.entities.build_name_table`):
    token hash -> the canonical name's hash."""
    path = jieba_dict_path()

    def build() -> dict[str, npt.NDArray[np.generic]]:
        words = []
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 3 and parts[2] in NAME_TAGS and len(parts[0]) >= MIN_NAME_CHARS.get(parts[2], 2):
                    words.append(parts[0])
        names = hash_words(words)
        canon = hash_words([canonical_name(w) for w in words])
        order = np.argsort(names, kind="stable")
        names, canon = names[order], canon[order]
        keep = np.ones(len(names), dtype=np.bool_)
        keep[1:] = names[1:] != names[:-1]
        return {"names": names[keep], "canonical": canon[keep]}

    stat = path.stat()
    tags = "-".join(sorted(NAME_TAGS)) + "-" + "-".join(f"{k}{v}" for k, v in sorted(MIN_NAME_CHARS.items()))
    arrays = cached_arrays(f"names-zh-{stat.st_size}-{int(stat.st_mtime)}-{tags}-3", build)
    return kent.build_name_table(arrays["names"].astype(np.uint64), arrays["canonical"].astype(np.uint64))


# surnames rarely written alone for another word (张 counts sheets, 高 is high: left out)
SURNAMES = ("王李刘陈杨赵吴周徐孙朱胡郭何罗郑梁谢宋唐许韩冯邓曹彭曾肖董袁潘蒋蔡杜程苏魏吕丁沈姚卢姜崔"
            "钟谭陆汪范廖贾夏韦邹孟熊秦邱尹薛闫段雷侯史陶黎贺顾毛郝龚邵钱严覃戴莫孔汤")
@lru_cache(maxsize=1)
def zh_surnames() -> npt.NDArray[np.uint32]:
    """The surnames' code points, sorted (for :func:`neardup.kernels.entities.surname_names`)."""
    return np.array(sorted(map(ord, SURNAMES)), dtype=np.uint32)


@lru_cache(maxsize=1)
def _not_names() -> npt.NDArray[np.uint64]:
    return np.sort(hash_words(sorted(EN_NOT_NAMES)))


def en_names(raw_texts: list[str]) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """The token hashes of the words each text capitalises inside a sentence (after a lower-case
    word, a digit or a comma; :func:`neardup.kernels.entities.capitalised_names`), sorted within
    each text, and each text's offsets into them."""
    offsets = np.zeros(len(raw_texts) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in raw_texts], out=offsets[1:])
    cps = np.frombuffer("".join(raw_texts).encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint32)
    return kent.capitalised_names(cps, offsets, TOKEN_SEED, EN_MIN_LETTERS, _not_names())


@dataclass(frozen=True, slots=True)
class NameEntries:
    """A window's name entries: entries of document d are ``entries[doc_off[d]:doc_off[d+1]]``,
    each with the span of its name in the document's normalised text."""

    entries: npt.NDArray[np.uint64]
    starts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]
    doc_off: npt.NDArray[np.int64]

    @staticmethod
    def none(n: int) -> NameEntries:
        """No names in any of ``n`` documents."""
        empty = np.zeros(0, dtype=np.int64)
        return NameEntries(np.zeros(0, dtype=np.uint64), empty, empty, np.zeros(n + 1, dtype=np.int64))
