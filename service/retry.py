"""The one retry policy outside the Redis client: capped exponential backoff, limits from settings.

``retry(call, backoff)`` awaits ``call()`` until it succeeds, retrying the errors ``retryable``
accepts (by default :func:`neardup.errors.is_transient`: a check on the error's class), with an
optional deadline. Redis commands have their own retries inside the store (``redis.retry_seconds``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from neardup.config.settings import RetrySettings
from neardup.errors import is_transient

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delays that double from ``initial`` to ``maximum`` seconds; ``deadline``: give up after so many seconds."""

    initial: float = 0.2
    maximum: float = 10.0
    deadline: float | None = None

    @classmethod
    def from_settings(cls, retry: RetrySettings, *, deadline: float | None = None) -> Backoff:
        """The policy of ``settings.retry``, with a deadline where the caller wants one."""
        return cls(retry.initial_delay_seconds, retry.max_delay_seconds, deadline)

    def delays(self) -> Iterator[float]:
        """The waits before the first, second, ... retry (endless)."""
        delay = self.initial
        while True:
            yield delay
            delay = min(delay * 2, self.maximum)


async def retry(
    call: Callable[[], Awaitable[T]],
    backoff: Backoff,
    *,
    retryable: Callable[[Exception], bool] = is_transient,
    on_retry: Callable[[Exception, float], None] | None = None,
) -> T:
    """``await call()`` until it returns; retry what ``retryable`` accepts, re-raise anything else.

    ``on_retry(exc, delay)`` runs before each wait. With ``backoff.deadline``, the last error is
    raised once the next wait would end past the deadline.
    """
    started = time.monotonic()
    delays = backoff.delays()
    while True:
        try:
            return await call()
        except Exception as exc:
            if not retryable(exc):
                raise
            delay = next(delays)
            if backoff.deadline is not None and time.monotonic() - started + delay > backoff.deadline:
                raise
            if on_retry is not None:
                on_retry(exc, delay)
            await asyncio.sleep(delay)
