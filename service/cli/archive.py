"""``neardup archive`` (move kept documents to the cold tier), ``neardup archive migrate`` (create or
update its schema) and ``neardup search`` (every near-duplicate of a text or an id, across tiers).

The cold tier is a PostgreSQL database (:mod:`neardup.storage.postgres`); these commands need the
``archive`` extra, and say so in one line when it is missing.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import TYPE_CHECKING, Any

import click

from neardup.cli import (
    archive_option,
    batch_store_settings,
    config_option,
    load_cli_settings,
    require_store_extra,
    store_option,
)
from neardup.errors import ConfigError

if TYPE_CHECKING:
    from neardup.config import Settings

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_duration(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``45s``, ``2w`` in seconds."""
    m = _DURATION.match(text)
    if m is None:
        raise click.BadParameter(f"{text!r}: expected a number and a unit (s, m, h, d, w), e.g. 30d")
    return float(m.group(1)) * _UNITS[m.group(2)]


def _archive_settings(config_path: str | None, store_url: str | None, archive_url: str | None) -> Settings:
    settings = batch_store_settings(load_cli_settings(config_path, store_url=store_url, archive_url=archive_url))
    if not settings.archive_url:
        raise ConfigError("no cold tier given", hint="give --archive postgresql://USER:PASSWORD@HOST:PORT/DB "
                                                     "or set NEARDUP_ARCHIVE_URL")
    require_store_extra(settings)
    return settings


def _echo(data: dict[str, Any]) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, allow_nan=False))


# --------------------------------------------------------------------------- archive
@click.group("archive", invoke_without_command=True,
             short_help="Move kept documents to the cold tier (PostgreSQL).")
@click.option("--older-than", "older_than", default="30d", show_default=True, metavar="DURATION",
              help="Move the documents first seen at least this long ago (s, m, h, d, w: 30d, 12h).")
@click.option("--batch", default=500, show_default=True, type=click.IntRange(1, 100_000),
              help="Documents copied, verified and removed from the store at a time.")
@click.option("--every", metavar="DURATION", help="Run again and again, this long apart (a long-running service).")
@store_option
@archive_option
@config_option
@click.pass_context
def archive_group(ctx: click.Context, older_than: str, batch: int, every: str | None, store_url: str | None,
                  archive_url: str | None, config_path: str | None) -> None:
    """Move the documents of the content types kept forever (ttl_seconds null: announcements by
    default) that were first seen more than --older-than ago from the store to the cold tier:
    copy, verify, then remove from the store. Idempotent; a run killed at any point loses and
    doubles nothing, and the next run finishes its work. Prints one JSON line a run.

    The cold tier's schema must exist: neardup archive migrate --archive URL.
    """
    if ctx.invoked_subcommand is not None:
        return
    settings = _archive_settings(config_path, store_url, archive_url)
    horizon = parse_duration(older_than)
    pause = parse_duration(every) if every else None
    while True:
        _echo(asyncio.run(_archive(settings, horizon, batch)))
        if pause is None:
            return
        time.sleep(pause)


async def _archive(settings: Settings, older_than: float, batch: int) -> dict[str, Any]:
    from neardup.engine import store_options
    from neardup.storage import open_store
    from neardup.storage.postgres.archive import ColdArchive
    from neardup.storage.postgres.mover import move

    warm = open_store(settings.store_url, ttl=settings.ttl_seconds, **store_options(settings))
    cold = ColdArchive(settings.archive_url or "", key_filter_bytes=0)  # it writes; it looks nothing up
    started = time.perf_counter()
    await warm.open()
    try:
        await cold.open()
        before = await warm.stats()
        report = await move(warm, cold, older_than, batch)
        after = await warm.stats()
        # the workers start from the filter saved here instead of reading every archived key
        budget = settings.archive_key_filter_mb << 20
        key_filter = await cold.save_filter(budget) if budget else {}
    finally:
        await warm.close()
        await cold.close()
    return {**report.as_dict(), "seconds": round(time.perf_counter() - started, 3),
            "store_before": before, "store_after": after, "key_filter": key_filter}


@archive_group.command("migrate", short_help="Create or update the cold tier's schema.")
@archive_option
@config_option
def migrate_command(archive_url: str | None, config_path: str | None) -> None:
    """Create the cold tier's tables or bring them to this version (idempotent: a rerun does nothing)."""
    settings = load_cli_settings(config_path, archive_url=archive_url)
    if not settings.archive_url:
        raise ConfigError("no cold tier given", hint="give --archive postgresql://USER:PASSWORD@HOST:PORT/DB "
                                                     "or set NEARDUP_ARCHIVE_URL")
    require_store_extra(settings)
    _echo(asyncio.run(_migrate(settings.archive_url)))


async def _migrate(url: str) -> dict[str, Any]:
    from neardup.storage.postgres.archive import ColdArchive

    cold = ColdArchive(url)
    await cold.open(migrating=True)
    try:
        applied = await cold.migrate()
        return {"archive": cold.url, "applied": applied, "version": await cold.schema_version()}
    finally:
        await cold.close()


# --------------------------------------------------------------------------- search
def parse_since(text: str) -> float:
    """An ISO 8601 date or time (``2026-01-31``, ``2026-01-31T08:00:00+08:00``; no zone: UTC) in epoch seconds."""
    import datetime as dt

    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected an ISO 8601 date or time, e.g. 2026-01-31") from None
    return (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp()


@click.command("search", short_help="Near-duplicates of a text or id, across tiers.")
@click.argument("text", required=False)
@click.option("--id", "doc_id", metavar="ID", help="Search for the near-duplicates of this stored document.")
@click.option("--type", "content_type", default="default", show_default=True,
              help="The content type TEXT is read as (its thresholds).")
@click.option("--since", metavar="DATE", help="Only documents first seen at or after DATE (ISO 8601; UTC if no zone).")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 100_000),
              help="At most this many lines, the most similar first.")
@store_option
@archive_option
@config_option
def search_command(text: str | None, doc_id: str | None, content_type: str, since: str | None, limit: int,
                   store_url: str | None, archive_url: str | None, config_path: str | None) -> None:
    """Print, as JSON lines, every near-duplicate of TEXT (or of the stored document --id ID) in the
    store and the cold tier: its id, tier, rule, similarity, first-seen time and publication time
    (ISO 8601, UTC), and the first publisher of the cluster (earliest published, then earliest
    decided). Nothing is stored.
    """
    from neardup.search import search_stores, select

    if (text is None) == (doc_id is None):
        raise click.UsageError("give either TEXT or --id ID")
    settings = batch_store_settings(load_cli_settings(config_path, store_url=store_url, archive_url=archive_url))
    require_store_extra(settings)
    after = parse_since(since) if since else None
    for row in select(asyncio.run(search_stores(settings, text, doc_id, content_type)), after, limit):
        _echo(row)
