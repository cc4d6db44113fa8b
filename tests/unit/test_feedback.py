"""neardup.learning.feedback: the two record shapes, one-line validation errors, JSONL reading, the file sink."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from neardup.errors import InputError
from neardup.learning.feedback import (
    DecisionFeedback,
    FeedbackError,
    FeedbackSinkError,
    FileFeedbackSink,
    PairFeedback,
    parse_feedback,
    read_feedback,
    utc_now,
)

CST = timezone(timedelta(hours=8))


def test_pair_record_parses_with_every_field() -> None:
    rec = parse_feedback('{"a": "d1", "b": "d2", "is_duplicate": false, "reviewer": "li", '
                         '"note": "不予批准 vs 给予批准", "at": "2026-12-03T08:00:00+08:00"}')
    assert rec == PairFeedback(a="d1", b="d2", is_duplicate=False, reviewer="li", note="不予批准 vs 给予批准",
                               at=datetime(2026, 12, 3, tzinfo=UTC))
    assert rec.key() == "d2"


def test_decision_record_parses_without_optional_fields() -> None:
    rec = parse_feedback(b'{"id": "d7", "correct": true}')
    assert rec == DecisionFeedback(id="d7", correct=True)
    assert (rec.at, rec.reviewer, rec.note, rec.key()) == (None, None, None, "d7")


def test_integer_ids_read_as_their_text_like_documents() -> None:
    assert parse_feedback({"a": 12, "b": 13, "is_duplicate": True}) == PairFeedback(a="12", b="13", is_duplicate=True)


@pytest.mark.parametrize("rec", [
    PairFeedback(a="文件-1", b="d2", is_duplicate=True, reviewer="r", note="a\nb", at=utc_now()),
    DecisionFeedback(id="d3", correct=False, at=datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=CST)),
    DecisionFeedback(id="d4", correct=True),
])  # fmt: skip
def test_a_written_line_reads_back_as_the_same_record(rec: PairFeedback | DecisionFeedback) -> None:
    line = rec.to_line()
    assert line.endswith("\n") and line.count("\n") == 1  # a note's newline is escaped
    assert parse_feedback(line) == rec


def test_json_keeps_the_documented_shape() -> None:
    rec = PairFeedback(a="x", b="y", is_duplicate=False, at=datetime(2026, 12, 3, 9, 0, tzinfo=UTC))
    assert json.loads(rec.to_line()) == {"a": "x", "b": "y", "is_duplicate": False,
                                         "at": "2026-12-03T09:00:00.000+00:00"}


@pytest.mark.parametrize(("line", "message"), [
    ("not json", "not JSON"),
    (b"\xff\xfe", "not UTF-8"),
    (b'{"id": "\xe6", "correct": true}', "not UTF-8 at byte 8"),
    ("[1, 2]", "expected a JSON object, got list"),
    ("{}", "expected a pair {a, b, is_duplicate} or a decision {id, correct}"),
    ('{"a": "x", "is_duplicate": true}', "field 'b' is missing"),
    ('{"a": "x", "b": "y"}', "field 'is_duplicate' is missing"),
    ('{"a": "x", "b": "y", "is_duplicate": "yes"}', "field 'is_duplicate' must be true or false, got 'yes'"),
    ('{"a": "x", "b": "y", "is_duplicate": 1}', "must be true or false"),
    ('{"a": "x", "b": "x", "is_duplicate": true}', "two different documents"),
    ('{"a": "", "b": "y", "is_duplicate": true}', "field 'a' must be a non-empty string id"),
    ('{"a": true, "b": "y", "is_duplicate": true}', "field 'a' must be a non-empty string id"),
    ('{"id": "x", "correct": null}', "field 'correct' must be true or false"),
    ('{"id": "x", "correct": true, "a": "y"}', "either a pair"),
    ('{"id": "x", "correct": true, "label": 1}', "unknown field(s) 'label'"),
    ('{"id": "x", "correct": true, "note": 5}', "field 'note' must be a string"),
    ('{"id": "x", "correct": true, "at": "yesterday"}', "field 'at' must be an ISO-8601 time"),
    ('{"id": "x", "correct": true, "at": "2026-12-03T09:00:00"}', "needs a zone offset"),
    ('{"id": "x", "correct": true, "at": 1796287206}', "field 'at' must be an ISO-8601 time"),
])  # fmt: skip
def test_bad_records_get_a_one_line_reason(line: str | bytes, message: str) -> None:
    with pytest.raises(FeedbackError) as err:
        parse_feedback(line)
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, InputError)  # the CLI prints it as one line and exits 1


def test_read_feedback_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "fb.jsonl"
    path.write_text('{"id": "a", "correct": true}\n\n{"a": "a", "b": "b", "is_duplicate": false}\n'
                    '{"id": "c"}\n{"id": "d", "correct": true}\n', encoding="utf-8")  # fmt: skip
    got = []
    with pytest.raises(FeedbackError, match=r"fb\.jsonl line 4: field 'correct' is missing$"):
        got.extend(read_feedback(path))
    assert got == [DecisionFeedback(id="a", correct=True), PairFeedback(a="a", b="b", is_duplicate=False)]


def test_file_sink_appends_and_fsyncs_each_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "new" / "folder" / "fb.jsonl"
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    sink = FileFeedbackSink(path)
    assert len(synced) == 1  # the folder holding the new file
    records = [PairFeedback(a="a", b=f"b{i}", is_duplicate=i % 2 == 0, at=utc_now()) for i in range(3)]
    for n, rec in enumerate(records, 1):
        sink.write(rec)
        assert len(synced) == 1 + n  # durable before write returns
        assert list(read_feedback(path)) == records[:n]
    sink.close()
    sink.close()  # idempotent
    with pytest.raises(FeedbackSinkError, match="closed"):
        sink.write(records[0])
    again = FileFeedbackSink(path)  # a second session appends
    again.write(DecisionFeedback(id="z", correct=False))
    again.close()
    assert [r.key() for r in read_feedback(path)] == ["b0", "b1", "b2", "z"]
    assert sink.describe() == str(path)


def test_file_sink_lines_stay_whole_across_threads(tmp_path: Path) -> None:
    path = tmp_path / "fb.jsonl"
    sink = FileFeedbackSink(path)
    note = "长" * 5000  # lines longer than a pipe buffer

    def writer(t: int) -> None:
        for i in range(25):
            sink.write(PairFeedback(a=f"t{t}", b=f"d{i}", is_duplicate=True, note=note))

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    sink.close()
    got = list(read_feedback(path))
    assert len(got) == 200
    assert {(r.a, r.b) for r in got if isinstance(r, PairFeedback)} == {(f"t{t}", f"d{i}") for t in range(8)
                                                                          for i in range(25)}  # fmt: skip


def test_a_written_record_survives_the_writer_being_killed(tmp_path: Path) -> None:
    path = tmp_path / "fb.jsonl"
    script = (
        "import os, signal, sys\n"
        "from neardup.learning.feedback import FileFeedbackSink, DecisionFeedback, utc_now\n"
        f"sink = FileFeedbackSink({str(path)!r})\n"
        "for i in range(5):\n"
        "    sink.write(DecisionFeedback(id=f'd{i}', correct=True, at=utc_now()))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert [r.key() for r in read_feedback(path)] == [f"d{i}" for i in range(5)]


def test_read_feedback_takes_csv_and_parquet_as_dedup_does(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "fb.csv"
    path.write_text("a,b,is_duplicate,id,correct,reviewer\nx,y,true,,,ann\n,,,z,FALSE,\n", encoding="utf-8")
    assert list(read_feedback(path)) == [PairFeedback(a="x", b="y", is_duplicate=True, reviewer="ann"),
                                         DecisionFeedback(id="z", correct=False)]
    path.write_text("a,b,is_duplicate\nx,y,maybe\n", encoding="utf-8")
    with pytest.raises(FeedbackError, match=r"fb\.csv line 2: field 'is_duplicate' must be true or false"):
        list(read_feedback(path))
    pq_path = tmp_path / "fb.parquet"
    pq.write_table(pa.Table.from_pylist([{"a": "x", "b": "y", "is_duplicate": False}]), pq_path)
    assert list(read_feedback(pq_path)) == [PairFeedback(a="x", b="y", is_duplicate=False)]
