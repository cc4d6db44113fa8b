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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from neardup.storage import DecisionRecord, FingerprintRecord, FingerprintStore, StoreError, open_store
from tests.fixtures.redis_servers import start_cluster, start_redis

TTL: dict[str, int | None] = {"news": 3600, "announcement": None, "default": 7200}
SHORT_TTL: dict[str, int | None] = {"news": 1, "announcement": None, "default": 3600}

BACKENDS = [
    pytest.param("memory", id="memory"),
    pytest.param("file", id="file"),
    pytest.param("redis", id="redis", marks=pytest.mark.integration),
    pytest.param("rediscluster", id="rediscluster", marks=pytest.mark.integration),
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
        return self.kind != "memory"

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
    else:
        url = request.getfixturevalue("redis_server" if kind == "redis" else "redis_cluster")
        url = url if isinstance(url, str) else url.url
        # a fresh prefix isolates this test; 1 s buckets let TTL tests run in seconds
        options = {"key_prefix": f"t{uuid.uuid4().hex[:12]}", "time_bucket_seconds": 1, "retry_seconds": 20}
    b = Backend(kind, url, options)
    yield b
    for store in list(b.opened):
        await store.close()


def h(name: str, n: int = 16) -> bytes:
    return hashlib.blake2b(name.encode(), digest_size=n).digest()


def make_record(
    doc_id: str, keys: tuple[bytes, ...], content_type: str = "news", published_at: float = 1.7e9
) -> FingerprintRecord:
    return FingerprintRecord(
        doc_id=doc_id,
        content_type=content_type,
        published_at=published_at,
        content_hash=h("c" + doc_id),
        simhash=h("s" + doc_id, 8),
        signature=b"".join(h(f"g{doc_id}{i}", 64) for i in range(8)),  # 512 bytes, like 128 x uint32
        profile=h("p" + doc_id, 64) * 3,
        shingles=123,
        length=4567,
        index_keys=keys,
    )


# -- exact claims --------------------------------------------------------------------------------
async def test_claim_first_wins_same_id_idempotent_other_id_gets_owner(backend: Backend) -> None:
    s = await backend.open()
    h1, h2 = h("one"), h("two")
    assert await s.claim_exact([(h1, "d1", "news")]) == ["d1"]
    assert await s.claim_exact([(h1, "d1", "news")]) == ["d1"]
    assert await s.claim_exact([(h1, "d2", "news")]) == ["d1"]
    assert await s.claim_exact([(h2, "d2", "announcement")]) == ["d2"]
    assert await s.claim_exact([(h2, "d1", "default")]) == ["d2"]
    assert await s.claim_exact([]) == []


async def test_claim_batch_keeps_order(backend: Backend) -> None:
    s = await backend.open()
    assert await s.claim_exact([(h("x4"), "early", "news")]) == ["early"]
    items = [(h(f"x{i % 5}"), f"doc{i}", "news") for i in range(15)]
    owners = await s.claim_exact(items)
    # the first of each hash in the batch wins (doc0..doc3), x4 was already held by "early"
    assert owners == [f"doc{i % 5}" if i % 5 != 4 else "early" for i in range(15)]


async def test_claims_expire_per_content_type(backend: Backend) -> None:
    s = await backend.open(SHORT_TTL)
    assert await s.claim_exact([(h("n"), "n1", "news"), (h("a"), "a1", "announcement")]) == ["n1", "a1"]
    await asyncio.sleep(2.1)
    assert await s.claim_exact([(h("n"), "n2", "news"), (h("a"), "a2", "announcement")]) == ["n2", "a1"]


async def test_release_exact_drops_only_own_claims(backend: Backend) -> None:
    s = await backend.open()
    assert await s.claim_exact([(h("r1"), "a", "news"), (h("r2"), "b", "news")]) == ["a", "b"]
    await s.release_exact([(h("r1"), "a"), (h("r2"), "not-b"), (h("never"), "a")])
    assert await s.claim_exact([(h("r1"), "c", "news"), (h("r2"), "c", "news")]) == ["c", "b"]
    await s.release_exact([])


async def test_lookup_exact_reads_without_claiming(backend: Backend) -> None:
    s = await backend.open()
    assert await s.lookup_exact([]) == []
    assert await s.lookup_exact([h("l1"), h("l2")]) == [None, None]
    assert await s.claim_exact([(h("l1"), "a", "news")]) == ["a"]
    assert await s.lookup_exact([h("l1"), h("l2")]) == ["a", None]
    assert await s.claim_exact([(h("l2"), "b", "news")]) == ["b"]  # the lookup claimed nothing


async def test_concurrent_claims_from_two_clients_have_one_owner(backend: Backend) -> None:
    s1 = await backend.open()
    s2 = await backend.open() if backend.shared else s1
    hashes = [h(f"race{i}") for i in range(200)]

    async def claim(store: Any, who: str) -> list[str]:
        out: list[str] = []
        for i in range(0, len(hashes), 20):  # many small batches interleave the two clients
            out += await store.claim_exact([(x, f"{who}{i + j}", "news") for j, x in enumerate(hashes[i : i + 20])])
        return out

    a, b = await asyncio.gather(claim(s1, "a"), claim(s2, "b"))
    assert a == b
    assert all(o in {f"a{i}", f"b{i}"} for i, o in enumerate(a))
    again = await s2.claim_exact([(x, "late", "news") for x in hashes])
    assert again == a


# -- decisions -----------------------------------------------------------------------------------
async def test_decisions_round_trip(backend: Backend) -> None:
    s = await backend.open()
    ds = [
        DecisionRecord("u1", "unique", None, '{"reason": "no candidates"}', "news"),
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


async def test_decisions_expire_per_content_type(backend: Backend) -> None:
    s = await backend.open(SHORT_TTL)
    await s.put_decisions(
        [
            DecisionRecord("n", "unique", None, "{}", "news"),
            DecisionRecord("a", "unique", None, "{}", "announcement"),
        ]
    )
    await asyncio.sleep(2.1)
    assert set(await s.get_decisions(["n", "a"])) == {"a"}


# -- records and the index -----------------------------------------------------------------------
async def test_add_query_fetch_round_trip(backend: Backend) -> None:
    s = await backend.open()
    k = [b"S\x00" + bytes([i, 7]) for i in range(4)] + [b"M" + bytes([i]) + h(f"band{i}", 8) for i in range(20)]
    r1 = make_record("doc-1", tuple(k[:12]))
    r2 = make_record("doc-2", tuple(k[8:20]), content_type="announcement", published_at=1.5e9 + 0.25)
    r3 = make_record("doc-3", (k[0], b"\x00", b"{}}{", b""), content_type="other")
    await s.add([r1, r2, r3])
    await s.add([])
    got = await s.query([[k[0]], [k[9]], [k[15], k[19]], [b"unknown"], [], [b"{}}{", b""], k])
    assert got == [
        {"doc-1", "doc-3"},
        {"doc-1", "doc-2"},
        {"doc-2"},
        set(),
        set(),
        {"doc-3"},
        {"doc-1", "doc-2", "doc-3"},
    ]
    assert await s.query([]) == []
    fetched = await s.fetch(["doc-2", "doc-1", "nope", "doc-3"])
    assert fetched == {"doc-1": r1, "doc-2": r2, "doc-3": r3}
    for r in (r1, r2, r3):  # bytes identical, not just equal
        f = fetched[r.doc_id]
        assert (f.signature, f.profile, f.simhash, f.content_hash) == (
            r.signature,
            r.profile,
            r.simhash,
            r.content_hash,
        )
        assert f.index_keys == r.index_keys and f.published_at == r.published_at
    assert await s.fetch([]) == {}


async def test_re_add_replaces_record(backend: Backend) -> None:
    s = await backend.open()
    await s.add([make_record("doc", (b"k1",))])
    newer = make_record("doc", (b"k2",), published_at=1.8e9)
    await s.add([newer])
    assert (await s.fetch(["doc"]))["doc"] == newer
    assert await s.query([[b"k1"], [b"k2"]]) == [{"doc"}, {"doc"}]


async def test_long_and_unicode_ids(backend: Backend) -> None:
    s = await backend.open()
    ids = ["短", "https://example.com/" + "新闻/" * 60 + "?id=1", "x" * 74, "y" * 75, "z" * 200]
    await s.add([make_record(i, (b"shared", i.encode()[:10])) for i in ids])
    assert await s.query([[b"shared"]]) == [set(ids)]
    assert set(await s.fetch(ids)) == set(ids)


async def test_query_excludes_expired_and_ttl_per_content_type(backend: Backend) -> None:
    s = await backend.open(SHORT_TTL)
    shared = b"M\x03" + h("shared", 8)
    news = make_record("news-1", (shared, b"only-news"), content_type="news")
    ann = make_record("ann-1", (shared, b"only-ann"), content_type="announcement")
    other = make_record("other-1", (shared,), content_type="blog")  # falls back to "default"
    await s.add([news, ann, other])
    assert await s.query([[shared], [b"only-news"]]) == [{"news-1", "ann-1", "other-1"}, {"news-1"}]
    if backend.is_redis:
        await _check_redis_expiry(s, shared)
    await asyncio.sleep(2.1)
    assert await s.query([[shared], [b"only-news"], [b"only-ann"]]) == [
        {"ann-1", "other-1"},
        set(),
        {"ann-1"},
    ]
    assert await s.fetch(["news-1", "ann-1", "other-1"]) == {"ann-1": ann, "other-1": other}
    assert await s.expire() >= 0


async def _check_redis_expiry(s: Any, index_key: bytes) -> None:
    """Bucket keys of a TTL class carry an expiry of about bucket end + ttl; forever ones none."""
    layout, client, now = s.layout, s.client, time.time()
    slot = layout.index_slot(index_key)
    for ttl in (1, 3600):
        keys = [k for k in layout.live_bucket_keys(slot, [ttl], now) if await client.exists(k)]
        assert len(keys) == 1, (ttl, keys)
        remaining = await client.ttl(keys[0])
        assert 0 < remaining <= layout.bucket_width(ttl) + ttl + 61
    assert await client.ttl(layout.bucket_key(slot, None, None)) == -1
    rec_news, _ = layout.doc_keys("news-1")
    rec_ann, _ = layout.doc_keys("ann-1")
    assert 0 < await client.ttl(rec_news) <= 1
    assert await client.ttl(rec_ann) == -1


async def test_many_documents_in_one_batch(backend: Backend) -> None:
    s = await backend.open()
    recs = [
        make_record(f"bulk{i}", (*(b"S" + bytes([b, i % 7]) for b in range(4)), b"M" + h(f"u{i}", 9)))
        for i in range(300)
    ]
    await s.add(recs)
    got = await s.query([[b"S\x00\x03"], [b"M" + h("u42", 9)], [b"S\x02\x06", b"S\x03\x05"]])
    assert got[0] == {f"bulk{i}" for i in range(300) if i % 7 == 3}
    assert got[1] == {"bulk42"}
    assert got[2] == {f"bulk{i}" for i in range(300) if i % 7 in (5, 6)}
    assert len(await s.fetch([r.doc_id for r in recs])) == 300


async def test_state_survives_close_and_open(backend: Backend) -> None:
    if not backend.persistent:
        pytest.skip("memory:// keeps nothing across instances by design")
    s = await backend.open()
    rec = make_record("kept", (b"kept-key",), content_type="announcement")
    await s.add([rec])
    await s.claim_exact([(h("kept"), "kept", "news")])
    await s.put_decisions([DecisionRecord("kept", "unique", None, "{}", "news")])
    await backend.close(s)
    if backend.kind == "file":
        assert Path(backend.url.removeprefix("file://")).exists()
    s2 = await backend.open()
    assert await s2.fetch(["kept"]) == {"kept": rec}
    assert await s2.query([[b"kept-key"]]) == [{"kept"}]
    assert await s2.claim_exact([(h("kept"), "other", "news")]) == ["kept"]
    assert set(await s2.get_decisions(["kept"])) == {"kept"}


async def test_stats_are_integers(backend: Backend) -> None:
    s = await backend.open()
    await s.add([make_record("st", (b"st",))])
    stats = await s.stats()
    assert stats and all(isinstance(v, int) for v in stats.values())
    if backend.is_redis:
        assert stats["keys"] >= 2 and stats["used_memory"] > 0


# -- Redis only ----------------------------------------------------------------------------------
def _redis_opts() -> dict[str, Any]:
    return {"key_prefix": f"t{uuid.uuid4().hex[:12]}", "time_bucket_seconds": 1}


@pytest.mark.integration
async def test_redis_two_step_claims_match_set_nx_get(redis_server: str) -> None:
    """The fallback for servers without SET NX GET (Redis < 7.0) has the same answers."""
    s = open_store(redis_server, ttl=TTL, **_redis_opts())
    await s.open()
    try:
        s._set_get = False  # type: ignore[attr-defined]
        assert await s.claim_exact([(h("l1"), "a", "news"), (h("l1"), "b", "news"), (h("l2"), "b", "news")]) == [
            "a",
            "a",
            "b",
        ]
        assert await s.claim_exact([(h("l1"), "a", "news")]) == ["a"]
    finally:
        await s.close()


@pytest.mark.integration
async def test_redis_password_is_used_and_never_shown() -> None:
    secret = "s3cret-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="neardup-redis-auth-") as tmp:
        server = start_redis(Path(tmp), password=secret)
        try:
            url = f"redis://127.0.0.1:{server.port}"
            good = open_store(url, ttl=TTL, password=secret, **_redis_opts())
            await good.open()
            assert await good.claim_exact([(h("p"), "p", "news")]) == ["p"]
            await good.close()
            bad = open_store(url, ttl=TTL, password="wrong", retry_seconds=1, **_redis_opts())
            with pytest.raises(StoreError) as err:
                await bad.open()
            assert "wrong" not in str(err.value)
            in_url = open_store(f"redis://:{secret}@127.0.0.1:{server.port}", ttl=TTL, **_redis_opts())
            assert secret not in in_url.url and secret not in repr(in_url)
            await in_url.open()
            await in_url.close()
        finally:
            server.stop()


@pytest.mark.integration
async def test_redis_unreachable_raises_store_error() -> None:
    from tests.fixtures.redis_servers import free_port

    s = open_store(f"redis://127.0.0.1:{free_port()}", ttl=TTL, retry_seconds=0.5, **_redis_opts())
    with pytest.raises(StoreError):
        await s.open()


@pytest.mark.integration
async def test_cluster_rides_out_a_master_failover() -> None:
    """Kill a master mid-stream: every call still succeeds (after retries) and data written
    before the failover (replicated) and after it stay readable."""
    with tempfile.TemporaryDirectory(prefix="neardup-failover-") as tmp:
        cluster = start_cluster(Path(tmp))
        try:
            s = open_store(cluster.url, ttl=TTL, retry_seconds=40, **_redis_opts())
            await s.open()
            before = [make_record(f"pre{i}", (b"S" + bytes([i % 4]), f"pre{i}".encode())) for i in range(200)]
            await s.add(before)
            await s.claim_exact([(h(f"pre{i}"), f"pre{i}", "news") for i in range(200)])
            cluster.wait_replicated()
            killed = cluster.stop_master()
            for round_ in range(30):  # about 6 s and more of traffic across the failover
                batch = [make_record(f"r{round_}-{i}", (b"S" + bytes([i % 4]), b"live")) for i in range(20)]
                await s.add(batch)
                owners = await s.claim_exact([(h(r.doc_id), r.doc_id, "news") for r in batch])
                assert owners == [r.doc_id for r in batch]
                assert len(await s.fetch([r.doc_id for r in batch])) == 20
                await asyncio.sleep(0.2)
            cluster.wait_ok()
            assert killed not in cluster.masters()
            assert len(await s.fetch([r.doc_id for r in before])) == 200
            assert await s.claim_exact([(h(f"pre{i}"), "late", "news") for i in range(200)]) == [
                f"pre{i}" for i in range(200)
            ]
            (found,) = await s.query([[b"live"]])
            assert len(found) == 600
            await s.close()
        finally:
            cluster.stop()


def test_packed_values_round_trip_edge_cases() -> None:
    """The Redis value formats keep every field exactly, including odd ones the engine may send."""
    from neardup.storage.redis import decode_decision, decode_record, encode_decision, encode_record, record_id

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
        index_keys=(b"", b"\xff" * 300),
    )
    data = encode_record(odd)
    assert decode_record(data) == odd
    assert record_id(data) == "" and record_id(encode_record(make_record("ab", ()))) == "ab"
    assert record_id(encode_record(make_record("i" * 200, ()))[:80]) == 2 + 1 + 200  # needs more bytes
    d = DecisionRecord("é", "duplicate", "", "", "")
    assert decode_decision(encode_decision(d)) == d
    with pytest.raises(StoreError):
        decode_record(data[:40])
    with pytest.raises(StoreError):
        decode_decision(b"\x01\x05ab")


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
    from tests.fixtures.redis_servers import free_port

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
                assert await s.claim_exact([(h("tls"), "t", "news")]) == ["t"]
                await s.close()
            untrusted = open_store(f"rediss://127.0.0.1:{tls_port}", ttl=TTL, retry_seconds=0.5, **_redis_opts())
            with pytest.raises(StoreError):
                await untrusted.open()
        finally:
            server.stop()


@pytest.mark.integration
async def test_redis_records_without_index_keys(redis_server: str) -> None:
    """keep_index_keys=False (memory saver): the index still works, fetch omits the keys."""
    s = open_store(redis_server, ttl=TTL, keep_index_keys=False, **_redis_opts())
    await s.open()
    try:
        rec = make_record("lean", (b"k1", b"k2"))
        await s.add([rec])
        assert await s.query([[b"k2"]]) == [{"lean"}]
        got = (await s.fetch(["lean"]))["lean"]
        assert got.index_keys == () and got.signature == rec.signature
    finally:
        await s.close()
