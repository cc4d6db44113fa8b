"""Typed wrappers around the kernels: a window of normalised texts in, fingerprints out.

Byte formats (all big-endian, versioned; the store keeps them opaque):
- SimHash: 8 bytes (64-bit) or 16 bytes (128-bit), most significant word first.
- MinHash signature v2: b"NM" + version (1 B) + shingle kind (b"c" chars / b"w" words) + shingle
  size (1 B) + num_perm (2 B) + seed (4 B) + bits (1 B: 4, 8, 16 or 32) + num_perm values of the
  low ``bits`` bits (b-bit MinHash: two different minima agree by chance with probability 2^-bits,
  which the Jaccard estimate corrects for). 4-bit values are packed two to a byte, the first in
  the high nibble, the last byte's low nibble 0 when num_perm is odd. v1 is the same without the
  bits byte, 32-bit values. v3 adds, after the bits byte, the MinHash family (1 B: 0 k
  permutations, 1 one permutation hashing; :mod:`neardup.kernels.minhash`); v1 and v2 are k
  permutations.
  The header pins the hash family, so a signature made with other parameters is refused instead
  of compared. The shingle kind is also the language's (``neardup.text.language.shingle_kind``: b"c"
  Chinese, b"w" English, b"j" Japanese, ...): signatures of different kinds are never compared.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from typing import Literal, NamedTuple

import mmh3
import numpy as np
import numpy.typing as npt

from neardup.kernels import entities as kent
from neardup.kernels import minhash as kmin
from neardup.kernels import profile as kprof
from neardup.kernels import simhash as ksim
from neardup.kernels import text as ktext
from neardup.kernels.hashing import hash_spans
from neardup.text.entities import (
    BRAND_CHARS,
    BYLINE_TOKENS,
    CONTEXT_TOKENS,
    CUT_NAMES_SINCE,
    EN_FILL_LETTERS,
    NAME_FILL_BYTE,
    NAME_LETTERS_FILL,
    NAME_PRESENT_FILL,
    NAME_RUN,
    NAME_RUNS_SINCE,
    SECOND_LETTERS_SINCE,
    SENTENCE_MARKS,
    SOURCE_REACH,
    NameEntries,
    NameSlots,
    SlotTokens,
    byline_markers,
    en_names,
    form_tokens,
    zh_body_tables,
    zh_given_tails,
    zh_lead_surnames,
    zh_name_table,
    zh_name_verbs,
    zh_person_word_table,
    zh_place_suffixes,
    zh_run_surnames,
    zh_short_place_tables,
    zh_suffix_tables,
    zh_surnames,
    zh_title_tables,
)
from neardup.text.entities import CONTEXT_SEED as NAME_CONTEXT_SEED
from neardup.text.language import (
    KNOWN_LANGS,
    LanguageDetector,
    Tokenizer,
    resolve,
    rule_is_certain,
    shingle_kind,
    tokenizer_of,
)
from neardup.text.lexicon import TOKEN_SEED, Lexicon, WeightTable, hash_words, weight_table, weight_table_of
from neardup.text.normalize import NormalizedBatch, normalize_batch, normalize_text, strip_html, tables
from neardup.text.segment import segmenter

MASK64 = (1 << 64) - 1
P31 = (1 << 31) - 1
SIG_MAGIC = b"NM"
SIG_VERSION = 3
SIG_HEADER_V1 = struct.Struct(">2sBcBHI")
SIG_HEADER_V2 = struct.Struct(">2sBcBHIB")
SIG_HEADER = struct.Struct(">2sBcBHIBB")
MinHashFamily = Literal["one_permutation", "permutations"]
FAMILY_CODES: dict[str, int] = {"permutations": 0, "one_permutation": 1}
FAMILIES = {code: name for name, code in FAMILY_CODES.items()}
SIG_DTYPES = {8: ">u1", 16: ">u2", 32: ">u4"}
SIG_BITS = (4, 8, 16, 32)
SHINGLE_SEED = 0x5EED
RULE_CODES = ("zh", "en", "other")  # the classes of kernel detect_lang, in its order


def splitmix64(state: int) -> tuple[int, int]:
    """(next state, output) of splitmix64; pinned so permutations never depend on numpy's RNG."""
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


