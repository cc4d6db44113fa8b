"""Outputs never clobber inputs (however named) and a failed run leaves earlier files as they were
(service/files/outputs.py, and every command that writes files: dedup, idf build, eval, bench, review)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from neardup.files.outputs import Named, OutputError, OutputFile, check_paths
from tests.unit.test_cli import SAMPLE, neardup, one_error_line, read_jsonl

DOCS = SAMPLE.read_bytes().splitlines(keepends=True)[:40]


@pytest.fixture
def src(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"".join(DOCS))
    return path


# --------------------------------------------------------------------------- check_paths
def test_an_output_is_refused_by_any_name_of_the_input(src: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(src)
    hard = tmp_path / "hard.jsonl"
    os.link(src, hard)
    (tmp_path / "sub").mkdir()
    for name in (str(src), str(link), str(hard), str(tmp_path / "sub" / ".." / "in.jsonl"), os.path.relpath(src)):
        with pytest.raises(OutputError, match="is the same file as INPUT"):
            check_paths([Named("INPUT", str(src))], [Named("-o/--output", name)])


def test_two_outputs_that_do_not_exist_yet_are_compared_by_where_they_would_be(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "d")
    with pytest.raises(OutputError, match=r"--rejects .* is the same file as -o/--output"):
        check_paths([], [Named("-o/--output", str(tmp_path / "d" / "new" / "o.jsonl")),
                         Named("--rejects", str(tmp_path / "alias" / "new" / "o.jsonl"))])  # fmt: skip
    check_paths([], [Named("-o/--output", str(tmp_path / "d" / "a.jsonl")),
                     Named("--rejects", str(tmp_path / "d" / "b.jsonl"))])  # fmt: skip


def test_streams_are_not_files_to_protect(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    check_paths([Named("INPUT", os.devnull)], [Named("-o/--output", os.devnull), Named("--rejects", os.devnull),
                                              Named("--unique", str(fifo))])  # fmt: skip
    with pytest.raises(OutputError, match="both write to stdout"):
        check_paths([], [Named("-o/--output", "-"), Named("--unique", "-")])
    with pytest.raises(OutputError, match="is a folder"):
        check_paths([], [Named("-o/--output", str(tmp_path))])


def test_a_read_only_output_is_refused_before_it_would_be_replaced(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may write any file")
    ro = tmp_path / "ro.jsonl"
    ro.write_text("keep\n")
    ro.chmod(0o444)
    with pytest.raises(OutputError, match="not writable"):
        check_paths([], [Named("-o/--output", str(ro))])


def test_stdout_redirected_to_the_input_is_refused(src: Path) -> None:
    code = ("import sys; from neardup.files.outputs import Named, check_paths, OutputError\n"
            "try: check_paths([Named('INPUT', sys.argv[1])], [Named('-o/--output', '-')])\n"
            "except OutputError as e: sys.stderr.write(str(e)); sys.exit(3)")  # fmt: skip
    with src.open("ab") as appended:  # `neardup dedup in.jsonl >> in.jsonl` would read its own output
        res = subprocess.run([sys.executable, "-c", code, str(src)], stdout=appended, stderr=subprocess.PIPE,
                             timeout=60, check=False)  # fmt: skip
    assert res.returncode == 3 and b"- (stdout) is the same file as INPUT" in res.stderr


# --------------------------------------------------------------------------- OutputFile
def test_output_file_replaces_only_on_commit_and_keeps_link_and_mode(tmp_path: Path) -> None:
    final = tmp_path / "real.txt"
    final.write_text("earlier\n")
    final.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(final)
    out = OutputFile(str(link))
    Path(out.target).write_text("new\n")
    assert final.read_text() == "earlier\n" and Path(out.target).parent == tmp_path
    out.discard()
    assert final.read_text() == "earlier\n" and sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real.txt"]
    out = OutputFile(str(link))
    Path(out.target).write_text("new\n")
    out.commit()
    assert link.is_symlink() and final.read_text() == "new\n"
    assert stat.S_IMODE(final.stat().st_mode) == 0o640


def test_output_file_writes_a_device_in_place(tmp_path: Path) -> None:
    out = OutputFile(os.devnull)
    assert out.target == os.devnull
    out.commit()
    assert Path(os.devnull).is_char_device()  # never renamed onto


def test_an_unwritable_folder_fails_when_the_output_is_opened(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may write any folder")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    with pytest.raises(OutputError, match="cannot write"):
        OutputFile(str(ro / "o.jsonl"))


# --------------------------------------------------------------------------- the commands
@pytest.mark.parametrize("flag", ["-o", "--unique", "--duplicates", "--rejects"])
def test_dedup_refuses_to_write_over_its_input(src: Path, tmp_path: Path, flag: str) -> None:
    link = tmp_path / "other-name.jsonl"
    link.symlink_to(src)
    before = src.read_bytes()
    args = ["-o", os.devnull] if flag != "-o" else []
    res = neardup("dedup", str(src), "-q", *args, flag, str(link))
    assert res.returncode == 1
    assert "is the same file as INPUT" in one_error_line(res)
    assert src.read_bytes() == before


def test_dedup_refuses_an_output_that_is_the_store_or_another_output(src: Path, tmp_path: Path) -> None:
    store = tmp_path / "store.json"
    res = neardup("dedup", str(src), "-q", "--store", f"file://{store}", "-o", str(store))
    assert res.returncode == 1 and "is the same file as --store" in one_error_line(res)
    out = tmp_path / "out.jsonl"
    res = neardup("dedup", str(src), "-q", "-o", str(out), "--unique", str(tmp_path / "." / "out.jsonl"))
    assert res.returncode == 1 and "--unique" in one_error_line(res)
    assert not out.exists() and not store.exists()  # nothing was opened for writing


def test_a_failed_dedup_leaves_earlier_outputs_intact(src: Path, tmp_path: Path) -> None:
    out, rejects = tmp_path / "out.jsonl", tmp_path / "rejects.jsonl"
    first = neardup("dedup", str(src), "-q", "-o", str(out), "--rejects", str(rejects))
    assert first.returncode == 0, first.stderr.decode()[-2000:]
    earlier = out.read_bytes(), rejects.read_bytes()
    assert len(read_jsonl(out)) == len(DOCS)
    # the second run fails after its outputs were opened: a CSV output meets a field its first row lacks
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(b"".join(DOCS) + b'{"id": "x", "text": "' + "某".encode() * 80 + b'", "extra": 1}\n')
    csv_out = tmp_path / "out.csv"
    csv_out.write_text("earlier csv\n")
    failed = neardup("dedup", str(odd), "-q", "-o", str(csv_out), "--rejects", str(rejects))
    assert failed.returncode == 1 and "'extra'" in one_error_line(failed)
    assert csv_out.read_text() == "earlier csv\n" and (out.read_bytes(), rejects.read_bytes()) == earlier
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["in.jsonl", "odd.jsonl", "out.jsonl", "out.csv",
                                                                "rejects.jsonl"])  # no temporary file left


def test_dedup_writes_to_dev_null_and_stdout_as_streams(src: Path) -> None:
    res = neardup("dedup", str(src), "-q", "--rejects", os.devnull, "--unique", os.devnull)
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    assert len(res.stdout.splitlines()) == len(DOCS)
    assert Path(os.devnull).is_char_device()


def test_idf_build_refuses_to_write_over_its_corpus(src: Path) -> None:
    before = src.read_bytes()
    res = neardup("idf", "build", str(src), "-o", str(src))
    assert res.returncode == 1 and "is the same file as CORPUS" in one_error_line(res)
    assert src.read_bytes() == before


def test_eval_and_review_refuse_to_write_over_their_inputs(src: Path, tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"a": "x", "b": "y", "label": 1}\n')
    res = neardup("eval", "--docs", str(src), "--pairs", str(pairs), "--json", str(pairs))
    assert res.returncode == 1 and "--json" in one_error_line(res) and "--pairs" in one_error_line(res)
    report = tmp_path / "report"
    report.mkdir()
    docs_in_report = report / "metrics.json"  # a name eval --report writes
    docs_in_report.write_bytes(src.read_bytes())
    res = neardup("eval", "--docs", str(docs_in_report), "--pairs", str(pairs), "--report", str(report))
    assert res.returncode == 1 and "is the same file as --docs" in one_error_line(res)
    assert docs_in_report.read_bytes() == src.read_bytes()
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text("")
    res = neardup("review", str(decisions), "--docs", str(src), "--feedback", str(decisions))
    assert res.returncode == 1 and "--feedback" in one_error_line(res)
    assert pairs.read_text() == '{"a": "x", "b": "y", "label": 1}\n'
