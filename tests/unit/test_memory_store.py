"""The memory store's index reads: while no entry can have expired, a bucket is read without the
expiry filter; the answers are those of the filter at every clock reading."""

from __future__ import annotations

import numpy as np

from neardup.storage import FingerprintRecord, doc_ref
from neardup.storage.base import TTLPolicy
from neardup.storage.memory import TUPLE_BUCKET, MemoryFingerprintStore


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _record(doc_id: str, content_type: str, keys: tuple[int, ...]) -> FingerprintRecord:
    return FingerprintRecord(doc_id=doc_id, content_type=content_type, published_at=0.0,
                             content_hash=doc_id.encode().ljust(16, b"."), simhash=b"\0" * 8, signature=b"",
                             profile=b"", shingles=1, length=1, index_keys=keys)


def _filtered(store: MemoryFingerprintStore, rows: list[list[int]], now: float) -> list[dict[bytes, int]]:
    """The reference: every bucket read through the expiry filter, each ref with its keys counted."""
    out: list[dict[bytes, int]] = []
    for row in rows:
        found: dict[bytes, int] = {}
        for key in row:
            for ref in store._buckets.get(key, ()):
                if store._records[ref].expires_at > now:
                    found[ref] = found.get(ref, 0) + 1
        out.append(found)
    return out


async def test_candidates_equal_the_filtered_index_as_entries_expire() -> None:
    clock = _Clock()
    store = MemoryFingerprintStore(ttl=TTLPolicy(by_type={"short": 10, "long": 100, "kept": None}), clock=clock)
    rows = [[1, 2], [2, 3], [4], [0, 1]]
    keys = np.array([r + [0] * (2 - len(r)) for r in rows], dtype=np.uint64)
    await store.commit([], [_record("s", "short", (1, 2)), _record("l", "long", (2, 3)), _record("k", "kept", (3, 4))])
    seen = []
    for now, added in ((1000.0, None), (1005.0, None), (1050.0, None), (1200.0, _record("n", "short", (1, 4))),
                       (1205.0, None), (1215.0, None)):
        clock.now = now
        if added is not None:  # an entry expiring sooner than any before it
            await store.commit([], [added])
        got = await store.candidates(keys)
        assert got == _filtered(store, rows, now)
        seen.append([len(s) for s in got])
    assert seen[0] == [2, 3, 1, 1] and seen[2] == [1, 2, 1, 0] and seen[4] == [1, 1, 2, 1] and seen[5] == [0, 1, 1, 0]


async def test_a_subclass_filling_the_index_itself_reads_through_the_filter() -> None:
    class Loaded(MemoryFingerprintStore):
        """Files an entry the way a loading store does, around ``_add``."""

    clock = _Clock()
    store = Loaded(clock=clock)
    old, new = _record("old", "short", (7,)), _record("new", "short", (7,))
    store._file(old, 900.0)
    store._file(new, 2000.0)
    assert await store.candidates(np.array([[7]], dtype=np.uint64)) == [{new.ref: 1}]


async def test_the_sweep_lets_reads_skip_the_filter_again() -> None:
    clock = _Clock()
    store = MemoryFingerprintStore(ttl=TTLPolicy(by_type={"short": 10, "long": 100}), clock=clock)
    await store.commit([], [_record("s", "short", (1,)), _record("l", "long", (1,))])
    clock.now = 1050.0
    assert await store.expire() == 1
    assert store._soonest == 1100.0
    got = await store.candidates(np.array([[1]], dtype=np.uint64))
    assert got == [{doc_ref("l"): 1}] == _filtered(store, [[1]], 1050.0)


async def test_buckets_grow_shrink_and_go_as_records_come_and_go() -> None:
    """A key of one document, then of three, then of one again: candidates are the reference's
    at each step, a forgotten or expired record's entries go with it, and an empty key goes."""
    clock = _Clock()
    store = MemoryFingerprintStore(ttl=TTLPolicy(by_type={"short": 10, "long": 100}), clock=clock)
    a, b, c = _record("a", "long", (5, 6)), _record("b", "short", (5,)), _record("c", "long", (5, 7))
    keys = np.array([[5, 6], [7, 0]], dtype=np.uint64)
    await store.commit([], [a])
    await store.commit([], [a])  # filed again: still one entry a key
    assert await store.candidates(keys) == [{a.ref: 2}, {}] == _filtered(store, [[5, 6], [7]], clock.now)
    await store.commit([], [b, c])
    assert await store.candidates(keys) == [{a.ref: 2, b.ref: 1, c.ref: 1}, {c.ref: 1}]
    assert await store.forget([c]) == 1
    assert await store.candidates(keys) == [{a.ref: 2, b.ref: 1}, {}] == _filtered(store, [[5, 6], [7]], clock.now)
    assert 7 not in store._buckets
    clock.now = 1050.0  # b has expired: read through the filter, then swept
    assert await store.candidates(keys) == [{a.ref: 2}, {}] == _filtered(store, [[5, 6], [7]], clock.now)
    assert await store.expire() == 1
    assert list(store._buckets[5]) == [a.ref] and (await store.stats())["bucket_entries"] == 2
    assert await store.forget([a]) == 1
    assert store._buckets == {} and await store.candidates(keys) == [{}, {}]


async def test_a_key_of_many_documents_files_and_forgets_each_once() -> None:
    """Past ``TUPLE_BUCKET`` refs a key's bucket becomes a set; every ref is counted once however
    often its record is filed, and each one forgotten leaves the others."""
    store = MemoryFingerprintStore(clock=_Clock())
    recs = [_record(f"d{i}", "news", (9, 100 + i)) for i in range(TUPLE_BUCKET + 3)]
    for rec in recs:
        await store.commit([], [rec, recs[0]])
    key = np.array([[9]], dtype=np.uint64)
    assert await store.candidates(key) == [{r.ref: 1 for r in recs}]
    for n, rec in enumerate(recs, start=1):
        assert await store.forget([rec]) == 1
        assert await store.candidates(key) == [{r.ref: 1 for r in recs[n:]}]
    assert store._buckets == {}
