"""The worker's registry: labelled counters start at zero, the standard process collectors are on
it, store latency resolves Redis' sub-millisecond answers, and the engine emits no label value the
registry did not start with (so every alert and panel has its series from the first scrape)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from neardup.metrics import (
    DEAD_LETTER_REASONS,
    REJECT_REASONS,
    STORE_BUCKETS,
    AgentMetrics,
    Metrics,
)

ROOT = Path(__file__).resolve().parents[2]


def series(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(sample name, labels) -> value of every sample the registry exports."""
    from prometheus_client import generate_latest

    out = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def worker_registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    AgentMetrics(registry)
    Metrics(registry)
    return registry


def test_labelled_counters_start_at_zero() -> None:
    got = series(worker_registry())
    expected_zero = [
        ("neardup_dead_letter_total", (("reason", "bad_json"),)),
        ("neardup_dead_letter_total", (("reason", "engine_error"),)),
        ("neardup_rejected_total", (("reason", "missing_text"),)),
        ("neardup_documents_total", (("reason", "near"), ("status", "duplicate"))),
        ("neardup_documents_total", (("reason", "unique"), ("status", "unique"))),
        ("neardup_store_errors_total", (("op", "lookup"),)),
        ("neardup_windows_closed_total", (("reason", "age"),)),
        ("neardup_agent_outputs_total", (("output", "dead_letter"),)),
        ("neardup_agent_check_requests_total", (("outcome", "busy"),)),
        ("neardup_store_round_trip_seconds_count", (("op", "commit"),)),
    ]
    for key in expected_zero:
        assert got.get(key) == 0.0, f"{key} not exported at 0"
    # every labelled counter has at least one series before any event
    for name in ("neardup_recheck_rejections_total", "neardup_bloom_hits_total"):
        assert any(k[0] == name for k in got), name


def test_standard_collectors_are_on_the_worker_registry() -> None:
    names = {k[0] for k in series(worker_registry())}
    assert {"process_cpu_seconds_total", "process_resident_memory_bytes", "python_gc_objects_collected_total",
            "python_info"} <= names  # fmt: skip


def test_store_latency_buckets_resolve_sub_millisecond_calls() -> None:
    assert STORE_BUCKETS[0] <= 0.0001
    registry = CollectorRegistry()
    m = Metrics(registry)
    m.store_latency.labels("fetch").observe(0.00015)  # a Redis round trip on loopback
    got = series(registry)
    assert got[("neardup_store_round_trip_seconds_bucket", (("le", "0.0001"), ("op", "fetch")))] == 0.0
    assert got[("neardup_store_round_trip_seconds_bucket", (("le", "0.00025"), ("op", "fetch")))] == 1.0


def test_reject_and_dead_letter_reasons_cover_the_code() -> None:
    """Every reason the code names literally is one the counters start with."""
    document = (ROOT / "service" / "document.py").read_text(encoding="utf-8")
    rejected = set(re.findall(r'InvalidDocument\(\s*"(\w+)"', document))
    dedup = (ROOT / "agents" / "dedup.py").read_text(encoding="utf-8")
    rejected |= set(re.findall(r'InvalidDocument\(\s*"(\w+)"', dedup))
    assert rejected <= set(REJECT_REASONS), rejected - set(REJECT_REASONS)
    dead = set(re.findall(r'dead_letter\(\s*[\w.\[\]]+,\s*"(\w+)"', dedup))
    assert dead and dead <= set(DEAD_LETTER_REASONS), dead - set(DEAD_LETTER_REASONS)


async def test_the_engine_adds_no_label_value(datasets_dir: Path) -> None:
    """Decide real documents (uniques, exact and near duplicates, critical differences): the set
    of exported series of the labelled counters stays what it was at start."""
    from neardup.config import load_settings
    from neardup.document import parse_document
    from neardup.engine import Engine

    registry = CollectorRegistry()
    AgentMetrics(registry)
    engine = await Engine.open(load_settings(store_url="memory://"), registry=registry)
    labelled = ("neardup_documents_total", "neardup_recheck_rejections_total", "neardup_store_errors_total",
                "neardup_bloom_hits_total", "neardup_store_round_trip_seconds_count")  # fmt: skip
    before = {k for k in series(registry) if k[0] in labelled}
    with (datasets_dir / "docs.jsonl").open("rb") as f:
        lines = [line for _, line in zip(range(600), f, strict=False)]
    docs = [parse_document(line) for line in lines]
    try:
        for i in range(0, len(docs), 100):
            await engine.decide(docs[i : i + 100])
        await engine.check(docs[0])
    finally:
        await engine.close()
    after = {k: v for k, v in series(registry).items() if k[0] in labelled}
    assert set(after) == before, f"label values not pre-initialised: {sorted(set(after) - before)}"
    decided = {k[1]: v for k, v in after.items() if k[0] == "neardup_documents_total"}
    assert sum(decided.values()) >= len(docs) - 5  # replays of repeated ids are not counted again
    assert decided[(("reason", "near"), ("status", "duplicate"))] > 0


@pytest.mark.parametrize("header,ok", [
    (None, False), ("", False), ("Bearer", False), ("Bearer ", False), ("Bearer wrong", False),
    ("Basic s3cret-token", False), ("Bearer s3cret-token", True), ("bearer s3cret-token", True),
])  # fmt: skip
def test_bearer_token(header: str | None, ok: bool) -> None:
    from pydantic import SecretStr

    from neardup.agents.app import bearer_ok

    assert bearer_ok(header, SecretStr("s3cret-token")) is ok
    assert bearer_ok(header, None) is True
    assert bearer_ok(header, SecretStr("")) is True  # an empty token is no token
