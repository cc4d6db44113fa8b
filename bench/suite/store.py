"""``neardup bench store``: one worker (an :class:`~neardup.engine.Engine` in this process) on a
running Redis Cluster (or Redis).

1. Round trips: windows of several sizes; per window, the engine's store calls (its
   ``neardup_store_round_trip_seconds`` counts) and the Redis commands the masters ran (``INFO
   commandstats`` deltas: ``evalsha``/``eval`` are the round trips, one per node per store call;
   the rest run inside the scripts). The round trips must not grow with the window.
2. Windows of fresh documents (:mod:`neardup.bench.corpus`) until 10 thousand are stored, then
   timed windows: documents/s and the cost per document, with the store time per call.
3. Synthetic records up to ``--stored`` (1 million): random 64-bit SimHashes and random 128 x
   32-bit MinHash values, filed under the index keys the engine's layout computes from them,
   b-bit signatures as the engine stores them, critical-difference profiles of real documents, a
   random content hash claimed for each; written with the store's own ``commit`` in windows of
   20,000. Random SimHashes spread evenly over the block keys, so each 16-bit block value is
   shared by about N / 65,536 documents, as a large real store's would be (more, if anything).
4. The same timed windows again at that size: the cost per document against step 2's.

``--profile`` samples this process with py-spy during extra windows after each timed step.
Keys go under a fresh prefix and are left in the store.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neardup.bench.corpus import Corpus, load_chinese_texts
from neardup.bench.profile import Profile, Recorder
from neardup.bench.report import MachineLoad, Row, environment, number, table

SMALL_STORE = 10_000
# synthetic records per commit: windows of a few thousand, as workers write them (with 20,000 a
# commit near 1 million stored failed with Redis's BUSY: a script ran past the busy-script limit)
LOAD_CHUNK = 2_000
OPS = ("lookup", "fetch", "commit", "get_decisions", "put_decisions", "write_state")
ROUND_TRIP_COMMANDS = ("evalsha", "eval")
# commands this benchmark sends itself (its INFO reads), left out of the per-window counts
OWN_COMMANDS = ("info",)


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """What ``neardup bench store`` was asked for."""

    store_url: str
    docs: Path | None = None
    window: int = 1000
    stored: int = 1_000_000
    quick: bool = False
    profile_path: Path | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """Sizes of each step (smaller with --quick)."""

    sizes: tuple[int, ...]
    windows_per_size: int
    small_store: int
    window: int
    timed_windows: int
    profile_windows: int
    stored: int
    load_chunk: int

    @classmethod
    def of(cls, opts: StoreOptions) -> Plan:
        """The full plan, or the tiny one for ``--quick``."""
        if opts.quick:
            return cls((10, 40), 2, 200, 40, 2, 1, min(opts.stored, 2_000), 500)
        return cls((100, 500, 1000, 2000), 2, SMALL_STORE, opts.window, 3, 3, opts.stored, LOAD_CHUNK)


class Bench:
    """The engine under test, its documents, and readers of its metrics and of the masters' counters."""

    def __init__(self, engine: Any, corpus: Corpus) -> None:
        """``engine`` is open on a Redis store; documents come from ``corpus`` in order."""
        self.engine = engine
        self.corpus = corpus
        self.next_doc = 0
        self.decided = 0
        self.store = engine.store
        self.registry = engine.metrics.registry

    # ---------------------------------------------------------------- documents
    def take(self, n: int) -> list[Any]:
        """The next ``n`` corpus documents as engine documents."""
        from neardup.document import parse_document

        limits = self.engine.settings.normalize
        docs = [parse_document(d.json_line().encode("utf-8"), max_bytes=limits.max_bytes,
                               max_id_length=limits.max_id_length, naive_time_zone=limits.naive_time_zone)
                for d in self.corpus.docs(self.next_doc, n)]  # fmt: skip
        self.next_doc += n
        return docs

    async def decide(self, docs: list[Any]) -> float:
        """Decide one window; its seconds."""
        started = time.perf_counter()
        await self.engine.decide(docs)
        self.decided += len(docs)
        return time.perf_counter() - started

    # ---------------------------------------------------------------- counters
    def _metric(self, name: str, labels: dict[str, str] | None = None) -> float:
        return float(self.registry.get_sample_value(name, labels or {}) or 0.0)

    def engine_counters(self) -> dict[str, float]:
        """Store calls and seconds by op, candidates observed (count, sum)."""
        out: dict[str, float] = {}
        for op in OPS:
            out[f"calls:{op}"] = self._metric("neardup_store_round_trip_seconds_count", {"op": op})
            out[f"seconds:{op}"] = self._metric("neardup_store_round_trip_seconds_sum", {"op": op})
        out["candidates_count"] = self._metric("neardup_candidates_per_document_count")
        out["candidates_sum"] = self._metric("neardup_candidates_per_document_sum")
        return out

    def masters(self) -> list[Any]:
        """The cluster's primaries (``[None]``: a single server)."""
        return list(self.store.client.get_primaries()) if self.store.cluster else [None]

    async def _info(self, node: Any, section: str) -> dict[str, Any]:
        client = self.store.client
        if node is None:
            return dict(await client.info(section))
        return dict(await client.execute_command("INFO", section, target_nodes=node))

    async def commandstats(self) -> Counter[str]:
        """Calls per command, summed over the masters."""
        calls: Counter[str] = Counter()
        for node in self.masters():
            for key, value in (await self._info(node, "commandstats")).items():
                if key.startswith("cmdstat_") and isinstance(value, dict):
                    calls[key.removeprefix("cmdstat_").lower()] += int(value.get("calls", 0))
        return calls

    async def used_memory(self) -> int:
        """``used_memory`` summed over the masters."""
        return sum([int((await self._info(node, "memory"))["used_memory"]) for node in self.masters()])

    async def redis_version(self) -> str:
        """The first master's ``redis_version``."""
        return str((await self._info(self.masters()[0], "server"))["redis_version"])


