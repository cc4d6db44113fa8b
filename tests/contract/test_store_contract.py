"""One contract for every fingerprint store backend: memory://, file://, redis://, rediscluster://.

The memory store is the reference; every other backend must be indistinguishable from it through
the FingerprintStore protocol. Redis backends get a fresh key prefix per test, so tests share the
session's servers without seeing each other's keys.
"""

from __future__ import annotations

import asyncio
import hashlib
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from neardup.storage import (
    Claim,
    CommitAnswer,
    DecisionRecord,
    FingerprintRecord,
    FingerprintStore,
    StateValue,
    StoreError,
    WindowQuery,
    doc_ref,
    open_store,
)
from tests.fixtures.redis_servers import start_cluster, start_redis

TTL: dict[str, int | None] = {"news": 3600, "announcement": None, "default": 7200}
# news lives 2 s: long enough for a loaded machine to write and read it back before it expires
# news lives NEWS_TTL seconds: long enough for the steps before the wait on a loaded machine
NEWS_TTL = 6
SHORT_TTL: dict[str, int | None] = {"news": NEWS_TTL, "announcement": None, "default": 3600}

BACKENDS = [
    pytest.param("memory", id="memory"),
    pytest.param("file", id="file"),
    pytest.param("redis", id="redis", marks=pytest.mark.integration),
    pytest.param("rediscluster", id="rediscluster", marks=pytest.mark.integration),
    # the memory store with an empty cold tier on PostgreSQL behind it (storage/postgres/tiered.py)
    pytest.param("tiered", id="tiered", marks=pytest.mark.integration),
]


@dataclass
class Backend:
    kind: str
    url: str
    options: dict[str, Any]
    opened: list[FingerprintStore] = field(default_factory=list)

    @property
    def is_redis(self) -> bool:
        return self.kind in {"redis", "rediscluster"}

    @property
    def shared(self) -> bool:
        """Do two instances on this URL see one state (at the same time)?"""
        return self.is_redis

    @property
    def persistent(self) -> bool:
        return self.kind not in {"memory", "tiered"}

    async def open(self, ttl: Mapping[str, int | None] | None = None) -> Any:
        store = open_store(self.url, ttl=dict(TTL if ttl is None else ttl), **self.options)
        await store.open()
        self.opened.append(store)
        return store

    async def close(self, store: FingerprintStore) -> None:
        self.opened.remove(store)
        await store.close()


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    kind = request.param
    options: dict[str, Any] = {}
    if kind == "memory":
        url = "memory://"
    elif kind == "file":
        url = f"file://{tmp_path / 'store.json'}"
    elif kind == "tiered":
        from neardup.storage.postgres.archive import ColdArchive

        url, options = "memory://", {"archive_url": request.getfixturevalue("postgres_url")}
        cold = ColdArchive(options["archive_url"])
        await cold.open(migrating=True)
        await cold.migrate()
        await cold.close()
    else:
        url = request.getfixturevalue("redis_server" if kind == "redis" else "redis_cluster")
        url = url if isinstance(url, str) else url.url
        # a fresh prefix isolates this test
        options = {"key_prefix": f"t{uuid.uuid4().hex[:12]}", "retry_seconds": 20}
    b = Backend(kind, url, options)
    yield b
    for store in list(b.opened):
        await store.close()


def h(name: str, n: int = 16) -> bytes:
    return hashlib.blake2b(name.encode(), digest_size=n).digest()


def k(name: str) -> int:
    """A stable nonzero uint64 index key."""
    return int.from_bytes(h("key" + name, 8), "big") | 1


