"""``neardup bench pipeline``: the whole ``neardup dedup`` process against the classic stack, same run.

Both stacks run as whole processes (interpreter start, imports, reading, deciding, writing every
decision) on the same JSONL file of Chinese documents (:mod:`neardup.bench.corpus`, 6,400 by
default), one after the other, both pinned to the same single core, and the ratio of their wall
times is the figure. ``neardup dedup`` runs once untimed first on a few documents, so that the
Numba cache is warm as in any run after the first. Then the batch engine alone
(``Engine.decide`` on the memory store, windows of 1,000, in this process, pinned to the same
core) gives documents/s without process start and file I/O. ``--profile`` samples one more
``neardup dedup`` run with py-spy.

On a shared machine one run of either can swing by more than a change being measured. With
``--repeats N`` (3 by default) ``neardup dedup`` and the engine each run N times, before and after
the classic stack, and their medians are the figures (every run is in the JSON); the classic
stack, minutes long, runs once. Then ``neardup dedup`` runs N times more on every core the
process may use, as a user runs it (it fingerprints the next windows while one is decided), with
the ratio of the classic stack's one-core time to that.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neardup.bench.corpus import BenchDoc, Corpus, load_chinese_texts, write_jsonl
from neardup.bench.profile import Profile, Recorder
from neardup.bench.report import MachineLoad, Row, environment, number, table
from neardup.engine import usable_cores
from neardup.errors import NeardupError

WARMUP_DOCS = 50


@dataclass(frozen=True, slots=True)
class PipelineOptions:
    """What ``neardup bench pipeline`` was asked for."""

    docs: Path | None = None
    n: int = 6400
    window: int = 1000
    quick: bool = False
    profile_path: Path | None = None
    repeats: int = 3


def bench_cpu() -> int:
    """The core both stacks are pinned to: the last one this process may run on."""
    return max(os.sched_getaffinity(0))


@contextmanager
def pinned(cpu: int) -> Iterator[None]:
    """Run the body (and what it starts) on core ``cpu`` only."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def _run(cmd: list[str], what: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run ``cmd`` (inheriting this process's affinity); its wall time and output; NeardupError if it fails."""
    started = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    if res.returncode != 0:
        raise NeardupError(f"{what} failed with exit code {res.returncode}: {res.stderr.strip()[-500:]}")
    return wall, res


def dedup_command(source: Path, output: Path) -> list[str]:
    """``neardup dedup`` on the memory store, quiet (its one-line summary on stderr)."""
    return [sys.executable, "-m", "neardup", "dedup", str(source), "-o", str(output), "-q", "--store", "memory://"]


