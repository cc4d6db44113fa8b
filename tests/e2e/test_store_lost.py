"""A Redis Cluster that lost its data mid-run (restarted empty) is noticed: the worker stops
deciding and says why, instead of calling every repeat of an earlier document unique."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.conftest import Pipeline, WorkerProcess, collect, doc_id
from tests.fixtures.redis_servers import start_cluster

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

TEXT = ("关于某某公司变更经营范围申请的批复。经审查，某某公司提交的变更经营范围申请材料齐全，符合相关规定，"
        "决定给予批准。该公司应当自本批复下达之日起三十日内办理变更登记手续。第{n}号")


def _docs(prefix: str, n: int) -> list[bytes]:
    return [json.dumps({"id": f"{prefix}{i}", "text": TEXT.format(n=i)}, ensure_ascii=False).encode()
            for i in range(n)]


def test_a_cluster_restarted_empty_stops_the_worker_with_a_clear_reason(
    pipeline: Pipeline, start_worker: Callable[..., WorkerProcess]
) -> None:
    with tempfile.TemporaryDirectory(prefix="neardup-lost-") as tmp:
        cluster = start_cluster(Path(tmp))  # a private cluster: this test empties it
        try:
            worker = start_worker("w1", store_url=cluster.url)
            worker.wait_ready()
            first = _docs("a", 20)
            pipeline.broker.produce_sync(pipeline.raw, [(doc_id(d).encode(), d) for d in first])
            got = collect(pipeline.broker, [pipeline.unique, pipeline.duplicate], expected=20, settle=1.0)
            assert len(got[pipeline.unique]) == 20
            cluster.flushall()  # every master forgets everything, as after a restart without persistence
            copies = [json.dumps({"id": f"copy{i}", "text": TEXT.format(n=i)}, ensure_ascii=False).encode()
                      for i in range(20)]
            pipeline.broker.produce_sync(pipeline.raw, [(doc_id(d).encode(), d) for d in copies])
            deadline = time.monotonic() + 60
            status, body = 0, {}
            while time.monotonic() < deadline:
                status, body = worker.json("GET", "/ready")
                if status == 503 and "lost its data" in str(body.get("degraded")):
                    break
                time.sleep(0.5)
            assert status == 503 and "lost its data" in str(body.get("degraded")), body
            # nothing was decided against the empty store: no exact copy came out unique
            late = collect(pipeline.broker, [pipeline.unique, pipeline.duplicate, pipeline.dead_letter],
                           expected=41, timeout=10, settle=1.0)
            ids = [json.loads(r.value)["id"] for t in late.values() for r in t]
            assert not [i for i in ids if i.startswith("copy")], ids
            assert "lost its data" in worker.log_tail(200_000)
        finally:
            cluster.stop()
