"""The streaming subcommands of ``neardup``: worker, publish, tail.

``neardup.cli`` loads this module by path only when one of them is run or listed, and this module
imports only click and neardup's domain at import time: the Kafka libraries (the ``kafka`` extra)
are checked for, then imported, inside each command.
"""

from __future__ import annotations

import click

from neardup.cli import broker_option, config_option, load_cli_settings, require_store_extra, store_option
from neardup.files.records import FieldMap, Format
from neardup.storage.extras import require_extra


def _require_kafka(command: str) -> None:
    for module in ("aiokafka", "faust") if command == "worker" else ("aiokafka",):
        require_extra(module, "kafka", f"neardup {command}")


@click.command(short_help="Run a streaming worker: Kafka in, Kafka out.")
@click.option("--web-bind", metavar="ADDRESS", envvar="NEARDUP_WEB_BIND", show_envvar=True,
              help="Address of the web server and the metrics port (default 127.0.0.1). Settings key: web_bind.")
@click.option("--web-port", type=int, metavar="PORT", envvar="NEARDUP_WEB_PORT", show_envvar=True,
              help="Port of /health, /ready, /metrics and /check (default 6066). Settings key: web_port.")
@click.option("--metrics-port", type=int, metavar="PORT", envvar="NEARDUP_METRICS_PORT", show_envvar=True,
              help="Prometheus port (default 9100; 0 or the web port: only /metrics). Settings key: metrics_port.")
@click.option("--loglevel", type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
              help="Worker log level (default: settings key log_level).")
@broker_option
@store_option
@config_option
def worker(web_bind: str | None, web_port: int | None, metrics_port: int | None, loglevel: str | None,
           broker_url: str | None, store_url: str | None, config_path: str | None) -> None:
    """Run a streaming worker: raw -> unique | duplicate | dead-letter (a Faust agent over Kafka)."""
    _require_kafka("worker")
    settings = load_cli_settings(config_path, broker_url=broker_url, store_url=store_url, web_bind=web_bind,
                                 web_port=web_port, metrics_port=metrics_port)  # fmt: skip
    require_store_extra(settings)
    from neardup.agents.worker import run_worker

    code = run_worker(settings, loglevel=loglevel)
    if code:
        raise click.exceptions.Exit(code)


@click.command(short_help="Send the documents of INPUT to the raw topic.")
@click.argument("source", metavar="INPUT")
@click.option("--topic", metavar="NAME", help="Topic (default: the raw topic, settings key topics.raw).")
@click.option("--format", "input_format", type=click.Choice([f.value for f in Format]),
              help="Input format (default: by extension: .jsonl, .csv, .parquet; - is JSONL).")
@click.option("--id-field", default="id", show_default=True, help="Input field that holds the document id.")
@click.option("--text-field", default="text", show_default=True, help="Input field that holds the text.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--skip-invalid", is_flag=True, help="Skip lines without a JSON id (default: send them unkeyed).")
@click.option("--no-idempotence", is_flag=True,
              help="Plain producer from the start (the default tries an idempotent one first).")
@broker_option
@config_option
def publish(source: str, topic: str | None, input_format: str | None, id_field: str, text_field: str,
            no_progress: bool, skip_invalid: bool, no_idempotence: bool, broker_url: str | None,
            config_path: str | None) -> None:
    """Send INPUT to the raw topic, one message per document, keyed by its id.

    INPUT is JSONL (each line sent unchanged; - is stdin), CSV or Parquet (each row sent as a JSON
    object with the id and text fields named id and text).
    """
    from neardup.files.records import check_readable

    _require_kafka("publish")
    settings = load_cli_settings(config_path, broker_url=broker_url)
    check_readable(source)
    from neardup.agents.client import publish_file
    from neardup.agents.topics import resolve_topic

    name = resolve_topic(settings, topic or "raw")
    fmt = Format(input_format) if input_format else None
    n = publish_file(settings, source, topic=name, progress=not no_progress, skip_invalid=skip_invalid,
                     idempotent=not no_idempotence, fmt=fmt, fields=FieldMap(id_field, text_field))  # fmt: skip
    click.echo(f"published {n} messages to {name}", err=True)


@click.command(short_help="Print a topic's records as JSON lines.")
@click.argument("topic")
@click.option("--from-beginning", is_flag=True, help="Start at the oldest record (default: only new ones).")
@click.option("--max", "max_messages", type=int, metavar="N", help="Stop after N records.")
@click.option("--timeout", type=float, metavar="SECONDS", help="Stop after this many seconds without a record.")
@click.option("--meta", is_flag=True, help="Wrap each value with topic, partition, offset, key and timestamp.")
@broker_option
@config_option
def tail(topic: str, from_beginning: bool, max_messages: int | None, timeout: float | None, meta: bool,
         broker_url: str | None, config_path: str | None) -> None:
    """Print TOPIC's records as JSON lines (raw, unique, duplicate, dead-letter, or a topic name)."""
    _require_kafka("tail")
    settings = load_cli_settings(config_path, broker_url=broker_url)
    from neardup.agents.client import tail_records

    tail_records(settings, topic, from_beginning=from_beginning, max_messages=max_messages, timeout=timeout,
                 meta=meta)  # fmt: skip
