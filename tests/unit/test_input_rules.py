"""How input is read, the same on every host: naive times (UTC or the configured zone), strict JSON
in and out (no NaN/Infinity), a UTF-8 BOM, input that is all rejects, explain's file and texts."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from neardup import Deduplicator, Status
from neardup.document import InvalidDocument, parse_document
from neardup.files.records import FieldMap, Format, open_writer, read_records
from tests.unit.test_cli import SAMPLE, neardup, one_error_line

TEXT = SAMPLE.read_bytes().splitlines()[0]
A_TEXT = json.loads(TEXT)["text"]


@pytest.fixture
def host_zone() -> Iterator[None]:
    """Restore the process's time zone after a test moved it."""
    before = os.environ.get("TZ")
    yield
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()


# --------------------------------------------------------------------------- item 10: naive times
@pytest.mark.usefixtures("host_zone")
@pytest.mark.parametrize("tz", ["UTC", "Asia/Shanghai", "America/Los_Angeles"])
def test_a_naive_published_at_is_utc_whatever_the_host_zone(tz: str) -> None:
    os.environ["TZ"] = tz
    time.tzset()
    doc = parse_document(b'{"id": "a", "text": "t", "published_at": "2024-03-15T08:00:00"}')
    assert doc.published_at == 1710489600.0  # 2024-03-15T08:00:00Z
    shanghai = parse_document(b'{"id": "a", "text": "t", "published_at": "2024-03-15T08:00:00"}',
                              naive_time_zone="Asia/Shanghai")  # fmt: skip
    assert shanghai.published_at == 1710489600.0 - 8 * 3600
    with_offset = parse_document(b'{"id": "a", "text": "t", "published_at": "2024-03-15T16:00:00+08:00"}',
                                 naive_time_zone="America/Los_Angeles")  # fmt: skip
    assert with_offset.published_at == 1710489600.0  # an explicit offset wins


def test_the_original_does_not_flip_with_the_host_zone(tmp_path: Path) -> None:
    # the copy's time has an offset, the original's has none: 07:30 naive is the earlier one read as UTC
    # (07:30Z) or in Shanghai (23:30Z the day before), the later one read in Los Angeles (14:30Z)
    docs = [{"id": "copy", "text": A_TEXT, "published_at": "2024-03-15T08:00:00+00:00"},
            {"id": "original", "text": A_TEXT, "published_at": "2024-03-15T07:30:00"}]  # fmt: skip
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    answers = {}
    for tz in ("UTC", "America/Los_Angeles"):
        res = neardup("dedup", str(src), "-q", env={"TZ": tz})
        assert res.returncode == 0, res.stderr.decode()[-2000:]
        answers[tz] = [(d["id"], d["status"], d["duplicate_of"]) for d in map(json.loads, res.stdout.splitlines())]
    assert answers["UTC"] == answers["America/Los_Angeles"]
    assert ("copy", "duplicate", "original") in answers["UTC"]
    # a configured zone applies on every host
    res = neardup("dedup", str(src), "-q", env={"TZ": "America/Los_Angeles",
                                                 "NEARDUP_NORMALIZE__NAIVE_TIME_ZONE": "Asia/Shanghai"})  # fmt: skip
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    assert ("copy", "duplicate", "original") in [(d["id"], d["status"], d["duplicate_of"])
                                                 for d in map(json.loads, res.stdout.splitlines())]  # fmt: skip


def test_a_time_zone_that_does_not_exist_is_a_setting_error() -> None:
    res = neardup("dedup", str(SAMPLE), "-q", env={"NEARDUP_NORMALIZE__NAIVE_TIME_ZONE": "Mars/Olympus"})
    assert res.returncode == 1 and "normalize.naive_time_zone" in one_error_line(res)


