"""Reading documents from and writing records to files for the CLI: JSONL, CSV and Parquet.

The format is the one given (``--format``) or the one the file's extension names (``.jsonl``,
``.csv``, ``.parquet``); ``-`` is stdin/stdout in JSONL. Input records come out as
:class:`InputRecord` (the raw bytes of a JSONL line, or a mapping for a CSV or Parquet row), ready
for ``parse_document``; a :class:`FieldMap` renames the input's id and text fields. Output writers
take one JSON-able mapping per record.

Tabular outputs (CSV, Parquet) take their columns from the first record written; nested values
(the evidence) are JSON text. A later record with a field outside those columns is an
:class:`InputError`, not a silently dropped field. Parquet needs the ``parquet`` extra (pyarrow).

Every output is strict JSON (``allow_nan=False``): input holding ``NaN`` or ``Infinity`` is
rejected (``bad_json``) before it could be echoed. A regular output file is written to a temporary
file and renamed into place by ``close`` (:mod:`neardup.files.outputs`); ``abort`` leaves the earlier
file as it was. A UTF-8 byte-order mark at the start of a JSONL or CSV file is skipped.
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import decimal
import io
import json
import sys
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, Protocol

from neardup.document import Document, loads_strict
from neardup.errors import InputError
from neardup.files.outputs import STDIO, OutputFile
from neardup.media.hashes import ImageLimits
from neardup.storage.extras import require_extra

PARQUET_ROWS = 1000  # rows per batch read and per row group written
BOM = b"\xef\xbb\xbf"  # UTF-8 byte-order mark, written by some Windows tools


class Format(StrEnum):
    """File formats the CLI reads and writes."""

    JSONL = "jsonl"
    CSV = "csv"
    PARQUET = "parquet"


SUFFIXES = {
    ".jsonl": Format.JSONL,
    ".json": Format.JSONL,
    ".ndjson": Format.JSONL,
    ".csv": Format.CSV,
    ".parquet": Format.PARQUET,
    ".pq": Format.PARQUET,
}


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

    def clash(self, obj: Mapping[str, Any]) -> str | None:
        """Why ``obj`` cannot be renamed (it also has a field named ``id`` or ``text``), else None."""
        for given, name in ((self.id_field, "id"), (self.text_field, "text")):
            if given != name and name in obj:
                return f"has both {given!r} (the {name} field) and a field named {name!r}"
        return None

    def apply(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """``obj`` with the id and text fields renamed to ``id`` and ``text`` (see :meth:`clash`)."""
        if self.identity:
            return dict(obj)
        names = {self.id_field: "id", self.text_field: "text"}
        return {names.get(k, k): v for k, v in obj.items()}

    def restore(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """An output record with the input's own names for the id and text fields."""
        if self.identity:
            return dict(record)
        names = {"id": self.id_field, "text": self.text_field}
        return {names.get(k, k): v for k, v in record.items()}

    def record(self, position: int, obj: dict[str, Any], problem: tuple[str, str] | None = None) -> InputRecord:
        """An :class:`InputRecord` of ``obj`` renamed, or of ``obj`` as it is with the clash as its problem."""
        why = self.clash(obj)
        if why is not None:
            return InputRecord(position, obj, problem or ("bad_field", why))
        return InputRecord(position, self.apply(obj), problem)


@dataclass(frozen=True, slots=True)
class InputRecord:
    """One input document before validation.

    ``data``: raw bytes (JSONL) or a mapping (CSV, Parquet); ``position``: its line (JSONL, CSV) or
    row (Parquet), 1-based; ``problem``: (reason, detail) when the reader already knows the record
    is malformed (a CSV row with more cells than the header).
    """

    position: int
    data: bytes | dict[str, Any]
    problem: tuple[str, str] | None = None

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
    if fmt is Format.CSV:
        yield from _read_csv(path, fields)
    elif fmt is Format.PARQUET:
        yield from _read_parquet(path, fields)
    else:
        yield from _read_jsonl(path, fields)


