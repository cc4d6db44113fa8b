"""What index keys the cold tier holds, as a Bloom filter in each worker's memory.

Most of a window's index keys are held by no archived document: new announcements share no band
with anything archived, and a reprint of an archived one shares its own. Asking PostgreSQL for
each key is a GIN search (three buffer accesses), and at a million archived documents a window's
38,000 searches were 200-280 ms. A Bloom filter over every archived key answers "no document
holds this key" without asking, with no false "no": only the keys it may hold are sent.

Bits: a key (uint64) is mixed with ``fmix64`` (band hashes need not be uniform); its low bits
choose one 64-bit word of the filter and its top twelve bits two bits in that word (a blocked
Bloom filter: one memory access a key, not two, which is most of the cost at tens of millions of
keys). With ``b`` bits a key the share of other keys it passes is about ``(1 - exp(-2 / b)) ** 2``
(a little more, as words fill unevenly): 3-5 % at 10 bits a key, 1-2 % at 20. The size is chosen
when the filter is loaded: at least :data:`BITS_PER_KEY` a key for the keys then archived,
rounded up to a power of two (10-20 bits a key), and capped by the worker's budget
(``archive_key_filter_mb``); once it holds more keys than its size is for, the archive loads a
larger one (:meth:`KeyFilter.crowded`), and past the cap it passes more keys, never fewer.

How a worker keeps it current (:class:`neardup.storage.postgres.archive.ColdArchive`): every
directory row carries the transaction that archived it (``archived_tx``, schema version 3); a read
notes the oldest transaction still running when it ran (``pg_snapshot_xmin``), and the next read
takes every row of a transaction from that one on, so a row committed after a read that could not
see it is read by the next one.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup.storage.base import fmix64

BITS_PER_KEY = 10
MIN_BITS = 1 << 20  # 128 KB: an empty archive's filter


def filter_bits(keys: int, budget_bytes: int) -> int:
    """The size (bits, a power of two) of a filter for ``keys`` archived keys: at most
    ``budget_bytes``, at least :data:`MIN_BITS`."""
    wanted = max(MIN_BITS, keys * BITS_PER_KEY)
    return min(1 << (wanted - 1).bit_length(), budget_bits(budget_bytes))


def budget_bits(budget_bytes: int) -> int:
    """The largest filter (bits, a power of two) ``budget_bytes`` allows: at least :data:`MIN_BITS`,
    at most 2**32."""
    return min(max(MIN_BITS, 1 << max(0, (budget_bytes * 8).bit_length() - 1)), 1 << 32)


class KeyFilter:
    """A blocked Bloom filter of index keys: two bits of one word a key (see the module docstring)."""

    __slots__ = ("added", "bits", "words")

    def __init__(self, bits: int) -> None:
        """``bits``: a power of two, at least 64 and at most 2**32 (2**26 words: the low bits of a
        mixed key choose the word, its top twelve the two bits)."""
        if bits < 64 or bits > 1 << 32 or bits & (bits - 1):
            raise ValueError("a key filter's size is a power of two between 64 and 2**32 bits")
        self.bits = bits
        self.words = np.zeros(bits // 64, dtype=np.uint64)
        self.added = 0

    def _words_and_masks(self, keys: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.uint64]]:
        h = fmix64(keys.astype(np.uint64, copy=False))
        words = (h & np.uint64(self.words.size - 1)).astype(np.intp)
        masks = (np.uint64(1) << (h >> np.uint64(58))) | (np.uint64(1) << ((h >> np.uint64(52)) & np.uint64(63)))
        return words, masks

    def add(self, keys: npt.NDArray[np.uint64]) -> None:
        """File ``keys`` (0, "no key", included: harmless)."""
        if keys.size == 0:
            return
        words, masks = self._words_and_masks(keys.ravel())
        np.bitwise_or.at(self.words, words, masks)
        self.added += int(keys.size)

    def may_hold(self, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
        """Per key (any shape): False where no filed key is this one; True where one may be."""
        words, masks = self._words_and_masks(keys.ravel())
        return np.asarray((self.words[words] & masks) == masks).reshape(keys.shape)

    @classmethod
    def of_words(cls, bits: int, words: npt.NDArray[np.uint64], added: int) -> KeyFilter:
        """A filter of ``bits`` bits from its words (as :attr:`words` holds them), holding ``added`` keys."""
        out = cls(bits)
        if words.shape != out.words.shape:
            raise ValueError(f"{words.size} words for a filter of {bits} bits")
        out.words[:] = words
        out.added = added
        return out

    def folded(self, bits: int) -> KeyFilter:
        """This filter in at most ``bits`` bits (a power of two): the words' halves OR-ed together
        until it fits. A key's word is its mixed hash's low bits, so a half's word ``i`` and the
        other's ``i`` are the words of the same keys in the smaller filter: nothing filed is lost."""
        words = self.words
        while words.size * 64 > max(bits, 64):
            half = words.size // 2
            words = words[:half] | words[half:]
        return self if words is self.words else KeyFilter.of_words(words.size * 64, words, self.added)

    def crowded(self, budget_bytes: int) -> bool:
        """Whether it holds more keys than its size is for and the budget allows a larger one."""
        return self.added > self.bits // BITS_PER_KEY and filter_bits(self.added, budget_bytes) > self.bits


__all__ = ["BITS_PER_KEY", "KeyFilter", "budget_bits", "filter_bits"]