# --------------------------------------------------------------------------- item 11: strict JSON
@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_nan_and_infinity_are_bad_json(token: str) -> None:
    with pytest.raises(InvalidDocument) as caught:
        parse_document(f'{{"id": "a", "text": "t", "score": {token}}}'.encode())
    assert caught.value.reason == "bad_json"
    with pytest.raises(InvalidDocument) as from_a_row:  # a Parquet or CSV row, or renamed fields
        parse_document({"id": "a", "text": "t", "extra": {"score": [1.0, float(token.replace("1e999", "inf"))]}})
    assert from_a_row.value.reason == "bad_json" and "extra.score[1]" in from_a_row.value.detail


def test_dedup_output_is_strict_json(tmp_path: Path) -> None:
    lines = [TEXT, b'{"id": "n", "text": "' + "文本".encode() * 40 + b'", "score": NaN}',
             b'{"doc": "i", "text": "x", "score": Infinity}']  # fmt: skip
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"\n".join(lines) + b"\n")
    rejects = tmp_path / "rejects.jsonl"
    res = neardup("dedup", str(src), "-q", "--rejects", str(rejects))
    assert res.returncode == 0, res.stderr.decode()[-2000:]

    def strict(text: str) -> object:
        return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the output"))

    assert [strict(line)["id"] for line in res.stdout.decode().splitlines()] == [json.loads(TEXT)["id"]]
    assert [strict(line)["reason"] for line in rejects.read_text().splitlines()] == ["bad_json", "bad_json"]
    strict(res.stderr.decode().strip().splitlines()[-1])  # the summary
    renamed = neardup("dedup", str(src), "-q", "--id-field", "doc", "-o", os.devnull, "--rejects", str(rejects))
    assert renamed.returncode == 1  # every record rejected (an "id" besides "doc", or not strict JSON)
    assert [strict(line)["reason"] for line in rejects.read_text().splitlines()] == ["bad_field", "bad_json",
                                                                                     "bad_json"]  # fmt: skip


def test_a_writer_refuses_nan_rather_than_write_invalid_json(tmp_path: Path) -> None:
    w = open_writer(str(tmp_path / "o.jsonl"))
    with pytest.raises(ValueError, match="JSON compliant"):
        w.write({"id": "a", "score": math.nan})
    w.abort()
    assert not (tmp_path / "o.jsonl").exists()


# --------------------------------------------------------------------------- item 14: rejects, BOM, explain
def test_input_that_is_all_rejects_exits_non_zero(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"doc": "a", "body": "x"}\n{"doc": "b", "body": "y"}\nnot json\n')
    res = neardup("dedup", str(src), "-q", "-o", os.devnull)
    assert res.returncode == 1
    lines = res.stderr.decode().strip().splitlines()
    assert json.loads(lines[0])["rejected"] == 3  # the summary still comes first
    assert lines[1].startswith("neardup: error: all 3 input records were rejected")
    assert "missing_id: 2" in lines[1] and "bad_json: 1" in lines[1] and "--id-field" in lines[1]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert neardup("dedup", str(empty), "-q").returncode == 0  # no input is not an error


def test_a_utf8_bom_on_the_first_line_is_accepted(tmp_path: Path) -> None:
    src = tmp_path / "bom.jsonl"
    src.write_bytes(b"\xef\xbb\xbf" + TEXT + b"\n")
    (rec,) = read_records(str(src), Format.JSONL)
    assert parse_document(rec.data).id == json.loads(TEXT)["id"]
    (renamed,) = read_records(str(src), Format.JSONL, FieldMap("id", "text_field_absent"))
    assert isinstance(renamed.data, dict)  # parsed, not rejected as bad_json
    csv_src = tmp_path / "bom.csv"
    csv_src.write_bytes(b"\xef\xbb\xbfid,text\nx,hello\n")
    res = neardup("dedup", "-", "-q", "--format", "csv", stdin=csv_src.read_bytes())
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    assert json.loads(res.stdout)["id"] == "x"
    res = neardup("dedup", str(src), "-q")
    assert res.returncode == 0 and json.loads(res.stdout)["status"] == "unique"


