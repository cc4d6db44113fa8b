"""``neardup bench``: the benchmark commands (click), loaded lazily by :mod:`neardup.cli`.

``neardup bench`` alone, or with options only, is ``neardup bench fingerprint``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from neardup.files.outputs import Named, check_paths
from neardup.files.records import check_readable

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_COMMAND = "fingerprint"


class DefaultGroup(click.Group):
    """A group that runs ``default`` when the first argument names no subcommand."""

    def __init__(self, *args: Any, default: str, **kwargs: Any) -> None:
        """``default``: the subcommand for ``neardup bench`` and ``neardup bench --n 3000``."""
        super().__init__(*args, **kwargs)
        self.default = default

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Prepend the default subcommand unless the arguments start with one (or ask for help)."""
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args = [self.default, *args]
        return super().parse_args(ctx, args)


def _common(f: F) -> F:
    for decorator in reversed((
        click.option("--docs", type=click.Path(path_type=Path), metavar="FILE",
                     help="JSONL documents whose Chinese texts are used (default: ../shared/datasets/docs.jsonl, "
                          "else the bundled sample)."),
        click.option("--json", "json_path", type=click.Path(path_type=Path), metavar="FILE",
                     help="Where the results go (default: bench/results/NAME-DATE.json, NAME-quick-DATE.json "
                          "with --quick)."),
        click.option("--quick", is_flag=True, help="Tiny inputs: checks that it runs, measures nothing worth quoting."),
    )):
        f = decorator(f)
    return f


def _profile_option(f: F) -> F:
    return click.option("--profile/--no-profile", default=False, show_default=True,
                        help="Sample the process with py-spy and write the top functions beside the JSON "
                             "(NAME-DATE.profile.txt).")(f)  # fmt: skip


def _paths(name: str, docs: Path | None, json_path: Path | None, quick: bool) -> Path:
    """Check the input and output paths; the JSON path to write."""
    from neardup.bench.report import default_json_path

    if docs is not None:
        check_readable(str(docs))
    out = json_path or default_json_path(name, quick)
    out.parent.mkdir(parents=True, exist_ok=True)
    check_paths([Named("--docs", str(docs))] if docs else [], [Named("--json", str(out))])
    return out


def _finish(out: Path, result: dict[str, Any], text: str) -> None:
    from neardup.bench.report import write_json

    write_json(out, result)
    click.echo(text)
    click.echo(f"results: {out}")


@click.group(cls=DefaultGroup, default=DEFAULT_COMMAND,
             short_help="Benchmarks: fingerprint, pipeline, store, e2e, cold.")
def bench() -> None:
    """Benchmarks: fingerprint (the default), pipeline, store, e2e, cold. Each writes JSON and prints a table."""


@bench.command(short_help="The fingerprint path against the classic stack.")
@_common
@click.option("--n", type=int, default=2000, show_default=True, help="Documents to time.")
def fingerprint(docs: Path | None, json_path: Path | None, quick: bool, n: int) -> None:
    """The fingerprint path against the classic stack and peers (datasketch, rensa, simhash), one core."""
    from neardup.bench import fingerprint as fp
    from neardup.storage.extras import require_extra

    for peer in ("datasketch", "rensa", "simhash"):
        require_extra(peer, "bench", f"bench ({peer})")
    out = _paths("fingerprint", docs, json_path, quick)
    result = fp.run(fp.FingerprintOptions(docs=docs, n=n, quick=quick))
    _finish(out, result, fp.summary(result))


@bench.command(short_help="neardup dedup against the classic stack.")
@_common
@click.option("--n", type=int, default=6400, show_default=True, help="Documents (the dev set's Chinese texts, "
              "then copies and mixtures of them).")
@click.option("--window", type=int, default=1000, show_default=True, help="Engine window for the in-process rate.")
@click.option("--repeats", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Runs of neardup dedup and of the engine (their medians are the figures); "
                   "the classic stack runs once.")
@_profile_option
def pipeline(docs: Path | None, json_path: Path | None, quick: bool, n: int, window: int, repeats: int,
             profile: bool) -> None:
    """Whole `neardup dedup` process vs the classic stack (jieba + SimHash + datasketch LSH); engine docs/s."""
    from neardup.bench import pipeline as pl
    from neardup.storage.extras import require_extra

    require_extra("datasketch", "bench", "bench pipeline (datasketch)")
    out = _paths("pipeline", docs, json_path, quick)
    result = pl.run(pl.PipelineOptions(docs=docs, n=n, window=window, quick=quick, repeats=repeats,
                                       profile_path=out.with_suffix(".profile.txt") if profile else None))
    _finish(out, result, pl.summary(result))


