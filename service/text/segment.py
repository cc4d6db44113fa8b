"""Chinese word segmentation with jieba's dictionary, inside the kernels (no Python string per
token). ``Segmenter.spans`` equals jieba's ``cut(HMM=False)`` (and rjieba's) token for token; a
test checks it on the development set."""

from __future__ import annotations

import hashlib
import importlib.util
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from neardup.kernels.segment import build_prefix_table, coded_tables, segment_batch, single_char_table, word_codes
from neardup.text.cache import cached_arrays


def jieba_dict_path() -> Path:
    """The dictionary jieba ships (``jieba/dict.txt``), found without importing jieba: its import
    loads the HMM tables (0.13 s of every start-up) that the segmentation kernel does not use."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("jieba is not installed: its dictionary is the segmenter's")
    return Path(spec.origin).resolve().parent / "dict.txt"


@dataclass(frozen=True)
class Segmenter:
    """jieba's dictionary as the tables the segmentation kernel reads (neardup.kernels.segment)."""
    table: npt.NDArray[np.uint64]  # (size, 2): prefix hash, code of its log probability (0: a prefix only)
    single: npt.NDArray[np.int64]  # one-character prefixes of the BMP, direct: their codes (-1: none)
    logs: npt.NDArray[np.float64]  # log(frequency) - log(total) by code
    bloom: npt.NDArray[np.uint64]  # the prefix filter in front of ``table``
    longest: int
    log_total: float

    def spans(self, cps: npt.NDArray[np.uint32], offsets: npt.NDArray[np.int64]) -> tuple[
            npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Token (starts, ends) over ``cps`` and each document's first token index."""
        out: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]] = segment_batch(
            cps, offsets, self.table, self.single, self.logs, self.bloom, self.longest, self.log_total)
        return out

    def frequencies(self, cps: npt.NDArray[np.uint32], starts: npt.NDArray[np.int64],
                    ends: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """Each token's frequency in the dictionary (0: no word of it)."""
        codes = word_codes(cps, starts, ends, self.table)
        return np.where(codes > 0, np.exp(self.logs[codes] + self.log_total), 0.0)

    def cut(self, text: str) -> list[str]:
        """Tokens of one text, as strings (for explanations and IDF building, not the hot path)."""
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint32)
        starts, ends, _ = self.spans(cps, np.array([0, len(text)], dtype=np.int64))
        return [text[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]


def _read_dict(path: Path) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    words: list[str] = []
    freqs: list[int] = []
    total = 0
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.split(" ")
            if len(parts) < 2:
                continue
            word, freq = parts[0].strip(), int(parts[1])
            words.append(word)
            freqs.append(freq)
            total += freq
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    cps = np.frombuffer("".join(words).encode("utf-32-le"), dtype="<u4").astype(np.uint32)
    return cps, offsets, np.asarray(freqs, dtype=np.int64), total


@lru_cache(maxsize=2)
def segmenter(dict_path: str | None = None) -> Segmenter:
    """The segmenter for a jieba dictionary (default: jieba's own), built once and cached on disk."""
    path = Path(dict_path) if dict_path else jieba_dict_path()
    digest = hashlib.sha1(path.read_bytes()).hexdigest()[:12]

    def build() -> dict[str, npt.NDArray[np.generic]]:
        cps, offsets, freqs, total = _read_dict(path)
        table, longest = build_prefix_table(cps, offsets, freqs)
        coded, logs, bloom = coded_tables(table, math.log(total))
        return {"table": coded, "logs": logs, "bloom": bloom, "longest": np.array(longest),
                "log_total": np.array(math.log(total))}

    # the coded table, its log probabilities and the prefix filter are built once and cached with it
    z = cached_arrays(f"segdict3-{digest}", build)
    table = z["table"].astype(np.uint64, copy=False)
    return Segmenter(table, single_char_table(table), z["logs"].astype(np.float64, copy=False),
                     z["bloom"].astype(np.uint64, copy=False), int(z["longest"]), float(z["log_total"]))
