"""Reviewer feedback records: their types, validation, and where they are written (JSONL, Kafka).

One record per line (JSONL) or per Kafka message, in one of two shapes:

* a pair judged: ``{"a": ID, "b": ID, "is_duplicate": true|false}``: whether document ``b``
  is a near-duplicate of document ``a`` (the order is kept, the judgement is symmetric);
* a decision judged: ``{"id": ID, "correct": true|false}``: whether the decision recorded for
  document ``id`` (in the store or a decisions file) was right.

Both may carry ``reviewer`` and ``note`` (strings) and ``at`` (ISO-8601 time with a zone offset;
the writers here always set it, hand-written files may leave it out). Ids are non-empty strings
(integers are taken as their decimal text, as ``parse_document`` does). Any other field, a
missing field, or a field of the wrong type is an error: :class:`FeedbackError` says which, in
one line. Records are append-only: a later record about the same pair or decision supersedes
an earlier one.
"""

from __future__ import annotations

import json
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from neardup.errors import InputError, NeardupError

_COMMON = frozenset({"reviewer", "note", "at"})
_PAIR = frozenset({"a", "b", "is_duplicate"})
_DECISION = frozenset({"id", "correct"})


class FeedbackError(InputError):
    """A feedback record that cannot be read; the message is one line naming the problem."""


class FeedbackSinkError(NeardupError, RuntimeError):
    """A record could not be stored; it was not written (the caller may retry)."""

    reason = "feedback_not_stored"


def utc_now() -> datetime:
    """The current time, UTC, to the millisecond (the resolution written to records)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


@dataclass(frozen=True, kw_only=True)
class FeedbackRecord(ABC):
    """What every feedback record carries; the records are :class:`PairFeedback` and :class:`DecisionFeedback`."""

    at: datetime | None = None
    reviewer: str | None = None
    note: str | None = None

    @abstractmethod
    def key(self) -> str:
        """The document id the record is about (``b`` of a pair): the Kafka message key."""

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object; optional fields that are unset are left out."""
        out = self._fields()
        if self.reviewer is not None:
            out["reviewer"] = self.reviewer
        if self.note is not None:
            out["note"] = self.note
        if self.at is not None:
            out["at"] = self.at.isoformat(timespec="milliseconds")
        return out

    def to_line(self) -> str:
        """One JSONL line (with its newline), UTF-8 text not ASCII-escaped."""
        return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"

    @abstractmethod
    def _fields(self) -> dict[str, Any]:
        """The shape's own fields, first in the JSON object."""


@dataclass(frozen=True, kw_only=True)
class PairFeedback(FeedbackRecord):
    """A reviewer's label for a pair of documents: is ``b`` a near-duplicate of ``a``?"""

    a: str
    b: str
    is_duplicate: bool

    def key(self) -> str:
        """The later document of the pair."""
        return self.b

    def _fields(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "is_duplicate": self.is_duplicate}


@dataclass(frozen=True, kw_only=True)
class DecisionFeedback(FeedbackRecord):
    """A reviewer's verdict on the decision recorded for document ``id``."""

    id: str
    correct: bool

    def key(self) -> str:
        """The document whose decision was judged."""
        return self.id

    def _fields(self) -> dict[str, Any]:
        return {"id": self.id, "correct": self.correct}


# --------------------------------------------------------------------------- reading


def parse_feedback(line: str | bytes | Mapping[str, Any]) -> FeedbackRecord:
    """Validate one record (a JSONL line or an already decoded object).

    Raises :class:`FeedbackError` with a one-line reason for anything but a well-formed record.
    """
    obj = _decode(line) if isinstance(line, str | bytes) else line
    if not isinstance(obj, Mapping):
        raise FeedbackError(f"expected a JSON object, got {type(obj).__name__}")
    keys = set(obj)
    unknown = keys - _PAIR - _DECISION - _COMMON
    if unknown:
        raise FeedbackError(f"unknown field(s) {', '.join(sorted(map(repr, unknown)))}")
    at, reviewer, note = _time(obj.get("at")), _text(obj, "reviewer"), _text(obj, "note")
    if keys & _PAIR and keys & _DECISION:
        raise FeedbackError("a record judges either a pair (a, b, is_duplicate) or a decision (id, correct), not both")
    if keys & _PAIR:
        a, b = _id(obj, "a"), _id(obj, "b")
        if a == b:
            raise FeedbackError(f"a pair needs two different documents, got a = b = {a!r}")
        return PairFeedback(a=a, b=b, is_duplicate=_flag(obj, "is_duplicate"), at=at, reviewer=reviewer, note=note)
    if keys & _DECISION:
        return DecisionFeedback(id=_id(obj, "id"), correct=_flag(obj, "correct"), at=at, reviewer=reviewer, note=note)
    raise FeedbackError("expected a pair {a, b, is_duplicate} or a decision {id, correct}")