@lru_cache(maxsize=8)
def permutations(num_perm: int, seed: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    state = seed
    a = np.empty(num_perm, dtype=np.uint64)
    b = np.empty(num_perm, dtype=np.uint64)
    for i in range(num_perm):
        state, r1 = splitmix64(state)
        state, r2 = splitmix64(state)
        a[i] = 1 + r1 % (P31 - 1)
        b[i] = r2 % P31
    return a, b


def truncate_signature(sig: npt.NDArray[np.uint32], bits: int) -> npt.NDArray[np.uint32]:
    return sig if bits >= 32 else sig & np.uint32((1 << bits) - 1)


def _pack_nibbles(values: npt.NDArray[np.uint32]) -> bytes:
    """4-bit values, two to a byte, first value in the high nibble (a zero nibble pads an odd count)."""
    nib = (values & np.uint32(0xF)).astype(np.uint8)
    if nib.shape[0] % 2:
        nib = np.append(nib, np.uint8(0))
    return ((nib[0::2] << np.uint8(4)) | nib[1::2]).tobytes()


def _unpack_nibbles(data: bytes, offset: int, count: int) -> npt.NDArray[np.uint32]:
    """Inverse of :func:`_pack_nibbles`; ValueError when ``data`` holds fewer than ``count`` values."""
    body = np.frombuffer(data, dtype=np.uint8, offset=offset, count=(count + 1) // 2)
    out = np.empty(body.shape[0] * 2, dtype=np.uint32)
    out[0::2] = body >> np.uint8(4)
    out[1::2] = body & np.uint8(0xF)
    return out[:count]


class Signature(NamedTuple):
    """A decoded MinHash signature and the header that says how it was made."""

    values: npt.NDArray[np.uint32]
    kind: bytes
    size: int
    seed: int
    bits: int
    family: str  # a key of FAMILY_CODES


def encode_signature(sig: npt.NDArray[np.uint32], kind: bytes, size: int, seed: int, bits: int = 32,
                     family: str = "one_permutation") -> bytes:
    """The stored bytes (format v3, module docstring) of a signature of ``family``."""
    if bits not in SIG_BITS:
        raise ValueError(f"signature bits must be one of {list(SIG_BITS)}, not {bits}")
    head = SIG_HEADER.pack(SIG_MAGIC, SIG_VERSION, kind, size, sig.shape[0], seed, bits, FAMILY_CODES[family])
    if bits == 4:
        return head + _pack_nibbles(sig)
    return head + truncate_signature(sig, bits).astype(SIG_DTYPES[bits]).tobytes()


def decode_signature(data: bytes) -> Signature:
    """The signature in ``data`` (formats v1-v3); raises ValueError on an unknown format."""
    magic, version = data[:2], data[2] if len(data) > 2 else 0
    if magic != SIG_MAGIC or version not in (1, 2, 3):
        raise ValueError("not a neardup v1-v3 MinHash signature")
    family = 0
    if version == 1:
        _, _, kind, size, num_perm, seed = SIG_HEADER_V1.unpack_from(data)
        bits, offset = 32, SIG_HEADER_V1.size
    elif version == 2:
        _, _, kind, size, num_perm, seed, bits = SIG_HEADER_V2.unpack_from(data)
        offset = SIG_HEADER_V2.size
    else:
        _, _, kind, size, num_perm, seed, bits, family = SIG_HEADER.unpack_from(data)
        offset = SIG_HEADER.size
    if bits not in SIG_BITS:
        raise ValueError(f"signature with {bits}-bit values")
    if family not in FAMILIES:
        raise ValueError(f"signature of unknown MinHash family {family}")
    if bits == 4:
        values = _unpack_nibbles(data, offset, num_perm)
    else:
        values = np.frombuffer(data, dtype=SIG_DTYPES[bits], offset=offset, count=num_perm).astype(np.uint32)
    return Signature(values, kind, size, seed, bits, FAMILIES[family])


def corrected_jaccard(raw: float, bits: int) -> float:
    """Unbiased Jaccard from the share of equal b-bit values (Li & König, b-bit MinHash)."""
    if bits >= 32:
        return raw
    chance = 2.0 ** -bits
    return max(0.0, (raw - chance) / (1.0 - chance))


def encode_simhash(words: npt.NDArray[np.uint64]) -> bytes:
    return words.astype(">u8").tobytes()


def decode_simhash(data: bytes) -> npt.NDArray[np.uint64]:
    return np.frombuffer(data, dtype=">u8").astype(np.uint64)


def content_hash(norm_text: str) -> bytes:
    """Stable 128-bit hash of the normalised text (MurmurHash3 x64 128, seed 0)."""
    return mmh3.hash_bytes(norm_text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True, slots=True)
class FingerprintConfig:
    simhash_bits: int = 64
    num_perm: int = 128
    zh_shingle: int = 5
    en_shingle: int = 3
    seed: int = 1
    t2s: bool = True
    strip_html: bool = True
    idf_path: str | None = None
    lexicon_path: str | None = None
    segment_hmm: bool = False
    signature_bits: int = 8
    minhash_family: MinHashFamily = "one_permutation"


@dataclass(slots=True)
class Fingerprints:
    """Fingerprints of a window, row i for document i."""

    texts: list[str]  # normalised
    langs: list[str]  # codes of neardup.text.language.KNOWN_LANGS
    content_hashes: list[bytes]
    simhash: npt.NDArray[np.uint64]  # (n, words)
    signatures: npt.NDArray[np.uint32]  # (n, num_perm)
    shingle_counts: npt.NDArray[np.int64]
    shingle_kind: list[bytes]  # per document, its language's (neardup.text.language.shingle_kind)
    lengths: list[int]
    names: NameEntries  # entity entries of each document's names (neardup.text.entities)
    name_slots: list[NameSlots | None]  # each document's tokens as places of another text's names

    def __len__(self) -> int:
        return len(self.texts)


def _take(batch: NormalizedBatch, idx: list[int]) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """Contiguous code points of the documents ``idx`` (in that order) and their offsets."""
    off = batch.offsets
    lengths = np.array([off[i + 1] - off[i] for i in idx], dtype=np.int64)
    offsets = np.zeros(len(idx) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if not idx:
        return np.zeros(0, dtype=np.uint32), offsets
    cps = np.concatenate([batch.cps[off[i] : off[i + 1]] for i in idx])
    return cps, offsets


def rule_languages(batch: NormalizedBatch, classes: npt.NDArray[np.uint8]) -> list[str]:
    """The first version's language rule (zh / en / other) for each text of a normalised window."""
    return [RULE_CODES[int(c)] for c in ktext.detect_lang(batch.cps, batch.offsets, classes)]


def detect_languages(detector: LanguageDetector, batch: NormalizedBatch, classes: npt.NDArray[np.uint8],
                     given: list[str | None] | None, shown: list[str]) -> list[str]:
    """The language of each text of a normalised window: its ``given`` code when that is one of
    ``KNOWN_LANGS`` (a document's own ``lang`` field), else the first version's rule, refined by
    ``detector`` where the rule is not certain (see :mod:`neardup.text.language`). The detector reads
    the ``shown`` texts, before normalisation (its traditional-to-simplified folding would make
    Japanese kanji read as Chinese)."""
    rules = rule_languages(batch, classes)
    marks = ktext.kana_hangul_counts(batch.cps, batch.offsets)
    out = []
    for i, rule in enumerate(rules):
        code = given[i] if given else None
        if code is not None and code in KNOWN_LANGS:
            out.append(code)
        elif rule_is_certain(rule, int(marks[i, 0]), int(marks[i, 1]), batch.texts[i]):
            out.append(rule)
        else:
            out.append(resolve(rule, detector.guess(shown[i])))
    return out


def _zh_token_spans(texts: list[str], offsets: npt.NDArray[np.int64], hmm: bool = False) -> tuple[
        npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Token spans of jieba-dictionary words, positions in the window's concatenated code points.

    The segmenter's tokens cover each text exactly, so one pass over all token lengths of the
    window gives every span (no per-document numpy calls)."""
    import rjieba  # only here: its import loads its dictionary (0.07 s of every start-up)

    toks = [rjieba.cut(text, hmm) for text in texts]
    doc_off = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, toks), dtype=np.int64, count=len(toks)), out=doc_off[1:])
    lengths = np.fromiter(map(len, chain.from_iterable(toks)), dtype=np.int64, count=int(doc_off[-1]))
    ends = np.cumsum(lengths)
    if len(ends) and ends[-1] != offsets[-1]:
        raise RuntimeError("segmenter output does not cover the text")  # an invariant, not input
    return ends - lengths, ends, doc_off


def _name_entries(parts: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.int64]] | None],
                  ) -> NameEntries:
    """One :class:`NameEntries` of a window from each document's (entries, starts, ends) or None."""
    found = [p for p in parts if p is not None]
    if not found:
        return NameEntries.none(len(parts))
    doc_off = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([0 if p is None else len(p[0]) for p in parts], out=doc_off[1:])
    return NameEntries(np.concatenate([p[0] for p in found]), np.concatenate([p[1] for p in found]),
                       np.concatenate([p[2] for p in found]), doc_off)


MarkerGroups = list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]]


def zh_name_flags(cps: npt.NDArray[np.uint32], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64],
                  tok_off: npt.NDArray[np.int64], tok_hashes: npt.NDArray[np.uint64], classes: npt.NDArray[np.uint8],
                  groups: MarkerGroups, version: int = CUT_NAMES_SINCE) -> tuple[
                      npt.NDArray[np.bool_], npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """(flags, fills, the last token of each token's name, which tokens continue a name) of
    Chinese tokens, read as profile ``version`` (8 to 14) reads them: the dictionary's names, then
    each pattern's (each step sees the names the steps before it flagged: a known city ends a
    company's span); ``groups``: learned field words and the documents they apply to. Since v9 a
    person cut into one-character tokens (单/兴/缘) is read, a surname must be written together
    with its given name, and a person's tokens are one name (王/新民 is 王新民); since v10 a
    surname before a name of the dictionary (赵/新民) and one glued to the first character of its
    given name (卫志/刚) are read too; since v14 a company's brand that the dictionary cuts into
    characters (商/软/冠/联/科技/有限公司), a company whose legal form it cuts (有限责任/公司), a
    person whose surname is also a preposition (于/丽) and a place of one character (帅/市)."""
    runs, words, cut = version >= NAME_RUNS_SINCE, version >= SECOND_LETTERS_SINCE, version >= CUT_NAMES_SINCE
    flags, fills = kent.name_tokens(tok_hashes, *zh_name_table(rare_pairs=runs))
    stops = zh_suffix_tables()[1]
    spans = (cps, starts, ends, tok_off, tok_hashes, flags, fills)
    dictionary = flags.copy()
    joined = np.zeros(len(starts), dtype=np.bool_)
    if runs:
        kent.single_char_names(*spans, zh_run_surnames(), stops, classes, NAME_RUN)
    kent.surname_names(*spans, zh_surnames(extended=runs), stops, classes, runs, joined, words)
    if words:
        kent.surname_word_names(*spans, zh_run_surnames(), zh_given_tails(), stops, classes, joined)
    if cut:
        kent.lead_surname_names(*spans, zh_lead_surnames(), zh_given_tails(), stops, classes, joined)
    people = (flags & ~dictionary) | joined  # the pieces of a person the patterns read
    kent.suffix_names(*spans, *zh_suffix_tables(), classes, *zh_short_place_tables(cut))
    brands = np.zeros(len(starts), dtype=np.bool_)
    heads, links, linked_heads = zh_body_tables()
    kent.body_names(*spans, heads, links, linked_heads if cut else linked_heads[:0], stops, classes, brands,
                    BRAND_CHARS if cut else 0)
    people |= brands  # a brand cut into characters is one name, as a person's pieces are
    kent.titled_names(*spans, *zh_title_tables(), stops, classes)
    if cut:  # after every other reading: only where none of them read a name
        verbed = np.zeros(len(starts), dtype=np.bool_)
        kent.verb_run_names(*spans, zh_run_surnames(), stops, classes, NAME_RUN, zh_name_verbs(), verbed)
        people |= verbed
    for markers, docs in groups:
        kent.marker_names(cps, starts, tok_off, tok_hashes, flags, fills, markers, docs, classes)
    kent.byline_names(starts, ends, tok_off, tok_hashes, flags, *byline_markers(cut), BYLINE_TOKENS, SOURCE_REACH)
    if not runs:
        return flags, fills, np.arange(len(starts)), np.zeros(len(starts), dtype=np.bool_)
    last, cont = kent.name_runs(cps, starts, ends, tok_off, flags, fills, people, TOKEN_SEED)
    return flags, fills, last, cont


def _entries_of(cps: npt.NDArray[np.uint32], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64],
                tok_off: npt.NDArray[np.int64], tok_hashes: npt.NDArray[np.uint64], flags: npt.NDArray[np.bool_],
                fills: npt.NDArray[np.uint64], last: npt.NDArray[np.int64], cont: npt.NDArray[np.bool_],
                words: bool, version: int = SECOND_LETTERS_SINCE) -> tuple[
                    npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_],
                    npt.NDArray[np.int64]]:
    """(entries, the token of each, document offsets, sentence breaks, where each token's name
    ends) of flagged tokens (:func:`neardup.kernels.entities.entity_entries`), as profile
    ``version`` makes them (since v10: with each name's second letter set, and contexts without a
    company's legal form)."""
    v10 = version >= SECOND_LETTERS_SINCE
    name_ends = ends[last]
    breaks = kent.sentence_breaks(cps, starts, ends, tok_off, SENTENCE_MARKS)
    suffixes = zh_place_suffixes()
    letters = kent.letter_sets(cps, starts, name_ends, flags, words, suffixes)
    letters2 = (kent.letter_sets(cps, starts, name_ends, flags, words, suffixes, kent.SECOND_LETTERS) if v10
                else np.zeros(0, dtype=np.uint64))
    entries, tokens, e_off = kent.entity_entries(tok_hashes, tok_off, flags, fills, letters, letters2, breaks,
                                                 form_tokens(tok_hashes, v10), CONTEXT_TOKENS, NAME_CONTEXT_SEED,
                                                 NAME_FILL_BYTE, NAME_PRESENT_FILL, NAME_LETTERS_FILL, last, cont)
    return entries, tokens, e_off, breaks, name_ends


