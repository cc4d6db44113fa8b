"""``neardup feedback`` and ``neardup model show | history | rollback``: the learning loop's commands."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from neardup.cli import batch_store_settings, config_option, load_cli_settings, require_store_extra, store_option
from neardup.errors import ConfigError, InputError
from neardup.learning.model import Model, learn, read_model, write_model

# stores that outlive the command: the model written to any other (memory://) is thrown away
PERSISTENT_SCHEMES = frozenset({"file", "redis", "rediss", "rediscluster"})


def require_persistent_store(settings: Any, command: str, *, must_exist: bool = False) -> None:
    """Refuse a store that does not persist (``memory://``, the default when no ``--store`` is given)
    before anything is read: the model would be learned or rolled back, reported, and lost. With
    ``must_exist``, a ``file://`` store that does not exist is refused too (reading it would create it).
    """
    scheme, _, path = settings.store_url.partition("://")
    if scheme not in PERSISTENT_SCHEMES:
        raise ConfigError(f"{command} needs a store that keeps the model, not {scheme}:// (forgotten when the "
                          "command ends)",
                          hint="give --store file://PATH or redis://HOST:PORT (or NEARDUP_STORE_URL)")  # fmt: skip
    if must_exist and scheme == "file" and not Path(path).is_file():
        raise ConfigError(f"no such store file: {path}",
                          hint="check --store; neardup feedback --store file://PATH creates one")  # fmt: skip


def _documents(path: str, settings: Any) -> dict[str, Any]:
    from neardup.files.records import read_documents

    return {doc.id: doc for doc in read_documents(path, settings.normalize)}


async def _open_store(settings: Any) -> Any:
    from neardup.engine import store_options
    from neardup.storage import open_store

    store = open_store(settings.store_url, ttl=settings.ttl_seconds, **store_options(settings))
    await store.open()
    return store


async def _feedback(settings: Any, feedback_path: str, docs_path: str, target_precision: float) -> dict[str, Any]:
    from neardup.learning.feedback import DecisionFeedback, read_feedback
    from neardup.learning.model import labels_from_feedback

    records = list(read_feedback(feedback_path))
    docs = _documents(docs_path, settings)
    store = await _open_store(settings)
    try:
        model, history = await read_model(store)
        decisions = await store.get_decisions([r.id for r in records if isinstance(r, DecisionFeedback)])
        labels, skipped = labels_from_feedback(records, decisions)
        candidate, outcome = await learn(settings, model, labels, docs, target_precision)
        if outcome.accepted and not await write_model(store, candidate, history):
            raise InputError("the store's model changed while learning", hint="run neardup feedback again")
    finally:
        await store.close()
    # "metrics" is what neardup model show prints for the model in force after this run (every label
    # held); "guard" is the harm check on the labels held before this batch; "out_of_fold" the
    # labels held, each fold decided by the model and by what the other folds would teach
    return {"accepted": outcome.accepted, "version": outcome.version, "message": outcome.message,
            "metrics": outcome.metrics,
            "guard": {"labels": outcome.guarded, "before": outcome.before, "after": outcome.after},
            "out_of_fold": {"before": outcome.out_of_fold_before, "after": outcome.out_of_fold_after},
            "labels_new": outcome.labels_new, "labels_held": outcome.labels_held,
            "labels_overturned": outcome.overturned, "skipped": skipped}


@click.command("feedback", short_help="Learn a model version from reviewers' feedback.")
@click.argument("feedback_path", metavar="FILE", type=click.Path(exists=True, dir_okay=False))
@click.option("--docs", "docs_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The documents the feedback names, with their texts (id, text; JSONL, CSV or Parquet).")
@click.option("--target-precision", type=click.FloatRange(0.5, 1.0), default=0.99, show_default=True,
              help="Pair precision the re-calibrated thresholds must keep.")
@store_option
@config_option
def feedback_command(feedback_path: str, docs_path: str, target_precision: float, store_url: str | None,
                     config_path: str | None) -> None:
    """Learn from reviewers' feedback records in FILE; the new model version goes to the store.

    FILE holds one record a line (JSONL; CSV or Parquet with these fields as columns), either shape:

    \b
      {"a": ID, "b": ID, "is_duplicate": true}   b is (true) or is not (false) a near-duplicate of a
      {"id": ID, "correct": false}               the decision stored for document ID was right or not
      optional in both: "reviewer", "note" (text), "at" (ISO-8601 time with a zone offset)

    neardup review --feedback writes such a file. A later record about a pair replaces an earlier
    one; the summary counts the labels held that this batch overturned. The batch is rejected
    (exit 1, nothing changed) if the model it makes would lower the pair F1 on the labels the
    store's model already holds. Its "metrics" are those neardup model show prints.
    """
    settings = batch_store_settings(load_cli_settings(config_path, store_url=store_url))
    require_persistent_store(settings, "neardup feedback")
    require_store_extra(settings)
    result = asyncio.run(_feedback(settings, feedback_path, docs_path, target_precision))
    click.echo(json.dumps(result, ensure_ascii=False, indent=1))
    if not result["accepted"]:
        raise click.exceptions.Exit(1)


@click.group("model", short_help="Show, list or roll back the store's learned model.")
def model_group() -> None:
    """The learned model in the store: show it, list its versions, roll back."""


async def _show(settings: Any, history: bool) -> Any:
    store = await _open_store(settings)
    try:
        model, versions = await read_model(store)
    finally:
        await store.close()
    if history:
        return [{k: v for k, v in h.items() if k != "payload"} for h in versions]
    return model.summary()


@model_group.command("show", short_help="The model in force (version 0: nothing learned).")
@store_option
@config_option
def model_show(store_url: str | None, config_path: str | None) -> None:
    """The model in force (version 0: nothing learned)."""
    settings = batch_store_settings(load_cli_settings(config_path, store_url=store_url))
    require_persistent_store(settings, "neardup model show", must_exist=True)
    require_store_extra(settings)
    click.echo(json.dumps(asyncio.run(_show(settings, False)), ensure_ascii=False, indent=1))


@model_group.command("history", short_help="Every version written, oldest first.")
@store_option
@config_option
def model_history(store_url: str | None, config_path: str | None) -> None:
    """Every version written, oldest first."""
    settings = batch_store_settings(load_cli_settings(config_path, store_url=store_url))
    require_persistent_store(settings, "neardup model history", must_exist=True)
    require_store_extra(settings)
    click.echo(json.dumps(asyncio.run(_show(settings, True)), ensure_ascii=False, indent=1))


async def _rollback(settings: Any, to: int) -> Model:
    store = await _open_store(settings)
    try:
        model, history = await read_model(store)
        if to == 0:
            old = Model()
        else:
            found = [h for h in history if h["version"] == to]
            if not found:
                raise InputError(f"no model version {to} in the store's history",
                                 hint="see neardup model history")
            old = Model.from_bytes(found[0]["payload"].encode())
        new = replace(old, version=model.version + 1, parent=model.version, note=f"rollback to v{to}")
        if not await write_model(store, new, history):
            raise InputError("the store's model changed meanwhile", hint="run the rollback again")
    finally:
        await store.close()
    return new


@model_group.command("rollback", short_help="Make an earlier version current again.")
@click.option("--to", "to", type=click.IntRange(0), required=True, help="The version to go back to (0: none).")
@store_option
@config_option
def model_rollback(to: int, store_url: str | None, config_path: str | None) -> None:
    """Make an earlier version current again (written as a new version: history is kept)."""
    settings = batch_store_settings(load_cli_settings(config_path, store_url=store_url))
    require_persistent_store(settings, "neardup model rollback", must_exist=True)
    require_store_extra(settings)
    new = asyncio.run(_rollback(settings, to))
    click.echo(json.dumps(new.summary(), ensure_ascii=False, indent=1))


__all__ = ["feedback_command", "model_group"]