def count_records(path: str, fmt: Format) -> int | None:
    """How many records ``path`` holds (for a progress bar); None for stdin."""
    if path == "-":
        return None
    if fmt is Format.PARQUET:
        return int(_parquet_file(path).metadata.num_rows)
    if fmt is Format.CSV:
        return sum(1 for _ in read_records(path, fmt))
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def _read_jsonl(path: str, fields: FieldMap) -> Iterator[InputRecord]:
    stream = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
    try:
        for n, line in enumerate(stream, 1):
            if n == 1 and line.startswith(BOM):
                line = line[len(BOM):]
            if not line.strip():
                continue
            raw = line.rstrip(b"\r\n")
            if fields.identity:
                yield InputRecord(n, raw)
                continue
            try:
                obj = loads_strict(raw)
            except ValueError:
                yield InputRecord(n, raw)  # validation names the reason
                continue
            yield fields.record(n, obj) if isinstance(obj, dict) else InputRecord(n, raw)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _read_csv(path: str, fields: FieldMap) -> Iterator[InputRecord]:
    # utf-8-sig: a byte-order mark is skipped, on stdin too
    stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", newline="") if path == "-" else \
        open(path, encoding="utf-8-sig", newline="")  # noqa: SIM115
    try:
        reader = csv.DictReader(stream, restkey="\x00extra")
        if reader.fieldnames is None:
            return
        for row in reader:
            extra = row.pop("\x00extra", None)
            # empty cells are absent fields (so optional fields stay optional)
            obj = {k: v for k, v in row.items() if v not in (None, "")}
            problem = None
            if extra:
                problem = ("bad_schema", f"row has {len(reader.fieldnames) + len(extra)} cells, "
                                         f"the header {len(reader.fieldnames)}")  # fmt: skip
            yield fields.record(reader.line_num, obj, problem)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text at byte {exc.start}", hint="convert the CSV file to UTF-8") from exc
    except csv.Error as exc:
        raise InputError(f"{path}: not a readable CSV file: {exc}", hint="check the file") from exc
    finally:
        if path == "-":
            stream.detach()  # leave sys.stdin open
        else:
            stream.close()


def _parquet_file(path: str) -> Any:
    require_extra("pyarrow", "parquet", "Parquet files")
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path == "-":
        raise InputError("Parquet cannot be read from stdin", hint="give the file's path")
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a readable Parquet file: {exc}", hint="check the file or --format") from exc


def _read_parquet(path: str, fields: FieldMap) -> Iterator[InputRecord]:
    position = 0
    for batch in _parquet_file(path).iter_batches(batch_size=PARQUET_ROWS):
        for row in batch.to_pylist():
            position += 1
            obj = {k: to_json_value(v) for k, v in row.items() if v is not None}
            yield fields.record(position, obj)


def parquet_temporal_types(path: str) -> dict[str, Any]:
    """The Parquet file's timestamp, date, time and duration columns and their Arrow types, so that
    a Parquet output writes them back as what they were (they travel through the engine as JSON
    values, :func:`to_json_value`); empty for anything but a readable Parquet file."""
    import pyarrow as pa

    schema = _parquet_file(path).schema_arrow
    temporal = (pa.types.is_timestamp, pa.types.is_date, pa.types.is_time, pa.types.is_duration)
    return {f.name: f.type for f in schema if any(is_type(f.type) for is_type in temporal)}


def from_json_value(value: Any, arrow_type: Any) -> Any:
    """Inverse of :func:`to_json_value` for a temporal Arrow type: the ISO-8601 text (seconds for a
    duration) as a datetime, date, time or timedelta; a value that does not read back is returned as it is."""
    import pyarrow as pa

    try:
        if pa.types.is_timestamp(arrow_type) and isinstance(value, str):
            at = dt.datetime.fromisoformat(value)
            if arrow_type.tz is None and at.tzinfo is not None:  # read as UTC by to_json_value
                at = at.astimezone(dt.UTC).replace(tzinfo=None)
            return at
        if pa.types.is_date(arrow_type) and isinstance(value, str):
            return dt.date.fromisoformat(value)
        if pa.types.is_time(arrow_type) and isinstance(value, str):
            return dt.time.fromisoformat(value)
        if pa.types.is_duration(arrow_type) and isinstance(value, int | float) and not isinstance(value, bool):
            return dt.timedelta(seconds=value)
    except ValueError:
        return value
    return value


