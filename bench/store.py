"""``neardup bench store`` on a fresh 6-node Redis Cluster that this script starts and stops.

    flock /tmp/neardup-heavy.lock .venv/bin/python bench/store.py [--profile] [--quick] [--stored N] ...

Extra arguments go to ``neardup bench store``; results land in ``bench/results/store-DATE.json``.
"""

from __future__ import annotations

import sys

from servers import redis_cluster

from neardup.cli import main

if __name__ == "__main__":
    with redis_cluster() as cluster:
        code = main(["bench", "store", "--store", cluster.url, *sys.argv[1:]])
    sys.exit(code)
