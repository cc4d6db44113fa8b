"""The cyclic garbage collector in a process that runs the engine for long: the batch CLI and a
worker (not a library user's process, whose collector is its own to tune).

CPython's collector walks every tracked object of the generations it collects, and a full
collection walks the whole heap: numba's compiler state and the lexicon's tables make that heap
large from the start, and they live as long as the process. So once the engine is open they move
to the permanent generation, which no collection walks (``gc.freeze``). The thresholds stay
CPython's: the engine makes cyclic garbage, which a higher young threshold would keep longer
(what each costs: docs/measurements.md).
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Collect once, then freeze what is left: the start-up's objects are never walked again."""
    gc.collect()
    gc.freeze()
