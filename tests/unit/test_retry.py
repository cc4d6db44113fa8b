"""The one retry policy outside the Redis client (service/retry.py): backoff, deadline, what is retried."""

from __future__ import annotations

import itertools

import pytest

from neardup.config import load_settings
from neardup.errors import ConfigError, StoreCorruptError, StoreUnavailableError
from neardup.retry import Backoff, retry


def test_delays_double_up_to_the_cap_and_come_from_settings() -> None:
    assert list(itertools.islice(Backoff(0.5, 3.0).delays(), 5)) == [0.5, 1.0, 2.0, 3.0, 3.0]
    s = load_settings(retry={"initial_delay_seconds": 0.1, "max_delay_seconds": 0.4, "startup_deadline_seconds": 7})
    b = Backoff.from_settings(s.retry, deadline=s.retry.startup_deadline_seconds)
    assert (b.initial, b.maximum, b.deadline) == (0.1, 0.4, 7.0)
    with pytest.raises(ValueError, match="initial_delay_seconds must not exceed"):
        load_settings(retry={"initial_delay_seconds": 5, "max_delay_seconds": 1})


async def test_transient_errors_are_retried_permanent_ones_raised_at_once() -> None:
    calls: list[int] = []
    waits: list[float] = []

    async def flaky() -> str:
        calls.append(1)
        if len(calls) < 4:
            raise StoreUnavailableError("down")
        return "ok"

    assert await retry(flaky, Backoff(0.0, 0.0), on_retry=lambda exc, d: waits.append(d)) == "ok"
    assert len(calls) == 4 and waits == [0.0, 0.0, 0.0]

    async def corrupt() -> str:
        calls.append(1)
        raise StoreCorruptError("bad record")

    calls.clear()
    with pytest.raises(StoreCorruptError):
        await retry(corrupt, Backoff(0.0, 0.0))
    assert len(calls) == 1


async def test_the_deadline_ends_the_retries_with_the_last_error() -> None:
    calls: list[int] = []

    async def down() -> None:
        calls.append(1)
        raise StoreUnavailableError(f"attempt {len(calls)}")

    # waits 0.05, 0.1, 0.2 fit in 0.5 s; after the 4th attempt the next (0.4) would end past it
    with pytest.raises(StoreUnavailableError, match="attempt 4"):
        await retry(down, Backoff(0.05, 1.0, deadline=0.5))
    assert len(calls) == 4


async def test_retryable_decides() -> None:
    async def bad_config() -> None:
        raise ConfigError("x")

    with pytest.raises(ConfigError):
        await retry(bad_config, Backoff(0.0, 0.0))  # not transient by class


async def test_an_unreachable_redis_says_at_once_that_it_retries_and_for_how_long(
        caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import time

    from neardup.storage.errors import NOTICE_LOGGER
    from neardup.storage.redis.store import RedisFingerprintStore

    store = RedisFingerprintStore("redis://127.0.0.1:1", retry_seconds=1.5, socket_timeout=0.5)
    seen: list[float] = []

    class Stamp(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(time.monotonic())

    stamp = Stamp()
    logging.getLogger(NOTICE_LOGGER).addHandler(stamp)
    started = time.monotonic()
    try:
        with caplog.at_level(logging.WARNING, logger=NOTICE_LOGGER), \
                pytest.raises(StoreUnavailableError, match=r"after retrying for 1\.5 s \(redis\.retry_seconds\)"):
            await store.open()
    finally:
        logging.getLogger(NOTICE_LOGGER).removeHandler(stamp)
    notices = [r.getMessage() for r in caplog.records if r.name == NOTICE_LOGGER]
    assert notices == ["redis://127.0.0.1:1: open failed (ConnectionError); retrying for up to 1.5 s "
                       "(setting redis.retry_seconds, NEARDUP_REDIS__RETRY_SECONDS)"]
    assert seen[0] - started < 0.5 and time.monotonic() - started >= 1.4  # at once, then the wait


def test_batch_commands_wait_briefly_for_redis_and_workers_longer() -> None:
    from neardup.cli import batch_store_settings
    from neardup.config.settings import BATCH_RETRY_SECONDS

    worker = load_settings(store_url="redis://h:1")
    assert worker.redis.retry_seconds == 30.0 and BATCH_RETRY_SECONDS <= 5
    assert batch_store_settings(worker).redis.retry_seconds == BATCH_RETRY_SECONDS
    chosen = load_settings(store_url="redis://h:1", redis={"retry_seconds": 60})
    assert batch_store_settings(chosen).redis.retry_seconds == 60  # set by the user: kept
