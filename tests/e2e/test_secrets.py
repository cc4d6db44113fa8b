"""A known secret through every path that prints, logs or answers, and a grep of every output for it:
the CLI's summary and one-line errors (with ``-v``: the traceback and the debug log, retry warnings
included) on a Redis URL that fails, and a worker's log, ``/ready``, ``/metrics`` and ``/check``
answers against a real password-protected Redis, in every URL form of the password, while the
store works, while it is down (retries) and with a wrong password.

The settings-file and validation paths are in ``tests/unit/test_settings_safety.py``.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Pipeline, WorkerProcess
from tests.fixtures.redis_servers import RedisProcess, start_redis
from tests.unit.test_cli import SAMPLE, neardup

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]

SECRET = "s3cr3t-" + secrets.token_hex(8)

def url_forms(port: int, password: str) -> dict[str, str]:
    """The password in each place a Redis URL may hold it."""
    return {
        "userinfo": f"redis://default:{password}@127.0.0.1:{port}/0",
        "password-only": f"redis://:{password}@127.0.0.1:{port}/0",
        "query": f"redis://127.0.0.1:{port}/0?password={password}",
    }


FORMS = ["userinfo", "password-only", "query"]


@pytest.fixture
def protected_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A Redis that requires ``SECRET``."""
    server = start_redis(tmp_path / "redis", password=SECRET)
    yield server
    server.stop()


def assert_nowhere(secret: str, *outputs: str | bytes) -> None:
    for out in outputs:
        text = out.decode("utf-8", "replace") if isinstance(out, bytes) else out
        assert secret not in text, text[max(0, text.find(secret) - 300):text.find(secret) + 100]


@pytest.mark.parametrize("form", FORMS)
def test_the_cli_never_shows_a_password_of_a_store_url(form: str, tmp_path: Path) -> None:
    closed = url_forms(1, SECRET)[form]  # nothing listens on port 1: the store fails and is retried
    env = {"NEARDUP_REDIS__RETRY_SECONDS": "1"}
    for args in (["dedup", str(SAMPLE), "-q", "-o", str(tmp_path / "o.jsonl"), "--store", closed],
                 ["-v", "dedup", str(SAMPLE), "-q", "-o", str(tmp_path / "o.jsonl"), "--store", closed]):  # fmt: skip
        res = neardup(*args, env=env)
        assert res.returncode == 1
        assert "127.0.0.1:1" in res.stderr.decode()  # the store is named, its password is not
        assert_nowhere(SECRET, res.stdout, res.stderr)
    res = neardup("dedup", str(SAMPLE), "-q", "-o", str(tmp_path / "o.jsonl"), env={"NEARDUP_STORE_URL": closed,
                                                                                     **env})  # fmt: skip
    assert res.returncode == 1
    assert_nowhere(SECRET, res.stdout, res.stderr)


@pytest.mark.parametrize("form", FORMS)
def test_the_summary_names_the_store_without_its_password(form: str, protected_redis: RedisProcess) -> None:
    url = url_forms(protected_redis.port, SECRET)[form]
    res = neardup("dedup", str(SAMPLE), "--store", url, env={"NEARDUP_REDIS__KEY_PREFIX": f"t{secrets.token_hex(4)}"})
    assert res.returncode == 0, res.stderr.decode()[-2000:].replace(SECRET, "<SECRET>")
    summary = json.loads(res.stderr.decode()[res.stderr.decode().index("{"):])
    assert "***" in summary["store"]
    assert_nowhere(SECRET, res.stdout, res.stderr)


def http_bodies(worker: WorkerProcess) -> list[bytes]:
    """What an unauthenticated client gets from the worker's endpoints."""
    bodies = []
    for method, path, body in (("GET", "/ready", None), ("GET", "/health", None), ("GET", "/metrics", None),
                               ("POST", "/check", b'{"id": "x", "text": "' + "文本".encode() * 40 + b'"}'),
                               ("POST", "/check", b"not json")):  # fmt: skip
        with contextlib.suppress(OSError):
            bodies.append(worker.http(method, path, body)[1])
    return bodies


def wait_until(check: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.3)
    return False


@pytest.mark.parametrize("form", FORMS)
def test_a_worker_never_shows_the_store_password(form: str, protected_redis: RedisProcess, pipeline: Pipeline,
                                                 start_worker: Callable[..., WorkerProcess]) -> None:  # fmt: skip
    url = url_forms(protected_redis.port, SECRET)[form]
    worker = start_worker(f"secret-{form}", store_url=url, NEARDUP_LOG_LEVEL="DEBUG",
                          NEARDUP_CHECK_TOKEN=SECRET + "-token", NEARDUP_RETRY__MAX_DELAY_SECONDS="1",
                          NEARDUP_REDIS__RETRY_SECONDS="1")  # fmt: skip
    worker.wait_ready()
    seen = http_bodies(worker)
    protected_redis.stop()  # the store goes away: a window fails and is retried, /ready says why
    pipeline.broker.produce_sync(pipeline.raw, [(f"k{i}".encode(), line) for i, line in
                                                enumerate(SAMPLE.read_bytes().splitlines()[:20])])  # fmt: skip
    assert wait_until(lambda: worker.http("GET", "/ready")[0] == 503, 90), worker.log_tail()
    time.sleep(3)  # a few retry warnings
    seen += http_bodies(worker)
    worker.stop()
    assert any(b"engine_error" in body or b"degraded" in body for body in seen)
    assert_nowhere(SECRET, worker.log_tail(1_000_000), *seen)


@pytest.mark.parametrize("form", FORMS)
def test_a_wrong_password_is_not_echoed(form: str, protected_redis: RedisProcess,
                                        start_worker: Callable[..., WorkerProcess]) -> None:  # fmt: skip
    wrong = "wrong-" + secrets.token_hex(8)
    worker = start_worker(f"wrong-{form}", store_url=url_forms(protected_redis.port, wrong)[form],
                          NEARDUP_RETRY__STARTUP_DEADLINE_SECONDS="5", NEARDUP_REDIS__RETRY_SECONDS="1")  # fmt: skip
    with contextlib.suppress(subprocess.TimeoutExpired):
        worker.proc.wait(60)
    worker.stop()
    assert worker.proc.returncode not in (0, None)
    assert_nowhere(wrong, worker.log_tail(1_000_000))
    assert_nowhere(SECRET, worker.log_tail(1_000_000))