def _per_window(before: dict[str, float], after: dict[str, float], windows: int, prefix: str) -> dict[str, float]:
    return {k.removeprefix(prefix): round((after[k] - before[k]) / windows, 2)
            for k in after if k.startswith(prefix) and after[k] != before[k]}


async def round_trips(b: Bench, plan: Plan) -> list[dict[str, Any]]:
    """Step 1: store calls, round trips and Redis commands per window, by window size."""
    rows = []
    for size in plan.sizes:
        eng0, cmd0 = b.engine_counters(), await b.commandstats()
        seconds = 0.0
        for _ in range(plan.windows_per_size):
            seconds += await b.decide(b.take(size))
        eng1, cmd1 = b.engine_counters(), await b.commandstats()
        w = plan.windows_per_size
        commands = {name: round((cmd1[name] - cmd0[name]) / w, 1) for name in cmd1
                    if name not in OWN_COMMANDS and cmd1[name] != cmd0[name]}  # fmt: skip
        rows.append({
            "window": size,
            "windows": w,
            "store_calls_per_window": _per_window(eng0, eng1, w, "calls:"),
            "redis_round_trips_per_window": round(sum(commands.get(c, 0.0) for c in ROUND_TRIP_COMMANDS), 1),
            "redis_commands_per_window": round(sum(commands.values()), 1),
            "redis_commands_per_window_by_name": dict(sorted(commands.items(), key=lambda kv: -kv[1])),
            "seconds_per_window": round(seconds / w, 3),
        })
    return rows


async def timed(b: Bench, plan: Plan) -> dict[str, Any]:
    """Timed windows at the store's current size: documents/s, ms per document, store ms by call."""
    stored = b.decided
    eng0 = b.engine_counters()
    seconds = 0.0
    for _ in range(plan.timed_windows):
        seconds += await b.decide(b.take(plan.window))
    eng1 = b.engine_counters()
    n = plan.timed_windows * plan.window
    cands = eng1["candidates_count"] - eng0["candidates_count"]
    return {
        "stored_documents_before": stored,
        "windows": plan.timed_windows,
        "documents": n,
        "seconds": round(seconds, 3),
        "documents_per_second": round(n / seconds, 1),
        "ms_per_document": round(1000 * seconds / n, 4),
        "store_calls_per_window": _per_window(eng0, eng1, plan.timed_windows, "calls:"),
        "store_ms_per_window": {op: round(1000 * (eng1[f"seconds:{op}"] - eng0[f"seconds:{op}"]) / plan.timed_windows,
                                          1) for op in OPS if eng1[f"calls:{op}"] != eng0[f"calls:{op}"]},
        "mean_candidates_per_document": round((eng1["candidates_sum"] - eng0["candidates_sum"]) / cands, 2)
        if cands else None,
    }


