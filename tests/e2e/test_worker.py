"""One real worker process on the session broker: every document out exactly once, bad input to
dead-letter, the web views, offsets committed only for emitted documents."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from neardup.agents.client import publish_file, tail_records
from tests.e2e.conftest import Pipeline, WorkerProcess, collect, doc_id, load_docs
from tests.fixtures.kafka_broker import run_sync

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(420)]

N_DOCS = 300
BAD_MESSAGES: list[tuple[bytes | None, bytes, str]] = [
    (None, b"this is not JSON {", "bad_json"),
    (b"no-id", json.dumps({"text": "a document without an id"}).encode(), "missing_id"),
    (b"bad-utf8", b'{"id": "bad-utf8", "text": "caf\xe9 \xff\xfe"}', "bad_encoding"),
]


def committed_total(pipeline: Pipeline) -> int:
    """Sum of the group's committed raw offsets (read by a consumer: tansu lacks the admin call)."""

    async def offsets() -> int:
        from aiokafka import AIOKafkaConsumer, TopicPartition

        consumer = AIOKafkaConsumer(
            bootstrap_servers=pipeline.broker.bootstrap, group_id=pipeline.app_id, enable_auto_commit=False
        )
        await consumer.start()
        try:
            total = 0
            for p in range(pipeline.partitions):
                total += await consumer.committed(TopicPartition(pipeline.raw, p)) or 0
            return total
        finally:
            await consumer.stop()

    return run_sync(offsets)


@pytest.mark.parametrize("store_url", ["memory", "rediscluster"], indirect=True)
def test_worker_end_to_end(
    pipeline: Pipeline,
    start_worker: Callable[..., WorkerProcess],
    store_url: str,
    datasets_dir: Path,
    tmp_path: Path,
) -> None:
    broker = pipeline.broker
    worker = start_worker("w1", store_url=store_url)
    ready = worker.wait_ready()
    assert ready["ready"] is True and ready["engine"] == "open"
    assert len(ready["assigned"]) == pipeline.partitions

    # documents through the CLI's publish (JSONL file -> raw), bad messages straight to raw
    docs = load_docs(datasets_dir, N_DOCS)
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_bytes(b"\n".join(docs) + b"\n")
    settings = pipeline.settings()
    sent = publish_file(settings, jsonl, progress=False)  # idempotent where the broker allows it
    assert sent == N_DOCS
    broker.produce_sync(pipeline.raw, [(k, v) for k, v, _ in BAD_MESSAGES])
    total = N_DOCS + len(BAD_MESSAGES)

    got = collect(broker, pipeline.outputs, expected=total, timeout=180)
    unique = [json.loads(r.value) for r in got[pipeline.unique]]
    duplicate = [json.loads(r.value) for r in got[pipeline.duplicate]]
    dead = [json.loads(r.value) for r in got[pipeline.dead_letter]]

    # every id exactly once over unique + duplicate, keyed by its id
    ids = Counter(rec["id"] for rec in unique + duplicate)
    assert set(ids) == {doc_id(d) for d in docs}, "missing or unexpected ids"
    assert all(n == 1 for n in ids.values()), {k: n for k, n in ids.items() if n > 1}
    for r in got[pipeline.unique] + got[pipeline.duplicate]:
        assert r.key.decode() == json.loads(r.value)["id"]
    assert all(rec["status"] == "unique" and rec["duplicate_of"] is None for rec in unique)
    assert all(rec["status"] == "duplicate" and rec["duplicate_of"] in ids for rec in duplicate)
    assert all("evidence" in rec and "text" in rec for rec in unique + duplicate)

    # bad input: one dead-letter record each, with reason, original bytes and position
    assert sorted(d["reason"] for d in dead) == sorted(reason for _, _, reason in BAD_MESSAGES)
    by_reason = {d["reason"]: d for d in dead}
    assert by_reason["bad_json"]["raw"] == "this is not JSON {"
    assert by_reason["bad_json"]["raw_encoding"] == "utf-8"
    assert by_reason["bad_encoding"]["raw_encoding"] == "base64"
    for d in dead:
        assert d["topic"] == pipeline.raw and d["partition"] in range(pipeline.partitions)
        assert d["offset"] >= 0 and d["error"]

    # web views
    status, health = worker.json("GET", "/health")
    assert status == 200 and health["status"] == "ok"
    status, body = worker.http("GET", "/metrics")
    text = body.decode()
    assert status == 200
    assert "neardup_documents_total" in text and "neardup_agent_outputs_total" in text
    assert 'neardup_dead_letter_total{reason="bad_json"} 1.0' in text
    assert f"neardup_agent_messages_in_total {float(total)}" in text
    # the same registry on the dedicated metrics port that Prometheus scrapes
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{worker.metrics_port}/metrics", timeout=5) as resp:
        scraped = resp.read().decode()
    assert 'neardup_dead_letter_total{reason="bad_json"} 1.0' in scraped
    # publish-to-decision latency, from the broker's timestamps (the documents carry none)
    count = next(line for line in scraped.splitlines() if line.startswith("neardup_decision_latency_seconds_count"))
    assert float(count.split()[-1]) > 0

    probe = json.loads(docs[0])
    probe["id"] = "check-only-probe"
    status, decision = worker.json("POST", "/check", json.dumps(probe).encode())
    assert status == 200, decision
    assert decision["id"] == "check-only-probe"
    assert decision["status"] in ("unique", "duplicate") and "evidence" in decision
    assert decision["status"] == "duplicate" and decision["duplicate_of"] in ids
    status, err = worker.json("POST", "/check", b"{not json")
    assert status == 400 and err["reason"] == "bad_json"
    status, err = worker.json("POST", "/check", b'{"text": "no id here"}')
    assert status == 400 and err["reason"] == "missing_id"
    # POST /search: the stored document the probe duplicates is among the near-duplicates of its text
    status, found = worker.json("POST", "/search", json.dumps({"text": probe["text"], "limit": 100}).encode())
    assert status == 200 and decision["duplicate_of"] in {m["id"] for m in found["matches"]}, found
    assert worker.json("POST", "/search", b'{"id": "no-such-id"}')[0] == 404

    # tail (CLI glue) sees the same records; /check emitted nothing
    out = io.StringIO()
    n = tail_records(settings, "unique", from_beginning=True, timeout=3, out=out)
    assert n == len(unique)
    tailed = [json.loads(line) for line in out.getvalue().splitlines()]
    assert {t["id"] for t in tailed} == {u["id"] for u in unique}
    assert "check-only-probe" not in {t["id"] for t in tailed}

    # graceful stop commits every offset: all raw messages were emitted before being acked
    assert worker.stop() == 0
    assert committed_total(pipeline) == total, worker.log_tail()