EntryRows = tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.int64]]


def _weak_name_entries(cps: npt.NDArray[np.uint32], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64],
                       tok_off: npt.NDArray[np.int64], tok_hashes: npt.NDArray[np.uint64],
                       flags: npt.NDArray[np.bool_], breaks: npt.NDArray[np.bool_],
                       alone: npt.NDArray[np.bool_]) -> EntryRows:
    """(entries, the token of each, document offsets) of the weak names of Chinese tokens (profile
    v16, :func:`neardup.kernels.entities.weak_name_entries`): words the dictionary tags a person
    that no reading took for a name (``flags``), with contexts as a name's; and, under their own
    byte, the same entries of each name that is such a word of two or three characters and one
    token (``alone``: 刘晓光, 古建筑), which a weak name in its place is told from by their
    characters."""
    person = kent.name_tokens(tok_hashes, *zh_person_word_table())[0]
    weak = person & ~flags & ((ends - starts) == 2)
    twins = person & flags & alone
    skip = form_tokens(tok_hashes, True)
    parts = [kent.weak_name_entries(cps, starts, ends, tok_hashes, tok_off, which, flags, breaks, skip,
                                    CONTEXT_TOKENS, NAME_CONTEXT_SEED, byte)
             for which, byte in ((weak, kprof.WEAK_NAME_BYTE), (twins, kprof.NAME_TWIN_BYTE))]
    return _merged(parts[0], parts[1])


