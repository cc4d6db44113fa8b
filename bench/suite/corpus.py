"""The benchmarks' documents: the development set's Chinese texts, then documents made from them.

Document ``k`` of a :class:`Corpus` is a pure function of (the source texts, the seed, ``k``):

- ``k`` below the number of source texts: source text ``k`` itself;
- after that, with probability ``dup_share`` (0.3), an *edited copy* of an earlier original (a
  source text or a mixed document): one sentence dropped, two neighbouring sentences swapped, a
  source line added at the top and an editor line at the bottom, as crawled reprints look: a
  near-duplicate;
- otherwise a *mixed* document: sentences drawn at random from all the source texts until it is
  as long as a randomly chosen source text: a new, unique document of realistic length and
  vocabulary.

The source texts are read from the file given, else from ``../shared/datasets/docs.jsonl`` (the
development set, never copied into the repository), else from the bundled sample.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from neardup.errors import InputError

_PACKAGE = Path(__file__).resolve().parent
DEFAULT_SOURCES = (
    _PACKAGE.parents[2] / "shared" / "datasets" / "docs.jsonl",
    Path.cwd().parent / "shared" / "datasets" / "docs.jsonl",
    _PACKAGE.parents[1] / "samples" / "sample.jsonl",
)
_SENTENCE = re.compile(r"[^。！？；!?\n]+[。！？；!?\n]*")
_SITES = ("新华网", "人民网", "中新网", "央视网", "光明网", "中国网", "澎湃新闻", "新浪网")
_EDITORS = ("张伟", "王芳", "李娜", "刘洋", "陈静", "杨帆", "赵磊", "黄敏")


def _is_chinese(obj: dict[str, object], text: str) -> bool:
    lang = obj.get("lang")
    if isinstance(lang, str):
        return lang == "zh"
    return any("\u4e00" <= c <= "\u9fff" for c in text[:50])


def find_source(path: Path | None) -> Path:
    """``path``, or the first default source that exists; :class:`InputError` if none does."""
    for p in (path,) if path else DEFAULT_SOURCES:
        if p is not None and p.is_file():
            return p
    raise InputError("no benchmark documents found", hint="pass --docs FILE.jsonl (objects with a Chinese 'text')")


def load_chinese_texts(path: Path | None, max_bytes: int | None = None) -> tuple[Path, list[str]]:
    """(the file read, its Chinese texts), each cut to ``max_bytes`` UTF-8 bytes when given."""
    source = find_source(path)
    texts: list[str] = []
    with source.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            obj = json.loads(line)
            text = obj.get("text") if isinstance(obj, dict) else None
            if not isinstance(text, str) or not _is_chinese(obj, text):
                continue
            if max_bytes is not None:
                text = text.encode("utf-8")[:max_bytes].decode("utf-8", "ignore")
            texts.append(text)
    if not texts:
        raise InputError(f"{source}: no Chinese documents", hint="pass --docs FILE.jsonl with Chinese texts")
    return source, texts


def sentences(text: str) -> list[str]:
    """``text`` cut after each Chinese or Latin sentence end and line break."""
    return [s for s in _SENTENCE.findall(text) if s.strip()]


def reprint(text: str, rng: random.Random) -> str:
    """An edited copy of ``text`` as crawled reprints look: one sentence dropped, two neighbouring
    sentences swapped (with four or more), a source line added at the top and an editor line at
    the bottom."""
    parts = sentences(text)
    if len(parts) >= 4:
        del parts[rng.randrange(len(parts))]
        i = rng.randrange(len(parts) - 1)
        parts[i], parts[i + 1] = parts[i + 1], parts[i]
    head = f"（来源：{rng.choice(_SITES)}）"
    tail = f"（责任编辑：{rng.choice(_EDITORS)}）"
    return head + "".join(parts) + tail


@dataclass(frozen=True, slots=True)
class BenchDoc:
    """One benchmark document: id, text, and how it was made (``source``, ``copy`` or ``mixed``)."""

    id: str
    text: str
    kind: str

    def json_line(self, **extra: object) -> str:
        """The document as one JSONL line (``lang`` zh, ``type`` news, plus ``extra`` fields)."""
        return json.dumps({"id": self.id, "text": self.text, "lang": "zh", "type": "news", **extra},
                          ensure_ascii=False)


class Corpus:
    """Documents ``0, 1, 2, ...`` made from ``texts`` (see the module docstring)."""

    def __init__(self, texts: list[str], seed: int = 1, dup_share: float = 0.3, id_prefix: str = "b") -> None:
        """``id_prefix`` starts every id (a run-specific prefix keeps runs against one store apart)."""
        self.texts = texts
        self.seed = seed
        self.dup_share = dup_share
        self.id_prefix = id_prefix
        self._pool = [s for t in texts for s in sentences(t)]
        self._lengths = [len(t) for t in texts]

    def _rng(self, k: int) -> random.Random:
        return random.Random(self.seed * 1_000_003 + k)

    def _is_copy(self, k: int) -> bool:
        return k >= len(self.texts) and self._rng(k).random() < self.dup_share

    def _original(self, k: int) -> str:
        if k < len(self.texts):
            return self.texts[k]
        rng = self._rng(k)
        rng.random()  # the draw that made it an original
        target = rng.choice(self._lengths)
        parts: list[str] = []
        length = 0
        while length < target:
            s = rng.choice(self._pool)
            parts.append(s)
            length += len(s)
        return "".join(parts)

    def _base(self, k: int) -> int:
        """The earlier document copy ``k`` was made from (itself possibly a copy)."""
        rng = self._rng(k)
        rng.random()
        return rng.randrange(k)

    def _copy(self, k: int) -> str:
        rng = self._rng(k)
        rng.random()
        j = rng.randrange(k)
        while self._is_copy(j):  # copies are made of originals: follow the chain down
            j = self._base(j)
        return reprint(self._original(j), rng)

    def doc(self, k: int) -> BenchDoc:
        """Document ``k``."""
        if self._is_copy(k):
            return BenchDoc(f"{self.id_prefix}{k:07d}", self._copy(k), "copy")
        kind = "source" if k < len(self.texts) else "mixed"
        return BenchDoc(f"{self.id_prefix}{k:07d}", self._original(k), kind)

    def docs(self, start: int, n: int) -> Iterator[BenchDoc]:
        """Documents ``start .. start + n - 1``."""
        for k in range(start, start + n):
            yield self.doc(k)


def write_jsonl(path: Path, docs: list[BenchDoc]) -> int:
    """Write ``docs`` as JSONL; returns the bytes of text written (UTF-8)."""
    total = 0
    with path.open("w", encoding="utf-8") as fh:
        for d in docs:
            fh.write(d.json_line() + "\n")
            total += len(d.text.encode("utf-8"))
    return total