def test_explain_reads_a_text_that_starts_with_a_dash_after_double_dash() -> None:
    res = neardup("explain", "--json", "--", A_TEXT, "-" + A_TEXT)
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    assert json.loads(res.stdout)  # a report
    without = neardup("explain", A_TEXT, "-B")
    assert without.returncode == 2 and b"goes after --" in without.stderr


def test_explain_file_with_bad_lines_is_one_line(tmp_path: Path) -> None:
    src = tmp_path / "docs.jsonl"
    good = [json.dumps({"id": 7, "text": A_TEXT}, ensure_ascii=False), json.dumps({"id": "b", "text": A_TEXT})]
    src.write_text("\n".join(['{"id": ["not", "hashable"], "text": "x"}', "not json", *good, '{"id": "c"}']) + "\n",
                   encoding="utf-8")  # fmt: skip
    res = neardup("explain", "7", "b", "--file", str(src), "--json")  # an integer id is its decimal text
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    missing = neardup("explain", "7", "zz", "--file", str(src))
    assert missing.returncode == 1
    assert "ids not found" in one_error_line(missing) and "first: line 2" in one_error_line(missing)
    no_text = neardup("explain", "7", "c", "--file", str(src))
    assert no_text.returncode == 1 and "text" in one_error_line(no_text)



SRT = ("1\n00:00:01,000 --> 00:00:04,000\n市政府今天宣布，新的地铁线路将于明年年底前开通运营，\n\n"
       "2\n00:00:04,000 --> 00:00:08,000\n<i>全长三十二公里</i>，设站二十四座，连接城市东西两个新区。\n\n"
       "3\n00:00:08,000 --> 00:00:12,000\n{\\an8}项目总投资约两百亿元，由市地铁集团负责建设。\n")
VTT = ("WEBVTT\n\n00:02.500 --> 00:06.000 line:90%\n"
       "市政府今天宣布，新的地铁线路将于明年年底前开通运营，全长三十二公里，\n\n"
       "00:06.000 --> 00:11.000\n设站二十四座，连接城市东西两个新区。\n\nNOTE re-timed by another site\n\n"
       "00:11.000 --> 00:15.500\n项目总投资约两百亿元，由市地铁集团负责建设。\n")


def test_subtitles_are_read_as_their_spoken_text() -> None:
    """SRT and WebVTT, detected or named by ``format``, become their spoken text; a copy re-timed
    and re-split into other cues is a duplicate; 'text' takes subtitles as they are."""
    spoken = parse_document({"id": "s", "text": SRT}).text
    assert spoken.startswith("市政府今天宣布") and "-->" not in spoken and "<i>" not in spoken and "\\an8" not in spoken
    assert parse_document({"id": "v", "text": VTT, "format": "vtt"}).text.replace(" ", "") == spoken.replace(" ", "")
    assert parse_document({"id": "t", "text": SRT, "format": "text"}).text == SRT
    with Deduplicator() as dedup:
        dedup.decide({"id": "srt", "text": SRT})
        copy = dedup.decide({"id": "vtt", "text": VTT})
    assert copy.status is Status.DUPLICATE and copy.duplicate_of == "srt"


@pytest.mark.parametrize(("record", "reason"), [
    ({"id": "x", "text": "no timings here", "format": "srt"}, "bad_subtitles"),
    ({"id": "x", "text": SRT, "format": "ass"}, "bad_field"),
    ({"id": "x", "text": "1\n00:00:01,000 --> 00:00:02,000\n<i></i>\n"}, "empty_text"),
])
def test_bad_subtitles_get_a_reason(record: dict[str, str], reason: str) -> None:
    with pytest.raises(InvalidDocument) as err:
        parse_document(record)
    assert err.value.reason == reason and "\n" not in str(err.value)
