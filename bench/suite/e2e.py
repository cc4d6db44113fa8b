"""``neardup bench e2e``: crawler -> Kafka -> ``neardup worker`` processes -> Redis -> unique | duplicate.

Everything runs against a broker and a store that are already up (``bench/e2e.py`` starts both
with the test fixtures' code, runs this, and stops them). Topics, the consumer group and the
store's key prefix are fresh names per run.

1. The crawler (this process, aiokafka) publishes ``--backlog`` documents of
   :mod:`neardup.bench.corpus` to the raw topic as fast as it can, before any worker runs.
2. ``--workers`` worker processes start at once. Each worker's time to decide its first window
   is read from its own metrics (``neardup_documents_total`` above zero), counted from its spawn:
   interpreter start, imports, store and broker checks, group join, first window.
3. Throughput: the workers drain the backlog. Their decisions (``neardup_agent_outputs_total``
   of all workers, read every second) between 5 % and 95 % of the backlog give the sustained
   rate, and every 10 s interval in there its lowest rate. py-spy samples the first worker for
   part of this phase with ``--profile``.
4. Latency: the crawler publishes at half the sustained rate for ``--latency-seconds``. Two
   latencies, kept apart:
   - *from the take*: the workers' ``neardup_decision_latency_seconds`` histogram (the worker
     took the message off Kafka -> its decision produced and acknowledged), p99 interpolated
     within the histogram's buckets;
   - *from publish*: for every document, the Kafka timestamp of its output record (set by the
     worker's producer when it sent the decision) minus the time the crawler sent it (same
     clock: one machine), read back from the output topics: exact p50/p99/max. The workers'
     ``neardup_publish_to_decision_seconds`` histogram is given too.
5. Resident memory of every worker (``VmRSS`` and the peak ``VmHWM`` from /proc) at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neardup.bench.corpus import Corpus, load_chinese_texts
from neardup.bench.cpu import CpuMeter, CpuSample, per_document, primaries_used_memory
from neardup.bench.net import free_port
from neardup.bench.profile import Profile, Recorder
from neardup.bench.report import MachineLoad, Row, environment, number, percentile, table
from neardup.errors import NeardupError

PROGRESS_SECONDS = 1.0
INTERVAL_SECONDS = 10.0
STEADY = (0.05, 0.95)  # share of the backlog decided: the sustained rate is measured in between
PROFILE_SECONDS = 30.0
DRAIN_TIMEOUT_SECONDS = 1800.0
START_TIMEOUT_SECONDS = 180.0
_SAMPLE = re.compile(r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>[^}]*)\})? (?P<value>\S+)$')


@dataclass(frozen=True, slots=True)
class E2EOptions:
    """What ``neardup bench e2e`` was asked for."""

    broker_url: str
    store_url: str
    broker_version: str | None = None
    docs: Path | None = None
    workers: int = 2
    backlog: int = 120_000
    latency_seconds: float = 60.0
    quick: bool = False
    profile_path: Path | None = None
    broker_pid: int | None = None  # a local broker's process: its CPU is measured too


@dataclass(frozen=True, slots=True)
class Names:
    """Fresh topic names, consumer group and key prefix of one run."""

    run: str
    partitions: int

    @property
    def raw(self) -> str:
        """The raw topic."""
        return f"ndb-{self.run}-raw"

    @property
    def outputs(self) -> dict[str, str]:
        """Output name -> topic."""
        return {o: f"ndb-{self.run}-{o}" for o in ("unique", "duplicate", "dead-letter")}

    def env(self) -> dict[str, str]:
        """The workers' NEARDUP_* variables for these names."""
        out = self.outputs
        return {"NEARDUP_APP_ID": f"ndb-{self.run}", "NEARDUP_TOPICS__RAW": self.raw,
                "NEARDUP_TOPICS__UNIQUE": out["unique"], "NEARDUP_TOPICS__DUPLICATE": out["duplicate"],
                "NEARDUP_TOPICS__DEAD_LETTER": out["dead-letter"], "NEARDUP_TOPICS__PARTITIONS": str(self.partitions),
                "NEARDUP_REDIS__KEY_PREFIX": f"ndb{self.run}"}  # fmt: skip


