"""The hybrid rule and its adaptive threshold.

A candidate pair is similar when any of these holds (first match names the rule):

1. ``jaccard``:     J >= jaccard_high
2. ``simhash``:     Hamming <= hamming_high  and  J >= jaccard_low / 2
3. ``hybrid``:      J >= jaccard_low  and  Hamming <= hamming_low
4. ``containment``: C >= containment_high  and  J >= jaccard_low / 2

J is the MinHash Jaccard estimate, Hamming the SimHash distance scaled to 64 bits, C the
containment of the smaller shingle set in the larger, estimated from J and both set sizes:
C = J (|A| + |B|) / ((1 + J) min(|A|, |B|)). Containment catches truncations and excerpts, the
SimHash rules catch edits that move many shingles but few weighted words (synonyms). SimHash and
containment never decide alone: each needs half the low Jaccard, so a shared template cannot
make two different documents duplicates.

Short texts: when either text is shorter than ``short_text_chars`` normalised characters, only
an exact content match counts (a 40-character notice has too few shingles for an estimate).

A similar pair is a duplicate unless the critical-difference check (service/differences.py)
finds a reversed polarity or a changed figure in a clause both texts share.

Adaptive threshold: every ``adaptive_every`` decisions, the Jaccard values of the duplicates
confirmed since the last update give mean m and deviation s; jaccard_high becomes
clamp(m - 2 s, floor, ceiling). Switch off with ``thresholds.adaptive = false``.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

from neardup.config.settings import ThresholdSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Similarity:
    jaccard: float
    hamming: int  # on the 64-bit scale
    containment: float


def containment(jaccard: float, size_a: int, size_b: int) -> float:
    small = min(size_a, size_b)
    if small <= 0 or jaccard <= 0.0:
        return 0.0
    return min(1.0, jaccard * (size_a + size_b) / ((1.0 + jaccard) * small))


@dataclass(slots=True)
class HybridPolicy:
    settings: ThresholdSettings
    jaccard_high: float = field(init=False)
    _window: list[float] = field(default_factory=list)
    _since_update: int = 0
    updates: int = 0

    def __post_init__(self) -> None:
        self.jaccard_high = self.settings.jaccard_high

    def rule(self, sim: Similarity) -> str | None:
        t = self.settings
        if sim.jaccard >= self.jaccard_high:
            return "jaccard"
        if sim.hamming <= t.hamming_high and sim.jaccard >= t.jaccard_low / 2:
            return "simhash"
        if sim.jaccard >= t.jaccard_low and sim.hamming <= t.hamming_low:
            return "hybrid"
        if sim.containment >= t.containment_high and sim.jaccard >= t.jaccard_low / 2:
            return "containment"
        return None

    def too_short(self, length_a: int, length_b: int) -> bool:
        return min(length_a, length_b) < self.settings.short_text_chars

    def thresholds(self) -> dict[str, float | int]:
        t = self.settings
        return {
            "jaccard_high": round(self.jaccard_high, 4),
            "jaccard_low": t.jaccard_low,
            "hamming_high": t.hamming_high,
            "hamming_low": t.hamming_low,
            "containment_high": t.containment_high,
            "short_text_chars": t.short_text_chars,
        }

    def observe(self, decided: int, duplicate_jaccards: list[float]) -> bool:
        """Feed one window's outcome; returns True when the threshold moved."""
        if not self.settings.adaptive:
            return False
        self._window.extend(duplicate_jaccards)
        self._since_update += decided
        if self._since_update < self.settings.adaptive_every:
            return False
        self._since_update = 0
        values, self._window = self._window, []
        if len(values) < 2:
            return False
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
        new = min(self.settings.adaptive_ceiling, max(self.settings.adaptive_floor, mean - 2.0 * std))
        if abs(new - self.jaccard_high) < 1e-9:
            return False
        log.info("adaptive threshold: jaccard_high %.4f -> %.4f (mean %.4f, std %.4f, n=%d)",
                 self.jaccard_high, new, mean, std, len(values))
        self.jaccard_high = new
        self.updates += 1
        return True