def test_cli_publish_and_tail(pipeline: Pipeline, datasets_dir: Path, tmp_path: Path) -> None:
    """``neardup publish`` (idempotent by default, on either broker) and ``neardup tail --meta``."""
    import os
    import subprocess
    import sys

    from tests.e2e.conftest import ROOT

    docs = load_docs(datasets_dir, 40)
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_bytes(b"\n".join(docs) + b"\n\n")  # a blank line is skipped
    env = {**os.environ, **pipeline.env(), "PYTHONPATH": str(ROOT)}

    def neardup(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "neardup", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip

    run = neardup("publish", str(jsonl), "--no-progress")
    assert run.returncode == 0, run.stderr
    assert f"published {len(docs)} messages to {pipeline.raw}" in run.stderr
    if pipeline.broker.supports_transactions:  # Apache Kafka: the idempotent producer, no fallback
        assert "without idempotence" not in run.stderr, run.stderr

    run = neardup("tail", "raw", "--from-beginning", "--max", "25", "--timeout", "20", "--meta")
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(lines) == 25
    assert all(r["topic"] == pipeline.raw and r["key"] == r["value"]["id"] for r in lines)


def test_worker_joins_a_translation_when_the_check_is_enabled(
    pipeline: Pipeline, start_worker: Callable[..., WorkerProcess], tmp_path: Path
) -> None:
    """The optional translation check in the service: a worker with it enabled (settings from the
    environment) puts a Chinese translation of an English story in its cluster, with the cosine;
    the other story of each language stays unique (texts as in tests/unit/test_translation.py)."""
    from tests.unit.test_translation import QUAKE_EN, SCHOOL_ZH, TAX_EN, TAX_ZH, THRESHOLD

    worker = start_worker("tr", NEARDUP_TRANSLATION__ENABLED="true", NEARDUP_TRANSLATION__THRESHOLD=str(THRESHOLD))
    worker.wait_ready()
    docs = [("en1", TAX_EN, "en"), ("en2", QUAKE_EN, "en"), ("zh1", TAX_ZH, "zh"), ("zh2", SCHOOL_ZH, "zh")]
    jsonl = tmp_path / "stories.jsonl"
    jsonl.write_text("".join(json.dumps({"id": i, "text": t, "lang": lang}) + "\n" for i, t, lang in docs),
                     encoding="utf-8")
    assert publish_file(pipeline.settings(), jsonl, progress=False) == len(docs)
    got = collect(pipeline.broker, pipeline.outputs, expected=len(docs), timeout=120)
    records = {rec["id"]: rec for rec in (json.loads(r.value) for r in got[pipeline.unique] + got[pipeline.duplicate])}
    assert set(records) == {"en1", "en2", "zh1", "zh2"}, worker.log_tail()
    # partitions may deliver either one first: the later is the duplicate of the earlier
    joined = [records[i] for i in ("en1", "zh1") if records[i]["status"] == "duplicate"]
    assert len(joined) == 1, (records, worker.log_tail())
    assert joined[0]["duplicate_of"] == ({"en1", "zh1"} - {joined[0]["id"]}).pop()
    assert joined[0]["evidence"]["rule"] == "translation" and joined[0]["evidence"]["cosine"] >= THRESHOLD
    assert records["en2"]["status"] == records["zh2"]["status"] == "unique"
    assert worker.stop() == 0
