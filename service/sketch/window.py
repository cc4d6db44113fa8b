"""A sliding window: buffer documents until a count or an age closes it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class Window(Generic[T]):
    """Documents waiting to be decided together; closed by count or by age."""

    max_count: int
    max_age_seconds: float
    clock: Callable[[], float] = time.monotonic
    items: list[T] = field(default_factory=list)
    opened_at: float | None = None
    closed: int = 0

    def add(self, item: T) -> str | None:
        """Buffer ``item``; returns the close reason ("count") when the window is full."""
        if self.opened_at is None:
            self.opened_at = self.clock()
        self.items.append(item)
        return "count" if len(self.items) >= self.max_count else None

    def expired(self) -> bool:
        """The window is older than ``max_age_seconds``."""
        return self.opened_at is not None and self.clock() - self.opened_at >= self.max_age_seconds

    def time_left(self) -> float:
        """Seconds until the window is due by age."""
        if self.opened_at is None:
            return self.max_age_seconds
        return max(0.0, self.max_age_seconds - (self.clock() - self.opened_at))

    def drain(self) -> list[T]:
        """Take every buffered item; the window starts over."""
        out, self.items, self.opened_at = self.items, [], None
        if out:
            self.closed += 1
        return out

    def __len__(self) -> int:
        """Items buffered."""
        return len(self.items)