def bootstrap(broker_url: str) -> list[str]:
    """``kafka://h1:9092;h2:9092`` -> ``["h1:9092", "h2:9092"]``."""
    hosts = [p.split("://", 1)[-1].strip().rstrip("/") for p in broker_url.replace(",", ";").split(";")]
    return [h for h in hosts if h]


# ---------------------------------------------------------------------------- metrics
def scrape(port: int, timeout: float = 5.0) -> dict[tuple[str, str], float]:
    """A worker's /metrics as {(name, labels): value}."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as resp:
        text = resp.read().decode("utf-8")
    out: dict[tuple[str, str], float] = {}
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m:
            out[(m.group("name"), m.group("labels") or "")] = float(m.group("value"))
    return out


def total(samples: dict[tuple[str, str], float], name: str) -> float:
    """Sum of every series of ``name``."""
    return sum(v for (n, _), v in samples.items() if n == name)


def buckets(samples: dict[tuple[str, str], float], name: str) -> dict[float, float]:
    """Cumulative counts by upper bound of histogram ``name`` (``le`` label)."""
    out: dict[float, float] = {}
    for (n, labels), v in samples.items():
        if n == f"{name}_bucket":
            m = re.search(r'le="([^"]+)"', labels)
            if m:
                le = float(m.group(1))
                out[le] = out.get(le, 0.0) + v
    return out


def histogram_quantile(before: dict[float, float], after: dict[float, float], q: float) -> float | None:
    """The ``q`` quantile of the observations between two scrapes, interpolated linearly within
    its bucket (as Prometheus' histogram_quantile); None without observations."""
    bounds = sorted(after)
    counts = [after[b] - before.get(b, 0.0) for b in bounds]
    if not counts or counts[-1] <= 0:
        return None
    rank = q * counts[-1]
    prev_bound, prev_count = 0.0, 0.0
    for bound, count in zip(bounds, counts, strict=True):
        if count >= rank:
            if bound == float("inf"):
                return prev_bound
            width = count - prev_count
            return prev_bound + (bound - prev_bound) * ((rank - prev_count) / width if width else 1.0)
        prev_bound, prev_count = bound, count
    return None


# ---------------------------------------------------------------------------- workers
@dataclass
class Worker:
    """One ``neardup worker`` process of this benchmark."""

    name: str
    proc: subprocess.Popen[bytes]
    spawned: float  # time.monotonic()
    web_port: int
    metrics_port: int
    log_path: Path
    ready_s: float | None = None
    first_decision_s: float | None = None

    def alive(self) -> bool:
        """Still running."""
        return self.proc.poll() is None

    def memory(self) -> dict[str, float]:
        """Resident and peak resident memory (MiB) from /proc."""
        fields: dict[str, float] = {}
        with contextlib.suppress(OSError), open(f"/proc/{self.proc.pid}/status", encoding="ascii") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = round(int(rest.split()[0]) / 1024, 1)
        return {"rss_mib": fields.get("VmRSS", 0.0), "peak_rss_mib": fields.get("VmHWM", 0.0)}

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM, SIGKILL if it hangs; by PID."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        return self.proc.returncode

    def log_tail(self, chars: int = 2000) -> str:
        """The end of its log."""
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""


def start_worker(name: str, opts: E2EOptions, names: Names, window_env: dict[str, str], folder: Path) -> Worker:
    """Spawn one worker with its own ports, on the run's topics and key prefix."""
    web, metrics = free_port(), free_port()
    env = {**os.environ, **names.env(), **window_env, "NEARDUP_BROKER_URL": opts.broker_url,
           "NEARDUP_STORE_URL": opts.store_url, "NEARDUP_WEB_PORT": str(web), "NEARDUP_METRICS_PORT": str(metrics),
           "NEARDUP_WEB_BIND": "127.0.0.1", "NEARDUP_WORKER_ID": f"ndb-{names.run}-{name}"}  # fmt: skip
    log_path = folder / f"worker-{name}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "neardup", "worker", "--loglevel", "warning"], env=env,
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)  # fmt: skip
    return Worker(name, proc, time.monotonic(), web, metrics, log_path)


def _check_alive(workers: list[Worker]) -> None:
    for w in workers:
        if not w.alive():
            raise NeardupError(f"worker {w.name} exited with {w.proc.returncode}: {w.log_tail()}")


