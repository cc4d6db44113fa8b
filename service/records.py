"""Reading documents from and writing records to files for the CLI: JSONL (``-`` is stdin/stdout).

Input records come out as :class:`InputRecord` (the raw bytes of a JSONL line, or a mapping),
ready for ``parse_document``; a field map renames the input's id and text fields. Output writers
take one JSON-able mapping per record.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, Protocol

from neardup.errors import InputError


class Format(StrEnum):
    """File formats the CLI reads and writes."""

    JSONL = "jsonl"


SUFFIXES = {".jsonl": Format.JSONL, ".json": Format.JSONL, ".ndjson": Format.JSONL}


def format_for(path: str, given: Format | None = None) -> Format:
    """The format named by ``given``, else by the file's extension; ``-`` and unknown extensions are JSONL."""
    if given is not None:
        return given
    if path == "-":
        return Format.JSONL
    return SUFFIXES.get(Path(path).suffix.lower(), Format.JSONL)


@dataclass(frozen=True, slots=True)
class FieldMap:
    """Which input fields hold the document id and text (renamed to ``id`` and ``text``)."""

    id_field: str = "id"
    text_field: str = "text"

    @property
    def identity(self) -> bool:
        """True when the input already uses ``id`` and ``text``."""
        return self.id_field == "id" and self.text_field == "text"

    def apply(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """``obj`` with the id and text fields renamed; a field already named ``id``/``text`` is replaced."""
        out = {k: v for k, v in obj.items() if k not in (self.id_field, self.text_field, "id", "text")}
        if self.id_field in obj:
            out["id"] = obj[self.id_field]
        if self.text_field in obj:
            out["text"] = obj[self.text_field]
        return out


@dataclass(frozen=True, slots=True)
class InputRecord:
    """One input document before validation: raw bytes (JSONL) or a mapping; ``position`` is its line."""

    position: int
    data: bytes | dict[str, Any]

    def preview(self) -> str:
        """The record as text, for a rejects file."""
        if isinstance(self.data, bytes):
            return self.data.decode("utf-8", "replace")
        return json.dumps(self.data, ensure_ascii=False, default=str)


def check_readable(path: str) -> None:
    """Raise :class:`InputError` (one line) unless ``path`` is ``-`` or a readable file."""
    if path == "-":
        return
    p = Path(path)
    if not p.exists():
        raise InputError(f"input file {path} does not exist", hint="check the path")
    if not p.is_file():
        raise InputError(f"input {path} is not a file", hint="give a file, or - for stdin")


def read_records(path: str, fmt: Format, fields: FieldMap | None = None) -> Iterator[InputRecord]:
    """Every non-blank record of ``path`` in order."""
    fields = fields or FieldMap()
    check_readable(path)
    yield from _read_jsonl(path, fields)


def count_records(path: str, fmt: Format) -> int | None:
    """How many records ``path`` holds (for a progress bar); None for stdin."""
    if path == "-":
        return None
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def _read_jsonl(path: str, fields: FieldMap) -> Iterator[InputRecord]:
    stream = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
    try:
        for n, line in enumerate(stream, 1):
            if not line.strip():
                continue
            raw = line.rstrip(b"\r\n")
            if fields.identity:
                yield InputRecord(n, raw)
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                yield InputRecord(n, raw)  # validation names the reason
                continue
            yield InputRecord(n, fields.apply(obj) if isinstance(obj, dict) else raw)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


class RecordWriter(Protocol):
    """Where output records go, one mapping at a time."""

    def write(self, record: Mapping[str, Any]) -> None:
        """Write one record."""

    def close(self) -> None:
        """Flush and close (stdout is flushed, not closed)."""


class JsonlWriter:
    """One JSON object per line, UTF-8, not ASCII-escaped."""

    def __init__(self, stream: IO[str], owned: bool) -> None:
        self.stream = stream
        self.owned = owned

    def write(self, record: Mapping[str, Any]) -> None:
        """Write one record as a line."""
        self.stream.write(json.dumps(record, ensure_ascii=False) + "\n")

    def close(self) -> None:
        """Close the file (flush stdout)."""
        if self.owned:
            self.stream.close()
        else:
            self.stream.flush()


def open_writer(path: str, fmt: Format | None = None) -> RecordWriter:
    """A writer for ``path`` (``-``: stdout), in ``fmt`` or the format its extension names."""
    if path == "-":
        return JsonlWriter(sys.stdout, owned=False)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return JsonlWriter(open(path, "w", encoding="utf-8"), owned=True)
