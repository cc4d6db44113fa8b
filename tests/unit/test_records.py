"""The CLI's file formats (service/files/records.py): JSONL, CSV and Parquet in and out, field renaming."""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from neardup.errors import InputError
from neardup.files.records import FieldMap, Format, count_records, format_for, open_writer, read_records

PARQUET_EXTRA = "the parquet extra is not installed (pip install 'neardup[parquet]')"


@pytest.fixture
def pa() -> Any:
    """pyarrow; the test is skipped where the parquet extra is not installed."""
    return pytest.importorskip("pyarrow", reason=PARQUET_EXTRA)


@pytest.fixture
def pq(pa: Any) -> Any:
    """pyarrow.parquet, as :func:`pa`."""
    return pytest.importorskip("pyarrow.parquet", reason=PARQUET_EXTRA)


def test_format_by_extension_or_flag() -> None:
    assert format_for("a.jsonl") is Format.JSONL and format_for("-") is Format.JSONL
    assert format_for("A.CSV") is Format.CSV and format_for("x.parquet") is Format.PARQUET
    assert format_for("x.txt") is Format.JSONL
    assert format_for("x.txt", Format.CSV) is Format.CSV


def test_csv_rows_become_documents(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    # a BOM, a quoted multi-line text, an empty cell, a row with one cell too many
    src.write_text('\ufeffdoc,body,title\n1,"line one\nline two",\n2,plain,T\n3,x,y,surplus\n', encoding="utf-8")
    recs = list(read_records(str(src), Format.CSV, FieldMap("doc", "body")))
    assert [r.data for r in recs[:2]] == [{"id": "1", "text": "line one\nline two"},
                                          {"id": "2", "text": "plain", "title": "T"}]  # fmt: skip
    assert [r.position for r in recs] == [3, 4, 5]  # the line each row ends on
    assert recs[2].problem is not None and recs[2].problem[0] == "bad_schema"
    assert count_records(str(src), Format.CSV) == 3


def test_a_field_clash_is_a_rejection_not_a_lost_field(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"doc": "a", "id": "other", "text": "t"}) + "\n", encoding="utf-8")
    (rec,) = read_records(str(src), Format.JSONL, FieldMap("doc", "text"))
    assert rec.problem == ("bad_field", "has both 'doc' (the id field) and a field named 'id'")
    assert rec.data == {"doc": "a", "id": "other", "text": "t"}


def test_parquet_cells_become_json_values(tmp_path: Path, pa: Any, pq: Any) -> None:
    src = tmp_path / "in.parquet"
    table = pa.Table.from_pylist([
        {"key": 7, "body": "文本".encode(), "published_at": dt.datetime(2024, 1, 2, 3, 4, 5), "tags": ["a"]},
        {"key": 8, "body": b"\xff", "published_at": None, "tags": []},
    ])  # fmt: skip
    pq.write_table(table, src)
    recs = list(read_records(str(src), Format.PARQUET, FieldMap("key", "body")))
    assert recs[0].data == {"id": 7, "text": "文本", "published_at": "2024-01-02T03:04:05+00:00", "tags": ["a"]}
    assert recs[1].data == {"id": 8, "text": "/w==", "tags": []}  # not UTF-8: base64; null: absent
    assert [r.position for r in recs] == [1, 2] and count_records(str(src), Format.PARQUET) == 2


def test_unreadable_parquet_is_an_input_error(tmp_path: Path, pa: Any) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        list(read_records(str(bad), Format.PARQUET))
    with pytest.raises(InputError, match="does not exist"):
        list(read_records(str(tmp_path / "none.csv"), Format.CSV))


RECORDS = [
    {"id": "a", "text": "x", "status": "unique", "duplicate_of": None, "evidence": {"reason": "unique"}},
    {"id": "b", "text": "y", "status": "duplicate", "duplicate_of": "a", "evidence": {"jaccard": 0.9}},
]


def test_csv_output_has_a_header_and_json_cells(tmp_path: Path) -> None:
    out = tmp_path / "o.csv"
    w = open_writer(str(out))
    for r in RECORDS:
        w.write(r)
    w.close()
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert list(rows[0]) == ["id", "text", "status", "duplicate_of", "evidence"]
    assert rows[0]["duplicate_of"] == "" and rows[1]["duplicate_of"] == "a"
    assert json.loads(rows[1]["evidence"]) == {"jaccard": 0.9}