def wait_first_windows(workers: list[Worker]) -> None:
    """Poll each worker until its /ready answers 200 and it has decided something."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while any(w.first_decision_s is None for w in workers):
        _check_alive(workers)
        if time.monotonic() > deadline:
            raise NeardupError(f"workers did not decide a first window in {START_TIMEOUT_SECONDS:.0f} s")
        for w in workers:
            now = time.monotonic()
            if w.ready_s is None:
                with contextlib.suppress(OSError), urllib.request.urlopen(
                        f"http://127.0.0.1:{w.web_port}/ready", timeout=1) as resp:
                    if resp.status == 200:
                        w.ready_s = round(now - w.spawned, 2)
            if w.first_decision_s is None:
                with contextlib.suppress(OSError):
                    if total(scrape(w.metrics_port, timeout=1), "neardup_documents_total") > 0:
                        w.first_decision_s = round(now - w.spawned, 2)
        time.sleep(0.1)


def decided(workers: list[Worker]) -> float:
    """Outputs produced by all workers so far (unique, duplicate, dead letter)."""
    return sum(total(scrape(w.metrics_port), "neardup_agent_outputs_total") for w in workers)


# ---------------------------------------------------------------------------- crawler
@dataclass
class Crawler:
    """Publishes corpus documents to the raw topic; remembers when it sent each id."""

    opts: E2EOptions
    names: Names
    corpus: Corpus
    next_doc: int = 0
    sent_at: dict[str, float] = field(default_factory=dict)

    async def _producer(self) -> Any:
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(bootstrap_servers=bootstrap(self.opts.broker_url), linger_ms=5,
                                    max_batch_size=1 << 20, max_request_size=8 << 20, acks=1)  # fmt: skip
        await producer.start()
        return producer

    async def backlog(self, n: int) -> dict[str, Any]:
        """Publish ``n`` documents as fast as possible; the rate."""
        producer = await self._producer()
        started = time.perf_counter()
        size = 0
        try:
            pending = []
            for d in self.corpus.docs(self.next_doc, n):
                value = d.json_line().encode("utf-8")
                size += len(value)
                pending.append(await producer.send(self.names.raw, value, key=d.id.encode("utf-8")))
                if len(pending) >= 5000:
                    await asyncio.gather(*pending)
                    pending.clear()
            await asyncio.gather(*pending)
        finally:
            await producer.stop()
        self.next_doc += n
        seconds = time.perf_counter() - started
        return {"documents": n, "seconds": round(seconds, 2), "documents_per_second": round(n / seconds, 1),
                "mb_per_second": round(size / seconds / 1e6, 2), "mean_message_bytes": round(size / n)}

    async def paced(self, rate: float, seconds: float) -> dict[str, Any]:
        """Publish at ``rate`` documents/s for ``seconds``, stamping each send time."""
        producer = await self._producer()
        started = time.monotonic()
        sent = 0
        pending = []
        try:
            while (elapsed := time.monotonic() - started) < seconds:
                due = int(rate * elapsed) - sent
                for d in self.corpus.docs(self.next_doc, max(0, due)):
                    self.sent_at[d.id] = time.time()
                    pending.append(await producer.send(self.names.raw, d.json_line().encode("utf-8"),
                                                       key=d.id.encode("utf-8")))
                self.next_doc += max(0, due)
                sent += max(0, due)
                await asyncio.sleep(0.01)
            await asyncio.gather(*pending)
        finally:
            await producer.stop()
        return {"offered_documents_per_second": round(rate, 1), "seconds": seconds, "documents": sent}


async def create_topics(opts: E2EOptions, names: Names) -> None:
    """The raw and output topics, with ``names.partitions`` partitions each."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap(opts.broker_url))
    await admin.start()
    try:
        await admin.create_topics([NewTopic(t, names.partitions, 1) for t in (names.raw, *names.outputs.values())])
    finally:
        await admin.close()


async def end_offsets(opts: E2EOptions, topics: list[str], partitions: int) -> dict[Any, int]:
    """Current end offset of every partition of ``topics`` (each made with ``partitions`` by this bench).

    The partitions are named, not looked up: a consumer that subscribed to nothing has no metadata
    for these topics, and ``partitions_for_topic`` answers None (the read-back then saw nothing).
    """
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap(opts.broker_url), enable_auto_commit=False)
    await consumer.start()
    try:
        return dict(await consumer.end_offsets([TopicPartition(t, p) for t in topics for p in range(partitions)]))
    finally:
        await consumer.stop()


