"""The stream finds the same duplicates as the batch engine.

The whole development set (4,202 documents, its labelled duplicate pairs and hard negatives) goes
through two workers on four partitions sharing the
Redis Cluster store, and through ``neardup.engine.Engine`` on ``memory://`` in windows of the same
size with the same settings. Which document of a group counts as the original depends on the
order of arrival, so the comparison is between the clusters formed by the (id, duplicate_of)
edges: they must be equal, up to a few documents (< 2 %) whose chain of near-duplicates was cut
differently because of that order; those are printed.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Pipeline, WorkerProcess, collect, doc_id, wait_balanced
from tests.fixtures.kafka_broker import run_sync

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

WINDOW = 250  # documents per window, stream and batch
# the same decision settings on both sides; the adaptive threshold is per process (a worker sees
# only its share of the documents), so it is switched off on both
SETTINGS_ENV = {
    "NEARDUP_WINDOW__MAX_COUNT": str(WINDOW),
    "NEARDUP_WINDOW__MAX_AGE_SECONDS": "0.5",
    "NEARDUP_THRESHOLDS__ADAPTIVE": "false",
}
MAX_DIFFERENT = 0.02


def clusters(ids: Iterable[str], edges: Iterable[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """id -> the ids of its connected component (union-find over the duplicate_of edges)."""
    parent = {i: i for i in ids}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, set[str]] = {}
    for i in parent:
        groups.setdefault(find(i), set()).add(i)
    return {i: frozenset(groups[find(i)]) for i in parent}


def batch_decisions(docs: list[bytes]) -> dict[str, dict[str, Any]]:
    """The batch engine on memory://, windows of WINDOW documents in file order (as ``neardup dedup``)."""
    from neardup.config import load_settings
    from neardup.document import parse_document
    from neardup.engine import Engine

    settings = load_settings(
        store_url="memory://",
        window={"max_count": WINDOW, "max_age_seconds": 0.5},
        thresholds={"adaptive": False},
    )

    async def run() -> dict[str, dict[str, Any]]:
        engine = await Engine.open(settings)
        out: dict[str, dict[str, Any]] = {}
        try:
            n = settings.normalize
            for i in range(0, len(docs), WINDOW):
                window = [parse_document(d, max_bytes=n.max_bytes, max_id_length=n.max_id_length)
                          for d in docs[i : i + WINDOW]]  # fmt: skip
                for d in await engine.decide(window):
                    out[d.doc.id] = {"status": d.status, "duplicate_of": d.duplicate_of,
                                     "evidence": d.evidence.to_dict()}
        finally:
            await engine.close()
        return out

    return run_sync(run)


@pytest.mark.parametrize("store_url", ["rediscluster"], indirect=True)
def test_stream_clusters_equal_batch_clusters(
    pipeline: Pipeline, start_worker: Callable[..., WorkerProcess], store_url: str, datasets_dir: Path
) -> None:
    broker = pipeline.broker
    with (datasets_dir / "docs.jsonl").open("rb") as f:
        docs = [line.rstrip(b"\n") for line in f if line.strip()]
    ids = [doc_id(d) for d in docs]
    n_docs = len(docs)
    assert len(set(ids)) == n_docs

    w1 = start_worker("w1", store_url=store_url, **SETTINGS_ENV)
    w2 = start_worker("w2", store_url=store_url, **SETTINGS_ENV)
    w1.wait_ready()
    w2.wait_ready()
    wait_balanced([w1, w2], pipeline.partitions)

    t0 = time.monotonic()
    broker.produce_sync(pipeline.raw, [(doc_id(d), d) for d in docs])
    got = collect(broker, pipeline.outputs, expected=n_docs, timeout=400, settle=3)
    stream_s = time.monotonic() - t0
    assert not got[pipeline.dead_letter], [json.loads(r.value)["reason"] for r in got[pipeline.dead_letter]]

    stream: dict[str, dict[str, Any]] = {}
    seen: Counter[str] = Counter()
    workers: Counter[str] = Counter()
    for t in (pipeline.unique, pipeline.duplicate):
        for r in got[t]:
            rec = json.loads(r.value)
            assert r.key.decode() == rec["id"]
            seen[rec["id"]] += 1
            stream[rec["id"]] = rec
            workers[str(rec["evidence"].get("worker_id"))] += 1
    # every id exactly once
    assert set(seen) == set(ids), set(ids) ^ set(seen)
    assert all(n == 1 for n in seen.values()), {i: n for i, n in seen.items() if n > 1}
    assert len(workers) == 2, f"one worker decided everything: {workers}"
    for w in (w1, w2):
        assert w.proc.poll() is None

    t1 = time.monotonic()
    batch = batch_decisions(docs)
    batch_s = time.monotonic() - t1
    assert set(batch) == set(ids)

    def edges(decisions: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
        out = []
        for i, d in decisions.items():
            assert (d["status"] == "duplicate") == (d["duplicate_of"] is not None), (i, d)
            if d["duplicate_of"] is not None:
                assert d["duplicate_of"] in decisions, f"{i} is a duplicate of an unknown id {d['duplicate_of']}"
                out.append((i, d["duplicate_of"]))
        return out

    s_edges, b_edges = edges(stream), edges(batch)
    s_clusters, b_clusters = clusters(ids, s_edges), clusters(ids, b_edges)
    different = sorted(i for i in ids if s_clusters[i] != b_clusters[i])

    s_groups = {c for c in s_clusters.values() if len(c) > 1}
    b_groups = {c for c in b_clusters.values() if len(c) > 1}
    print(
        f"\nstream: {len(s_edges)} duplicates in {len(s_groups)} clusters ({stream_s:.1f}s, records by worker "
        f"{dict(workers)}); batch: {len(b_edges)} duplicates in {len(b_groups)} clusters ({batch_s:.1f}s); "
        f"{len(different)} of {n_docs} documents in a different cluster"
    )
    shown: set[frozenset[str]] = set()
    for i in different:
        key = b_clusters[i] | s_clusters[i]
        if key in shown:
            continue
        shown.add(key)
        print(f"  batch cluster {sorted(b_clusters[i])} vs stream cluster {sorted(s_clusters[i])}")
        for j in sorted(key):
            s, b = stream[j], batch[j]
            print(f"    {j}: stream {s['status']} of {s['duplicate_of']} ({s['evidence'].get('rule')}), "
                  f"batch {b['status']} of {b['duplicate_of']} ({b['evidence'].get('rule')})")  # fmt: skip
    assert len(different) <= MAX_DIFFERENT * n_docs, f"{len(different)} documents clustered differently"
    # the duplicate counts can differ only by what those few documents account for
    assert abs(len(s_edges) - len(b_edges)) <= len(different)
    assert b_groups, "the chosen documents hold no duplicates: the comparison would prove nothing"
    for w in (w1, w2):
        assert w.stop() == 0
