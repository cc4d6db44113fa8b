"""The cyclic garbage collector in a process that runs the engine for long: the batch CLI and a
worker (not a library user's process, whose collector is its own to tune).

CPython's collector walks every tracked object of the generations it collects, and a full
collection walks the whole heap: numba's compiler state and the lexicon's tables make that heap
large from the start, and `neardup dedup` of 6,400 documents spent about a tenth of its time
walking it. Those objects live as long as the process. So once the engine is open they move to
the permanent generation, which no collection walks (``gc.freeze``): the whole run 7.09-7.19 s ->
6.67-6.77 s, the same peak memory (docs/measurements.md). A higher young threshold was tried too:
no faster with the freeze, and 65-110 MB more at the peak (the engine's cyclic garbage lived
longer).
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Collect once, then freeze what is left: the start-up's objects are never walked again."""
    gc.collect()
    gc.freeze()
