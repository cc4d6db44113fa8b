"""Shared test set-up. Real servers (Redis, Redis Cluster, Kafka) are started by the fixture
modules below, once per session, on free loopback ports, and stopped by PID."""

from __future__ import annotations

import concurrent.futures
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from neardup.kernels.cache import kernel_cache_dir

ROOT = Path(__file__).resolve().parent.parent
DATASETS = Path(os.environ.get("NEARDUP_DATASETS", ROOT.parent / "shared" / "datasets"))

# One compile cache for the test processes and every CLI or worker they start: the user's, as for
# the CLI and the library (service/kernels/cache.py). Pinned here, so a test that points
# NEARDUP_CACHE_DIR or XDG_CACHE_HOME elsewhere does not make its subprocesses compile again.
os.environ["NUMBA_CACHE_DIR"] = str(kernel_cache_dir())

# CI draws the same examples on every run, so that a run's result is the commit's and a failure
# there reproduces; a run elsewhere draws new ones, which is how the property tests find bugs
hypothesis_settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")

pytest_plugins = [
    "tests.fixtures.redis_servers",
    "tests.fixtures.kafka_broker",
    "tests.fixtures.postgres",
]


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    if not (DATASETS / "docs.jsonl").exists():
        pytest.skip(f"development set not found at {DATASETS}")
    return DATASETS


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (``make test`` runs two processes), the controlling process compiles the
    kernels and fetches the Kafka jars once, before the workers start: they then only load them.
    The jars are fetched (by mvn, a process of its own) while the kernels compile on this one."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        from tests.fixtures.kafka_broker import choose_broker, ensure_kafka_libs

        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            jars = pool.submit(ensure_kafka_libs) if choose_broker()[0] == "kafka" else None
            warm_kernels()
            if jars is not None:
                jars.result()


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels() -> None:
    """Compile every Numba kernel into the shared on-disk cache once, before any test starts a
    worker or a CLI process, as the Docker image does at build time (``neardup warmup``). Without
    it the first worker of a fresh clone spends its first window compiling, and a latency alert
    fires on healthy traffic."""
    warm_kernels()


@pytest.fixture(autouse=True)
def sigpipe_stays_ignored() -> Iterator[None]:
    """Python ignores SIGPIPE; a test that lets code reset it (a script imported in process) would
    make the next write to a pipe whose reader was killed end the whole pytest process."""
    before = signal.getsignal(signal.SIGPIPE)
    yield
    assert signal.getsignal(signal.SIGPIPE) == before, "the test left SIGPIPE changed: restore it"


def warm_kernels() -> None:
    """``neardup warmup``: every kernel compiles or loads (nothing to do with the JIT off: make test-fast)."""
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        return
    from neardup.cli.warmup import warm_up
    from neardup.config import load_settings

    report = warm_up(load_settings())
    assert report.compiled + report.loaded > 0, report
