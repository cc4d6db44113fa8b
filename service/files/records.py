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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, Protocol

from neardup.document import loads_strict
from neardup.errors import InputError
from neardup.files.outputs import STDIO, OutputFile
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
    """

    def __init__(self, out: OutputFile) -> None:
        """Write to ``out``; nothing is written before the first row group."""
        require_extra("pyarrow", "parquet", "Parquet output")
        self.out = out
        self.columns = Columns(out.path)
        self.rows: list[dict[str, Any]] = []
        self.schema: Any = None
        self.writer: Any = None

    def write(self, record: Mapping[str, Any]) -> None:
        """Buffer one row; write a row group when the buffer is full."""
        self.columns.check(record)
        self.rows.append({k: dumps(v) if isinstance(v, dict | list) else v for k, v in record.items()})
        if len(self.rows) >= PARQUET_ROWS:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self.rows:
            return
        if self.schema is None:
            table = pa.Table.from_pylist(self.rows)
            fields = [f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in table.schema]
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


def open_writer(path: str, fmt: Format | None = None) -> RecordWriter:
    """A writer for ``path`` (``-``: stdout, always JSONL), in ``fmt`` or the format its extension names.

    A regular file is written to a temporary file beside it (created now: an unwritable folder
    fails here) and replaces ``path`` on ``close``; see :class:`neardup.files.outputs.OutputFile`.
    """
    out = OutputFile(path)
    fmt = Format.JSONL if path == STDIO else format_for(path, fmt)
    if fmt is Format.CSV:
        return CsvWriter(out)
    if fmt is Format.PARQUET:
        return ParquetWriter(out)
    return JsonlWriter(out)
