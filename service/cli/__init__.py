"""The ``neardup`` program (also ``python -m neardup``), built with click.

Subcommands: dedup, explain, eval, bench, idf build, and the streaming ones worker, publish and tail.
The streaming commands live in ``neardup.agents.commands`` and are loaded by module path only when
they are run or listed (click's lazy-group pattern), so the domain never imports the Kafka
transport and ``import neardup.cli`` imports neither faust nor aiokafka.

Exit codes: 0 done; 1 a runtime error (one line on stderr: what failed and what to do; the
traceback only with ``-v``); 2 a usage error (click's message).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import resource
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from neardup.errors import ConfigError, InputError, NeardupError
from neardup.files.outputs import Named, OutputFile, check_paths
from neardup.files.records import (
    FieldMap,
    Format,
    InputRecord,
    RecordWriter,
    check_readable,
    format_for,
    parquet_temporal_types,
)

if TYPE_CHECKING:
    from neardup.config import Settings
    from neardup.decision import Decision
    from neardup.engine import Engine

log = logging.getLogger("neardup")
F = TypeVar("F", bound=Callable[..., Any])

# name -> "module.attribute" of a click command, imported only when needed
LAZY_COMMANDS = {
    "worker": "neardup.agents.commands.worker",
    "publish": "neardup.agents.commands.publish",
    "tail": "neardup.agents.commands.tail",
    "review": "neardup.review.server.review_command",
    "calibrate": "neardup.learning.calibrate.calibrate_command",
    "feedback": "neardup.cli.learning.feedback_command",
    "model": "neardup.cli.learning.model_group",
    "bench": "neardup.bench.cli.bench",
    "warmup": "neardup.cli.warmup.warmup_command",
    "archive": "neardup.cli.archive.archive_group",
    "search": "neardup.cli.archive.search_command",
    "store": "neardup.cli.store.store_group",
}


# libraries that log a failure (as ERROR) that neardup reports itself, in one line
QUIET_LOGGERS = ("aiokafka",)


class LazyGroup(click.Group):
    """A click group whose listed subcommands are imported by module path on first use.

    This is the pattern of click's documentation ("Lazily Loading Subcommands").
    """

    def __init__(self, *args: Any, lazy_subcommands: dict[str, str] | None = None, **kwargs: Any) -> None:
        """``lazy_subcommands``: name -> ``module.attribute`` of a click command; the rest as click.Group."""
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = dict(lazy_subcommands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Eager and lazy subcommands, sorted."""
        return sorted([*super().list_commands(ctx), *self.lazy_subcommands])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The subcommand ``cmd_name``, importing its module if it is a lazy one."""
        if cmd_name in self.lazy_subcommands:
            return self._lazy_load(cmd_name)
        return super().get_command(ctx, cmd_name)

    def _lazy_load(self, cmd_name: str) -> click.Command:
        module_name, attr = self.lazy_subcommands[cmd_name].rsplit(".", 1)
        command = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"lazy subcommand {cmd_name}: {module_name}.{attr} is not a click command")
        return command


# --------------------------------------------------------------------------- shared options
def config_option(f: F) -> F:
    """``--config FILE``: the TOML/YAML settings file (env NEARDUP_CONFIG)."""
    return click.option(
        "--config", "config_path", envvar="NEARDUP_CONFIG", show_envvar=True, metavar="FILE",
        help="TOML/YAML settings file (below NEARDUP_* variables in priority).",
    )(f)  # fmt: skip


def store_option(f: F) -> F:
    """``--store URL``: the fingerprint store (env NEARDUP_STORE_URL, settings key store_url)."""
    return click.option(
        "--store", "store_url", envvar="NEARDUP_STORE_URL", show_envvar=True, metavar="URL",
        help="Fingerprint store: memory:// (default), file://PATH, redis://HOST:PORT, "
             "rediss://HOST:PORT or rediscluster://HOST:PORT[,HOST:PORT...]. Settings key: store_url.",
    )(f)  # fmt: skip


def archive_option(f: F) -> F:
    """``--archive URL``: the cold tier (env NEARDUP_ARCHIVE_URL, settings key archive_url)."""
    return click.option(
        "--archive", "archive_url", envvar="NEARDUP_ARCHIVE_URL", show_envvar=True, metavar="URL",
        help="Cold tier: postgresql://USER:PASSWORD@HOST:PORT/DB[?sslmode=require]; the content types kept "
             "forever are also looked up there. Settings key: archive_url.",
    )(f)  # fmt: skip


def broker_option(f: F) -> F:
    """``--broker URL``: the Kafka broker (env NEARDUP_BROKER_URL, settings key broker_url)."""
    return click.option(
        "--broker", "broker_url", envvar="NEARDUP_BROKER_URL", show_envvar=True, metavar="URL",
        help="Kafka bootstrap servers: kafka://HOST:PORT[;HOST:PORT...]. Settings key: broker_url.",
    )(f)  # fmt: skip


def load_cli_settings(config_path: str | None, **overrides: Any) -> Settings:
    """Settings from the file, NEARDUP_* variables and the given flags (None = not given).

    A bad value or an unreadable settings file becomes a :class:`ConfigError` naming the field.
    """
    from pydantic import ValidationError

    from neardup.config import load_settings
    from neardup.config.settings import UnknownSettingError

    given = {k: v for k, v in overrides.items() if v is not None}
    if config_path is not None and not Path(config_path).is_file():
        raise ConfigError(f"settings file {config_path} not found", hint="check --config / NEARDUP_CONFIG")
    try:
        return load_settings(config_path, **given)
    except ValidationError as exc:
        # messages only: the rejected value (e['input']) may be a secret
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        raise ConfigError(f"bad settings: {problems}",
                          hint="fix the flag, the NEARDUP_* variable or the settings file") from exc  # fmt: skip
    except UnknownSettingError as exc:
        raise ConfigError(str(exc), hint="fix the name of the NEARDUP_* variable or of the settings-file key") from exc
    except ValueError as exc:  # the settings file does not parse (its message names the file, never its text)
        raise ConfigError(str(exc), hint="fix the file or --config") from exc
    except OSError as exc:
        raise ConfigError(f"settings file {config_path}: {exc.strerror or exc}",
                          hint="fix the file or --config") from exc  # fmt: skip


def batch_store_settings(settings: Settings) -> Settings:
    """``settings`` for a batch command (dedup, feedback, model): an unreachable Redis is retried
    for :data:`~neardup.config.settings.BATCH_RETRY_SECONDS` unless ``redis.retry_seconds`` is set
    (the workers' longer default rides out a failover; a person at a terminal wants a wrong --store
    reported in seconds). Notices of a store being retried are printed on stderr from then on."""
    from neardup.config.settings import BATCH_RETRY_SECONDS

    _print_notices()
    if "retry_seconds" in settings.redis.model_fields_set:
        return settings
    redis = settings.redis.model_copy(update={"retry_seconds": BATCH_RETRY_SECONDS})
    return settings.model_copy(update={"redis": redis})


def require_store_extra(settings: Settings) -> None:
    """A Redis store URL needs the ``redis`` extra, a cold tier the ``archive`` extra: say so in one
    line before anything starts."""
    from neardup.storage.extras import require_extra

    if settings.store_url.startswith(("redis://", "rediss://", "rediscluster://")):
        require_extra("redis", "redis", f"the store {settings.store_url.split('://', 1)[0]}://")
    if settings.archive_url:
        require_extra("psycopg", "archive", "the cold tier (--archive, archive_url)")


# --------------------------------------------------------------------------- the group
def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``: read from the installed metadata only when asked (importlib.metadata is
    about 50 ms of every start)."""
    if value and not ctx.resilient_parsing:
        import neardup

        click.echo(f"neardup {neardup.__version__}")
        ctx.exit()