def _last_json(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return dict(json.loads(line))
    raise NeardupError(f"no JSON summary in the output: {text[-300:]}")


def run_neardup(source: Path, output: Path) -> dict[str, Any]:
    """One timed ``neardup dedup`` process: wall time, documents/s over it, and its own summary."""
    wall, res = _run(dedup_command(source, output), "neardup dedup")
    summary = _last_json(res.stderr)
    return {"wall_seconds": round(wall, 3), "documents_per_second_wall": round(summary["documents"] / wall, 1),
            "summary": summary}


def median_run(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The run whose ``key`` is the median of ``runs`` (the lower middle one of an even count),
    with every run's ``key`` beside it."""
    ordered = sorted(runs, key=lambda r: r[key])
    return {**ordered[(len(ordered) - 1) // 2], f"all_{key}": [r[key] for r in runs]}


def run_classic(source: Path, output: Path) -> dict[str, Any]:
    """One timed classic-stack process (:mod:`neardup.bench.classic`)."""
    wall, res = _run([sys.executable, "-m", "neardup.bench.classic", str(source), str(output)], "classic stack")
    summary = _last_json(res.stdout)
    return {"wall_seconds": round(wall, 3), "documents_per_second_wall": round(summary["documents"] / wall, 1),
            "summary": summary}


async def engine_rate(docs: list[BenchDoc], warmup: list[BenchDoc], window: int) -> dict[str, Any]:
    """``Engine.decide`` on the memory store over ``docs`` in windows (after one untimed window of
    ``warmup`` on another engine): documents/s and seconds."""
    from neardup.config import load_settings
    from neardup.document import parse_document
    from neardup.engine import Engine

    settings = load_settings(store_url="memory://")
    n = settings.normalize

    def parse(d: BenchDoc) -> Any:
        return parse_document(d.json_line().encode("utf-8"), max_bytes=n.max_bytes, max_id_length=n.max_id_length,
                              naive_time_zone=n.naive_time_zone)  # fmt: skip

    warm = await Engine.open(settings)
    await warm.decide([parse(d) for d in warmup])
    await warm.close()
    parsed = [parse(d) for d in docs]
    engine = await Engine.open(settings)
    started = time.perf_counter()
    for i in range(0, len(parsed), window):
        await engine.decide(parsed[i:i + window])
    seconds = time.perf_counter() - started
    await engine.close()
    return {"documents": len(parsed), "window": window, "seconds": round(seconds, 3),
            "documents_per_second": round(len(parsed) / seconds, 1)}


def profile_dedup(source: Path, output: Path, seconds: float, out: Path) -> Profile | str:
    """py-spy on one more ``neardup dedup`` run, from its start to its end; the profile or why there is none."""
    proc = subprocess.Popen(dedup_command(source, output), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)  # fmt: skip
    rec = Recorder(proc.pid, seconds * 1.5 + 5, out, f"neardup dedup, whole process ({source.name})")
    proc.wait()
    profile = rec.finish()
    return profile if profile is not None else str(rec.error)


def run(opts: PipelineOptions) -> dict[str, Any]:
    """The whole benchmark (module docstring); returns the results."""
    load = MachineLoad()
    n = 300 if opts.quick else opts.n
    window = min(opts.window, 100) if opts.quick else opts.window
    source, texts = load_chinese_texts(opts.docs)
    corpus = Corpus(texts)
    docs = list(corpus.docs(0, n))
    warmup = list(corpus.docs(n, min(window, WARMUP_DOCS * 4)))
    cpu = bench_cpu()
    result: dict[str, Any] = {
        "benchmark": "pipeline",
        "documents": n,
        "corpus": {"source_file": str(source), "source_texts": len(texts),
                   "kinds": dict(Counter(d.kind for d in docs)),
                   "mean_characters": round(sum(len(d.text) for d in docs) / n)},
        "pinned_cpu": cpu,
    }
    with tempfile.TemporaryDirectory(prefix="neardup-bench-pipeline-") as tmp:
        folder = Path(tmp)
        src, warm_src = folder / "docs.jsonl", folder / "warmup.jsonl"
        result["corpus"]["utf8_bytes"] = write_jsonl(src, docs)
        write_jsonl(warm_src, warmup[:WARMUP_DOCS])
        repeats = 1 if opts.quick else max(1, opts.repeats)
        first, rest = (repeats + 1) // 2, repeats // 2  # neardup's runs on both sides of the classic one
        with pinned(cpu):
            _run(dedup_command(warm_src, folder / "warmup-out.jsonl"), "neardup dedup (warm-up)")
            dedups = [run_neardup(src, folder / "neardup-out.jsonl") for _ in range(first)]
            engines = [asyncio.run(engine_rate(docs, warmup, window)) for _ in range(first)]
            result["classic_stack"] = run_classic(src, folder / "classic-out.jsonl")
            dedups += [run_neardup(src, folder / "neardup-out.jsonl") for _ in range(rest)]
            engines += [asyncio.run(engine_rate(docs, warmup, window)) for _ in range(rest)]
            result["neardup_dedup"] = median_run(dedups, "wall_seconds")
            result["engine_memory_store"] = median_run(engines, "documents_per_second")
        # and as a user runs it: every core (the next windows are fingerprinted while one is
        # decided); the classic stack is one thread whatever it is given
        result["neardup_dedup_all_cores"] = median_run(
            [run_neardup(src, folder / "neardup-out.jsonl") for _ in range(repeats)], "wall_seconds")
        result["neardup_dedup_all_cores"]["cores"] = usable_cores()
        result["ratio_whole_process"] = round(result["classic_stack"]["wall_seconds"]
                                              / result["neardup_dedup"]["wall_seconds"], 1)
        result["ratio_whole_process_all_cores"] = round(result["classic_stack"]["wall_seconds"]
                                                        / result["neardup_dedup_all_cores"]["wall_seconds"], 1)
        result["machine"] = load.result()
        if opts.profile_path is not None:
            with pinned(cpu):
                prof = profile_dedup(src, folder / "profiled-out.jsonl", result["neardup_dedup"]["wall_seconds"],
                                     folder / "pyspy.txt")
            if isinstance(prof, Profile):
                opts.profile_path.parent.mkdir(parents=True, exist_ok=True)
                opts.profile_path.write_text(prof.text(), encoding="utf-8")
                result["profile"] = str(opts.profile_path)
            else:
                result["profile"] = f"none: {prof}"
    result["environment"] = environment("jieba", "datasketch", "mmh3")
    return result


def summary(r: dict[str, Any]) -> str:
    """The short table ``neardup bench pipeline`` prints."""
    nd, cl, eng = r["neardup_dedup"], r["classic_stack"], r["engine_memory_store"]
    return table(f"pipeline: {r['documents']} Chinese documents, whole processes pinned to core {r['pinned_cpu']}", [
        Row(f"neardup dedup, whole process: seconds (docs/s), median of {len(nd['all_wall_seconds'])}",
            f"{nd['wall_seconds']:.1f} ({number(nd['documents_per_second_wall'])})"),
        Row("classic stack, whole process: seconds (docs/s)",
            f"{cl['wall_seconds']:.1f} ({number(cl['documents_per_second_wall'])})"),
        Row("ratio (classic / neardup wall time)", f"{r['ratio_whole_process']}x", "20x"),
        *([Row(f"neardup dedup on all {r['neardup_dedup_all_cores']['cores']} cores: seconds (docs/s); ratio",
               f"{r['neardup_dedup_all_cores']['wall_seconds']:.1f} "
               f"({number(r['neardup_dedup_all_cores']['documents_per_second_wall'])}); "
               f"{r['ratio_whole_process_all_cores']}x")] if "neardup_dedup_all_cores" in r else []),
        Row(f"batch engine, memory store, one core: docs/s, median of {len(eng['all_documents_per_second'])}",
            number(eng["documents_per_second"]), "4,000"),
        Row("machine otherwise idle", "yes" if r["machine"]["otherwise_idle"] else
            f"no ({r['machine']['other_processes_cpu_share']:.0%} of the CPU used by others)"),
    ])