def to_json_value(value: Any) -> Any:
    """A Parquet cell as a JSON value: timestamps as ISO-8601 (naive ones taken as UTC), bytes as
    UTF-8 text (base64 when not UTF-8), decimals as numbers, nested lists and maps recursively."""
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        # pyarrow gives maps as lists of (key, value) pairs
        return [to_json_value(v) for v in value]
    return value


# --------------------------------------------------------------------------- strict readers
# What every command but ``dedup`` reads (documents, labelled pairs, feedback, decisions): any
# format ``dedup`` reads, and a record that cannot be used stops the command with one line naming
# the file, the line (a Parquet file: the row) and the problem. ``dedup`` rejects such a record instead.


@dataclass(frozen=True, slots=True)
class Row:
    """One record of a file read strictly: its fields, where it is, and whether its values are text."""

    where: str  # "PATH line N" (JSONL, CSV) or "PATH row N" (Parquet), for messages
    position: int  # that N
    data: dict[str, Any]
    text_cells: bool = False  # a CSV row: every value is text (numbers and flags are read by the caller)


def read_rows(path: str | Path, fmt: Format | None = None, *, error: type[InputError] = InputError,
              hint: str | None = None) -> Iterator[Row]:
    """Every non-blank record of ``path`` (JSONL, CSV or Parquet, by ``fmt`` or the extension) as a
    :class:`Row`; a file that is missing or unreadable, or a record that is not an object, raises
    ``error`` (an :class:`InputError` class) in one line with ``hint``."""
    name = str(path)
    if name != "-" and not Path(name).is_file():
        raise error(f"{name}: no such file", hint=hint or "check the path")
    fmt = format_for(name, fmt)
    unit = "row" if fmt is Format.PARQUET else "line"
    try:
        for rec in read_records(name, fmt):
            where = f"{name} {unit} {rec.position}"
            if rec.problem is not None:
                raise error(f"{where}: {rec.problem[1]}", hint=hint)
            obj = rec.data if isinstance(rec.data, dict) else _json_object(rec.data, where, error, hint)
            yield Row(where, rec.position, obj, fmt is Format.CSV)
    except InputError as exc:
        if isinstance(exc, error):
            raise
        raise error(str(exc), hint=exc.hint if exc.hint is not None else hint) from exc