@click.group(cls=LazyGroup, lazy_subcommands=LAZY_COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})  # fmt: skip
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
@click.option("-v", "--verbose", is_flag=True, help="Debug logging, and the traceback of a failure.")
def cli(verbose: bool) -> None:
    """Streaming near-duplicate detection for crawled text."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")  # fmt: skip
    if not verbose:  # a failure is reported in one line of ours; the clients' own log lines repeat it
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.CRITICAL)


def _print_notices() -> None:
    """Notices for the person at the terminal (a store being retried) go to stderr as ``neardup: MESSAGE``."""
    from neardup.storage.errors import NOTICE_LOGGER

    notices = logging.getLogger(NOTICE_LOGGER)
    if not any(getattr(h, "neardup_notices", False) for h in notices.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("neardup: %(message)s"))
        handler.neardup_notices = True  # type: ignore[attr-defined]
        notices.addHandler(handler)
    notices.propagate = False
    notices.setLevel(logging.INFO)


# --------------------------------------------------------------------------- dedup
class DedupOutputs:
    """The files ``dedup`` writes: every decision, and optionally the unique, the duplicates, the rejects.

    Each regular file is written beside its final path and put in place only by :meth:`close`
    (:mod:`neardup.files.outputs`); :meth:`abort` leaves earlier files as they were.
    """

    def __init__(self, output: str, unique: str | None, duplicates: str | None, rejects: str | None,
                 types: dict[str, Any] | None = None) -> None:  # fmt: skip
        """Open every output (each in the format of its extension); None: not written. ``types``:
        the input's temporal columns, kept as such in Parquet decisions files."""
        self.opened: list[RecordWriter] = []
        try:
            self.all = self._open(output, types)
            self.unique = self._open(unique, types) if unique else None
            self.duplicates = self._open(duplicates, types) if duplicates else None
            self.rejects = self._open(rejects, None) if rejects else None
        except BaseException:
            self.abort()
            raise

    def _open(self, path: str, types: dict[str, Any] | None) -> RecordWriter:
        from neardup.files.records import open_writer

        self.opened.append(open_writer(path, types=types))
        return self.opened[-1]

    def close(self) -> None:
        """Finish every file and put it in place."""
        for w in self.opened:
            w.close()

    def close_rejects_only(self) -> None:
        """A run that decided nothing: only the rejects file (the failure's account) is put in place;
        the decisions files from earlier runs stay as they were."""
        for w in self.opened:
            if w is self.rejects:
                w.close()
            else:
                w.abort()

    def abort(self) -> None:
        """Drop what this run wrote; files from earlier runs stay as they were."""
        for w in self.opened:
            w.abort()


