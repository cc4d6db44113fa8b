"""CPU time of the processes behind a benchmark run, per document decided.

Redis nodes are read over the network (``INFO cpu``, ``INFO commandstats``, ``INFO
replication``), every node of a cluster (replicas apply their primaries' writes: their share is
part of the cost); local processes (the workers, the broker when its PID is known) from
``/proc/PID/stat``. :class:`CpuMeter` takes a sample at the start and at the end of a phase and
divides each process's CPU seconds in between by the documents decided in between.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from neardup.storage.redis.store import parse_cluster_url

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (its threads included), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) ": state is field 3
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime: fields 14 and 15


@dataclass(frozen=True, slots=True)
class RedisNodeSample:
    """One Redis node at one moment."""

    role: str
    cpu_seconds: float  # used_cpu_user + used_cpu_sys (the server's threads, not forked children)
    commands: dict[str, tuple[int, int]]  # command -> (calls, microseconds inside it)


def _redis_clients(store_url: str) -> list[Any]:
    """A plain client per node of ``store_url``: every node a cluster has (primaries and replicas)."""
    import redis

    if not store_url.startswith("rediscluster://"):
        return [redis.Redis.from_url(store_url)]
    seeds, username, password = parse_cluster_url(store_url)
    for host, port in seeds:
        seed = redis.Redis(host=host, port=port, username=username, password=password)
        try:
            nodes = seed.execute_command("CLUSTER", "NODES")
        except redis.RedisError:
            continue
        finally:
            seed.close()
        text = nodes.decode() if isinstance(nodes, bytes) else str(nodes)
        rows = [line.split() for line in text.splitlines() if line.strip()]  # id addr flags ...
        hosts = [r[1].split("@")[0].rsplit(":", 1) for r in rows if "fail" not in r[2]]
        return [redis.Redis(host=h or host, port=int(p), username=username, password=password) for h, p in hosts]
    raise ConnectionError(f"no node of {seeds} answered CLUSTER NODES")


def _redis_sample(client: Any) -> RedisNodeSample:
    cpu = client.info("cpu")
    stats = client.info("commandstats")
    role = client.info("replication").get("role", "?")
    commands = {name.removeprefix("cmdstat_"): (int(v["calls"]), int(v["usec"])) for name, v in stats.items()}
    return RedisNodeSample(str(role), float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]), commands)


# buffers in used_memory that hold no data: the replication backlog (it grows to its limit with the
# first writes) and the clients' and replicas' output buffers (as full as the moment's traffic)
BUFFERS = ("mem_replication_backlog", "mem_clients_slaves", "mem_clients_normal")


def primaries_used_memory(store_url: str) -> int:
    """``used_memory`` summed over the primaries of ``store_url``, less their buffers
    (:data:`BUFFERS`): the bytes the data set holds, once (replicas hold a copy each)."""
    total = 0
    for client in _redis_clients(store_url):
        try:
            if client.info("replication").get("role") == "master":
                memory = client.info("memory")
                total += int(memory["used_memory"]) - sum(int(memory.get(b, 0)) for b in BUFFERS)
        finally:
            client.close()
    return total


@dataclass(frozen=True, slots=True)
class CpuSample:
    """Every measured process at one moment, with the documents decided by then."""

    at: float
    decided: float
    redis: dict[str, RedisNodeSample]
    processes: dict[str, float | None]


@dataclass
class CpuMeter:
    """Samples the Redis nodes of ``store_url`` and the local ``processes`` (name -> PID)."""

    store_url: str | None
    processes: dict[str, int]
    _clients: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """One client per Redis node, opened now."""
        if self.store_url is not None:
            for c in _redis_clients(self.store_url):
                kw = c.connection_pool.connection_kwargs
                self._clients[f"{kw.get('host')}:{kw.get('port')}"] = c

    def sample(self, decided: float) -> CpuSample:
        """Everything now."""
        return CpuSample(time.monotonic(), decided, {n: _redis_sample(c) for n, c in self._clients.items()},
                         {name: process_cpu_seconds(pid) for name, pid in self.processes.items()})

    def close(self) -> None:
        """Close the Redis connections."""
        for c in self._clients.values():
            c.close()


def per_document(start: CpuSample, end: CpuSample) -> dict[str, Any]:
    """CPU microseconds a document decided between two samples: each Redis node (and its
    scripts' own time, ``EVALSHA`` and ``FCALL``), all primaries, all replicas, all Redis; each
    process, and the workers (names starting ``worker``) together."""
    docs = end.decided - start.decided
    if docs <= 0:
        return {"documents": 0}

    def us(seconds: float) -> float:
        return round(seconds * 1e6 / docs, 1)

    nodes: dict[str, Any] = {}
    by_role: dict[str, float] = {}
    for name, after in sorted(end.redis.items()):
        before = start.redis.get(name)
        if before is None:
            continue
        spent = after.cpu_seconds - before.cpu_seconds
        calls = {cmd: (c - before.commands.get(cmd, (0, 0))[0], u - before.commands.get(cmd, (0, 0))[1])
                 for cmd, (c, u) in after.commands.items()}
        scripts = sum(u for cmd, (_, u) in calls.items() if cmd in ("evalsha", "eval", "fcall"))
        top = sorted(((u, cmd, c) for cmd, (c, u) in calls.items() if c > 0), reverse=True)[:8]
        nodes[name] = {"role": after.role, "cpu_us_per_document": us(spent),
                       "scripts_us_per_document": round(scripts / docs, 1),
                       "top_commands": [{"command": cmd, "calls_per_document": round(c / docs, 3),
                                         "us_per_document": round(u / docs, 1)} for u, cmd, c in top]}
        by_role[after.role] = by_role.get(after.role, 0.0) + spent
    procs: dict[str, float] = {}
    for name, after_s in end.processes.items():
        before_s = start.processes.get(name)
        if after_s is not None and before_s is not None:
            procs[name] = us(after_s - before_s)
    workers = [v for k, v in procs.items() if k.startswith("worker")]
    return {
        "documents": round(docs),
        "seconds": round(end.at - start.at, 1),
        "redis_us_per_document": round(sum(n["cpu_us_per_document"] for n in nodes.values()), 1),
        "redis_by_role_us_per_document": {role: us(s) for role, s in sorted(by_role.items())},
        "redis_nodes": nodes,
        "workers_us_per_document": round(sum(workers), 1) if workers else None,
        "processes_us_per_document": procs,
    }
