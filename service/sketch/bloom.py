"""The worker's Bloom filter of content hashes seen, renewed in generations.

A hash this worker has not seen skips the store's exact-owner read (the claim at commit decides
exact copies anyway, so a forgotten hash costs a read, never a decision). One filter of fixed
capacity would fill up after that many documents and answer "maybe" to everything: two
generations of ``capacity`` each keep the last ``capacity`` to ``2 x capacity`` hashes at the
configured false-positive rate, the older generation dropped when the newer one is full.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from rbloom import Bloom

log = logging.getLogger(__name__)


def _bloom_hash(item: bytes) -> int:
    # rbloom needs a stable hash: the first 16 bytes of the content hash as a signed int128
    return int.from_bytes(item[:16], "big", signed=True)


class RotatingBloom:
    """Content hashes seen, in two generations of ``capacity`` hashes each."""

    def __init__(self, capacity: int, error_rate: float = 0.01) -> None:
        """An empty filter whose generations hold ``capacity`` hashes at ``error_rate``."""
        self.capacity = capacity
        self.error_rate = error_rate
        self._current = self._new()
        self._previous: Bloom | None = None
        self._count = 0  # hashes added to the current generation
        self.rotations = 0

    def _new(self) -> Bloom:
        return Bloom(self.capacity, self.error_rate, hash_func=_bloom_hash)

    def __contains__(self, content_hash: bytes) -> bool:
        """Whether ``content_hash`` may have been seen (in either generation)."""
        return content_hash in self._current or (self._previous is not None and content_hash in self._previous)

    def add_all(self, content_hashes: Iterable[bytes]) -> None:
        """Remember ``content_hashes``; a full generation becomes the previous one."""
        for h in content_hashes:
            if self._count >= self.capacity:
                self._previous, self._current, self._count = self._current, self._new(), 0
                self.rotations += 1
                log.info("Bloom filter: generation %d started, the hashes of generation %d forgotten",
                         self.rotations + 1, self.rotations - 1)
            self._current.add(h)
            self._count += 1

    @property
    def fill(self) -> float:
        """How full the current generation is (0 to 1)."""
        return self._count / self.capacity
