"""neardup.review.server without a browser: inputs and their one-line errors, the diff, the evidence
rendering, the labels a verdict writes, and the HTTP guards (token, JSON, loopback host names)."""

from __future__ import annotations

import html
import http.client
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from neardup.config import load_settings
from neardup.kernels.cache import COMPILE_NOTICE
from neardup.learning.feedback import DecisionFeedback, FileFeedbackSink, PairFeedback, read_feedback
from neardup.review.server import (
    CONTEXT_CHARS,
    Kind,
    ReviewInputError,
    ReviewItem,
    ReviewServer,
    Verdict,
    diff_blocks,
    diff_html,
    earlier_verdicts,
    load_decisions,
    load_documents,
    open_session,
    render_value,
)

THRESHOLDS = {"jaccard_high": 0.7, "jaccard_low": 0.45}


def _decision(doc_id: str, status: str, dup_of: str | None = None, **evidence: Any) -> dict[str, Any]:
    return {"id": doc_id, "text": "…", "status": status, "duplicate_of": dup_of,
            "evidence": {"thresholds": THRESHOLDS, **evidence}}  # fmt: skip


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def decisions(tmp_path: Path) -> Path:
    return _write(tmp_path / "decisions.jsonl", [
        _decision("a", "unique", matched_id=None, jaccard=None),
        _decision("b", "duplicate", "a", reason="near", rule="jaccard", jaccard=0.93, hamming=2),
        _decision("c", "unique", reason="critical", matched_id="a", jaccard=0.95,
                  critical={"kind": "polarity", "passage": "不予批准", "term": "neg", "against": "b"}),
        _decision("d", "unique", reason="unique", matched_id="a", jaccard=0.31),  # within 0.15 of 0.45
        _decision("e", "unique", reason="unique", matched_id="a", jaccard=0.29),  # too far
        _decision("f", "unique", reason="unique", matched_id=None, jaccard=None),
    ])  # fmt: skip


def test_duplicates_are_reviewed_and_near_uniques_only_on_request(decisions: Path) -> None:
    items = load_decisions(decisions)
    assert [(i.doc_id, i.other_id, i.kind, i.line) for i in items] == [("b", "a", Kind.DUPLICATE, 2)]
    near = load_decisions(decisions, near_threshold=True)
    assert [(i.index, i.doc_id, i.other_id, i.kind) for i in near] == [
        (0, "b", "a", Kind.DUPLICATE),
        (1, "c", "b", Kind.NEAR),  # the document the critical difference was found against
        (2, "d", "a", Kind.NEAR),
    ]
    assert [i.doc_id for i in load_decisions(decisions, near_threshold=True, near_margin=0.1)] == ["b", "c"]


