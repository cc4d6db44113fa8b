"""The store as a least-privilege Redis user over TLS, on a real six-node Redis Cluster.

The cluster (``redis_secure_cluster``) listens with TLS only and gives the user ``neardup`` the
commands of ``neardup.storage.redis.acl.STORE_COMMANDS`` on keys ``nd:*`` and nothing else. The engine
runs whole decide cycles as that user; the server refuses everything outside the list (NOPERM);
a wrong password is an immediate, permanent error that names no secret.
"""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis import exceptions as rex
from redis.asyncio.cluster import RedisCluster as PyRedisCluster

from neardup.config import load_settings
from neardup.document import Document
from neardup.engine import Engine
from neardup.storage import StoreError
from tests.fixtures.redis_servers import HOST, RedisCluster

pytestmark = pytest.mark.integration

NOTICE = (
    "关于某某公司变更经营范围申请的批复\n各有关单位：经审查，某某公司提交的变更经营范围申请材料齐全，"
    "符合相关规定。根据《行政许可法》第三十八条的规定，决定给予批准。该公司应当自本批复下达之日起"
    "三十日内办理变更登记手续，逾期未办理的，本批复自动失效。特此批复。\n二〇二四年三月十五日"
)


def user_settings(cluster: RedisCluster, password: str | None = None, in_url: bool = False, **redis: Any) -> Any:
    """Settings that log in as the store's user: credentials in the store URL, or in
    ``redis.username`` / ``redis.password`` (as the Kubernetes Secret provides them)."""
    assert cluster.security is not None
    # a prefix of its own under the user's key pattern (nd:*): each test starts with an empty store
    options = {**cluster.security.settings(password), "key_prefix": f"nd:{uuid.uuid4().hex[:8]}", **redis}
    if in_url:
        del options["username"], options["password"]
    url = cluster.user_url(password) if in_url else cluster.url
    return load_settings(store_url=url, worker_id="acl-test", redis=options)


def denied_commands(cluster: RedisCluster) -> list[str]:
    """Commands or keys the ``neardup`` user was refused, from every node's ACL LOG."""
    denied = []
    for port in cluster.live_ports():
        fields = cluster.cli(port, "ACL", "LOG").splitlines()  # key, value, key, value ... per entry
        entries: list[dict[str, str]] = []
        for key, value in zip(fields[0::2], fields[1::2], strict=False):
            if key == "count":
                entries.append({})
            if entries:
                entries[-1][key] = value
        denied += [
            f"{e.get('object')} ({e['reason']})"
            for e in entries
            if e.get("username") == "neardup" and e.get("reason") in ("command", "key")
        ]
    return denied


def user_connection(cluster: RedisCluster, port: int) -> aioredis.Redis:
    """A plain redis-py connection to one node, logged in as the store's user, over TLS."""
    assert cluster.security is not None
    sec = cluster.security
    return aioredis.Redis(
        host=HOST, port=port, username=sec.user, password=sec.password, ssl=True, ssl_ca_certs=str(sec.tls.ca_cert)
    )


@pytest.mark.parametrize("in_url", [False, True], ids=["credentials in settings", "credentials in the URL"])
async def test_engine_decides_as_the_acl_user_over_tls(redis_secure_cluster: RedisCluster, in_url: bool) -> None:
    run = uuid.uuid4().hex[:8]
    engine = await Engine.open(user_settings(redis_secure_cluster, in_url=in_url))
    try:
        original = Document(id=f"{run}-granted", text=NOTICE)
        reprint = Document(id=f"{run}-reprint", text="来源：某某网\n" + NOTICE + "\n责任编辑：王五")
        first = await engine.decide([original, reprint])
        # a later window: the near path goes through the store (index scripts, record reads)
        later = Document(id=f"{run}-later", text=NOTICE + "\n（转载自某某日报）")
        second = await engine.decide([later])
        replay = await engine.decide([original])
        stats = await engine.store.stats()
    finally:
        await engine.close()
    assert [d.status for d in first] == ["unique", "duplicate"]
    assert first[1].duplicate_of == original.id
    assert second[0].status == "duplicate" and second[0].duplicate_of == original.id
    assert replay[0].status == "unique" and replay[0].evidence.replay
    assert stats["masters"] == 3 and stats["keys"] > 0
    assert denied_commands(redis_secure_cluster) == []


@pytest.mark.parametrize(
    "command",
    [
        ("FLUSHALL",),
        ("KEYS", "*"),
        ("CONFIG", "GET", "maxmemory"),
        ("CLIENT", "KILL", "ID", "1"),
        ("SCRIPT", "FLUSH"),
        ("HGETALL", "nd:x"),
        ("SET", "other:key", "1"),  # a command of the list, on a key outside nd:*
    ],
    ids=lambda c: " ".join(c[:2]),
)
async def test_commands_outside_the_list_are_refused(
    redis_secure_cluster: RedisCluster, command: tuple[str, ...]
) -> None:
    # one node is enough: Redis checks the ACL before it would redirect a key to another node
    client = user_connection(redis_secure_cluster, redis_secure_cluster.masters()[0])
    try:
        assert await client.execute_command("PING") is True  # the user itself is let in
        with pytest.raises(rex.NoPermissionError, match=r"(?i)permission"):
            await client.execute_command(*command)
    finally:
        await client.aclose()


async def test_no_plain_text_port(redis_secure_cluster: RedisCluster) -> None:
    assert redis_secure_cluster.security is not None
    sec = redis_secure_cluster.security
    client = PyRedisCluster(host=HOST, port=redis_secure_cluster.ports[0], username=sec.user, password=sec.password)
    with pytest.raises((rex.ConnectionError, rex.RedisClusterException)):
        await client.initialize()
    await client.aclose()


@pytest.mark.parametrize("in_url", [False, True], ids=["credentials in settings", "credentials in the URL"])
async def test_wrong_password_fails_at_once_without_the_secret(
    redis_secure_cluster: RedisCluster, caplog: pytest.LogCaptureFixture, in_url: bool
) -> None:
    wrong = "wrong-" + uuid.uuid4().hex
    settings = user_settings(redis_secure_cluster, password=wrong, in_url=in_url, retry_seconds=5)
    with caplog.at_level(logging.DEBUG), pytest.raises(StoreError) as err:
        await Engine.open(settings)
    message = str(err.value)
    assert "\n" not in message and wrong not in message
    assert re.search("(?i)password|auth", message), message
    retries = [r.getMessage() for r in caplog.records if "retry" in r.getMessage().lower()]
    assert retries == [], f"an authentication error was retried: {retries[:3]}"
    assert all(wrong not in r.getMessage() for r in caplog.records)