class DedupRun:
    """One ``neardup dedup``: windows of documents through the engine, counts for the summary."""

    def __init__(self, engine: Engine, settings: Settings, outputs: DedupOutputs, bar: Any,
                 fields: FieldMap) -> None:  # fmt: skip
        """``bar``: a tqdm progress bar or None; ``fields`` restores the input's id/text field names."""
        from neardup.engine import WindowPipeline
        from neardup.media.hashes import limits_of
        from neardup.sketch.window import Window

        self.fields = fields
        self.engine = engine
        self.pipeline = WindowPipeline(engine)
        self.settings = settings
        self.outputs = outputs
        self.bar = bar
        self.window: Window[Any] = Window(settings.window.max_count, settings.window.max_age_seconds)
        self.limits = settings.normalize
        self.image_limits = limits_of(settings.images)
        self.counts: Counter[str] = Counter()
        self.decided = 0

    @property
    def failed(self) -> bool:
        """Every record was rejected and none decided: the run fails and writes no decisions file."""
        return self.counts["rejected"] > 0 and self.decided == 0

    async def add(self, rec: InputRecord) -> None:
        """Validate one record; reject it or add it to the window (deciding the window once it closes)."""
        from neardup.document import InvalidDocument, parse_document

        if rec.problem is not None:
            self.reject(rec, *rec.problem)
            return
        n = self.limits
        try:
            doc = parse_document(rec.data, max_bytes=n.max_bytes, max_id_length=n.max_id_length,
                                 naive_time_zone=n.naive_time_zone, image_limits=self.image_limits)  # fmt: skip
        except InvalidDocument as exc:
            self.reject(rec, exc.reason, exc.detail)
            return
        # a window closes at max_count documents, or once it is max_age old (slow stdin)
        if self.window.add(doc) or self.window.expired():
            await self.flush("count" if len(self.window) >= self.window.max_count else "age")

    def reject(self, rec: InputRecord, reason: str, detail: str) -> None:
        """Count a bad record and write it to the rejects file with its reason."""
        self.counts["rejected"] += 1
        self.counts[f"rejected:{reason}"] += 1
        self.engine.metrics.rejected.labels(reason).inc()
        if self.outputs.rejects is not None:
            self.outputs.rejects.write({"line": rec.position, "reason": reason, "error": detail,
                                        "raw": rec.preview()[:10_000]})  # fmt: skip
        if self.bar is not None:
            self.bar.update(1)

    async def flush(self, reason: str) -> None:
        """Close the window: it is fingerprinted at once and decided once the next windows are
        being fingerprinted (:class:`neardup.engine.WindowPipeline`); a window closed by age
        (slow input) or the last one is decided now, with those before it. Writes the
        decisions of every window decided."""
        docs = self.window.drain()
        if docs:
            self.engine.metrics.window_closed.labels(reason).inc()
        decided = await self.pipeline.add(docs)
        if reason != "count":
            decided += await self.pipeline.drain()
        for decisions in decided:
            self.write(decisions)

    def write(self, decisions: list[Decision]) -> None:
        """Write a window's decisions and count them."""
        from neardup.decision import Status

        for d in decisions:
            record = self.fields.restore(d.to_record())
            self.outputs.all.write(record)
            target = self.outputs.unique if d.status is Status.UNIQUE else self.outputs.duplicates
            if target is not None:
                target.write(record)
            self.counts[d.status.value] += 1
            evidence = record.get("evidence") or {}
            if d.status is Status.DUPLICATE:
                self.counts[f"duplicate:{evidence.get('rule')}"] += 1
            elif evidence.get("critical"):
                self.counts["unique:critical_difference"] += 1
            self.decided += 1
        if self.bar is not None:
            self.bar.update(len(decisions))

    def summary(self, elapsed: float) -> dict[str, Any]:
        """The run's figures, printed as JSON on stderr."""
        c = self.counts
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        def by(prefix: str) -> dict[str, int]:
            return {k.split(":", 1)[1]: v for k, v in sorted(c.items()) if k.startswith(prefix + ":")}

        return {
            "documents": self.decided + c["rejected"],
            "unique": c["unique"],
            "duplicate": c["duplicate"],
            "duplicate_by_rule": by("duplicate"),
            "unique_after_critical_difference": c["unique:critical_difference"],
            "rejected": c["rejected"],
            "rejected_by_reason": by("rejected"),
            "seconds": round(elapsed, 3),
            "documents_per_second": round(self.decided / elapsed, 1) if elapsed > 0 else None,
            "peak_rss_mb": round(peak_mb, 1),
            "store": self.settings.redacted()["store_url"],
            **({"archive": self.settings.redacted()["archive_url"]} if self.settings.archive_url else {}),
        }