async def output_times(opts: E2EOptions, start: dict[Any, int], wanted: set[str]) -> dict[str, float]:
    """Kafka timestamp (epoch s) of the output record of each ``wanted`` id, reading from ``start``."""
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap(opts.broker_url), enable_auto_commit=False,
                                fetch_max_bytes=64 << 20, max_partition_fetch_bytes=16 << 20)  # fmt: skip
    await consumer.start()
    found: dict[str, float] = {}
    try:
        consumer.assign(list(start))
        for tp, offset in start.items():
            consumer.seek(tp, offset)
        deadline = time.monotonic() + 120
        while len(found) < len(wanted) and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=1000, max_records=10_000)
            for records in batches.values():
                for rec in records:
                    key = rec.key.decode("utf-8", "replace") if rec.key else ""
                    if key in wanted and key not in found:
                        found[key] = rec.timestamp / 1000.0
    finally:
        await consumer.stop()
    return found


# ---------------------------------------------------------------------------- phases
def drain(workers: list[Worker], target: int, profile: tuple[Path, Path] | None, meter: CpuMeter
          ) -> tuple[dict[str, Any], Profile | str | None]:
    """Poll the workers' decisions until ``target``; the throughput figures (with each process's
    CPU a document between 5 % and 95 % of the backlog, ``meter``) and the profile, if asked."""
    series: list[tuple[float, float]] = []
    deadline = time.monotonic() + DRAIN_TIMEOUT_SECONDS
    recorder: Recorder | None = None
    cpu: list[CpuSample] = []
    while True:
        _check_alive(workers)
        done = decided(workers)
        now = time.monotonic()
        series.append((now, done))
        if len(cpu) < len(STEADY) and done >= STEADY[len(cpu)] * target:
            cpu.append(meter.sample(done))
        if profile is not None and recorder is None and done >= STEADY[0] * target:
            recorder = Recorder(workers[0].proc.pid, PROFILE_SECONDS, profile[0],
                                f"e2e: worker {workers[0].name} ({len(workers)} workers) while draining the backlog")
        if done >= target:
            break
        if now > deadline:
            raise NeardupError(f"only {done:.0f} of {target} documents decided in {DRAIN_TIMEOUT_SECONDS:.0f} s")
        time.sleep(PROGRESS_SECONDS)
    prof: Profile | str | None = None
    if recorder is not None:
        prof = recorder.finish() or str(recorder.error)
    figures = throughput(series, target)
    figures["cpu_between_5_and_95_percent"] = per_document(*cpu) if len(cpu) == len(STEADY) else None
    return figures, prof


def _time_at(series: list[tuple[float, float]], count: float) -> float:
    """When the cumulative count reached ``count`` (linear between samples)."""
    for (t0, c0), (t1, c1) in itertools.pairwise(series):
        if c1 >= count:
            return t0 + (t1 - t0) * ((count - c0) / (c1 - c0) if c1 > c0 else 1.0)
    return series[-1][0]


def _count_at(series: list[tuple[float, float]], t: float) -> float:
    for (t0, c0), (t1, c1) in itertools.pairwise(series):
        if t1 >= t:
            return c0 + (c1 - c0) * ((t - t0) / (t1 - t0) if t1 > t0 else 1.0)
    return series[-1][1]


def throughput(series: list[tuple[float, float]], target: int) -> dict[str, Any]:
    """Sustained rate between 5 % and 95 % of ``target``, and the rate of each 10 s interval in there."""
    start, end = _time_at(series, STEADY[0] * target), _time_at(series, STEADY[1] * target)
    sustained = (STEADY[1] - STEADY[0]) * target / (end - start) if end > start else None
    intervals = []
    t = start
    while t + INTERVAL_SECONDS <= end:
        intervals.append(round((_count_at(series, t + INTERVAL_SECONDS) - _count_at(series, t)) / INTERVAL_SECONDS,
                               1))
        t += INTERVAL_SECONDS
    return {
        "documents": target,
        "measured_between": f"{STEADY[0]:.0%} and {STEADY[1]:.0%} of the backlog decided",
        "steady_seconds": round(end - start, 1),
        "sustained_documents_per_second": round(sustained, 1) if sustained else None,
        "lowest_10s_interval_documents_per_second": min(intervals) if intervals else None,
        "intervals_10s_documents_per_second": intervals,
        "total_seconds_from_spawn": round(series[-1][0] - series[0][0], 1),
    }


