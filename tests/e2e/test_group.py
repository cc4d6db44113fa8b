"""Two workers in one consumer group sharing a Redis Cluster store: a worker killed with -9 loses
nothing, and near-duplicates that reach different workers at the same moment get one original."""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Pipeline, WorkerProcess, collect, doc_id, load_docs, wait_balanced
from tests.fixtures.kafka_broker import run_sync

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(480)]


def records_by_id(got: dict[str, list[Any]], topics: list[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in topics:
        for r in got[t]:
            rec = json.loads(r.value)
            out[rec["id"]].append(rec)
    return out


@pytest.mark.parametrize("store_url", ["rediscluster"], indirect=True)
def test_kill_9_mid_stream_loses_nothing(
    pipeline: Pipeline, start_worker: Callable[..., WorkerProcess], store_url: str, datasets_dir: Path
) -> None:
    broker = pipeline.broker
    # small windows, so that w1 is certainly in the middle of its backlog when it dies
    small = {"NEARDUP_WINDOW__MAX_COUNT": "20", "NEARDUP_WINDOW__MAX_AGE_SECONDS": "0.2"}
    w1 = start_worker("w1", store_url=store_url, **small)
    w2 = start_worker("w2", store_url=store_url, **small)
    w1.wait_ready()
    w2.wait_ready()
    wait_balanced([w1, w2], pipeline.partitions)

    docs = load_docs(datasets_dir, 800)
    chunks = [docs[i : i + 50] for i in range(0, len(docs), 50)]

    def produce_slowly() -> None:  # ~8 s of traffic
        for chunk in chunks:
            broker.produce_sync(pipeline.raw, [(doc_id(d), d) for d in chunk])
            time.sleep(0.5)

    producer = threading.Thread(target=produce_slowly, daemon=True)
    producer.start()
    # kill -9 once outputs are flowing: w1 then holds acked-but-uncommitted and unprocessed events
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if len(broker.consume_sync(pipeline.outputs, expected=100, timeout=2)) >= 100:
            break
    w1.kill()
    producer.join(60)

    got = collect(broker, pipeline.outputs, expected=len(docs), timeout=180, settle=5)
    by_id = records_by_id(got, [pipeline.unique, pipeline.duplicate])
    missing = {doc_id(d) for d in docs} - set(by_id)
    assert not missing, f"{len(missing)} ids lost after kill -9:\n{w2.log_tail()}"
    assert not got[pipeline.dead_letter]
    # redelivered documents are answered from the store: the same decision every time
    for i, recs in by_id.items():
        assert len({(r["status"], r["duplicate_of"]) for r in recs}) == 1, (i, recs)
    redelivered = sum(1 for recs in by_id.values() if len(recs) > 1)
    by_worker: defaultdict[str, int] = defaultdict(int)
    for recs in by_id.values():
        for r in recs:
            by_worker[r["evidence"].get("worker_id")] += 1
    print(f"kill -9: {redelivered} ids emitted more than once; records by worker {dict(by_worker)}")
    assert w2.proc.poll() is None, w2.log_tail()
    assert w2.stop() == 0


@pytest.mark.parametrize("store_url", ["rediscluster"], indirect=True)
def test_near_duplicates_racing_on_two_partitions(
    pipeline: Pipeline, start_worker: Callable[..., WorkerProcess], store_url: str, datasets_dir: Path
) -> None:
    broker = pipeline.broker
    w1 = start_worker("w1", store_url=store_url)
    w2 = start_worker("w2", store_url=store_url)
    w1.wait_ready()
    w2.wait_ready()
    held = wait_balanced([w1, w2], pipeline.partitions)
    pa = int(sorted(held[0])[0].rsplit(":", 1)[1])
    pb = int(sorted(held[1])[0].rsplit(":", 1)[1])

    bases = [json.loads(d) for d in load_docs(datasets_dir, 30, offset=2000)]
    lefts, rights = [], []
    for i, base in enumerate(bases):
        text = base["text"]
        # even pairs: exact copies; odd pairs: a near-duplicate with a short line added at the end
        other = (
            text if i % 2 == 0 else text + ("\n责任编辑：王小明" if base.get("lang") == "zh" else "\nEditor: J. Smith")
        )
        lefts.append((f"race-{i}-a", json.dumps({"id": f"race-{i}-a", "text": text}, ensure_ascii=False)))
        rights.append((f"race-{i}-b", json.dumps({"id": f"race-{i}-b", "text": other}, ensure_ascii=False)))

    async def both() -> None:
        import asyncio

        await asyncio.gather(
            broker.produce(pipeline.raw, lefts, partition=pa),
            broker.produce(pipeline.raw, rights, partition=pb),
        )

    run_sync(both)
    got = collect(broker, pipeline.outputs, expected=2 * len(bases), timeout=120, settle=3)
    by_id = records_by_id(got, [pipeline.unique, pipeline.duplicate])
    assert len(by_id) == 2 * len(bases) and not got[pipeline.dead_letter]
    wrong = []
    for i in range(len(bases)):
        a, b = by_id[f"race-{i}-a"][0], by_id[f"race-{i}-b"][0]
        statuses = sorted([a["status"], b["status"]])
        pair_ok = statuses == ["duplicate", "unique"] and (
            (a["status"] == "duplicate" and a["duplicate_of"] == b["id"])
            or (b["status"] == "duplicate" and b["duplicate_of"] == a["id"])
        )
        if not pair_ok:
            wrong.append((i, a["status"], a["duplicate_of"], b["status"], b["duplicate_of"]))
    assert not wrong, f"pairs without exactly one original: {wrong}"
