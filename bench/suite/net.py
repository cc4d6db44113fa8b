"""The one free-port finder: benchmarks, the demo and the test fixtures start servers on loopback
ports the kernel chooses."""

from __future__ import annotations

import socket

HOST = "127.0.0.1"
CLUSTER_BUS_OFFSET = 10_000  # a Redis Cluster node also listens on its port + 10000 (the cluster bus)


def port_is_free(port: int, host: str = HOST) -> bool:
    """Whether ``port`` can be bound on ``host`` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(cluster: bool = False) -> int:
    """A free loopback port, chosen by the kernel; with ``cluster``, one whose Redis Cluster bus
    port (port + 10000) is free too."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((HOST, 0))
            port = int(s.getsockname()[1])
        if cluster and (port > 65_535 - CLUSTER_BUS_OFFSET or not port_is_free(port + CLUSTER_BUS_OFFSET)):
            continue
        return port
    raise RuntimeError("no free port found")
