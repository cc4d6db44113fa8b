"""``neardup.bench.cpu``: the CPU a document of every process behind a run, read from a real
six-node Redis Cluster (``INFO``) and from ``/proc``, as ``neardup bench e2e`` reports it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from neardup.bench.cpu import CpuMeter, per_document, primaries_used_memory, process_cpu_seconds
from tests.fixtures.redis_servers import RedisCluster

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def test_a_busy_process_has_cpu_seconds_and_a_gone_one_has_none() -> None:
    busy = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                             "while time.process_time() - t < 0.3: pass\ninput()"],
                            stdin=subprocess.PIPE)  # fmt: skip
    try:
        for _ in range(100):
            spent = process_cpu_seconds(busy.pid)
            if spent is not None and spent >= 0.3:
                break
            subprocess.run(["sleep", "0.05"], check=True)
        assert spent is not None and spent >= 0.3
    finally:
        busy.communicate(b"\n", timeout=10)
    assert process_cpu_seconds(busy.pid) is None


def test_every_node_of_a_cluster_is_measured_and_scripts_are_counted(redis_cluster: RedisCluster) -> None:
    import redis

    meter = CpuMeter(redis_cluster.url, {})
    try:
        before = meter.sample(0)
        client = redis.cluster.RedisCluster(host="127.0.0.1", port=redis_cluster.ports[0])
        script = client.register_script("local n = 0 for i = 1, 20000 do n = n + i end return n")
        for i in range(300):
            script(keys=[f"cpu-test-{i}"])
        client.close()
        after = meter.sample(300)
    finally:
        meter.close()
    got = per_document(before, after)
    assert got["documents"] == 300
    assert len(got["redis_nodes"]) == 6
    assert set(got["redis_by_role_us_per_document"]) == {"master", "slave"}
    scripts = sum(n["scripts_us_per_document"] for n in got["redis_nodes"].values())
    assert scripts > 0 and got["redis_us_per_document"] >= scripts * 0.5
    assert any(c["command"] == "evalsha" for n in got["redis_nodes"].values() for c in n["top_commands"])


def test_the_data_set_is_counted_once_on_the_primaries(redis_cluster: RedisCluster) -> None:
    """``primaries_used_memory``: what a megabyte written adds is counted once, not again on each replica."""
    import time

    import redis

    before = primaries_used_memory(redis_cluster.url)
    client = redis.cluster.RedisCluster(host="127.0.0.1", port=redis_cluster.ports[0])
    keys = [f"mem-test-{i}" for i in range(64)]
    try:
        for key in keys:
            client.set(key, b"x" * 16_384)
        time.sleep(0.5)  # the replicas have their copies by now: they must not be counted
        grew = primaries_used_memory(redis_cluster.url) - before
    finally:
        for key in keys:
            client.delete(key)
        client.close()
    assert 64 * 16_384 <= grew < 2 * 64 * 16_384
