"""``neardup store migrate``: re-file a Redis store's index in this version's layout.

The warm store's index lives in time-bucketed keys (:mod:`neardup.storage.redis.keys`); a store
written before buckets (unbucketed shard keys whose members carry their own expiry), or with
another bucket width (a changed ttl or ``redis.index_bucket_seconds``), is re-filed by this
command, master by master, while workers keep running. Idempotent: a second run moves nothing.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

import click

from neardup.cli import batch_store_settings, config_option, load_cli_settings, require_store_extra, store_option
from neardup.errors import ConfigError

if TYPE_CHECKING:
    from neardup.config import Settings


@click.group("store", short_help="Maintenance of the Redis store (index layout).")
def store_group() -> None:
    """Maintenance of the Redis fingerprint store."""


@store_group.command("migrate", short_help="Re-file an older index layout in today's buckets.")
@store_option
@config_option
def migrate_command(store_url: str | None, config_path: str | None) -> None:
    """Re-file every index key of an older layout (the unbucketed keys written before time buckets,
    buckets of another width) into the time buckets this version reads, dropping entries already
    expired and keeping those of content kept forever. Safe while workers run; prints one JSON line
    (keys re-filed, entries moved and dropped, the bucket width, seconds)."""
    settings = batch_store_settings(load_cli_settings(config_path, store_url=store_url))
    if not settings.store_url.startswith(("redis://", "rediss://", "rediscluster://")):
        raise ConfigError(f"{settings.redacted()['store_url']}: only a Redis store has an index layout to migrate",
                          hint="give --store redis://HOST:PORT or rediscluster://HOST:PORT,...")
    require_store_extra(settings)
    click.echo(json.dumps(asyncio.run(_migrate(settings))))


async def _migrate(settings: Settings) -> dict[str, Any]:
    from neardup.engine import store_options
    from neardup.storage.redis.store import RedisFingerprintStore
    from neardup.storage.registry import open_store

    store = open_store(settings.store_url, ttl=settings.ttl_seconds, **store_options(settings))
    assert isinstance(store, RedisFingerprintStore)  # a redis URL, checked above
    started = time.perf_counter()
    await store.open(migrating=True)
    try:
        report = await store.migrate()
    finally:
        await store.close()
    return {"store": store.url, "keys": report.keys, "moved": report.moved, "dropped": report.dropped,
            "bucket_seconds": report.bucket_seconds, "seconds": round(time.perf_counter() - started, 3)}
