"""Adaptive thresholds shared by every worker of a store: versioned statistics kept in the store.

What adapts: per content type, ``jaccard_high`` (the Jaccard that decides alone) and
``hamming_high`` (the SimHash radius that decides with half the low Jaccard), from the Jaccard and
Hamming values of the near-duplicates decided so far:

    jaccard_high = clamp(mean_J - 2 sd_J, adaptive_floor, adaptive_ceiling)
    hamming_high = clamp(round(mean_H + 2 sd_H), adaptive_hamming_floor, adaptive_hamming_ceiling)

The statistics start from the configured thresholds as a prior worth ``adaptive_prior_weight``
observations (mean and spread chosen so that the prior alone gives exactly the configured value),
so a stream with few or no duplicates leaves the thresholds where they were configured instead of
dragging them to the floor, and one odd window moves them little.

Sharing: the statistics are one :class:`~neardup.storage.StateValue` named ``thresholds`` in the
store. Every window reads it with its lookup (all workers decide with the same version), and a
worker that has gathered ``adaptive_every`` new observations merges them in and writes the next
version with a compare-and-set; a worker that lost the race re-reads and merges again. The state
survives restarts with the store. Each decision's evidence names the version it used.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace

from neardup.config.settings import ThresholdSettings
from neardup.rules.policy import Thresholds
from neardup.storage import StateValue

STATE_NAME = "thresholds"
PRIOR_SD_JACCARD = 0.1
PRIOR_SD_HAMMING = 1.5


@dataclass(slots=True)
class Moments:
    """Count, mean and sum of squared deviations (Welford; merged with Chan et al.)."""

    n: float = 0.0
    mean: float = 0.0
    m2: float = 0.0

    def add(self, x: float) -> None:
        """Add one observation."""
        self.n += 1
        d = x - self.mean
        self.mean += d / self.n
        self.m2 += d * (x - self.mean)

    def merged(self, other: Moments) -> Moments:
        """The moments of both samples together."""
        n = self.n + other.n
        if n == 0:
            return Moments()
        d = other.mean - self.mean
        return Moments(n, self.mean + d * other.n / n, self.m2 + other.m2 + d * d * self.n * other.n / n)

    @property
    def sd(self) -> float:
        """Standard deviation (population)."""
        return math.sqrt(self.m2 / self.n) if self.n > 0 else 0.0

    def to_list(self) -> list[float]:
        """Compact JSON form."""
        return [self.n, self.mean, self.m2]

    @classmethod
    def from_list(cls, v: list[float]) -> Moments:
        """Inverse of :meth:`to_list`."""
        return cls(float(v[0]), float(v[1]), float(v[2]))


@dataclass(slots=True)
class TypeStats:
    """Near-duplicate statistics of one content type."""

    jaccard: Moments = field(default_factory=Moments)
    hamming: Moments = field(default_factory=Moments)

    def merged(self, other: TypeStats) -> TypeStats:
        """Both samples together."""
        return TypeStats(self.jaccard.merged(other.jaccard), self.hamming.merged(other.hamming))


def _prior(mean: float, sd: float, weight: float) -> Moments:
    return Moments(weight, mean, sd * sd * weight)


@dataclass(slots=True)
class AdaptiveThresholds:
    """The shared state, the observations not yet written, and the thresholds they give."""

    settings: ThresholdSettings
    version: int = 0
    stats: dict[str, TypeStats] = field(default_factory=dict)
    pending: dict[str, TypeStats] = field(default_factory=dict)
    pending_count: int = 0
    _cache: dict[str, Thresholds] = field(default_factory=dict)

    # -- reading the shared state ------------------------------------------------------------
    def load(self, value: StateValue | None) -> None:
        """Adopt the store's state (a no-op when it is the version held already)."""
        if value is None or value.version == self.version:
            return
        data = json.loads(value.payload)
        self.stats = {t: TypeStats(Moments.from_list(s["jaccard"]), Moments.from_list(s["hamming"]))
                      for t, s in data.get("types", {}).items()}
        self.version = value.version
        self._cache.clear()

    def encode(self, stats: dict[str, TypeStats]) -> bytes:
        """The state's payload: JSON of the moments per content type."""
        return json.dumps({"types": {t: {"jaccard": s.jaccard.to_list(), "hamming": s.hamming.to_list()}
                                     for t, s in sorted(stats.items())}}, separators=(",", ":")).encode()

    # -- the thresholds in force -------------------------------------------------------------
    def for_type(self, content_type: str) -> Thresholds:
        """The thresholds for documents of ``content_type`` under the held version."""
        hit = self._cache.get(content_type)
        if hit is None:
            hit = self._cache[content_type] = self._compute(content_type)
        return hit

    def _compute(self, content_type: str) -> Thresholds:
        s = self.settings
        base = replace(Thresholds.from_settings(s), version=self.version)
        observed = self.stats.get(content_type)
        if not s.adaptive or observed is None:
            return base
        w = float(s.adaptive_prior_weight)
        j = _prior(s.jaccard_high + 2 * PRIOR_SD_JACCARD, PRIOR_SD_JACCARD, w).merged(observed.jaccard)
        h = _prior(s.hamming_high - 2 * PRIOR_SD_HAMMING, PRIOR_SD_HAMMING, w).merged(observed.hamming)
        jaccard_high = min(s.adaptive_ceiling, max(s.adaptive_floor, j.mean - 2 * j.sd))
        hamming_high = min(s.adaptive_hamming_ceiling, max(s.adaptive_hamming_floor, round(h.mean + 2 * h.sd)))
        return replace(base, jaccard_high=jaccard_high, hamming_high=min(hamming_high, s.hamming_low))

    # -- learning ----------------------------------------------------------------------------
    def observe(self, content_type: str, jaccard: float, hamming: int) -> None:
        """One near-duplicate decided with these similarities."""
        if not self.settings.adaptive:
            return
        ts = self.pending.setdefault(content_type, TypeStats())
        ts.jaccard.add(jaccard)
        ts.hamming.add(float(hamming))
        self.pending_count += 1

    def due(self) -> bool:
        """Enough new observations to write the next version."""
        return self.settings.adaptive and self.pending_count >= self.settings.adaptive_every

    def next_value(self) -> StateValue:
        """The next version: the held statistics with the pending observations merged in."""
        merged = dict(self.stats)
        for t, ts in self.pending.items():
            merged[t] = merged.get(t, TypeStats()).merged(ts)
        return StateValue(self.version + 1, self.encode(merged))

    def written(self, value: StateValue) -> None:
        """``value`` (from :meth:`next_value`) is now the store's: hold it, clear the pending."""
        self.pending.clear()
        self.pending_count = 0
        self.version = -1  # force the load
        self.load(value)


__all__ = ["STATE_NAME", "AdaptiveThresholds", "Moments", "TypeStats"]