async def profiled(b: Bench, plan: Plan, seconds_per_window: float, out: Path, title: str) -> Profile | str:
    """py-spy on this process during ``plan.profile_windows`` more windows."""
    rec = Recorder(os.getpid(), plan.profile_windows * seconds_per_window + 1, out, title)
    for _ in range(plan.profile_windows):
        await b.decide(b.take(plan.window))
    profile = await asyncio.to_thread(rec.finish)
    return profile if profile is not None else str(rec.error)


def synthetic_records(b: Bench, start: int, m: int, rng: np.random.Generator,
                      profiles: list[bytes]) -> tuple[list[Any], list[Any]]:
    """(claims, records) of ``m`` synthetic documents (module docstring, step 3)."""
    from neardup.sketch.fingerprint import encode_signature, encode_simhash
    from neardup.storage import Claim, FingerprintRecord

    fp = b.engine.settings.fingerprint
    simhash = rng.integers(0, np.iinfo(np.uint64).max, size=(m, 1), dtype=np.uint64, endpoint=True)
    sigs = rng.integers(0, np.iinfo(np.uint32).max, size=(m, fp.num_perm), dtype=np.uint32, endpoint=True)
    keys = b.engine.layout.window_keys(simhash, sigs)
    hashes = rng.bytes(16 * m)
    shingles = rng.integers(300, 3000, size=m).tolist()
    published = time.time() - 86_400
    claims, records = [], []
    for r in range(m):
        doc_id = f"{b.corpus.id_prefix}syn{start + r:08d}"
        h = hashes[16 * r:16 * r + 16]
        row = keys[r]
        claims.append(Claim(h, doc_id, "news"))
        records.append(FingerprintRecord(
            doc_id=doc_id, content_type="news", published_at=published, content_hash=h,
            simhash=encode_simhash(simhash[r]), signature=encode_signature(sigs[r], b"c", fp.zh_shingle, fp.seed,
                                                                           fp.signature_bits, fp.minhash_family),
            profile=profiles[r % len(profiles)], shingles=shingles[r], length=shingles[r] + 4,
            index_keys=tuple(row[row != 0].tolist()),
        ))  # fmt: skip
    return claims, records


def real_profiles(b: Bench, texts: list[str]) -> list[bytes]:
    """Encoded critical-difference profiles of real texts, for the synthetic records."""
    fps = b.engine.fingerprinter.fingerprint(texts)
    return [b.engine.profiler.profile(fps.texts[i], fps.langs[i]).encode() for i in range(len(texts))]


async def load(b: Bench, plan: Plan, texts: list[str]) -> dict[str, Any]:
    """Step 3: synthetic records up to ``plan.stored`` stored documents, through ``commit``."""
    total = max(0, plan.stored - b.decided)
    if not total:
        return {"synthetic_records": 0}
    rng = np.random.default_rng(20_261_203)
    profiles = real_profiles(b, texts[:500])
    mem0 = await b.used_memory()
    build = write = 0.0
    done = 0
    while done < total:
        m = min(plan.load_chunk, total - done)
        t0 = time.perf_counter()
        claims, records = synthetic_records(b, done, m, rng, profiles)
        t1 = time.perf_counter()
        await b.store.commit(claims, records)
        write += time.perf_counter() - t1
        build += t1 - t0
        done += m
    mem1 = await b.used_memory()
    b.decided += total
    return {
        "synthetic_records": total,
        "how": "random 64-bit SimHash and 128 x 32-bit MinHash per record, index keys from the engine's layout, "
               "b-bit signatures as stored, profiles of real documents, a random content hash claimed each; "
               f"written with the store's commit in windows of {plan.load_chunk:,}",
        "build_seconds": round(build, 1),
        "commit_seconds": round(write, 1),
        "records_per_second": round(total / (build + write)),
        "used_memory_bytes_per_record_all_masters": round((mem1 - mem0) / total, 1),
    }


