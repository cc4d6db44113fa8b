"""Feedback on the ``feedback`` topic reaches the workers: a new model version, adopted by the
decisions that follow, without a restart."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest

from tests.e2e.conftest import Pipeline, WorkerProcess, collect, doc_id
from tests.unit.test_engine import NOTICE

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def _doc(i: str, text: str) -> bytes:
    return json.dumps({"id": i, "text": text}, ensure_ascii=False).encode()


def test_feedback_on_the_topic_becomes_the_model_every_decision_names(
    pipeline: Pipeline, start_worker: Callable[..., WorkerProcess]
) -> None:
    worker = start_worker("w1")
    worker.wait_ready()
    first = [_doc("a", NOTICE), _doc("r", "来源：某网\n" + NOTICE), _doc("f", NOTICE.replace("给予批准", "不予批准"))]
    pipeline.broker.produce_sync(pipeline.raw, [(doc_id(d).encode(), d) for d in first])
    got = collect(pipeline.broker, [pipeline.unique, pipeline.duplicate], expected=3, settle=0.5)
    assert {json.loads(r.value)["evidence"]["threshold_version"] >= 0 for t in got.values() for r in t} == {True}
    assert all(json.loads(r.value)["evidence"].get("model_version", 0) == 0 for t in got.values() for r in t)
    feedback = [b'{"a": "a", "b": "r", "is_duplicate": true}', b'{"a": "a", "b": "f", "is_duplicate": false}',
                b"not a record"]
    pipeline.broker.produce_sync(pipeline.settings().topics.feedback, [(b"fb", v) for v in feedback])
    deadline = time.monotonic() + 90
    versions: set[int] = set()
    n = 0
    while time.monotonic() < deadline and 1 not in versions:
        n += 1
        d = _doc(f"later{n}", f"一篇与之无关的新文章，第{n}篇，讲述城市公园春天的景象，游客很多，十分热闹。" * 3)
        pipeline.broker.produce_sync(pipeline.raw, [(doc_id(d).encode(), d)])
        out = collect(pipeline.broker, [pipeline.unique, pipeline.duplicate], expected=3 + n, timeout=20, settle=0.2)
        versions = {json.loads(r.value)["evidence"].get("model_version", 0) for t in out.values() for r in t}
        time.sleep(1)
    assert 1 in versions, worker.log_tail()
    log = worker.log_tail(200_000)
    assert "feedback record skipped" in log and "model v1" in log
