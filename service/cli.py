"""``neardup`` command line: dedup | explain | eval | bench | idf | worker | publish | tail."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import logging
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from neardup.config.settings import Settings, load_settings
from neardup.window import Window

log = logging.getLogger("neardup")


def _settings(args: argparse.Namespace, **overrides: Any) -> Settings:
    if getattr(args, "store", None):
        overrides["store_url"] = args.store
    return load_settings(getattr(args, "config", None), **overrides)


def _open_out(path: str | None, default: IO[str] | None = None) -> IO[str] | None:
    if path is None:
        return default
    if path == "-":
        return sys.stdout
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return open(path, "w", encoding="utf-8")


def _read_lines(path: str) -> Iterator[tuple[int, bytes]]:
    stream = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
    try:
        for n, line in enumerate(stream, 1):
            if line.strip():
                yield n, line.rstrip(b"\r\n")
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _progress(total: int | None, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="doc", file=sys.stderr, dynamic_ncols=True)


# --------------------------------------------------------------------------- dedup
async def _dedup(args: argparse.Namespace) -> int:
    from neardup.document import InvalidDocument, parse_document
    from neardup.engine import Engine

    settings = _settings(args)
    engine = await Engine.open(settings)
    out = _open_out(args.output, sys.stdout)
    uniq = _open_out(args.unique)
    dups = _open_out(args.duplicates)
    rejects = _open_out(args.rejects)
    counts: Counter[str] = Counter()
    total = None
    if args.input != "-":
        with open(args.input, "rb") as fh:
            total = sum(1 for line in fh if line.strip())
    bar = _progress(total, sys.stderr.isatty() and not args.quiet)
    started = time.perf_counter()
    window: Window[Any] = Window(settings.window.max_count, settings.window.max_age_seconds)
    n_docs = 0

    async def flush(reason: str) -> None:
        docs = window.drain()
        engine.metrics.window_closed.labels(reason).inc()
        decisions = await engine.decide(docs)
        for d in decisions:
            rec = json.dumps(d.to_record(), ensure_ascii=False)
            assert out is not None
            out.write(rec + "\n")
            target = uniq if d.status == "unique" else dups
            if target is not None:
                target.write(rec + "\n")
            counts[d.status] += 1
            if d.status == "duplicate":
                counts[f"duplicate:{d.evidence.get('rule')}"] += 1
            elif d.evidence.get("critical"):
                counts["unique:critical_difference"] += 1
        if bar is not None:
            bar.update(len(docs))

    try:
        for line_no, raw in _read_lines(args.input):
            try:
                doc = parse_document(raw, max_bytes=settings.normalize.max_bytes,
                                     max_id_length=settings.normalize.max_id_length)
            except InvalidDocument as exc:
                counts["rejected"] += 1
                counts[f"rejected:{exc.reason}"] += 1
                engine.metrics.rejected.labels(exc.reason).inc()
                if rejects is not None:
                    rejects.write(json.dumps({"line": line_no, "reason": exc.reason, "error": exc.detail,
                                              "raw": raw.decode("utf-8", "replace")[:10_000]},
                                             ensure_ascii=False) + "\n")
                if bar is not None:
                    bar.update(1)
                continue
            n_docs += 1
            # a window closes at max_count documents, or once it is max_age old (slow stdin)
            if window.add(doc) or window.expired():
                await flush("count" if len(window) >= window.max_count else "age")
        if len(window):
            await flush("end")
    finally:
        if bar is not None:
            bar.close()
        await engine.close()
        for extra in (uniq, dups, rejects):
            if extra is not None:
                extra.close()
        if out is not None and out is not sys.stdout:
            out.close()
    elapsed = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    summary = {
        "documents": n_docs + counts["rejected"],
        "unique": counts["unique"],
        "duplicate": counts["duplicate"],
        "duplicate_by_rule": {k.split(":", 1)[1]: v for k, v in sorted(counts.items())
                              if k.startswith("duplicate:")},
        "unique_after_critical_difference": counts["unique:critical_difference"],
        "rejected": counts["rejected"],
        "rejected_by_reason": {k.split(":", 1)[1]: v for k, v in sorted(counts.items())
                               if k.startswith("rejected:")},
        "seconds": round(elapsed, 3),
        "documents_per_second": round(n_docs / elapsed, 1) if elapsed > 0 else None,
        "peak_rss_mb": round(peak_mb, 1),
        "store": settings.redacted()["store_url"],
    }
    print(json.dumps(summary, ensure_ascii=False, indent=None if args.quiet else 2), file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- explain
def _load_texts(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    if args.file:
        wanted = {args.a, args.b}
        found: dict[str, dict[str, Any]] = {}
        for _, raw in _read_lines(args.file):
            obj = json.loads(raw)
            if obj.get("id") in wanted:
                found[obj["id"]] = obj
        missing = wanted - set(found)
        if missing:
            raise SystemExit(f"ids not found in {args.file}: {', '.join(sorted(missing))}")
        return found[args.a], found[args.b]
    return {"id": "A", "text": args.a}, {"id": "B", "text": args.b}


async def _explain(args: argparse.Namespace) -> int:
    from neardup.explain import explain_pair

    settings = _settings(args, store_url="memory://")
    a, b = _load_texts(args)
    report = await explain_pair(settings, a, b)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        from neardup.explain import format_report

        print(format_report(report))
    return 0


# --------------------------------------------------------------------------- eval
async def _eval(args: argparse.Namespace) -> int:
    from neardup.evaluate import run_eval

    settings = _settings(args, store_url="memory://")
    result = await run_eval(settings, Path(args.docs), Path(args.pairs),
                            Path(args.report) if args.report else None,
                            target_precision=args.target_precision)
    print(result["table"])
    if args.json:
        Path(args.json).write_text(json.dumps(result["metrics"], indent=1, ensure_ascii=False))
    return 0


# --------------------------------------------------------------------------- bench / idf
def _bench(args: argparse.Namespace) -> int:
    bench = importlib.import_module("neardup.bench")
    return int(bench.main(args))


def _idf(args: argparse.Namespace) -> int:
    from neardup.idf import build_idf

    n = build_idf(Path(args.corpus), Path(args.output), min_df=args.min_df)
    print(f"wrote {n} words to {args.output}; use NEARDUP_FINGERPRINT__IDF_PATH={args.output}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- streaming (agents)
def _agents(name: str, args: argparse.Namespace) -> int:
    # service must not import neardup.agents at module level (imports flow agents -> service)
    try:
        mod = importlib.import_module("neardup.agents.cli")
    except ImportError as exc:
        raise SystemExit(f"the streaming service is not installed: {exc}") from exc
    settings = _settings(args)
    fn = getattr(mod, name)
    if name == "run_worker":
        return int(fn(settings) or 0)
    if name == "publish":
        return int(fn(settings, args.input) or 0)
    return int(fn(settings, args.topic, from_beginning=args.from_beginning, max_messages=args.max,
                  timeout=args.timeout) or 0)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="neardup", description="Streaming near-duplicate detection for crawled text")
    p.add_argument("--config", help="TOML/YAML settings file (also NEARDUP_CONFIG)")
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("dedup", help="decide every document of a JSONL file")
    d.add_argument("input", help="JSONL file, - for stdin")
    d.add_argument("-o", "--output", default="-", help="decisions JSONL (default stdout)")
    d.add_argument("--unique", help="also write unique documents here")
    d.add_argument("--duplicates", help="also write duplicates here")
    d.add_argument("--rejects", help="invalid input with the reason")
    d.add_argument("--store", help="store URL: memory:// (default) file://PATH redis://.. rediscluster://..")
    d.add_argument("-q", "--quiet", action="store_true", help="no progress bar, one-line summary")

    e = sub.add_parser("explain", help="why two texts (or two ids of a file) are or are not duplicates")
    e.add_argument("a")
    e.add_argument("b")
    e.add_argument("--file", help="JSONL file: A and B are ids in it")
    e.add_argument("--json", action="store_true")

    v = sub.add_parser("eval", help="precision/recall/F1 over labelled pairs, with plots")
    v.add_argument("--docs", required=True)
    v.add_argument("--pairs", required=True)
    v.add_argument("--report", help="folder for PNGs and metrics.json")
    v.add_argument("--json", help="write metrics JSON here")
    v.add_argument("--target-precision", type=float, default=0.99)

    b = sub.add_parser("bench", help="speed against peers (datasketch, rensa, simhash) in one run")
    b.add_argument("--docs", help="JSONL of documents (default: the bundled sample or ../shared/datasets)")
    b.add_argument("--n", type=int, default=2000, help="documents to time")
    b.add_argument("--json", help="write results JSON here")
    b.add_argument("--quick", action="store_true", help="fewer documents and repeats")

    i = sub.add_parser("idf", help="learn an IDF table from a JSONL corpus")
    i_sub = i.add_subparsers(dest="idf_command", required=True)
    ib = i_sub.add_parser("build")
    ib.add_argument("corpus")
    ib.add_argument("-o", "--output", default="idf.txt")
    ib.add_argument("--min-df", type=int, default=2)

    sub.add_parser("worker", help="run a streaming worker (Faust agent over Kafka)")
    pb = sub.add_parser("publish", help="produce a JSONL file to the raw topic")
    pb.add_argument("input")
    t = sub.add_parser("tail", help="print a topic's records")
    t.add_argument("topic")
    t.add_argument("--from-beginning", action="store_true")
    t.add_argument("--max", type=int, default=None)
    t.add_argument("--timeout", type=float, default=None)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "neardup" / "numba"))
    cmd = args.command
    if cmd == "dedup":
        return asyncio.run(_dedup(args))
    if cmd == "explain":
        return asyncio.run(_explain(args))
    if cmd == "eval":
        return asyncio.run(_eval(args))
    if cmd == "bench":
        return _bench(args)
    if cmd == "idf":
        return _idf(args)
    if cmd == "worker":
        return _agents("run_worker", args)
    if cmd == "publish":
        return _agents("publish", args)
    if cmd == "tail":
        return _agents("tail", args)
    raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    sys.exit(main())
