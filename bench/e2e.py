"""``neardup bench e2e`` on a fresh 6-node Redis Cluster and Apache Kafka broker that this script
starts and stops (the test fixtures' code).

    flock /tmp/neardup-heavy.lock .venv/bin/python bench/e2e.py [--profile] [--quick] [--backlog N] ...

Extra arguments go to ``neardup bench e2e``; results land in ``bench/results/e2e-DATE.json``.
"""

from __future__ import annotations

import sys

from servers import kafka, kafka_description, redis_cluster

from neardup.cli import main

if __name__ == "__main__":
    with redis_cluster() as cluster, kafka() as broker:
        code = main(["bench", "e2e", "--broker", broker.url, "--store", cluster.url,
                     "--broker-version", kafka_description(), "--broker-pid", str(broker.proc.pid),
                     *sys.argv[1:]])
    sys.exit(code)
