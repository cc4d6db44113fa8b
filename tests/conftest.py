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


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (``make test`` runs two processes), the controlling process compiles the
    kernels and fetches the Kafka jars once, before the workers start: they then only load them."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        from tests.fixtures.kafka_broker import choose_broker, ensure_kafka_libs

        warm_kernels()
        if choose_broker()[0] == "kafka":
            ensure_kafka_libs()


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels() -> None:
    """Compile every Numba kernel into the shared on-disk cache once, before any test starts a
    worker or a CLI process, as the Docker image does at build time (Dockerfile: the warm-up
    documents). Without it the first worker of a fresh clone spends its first window compiling,
    and a latency alert fires on healthy traffic."""
    warm_kernels()


def warm_kernels() -> None:
    """Decide three documents (Chinese and English, a reversal): every kernel compiles or loads."""
    from neardup import Deduplicator

    with Deduplicator() as dedup:
        decided = list(dedup.decide_many([
            {"id": "warm-1", "text": "国家统计局今天发布了十月份国民经济运行数据，"
                                     "规模以上工业增加值同比增长百分之四点六，社会消费品零售总额同比增长。不予批准。"},
            {"id": "warm-2", "text": "国家统计局今天公布了十月份国民经济运行数据，"
                                     "规模以上工业增加值同比增长百分之四点六，社会消费品零售总额同比增长。给予批准。"},
            {"id": "warm-3", "text": "The statistics bureau published the October figures today: industrial output "
                                     "grew 4.6 percent year on year and retail sales rose, it was not approved."},
        ]))
    assert len(decided) == 3