async def latency(opts: E2EOptions, crawler: Crawler, workers: list[Worker], rate: float,
                  seconds: float) -> dict[str, Any]:
    """Step 4 of the module docstring."""
    names = crawler.names
    topics = [names.outputs["unique"], names.outputs["duplicate"]]
    start = await end_offsets(opts, topics, names.partitions)
    before = [scrape(w.metrics_port) for w in workers]
    already = decided(workers)
    first_id = crawler.next_doc
    offered = await crawler.paced(rate, seconds)
    target = already + offered["documents"]
    deadline = time.monotonic() + max(60.0, seconds)
    while decided(workers) < target and time.monotonic() < deadline:
        _check_alive(workers)
        await asyncio.sleep(0.5)
    after = [scrape(w.metrics_port) for w in workers]
    wanted = {crawler.corpus.doc(k).id for k in range(first_id, crawler.next_doc)}
    times = await output_times(opts, start, wanted)
    delays = [times[i] - crawler.sent_at[i] for i in times]

    def merged(name: str, samples: list[dict[tuple[str, str], float]]) -> dict[float, float]:
        out: dict[float, float] = {}
        for s in samples:
            for k, v in buckets(s, name).items():
                out[k] = out.get(k, 0.0) + v
        return out

    def hq(name: str, q: float) -> float | None:
        v = histogram_quantile(merged(name, before), merged(name, after), q)
        return round(v, 3) if v is not None else None

    return {
        **offered,
        "documents_read_back": len(times),
        "publish_to_decision_seconds": {
            "what": "per document: Kafka timestamp of its output record (the worker's producer, at send) minus "
                    "the crawler's send time; read back from the output topics",
            "p50": _r(percentile(delays, 0.5)), "p99": _r(percentile(delays, 0.99)),
            "max": _r(max(delays) if delays else None),
        },
        "decision_latency_from_take_seconds": {
            "what": "workers' neardup_decision_latency_seconds histogram: taken off Kafka -> decision produced "
                    "and acknowledged; quantiles interpolated within buckets",
            "p50": hq("neardup_decision_latency_seconds", 0.5), "p99": hq("neardup_decision_latency_seconds", 0.99),
        },
        "worker_publish_to_decision_seconds": {
            "what": "workers' neardup_publish_to_decision_seconds histogram: Kafka record timestamp -> decision "
                    "produced; quantiles interpolated within buckets",
            "p50": hq("neardup_publish_to_decision_seconds", 0.5),
            "p99": hq("neardup_publish_to_decision_seconds", 0.99),
        },
    }


def _r(x: float | None) -> float | None:
    return round(x, 3) if x is not None else None


@contextlib.contextmanager
def running(workers: list[Worker]) -> Iterator[list[Worker]]:
    """Stop every worker at the end, whatever happens."""
    try:
        yield workers
    finally:
        for w in workers:
            w.stop()


async def _redis_version(store_url: str) -> str | None:
    from neardup.storage import open_store

    store = open_store(store_url, ttl={})
    await store.open()
    try:
        client = store.client  # type: ignore[attr-defined]
        if getattr(store, "cluster", False):
            node = client.get_primaries()[0]
            info = await client.execute_command("INFO", "server", target_nodes=node)
        else:
            info = await client.info("server")
        return str(info.get("redis_version"))
    finally:
        await store.close()


