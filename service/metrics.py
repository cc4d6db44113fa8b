"""Prometheus collectors on an injectable registry (tests pass their own)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        r = self.registry
        self.documents = Counter("neardup_documents_total", "Documents decided, by status and reason",
                                 ["status", "reason"], registry=r)
        self.rejected = Counter("neardup_rejected_total", "Invalid input, by reason", ["reason"], registry=r)
        self.dead_letters = Counter("neardup_dead_letter_total", "Messages sent to the dead-letter topic",
                                    ["reason"], registry=r)
        self.decision_latency = Histogram("neardup_decision_latency_seconds",
                                          "Publish (or receipt) time to decision", buckets=LATENCY_BUCKETS,
                                          registry=r)
        self.window_size = Histogram("neardup_window_documents", "Documents per closed window",
                                     buckets=(1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000), registry=r)
        self.window_closed = Counter("neardup_windows_closed_total", "Windows closed, by reason", ["reason"],
                                     registry=r)
        self.window_seconds = Histogram("neardup_window_processing_seconds", "Engine time per window",
                                        buckets=LATENCY_BUCKETS, registry=r)
        self.candidates = Histogram("neardup_candidates_per_document", "Index candidates per document",
                                    buckets=(0, 1, 2, 5, 10, 20, 50, 100, 500), registry=r)
        self.recheck_rejections = Counter("neardup_recheck_rejections_total",
                                          "Candidates the exact re-check turned down, by why", ["why"],
                                          registry=r)
        self.store_latency = Histogram("neardup_store_round_trip_seconds", "Store calls", ["op"],
                                       buckets=LATENCY_BUCKETS, registry=r)
        self.store_errors = Counter("neardup_store_errors_total", "Store calls that failed", ["op"], registry=r)
        self.threshold = Gauge("neardup_threshold", "Thresholds in force", ["name"], registry=r)
        self.threshold_updates = Counter("neardup_threshold_updates_total", "Adaptive threshold changes",
                                         registry=r)
        self.bloom_fill = Gauge("neardup_bloom_fill_ratio", "Share of set bits in the exact-hash Bloom filter",
                                registry=r)
        self.bloom_hits = Counter("neardup_bloom_hits_total", "Bloom answers, by outcome", ["outcome"],
                                  registry=r)
        self.replays = Counter("neardup_replayed_decisions_total", "Redelivered documents answered from the store",
                               registry=r)
        self.races = Counter("neardup_race_resolutions_total",
                             "Documents turned duplicate by the re-check after insert", registry=r)
        self.consumer_lag = Gauge("neardup_consumer_lag_messages", "Messages behind the log end", ["partition"],
                                  registry=r)