def _merged(first: EntryRows, second: EntryRows) -> EntryRows:
    """Two sets of (entries, tokens, document offsets) as one, each document's entries sorted."""
    (e1, t1, off1), (e2, t2, off2) = first, second
    if not len(e2):
        return first
    docs = np.concatenate([np.repeat(np.arange(len(off1) - 1), np.diff(off1)),
                           np.repeat(np.arange(len(off2) - 1), np.diff(off2))])
    entries = np.concatenate([e1, e2])
    order = np.lexsort((entries, docs))
    return entries[order], np.concatenate([t1, t2])[order], off1 + off2


def _older_reader(tokens: SlotTokens, groups: MarkerGroups, k: int) -> Callable[[int], tuple[NameEntries, NameSlots]]:
    """How to read the names of document ``k`` of a window (its ``tokens``; ``groups``: the
    window's learned field words) as the records of an older profile version (8 or 9) were read
    (:func:`zh_name_flags`), made only when such a record comes up: (its name entries, its tokens
    as slots)."""
    def read(version: int) -> tuple[NameEntries, NameSlots]:
        t = tokens
        tok_off = np.array([0, len(t.starts)], dtype=np.int64)
        own = [(markers, docs[k : k + 1]) for markers, docs in groups]
        flags, fills, last, cont = zh_name_flags(t.cps, t.starts, t.ends, tok_off, t.hashes, t.classes, own,
                                                 version)
        entries, rows, e_off, breaks, name_ends = _entries_of(t.cps, t.starts, t.ends, tok_off, t.hashes, flags,
                                                              fills, last, cont, False, version)
        names = NameEntries(entries, t.starts[rows] - t.base, name_ends[rows] - t.base, e_off)
        return names, NameSlots(SlotTokens(t.cps, t.starts, t.ends, t.hashes, flags, breaks, t.base, t.classes),
                                forms=False)

    return read


