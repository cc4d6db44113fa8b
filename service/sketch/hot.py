"""The hot tier: the last documents this process decided, in memory, consulted before the store.

It keeps the sketches (decoded re-check data) of the last ``hot_count`` documents, none older than
``hot_seconds``. Candidates always come from the store's index (the authority on what is live:
TTLs, other workers' documents); the hot tier answers for their records first, so a window's
near-duplicates of recent documents cost no fetch round trip and no decoding. Reprints of one
story arrive close together, which is why a small tier answers most re-checks.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from neardup.sketch.similarity import Sketch


class HotTier:
    """A bounded, time-limited map of recent sketches keyed by document ref."""

    def __init__(self, max_count: int, max_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        """Keep at most ``max_count`` documents for at most ``max_seconds``."""
        self.max_count = max_count
        self.max_seconds = max_seconds
        self._clock = clock
        self._items: OrderedDict[bytes, tuple[Sketch, float]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        """Documents held."""
        return len(self._items)

    def get(self, ref: bytes) -> Sketch | None:
        """The sketch of ``ref`` if it is still hot."""
        item = self._items.get(ref)
        if item is None or self._clock() - item[1] > self.max_seconds:
            self.misses += 1
            return None
        self.hits += 1
        return item[0]

    def add(self, entries: Iterable[tuple[bytes, Sketch]]) -> None:
        """Make these (ref, sketch) the newest; evict by count and age."""
        if self.max_count <= 0:
            return
        now = self._clock()
        for ref, sketch in entries:
            self._items.pop(ref, None)
            self._items[ref] = (sketch, now)
        while self._items:
            _, (_, added) = next(iter(self._items.items()))
            if len(self._items) <= self.max_count and now - added <= self.max_seconds:
                break
            self._items.popitem(last=False)


__all__ = ["HotTier"]
