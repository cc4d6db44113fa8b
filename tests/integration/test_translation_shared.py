"""The translation check's window shared by two workers through a real Redis Cluster: the state
is read with every window's lookup and written back by compare-and-set (EVALSHA) on the node
that holds it."""

from __future__ import annotations

import uuid

import pytest

from neardup.config import load_settings
from neardup.decision import Rule, Status
from neardup.engine import Engine
from tests.fixtures.redis_servers import RedisCluster
from tests.unit.test_translation import QUAKE_EN, TAX_EN, TAX_ZH, THRESHOLD, doc

pytestmark = pytest.mark.integration


async def test_two_workers_on_the_cluster_share_the_translation_window(redis_cluster: RedisCluster) -> None:
    settings = load_settings(store_url=redis_cluster.url, worker_id="tr-a",
                             redis={"key_prefix": f"tr{uuid.uuid4().hex[:8]}"},
                             translation={"enabled": True, "threshold": THRESHOLD})
    a = await Engine.open(settings)
    b = await Engine.open(settings.model_copy(update={"worker_id": "tr-b"}))
    try:
        first = await a.decide([doc("en1", TAX_EN, "en"), doc("en2", QUAKE_EN, "en")])
        assert [d.status for d in first] == [Status.UNIQUE, Status.UNIQUE]
        got = (await b.decide([doc("zh1", TAX_ZH, "zh")]))[0]
    finally:
        await a.close()
        await b.close()
    assert got.status is Status.DUPLICATE and got.duplicate_of == "en1", got.evidence
    assert got.evidence.rule is Rule.TRANSLATION and got.evidence.cosine is not None
    assert b.translation is not None and b.translation.shared_version == a.translation.shared_version  # type: ignore[union-attr]
