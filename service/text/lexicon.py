"""Domain lexicon and the token weight table (IDF x domain weight) the SimHash kernel reads."""

from __future__ import annotations

import hashlib
import importlib.util
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from neardup.kernels.hashing import hash_spans
from neardup.text.cache import cached_arrays

DATA = Path(__file__).resolve().parent / "data"
DEFAULT_LEXICON = DATA / "lexicon.yaml"
TOKEN_SEED = 0
NEGATOR_FLAG = 1


def jieba_idf_path() -> Path:
    """The IDF table jieba ships (``jieba/analyse/idf.txt``), found without importing
    ``jieba.analyse`` (which loads jieba's part-of-speech tables: seconds of start-up)."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("jieba is not installed")
    return Path(spec.origin).resolve().parent / "analyse" / "idf.txt"


@dataclass(frozen=True)
class Lexicon:
    """The domain word lists: template words, decision words, stop words, negators, polarity pairs."""
    template: frozenset[str]
    decision: frozenset[str]
    stopwords: frozenset[str]
    negators_zh: tuple[str, ...]
    negators_en: tuple[str, ...]
    affirmators_zh: tuple[str, ...]
    polarity: dict[str, tuple[str, str]]  # word -> (class, sign)
    template_weight: float
    decision_weight: float
    negation_weight: float


_LEXICONS: dict[tuple[str, int, int], Lexicon] = {}  # (path, mtime, size) -> the lexicon read from it


def load_lexicon(path: str | Path | None = None) -> Lexicon:
    """The lexicon in ``path`` (YAML or TOML), or the bundled ``data/lexicon.yaml``: read once
    while the file is unchanged (an engine asks for it four times as it opens; a Lexicon is frozen)."""
    p = Path(path) if path else DEFAULT_LEXICON
    stat = p.stat()
    key = (str(p), stat.st_mtime_ns, stat.st_size)
    if key not in _LEXICONS:
        _LEXICONS[key] = _read_lexicon(p)
    return _LEXICONS[key]


def _read_lexicon(p: Path) -> Lexicon:
    text = p.read_text(encoding="utf-8")
    # libyaml's loader where PyYAML has it: the same documents, a tenth of the time
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data: dict[str, Any] = tomllib.loads(text) if p.suffix == ".toml" else yaml.load(text, Loader=loader)
    weights = data.get("weights", {})
    polarity: dict[str, tuple[str, str]] = {}
    for cls, signs in (data.get("polarity") or {}).items():
        for sign, words in signs.items():
            for w in words:
                polarity[str(w).lower()] = (cls, str(sign))
    neg = data.get("negators") or {}
    return Lexicon(
        template=frozenset(map(str, data.get("template_words", []))),
        decision=frozenset(map(str, data.get("decision_words", []))),
        stopwords=frozenset(str(w).lower() for w in data.get("stopwords", [])),
        negators_zh=tuple(map(str, neg.get("zh", []))),
        negators_en=tuple(map(str, neg.get("en", []))),
        affirmators_zh=tuple(map(str, (data.get("affirmators") or {}).get("zh", []))),
        polarity=polarity,
        template_weight=float(weights.get("template", 0.2)),
        decision_weight=float(weights.get("decision", 3.0)),
        negation_weight=float(weights.get("negation", 4.0)),
    )


def hash_words(words: list[str]) -> npt.NDArray[np.uint64]:
    """The same 64-bit hash the kernels give a token with these code points."""
    if not words:
        return np.zeros(0, dtype=np.uint64)
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    cps = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint32)
    out: npt.NDArray[np.uint64] = hash_spans(cps, starts, ends, TOKEN_SEED)
    return out


def in_sorted(values: npt.NDArray[np.uint64], table: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
    """``np.isin(values, table)`` for a sorted ``table`` (token hashes, a profile's entries or
    their contexts): one binary search a value, where ``isin`` sorts both arrays again on every call."""
    if not len(table):
        return np.zeros(len(values), dtype=np.bool_)
    at = np.minimum(np.searchsorted(table, values), len(table) - 1)
    return np.asarray(table[at] == values)


def read_idf(path: str | Path) -> dict[str, float]:
    """An IDF table, one ``word idf`` per line; other lines are skipped."""
    idf: dict[str, float] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                try:
                    idf[parts[0].lower()] = float(parts[1])
                except ValueError:
                    continue
    return idf


@dataclass(frozen=True)
class WeightTable:
    """SimHash feature weights by token hash (IDF x domain weight), sorted for the kernels' lookups."""
    keys: npt.NDArray[np.uint64]  # sorted token hashes
    weights: npt.NDArray[np.float64]
    flags: npt.NDArray[np.uint8]
    default_weight: float
    negation_weight: float
    digest: str  # identifies the table in evidence and caches


@lru_cache(maxsize=4)
def weight_table(idf_path: str | None = None, lexicon_path: str | None = None) -> WeightTable:
    """The weight table from an IDF table and a lexicon (defaults: jieba's and the bundled), cached on disk."""
    lex = load_lexicon(lexicon_path)
    src = Path(idf_path) if idf_path else jieba_idf_path()
    digest = hashlib.sha1(src.read_bytes() + (Path(lexicon_path) if lexicon_path else DEFAULT_LEXICON)
                          .read_bytes()).hexdigest()[:12]

    def build() -> dict[str, npt.NDArray[np.generic]]:
        return _build_weights(lex, src)

    z = cached_arrays(f"weights-{digest}", build)
    return WeightTable(z["keys"].astype(np.uint64, copy=False), z["weights"].astype(np.float64, copy=False),
                       z["flags"].astype(np.uint8, copy=False), float(z["default"]), lex.negation_weight, digest)


def weight_table_of(lex: Lexicon, idf_path: str | None = None) -> WeightTable:
    """The weight table of an in-memory lexicon (a learned model's), cached on disk by its content."""
    src = Path(idf_path) if idf_path else jieba_idf_path()
    words = repr((sorted(lex.template), sorted(lex.decision), sorted(lex.stopwords), lex.negators_zh,
                  lex.negators_en, lex.template_weight, lex.decision_weight)).encode()
    digest = hashlib.sha1(src.read_bytes() + words).hexdigest()[:12]
    z = cached_arrays(f"weights-{digest}", lambda: _build_weights(lex, src))
    return WeightTable(z["keys"].astype(np.uint64, copy=False), z["weights"].astype(np.float64, copy=False),
                       z["flags"].astype(np.uint8, copy=False), float(z["default"]), lex.negation_weight, digest)


def _build_weights(lex: Lexicon, src: Path) -> dict[str, npt.NDArray[np.generic]]:
    idf = read_idf(src)
    default = float(np.median(np.fromiter(idf.values(), dtype=np.float64))) if idf else 1.0
    for w in lex.template:
        idf[w] = idf.get(w, default) * lex.template_weight
    for w in lex.decision:
        idf[w] = idf.get(w, default) * lex.decision_weight
    for w in lex.stopwords:
        idf[w] = 0.0
    negators = set(lex.negators_zh) | set(lex.negators_en)
    for w in negators:
        idf[w] = 0.0  # negators count through the (negator, word) feature, not alone
    words = list(idf)
    hashes = hash_words(words)
    weights = np.fromiter((idf[w] for w in words), dtype=np.float64, count=len(words))
    flags = np.fromiter((NEGATOR_FLAG if w in negators else 0 for w in words), dtype=np.uint8, count=len(words))
    order = np.argsort(hashes, kind="stable")
    return {"keys": hashes[order], "weights": weights[order], "flags": flags[order],
            "default": np.array(default)}
