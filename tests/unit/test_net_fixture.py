"""tests/fixtures/net.py: the one free-port helper of the tests, and that no test writes its own."""

from __future__ import annotations

import re
import socket
from pathlib import Path

from tests.fixtures.net import CLUSTER_BUS_OFFSET, free_port, port_is_free

ROOT = Path(__file__).resolve().parents[2]


def test_free_port_gives_a_bindable_port_and_a_free_cluster_bus() -> None:
    port = free_port()
    assert port_is_free(port)
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        assert not port_is_free(port)
    node = free_port(cluster=True)
    assert node + CLUSTER_BUS_OFFSET <= 65_535 and port_is_free(node + CLUSTER_BUS_OFFSET)


def test_no_test_finds_a_free_port_its_own_way() -> None:
    own = re.compile(r"def \w*free_port|\.bind\(\([^)]*, 0\)\)")
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "tests").rglob("*.py"))
             if path != ROOT / "tests" / "fixtures" / "net.py" and path != Path(__file__).resolve()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if own.search(line)]
    assert not found, f"use tests.fixtures.net.free_port: {found}"