class Fingerprinter:
    """Normalise, tokenise, SimHash and MinHash a window in a few kernel calls."""

    def __init__(self, config: FingerprintConfig) -> None:
        self.config = config
        self.table, self.classes = tables(config.t2s)
        self.weights: WeightTable = weight_table(config.idf_path, config.lexicon_path)
        self.slots = ksim.build_hash_table(self.weights.keys, self.weights.weights, self.weights.flags)
        self.segmenter = segmenter()
        self.detector = LanguageDetector()
        self.a, self.b = permutations(config.num_perm, config.seed)
        self.words = 2 if config.simhash_bits == 128 else 1
        # use_name_fields: content type ("" for every type) -> token hashes of its field words
        self.name_markers: dict[str, npt.NDArray[np.uint64]] = {}

    def use_name_fields(self, markers: Sequence[str], by_type: Mapping[str, Sequence[str]] | None = None) -> None:
        """Words after which a name stands (learned from reviewers: a template's field), in every
        content type (``markers``) and in the documents of one type (``by_type``)."""
        def hashed(words: Sequence[str]) -> npt.NDArray[np.uint64]:
            return np.unique(hash_words([normalize_text(w, t2s=self.config.t2s) for w in words]))

        typed = [("", markers), *(by_type or {}).items()]
        self.name_markers = {t: hashed(words) for t, words in typed if words}

    def _marker_groups(self, types: Sequence[str]) -> MarkerGroups:
        """(field words, which of the documents ``types`` they apply to), one a content type."""
        if not self.name_markers:
            return []
        every = self.name_markers.get("", np.zeros(0, dtype=np.uint64))
        groups = []
        for content_type in sorted(set(types)):
            markers = np.union1d(every, self.name_markers.get(content_type, every)) if content_type else every
            if len(markers):
                groups.append((markers, np.array([t == content_type for t in types], dtype=np.bool_)))
        return groups

    def use_lexicon(self, lexicon: Lexicon) -> None:
        """SimHash weights from ``lexicon`` (a learned model's words) over the configured IDF table."""
        self.weights = weight_table_of(lexicon, self.config.idf_path)
        self.slots = ksim.build_hash_table(self.weights.keys, self.weights.weights, self.weights.flags)

    def fingerprint(self, texts: list[str], langs: list[str | None] | None = None,
                    types: Sequence[str] | None = None) -> Fingerprints:
        cfg = self.config
        # HTML and page furniture out once: normalisation, the language detector and the English
        # names all read the text as the page shows it
        shown = [strip_html(t) for t in texts] if cfg.strip_html else texts
        batch = normalize_batch(shown, t2s=cfg.t2s, html_strip=False)
        n = len(texts)
        lang_list = detect_languages(self.detector, batch, self.classes, langs, shown)
        simhash = np.zeros((n, self.words), dtype=np.uint64)
        sigs = np.full((n, cfg.num_perm), kmin.EMPTY, dtype=np.uint32)
        counts = np.zeros(n, dtype=np.int64)
        tokenizers = [tokenizer_of(lang) for lang in lang_list]
        names: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.int64]] | None] = [None] * n
        slots: list[NameSlots | None] = [None] * n
        for tokenizer in Tokenizer:
            idx = [i for i in range(n) if tokenizers[i] is tokenizer]
            if not idx:
                continue
            cps, offsets = _take(batch, idx)
            starts, ends, tok_off = self._token_spans(tokenizer, cps, offsets, [batch.texts[i] for i in idx])
            tok_hashes = hash_spans(cps, starts, ends, TOKEN_SEED)
            slot_keys, slot_weights, slot_flags, slot_used = self.slots
            fh, fw, f_off = ksim.feature_weights(
                tok_hashes, tok_off, slot_keys, slot_weights, slot_flags, slot_used,
                self.weights.default_weight, self.weights.negation_weight,
            )
            sh = ksim.simhash_batch(fh, fw, f_off, self.words)
            if tokenizer is Tokenizer.WORDS:
                shingles, s_off = ktext.word_shingle_hashes(tok_hashes, tok_off, cfg.en_shingle, SHINGLE_SEED)
            else:
                shingles, s_off = ktext.char_shingle_hashes(cps, offsets, self.classes, cfg.zh_shingle, SHINGLE_SEED)
            # MinHash is a function of the shingle *set*: hash each distinct shingle once
            shingles, s_off = ktext.distinct_per_doc(shingles, s_off)
            sg = self.minhash(shingles, s_off)
            ct = s_off[1:] - s_off[:-1]
            self._names(tokenizer, idx, shown, cps, offsets, starts, ends, tok_off, tok_hashes, names, slots,
                        [types[i] for i in idx] if types is not None else [""] * len(idx))
            rows = np.asarray(idx, dtype=np.int64)
            simhash[rows] = sh
            sigs[rows] = sg
            counts[rows] = ct
        return Fingerprints(
            texts=batch.texts,
            langs=lang_list,
            content_hashes=[content_hash(t) for t in batch.texts],
            simhash=simhash,
            signatures=sigs,
            shingle_counts=counts,
            shingle_kind=[shingle_kind(lang) for lang in lang_list],
            lengths=[len(t) for t in batch.texts],
            names=_name_entries(names),
            name_slots=slots,
        )

    def _names(self, tokenizer: Tokenizer, idx: list[int], shown: list[str], cps: npt.NDArray[np.uint32],
               offsets: npt.NDArray[np.int64],
               starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64], tok_off: npt.NDArray[np.int64],
               tok_hashes: npt.NDArray[np.uint64],
               out: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.int64]] | None],
               slots: list[NameSlots | None], types: list[str]) -> None:
        """The name entries of a group of one tokeniser, each with its name's span, into ``out[row]``;
        its tokens as places of other texts' names into ``slots[row]``."""
        words = tokenizer is Tokenizer.WORDS
        if tokenizer is Tokenizer.CHINESE:
            groups = self._marker_groups(types)
            flags, fills, last, cont = zh_name_flags(cps, starts, ends, tok_off, tok_hashes, self.classes, groups)
        elif words:
            # capitals as the page shows them (``shown``): a crawl's markup or button inside a word
            # (R[Image]elativism, Au<br/>stralia) would hide a name that its clean copy names
            flags = kent.doc_names(tok_hashes, tok_off, *en_names([shown[row] for row in idx]))
            fills = hash_spans(cps, starts, np.minimum(ends, starts + EN_FILL_LETTERS), TOKEN_SEED)
            last, cont = np.arange(len(starts)), np.zeros(len(starts), dtype=np.bool_)
        else:
            return
        entries, tokens, e_off, breaks, name_ends = _entries_of(cps, starts, ends, tok_off, tok_hashes, flags, fills,
                                                                last, cont, words)
        if tokenizer is Tokenizer.CHINESE:
            entries, tokens, e_off = _merged(
                (entries, tokens, e_off),
                _weak_name_entries(cps, starts, ends, tok_off, tok_hashes, flags, breaks,
                                   ~cont & (last == np.arange(len(last)))))
        bounds = e_off.tolist()
        token_bounds = tok_off.tolist()
        for k, row in enumerate(idx):
            base = offsets[k]
            if tokenizer is Tokenizer.CHINESE:  # English names are read by their capitals, not slots
                ta, tb = token_bounds[k], token_bounds[k + 1]
                tokens_k = SlotTokens(cps, starts[ta:tb], ends[ta:tb], tok_hashes[ta:tb], flags[ta:tb], breaks[ta:tb],
                                      int(base), self.classes)
                slots[row] = NameSlots(tokens_k, _older_reader(tokens_k, groups, k))
            a, b = bounds[k], bounds[k + 1]
            if a == b:
                continue
            out[row] = (entries[a:b], starts[tokens[a:b]] - base, name_ends[tokens[a:b]] - base)

    def minhash(self, shingles: npt.NDArray[np.uint64], offsets: npt.NDArray[np.int64]) -> npt.NDArray[np.uint32]:
        """Signatures (one row per document) of distinct shingle hashes, in the configured family."""
        if self.config.minhash_family == "permutations":
            return kmin.minhash_batch(shingles, offsets, self.a, self.b)
        return kmin.one_permutation_batch(shingles, offsets, self.config.num_perm, self.config.seed)

    def _token_spans(self, tokenizer: Tokenizer, cps: npt.NDArray[np.uint32], offsets: npt.NDArray[np.int64],
                     texts: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(starts, ends, doc offsets) of the SimHash tokens of a group of texts of one tokeniser."""
        if tokenizer is Tokenizer.WORDS:
            return ktext.word_spans(cps, offsets, self.classes)
        if tokenizer is Tokenizer.CHARACTERS:
            return ktext.char_bigram_spans(cps, offsets, self.classes)
        if self.config.segment_hmm:  # jieba's HMM for unknown words needs the Rust segmenter
            starts, ends, tok_off = _zh_token_spans(texts, offsets, True)
        else:  # jieba's dictionary cut, in a kernel: the same tokens, no Python object per token
            starts, ends, tok_off = self.segmenter.spans(cps, offsets)
        return ktext.keep_word_spans(cps, starts, ends, tok_off, self.classes)

    def encode_signature(self, fps: Fingerprints, i: int) -> bytes:
        """Row ``i``'s signature in the stored format (its language's shingle kind and size)."""
        cfg = self.config
        size = cfg.en_shingle if tokenizer_of(fps.langs[i]) is Tokenizer.WORDS else cfg.zh_shingle
        return encode_signature(fps.signatures[i], fps.shingle_kind[i], size, cfg.seed, cfg.signature_bits,
                                cfg.minhash_family)