FEEDBACK_FORMAT = ('one record a line (JSONL; or CSV / Parquet with these columns): {"a": ID, "b": ID, '
                   '"is_duplicate": true|false} or {"id": ID, "correct": true|false}, optional "reviewer", '
                   '"note", "at" (ISO-8601 with a zone offset)')


def read_feedback(path: str | Path) -> Iterator[FeedbackRecord]:
    """Every record of a JSONL, CSV or Parquet file (:func:`neardup.files.records.read_rows`), in
    order; blank lines are skipped.

    A bad record stops the reading with :class:`FeedbackError` ``"PATH line N: reason"``: feedback
    is never skipped silently.
    """
    from neardup.files.records import read_rows, text_flag

    for row in read_rows(path, error=FeedbackError, hint=FEEDBACK_FORMAT):
        obj = row.data
        if row.text_cells:  # CSV: the flags are text
            obj = {k: text_flag(v) if k in ("is_duplicate", "correct") else v for k, v in obj.items()}
        try:
            yield parse_feedback(obj)
        except FeedbackError as exc:
            raise FeedbackError(f"{row.where}: {exc}", hint=FEEDBACK_FORMAT) from None


def _decode(line: str | bytes) -> Any:
    try:  # bytes are UTF-8 (json.loads would also guess UTF-16 and UTF-32)
        return json.loads(line.decode("utf-8") if isinstance(line, bytes) else line)
    except UnicodeDecodeError as exc:
        raise FeedbackError(f"not UTF-8 at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise FeedbackError(f"not JSON: {exc.msg} at column {exc.colno}") from None


def _id(obj: Mapping[str, Any], name: str) -> str:
    if name not in obj:
        raise FeedbackError(f"field {name!r} is missing")
    value = obj[name]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # the same ids parse_document accepts
    if not isinstance(value, str) or not value.strip():
        raise FeedbackError(f"field {name!r} must be a non-empty string id, got {value!r}")
    return value


def _flag(obj: Mapping[str, Any], name: str) -> bool:
    if name not in obj:
        raise FeedbackError(f"field {name!r} is missing")
    value = obj[name]
    if not isinstance(value, bool):
        raise FeedbackError(f"field {name!r} must be true or false, got {value!r}")
    return value


def _text(obj: Mapping[str, Any], name: str) -> str | None:
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise FeedbackError(f"field {name!r} must be a string, got {value!r}")
    return value


def _time(value: Any) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise FeedbackError(f"field 'at' must be an ISO-8601 time, got {value!r}")
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        raise FeedbackError(f"field 'at' must be an ISO-8601 time, got {value!r}") from None
    if at.tzinfo is None:
        raise FeedbackError(f"field 'at' needs a zone offset such as Z or +08:00, got {value!r}")
    return at


# --------------------------------------------------------------------------- writing


class FeedbackSink(Protocol):
    """Where reviewed records go. ``write`` returns once the record is durable, or raises
    :class:`FeedbackSinkError` (the record was then not stored). Safe to call from several threads."""

    def write(self, record: FeedbackRecord) -> None:
        """Store one record durably."""

    def describe(self) -> str:
        """Where records go, for people (a path or a topic on a broker; no secrets)."""

    def close(self) -> None:
        """Release the file or connection; later writes fail."""


@dataclass
class FileFeedbackSink:
    """Appends records to a JSONL file, one fsync per record: an acknowledged record survives a
    crash or a power cut. The file and its folder are created when missing."""

    path: Path
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _fd: int | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        """Create the file and its folder when missing, and open it for appending."""
        self.path = Path(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if created:  # the new directory entry must survive a crash too
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    def write(self, record: FeedbackRecord) -> None:
        """Append one line and fsync it before returning."""
        data = record.to_line().encode("utf-8")
        with self._lock:
            if self._fd is None:
                raise FeedbackSinkError(f"{self.path}: the feedback file is closed")
            try:
                # O_APPEND and one write call: concurrent writers never interleave within a line
                written = os.write(self._fd, data)
                if written != len(data):
                    raise FeedbackSinkError(f"{self.path}: short write ({written} of {len(data)} bytes)")
                os.fsync(self._fd)
            except OSError as exc:
                raise FeedbackSinkError(f"{self.path}: {exc.strerror or exc}") from exc

    def describe(self) -> str:
        """The file's path."""
        return str(self.path)

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
