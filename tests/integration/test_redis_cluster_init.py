"""deploy/redis/cluster-init.sh (docker-compose's redis-init job) against six real redis-servers.

It creates a cluster on empty nodes only, leaves a formed cluster alone, and refuses (exit 1,
nothing changed) whenever a node holds data or belongs to a cluster that is not ok, or does not
answer: a cluster holding data is never re-created.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.net import free_port
from tests.fixtures.redis_servers import HOST, RedisProcess, redis_binaries, start_redis

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "redis" / "cluster-init.sh"
N_KEYS = 200


def start_node(workdir: Path, port: int) -> RedisProcess:
    return start_redis(
        workdir / f"{port}-{len(list(workdir.glob(f'{port}-*')))}",
        "--cluster-enabled", "yes", "--cluster-node-timeout", "2000", "--repl-diskless-sync-delay", "0",
        "--cluster-config-file", "nodes.conf",
        port=port,
    )  # fmt: skip


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[dict[int, RedisProcess]]:
    redis_binaries()
    started: dict[int, RedisProcess] = {}
    try:
        for _ in range(6):
            port = free_port(cluster=True)
            started[port] = start_node(tmp_path, port)
        yield started
    finally:
        for node in started.values():
            node.stop(signal.SIGKILL)


def run_init(ports: list[int]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NODES": " ".join(f"{HOST}:{p}" for p in ports), "REPLICAS": "1"}
    return subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120, check=False)


def cli(port: int, *args: str) -> str:
    _, redis_cli = redis_binaries()
    out = subprocess.run([redis_cli, "-h", HOST, "-p", str(port), *args], capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def state(port: int) -> str:
    info = dict(line.split(":", 1) for line in cli(port, "cluster", "info").splitlines() if ":" in line)
    return info.get("cluster_state", "").strip()


def total_keys(ports: list[int]) -> int:
    """Keys over the masters (replicas hold copies)."""
    return sum(int(cli(p, "dbsize")) for p in ports if "master" in cli(p, "role").splitlines()[:1])


def test_creates_once_never_over_data(nodes: dict[int, RedisProcess], tmp_path: Path) -> None:
    ports = sorted(nodes)

    # six empty, lone nodes: the cluster is formed
    first = run_init(ports)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "creating a cluster of 6 empty nodes" in first.stdout
    assert all(state(p) == "ok" for p in ports)

    _, redis_cli = redis_binaries()
    for i in range(N_KEYS):
        subprocess.run([redis_cli, "-c", "-h", HOST, "-p", str(ports[0]), "set", f"k{i}", "v"],
                       capture_output=True, timeout=30, check=True)  # fmt: skip
    assert total_keys(ports) == N_KEYS

    # formed and ok: nothing to do, nothing changed
    again = run_init(ports)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already formed" in again.stdout and "creating" not in again.stdout
    assert total_keys(ports) == N_KEYS

    # one node comes back empty and alone (its volume lost): the others hold data -> refuse
    lost = ports[-1]
    nodes[lost].stop(signal.SIGKILL)
    nodes[lost] = start_node(tmp_path, lost)
    refused = run_init(ports)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "refusing" in refused.stderr and "never by re-creating" in refused.stderr
    assert "creating" not in refused.stdout
    survivors = [p for p in ports if p != lost]
    assert int(cli(lost, "cluster", "info").split("cluster_known_nodes:")[1].split()[0]) == 1
    assert all(state(p) == "ok" for p in survivors)  # the cluster itself was not touched

    # a node that does not answer: refuse before looking any further
    nodes[lost].stop(signal.SIGKILL)
    gone = run_init(ports)
    assert gone.returncode == 1 and f"node {HOST}:{lost} does not answer" in gone.stderr


def test_compose_runs_the_script() -> None:
    """The compose file's redis-init job is this script, on the six nodes, with their password."""
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    job = compose["services"]["redis-init"]
    assert job["entrypoint"] == ["/bin/sh", "/neardup/cluster-init.sh"]
    assert "./deploy/redis:/neardup:ro" in job["volumes"]
    nodes = job["environment"]["NODES"].split()
    assert nodes == [f"redis-{n}:{6999 + n}" for n in range(1, 7)]
    assert all(h.split(":")[0] in compose["services"] for h in nodes)
    assert "REDISCLI_AUTH" in job["environment"]
    for n in range(1, 7):  # data outlives the containers
        assert any(str(v).endswith(":/data") for v in compose["services"][f"redis-{n}"]["volumes"])