@bench.command(short_help="One worker's engine on a Redis store.")
@_common
@click.option("--store", "store_url", required=True, metavar="URL", envvar="NEARDUP_STORE_URL", show_envvar=True,
              help="A running Redis Cluster (rediscluster://H:P,...) or Redis (redis://H:P). Keys get a fresh "
                   "prefix; they are left in place.")
@click.option("--window", type=int, default=1000, show_default=True, help="Documents per timed window.")
@click.option("--stored", type=int, default=1_000_000, show_default=True,
              help="Stored documents for the large-store measurement (synthetic records fill up to it).")
@_profile_option
def store(docs: Path | None, json_path: Path | None, quick: bool, store_url: str, window: int, stored: int,
          profile: bool) -> None:
    """One worker (an engine in this process) on a Redis store: docs/s, round trips and commands per window,
    cost per document at 10 thousand and at --stored documents."""
    import neardup.bench.store as st
    from neardup.storage.extras import require_extra

    require_extra("redis", "redis", "bench store")
    out = _paths("store", docs, json_path, quick)
    result = st.run(st.StoreOptions(store_url=store_url, docs=docs, window=window, stored=stored, quick=quick,
                                    profile_path=out.with_suffix(".profile.txt") if profile else None))
    _finish(out, result, st.summary(result))


@bench.command(short_help="Crawler -> Kafka -> workers -> Redis, end to end.")
@_common
@click.option("--broker", "broker_url", required=True, metavar="URL", envvar="NEARDUP_BROKER_URL", show_envvar=True,
              help="A running Kafka broker: kafka://HOST:PORT. Topics get fresh names.")
@click.option("--store", "store_url", required=True, metavar="URL", envvar="NEARDUP_STORE_URL", show_envvar=True,
              help="A running Redis Cluster: rediscluster://H:P,... Keys get a fresh prefix.")
@click.option("--broker-version", default=None, metavar="TEXT",
              help="What the broker is (recorded in the JSON; the Kafka protocol does not tell).")
@click.option("--workers", type=int, default=2, show_default=True, help="`neardup worker` processes.")
@click.option("--backlog", type=int, default=120_000, show_default=True,
              help="Documents published before the workers start; they drain them (the throughput).")
@click.option("--latency-seconds", type=float, default=60.0, show_default=True,
              help="How long the crawler publishes at half the measured rate (the latency phase).")
@click.option("--broker-pid", type=int, default=None, metavar="PID",
              help="A local broker's process ID: its CPU a document is measured beside Redis' and the workers'.")
@_profile_option
def e2e(docs: Path | None, json_path: Path | None, quick: bool, broker_url: str, store_url: str,
        broker_version: str | None, workers: int, backlog: int, latency_seconds: float, broker_pid: int | None,
        profile: bool) -> None:
    """Crawler -> Kafka -> `neardup worker` processes -> Redis: docs/s, latency, memory, first window."""
    import neardup.bench.e2e as ee
    from neardup.storage.extras import require_extra

    require_extra("aiokafka", "kafka", "bench e2e")
    require_extra("redis", "redis", "bench e2e")
    out = _paths("e2e", docs, json_path, quick)
    result = ee.run(ee.E2EOptions(broker_url=broker_url, store_url=store_url, broker_version=broker_version,
                                  docs=docs, workers=workers, backlog=backlog, latency_seconds=latency_seconds,
                                  quick=quick, profile_path=out.with_suffix(".profile.txt") if profile else None,
                                  broker_pid=broker_pid))
    _finish(out, result, ee.summary(result))


@bench.command(short_help="The cold tier on a throwaway PostgreSQL.")
@_common
@click.option("--documents", type=click.IntRange(1000), default=100_000, show_default=True,
              help="Documents archived for the disk, archive-rate and lookup figures.")
@click.option("--windows", type=click.IntRange(1), default=200, show_default=True,
              help="Windows of 1,000 documents looked up (their p50 and p99 are the figures).")
@click.option("--originals", type=click.IntRange(1), default=1000, show_default=True,
              help="Real texts stored as announcements for the recall check (a reprint and a flip of each).")
def cold(docs: Path | None, json_path: Path | None, quick: bool, documents: int, windows: int,
         originals: int) -> None:
    """The cold tier (PostgreSQL) on a cluster made with initdb for the run: archive rate, bytes per
    document, window lookup p50/p99, and recall through the cold tier against the warm store on the
    same documents. Needs PostgreSQL's server programs (initdb, postgres) and the 'archive' extra."""
    from neardup.bench import cold as cd
    from neardup.storage.extras import require_extra

    require_extra("psycopg", "archive", "bench cold")
    out = _paths("cold", docs, json_path, quick)
    result = cd.run(cd.ColdOptions(docs=docs, documents=documents, windows=windows, originals=originals,
                                   quick=quick))
    _finish(out, result, cd.summary(result))
