"""CLI glue for the Kafka side: ``worker``, ``publish`` and ``tail``.

``service/cli.py`` (``neardup worker|publish|tail``) imports this module lazily, so that ``service``
never imports ``agents``. It also runs on its own: ``python -m agents.cli worker``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from neardup.agents.topics import aiokafka_security, bootstrap_servers, encode_json, resolve_topic
from neardup.config import Settings, load_settings

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------
# worker


def run_worker(settings: Settings, *, web_bind: str | None = None, loglevel: str | None = None) -> int:
    """Run one dedup worker until SIGTERM/SIGINT; returns the exit code.

    ``web_bind`` is the address of the web server (default 0.0.0.0; the port is ``settings.web_port``).
    """
    import faust

    from neardup.agents.app import create_app

    app = create_app(settings, web_bind=web_bind)
    if settings.metrics_port and settings.metrics_port != settings.web_port:
        # Prometheus scrapes its own port (deploy/ and the compose file use it); /metrics on the
        # web port serves the same registry
        from prometheus_client import start_http_server

        try:
            start_http_server(settings.metrics_port, addr=web_bind or "0.0.0.0", registry=app.runtime.registry)
        except OSError as exc:  # a taken port must not stop the worker: /metrics on the web port remains
            logging.getLogger("neardup.worker").error("metrics port %d: %s", settings.metrics_port, exc)
    worker = faust.Worker(app, loglevel=(loglevel or settings.log_level).lower(), quiet=True)
    try:
        worker.execute_from_commandline()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


# ---------------------------------------------------------------------------------------------
# publish


def _lines(path: str | Path) -> tuple[Iterator[bytes], int | None, IO[bytes] | None]:
    if str(path) == "-":
        return iter(sys.stdin.buffer), None, None
    f = open(path, "rb")  # noqa: SIM115  (closed by publish)
    return iter(f), os.fstat(f.fileno()).st_size, f


def _doc_key(line: bytes) -> bytes | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    doc_id = obj.get("id") if isinstance(obj, dict) else None
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    return doc_id.encode("utf-8") if isinstance(doc_id, str) and doc_id else None


def publish(
    settings: Settings,
    path: str | Path,
    *,
    topic: str | None = None,
    progress: bool = True,
    skip_invalid: bool = False,
    idempotent: bool = True,
) -> int:
    """``neardup publish``: :func:`publish_file`, a summary on stderr; returns the exit code (0)."""
    name = resolve_topic(settings, topic or "raw")
    n = publish_file(settings, path, topic=name, progress=progress, skip_invalid=skip_invalid, idempotent=idempotent)
    print(f"published {n} messages to {name}", file=sys.stderr)
    return 0


def publish_file(
    settings: Settings,
    path: str | Path,
    *,
    topic: str | None = None,
    progress: bool = True,
    skip_invalid: bool = False,
    idempotent: bool = True,
    max_in_flight: int = 10_000,
) -> int:
    """Send a JSONL file (``-`` for stdin) to the raw topic, one message per non-blank line.

    Each line's bytes go out unchanged, keyed by the document id. Lines that are not JSON objects
    with an id are sent without a key (the workers dead-letter them), or skipped with
    ``skip_invalid``. Waits for every broker ack; returns the number of messages sent.
    ``idempotent=False`` is for brokers without idempotent producers.
    """
    name = resolve_topic(settings, topic or "raw")
    return asyncio.run(_publish(settings, path, name, progress, skip_invalid, idempotent, max_in_flight))


async def _publish(
    settings: Settings,
    path: str | Path,
    topic: str,
    progress: bool,
    skip_invalid: bool,
    idempotent: bool,
    max_in_flight: int,
) -> int:
    from aiokafka import AIOKafkaProducer
    from tqdm import tqdm

    lines, total, handle = _lines(path)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers(settings),
        acks="all",
        enable_idempotence=idempotent,
        linger_ms=20,
        max_request_size=max(1_048_576, settings.normalize.max_bytes * 2 + 65_536),
        **aiokafka_security(settings),
    )
    await producer.start()
    sent = skipped = unkeyed = 0
    pending: set[asyncio.Future[Any]] = set()
    bar = tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        desc=f"publish -> {topic}",
        disable=not progress,
        file=sys.stderr,
    )
    try:
        for raw_line in lines:
            bar.update(len(raw_line))
            line = raw_line.rstrip(b"\r\n")
            if not line.strip():
                continue
            key = _doc_key(line)
            if key is None:
                if skip_invalid:
                    skipped += 1
                    continue
                unkeyed += 1
            pending.add(await producer.send(topic, line, key=key))
            sent += 1
            if len(pending) >= max_in_flight:  # bound memory on big files
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for fut in done:
                    fut.result()
        if pending:
            for res in await asyncio.gather(*pending, return_exceptions=True):
                if isinstance(res, BaseException):
                    raise res
    finally:
        bar.close()
        await producer.stop()
        if handle is not None:
            handle.close()
    if skipped or unkeyed:
        log.warning(
            "publish: %d lines without a JSON id were %s",
            skipped or unkeyed,
            "skipped" if skipped else "sent without a key",
        )
    return sent


# ---------------------------------------------------------------------------------------------
# tail


def _render(msg: Any, meta: bool) -> str:
    value: Any
    if msg.value is None:
        value = None
    else:
        try:
            value = json.loads(msg.value)
        except ValueError:
            try:
                value = {"_raw": msg.value.decode("utf-8"), "_encoding": "utf-8"}
            except UnicodeDecodeError:
                value = {"_raw": base64.b64encode(msg.value).decode("ascii"), "_encoding": "base64"}
    if meta:
        key = msg.key.decode("utf-8", errors="replace") if msg.key is not None else None
        value = {
            "topic": msg.topic,
            "partition": msg.partition,
            "offset": msg.offset,
            "key": key,
            "timestamp": msg.timestamp,
            "value": value,
        }
    return encode_json(value).decode("utf-8") if isinstance(value, dict) else json.dumps(value, ensure_ascii=False)


def tail(
    settings: Settings,
    topic: str,
    *,
    from_beginning: bool = False,
    max_messages: int | None = None,
    timeout: float | None = None,
    meta: bool = False,
) -> int:
    """``neardup tail``: :func:`tail_records` to stdout; returns the exit code (0)."""
    tail_records(settings, topic, from_beginning=from_beginning, max_messages=max_messages, timeout=timeout, meta=meta)
    return 0


def tail_records(
    settings: Settings,
    topic: str,
    *,
    from_beginning: bool = False,
    max_messages: int | None = None,
    timeout: float | None = None,
    meta: bool = False,
    out: IO[str] | None = None,
) -> int:
    """Print a topic's records as JSON lines; returns how many were printed.

    ``topic`` is a logical name (raw, unique, duplicate, dead-letter) or a literal topic name.
    Reads all partitions without a consumer group (commits nothing). Stops after ``max_messages``,
    or once ``timeout`` seconds pass without a new record; otherwise runs until interrupted.
    ``meta`` wraps each value with topic, partition, offset, key and timestamp. Values that are
    not JSON are printed as ``{"_raw": text-or-base64, "_encoding": ...}``.
    """
    name = resolve_topic(settings, topic)
    try:
        return asyncio.run(_tail(settings, name, from_beginning, max_messages, timeout, meta, out or sys.stdout))
    except KeyboardInterrupt:
        return 0


async def _tail(
    settings: Settings,
    topic: str,
    from_beginning: bool,
    max_messages: int | None,
    timeout: float | None,
    meta: bool,
    out: IO[str],
) -> int:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers(settings),
        enable_auto_commit=False,
        auto_offset_reset="earliest" if from_beginning else "latest",
        **aiokafka_security(settings),
    )
    await consumer.start()
    printed = 0
    try:
        deadline = time.monotonic() + (timeout if timeout is not None else 30.0)
        while True:
            # no public call lists a topic's partitions without subscribing (which needs a group)
            partitions = (await consumer._client.fetch_all_metadata()).partitions_for_topic(topic)
            if partitions:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"topic {topic!r} not found")
            await asyncio.sleep(0.5)
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        if from_beginning:
            await consumer.seek_to_beginning(*tps)
        else:
            await consumer.seek_to_end(*tps)
        last = time.monotonic()
        while max_messages is None or printed < max_messages:
            batch = await consumer.getmany(*tps, timeout_ms=200)
            if not batch:
                if timeout is not None and time.monotonic() - last > timeout:
                    break
                continue
            last = time.monotonic()
            for msgs in batch.values():
                for msg in msgs:
                    try:
                        out.write(_render(msg, meta) + "\n")
                    except BrokenPipeError:  # `neardup tail ... | head`
                        return printed
                    printed += 1
                    if max_messages is not None and printed >= max_messages:
                        break
                if max_messages is not None and printed >= max_messages:
                    break
            with contextlib.suppress(BrokenPipeError):
                out.flush()
    finally:
        await consumer.stop()
    return printed


# ---------------------------------------------------------------------------------------------
# python -m agents.cli


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.cli", description=__doc__)
    parser.add_argument("--config", help="TOML/YAML settings file (also NEARDUP_CONFIG)")
    sub = parser.add_subparsers(dest="command", required=True)

    w = sub.add_parser("worker", help="run a dedup worker (raw -> unique | duplicate | dead-letter)")
    w.add_argument("--web-bind", default=None, help="address of the web server (default 0.0.0.0)")
    w.add_argument("--loglevel", default=None)

    p = sub.add_parser("publish", help="send a JSONL file to the raw topic")
    p.add_argument("path", help="JSONL file, or - for stdin")
    p.add_argument("--topic", default=None, help="topic (default: the raw topic)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--skip-invalid", action="store_true", help="skip lines without a JSON id")
    p.add_argument("--no-idempotence", action="store_true", help="for brokers without idempotent producers")

    t = sub.add_parser("tail", help="print a topic's records as JSON lines")
    t.add_argument("topic", help="raw, unique, duplicate, dead-letter, or a topic name")
    t.add_argument("--from-beginning", action="store_true")
    t.add_argument("--max", type=int, default=None, dest="max_messages")
    t.add_argument("--timeout", type=float, default=None, help="stop after this many idle seconds")
    t.add_argument("--meta", action="store_true", help="wrap values with partition, offset and key")

    args = parser.parse_args(argv)
    # the engine's numba kernels cache their compiled code here (same default as service.cli)
    os.environ.setdefault("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "neardup" / "numba"))
    settings = load_settings(args.config)
    if args.command == "worker":
        return run_worker(settings, web_bind=args.web_bind, loglevel=args.loglevel)
    logging.basicConfig(
        level=settings.log_level.upper(), stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if args.command == "publish":
        return publish(
            settings,
            args.path,
            topic=args.topic,
            progress=not args.no_progress,
            skip_invalid=args.skip_invalid,
            idempotent=not args.no_idempotence,
        )
    return tail(
        settings,
        args.topic,
        from_beginning=args.from_beginning,
        max_messages=args.max_messages,
        timeout=args.timeout,
        meta=args.meta,
    )


if __name__ == "__main__":
    sys.exit(main())