def run(opts: E2EOptions) -> dict[str, Any]:
    """The whole benchmark (module docstring); returns the results."""
    load = MachineLoad()
    workers_n = opts.workers
    backlog = 800 if opts.quick else opts.backlog
    seconds = 5.0 if opts.quick else opts.latency_seconds
    names = Names(secrets.token_hex(3), max(4, 2 * workers_n))
    _, texts = load_chinese_texts(opts.docs)
    crawler = Crawler(opts, names, Corpus(texts, id_prefix=f"ndb{names.run}-"))
    window_env = {"NEARDUP_WINDOW__MAX_COUNT": "100" if opts.quick else "1000"}
    result: dict[str, Any] = {"benchmark": "e2e", "workers": workers_n, "partitions": names.partitions,
                              "run": names.run, "window_max_count": int(window_env["NEARDUP_WINDOW__MAX_COUNT"])}
    asyncio.run(create_topics(opts, names))
    result["crawler_backlog"] = asyncio.run(crawler.backlog(backlog))
    prof: Profile | str | None = None
    empty = primaries_used_memory(opts.store_url)  # before any worker wrote
    with tempfile.TemporaryDirectory(prefix="neardup-bench-e2e-") as tmp:
        folder = Path(tmp)
        workers = [start_worker(f"w{i + 1}", opts, names, window_env, folder) for i in range(workers_n)]
        with running(workers):
            wait_first_windows(workers)
            result["first_window"] = [{"worker": w.name, "ready_seconds_from_spawn": w.ready_s,
                                       "first_decision_seconds_from_spawn": w.first_decision_s} for w in workers]
            prof_paths = (folder / "pyspy.txt", opts.profile_path) if opts.profile_path else None
            processes = {f"worker {w.name}": w.proc.pid for w in workers}
            if opts.broker_pid is not None:
                processes["broker"] = opts.broker_pid
            meter = CpuMeter(opts.store_url, processes)
            try:
                result["throughput"], prof = drain(workers, backlog, prof_paths, meter)
            finally:
                meter.close()
            held = primaries_used_memory(opts.store_url) - empty
            result["redis_memory"] = {
                "what": "used_memory of the primaries less their replication and client buffers, once the backlog was "
                        "decided, less before the workers started",
                "documents": backlog, "bytes": held, "bytes_per_document": round(held / backlog, 1)}
            if prof_paths is not None and prof_paths[0].exists():  # py-spy's collapsed stacks, for flame graphs
                shutil.copyfile(prof_paths[0], prof_paths[1].with_suffix(".raw"))
            rate = 0.5 * (result["throughput"]["sustained_documents_per_second"] or backlog / 60)
            result["latency_at_half_load"] = asyncio.run(latency(opts, crawler, workers, rate, seconds))
            result["worker_memory"] = [{"worker": w.name, **w.memory()} for w in workers]
    if opts.profile_path is not None:
        text = prof.text() if isinstance(prof, Profile) else f"(no profile: {prof})"
        opts.profile_path.write_text(text, encoding="utf-8")
        result["profile"] = str(opts.profile_path)
    result["machine"] = load.result()
    result["environment"] = environment("redis", "aiokafka", "faust-streaming", kafka=opts.broker_version,
                                        redis=asyncio.run(_redis_version(opts.store_url)))
    return result


def summary(r: dict[str, Any]) -> str:
    """The short table ``neardup bench e2e`` prints."""
    t, lat = r["throughput"], r["latency_at_half_load"]
    first = max((w["first_decision_seconds_from_spawn"] or 0.0) for w in r["first_window"])
    peak = max(w["peak_rss_mib"] for w in r["worker_memory"])
    cpu = t.get("cpu_between_5_and_95_percent") or {}
    return table(f"e2e: crawler -> Kafka -> {r['workers']} workers -> Redis, backlog of {t['documents']:,}", [
        Row("sustained docs/s (all workers)", number(t["sustained_documents_per_second"]), "5,000"),
        Row("lowest 10 s interval, docs/s", number(t["lowest_10s_interval_documents_per_second"]), "2,500"),
        Row(f"p99 publish -> decision at {number(lat['offered_documents_per_second'])} docs/s, s (exact)",
            number(lat["publish_to_decision_seconds"]["p99"], 2), "2"),
        Row("p99 take -> decision (worker histogram), s", number(lat["decision_latency_from_take_seconds"]["p99"], 2)),
        Row("CPU a document, Redis (all nodes), us", number(cpu.get("redis_us_per_document")), "120"),
        Row("CPU a document, workers, us", number(cpu.get("workers_us_per_document")), "300"),
        Row("CPU a document, broker, us", number(cpu.get("processes_us_per_document", {}).get("broker"))),
        Row("Redis used_memory a document decided, bytes", number(r.get("redis_memory", {}).get("bytes_per_document")),
            "1,000"),
        Row("worker peak RSS, MiB", number(peak), "1,024"),
        Row("spawn -> first window decided, s (slowest worker)", number(first, 1), "5"),
        Row("machine otherwise idle", "yes" if r["machine"]["otherwise_idle"] else
            f"no ({r['machine']['other_processes_cpu_share']:.0%} of the CPU used by others)"),
    ])