def _progress(total: int | None, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="doc", file=sys.stderr, dynamic_ncols=True)


async def _dedup(settings: Settings, source: str, fmt: Format, fields: FieldMap, outputs: DedupOutputs,
                 quiet: bool) -> dict[str, Any]:  # fmt: skip
    from neardup import collector
    from neardup.engine import Engine
    from neardup.files.records import count_records, read_records

    try:
        engine = await Engine.open(settings)
    except BaseException:
        outputs.abort()
        raise
    collector.settle()  # this process runs the engine to the end: its start-up objects stay
    bar = _progress(count_records(source, fmt), sys.stderr.isatty() and not quiet)
    run = DedupRun(engine, settings, outputs, bar, fields)
    started = time.perf_counter()
    try:
        for rec in read_records(source, fmt, fields):
            await run.add(rec)
        await run.flush("end")
        await engine.close()
    except BaseException:
        outputs.abort()
        await _close_quietly(engine)
        raise
    finally:
        if bar is not None:
            bar.close()
    if run.failed:
        outputs.close_rejects_only()
    else:
        outputs.close()
    return run.summary(time.perf_counter() - started)


async def _close_quietly(engine: Engine) -> None:
    """Close the engine after a failure: the failure is what gets reported, not a second one."""
    try:
        await engine.close()
    except Exception as exc:
        log.debug("closing the engine after a failure: %s: %s", type(exc).__name__, exc)


@cli.command(short_help="Decide each document: unique, or duplicate of which.")
@click.argument("source", metavar="INPUT")
@click.option("-o", "--output", default="-", show_default=True, metavar="FILE",
              help="Every decision: the input record plus status, duplicate_of and evidence (- = stdout). "
                   "Format by extension: .jsonl, .csv, .parquet.")
@click.option("--unique", metavar="FILE", help="Also write the unique documents here.")
@click.option("--duplicates", metavar="FILE", help="Also write the duplicates here.")
@click.option("--rejects", metavar="FILE", help="Invalid input, each with its reason.")
@click.option("--format", "input_format", type=click.Choice([f.value for f in Format]),
              help="Input format (default: by extension: .jsonl, .csv, .parquet; - is JSONL).")