def keys_array(rows: list[list[int]]) -> np.ndarray:
    width = max((len(r) for r in rows), default=0)
    out = np.zeros((len(rows), width), dtype=np.uint64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def make_record(
    doc_id: str, keys: tuple[int, ...], content_type: str = "news", published_at: float = 1.7e9
) -> FingerprintRecord:
    return FingerprintRecord(
        doc_id=doc_id,
        content_type=content_type,
        published_at=published_at,
        content_hash=h("c" + doc_id),
        simhash=h("s" + doc_id, 8),
        signature=b"".join(h(f"g{doc_id}{i}", 64) for i in range(8)),  # 512 bytes, like 128 x uint32
        profile=h("p" + doc_id, 64) * 3,
        meta=b"\x01orig" + doc_id.encode(),
        shingles=123,
        length=4567,
        index_keys=keys,
    )


# -- exact claims --------------------------------------------------------------------------------
# -- the old single-purpose operations, spelled with the window interface ------------------------
async def claim(s: Any, items: list[tuple[bytes, str, str]]) -> list[str]:
    return list((await s.commit([Claim(c, i, t) for c, i, t in items], [])).owners)


async def owners(s: Any, hashes: list[bytes]) -> list[str | None]:
    return (await s.lookup(WindowQuery(exact_hashes=hashes))).owners


async def add(s: Any, records: list[FingerprintRecord]) -> None:
    assert await s.commit([], records) == CommitAnswer([])


async def query(s: Any, rows: list[list[int]], ids: list[str]) -> list[set[str]]:
    """Candidate ids per row (refs mapped back through the ids the test used)."""
    by_ref = {doc_ref(i): i for i in ids}
    found = await s.candidates(keys_array(rows))
    assert all(ref in by_ref for refs in found for ref in refs), "a ref of no record the test wrote"
    return [{by_ref[r] for r in refs} for refs in found]


async def fetch(s: Any, ids: list[str]) -> dict[str, FingerprintRecord]:
    got = await s.fetch([doc_ref(i) for i in ids])
    return {rec.doc_id: rec for rec in got.values()}


def lean(rec: FingerprintRecord) -> FingerprintRecord:
    """A record as any backend may return it: the index keys need not come back."""
    from dataclasses import replace

    return replace(rec, index_keys=())


# -- exact claims --------------------------------------------------------------------------------
async def test_claim_first_wins_same_id_idempotent_other_id_gets_owner(backend: Backend) -> None:
    s = await backend.open()
    h1, h2 = h("one"), h("two")
    assert await claim(s, [(h1, "d1", "news")]) == ["d1"]
    assert await claim(s, [(h1, "d1", "news")]) == ["d1"]
    assert await claim(s, [(h1, "d2", "news")]) == ["d1"]
    assert await claim(s, [(h2, "d2", "announcement")]) == ["d2"]
    assert await claim(s, [(h2, "d1", "default")]) == ["d2"]
    assert await claim(s, []) == []


async def test_claim_batch_keeps_order(backend: Backend) -> None:
    s = await backend.open()
    assert await claim(s, [(h("x4"), "early", "news")]) == ["early"]
    items = [(h(f"x{i % 5}"), f"doc{i}", "news") for i in range(15)]
    # the first of each hash in the batch wins (doc0..doc3), x4 was already held by "early"
    assert await claim(s, items) == [f"doc{i % 5}" if i % 5 != 4 else "early" for i in range(15)]


async def test_lookup_reads_owners_without_claiming(backend: Backend) -> None:
    s = await backend.open()
    assert await owners(s, []) == []
    assert await owners(s, [h("l1"), h("l2")]) == [None, None]
    assert await claim(s, [(h("l1"), "a", "news")]) == ["a"]
    assert await owners(s, [h("l1"), h("l2")]) == ["a", None]
    assert await claim(s, [(h("l2"), "b", "news")]) == ["b"]  # the lookup claimed nothing


async def test_concurrent_claims_from_two_clients_have_one_owner(backend: Backend) -> None:
    s1 = await backend.open()
    s2 = await backend.open() if backend.shared else s1
    hashes = [h(f"race{i}") for i in range(200)]

    async def run(store: Any, who: str) -> list[str]:
        out: list[str] = []
        for i in range(0, len(hashes), 20):  # many small batches interleave the two clients
            out += await claim(store, [(x, f"{who}{i + j}", "news") for j, x in enumerate(hashes[i : i + 20])])
        return out

    a, b = await asyncio.gather(run(s1, "a"), run(s2, "b"))
    assert a == b
    assert all(o in {f"a{i}", f"b{i}"} for i, o in enumerate(a))
    assert await claim(s2, [(x, "late", "news") for x in hashes]) == a


async def test_commit_stores_records_only_of_claims_it_won(backend: Backend) -> None:
    s = await backend.open()
    assert await claim(s, [(h("taken"), "first", "news")]) == ["first"]
    won, lost = make_record("winner", (k("w"),)), make_record("loser", (k("w"),))
    got = await s.commit([Claim(h("free"), "winner", "news"), Claim(h("taken"), "loser", "news")], [won, lost],
                         recheck={"winner": won.index_keys, "loser": lost.index_keys})
    assert got.owners == ["winner", "first"]
    assert got.rechecked == {"winner": {}}  # the loser's record was not stored, so not rechecked
    assert set(await fetch(s, ["winner", "loser"])) == {"winner"}
    assert await query(s, [[k("w")]], ["winner", "loser"]) == [{"winner"}]


# -- documents kept forever, as the archive moves them -------------------------------------------
async def test_kept_lists_every_document_kept_forever_with_its_keys_and_decision(backend: Backend) -> None:
    s = await backend.open()
    kept = [make_record(f"ann{i}", (k(f"a{i}"), k("shared")), content_type="announcement") for i in range(7)]
    await add(s, [*kept, *(make_record(f"news{i}", (k("shared"),)) for i in range(3))])
    await s.put_decisions([DecisionRecord("ann1", "unique", None, '{"decided_at": 1.5}', "announcement")])
    seen: dict[str, Any] = {}
    cursor, pages = "", 0
    while True:
        page = await s.kept(cursor, 3)
        seen.update((d.record.doc_id, d) for d in page.documents)  # SCAN may list a key twice
        pages += 1
        cursor = page.cursor
        if not cursor:
            break
    assert set(seen) == {r.doc_id for r in kept} and pages >= 2
    assert all(seen[r.doc_id].record == r for r in kept)  # the index keys come back
    assert seen["ann1"].decision.evidence == '{"decided_at": 1.5}' and seen["ann2"].decision is None


async def test_forget_removes_record_index_entries_claim_and_decision(backend: Backend) -> None:
    s = await backend.open()
    recs = [make_record(f"f{i}", (k(f"f{i}"), k("both")), content_type="announcement") for i in range(3)]
    await s.commit([Claim(r.content_hash, r.doc_id, "announcement") for r in recs], recs)
    await s.put_decisions([DecisionRecord(r.doc_id, "unique", None, "{}", "announcement") for r in recs])
    assert await s.forget(recs[:2]) == 2
    assert await s.forget(recs[:2]) == 0  # idempotent
    ids = [r.doc_id for r in recs]
    assert set(await fetch(s, ids)) == {"f2"}
    assert await query(s, [[k("both")], [k("f0")]], ids) == [{"f2"}, set()]
    assert await owners(s, [r.content_hash for r in recs]) == [None, None, "f2"]
    assert set(await s.get_decisions(ids)) == {"f2"}
    assert [d.record.doc_id for d in (await s.kept()).documents] == ["f2"]


# -- decisions -----------------------------------------------------------------------------------
async def test_decisions_round_trip(backend: Backend) -> None:
    s = await backend.open()
    ds = [
        DecisionRecord("u1", "unique", None, '{"reason": "no candidates"}', "news", h("u1")),
        DecisionRecord("d1", "duplicate", "u1", '{"jaccard": 0.91, "注": "转载"}', "announcement"),
        DecisionRecord("长标识-" + "x" * 300, "duplicate", "u1", "{}"),
    ]
    await s.put_decisions(ds)
    got = await s.get_decisions([d.doc_id for d in ds] + ["missing"])
    assert got == {d.doc_id: d for d in ds}
    assert await s.get_decisions([]) == {}
    changed = DecisionRecord("u1", "duplicate", "d1", "{}", "news")
    await s.put_decisions([changed])
    assert (await s.get_decisions(["u1"]))["u1"] == changed
    # the window lookup reads the same decisions
    answer = await s.lookup(WindowQuery(doc_ids=["u1", "d1", "missing"]))
    assert answer.decisions == {"u1": changed, "d1": ds[1]}


# -- records and the index -----------------------------------------------------------------------
async def test_add_query_fetch_round_trip(backend: Backend) -> None:
    s = await backend.open()
    keys = [k(f"block{i}") for i in range(4)] + [k(f"band{i}") for i in range(20)]
    r1 = make_record("doc-1", tuple(keys[:12]))
    r2 = make_record("doc-2", tuple(keys[8:20]), content_type="announcement", published_at=1.5e9 + 0.25)
    r3 = make_record("doc-3", (keys[0], k("odd"), 1, 2**64 - 1), content_type="other")
    await add(s, [r1, r2, r3])
    await add(s, [])
    ids = ["doc-1", "doc-2", "doc-3"]
    got = await query(s, [[keys[0]], [keys[9]], [keys[15], keys[19]], [k("unknown")], [], [1, 2**64 - 1], keys], ids)
    assert got == [{"doc-1", "doc-3"}, {"doc-1", "doc-2"}, {"doc-2"}, set(), set(), {"doc-3"}, set(ids)]
    assert await s.candidates(keys_array([])) == []
    fetched = await fetch(s, ["doc-2", "doc-1", "nope", "doc-3"])
    assert {i: lean(r) for i, r in fetched.items()} == {r.doc_id: lean(r) for r in (r1, r2, r3)}
    for r in (r1, r2, r3):  # bytes identical, not just equal
        f = fetched[r.doc_id]
        assert (f.signature, f.profile, f.simhash, f.content_hash) == (r.signature, r.profile, r.simhash,
                                                                       r.content_hash)
        assert f.published_at == r.published_at and f.index_keys in ((), r.index_keys)
    assert await s.fetch([]) == {}


async def test_records_keep_their_image_hashes_and_the_image_index_finds_them(backend: Backend) -> None:
    """The image index: a record with images is filed under its pHashes' block keys (beside its
    text keys) and comes back with its hashes, bit for bit; a hash a few bits away finds it under
    the blocks it shares, one that shares no block does not."""
    from neardup.sketch.index import image_keys

    photo, other = 0x8F373714ACFCF4D0, 0xFFFF_0000_FFFF_0000
    text_keys = (k("t1"), k("t2"))
    with_images = replace(make_record("pic", text_keys + tuple(image_keys(np.array([photo, other])).ravel().tolist())),
                          images=(photo, other), image_structure=(37, 255))
    stock = replace(make_record("stock", tuple(image_keys(np.array([photo])).ravel().tolist()),
                                content_type="announcement"), images=(photo,))
    plain = make_record("plain", (k("t1"),))
    await add(s := await backend.open(), [with_images, stock, plain])
    got = await fetch(s, ["pic", "stock", "plain"])
    assert got["pic"].images == (photo, other) and got["stock"].images == (photo,) and got["plain"].images == ()
    assert got["pic"].image_structure == (37, 255) and got["stock"].image_structure == ()
    assert {i: lean(r) for i, r in got.items()} == {r.doc_id: lean(r) for r in (with_images, stock, plain)}
    near = photo ^ 0b1011  # 3 bits, all in the last block: the other three blocks shared
    far = photo ^ 0x0001_0001_0001_0001  # a bit in every block: no block shared
    found = await s.candidates(image_keys(np.array([photo, near, far, other])))
    assert found == [{doc_ref("pic"): 4, doc_ref("stock"): 4}, {doc_ref("pic"): 3, doc_ref("stock"): 3}, {},
                     {doc_ref("pic"): 4}]
    assert await query(s, [list(text_keys)], ["pic", "stock", "plain"]) == [{"pic", "plain"}]
    kept: dict[str, FingerprintRecord] = {}
    cursor = None
    while cursor != "":  # a page of a shared Redis's SCAN may hold none of this test's keys
        page = await s.kept(cursor or "")
        kept.update((d.record.doc_id, d.record) for d in page.documents)
        cursor = page.cursor
    assert kept == {"stock": stock}  # an archived document keeps its images and its image keys
    assert await s.forget([stock]) == 1
    assert await s.candidates(image_keys(np.array([photo]))) == [{doc_ref("pic"): 4}]


async def test_one_lookup_asks_an_image_under_its_views_a_row_each(backend: Backend) -> None:
    """The engine's image rows (``neardup.rules.images.WindowImages``): a stored image is filed
    under the blocks of its whole pHash and of one crop view; a new image is asked under the
    blocks of its whole pHash and of each view, a row each after the window's text rows (zeros
    pad the rows narrower than the text's). The one lookup answers every row with what shares a
    block with it, and the record keeps its whole pHash only."""
    from neardup.media.hashes import FILED_VIEW, ImageHashes
    from neardup.rules.images import WindowImages
    from neardup.sketch.index import image_keys

    photo = 0x8F373714ACFCF4D0
    stored = ImageHashes(photo, views=tuple(0x0101_0101_0101_0101 * (i + 1) for i in range(18)))
    filed = image_keys(np.array(stored.filed, dtype=np.uint64)).ravel().tolist()
    assert len(filed) == 8 and stored.filed[1] == stored.views[FILED_VIEW]
    text = (k("story-1"), k("story-2"), k("story-3"))
    await add(s := await backend.open(), [replace(make_record("story", text + tuple(filed)), images=(photo,))])
    # the new image: its whole pHash shares no block; one pad view is 3 bits from the stored whole
    # (three blocks shared), one crop view is the stored one's filed crop view (four blocks)
    asked = [photo ^ 0x0001_0001_0001_0001, 0x7777_0000_7777_0000, photo ^ 0b1011, stored.views[FILED_VIEW]]
    rows = WindowImages(np.zeros(len(asked), dtype=np.int64), image_keys(np.array(asked, dtype=np.uint64)),
                        np.array([True] + [False] * (len(asked) - 1)))
    index_keys = rows.under(keys_array([list(text), [k("other")]]))
    assert index_keys.shape == (2 + len(asked), 4)
    answer = await s.lookup(WindowQuery(doc_ids=["new", "other"], index_keys=index_keys))
    story = doc_ref("story")
    assert answer.candidates == [{story: 3}, {}, {}, {}, {story: 3}, {story: 4}]
    assert (await fetch(s, ["story"]))["story"].images == (photo,)


async def test_one_lookup_answers_decisions_owners_candidates_and_states(backend: Backend) -> None:
    s = await backend.open()
    await add(s, [make_record("a", (k("x"),)), make_record("b", (k("y"),))])
    await claim(s, [(h("ca"), "a", "news")])
    await s.put_decisions([DecisionRecord("a", "unique", None, "{}", "news")])
    assert await s.write_state("thresholds", StateValue(1, b"{}"))
    answer = await s.lookup(WindowQuery(doc_ids=["a", "z"], exact_hashes=[h("ca"), h("cz")],
                                        index_keys=keys_array([[k("x"), k("y")], [k("none")]]),
                                        state_names=["thresholds", "absent"]))
    assert set(answer.decisions) == {"a"}
    assert answer.owners == ["a", None]
    assert answer.candidates == [{doc_ref("a"): 1, doc_ref("b"): 1}, {}]
    assert answer.states == {"thresholds": StateValue(1, b"{}")}


async def test_candidates_count_the_keys_each_ref_was_found_under(backend: Backend) -> None:
    """A ref filed under several of a row's keys is counted once per key (the engine re-checks the
    most-shared candidates first); a row repeating nothing counts one."""
    s = await backend.open()
    await add(s, [make_record("many", (k("b1"), k("b2"), k("b3"))), make_record("one", (k("b3"),))])
    got = await s.candidates(keys_array([[k("b1"), k("b2"), k("b3")], [k("b3"), 0, 0], [k("none")]]))
    assert got == [{doc_ref("many"): 3, doc_ref("one"): 1}, {doc_ref("many"): 1, doc_ref("one"): 1}, {}]


async def test_a_commit_rechecks_what_other_writers_filed_under_its_keys(backend: Backend) -> None:
    """The race check folded into the commit: a record named in ``recheck`` comes back with the
    candidates under its keys (each counted once per key), among them what another worker filed
    after this one's lookup; a record not named comes back with nothing."""
    s1 = await backend.open()
    s2 = await backend.open() if backend.shared else s1
    assert (await s1.lookup(WindowQuery(index_keys=keys_array([[k("r1"), k("r2")]])))).candidates == [{}]
    await add(s2, [make_record("racer", (k("r1"), k("r2"))), make_record("other", (k("r2"),))])
    mine, quiet = make_record("mine", (k("r1"), k("r2"), k("r3"))), make_record("quiet", (k("q1"),))
    got = await s1.commit([], [mine, quiet], recheck={"mine": mine.index_keys})
    assert got.owners == []
    assert got.rechecked == {"mine": {doc_ref("racer"): 2, doc_ref("other"): 1}}
    assert await query(s1, [[k("r3")]], ["mine"]) == [{"mine"}]  # and it was filed


async def test_a_recheck_looks_only_under_the_keys_it_is_given(backend: Backend) -> None:
    """A record is filed under all its keys but rechecked under those its commit names (the
    keys its lookup asked: a long text files sentence keys it never asks under)."""
    s1 = await backend.open()
    s2 = await backend.open() if backend.shared else s1
    await add(s2, [make_record("racer", (k("r1"), k("r2"))), make_record("other", (k("r2"),))])
    mine = make_record("mine", (k("r1"), k("r2"), k("r3")))
    got = await s1.commit([], [mine], recheck={"mine": (k("r1"), k("r3"))})
    assert got.rechecked == {"mine": {doc_ref("racer"): 1}}
    # filed under the key not rechecked too
    assert await query(s1, [[k("r2")]], ["mine", "racer", "other"]) == [{"mine", "racer", "other"}]


async def test_state_is_a_compare_and_set(backend: Backend) -> None:
    s1 = await backend.open()
    s2 = await backend.open() if backend.shared else s1
    assert not await s1.write_state("t", StateValue(2, b"skips a version"))
    assert await s1.write_state("t", StateValue(1, b"one"))
    assert not await s2.write_state("t", StateValue(1, b"stale"))  # somebody wrote version 1 first
    assert await s2.write_state("t", StateValue(2, b"two \x00\xff"))
    got = await s1.lookup(WindowQuery(state_names=["t"]))
    assert got.states["t"] == StateValue(2, b"two \x00\xff")


async def test_re_add_replaces_record(backend: Backend) -> None:
    s = await backend.open()
    await add(s, [make_record("doc", (k("1"),))])
    newer = make_record("doc", (k("2"),), published_at=1.8e9)
    await add(s, [newer])
    assert lean((await fetch(s, ["doc"]))["doc"]) == lean(newer)
    assert await query(s, [[k("1")], [k("2")]], ["doc"]) == [{"doc"}, {"doc"}]


async def test_long_and_unicode_ids(backend: Backend) -> None:
    s = await backend.open()
    ids = ["短", "https://example.com/" + "新闻/" * 60 + "?id=1", "x" * 74, "y" * 75, "z" * 200, ""]
    await add(s, [make_record(i, (k("shared"), k(i))) for i in ids])
    assert await query(s, [[k("shared")]], ids) == [set(ids)]
    assert set(await fetch(s, ids)) == set(ids)


async def test_claims_decisions_records_expire_per_content_type(backend: Backend) -> None:
    """One wait for every kind of TTL (news: NEWS_TTL s; announcements: kept; others: default)."""
    s = await backend.open(SHORT_TTL)
    assert await claim(s, [(h("n"), "n1", "news"), (h("a"), "a1", "announcement")]) == ["n1", "a1"]
    await s.put_decisions([DecisionRecord("n", "unique", None, "{}", "news"),
                           DecisionRecord("a", "unique", None, "{}", "announcement")])
    shared = k("shared")
    news = make_record("news-1", (shared, k("only-news")), content_type="news")
    ann = make_record("ann-1", (shared, k("only-ann")), content_type="announcement")
    other = make_record("other-1", (shared,), content_type="blog")  # falls back to "default"
    await add(s, [news, ann, other])
    ids = ["news-1", "ann-1", "other-1"]
    assert await query(s, [[shared], [k("only-news")]], ids) == [set(ids), {"news-1"}]
    if backend.is_redis:
        await _check_redis_expiry(s, shared)
    await asyncio.sleep(NEWS_TTL + 1.1)
    assert await claim(s, [(h("n"), "n2", "news"), (h("a"), "a2", "announcement")]) == ["n2", "a1"]
    assert set(await s.get_decisions(["n", "a"])) == {"a"}
    # an index entry may outlive its record until its time bucket expires; fetch never returns it
    got = await query(s, [[shared], [k("only-news")], [k("only-ann")]], ids)
    assert {"ann-1", "other-1"} <= got[0] <= set(ids) and got[1] <= {"news-1"} and got[2] == {"ann-1"}
    assert {i: lean(r) for i, r in (await fetch(s, ids)).items()} == {"ann-1": lean(ann), "other-1": lean(other)}
    assert await s.expire() >= 0


async def _check_redis_expiry(s: Any, index_key: int) -> None:
    """Index entries go to the bucket of their expiry, whose key expires as a whole (kept content:
    the kept bucket, no expiry); records expire by TTL."""
    from neardup.storage.redis.keys import KEPT

    layout, client, now = s.layout, s.client, time.time()
    slot = layout.index_slot(index_key)
    ends = {"news-1": layout.bucket_end(int(now) + NEWS_TTL), "other-1": layout.bucket_end(int(now) + 3600),
            "ann-1": KEPT}
    for doc_id, end in ends.items():
        members = await client.zrange(layout.bucket_key(slot.shard, end), 0, -1)
        assert slot.check + doc_ref(doc_id) in members, doc_id
        ttl = await client.ttl(layout.bucket_key(slot.shard, end))
        if end == KEPT:
            assert ttl == -1
        else:  # the bucket's end plus the margin
            assert end - now - 2 <= ttl <= end + layout.margin - now + 1, (doc_id, ttl)
    assert await client.exists(layout.shard_key(slot.shard)) == 0  # nothing in the unbucketed key
    rec_news, _ = layout.doc_keys("news-1")
    rec_ann, _ = layout.doc_keys("ann-1")
    assert 0 < await client.ttl(rec_news) <= NEWS_TTL
    assert await client.ttl(rec_ann) == -1


async def test_many_documents_in_one_batch(backend: Backend) -> None:
    s = await backend.open()
    recs = [make_record(f"bulk{i}", (*(k(f"b{b}-{i % 7}") for b in range(4)), k(f"u{i}"))) for i in range(300)]
    await add(s, recs)
    ids = [r.doc_id for r in recs]
    got = await query(s, [[k("b0-3")], [k("u42")], [k("b2-6"), k("b3-5")]], ids)
    assert got[0] == {f"bulk{i}" for i in range(300) if i % 7 == 3}
    assert got[1] == {"bulk42"}
    assert got[2] == {f"bulk{i}" for i in range(300) if i % 7 in (5, 6)}
    assert len(await fetch(s, ids)) == 300


async def test_state_survives_close_and_open(backend: Backend) -> None:
    if not backend.persistent:
        pytest.skip("memory:// keeps nothing across instances by design")
    s = await backend.open()
    rec = make_record("kept", (k("kept-key"),), content_type="announcement")
    await add(s, [rec])
    await claim(s, [(h("kept"), "kept", "news")])
    await s.put_decisions([DecisionRecord("kept", "unique", None, "{}", "news")])
    assert await s.write_state("thresholds", StateValue(1, b"v1"))
    await backend.close(s)
    if backend.kind == "file":
        assert Path(backend.url.removeprefix("file://")).exists()
    s2 = await backend.open()
    assert lean((await fetch(s2, ["kept"]))["kept"]) == lean(rec)
    assert await query(s2, [[k("kept-key")]], ["kept"]) == [{"kept"}]
    assert await claim(s2, [(h("kept"), "other", "news")]) == ["kept"]
    assert set(await s2.get_decisions(["kept"])) == {"kept"}
    assert (await s2.lookup(WindowQuery(state_names=["thresholds"]))).states["thresholds"].payload == b"v1"


async def test_stats_are_integers(backend: Backend) -> None:
    s = await backend.open()
    await add(s, [make_record("st", (k("st"),))])
    stats = await s.stats()
    assert stats and all(isinstance(v, int) for v in stats.values())
    if backend.is_redis:
        assert stats["keys"] >= 2 and stats["used_memory"] > 0


# -- Redis only ----------------------------------------------------------------------------------
def _redis_opts() -> dict[str, Any]:
    return {"key_prefix": f"t{uuid.uuid4().hex[:12]}"}


@pytest.mark.integration
async def test_redis_password_is_used_and_never_shown() -> None:
    from neardup.storage.errors import StoreAuthError

    secret = "s3cret-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="neardup-redis-auth-") as tmp:
        server = start_redis(Path(tmp), password=secret)
        try:
            url = f"redis://127.0.0.1:{server.port}"
            good = open_store(url, ttl=TTL, password=secret, **_redis_opts())
            await good.open()
            assert await claim(good, [(h("p"), "p", "news")]) == ["p"]
            await good.close()
            bad = open_store(url, ttl=TTL, password="wrong", retry_seconds=30, **_redis_opts())
            started = time.monotonic()
            with pytest.raises(StoreAuthError) as err:
                await bad.open()
            assert time.monotonic() - started < 5, "an authentication error is not retried"
            assert "wrong" not in str(err.value)
            for form in (f"redis://:{secret}@127.0.0.1:{server.port}", f"redis://127.0.0.1:{server.port}?password={secret}"):
                in_url = open_store(form, ttl=TTL, **_redis_opts())
                assert secret not in in_url.url and secret not in repr(in_url)
                await in_url.open()
                await in_url.close()
        finally:
            server.stop()


@pytest.mark.integration
async def test_redis_unreachable_raises_store_unavailable() -> None:
    from neardup.storage.errors import StoreUnavailableError
    from tests.fixtures.net import free_port

    s = open_store(f"redis://127.0.0.1:{free_port()}", ttl=TTL, retry_seconds=0.5, **_redis_opts())
    with pytest.raises(StoreUnavailableError):
        await s.open()


@pytest.mark.integration
async def test_a_corrupt_record_is_store_corrupt_and_not_retried(redis_server: str) -> None:
    from neardup.storage.errors import StoreCorruptError

    s = open_store(redis_server, ttl=TTL, retry_seconds=30, **_redis_opts())
    await s.open()
    try:
        await s.client.set(s.layout.record_key(doc_ref("bad")), b"\x02garbage")
        started = time.monotonic()
        with pytest.raises(StoreCorruptError):
            await fetch(s, ["bad"])
        assert time.monotonic() - started < 2
    finally:
        await s.close()


@pytest.mark.integration
async def test_memory_comes_back_once_the_ttls_pass() -> None:
    """Index bucket keys expire as a whole: once every news TTL has passed, the keys and the memory
    of a server of its own come back to what the documents kept forever need (nothing written later
    has to sweep them)."""
    ttl = {"news": 2, "announcement": None, "default": 3}
    with tempfile.TemporaryDirectory(prefix="neardup-redis-expiry-") as tmp:
        server = start_redis(Path(tmp), "--hz", "50")  # active expiry samples keys 50 times a second
        s = open_store(f"redis://127.0.0.1:{server.port}", ttl=ttl, index_shards=256, **_redis_opts())
        try:
            await s.open()
            kept = [make_record(f"ann-{i}", (k(f"ann-{i}"), k("shared")), content_type="announcement")
                    for i in range(20)]
            await add(s, kept)
            base_keys, base_memory = await _keys_and_memory(s)
            news = [make_record(f"news-{i}", (*(k(f"n{i}-{b}") for b in range(20)), k("shared")))
                    for i in range(2000)]
            for i in range(0, len(news), 250):
                await add(s, news[i : i + 250])
            grown_keys, grown_memory = await _keys_and_memory(s)
            assert grown_keys > base_keys + 2000 and grown_memory > base_memory + 1_000_000
            deadline = time.monotonic() + 30
            while (await _keys_and_memory(s))[0] > base_keys and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
            keys, memory = await _keys_and_memory(s)
            assert keys == base_keys, (base_keys, grown_keys, keys)
            # allocator slack stays: within 10% of what the news added, far below the grown figure
            assert memory - base_memory < (grown_memory - base_memory) / 10, (base_memory, grown_memory, memory)
            index = [key async for key in s.client.scan_iter(match=s.layout.prefix + b"{i*")]
            assert len(index) == len({s.layout.index_slot(r.index_keys[j]).shard for r in kept for j in range(2)})
            ids = [r.doc_id for r in kept + news]
            assert await query(s, [[k("shared")], [k("ann-3")], [k("n7-1")]], ids) == [
                {r.doc_id for r in kept}, {"ann-3"}, set()]
        finally:
            await s.close()
            server.stop()


async def _keys_and_memory(s: Any) -> tuple[int, int]:
    """DBSIZE and used_memory of a store's server."""
    stats = await s.stats()
    return stats["keys"], stats["used_memory"]


# a script that holds the server for 1.5 s (Redis answers others BUSY past busy-reply-threshold)
_SLOW_SCRIPT = """
local t = redis.call('TIME')
while true do
  local n = redis.call('TIME')
  if (n[1] - t[1]) * 1000000 + (n[2] - t[2]) > 1500000 then return 1 end
end
"""


@pytest.mark.integration
async def test_a_busy_server_is_waited_for_and_the_commit_lands_once() -> None:
    """Another client's long script makes Redis answer BUSY: the window's commit is retried, not failed."""
    import threading

    import redis as redis_sync

    with tempfile.TemporaryDirectory(prefix="neardup-redis-busy-") as tmp:
        server = start_redis(Path(tmp), "--busy-reply-threshold", "100")
        url = f"redis://127.0.0.1:{server.port}"
        s = open_store(url, ttl=TTL, retry_seconds=20, **_redis_opts())
        try:
            await s.open()
            slow = threading.Thread(target=lambda: redis_sync.Redis(port=server.port).eval(_SLOW_SCRIPT, 0))
            slow.start()
            await asyncio.sleep(0.4)  # past the threshold: the server now answers BUSY
            probe = redis_sync.Redis(port=server.port)
            with pytest.raises(redis_sync.ResponseError, match=r"^BUSY"):
                probe.get("x")
            rec = make_record("busy", (k("busy"),))
            assert (await s.commit([Claim(h("busy"), "busy", "news")], [rec])).owners == ["busy"]
            slow.join()
            assert await claim(s, [(h("busy"), "other", "news")]) == ["busy"]
            assert lean((await fetch(s, ["busy"]))["busy"]) == lean(rec)
        finally:
            await s.close()
            server.stop()


@pytest.mark.integration
async def test_a_store_restarted_empty_is_detected(redis_server: str) -> None:
    """The generation markers vanish with the data: the next lookup refuses to decide."""
    from neardup.storage.errors import StoreLostDataError

    s = open_store(redis_server, ttl=TTL, **_redis_opts())
    await s.open()
    other = open_store(redis_server, ttl=TTL, key_prefix=s.layout.prefix.decode()[:-1])
    await other.open()  # a second worker on the same store agrees on the generation
    try:
        await s.lookup(WindowQuery(doc_ids=["x"]))
        await other.lookup(WindowQuery(doc_ids=["x"]))
        await s.client.flushall()
        for store in (s, other):
            with pytest.raises(StoreLostDataError):
                await store.lookup(WindowQuery(doc_ids=["x"]))
    finally:
        await s.close()
        await other.close()


@pytest.mark.integration
async def test_cluster_rides_out_a_master_failover() -> None:
    """Kill a master mid-stream: every call still succeeds (after retries) and data written
    before the failover (replicated) and after it stay readable."""
    with tempfile.TemporaryDirectory(prefix="neardup-failover-") as tmp:
        cluster = start_cluster(Path(tmp))
        try:
            s = open_store(cluster.url, ttl=TTL, retry_seconds=40, **_redis_opts())
            await s.open()
            before = [make_record(f"pre{i}", (k(f"S{i % 4}"), k(f"pre{i}"))) for i in range(200)]
            await add(s, before)
            await claim(s, [(h(f"pre{i}"), f"pre{i}", "news") for i in range(200)])
            cluster.wait_replicated()
            killed = cluster.stop_master()
            live: list[str] = []
            for round_ in range(30):  # about 6 s and more of traffic across the failover
                batch = [make_record(f"r{round_}-{i}", (k(f"S{i % 4}"), k("live"))) for i in range(20)]
                await add(s, batch)
                live += [r.doc_id for r in batch]
                assert await claim(s, [(h(r.doc_id), r.doc_id, "news") for r in batch]) == [r.doc_id for r in batch]
                assert len(await fetch(s, [r.doc_id for r in batch])) == 20
                await asyncio.sleep(0.2)
            cluster.wait_ok()
            assert killed not in cluster.masters()
            assert len(await fetch(s, [r.doc_id for r in before])) == 200
            assert await claim(s, [(h(f"pre{i}"), "late", "news") for i in range(200)]) == [
                f"pre{i}" for i in range(200)]
            (found,) = await query(s, [[k("live")]], live)
            assert len(found) == 600
            await s.close()
        finally:
            cluster.stop()


def test_packed_values_round_trip_edge_cases() -> None:
    """The Redis value formats keep every field exactly, including odd ones the engine may send."""
    from neardup.storage.redis.store import decode_decision, decode_record, encode_decision, encode_record

    odd = FingerprintRecord(
        doc_id="",
        content_type="",
        published_at=-1.5e-300,
        content_hash=b"",
        simhash=b"\x00" * 16,
        signature=bytes(range(256)) * 40,
        profile=b"",
        shingles=-(2**62),
        length=2**62,
    )
    data = encode_record(odd)
    assert decode_record(data) == odd
    for published_at in (0.0, -0.0, 1.7e9, 1796301416.885, 1796301416.8851234, -12.5, 1e300, float("inf")):
        rec = replace(odd, published_at=published_at, content_type="政务")
        back = decode_record(encode_record(rec))
        assert back == rec and repr(back.published_at) == repr(published_at)
    d = DecisionRecord("é", "duplicate", "", "", "", b"\x00\xff")
    assert decode_decision(encode_decision(d)) == d
    with pytest.raises(StoreError):
        decode_record(data[:40])
    with pytest.raises(StoreError):
        decode_decision(b"\x02\x05ab")


EVIDENCE = ('{"reason": "near", "rule": "jaccard", "matched_id": "https://example.com/a/1", "jaccard": 0.9922, '
            '"hamming": 3, "containment": 1.0, "candidates": 1, "thresholds": {"jaccard_high": 0.7, '
            '"jaccard_low": 0.45, "hamming_high": 3, "hamming_low": 12, "containment_high": 0.73, '
            '"short_text_chars": 50}, "threshold_version": 0, "window_id": "host-1:7", "worker_id": "host-1", '
            '"decided_at": 1796301416.885}')


@pytest.mark.parametrize("evidence", [
    EVIDENCE,
    EVIDENCE.replace('"candidates": 1', '"candidates": 1, "critical": {"kind": "polarity", "passage": "不予批准"}'),
    "", "not json", '{"a":1}', "[1, 2.50, -0.0, 1e400]", "x" * 5000,
])
def test_decisions_keep_their_evidence_text_exactly(evidence: str) -> None:
    from neardup.storage.redis.store import decode_decision, encode_decision

    for dup in (None, "https://example.com/a/1", "原件"):
        d = DecisionRecord("https://example.com/b/2", "duplicate" if dup else "unique", dup, evidence, "news",
                           h("t"))
        assert decode_decision(encode_decision(d)) == d


def test_decision_evidence_is_stored_deflated() -> None:
    """The engine's evidence (about 400 bytes of JSON) takes about a fifth of that in a stored decision."""
    from neardup.storage.redis.store import encode_decision

    d = DecisionRecord("https://example.com/b/2", "duplicate", "https://example.com/a/1", EVIDENCE, "news", h("t"))
    assert len(encode_decision(d)) < len(EVIDENCE) // 3


def test_values_of_the_previous_format_are_still_read() -> None:
    """Version 2 values (written before the compact formats) decode to the same records."""
    import struct

    from neardup.storage.redis.store import decode_decision, decode_record

    def blob(b: bytes) -> bytes:
        return bytes([len(b)]) + b

    rec_v2 = (b"\x02" + blob(b"doc-1") + blob(b"news") + struct.pack(">d", 1.7e9) + bytes([246, 1, 20])
              + blob(b"h" * 16) + blob(b"s" * 8) + blob(b"sig") + blob(b"prof") + blob(b"meta"))
    assert decode_record(rec_v2) == FingerprintRecord("doc-1", "news", 1.7e9, b"h" * 16, b"s" * 8, b"sig", b"prof",
                                                      123, 10, (), b"meta")
    dec_v2 = b"\x02" + blob(b"doc-2") + blob(b"duplicate") + b"\x01" + blob(b"doc-1") + blob(b"{}") + blob(b"news") \
        + blob(b"c" * 16)
    assert decode_decision(dec_v2) == DecisionRecord("doc-2", "duplicate", "doc-1", "{}", "news", b"c" * 16)


def test_record_known_answer() -> None:
    """Record format v3 spelled out: a change here breaks every stored record."""
    from neardup.storage.redis.store import decode_record, encode_record

    rec = FingerprintRecord("doc-1", "news", 1.7e9, b"h" * 16, b"s" * 8, b"sig", b"prof", 123, 10, (), b"meta")
    data = encode_record(rec)
    # version 3, id, content type "news" as word 4, published_at with 0 decimals (zigzag 3.4e9 as
    # a varint), shingles 123 and length 10 (zigzag), then the blobs
    assert data == (b"\x03\x05doc-1\x04\x00\x80\xc4\x9f\xd5\x0c\xf6\x01\x14" + b"\x10" + b"h" * 16
                    + b"\x08" + b"s" * 8 + b"\x03sig\x04prof\x04meta")
    assert decode_record(data) == rec


def test_record_with_images_known_answer() -> None:
    """Record format v4 spelled out: v3 and the image hashes between the meta and the index keys;
    a record without images is still written as v3 (test_record_known_answer)."""
    from neardup.storage.redis.store import decode_record, encode_record

    rec = FingerprintRecord("doc-1", "news", 1.7e9, b"h" * 16, b"s" * 8, b"sig", b"prof", 123, 10, (7,), b"meta",
                            (0x8F373714ACFCF4D0, 1))
    data = encode_record(rec, with_keys=True)
    assert data == (b"\x04\x05doc-1\x04\x00\x80\xc4\x9f\xd5\x0c\xf6\x01\x14" + b"\x10" + b"h" * 16
                    + b"\x08" + b"s" * 8 + b"\x03sig\x04prof\x04meta"
                    + b"\x10\x8f\x37\x37\x14\xac\xfc\xf4\xd0" + b"\x00" * 7 + b"\x01" + b"\x08" + b"\x00" * 7 + b"\x07")
    assert decode_record(data) == rec
    assert decode_record(encode_record(rec)) == replace(rec, index_keys=())
    assert encode_record(replace(rec, images=()))[0] == 3
    with pytest.raises(StoreError):
        decode_record(data[:-12])  # cut inside the image hashes: corrupt, not a shorter list


def test_record_with_image_structure_known_answer() -> None:
    """Record format v5 spelled out: v4 and a byte per image (its structure, 255 not known) after
    the image hashes; a record whose images have none known is still written as v4."""
    from neardup.storage.redis.store import decode_record, encode_record

    rec = FingerprintRecord("doc-1", "news", 1.7e9, b"h" * 16, b"s" * 8, b"sig", b"prof", 123, 10, (7,), b"meta",
                            (0x8F373714ACFCF4D0, 1), (3, 255))
    data = encode_record(rec, with_keys=True)
    assert data == (b"\x05\x05doc-1\x04\x00\x80\xc4\x9f\xd5\x0c\xf6\x01\x14" + b"\x10" + b"h" * 16
                    + b"\x08" + b"s" * 8 + b"\x03sig\x04prof\x04meta"
                    + b"\x10\x8f\x37\x37\x14\xac\xfc\xf4\xd0" + b"\x00" * 7 + b"\x01" + b"\x02\x03\xff"
                    + b"\x08" + b"\x00" * 7 + b"\x07")
    assert decode_record(data) == rec
    assert decode_record(encode_record(rec)) == replace(rec, index_keys=())
    assert encode_record(replace(rec, image_structure=()))[0] == 4
    assert encode_record(replace(rec, images=(), image_structure=()))[0] == 3
    with pytest.raises(ValueError, match="one byte per image"):
        encode_record(replace(rec, image_structure=(3,)))
    bad = data.replace(b"\x02\x03\xff", b"\x01\x03")  # a byte for one image of two
    with pytest.raises(StoreError):
        decode_record(bad)


def _make_tls_files(tmp: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for 127.0.0.1 (subjectAltName IP)."""
    import shutil
    import subprocess

    if not shutil.which("openssl"):
        pytest.skip("openssl not on PATH")

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=tmp, check=True, capture_output=True, timeout=60)

    (tmp / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    ca = ["-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=neardup-test-ca"]
    run("req", "-x509", *ca, "-days", "2")
    srv = ["-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"]
    run("req", *srv)
    sign = ["-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt"]
    run("x509", "-req", *sign, "-days", "2", "-extfile", "san.ext")
    return tmp / "ca.crt", tmp / "server.crt", tmp / "server.key"


@pytest.mark.integration
async def test_redis_tls_with_ca_file() -> None:
    from tests.fixtures.net import free_port

    with tempfile.TemporaryDirectory(prefix="neardup-redis-tls-") as tmp:
        ca, cert, key = _make_tls_files(Path(tmp))
        tls_port = free_port()
        server = start_redis(
            Path(tmp) / "data",
            "--tls-port",
            str(tls_port),
            "--tls-cert-file",
            str(cert),
            "--tls-key-file",
            str(key),
            "--tls-ca-cert-file",
            str(ca),
            "--tls-auth-clients",
            "no",
        )
        try:
            for url, opts in (
                (f"rediss://127.0.0.1:{tls_port}", {"tls_ca_file": str(ca)}),
                (f"redis://127.0.0.1:{tls_port}", {"tls": True, "tls_ca_file": str(ca)}),
            ):
                s = open_store(url, ttl=TTL, **opts, **_redis_opts())
                await s.open()
                assert await claim(s, [(h("tls"), "t", "news")]) == ["t"]
                await s.close()
            untrusted = open_store(f"rediss://127.0.0.1:{tls_port}", ttl=TTL, retry_seconds=0.5, **_redis_opts())
            with pytest.raises(StoreError):
                await untrusted.open()
        finally:
            server.stop()

