"""The collector setting of the processes that run the engine for long (neardup.collector)."""

from __future__ import annotations

import gc

from neardup import collector


def test_settle_freezes_what_exists_and_leaves_the_thresholds() -> None:
    """After ``settle`` an object of start-up sits in the permanent generation, which no
    collection walks (gc.get_objects lists the collected generations only); one made after it
    is collected as before, and the thresholds are CPython's."""
    before = gc.get_threshold()
    start_up = {"tables": [1, 2, 3]}
    try:
        collector.settle()
        later = {"record": [4]}
        tracked = {id(o) for o in gc.get_objects()}
        assert id(start_up) not in tracked and id(later) in tracked
        assert gc.get_freeze_count() > 0 and gc.get_threshold() == before
    finally:
        gc.unfreeze()
