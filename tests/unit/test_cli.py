"""The ``neardup`` program run as a user would: the batch commands, every --help, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample.jsonl"
PAIRS = ROOT / "samples" / "pairs.jsonl"


def neardup(
    *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "neardup", *args], cwd=ROOT, input=stdin,
                          capture_output=True, env=full_env, timeout=300, check=False)


def read_jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_dedup_splits_rejects_and_summarises(tmp_path: Path) -> None:
    lines = SAMPLE.read_bytes().splitlines()[:60]
    bad = [b"not json", b'{"text": "no id"}', b'{"id": "x", "text": ""}']
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"\n".join(lines[:30] + bad + lines[30:]) + b"\n")
    out, uniq, dups, rej = (tmp_path / n for n in ("all.jsonl", "u.jsonl", "d.jsonl", "r.jsonl"))
    res = neardup("dedup", str(src), "-o", str(out), "--unique", str(uniq), "--duplicates", str(dups),
                  "--rejects", str(rej), "-q")
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    decided = read_jsonl(out)
    assert [d["id"] for d in decided] == [json.loads(x)["id"] for x in lines]  # each once, in order
    assert len(read_jsonl(uniq)) + len(read_jsonl(dups)) == 60
    assert all(d["status"] == "duplicate" and d["duplicate_of"] for d in read_jsonl(dups))
    reasons = sorted(str(r["reason"]) for r in read_jsonl(rej))
    assert reasons == ["bad_json", "empty_text", "missing_id"]
    summary = json.loads(res.stderr.decode().strip().splitlines()[-1])
    assert summary["documents"] == 63 and summary["rejected"] == 3
    assert summary["unique"] + summary["duplicate"] == 60


def test_dedup_reads_stdin_and_file_store_remembers(tmp_path: Path) -> None:
    data = SAMPLE.read_bytes()
    store = f"file://{tmp_path / 'store.json'}"
    first = neardup("dedup", "-", "--store", store, "-q", stdin=data)
    assert first.returncode == 0, first.stderr.decode()[-2000:]
    again = neardup("dedup", "-", "--store", store, "-q", stdin=data)
    one = [json.loads(x) for x in first.stdout.splitlines()]
    two = [json.loads(x) for x in again.stdout.splitlines()]
    assert [(d["status"], d["duplicate_of"]) for d in one] == [(d["status"], d["duplicate_of"]) for d in two]
    assert all(d["evidence"].get("replay") for d in two)  # answered from the persisted store


def test_explain_names_the_critical_difference() -> None:
    a = "国务院关于同意设立某某经济开发区的批复。经研究，决定给予批准，请按规定办理相关手续，并于三十日内报送材料。"
    b = a.replace("给予批准", "不予批准")
    res = neardup("explain", a, b, "--json")
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    report = json.loads(res.stdout)
    assert report["critical_difference"]["kind"] == "polarity"
    assert report["decision_for_b_after_a"]["status"] == "unique"
    assert report["jaccard_estimate"] > 0.5 and report["shared_shingles"] > 10
    text = neardup("explain", a, a + "。").stdout.decode()
    assert "similarity rule: jaccard" in text and "decision for B after A: duplicate" in text


def test_eval_writes_plots_and_metrics(tmp_path: Path) -> None:
    res = neardup("eval", "--docs", str(SAMPLE), "--pairs", str(PAIRS), "--report", str(tmp_path))
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    out = res.stdout.decode()
    assert "precision" in out and "negation_flip" in out and "recommended thresholds" in out
    for name in ("similarity_histograms.png", "roc.png", "confusion_matrix.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert 0.0 <= metrics["precision"] <= 1.0 and metrics["pairs"] == len(read_jsonl(PAIRS))


def test_idf_build_and_use(tmp_path: Path) -> None:
    idf = tmp_path / "idf.txt"
    res = neardup("idf", "build", str(SAMPLE), "-o", str(idf), "--min-df", "2")
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    rows = [line.split() for line in idf.read_text(encoding="utf-8").splitlines()]
    assert len(rows) > 100 and all(len(r) == 2 and float(r[1]) > 0 for r in rows)
    weights = {w: float(v) for w, v in rows}
    assert weights["规定"] < max(weights.values())  # a word in many documents weighs less
    used = neardup("dedup", str(SAMPLE), "-q", "-o", str(tmp_path / "out.jsonl"),
                   env={"NEARDUP_FINGERPRINT__IDF_PATH": str(idf)})
    assert used.returncode == 0, used.stderr.decode()[-2000:]


def test_bad_config_is_a_clear_error() -> None:
    res = neardup("dedup", str(SAMPLE), "-q", env={"NEARDUP_THRESHOLDS__JACCARD_LOW": "0.9",
                                                   "NEARDUP_THRESHOLDS__JACCARD_HIGH": "0.5"})
    assert res.returncode != 0
    assert b"jaccard_low must not exceed" in res.stderr


# --------------------------------------------------------------------------- the click program
GROUPS: list[list[str]] = []  # command paths that only group others (filled by all_commands)


def all_commands() -> list[list[str]]:
    """Every command path of the program, read from the click group itself (lazy ones included)."""
    import click

    from neardup.cli import cli

    paths: list[list[str]] = []

    def walk(group: click.Group, prefix: list[str]) -> None:
        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            paths.append([*prefix, name])
            if isinstance(sub, click.Group):
                GROUPS.append([*prefix, name])
                walk(sub, [*prefix, name])

    walk(cli, [])
    return [[], *paths]


SUBCOMMANDS = all_commands()


def test_the_program_has_the_commands_of_the_issue() -> None:
    for command in (["dedup"], ["explain"], ["eval"], ["bench"], ["idf", "build"], ["worker"], ["publish"],
                    ["tail"]):  # fmt: skip
        assert command in SUBCOMMANDS


def one_error_line(res: subprocess.CompletedProcess[bytes]) -> str:
    """The stderr of a failed run: exactly one line, ``neardup: error: ...``, no traceback."""
    lines = res.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("neardup: error: "), res.stderr.decode()[-2000:]
    assert b"Traceback" not in res.stderr
    return lines[0]


@pytest.mark.parametrize("command", SUBCOMMANDS, ids=lambda c: " ".join(c) or "neardup")
def test_every_subcommand_has_help(command: list[str]) -> None:
    res = neardup(*command, "--help")
    assert res.returncode == 0, res.stderr.decode()
    out = res.stdout.decode()
    assert out.startswith(f"Usage: neardup {' '.join(command)}".rstrip())
    if command in (["dedup"], ["worker"]):
        assert "NEARDUP_STORE_URL" in out and "store_url" in out
    if command in (["worker"], ["publish"], ["tail"]):
        assert "NEARDUP_BROKER_URL" in out and "broker_url" in out
    if command and command not in GROUPS and command[0] not in ("bench", "idf"):
        assert "NEARDUP_CONFIG" in out, "a command without --config"


def test_version_comes_from_the_package_metadata() -> None:
    from importlib.metadata import version

    res = neardup("--version")
    assert res.returncode == 0 and res.stdout.decode().strip() == f"neardup {version('neardup')}"


def test_the_domain_never_imports_the_kafka_transport() -> None:
    code = ("import sys; from neardup.cli import main; main(['--help']); "
            "bad = [m for m in ('faust', 'aiokafka', 'neardup.agents.app') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=120, check=False)
    assert res.returncode == 0, res.stdout.decode() + res.stderr.decode()


def test_usage_errors_exit_2() -> None:
    assert neardup("dedup").returncode == 2  # missing INPUT
    res = neardup("dedup", str(SAMPLE), "--no-such-flag")
    assert res.returncode == 2 and b"No such option" in res.stderr
    assert neardup("no-such-command").returncode == 2


def test_missing_input_file_is_one_line(tmp_path: Path) -> None:
    res = neardup("dedup", str(tmp_path / "missing.jsonl"))
    assert res.returncode == 1
    assert "missing.jsonl does not exist" in one_error_line(res)


def test_bad_settings_are_one_line_and_verbose_shows_the_traceback(tmp_path: Path) -> None:
    env = {"NEARDUP_THRESHOLDS__JACCARD_LOW": "0.9", "NEARDUP_THRESHOLDS__JACCARD_HIGH": "0.5"}
    res = neardup("dedup", str(SAMPLE), "-q", env=env)
    assert res.returncode == 1
    line = one_error_line(res)
    assert "thresholds" in line and "jaccard_low must not exceed" in line and "NEARDUP_" in line
    verbose = neardup("-v", "dedup", str(SAMPLE), "-q", env=env)
    assert verbose.returncode == 1 and b"Traceback" in verbose.stderr
    missing = neardup("dedup", str(SAMPLE), "--config", str(tmp_path / "none.toml"))
    assert missing.returncode == 1 and "none.toml not found" in one_error_line(missing)
    bad_file = tmp_path / "bad.toml"
    bad_file.write_text("[thresholds\n")
    broken = neardup("dedup", str(SAMPLE), "--config", str(bad_file))
    assert broken.returncode == 1 and "bad.toml" in one_error_line(broken)


def test_unreachable_store_is_one_line() -> None:
    res = neardup("dedup", str(SAMPLE), "-q", "-o", os.devnull, "--store", "redis://127.0.0.1:1",
                  env={"NEARDUP_REDIS__RETRY_SECONDS": "0"})  # fmt: skip
    assert res.returncode == 1
    line = one_error_line(res)
    assert "redis://127.0.0.1:1" in line and "NEARDUP_STORE_URL" in line


def test_dedup_reads_csv_and_parquet_and_writes_by_extension(tmp_path: Path) -> None:
    import csv

    import pyarrow as pa
    import pyarrow.parquet as pq

    docs = read_jsonl(SAMPLE)[:80]
    src_csv = tmp_path / "in.csv"
    with src_csv.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["doc_id", "body"])
        w.writerows([d["id"], d["text"]] for d in docs)
    src_parquet = tmp_path / "in.data"  # no telling extension: --format says it
    pq.write_table(pa.Table.from_pylist([{"doc_id": d["id"], "body": d["text"]} for d in docs]), src_parquet)

    base = neardup("dedup", str(SAMPLE), "-q", "-o", str(tmp_path / "base.jsonl"))
    assert base.returncode == 0, base.stderr.decode()[-2000:]
    expected = [(d["id"], d["status"], d["duplicate_of"]) for d in read_jsonl(tmp_path / "base.jsonl")][:80]

    fields = ["--id-field", "doc_id", "--text-field", "body"]
    res = neardup("dedup", str(src_csv), *fields, "-q", "-o", str(tmp_path / "out.parquet"),
                  "--duplicates", str(tmp_path / "dups.csv"))  # fmt: skip
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    table = pq.read_table(tmp_path / "out.parquet").to_pylist()
    assert [(r["doc_id"], r["status"], r["duplicate_of"]) for r in table] == expected
    assert all(json.loads(r["evidence"])["reason"] for r in table)  # evidence as JSON text
    with (tmp_path / "dups.csv").open(encoding="utf-8") as f:
        dups = list(csv.DictReader(f))
    assert [r["doc_id"] for r in dups] == [i for i, s, _ in expected if s == "duplicate"]

    res = neardup("dedup", str(src_parquet), "--format", "parquet", *fields, "-q", "-o", str(tmp_path / "o.csv"))
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    with (tmp_path / "o.csv").open(encoding="utf-8") as f:
        assert [(r["doc_id"], r["status"], r["duplicate_of"] or None) for r in csv.DictReader(f)] == expected


def test_a_file_that_is_not_a_store_is_one_line(tmp_path: Path) -> None:
    other = tmp_path / "notes.json"
    other.write_text("[1, 2]")
    res = neardup("dedup", str(SAMPLE), "-q", "-o", os.devnull, "--store", f"file://{other}")
    assert res.returncode == 1 and "not a neardup-store v" in one_error_line(res)


@pytest.mark.parametrize("case", ["wrong_id_field", "binary_input"])
def test_a_run_that_rejects_everything_overwrites_no_decisions_file(tmp_path: Path, case: str) -> None:
    if case == "binary_input":
        src = tmp_path / "in.jsonl"
        src.write_bytes(bytes(range(256)) * 40)
        extra: list[str] = []
    else:
        src, extra = SAMPLE, ["--id-field", "no_such_field"]
    earlier = {name: f'{{"earlier": "{name}"}}\n' for name in ("all.jsonl", "u.jsonl", "d.jsonl")}
    for name, text in earlier.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    rej = tmp_path / "r.jsonl"
    res = neardup("dedup", str(src), *extra, "-q", "-o", str(tmp_path / "all.jsonl"),
                  "--unique", str(tmp_path / "u.jsonl"), "--duplicates", str(tmp_path / "d.jsonl"),
                  "--rejects", str(rej))  # fmt: skip
    assert res.returncode == 1
    assert "were rejected, none decided" in res.stderr.decode().strip().splitlines()[-1]
    for name, text in earlier.items():
        assert (tmp_path / name).read_text(encoding="utf-8") == text, name
    assert read_jsonl(rej), "the rejects file is the run's account of the failure"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_eval_reads_csv_documents_and_parquet_pairs(tmp_path: Path) -> None:
    import csv

    import pyarrow as pa
    import pyarrow.parquet as pq

    docs = tmp_path / "docs.csv"
    with docs.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text"])
        w.writerows([d["id"], d["text"]] for d in read_jsonl(SAMPLE))
    pairs = tmp_path / "pairs.parquet"
    pq.write_table(pa.Table.from_pylist(read_jsonl(PAIRS)), pairs)
    res = neardup("eval", "--docs", str(docs), "--pairs", str(pairs), "--json", str(tmp_path / "m.json"))
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    base = neardup("eval", "--docs", str(SAMPLE), "--pairs", str(PAIRS), "--json", str(tmp_path / "b.json"))
    assert base.returncode == 0, base.stderr.decode()[-2000:]
    got, want = (json.loads((tmp_path / n).read_text()) for n in ("m.json", "b.json"))
    assert (got["precision"], got["recall"], got["pairs"]) == (want["precision"], want["recall"], want["pairs"])


@pytest.mark.parametrize(("pair", "message"), [
    ('{"a": "%s", "b": "not-in-docs", "label": 1}', "line 2: id 'not-in-docs' is not in --docs"),
    ('{"a": "%s", "b": "%s"}', "line 2: no 'label'"),
    ('{"a": "%s", "b": ', "line 2: not JSON"),
])  # fmt: skip
def test_eval_bad_pairs_are_one_line_naming_the_file_and_line(tmp_path: Path, pair: str, message: str) -> None:
    ids = [str(d["id"]) for d in read_jsonl(SAMPLE)[:2]]
    pairs = tmp_path / "pairs.jsonl"
    first = PAIRS.read_text(encoding="utf-8").splitlines()[0]
    pairs.write_text(first + "\n" + pair % tuple(ids[: pair.count("%s")]) + "\n", encoding="utf-8")
    res = neardup("eval", "--docs", str(SAMPLE), "--pairs", str(pairs))
    assert res.returncode == 1
    line = one_error_line(res)
    assert f"{pairs} {message}" in line and "unexpected" not in line, line


def test_idf_build_reads_csv_and_names_a_bad_line(tmp_path: Path) -> None:
    import csv

    corpus = tmp_path / "corpus.csv"
    with corpus.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text"])
        w.writerows([d["id"], d["text"]] for d in read_jsonl(SAMPLE))
    res = neardup("idf", "build", str(corpus), "-o", str(tmp_path / "idf.txt"))
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    assert len((tmp_path / "idf.txt").read_text(encoding="utf-8").splitlines()) > 100
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "x"}\nnot json\n', encoding="utf-8")
    res = neardup("idf", "build", str(bad), "-o", str(tmp_path / "idf.txt"))
    assert res.returncode == 1 and f"{bad} line 2: not JSON" in one_error_line(res)


def test_an_unreachable_redis_is_announced_at_once_and_given_up_in_seconds() -> None:
    import time

    started = time.monotonic()
    res = neardup("dedup", str(SAMPLE), "-q", "-o", os.devnull, "--store", "redis://127.0.0.1:1")
    elapsed = time.monotonic() - started
    assert res.returncode == 1
    lines = res.stderr.decode().strip().splitlines()
    assert len(lines) == 2 and b"Traceback" not in res.stderr, lines
    assert lines[0] == ("neardup: redis://127.0.0.1:1: open failed (ConnectionError); retrying for up to 5 s "
                        "(setting redis.retry_seconds, NEARDUP_REDIS__RETRY_SECONDS)")
    assert lines[1].startswith("neardup: error: redis://127.0.0.1:1: open: gave up after retrying for 5 s")
    assert elapsed < 20, elapsed  # the workers' 30 s is not the batch commands' wait


SHORT_HELP_CHARS = 55  # fits beside the longest command name in an 80-column terminal


@pytest.mark.parametrize("command", [c for c in SUBCOMMANDS if c], ids=" ".join)
def test_every_command_has_a_short_help_that_fits(command: list[str]) -> None:
    import click

    from neardup.cli import cli

    found: click.Command | None = cli
    ctx = click.Context(cli)
    for name in command:
        assert isinstance(found, click.Group)
        found = found.get_command(ctx, name)
    assert found is not None
    summary = found.short_help or ""
    assert summary and len(summary) <= SHORT_HELP_CHARS and not summary.endswith("..."), (
        f"give neardup {' '.join(command)} a short_help of at most {SHORT_HELP_CHARS} characters: {summary!r}")


def test_the_help_lists_cut_no_summary() -> None:
    for group in ([], *GROUPS):
        res = neardup(*group, "--help", env={"COLUMNS": "80"})
        assert res.returncode == 0, res.stderr.decode()
        listed = res.stdout.decode().split("Commands:", 1)[1]
        assert "..." not in listed, listed


def test_feedback_help_gives_the_record_format() -> None:
    out = neardup("feedback", "--help").stdout.decode()
    for part in ('{"a": ID, "b": ID, "is_duplicate": true}', '{"id": ID, "correct": false}', '"reviewer"',
                 '"note"', '"at"', "CSV or Parquet"):
        assert part in out, part


def test_dedup_parquet_to_parquet_keeps_timestamps(tmp_path: Path) -> None:
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    docs = read_jsonl(SAMPLE)[:20]
    stamps = [dt.datetime(2024, 1, 1, 8, 0, 0) + dt.timedelta(hours=i) for i in range(len(docs))]
    schema = pa.schema([("id", pa.string()), ("text", pa.string()), ("published_at", pa.timestamp("us")),
                        ("day", pa.date32())])  # fmt: skip
    src = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": d["id"], "text": d["text"], "published_at": t, "day": t.date()}
                                         for d, t in zip(docs, stamps, strict=True)], schema=schema), src)
    res = neardup("dedup", str(src), "-q", "-o", str(tmp_path / "out.parquet"), "--unique", str(tmp_path / "u.pq"))
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    for name in ("out.parquet", "u.pq"):
        table = pq.read_table(tmp_path / name)
        assert table.schema.field("published_at").type == pa.timestamp("us"), name
        assert table.schema.field("day").type == pa.date32(), name
    out = pq.read_table(tmp_path / "out.parquet").to_pylist()
    assert [r["published_at"] for r in out] == stamps and [r["day"] for r in out] == [t.date() for t in stamps]