@pytest.mark.parametrize(("lines", "message"), [
    (['{"id": "a", "text": "a document"}'], "decisions.jsonl line 1: no 'status': is this a decisions file"),
    (['{"id": "a", "status": "unique", "evidence": {}}', "{oops"], "decisions.jsonl line 2: not JSON"),
    (["[1]"], "decisions.jsonl line 1: expected a JSON object, got list"),
    (['{"id": "b", "status": "duplicate", "evidence": {}}'], "decisions.jsonl line 1: field 'duplicate_of' must be"),
    (['{"id": "b", "status": "maybe", "evidence": {}}'], "status must be 'unique' or 'duplicate', got 'maybe'"),
    (['{"id": "b", "status": "unique", "evidence": null}'], "field 'evidence' must be an object"),
    (['{"status": "unique", "evidence": {}}'], "field 'id' must be a document id"),
    (["", "  "], "decisions.jsonl: holds no decisions"),
])  # fmt: skip
def test_bad_decisions_files_get_a_one_line_error(tmp_path: Path, lines: list[str], message: str) -> None:
    path = tmp_path / "decisions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ReviewInputError) as err:
        load_decisions(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_missing_files_and_documents_are_named(tmp_path: Path, decisions: Path) -> None:
    with pytest.raises(ReviewInputError, match=r"nope\.jsonl: no such file"):
        load_decisions(tmp_path / "nope.jsonl")
    docs = _write(tmp_path / "docs.jsonl", [{"id": "a", "text": "x"}, {"id": "z", "text": "y"}])
    with pytest.raises(ReviewInputError, match=r"docs.jsonl: document 'b' and 1 more named by the decisions"):
        load_documents(docs, {"a", "b", "c"})
    _write(docs, [{"id": "a", "text": 5}])
    with pytest.raises(ReviewInputError, match=r"docs.jsonl line 1: document 'a' has no string 'text'"):
        load_documents(docs, {"a"})
    _write(docs, [{"id": "a", "text": "first"}, {"id": 7, "text": "int id"}, {"id": "a", "text": "again"}])
    assert {k: v["text"] for k, v in load_documents(docs, {"a", "7"}).items()} == {"a": "first", "7": "int id"}


def test_a_verdict_labels_the_pair() -> None:
    dup = ReviewItem(0, "b", "a", Kind.DUPLICATE, {}, 1)
    near = ReviewItem(1, "d", "c", Kind.NEAR, {}, 2)
    got = [(it.feedback(v, reviewer="r", note=None)) for it in (dup, near) for v in Verdict]
    assert [(r.a, r.b, r.is_duplicate, r.reviewer) for r in got] == [
        ("a", "b", True, "r"), ("a", "b", False, "r"),  # duplicate decision confirmed / overturned
        ("c", "d", False, "r"), ("c", "d", True, "r"),  # unique decision confirmed / overturned
    ]
    assert all(r.at is not None and r.at.tzinfo is not None for r in got)


def test_earlier_feedback_marks_items_and_the_last_record_wins() -> None:
    items = [ReviewItem(0, "b", "a", Kind.DUPLICATE, {}, 1), ReviewItem(1, "d", "c", Kind.NEAR, {}, 2),
             ReviewItem(2, "f", "e", Kind.DUPLICATE, {}, 3)]  # fmt: skip
    records = [
        PairFeedback(a="b", b="a", is_duplicate=True),  # either order names the pair
        PairFeedback(a="c", b="d", is_duplicate=False),
        PairFeedback(a="c", b="d", is_duplicate=True),  # changed their mind
        PairFeedback(a="x", b="f", is_duplicate=False),  # another pair
        DecisionFeedback(id="zz", correct=False),
    ]
    assert earlier_verdicts(items, records) == {0: Verdict.CONFIRM, 1: Verdict.OVERTURN}
    assert earlier_verdicts(items, [DecisionFeedback(id="f", correct=False)]) == {2: Verdict.OVERTURN}


def test_diff_marks_what_differs_and_aligns_the_rest() -> None:
    common = "第一条 为了规范管理，制定本办法。\n" * 40
    a = "某某网 2013-09-11 09:12\n" + common + "第二条 本办法自公布之日起施行。\n"
    b = common + "第二条 本办法自发布之日起施行。\n"
    blocks = diff_blocks(a, b)
    assert "".join(x for _, x, _ in blocks) == a and "".join(y for _, _, y in blocks) == b
    changed = [(x, y) for c, x, y in blocks if c]
    assert changed == [("某某网 2013-09-11 09:12\n", ""), ("公", "发")]
    left, right, passages = diff_html(a, b)
    assert passages == 2
    assert '<del class="chg">某某网 2013-09-11 09:12\n</del>' in left and '<ins class="chg">发</ins>' in right
    assert blocks[1] == (False, common + "第二条 本办法自", common + "第二条 本办法自")
    fold = f"… {len(blocks[1][1]) - 2 * CONTEXT_CHARS:,} identical characters …"
    assert fold in left and fold in right  # the long common run folds the same way on both sides


def test_diff_escapes_markup() -> None:
    a, b = '<b title="x">bold</b> & more', "<script>alert(1)</script> & more"
    left, right, _ = diff_html(a, b)
    for side, text in ((left, a), (right, b)):
        tags = re.findall(r"<[^>]*>", side)
        assert set(tags) <= {'<del class="chg">', "</del>", '<ins class="chg">', "</ins>"}  # only ours
        assert html.unescape(re.sub(r"<[^>]*>", "", side)) == text  # the text itself, shown as text


def test_render_value_shows_any_keys_escaped() -> None:
    out = render_value({"rule": "jaccard", "top_weighted_tokens": [["批准", 18.7], ["<i>", 2.0]], "bits": [4, 19],
                        "nested": {"new_key": None}, "score": 0.123456})  # fmt: skip
    assert '<span class="chip">批准 <b>18.7</b></span>' in out and "&lt;i&gt;" in out
    assert "<th>top weighted tokens</th>" in out and "<td>4, 19</td>" in out
    assert "<th>new key</th>" in out and "0.1235" in out


# ----------------------------------------------------------------------------- HTTP guards


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ReviewServer]:
    decisions = _write(tmp_path / "d.jsonl", [_decision("b", "duplicate", "a", reason="near", rule="jaccard")])
    docs = _write(tmp_path / "docs.jsonl", [{"id": "a", "text": "alpha beta"}, {"id": "b", "text": "alpha gamma"}])
    session = open_session(decisions, docs, lambda: FileFeedbackSink(tmp_path / "fb.jsonl"), load_settings())
    srv = ReviewServer(session, "127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    session.sink.close()


def _request(srv: ReviewServer, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read().decode("utf-8")
    finally:
        conn.close()


def test_a_stop_waits_for_the_answers_under_way(server: ReviewServer) -> None:
    """The request threads are daemons: a stop (Ctrl-C, SIGTERM) waits for the requests being
    answered before the process exits, since one killed inside a kernel aborts it."""
    assert server.wait_idle(0.1)
    release = threading.Event()

    def slow_answer() -> None:
        with server.working():
            release.wait(10)

    worker = threading.Thread(target=slow_answer)
    worker.start()
    try:
        assert not server.wait_idle(0.2)  # an answer under way
        release.set()
        assert server.wait_idle(10)
    finally:
        release.set()
        worker.join(10)
    assert _request(server, "GET", "/", headers={"Host": "127.0.0.1"})[0] == 200 and server.wait_idle(1)


def test_feedback_needs_the_token_json_and_a_valid_body(server: ReviewServer, tmp_path: Path) -> None:
    token = server.session.token
    ok = {"Content-Type": "application/json", "X-Review-Token": token}
    body = json.dumps({"item": 0, "verdict": "overturn", "note": " footer differs "}).encode()
    assert _request(server, "POST", "/api/feedback", body, {**ok, "X-Review-Token": "guess"})[0] == 403
    assert _request(server, "POST", "/api/feedback", body, {**ok, "Content-Type": "text/plain"})[0] == 415
    for bad, message in [({"item": 1, "verdict": "confirm"}, "item must be 0 to 0, got 1"),
                         ({"item": 0, "verdict": "maybe"}, "verdict must be 'confirm' or 'overturn', got 'maybe'"),
                         ({"item": 0, "verdict": "confirm", "note": 3}, "note must be a string")]:  # fmt: skip
        status, _, text = _request(server, "POST", "/api/feedback", json.dumps(bad).encode(), ok)
        assert (status, json.loads(text)["error"]) == (400, message)
    assert list(read_feedback(tmp_path / "fb.jsonl")) == []  # nothing written by refused requests
    status, _, text = _request(server, "POST", "/api/feedback", body, ok)
    assert status == 200, text
    assert json.loads(text)["record"]["is_duplicate"] is False
    [rec] = read_feedback(tmp_path / "fb.jsonl")
    assert rec == PairFeedback(a="a", b="b", is_duplicate=False, note="footer differs", at=rec.at)


def test_pages_only_for_loopback_host_names_and_with_a_strict_policy(server: ReviewServer) -> None:
    port = server.server_address[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
        status, headers, text = _request(server, "GET", "/", headers={"Host": host})
        assert status == 200 and "alpha" in text
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'nonce-" in csp and "connect-src 'self'" in csp
    assert _request(server, "GET", "/", headers={"Host": f"rebound.example:{port}"})[0] == 403
    assert _request(server, "GET", "/?page=2")[0] == 404
    assert _request(server, "GET", "/api/explain/5")[0] == 404


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_decisions_and_documents_in_the_formats_dedup_writes(tmp_path: Path, decisions: Path, suffix: str) -> None:
    from neardup.files.records import open_writer

    rows = [json.loads(line) for line in decisions.read_text(encoding="utf-8").splitlines()]
    out = tmp_path / f"decisions{suffix}"
    writer = open_writer(str(out))  # evidence becomes JSON text, as in neardup dedup -o decisions.csv
    for row in rows:
        writer.write(row)
    writer.close()
    items = load_decisions(out, near_threshold=True)
    assert [(i.doc_id, i.other_id, i.kind) for i in items] == [("b", "a", Kind.DUPLICATE), ("c", "b", Kind.NEAR),
                                                               ("d", "a", Kind.NEAR)]
    assert items[0].evidence["jaccard"] == 0.93
    docs = tmp_path / "docs.csv"
    docs.write_text("id,text\na,first\nb,second\n", encoding="utf-8")
    assert {k: v["text"] for k, v in load_documents(docs, {"a", "b"}).items()} == {"a": "first", "b": "second"}


def test_a_browser_that_leaves_mid_request_prints_no_traceback(server: ReviewServer, capfd: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def gone(page: int, nonce: str) -> str:
        raise BrokenPipeError(32, "Broken pipe")  # what writing to a closed tab raises

    monkeypatch.setattr(server.session, "render_page", gone)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        _request(server, "GET", "/", headers={"Host": "127.0.0.1"})
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    status, _, _ = _request(server, "GET", "/favicon.ico", headers={"Host": "127.0.0.1"})
    assert status == 204  # still serving


def test_a_bind_beyond_loopback_is_warned_about_in_one_line() -> None:
    from neardup.review.server import exposure_warning

    for bind in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        assert exposure_warning(bind) is None, bind
    for bind in ("0.0.0.0", "::", "192.168.1.5"):
        warning = exposure_warning(bind)
        assert warning is not None and "\n" not in warning
        assert f"--bind {bind}" in warning and "token" in warning


def _neardup(*args: str) -> tuple[list[str], dict[str, str]]:
    """The command line of ``neardup ARGS`` and its environment, for a subprocess."""
    import os
    import sys

    root = Path(__file__).resolve().parents[2]
    return [sys.executable, "-m", "neardup", *args], {**os.environ, "PYTHONPATH": str(root)}


def test_review_on_all_interfaces_prints_the_warning(tmp_path: Path, decisions: Path) -> None:
    import subprocess

    docs = _write(tmp_path / "docs.jsonl", [{"id": i, "text": f"text {i}"} for i in "abcdef"])
    command, env = _neardup("review", str(decisions), "--docs", str(docs), "--feedback", str(tmp_path / "fb.jsonl"),
                            "--bind", "0.0.0.0", "--port", "0")
    proc = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "Ctrl-C stops" in line:
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert ready.wait(120), lines
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    # what it says before it serves: a cold kernel cache's notice aside (and "interrupted" after)
    lines = [line for line in lines if not line.startswith(COMPILE_NOTICE)]
    lines = lines[: next(i for i, line in enumerate(lines) if "Ctrl-C stops" in line) + 1]
    assert len(lines) == 2, lines
    assert lines[0].startswith("neardup review: warning: --bind 0.0.0.0 is not a loopback address"), lines
    assert "Ctrl-C stops" in lines[1], lines


def test_a_bad_decisions_file_leaves_no_feedback_file(tmp_path: Path) -> None:
    import subprocess

    bad = tmp_path / "decisions.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    docs = _write(tmp_path / "docs.jsonl", [{"id": "a", "text": "x"}])
    feedback = tmp_path / "out" / "fb.jsonl"
    command, env = _neardup("review", str(bad), "--docs", str(docs), "--feedback", str(feedback))
    res = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 1 and "decisions.jsonl line 1: not JSON" in res.stderr, res.stderr
    assert not feedback.exists() and not feedback.parent.exists()
