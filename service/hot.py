"""The hot tier: the last documents this process decided, in memory, consulted before the store.

It keeps the sketches (decoded re-check data) and the index keys of the last ``hot_count``
documents, none older than ``hot_seconds``. A window's candidates are the union of what the hot
tier and the store file under its keys; records of hot candidates are not fetched from the store
and not decoded again. The store stays the authority: the hot tier only saves round trips, so a
document evicted from it is still found through the store.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt

from neardup.similarity import Sketch


class HotTier:
    """A bounded, time-limited index of recent sketches keyed by document ref."""

    def __init__(self, max_count: int, max_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        """Keep at most ``max_count`` documents for at most ``max_seconds``."""
        self.max_count = max_count
        self.max_seconds = max_seconds
        self._clock = clock
        self._items: OrderedDict[bytes, tuple[Sketch, tuple[int, ...], float]] = OrderedDict()
        self._index: dict[int, set[bytes]] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, ref: object) -> bool:
        return ref in self._items

    def get(self, ref: bytes) -> Sketch | None:
        """The sketch of ``ref`` if it is still hot."""
        item = self._items.get(ref)
        return item[0] if item is not None else None

    def add(self, entries: Iterable[tuple[bytes, Sketch, tuple[int, ...]]]) -> None:
        """Make these (ref, sketch, index keys) the newest; evict by count and age."""
        if self.max_count <= 0:
            return
        now = self._clock()
        for ref, sketch, keys in entries:
            if ref in self._items:
                self._drop(ref)
            self._items[ref] = (sketch, keys, now)
            for k in keys:
                if k:
                    self._index.setdefault(k, set()).add(ref)
        self.evict(now)

    def evict(self, now: float | None = None) -> None:
        """Drop the oldest entries beyond the count or the age limit."""
        now = self._clock() if now is None else now
        while self._items:
            ref, (_, _, added) = next(iter(self._items.items()))
            if len(self._items) <= self.max_count and now - added <= self.max_seconds:
                break
            self._drop(ref)

    def _drop(self, ref: bytes) -> None:
        _, keys, _ = self._items.pop(ref)
        for k in keys:
            bucket = self._index.get(k)
            if bucket is not None:
                bucket.discard(ref)
                if not bucket:
                    del self._index[k]

    def candidates(self, index_keys: npt.NDArray[np.uint64]) -> list[set[bytes]]:
        """Refs filed under any key of each row."""
        self.evict()
        index = self._index
        out: list[set[bytes]] = []
        for row in index_keys.tolist():
            found: set[bytes] = set()
            for k in row:
                if k:
                    hit = index.get(k)
                    if hit:
                        found |= hit
            out.append(found)
        return out


__all__ = ["HotTier"]
