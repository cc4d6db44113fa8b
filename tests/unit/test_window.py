from __future__ import annotations

from neardup.sketch.window import Window


def test_window_closes_by_count_or_age() -> None:
    now = [0.0]
    w: Window[int] = Window(max_count=3, max_age_seconds=1.0, clock=lambda: now[0])
    assert w.add(1) is None and w.add(2) is None
    assert w.add(3) == "count"
    assert w.drain() == [1, 2, 3] and len(w) == 0 and w.closed == 1
    w.add(4)
    now[0] = 0.5
    assert not w.expired() and abs(w.time_left() - 0.5) < 1e-9
    now[0] = 1.2
    assert w.expired()
    assert w.drain() == [4]
    assert not w.expired() and w.drain() == [] and w.closed == 2  # an empty drain is not a window
