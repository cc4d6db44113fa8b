"""Start the servers the benchmarks need with the test fixtures' code, and stop them by PID.

Used by ``bench/store.py`` and ``bench/e2e.py``: the installed ``neardup bench`` cannot import
``tests/``, so these scripts start a 6-node Redis Cluster (3 masters, 3 replicas) and, for e2e,
Apache Kafka (KRaft, from the Maven jars ``tests/kafka/pom.xml`` names), then run the command.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.kafka_broker import KafkaBroker, kafka_version, start_kafka, stop_process  # noqa: E402
from tests.fixtures.redis_servers import RedisCluster, start_cluster  # noqa: E402


@contextmanager
def redis_cluster() -> Iterator[RedisCluster]:
    """A fresh six-node Redis Cluster in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="neardup-bench-cluster-") as tmp:
        cluster = start_cluster(Path(tmp))
        try:
            yield cluster
        finally:
            cluster.stop()


@contextmanager
def kafka() -> Iterator[KafkaBroker]:
    """A fresh Apache Kafka broker (KRaft) in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="neardup-bench-kafka-") as tmp:
        broker = start_kafka(Path(tmp))
        try:
            yield broker
        finally:
            stop_process(broker.proc)


def kafka_description() -> str:
    """What the broker is, for the results."""
    return (f"Apache Kafka {kafka_version()} (KRaft, combined broker+controller, the test fixture's JVM: "
            "-Xmx512m, serial GC, C1 only)")
