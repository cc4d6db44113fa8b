"""A broker that stops answering is said: once in the log, in ``/ready`` (not ready) and in
``neardup_broker_reachable``, after ``BROKER_AWAY_SECONDS`` of unanswered calls; and its return
too. (The worker's calls to the broker are the lag refresh's, every few seconds.)"""

from __future__ import annotations

import logging
from typing import Any

import pytest

KAFKA_EXTRA = "the kafka extra is not installed (pip install 'neardup[kafka]')"
app = pytest.importorskip("neardup.agents.app", reason=KAFKA_EXTRA)
faust_types = pytest.importorskip("faust.types", reason=KAFKA_EXTRA)

from neardup.config import load_settings  # noqa: E402 (the kafka extra first, or skip)


class FailingConsumer:
    """A consumer whose broker calls fail, as while the broker is down."""

    async def highwaters(self, *tps: Any) -> dict[Any, int]:
        raise ConnectionError("broker gone")


def runtime() -> Any:
    rt = app.Runtime(load_settings(store_url="memory://", worker_id="w"))
    rt.engine = object()  # open
    rt.assigned = {faust_types.TP("docs", 0)}
    rt._update_ready()
    return rt


def gauge(rt: Any, name: str) -> float:
    value = rt.registry.get_sample_value(name)
    assert value is not None
    return float(value)


def test_a_broker_away_long_enough_is_said_once_and_its_return_too(caplog: pytest.LogCaptureFixture) -> None:
    rt = runtime()
    assert rt.ready and gauge(rt, "neardup_broker_reachable") == 1
    with caplog.at_level(logging.WARNING, logger=app.log.name):
        rt.broker_unanswered(ConnectionError("x"), now=100.0)
        assert rt.ready  # a moment's failure is no outage
        rt.broker_unanswered(ConnectionError("x"), now=100.0 + app.BROKER_AWAY_SECONDS)
        rt.broker_unanswered(ConnectionError("x"), now=200.0)
        assert not rt.ready and rt.status()["broker"] == "away"
        assert gauge(rt, "neardup_broker_reachable") == 0 and gauge(rt, "neardup_agent_ready") == 0
        rt.broker_answered(now=257.0)
    assert rt.ready and rt.status()["broker"] == "answering" and gauge(rt, "neardup_broker_reachable") == 1
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and "has not answered for 15 s" in lines[0] and "again after 157 s" in lines[1]


async def test_the_lag_refresh_is_the_probe() -> None:
    rt = runtime()
    await rt.refresh_lag(FailingConsumer())
    assert rt.broker_failing_since is not None and rt.ready