def _json_object(raw: bytes, where: str, error: type[InputError], hint: str | None) -> dict[str, Any]:
    try:
        obj = loads_strict(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 text at byte {exc.start}", hint=hint) from None
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not JSON: {exc.msg} at column {exc.colno}", hint=hint) from None
    except (ValueError, RecursionError) as exc:  # NaN, Infinity, nesting beyond the parser's depth
        raise error(f"{where}: not strict JSON: {exc}", hint=hint) from None
    if not isinstance(obj, dict):
        raise error(f"{where}: expected a JSON object, got {type(obj).__name__}", hint=hint)
    return obj


def text_flag(value: Any) -> Any:
    """A CSV cell meant as a flag: ``true`` / ``false`` / ``1`` / ``0`` (any case) as a bool; other values unchanged."""
    if isinstance(value, str):
        flags = {"true": True, "false": False, "1": True, "0": False}
        return flags.get(value.strip().lower(), value)
    return value


def text_id(value: Any) -> str | None:
    """A document id as ``parse_document`` reads it (a string, or an integer as its decimal text), else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) and value else None


def read_documents(path: str | Path, limits: Any = None, *, option: str = "--docs",
                   image_limits: ImageLimits | None = None) -> list[Document]:
    """The documents of ``path``, validated as ``dedup`` validates them (``limits``: the
    ``normalize`` settings; ``image_limits``: the :class:`~neardup.media.hashes.ImageLimits` their
    images are hashed under, the defaults when None); a bad record, a repeated id or no document at
    all is an :class:`InputError` naming the file and line."""
    from neardup.document import InvalidDocument, parse_document

    hint = f"fix or remove that record of {option} (each needs an id and a text)"
    options: dict[str, Any] = {"image_limits": image_limits}
    if limits is not None:
        options.update(max_bytes=limits.max_bytes, max_id_length=limits.max_id_length,
                       naive_time_zone=limits.naive_time_zone)
    docs: list[Document] = []
    first: dict[str, str] = {}
    for row in read_rows(path, hint=hint):
        try:
            doc = parse_document(row.data, **options)
        except InvalidDocument as exc:
            raise InputError(f"{row.where}: {exc}", hint=hint) from None
        if doc.id in first:
            raise InputError(f"{row.where}: id {doc.id!r} appears twice (first: {first[doc.id]})",
                             hint=f"give each document of {option} one id")  # fmt: skip
        first[doc.id] = row.where
        docs.append(doc)
    if not docs:
        raise InputError(f"{path} holds no documents", hint=f"give {option} a file of documents (id, text)")
    return docs


PAIR_HINT = 'each pair: {"a": ID, "b": ID, "label": 0 or 1, "kind": optional} (CSV: columns a, b, label, kind)'


def read_pairs(path: str | Path, ids: Collection[str], *, option: str = "--pairs") -> list[dict[str, Any]]:
    """Labelled pairs ``{"a", "b", "label": 0|1, "kind"}`` of ``path``, each naming two different
    documents of ``ids``; anything else is an :class:`InputError` naming the file and line."""
    pairs = [_pair(row, ids) for row in read_rows(path, hint=PAIR_HINT)]
    if not pairs:
        raise InputError(f"{path} holds no pairs", hint=f"give {option} a file of labelled pairs")
    return pairs


def _pair(row: Row, ids: Collection[str]) -> dict[str, Any]:
    def bad(what: str) -> InputError:
        return InputError(f"{row.where}: {what}", hint=PAIR_HINT)

    obj = row.data
    ends = []
    for key in ("a", "b"):
        v = text_id(obj.get(key))
        if v is None:
            raise bad(f"{key!r} must be a document id, got {obj.get(key)!r}")
        if v not in ids:
            raise bad(f"id {v!r} is not in --docs")
        ends.append(v)
    if ends[0] == ends[1]:
        raise bad("a pair of a document with itself")
    if "label" not in obj:
        raise bad("no 'label' (0: not duplicates, 1: duplicates)")
    label = obj["label"]
    if row.text_cells and isinstance(label, str) and label.strip() in ("0", "1"):
        label = int(label)
    if label not in (0, 1) or isinstance(label, float):
        raise bad(f"'label' must be 0 or 1, got {label!r}")
    kind = obj.get("kind", "")
    return {"a": ends[0], "b": ends[1], "label": int(label), "kind": kind if isinstance(kind, str) else str(kind)}


# --------------------------------------------------------------------------- writers
def dumps(record: Any) -> str:
    """Strict JSON text (never ``NaN`` or ``Infinity``), UTF-8 characters as they are."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False)


class RecordWriter(Protocol):
    """Where output records go, one mapping at a time."""

    def write(self, record: Mapping[str, Any]) -> None:
        """Write one record."""

    def close(self) -> None:
        """Finish the file and put it in place (stdout is flushed, not closed)."""

    def abort(self) -> None:
        """Give up: the earlier file at the path (if any) stays as it was."""


class JsonlWriter:
    """One JSON object per line, UTF-8, not ASCII-escaped."""

    def __init__(self, out: OutputFile) -> None:
        """Write to ``out`` (stdout for ``-``)."""
        self.out = out
        self.stream: IO[str] = sys.stdout if out.path == STDIO else open(out.target, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, record: Mapping[str, Any]) -> None:
        """Write one record as a line."""
        self.stream.write(dumps(record) + "\n")

    def close(self) -> None:
        """Close the file and put it in place (flush stdout)."""
        self._end()
        self.out.commit()

    def abort(self) -> None:
        """Close and remove what was written (a stream keeps it)."""
        self._end()
        self.out.discard()

    def _end(self) -> None:
        if self.stream is sys.stdout:
            self.stream.flush()
        else:
            self.stream.close()


class Columns:
    """The columns of a tabular output, fixed by its first record."""

    def __init__(self, path: str) -> None:
        """``path`` names the output in errors."""
        self.path = path
        self.names: list[str] = []

    def check(self, record: Mapping[str, Any]) -> None:
        """Fix the columns on the first record; later records may leave fields out, never add one."""
        if not self.names:
            self.names = list(record)
            return
        extra = [k for k in record if k not in self.names]
        if extra:
            raise InputError(
                f"{self.path}: record {record.get('id')!r} has field(s) {', '.join(map(repr, extra))} that the "
                f"first record has not, and the columns are fixed by the first record",
                hint="write JSONL output, or give every input record the same fields",
            )


def cell_text(value: Any) -> str:
    """A value as a CSV cell: text as is, nothing for null, JSON for numbers, booleans and nested values."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return dumps(value)


class CsvWriter:
    """CSV with a header row; nested values as JSON text."""

    def __init__(self, out: OutputFile) -> None:
        """Write to ``out``."""
        self.out = out
        self.stream = open(out.target, "w", encoding="utf-8", newline="")  # noqa: SIM115
        self.columns = Columns(out.path)
        self.writer: Any = None

    def write(self, record: Mapping[str, Any]) -> None:
        """Write one row (the header first)."""
        self.columns.check(record)
        if self.writer is None:
            self.writer = csv.writer(self.stream)
            self.writer.writerow(self.columns.names)
        self.writer.writerow([cell_text(record.get(name)) for name in self.columns.names])

    def close(self) -> None:
        """Close the file and put it in place."""
        self.stream.close()
        self.out.commit()

    def abort(self) -> None:
        """Close and remove what was written."""
        self.stream.close()
        self.out.discard()


class ParquetWriter:
    """Parquet, one row group per :data:`PARQUET_ROWS` records; the schema comes from the first group.

    Nested values (the evidence) are JSON text; a column that is empty in the first group is text.
    ``types`` (column -> Arrow type: a Parquet input's timestamps, dates, times and durations,
    :func:`parquet_temporal_types`) are written as those types, not as the text they travelled as.
    """

    def __init__(self, out: OutputFile, types: Mapping[str, Any] | None = None) -> None:
        """Write to ``out``; nothing is written before the first row group."""
        require_extra("pyarrow", "parquet", "Parquet output")
        self.out = out
        self.types = dict(types or {})
        self.columns = Columns(out.path)
        self.rows: list[dict[str, Any]] = []
        self.schema: Any = None
        self.writer: Any = None

    def write(self, record: Mapping[str, Any]) -> None:
        """Buffer one row; write a row group when the buffer is full."""
        self.columns.check(record)
        self.rows.append({k: self._cell(k, v) for k, v in record.items()})
        if len(self.rows) >= PARQUET_ROWS:
            self._flush()

    def _cell(self, name: str, value: Any) -> Any:
        if isinstance(value, dict | list):
            return dumps(value)
        if value is not None and name in self.types:
            return from_json_value(value, self.types[name])
        return value

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self.rows:
            return
        if self.schema is None:
            table = pa.Table.from_pylist(self.rows)
            fields = [f.with_type(self.types[f.name]) if f.name in self.types
                      else f.with_type(pa.string()) if pa.types.is_null(f.type) else f
                      for f in table.schema]  # fmt: skip
            self.schema = pa.schema(fields)
            self.writer = pq.ParquetWriter(self.out.target, self.schema)
        try:
            table = pa.Table.from_pylist(self.rows, schema=self.schema)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise InputError(f"{self.out.path}: a record does not fit the columns' types of the first "
                             f"{PARQUET_ROWS} records: {exc}", hint="write JSONL output") from exc  # fmt: skip
        self.writer.write_table(table)
        self.rows.clear()

    def close(self) -> None:
        """Write what is buffered and the footer, and put the file in place."""
        self._flush()
        if self.writer is not None:
            self.writer.close()
        elif self.schema is None:  # no record at all: an empty file with no columns
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.table({}), self.out.target)
        self.out.commit()

    def abort(self) -> None:
        """Stop writing and remove what was written."""
        if self.writer is not None:
            self.writer.close()
        self.out.discard()


def open_writer(path: str, fmt: Format | None = None, types: Mapping[str, Any] | None = None) -> RecordWriter:
    """A writer for ``path`` (``-``: stdout, always JSONL), in ``fmt`` or the format its extension names.

    A regular file is written to a temporary file beside it (created now: an unwritable folder
    fails here) and replaces ``path`` on ``close``; see :class:`neardup.files.outputs.OutputFile`.
    ``types``: Arrow types of columns for a Parquet output (see :class:`ParquetWriter`).
    """
    out = OutputFile(path)
    fmt = Format.JSONL if path == STDIO else format_for(path, fmt)
    if fmt is Format.CSV:
        return CsvWriter(out)
    if fmt is Format.PARQUET:
        return ParquetWriter(out, types)
    return JsonlWriter(out)