@click.option("--id-field", default="id", show_default=True, help="Input field that holds the document id.")
@click.option("--text-field", default="text", show_default=True, help="Input field that holds the text.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar; a one-line summary.")
@store_option
@archive_option
@config_option
def dedup(source: str, output: str, unique: str | None, duplicates: str | None, rejects: str | None,
          input_format: str | None, id_field: str, text_field: str, quiet: bool, store_url: str | None,
          archive_url: str | None, config_path: str | None) -> None:
    """Decide every document of INPUT: unique, or duplicate of which one and why.

    INPUT is JSONL, CSV or Parquet (- is JSONL on stdin). Each output file's format follows its
    extension (.jsonl, .csv, .parquet; - is JSONL on stdout); in CSV and Parquet the evidence is
    JSON text.
    """
    settings = batch_store_settings(load_cli_settings(config_path, store_url=store_url, archive_url=archive_url))
    require_store_extra(settings)
    check_readable(source)
    fmt = format_for(source, Format(input_format) if input_format else None)
    writes = [Named(opt, path) for opt, path in (("-o/--output", output), ("--unique", unique),
                                                 ("--duplicates", duplicates), ("--rejects", rejects)) if path]
    check_paths([Named("INPUT", source), *_store_files(settings)], writes)
    types = parquet_temporal_types(source) if fmt is Format.PARQUET else None
    outputs = DedupOutputs(output, unique, duplicates, rejects, types)
    summary = asyncio.run(_dedup(settings, source, fmt, FieldMap(id_field, text_field), outputs, quiet))
    click.echo(json.dumps(summary, ensure_ascii=False, allow_nan=False, indent=None if quiet else 2), err=True)
    if summary["rejected"] and not summary["unique"] + summary["duplicate"]:
        raise InputError(f"all {summary['rejected']} input records were rejected, none decided "
                         f"({', '.join(f'{k}: {v}' for k, v in summary['rejected_by_reason'].items())})",
                         hint="nothing was written but --rejects; see --rejects FILE for each record's reason; "
                              "check --format, --id-field, --text-field")


def _store_files(settings: Settings) -> list[Named]:
    """The files of a ``file://`` store (an output must not be one of them); none for other stores."""
    from neardup.storage.file import store_files

    scheme, _, path = settings.store_url.partition("://")
    return [Named("--store", str(p)) for p in store_files(path)] if scheme == "file" and path else []