async def measure(opts: StoreOptions, plan: Plan) -> dict[str, Any]:
    """Steps 1-4 against the store; the results without machine and environment."""
    from prometheus_client import CollectorRegistry

    from neardup.config import load_settings
    from neardup.engine import Engine

    prefix = f"ndb{secrets.token_hex(3)}"
    settings = load_settings(store_url=opts.store_url, redis={"key_prefix": prefix})
    source, texts = load_chinese_texts(opts.docs)
    engine = await Engine.open(settings, registry=CollectorRegistry())
    b = Bench(engine, Corpus(texts, id_prefix=f"{prefix}-"))
    result: dict[str, Any] = {"benchmark": "store", "store": settings.redacted()["store_url"], "key_prefix": prefix,
                              "masters": len(b.masters()), "window": plan.window,
                              "corpus": {"source_file": str(source), "source_texts": len(texts)}}
    profiles: list[Profile | str] = []
    raw = Path(tempfile.mkdtemp(prefix="neardup-bench-pyspy-"))
    try:
        result["redis_version"] = await b.redis_version()
        await b.decide(b.take(min(plan.sizes)))  # connections, scripts, kernels: not measured
        result["round_trips"] = await round_trips(b, plan)
        while b.decided < plan.small_store:
            await b.decide(b.take(min(plan.window, plan.small_store - b.decided)))
        small = await timed(b, plan)
        result["small_store"] = small
        if opts.profile_path is not None:
            profiles.append(await profiled(b, plan, small["seconds"] / plan.timed_windows, raw / "small.txt",
                                           f"store bench: one engine on {result['store']}, "
                                           f"about {b.decided:,} documents stored"))
        result["load"] = await load(b, plan, texts)
        large = await timed(b, plan)
        result["large_store"] = large
        result["cost_ratio_large_vs_small"] = round(large["ms_per_document"] / small["ms_per_document"], 2)
        if opts.profile_path is not None:
            profiles.append(await profiled(b, plan, large["seconds"] / plan.timed_windows, raw / "large.txt",
                                           f"store bench: one engine on {result['store']}, "
                                           f"about {b.decided:,} documents stored"))
        result["stored_documents_at_end"] = b.decided
        result["keys_at_end"] = (await engine.store.stats()).get("keys")
    finally:
        await engine.close()
        shutil.rmtree(raw, ignore_errors=True)
    if opts.profile_path is not None:
        opts.profile_path.write_text("\n\n".join(p.text() if isinstance(p, Profile) else f"(no profile: {p})"
                                                 for p in profiles), encoding="utf-8")
        result["profile"] = str(opts.profile_path)
    return result


def run(opts: StoreOptions) -> dict[str, Any]:
    """The whole benchmark (module docstring); returns the results."""
    load_before = MachineLoad()
    plan = Plan.of(opts)
    result = asyncio.run(measure(opts, plan))
    result["machine"] = load_before.result()
    result["environment"] = environment("redis", "prometheus-client", redis=result.pop("redis_version", None))
    return result


def summary(r: dict[str, Any]) -> str:
    """The short table ``neardup bench store`` prints."""
    small, large = r["small_store"], r["large_store"]
    trips = ", ".join(f"{row['window']}: {row['redis_round_trips_per_window']:g}" for row in r["round_trips"])
    cmds = ", ".join(f"{row['window']}: {row['redis_commands_per_window']:g}" for row in r["round_trips"])
    return table(f"store: one engine on {r['store']} ({r['masters']} masters), windows of {r['window']}", [
        Row(f"docs/s with {small['stored_documents_before']:,} stored", number(small["documents_per_second"]),
            "3,000"),
        Row("Redis round trips (EVALSHA) per window, by window size", trips, "constant"),
        Row("Redis commands per window (scripts' included), by window size", cmds),
        Row(f"ms per document with {small['stored_documents_before']:,} stored", f"{small['ms_per_document']:.3f}"),
        Row(f"ms per document with {large['stored_documents_before']:,} stored", f"{large['ms_per_document']:.3f}"),
        Row("cost ratio, large / small store", f"{r['cost_ratio_large_vs_small']}x", "<= 1.5x"),
        Row("machine otherwise idle", "yes" if r["machine"]["otherwise_idle"] else
            f"no ({r['machine']['other_processes_cpu_share']:.0%} of the CPU used by others)"),
    ])