def test_parquet_output_spans_row_groups(tmp_path: Path, pa: Any, pq: Any) -> None:
    out = tmp_path / "o.parquet"
    w = open_writer(str(out))
    many = [{**RECORDS[i % 2], "id": str(i)} for i in range(2500)]  # 3 row groups; duplicate_of null in many
    for r in many:
        w.write(r)
    w.close()
    table = pq.read_table(out)
    assert table.num_rows == 2500 and table.schema.field("duplicate_of").type == pa.string()
    assert json.loads(table.column("evidence")[1].as_py()) == {"jaccard": 0.9}


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_tabular_output_refuses_a_field_the_first_record_lacks(tmp_path: Path, suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow", reason=PARQUET_EXTRA)
    w = open_writer(str(tmp_path / f"o{suffix}"))
    w.write(RECORDS[0])
    with pytest.raises(InputError, match="'extra'"):
        w.write({**RECORDS[1], "extra": 1})


# --------------------------------------------------------------------------- strict readers (every command but dedup)
def test_strict_readers_take_csv_and_parquet_too(tmp_path: Path, pa: Any, pq: Any) -> None:
    from neardup.files.records import read_documents, read_pairs, read_rows

    docs_csv = tmp_path / "docs.csv"
    docs_csv.write_text("id,text,title\n1,first text,\n2,second text,T\n", encoding="utf-8")
    assert [(d.id, d.text) for d in read_documents(docs_csv)] == [("1", "first text"), ("2", "second text")]
    pairs_pq = tmp_path / "pairs.parquet"
    pq.write_table(pa.Table.from_pylist([{"a": "1", "b": "2", "label": 1, "kind": "reprint"}]), pairs_pq)
    assert read_pairs(pairs_pq, {"1", "2"}) == [{"a": "1", "b": "2", "label": 1, "kind": "reprint"}]
    pairs_csv = tmp_path / "pairs.csv"
    pairs_csv.write_text("a,b,label\n1,2,0\n", encoding="utf-8")
    assert read_pairs(pairs_csv, {"1", "2"}) == [{"a": "1", "b": "2", "label": 0, "kind": ""}]
    (row,) = read_rows(pairs_csv)
    assert row.where == f"{pairs_csv} line 2" and row.position == 2 and row.text_cells


@pytest.mark.parametrize(("name", "content", "message"), [
    ("pairs.jsonl", '{"a": "1", "b": "2", "label": 1}\n{"a": "1", "b": "2"}\n', "line 2: no 'label'"),
    ("pairs.jsonl", '{"a": "1", "b": "9", "label": 1}\n', "line 1: id '9' is not in --docs"),
    ("pairs.jsonl", '{"a": "1", "b": "2", "label": 1}\n{oops\n', "line 2: not JSON: Expecting property name"),
    ("pairs.jsonl", "[1, 2]\n", "line 1: expected a JSON object, got list"),
    ("pairs.jsonl", b'{"a": "\xff"}\n', "line 1: not UTF-8 text at byte"),
    ("pairs.csv", "a,b,label\n1,2,yes\n", "line 2: 'label' must be 0 or 1, got 'yes'"),
    ("pairs.csv", "a,b,label\n1,2,1,surplus\n", "line 2: row has 4 cells, the header 3"),
])  # fmt: skip
def test_strict_readers_name_the_file_line_and_problem(tmp_path: Path, name: str, content: str | bytes,
                                                         message: str) -> None:
    from neardup.files.records import read_pairs

    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(InputError) as err:
        read_pairs(path, {"1", "2"})
    text = err.value.one_line()
    assert f"{path} {message}" in text and "\n" not in text, text


def test_read_documents_refuses_a_bad_record_a_repeated_id_and_an_empty_file(tmp_path: Path) -> None:
    from neardup.files.records import read_documents

    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n{"id": "b"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"docs\.jsonl line 2: missing_text|docs\.jsonl line 2: .*text"):
        read_documents(path)
    path.write_text('{"id": "a", "text": "x"}\n\n{"id": "a", "text": "y"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 3: id 'a' appears twice \(first: .*docs\.jsonl line 1\)"):
        read_documents(path)
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds no documents"):
        read_documents(path)
    with pytest.raises(InputError, match=r"none\.jsonl: no such file"):
        read_documents(tmp_path / "none.jsonl")


def test_parquet_temporal_columns_travel_as_json_and_are_written_back_as_they_were(tmp_path: Path) -> None:
    from neardup.files.records import parquet_temporal_types

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")

    src = tmp_path / "in.parquet"
    shanghai = dt.timezone(dt.timedelta(hours=8))
    rows = [{"id": "a", "text": "x", "published_at": dt.datetime(2024, 1, 2, 3, 4, 5, 123456),
             "crawled_at": dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=shanghai), "day": dt.date(2024, 1, 2),
             "took": dt.timedelta(seconds=1.5), "note": "2024-01-02"}]  # fmt: skip
    schema = pa.schema([("id", pa.string()), ("text", pa.string()), ("published_at", pa.timestamp("us")),
                        ("crawled_at", pa.timestamp("ms", tz="+08:00")), ("day", pa.date32()),
                        ("took", pa.duration("us")), ("note", pa.string())])  # fmt: skip
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), src)
    types = parquet_temporal_types(str(src))
    assert set(types) == {"published_at", "crawled_at", "day", "took"}  # "note" is text that looks like a date
    (rec,) = read_records(str(src), Format.PARQUET)
    out = tmp_path / "out.parquet"
    w = open_writer(str(out), types=types)
    assert isinstance(rec.data, dict)
    w.write({**rec.data, "status": "unique"})
    w.close()
    table = pq.read_table(out)
    for name in types:
        assert table.schema.field(name).type == schema.field(name).type, name
    assert table.schema.field("note").type == pa.string()
    back = table.to_pylist()[0]
    assert back["published_at"] == rows[0]["published_at"] and back["day"] == rows[0]["day"]
    assert back["crawled_at"] == rows[0]["crawled_at"] and back["took"] == rows[0]["took"]
