"""Shared test set-up. Real servers (Redis, Redis Cluster, Kafka) are started by the fixture
modules below, once per session, on free loopback ports, and stopped by PID."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATASETS = Path(os.environ.get("NEARDUP_DATASETS", ROOT.parent / "shared" / "datasets"))

# numba's on-disk cache must be writable and shared between test processes
os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))

pytest_plugins = [
    "tests.fixtures.redis_servers",
    "tests.fixtures.kafka_broker",
]


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    if not (DATASETS / "docs.jsonl").exists():
        pytest.skip(f"development set not found at {DATASETS}")
    return DATASETS