# --------------------------------------------------------------------------- explain
def _find_ids(path: str, a: str, b: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The records with ids ``a`` and ``b`` in ``path``; a missing id is an :class:`InputError` that
    also names the lines that could not be read (one of them may be the one wanted)."""
    from neardup.document import loads_strict
    from neardup.files.records import read_records

    wanted = {a, b}
    found: dict[str, dict[str, Any]] = {}
    unreadable: list[int] = []
    for rec in read_records(path, format_for(path)):
        try:
            obj = loads_strict(rec.data) if isinstance(rec.data, bytes) else rec.data
        except (ValueError, RecursionError):
            unreadable.append(rec.position)
            continue
        doc_id = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)  # as parse_document reads it
        if isinstance(doc_id, str) and doc_id in wanted:
            found[doc_id] = {**obj, "id": doc_id}
        elif not isinstance(obj, dict):
            unreadable.append(rec.position)
    missing = wanted - set(found)
    if missing:
        bad = f"; {len(unreadable)} line(s) are not JSON objects (first: line {unreadable[0]})" if unreadable else ""
        raise InputError(f"ids not found in {path}: {', '.join(sorted(missing))}{bad}",
                         hint="check the ids and the file")  # fmt: skip
    return found[a], found[b]


class TextArgumentsCommand(click.Command):
    """A command whose arguments are free text: a text that starts with ``-`` goes after ``--``, and
    an unknown option says so (``neardup explain -- "A" "-B"``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """As click's, with the hint about ``--`` on an unknown option."""
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            exc.message += " (a text that starts with - goes after --: neardup explain [OPTIONS] -- A B)"
            raise


@cli.command(cls=TextArgumentsCommand, short_help="Why two texts are, or are not, duplicates.")
@click.argument("a")
@click.argument("b")
@click.option("--file", "path", metavar="FILE",
              help="JSONL, CSV or Parquet file: A and B are ids in it (else A and B are texts).")
@click.option("--json", "as_json", is_flag=True, help="The report as JSON.")
@config_option
def explain(a: str, b: str, path: str | None, as_json: bool, config_path: str | None) -> None:
    """Why two texts (or two ids of a file) are or are not duplicates.

    Options come first; a text that starts with - goes after --: neardup explain --json -- "A" "-B".
    """
    from neardup.explain import explain_pair, format_report

    settings = load_cli_settings(config_path, store_url="memory://")
    da, db = _find_ids(path, a, b) if path else ({"id": "A", "text": a}, {"id": "B", "text": b})
    report = asyncio.run(explain_pair(settings, da, db))
    click.echo(json.dumps(report, ensure_ascii=False, allow_nan=False, indent=2) if as_json else format_report(report))


# --------------------------------------------------------------------------- eval
# the files eval --report writes into its folder (service/learning/evaluate.py)
EVAL_REPORT_FILES = ("metrics.json", "similarity_histograms.png", "roc.png", "confusion_matrix.png")


@cli.command("eval", short_help="Score the decisions against labelled pairs; plots.")
@click.option("--docs", required=True, metavar="FILE", help="Documents (id, text): JSONL, CSV or Parquet.")
@click.option("--pairs", required=True, metavar="FILE",
              help='Labelled pairs, JSONL, CSV or Parquet: {"a": ID, "b": ID, "label": 0 or 1, "kind": optional}.')
@click.option("--report", metavar="DIR", help="Folder for the plots (PNG) and metrics.json.")
@click.option("--json", "json_path", metavar="FILE", help="Write the metrics JSON here.")
@click.option("--target-precision", type=float, default=0.99, show_default=True,
              help="Pair precision the recommended thresholds aim for.")
@config_option
def evaluate(docs: str, pairs: str, report: str | None, json_path: str | None, target_precision: float,
             config_path: str | None) -> None:
    """Precision, recall and F1 over labelled pairs; plots; recommended thresholds."""
    from neardup.storage.extras import require_extra

    for path in (docs, pairs):
        check_readable(path)
    writes = [Named("--report", str(Path(report) / name)) for name in EVAL_REPORT_FILES] if report else []
    check_paths([Named("--docs", docs), Named("--pairs", pairs)],
                [*writes, *([Named("--json", json_path)] if json_path else [])])  # fmt: skip
    if report:
        require_extra("matplotlib", "plots", "eval --report (plots)")
    from neardup.learning.evaluate import run_eval

    settings = load_cli_settings(config_path, store_url="memory://")
    out = OutputFile(json_path) if json_path else None
    try:
        result = asyncio.run(run_eval(settings, Path(docs), Path(pairs), Path(report) if report else None,
                                      target_precision=target_precision))  # fmt: skip
        click.echo(result["table"])
        if out is not None:
            Path(out.target).write_text(json.dumps(result["metrics"], indent=1, ensure_ascii=False, allow_nan=False),
                                        encoding="utf-8")  # fmt: skip
            out.commit()
    finally:
        if out is not None:
            out.discard()


# --------------------------------------------------------------------------- idf
@cli.group(short_help="IDF tables for the SimHash weights.")
def idf() -> None:
    """IDF tables for the SimHash weights."""


@idf.command("build", short_help="Learn an IDF table from a corpus.")
@click.argument("corpus", metavar="CORPUS")
@click.option("-o", "--output", default="idf.txt", show_default=True, metavar="FILE", help="Where to write the table.")
@click.option("--min-df", type=int, default=2, show_default=True, help="Ignore words in fewer documents.")
def idf_build(corpus: str, output: str, min_df: int) -> None:
    """Learn an IDF table (word, idf per line) from a corpus (JSONL, CSV or Parquet)."""
    from neardup.text.idf import build_idf

    check_readable(corpus)
    check_paths([Named("CORPUS", corpus)], [Named("-o/--output", output)])
    out = OutputFile(output)
    try:
        n = build_idf(Path(corpus), Path(out.target), min_df=min_df)
        out.commit()
    finally:
        out.discard()
    click.echo(f"wrote {n} words to {output}; use NEARDUP_FINGERPRINT__IDF_PATH={output}", err=True)


# --------------------------------------------------------------------------- entry point
def describe(exc: BaseException) -> str:
    """One line: what failed and, where known, what to do."""
    if isinstance(exc, NeardupError):
        return exc.one_line()
    if isinstance(exc, OSError) and exc.filename is not None:
        text = f"{exc.strerror or type(exc).__name__}: {exc.filename}"
    else:
        text = f"unexpected {type(exc).__name__}: {exc}; rerun with -v for the traceback"
    return " ".join(text.split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the program; returns the exit code (0 done, 1 runtime error, 2 usage error)."""
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = False
    try:
        with cli.make_context("neardup", args) as ctx:
            verbose = bool(ctx.params.get("verbose"))
            cli.invoke(ctx)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return int(exc.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("neardup: interrupted", err=True)
        return 130
    except Exception as exc:
        if verbose:
            traceback.print_exception(exc)
        click.echo(f"neardup: error: {describe(exc)}", err=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
