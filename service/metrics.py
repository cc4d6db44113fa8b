"""Prometheus collectors on an injectable registry (tests pass their own).

:class:`Metrics` is filled by the engine (and by the batch CLI and the agents for input they
reject); :class:`AgentMetrics` by the Kafka transport only. A worker puts both on one registry,
served on ``/metrics`` and on the metrics port.

Every labelled counter starts with its known label values at zero: ``rate()`` and ``increase()``
need a sample before the first event, or alerts and panels stay empty until something goes wrong
(and then miss the first occurrence).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
# Redis answers in well under a millisecond: the lowest buckets must resolve that
STORE_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                 5.0, 10.0, 30.0)  # fmt: skip
# a crawl time may be days old: document age needs buckets up to weeks
AGE_BUCKETS = (1.0, 10.0, 60.0, 300.0, 900.0, 3600.0, 6 * 3600.0, 86_400.0, 7 * 86_400.0, 30 * 86_400.0)

# the label values each labelled counter starts with (service/engine.py, service/document.py and
# agents/dedup.py emit these; tests/unit/test_metrics.py fails when one of them emits another)
DOCUMENT_OUTCOMES = (("unique", "unique"), ("unique", "critical"), ("duplicate", "exact"), ("duplicate", "near"),
                     ("duplicate", "image"))
REJECT_REASONS = ("bad_json", "bad_schema", "missing_id", "missing_text", "bad_encoding", "empty_text",
                  "too_large", "bad_field", "bad_subtitles", "no_usable_image", "empty_message")  # fmt: skip
DEAD_LETTER_REASONS = (*REJECT_REASONS, "decode_error", "engine_error", "output_too_large", "store_corrupt")
WINDOW_CLOSE_REASONS = ("count", "age")
RECHECK_REASONS = ("format", "language", "similarity", "short_text", "critical", "version", "reversal_nearer",
                   "cluster_conflict")
STORE_OPS = ("lookup", "fetch", "commit", "get_decisions", "put_decisions", "write_state")
BLOOM_OUTCOMES = ("maybe", "miss")
OUTPUTS = ("unique", "duplicate", "dead_letter")
CHECK_OUTCOMES = ("ok", "invalid", "unauthorized", "busy", "not_ready", "error")


def _zero(counter: Counter, values: tuple[str, ...] | tuple[tuple[str, ...], ...]) -> Counter:
    """Create the child of each label value (or tuple of values) at zero."""
    for value in values:
        if isinstance(value, tuple):
            counter.labels(*value)
        else:
            counter.labels(value)
    return counter


def register_standard_collectors(registry: CollectorRegistry) -> None:
    """The ``process_*``, ``python_gc_*`` and ``python_info`` collectors of the default registry.

    A custom registry starts without them; a worker's registry gets them once.
    """
    ProcessCollector(registry=registry)
    GCCollector(registry=registry)
    PlatformCollector(registry=registry)


class Metrics:
    """The engine's collectors: decisions, windows, candidates, store calls, thresholds, Bloom filter."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        """Every collector on ``registry`` (a private one by default), labelled series pre-created at zero."""
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        r = self.registry
        self.documents = _zero(Counter("neardup_documents_total", "Documents decided, by status and reason",
                                       ["status", "reason"], registry=r), DOCUMENT_OUTCOMES)
        self.rejected = _zero(Counter("neardup_rejected_total", "Invalid input, by reason", ["reason"], registry=r),
                              REJECT_REASONS)
        self.dead_letters = _zero(Counter("neardup_dead_letter_total", "Messages sent to the dead-letter topic",
                                          ["reason"], registry=r), DEAD_LETTER_REASONS)
        self.document_age = Histogram("neardup_document_age_seconds",
                                      "published_at (the crawler's clock) to decision: how old documents are "
                                      "when decided, not a service latency", buckets=AGE_BUCKETS, registry=r)
        self.window_size = Histogram("neardup_window_documents", "Documents per closed window",
                                     buckets=(1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000), registry=r)
        self.window_closed = _zero(Counter("neardup_windows_closed_total", "Windows closed, by reason", ["reason"],
                                           registry=r), WINDOW_CLOSE_REASONS)
        self.window_seconds = Histogram("neardup_window_processing_seconds", "Engine time per window",
                                        buckets=LATENCY_BUCKETS, registry=r)
        self.candidates = Histogram("neardup_candidates_per_document", "Index candidates per document",
                                    buckets=(0, 1, 2, 5, 10, 20, 50, 100, 500), registry=r)
        self.recheck_rejections = _zero(Counter("neardup_recheck_rejections_total",
                                                "Candidates the exact re-check turned down, by why", ["why"],
                                                registry=r), RECHECK_REASONS)
        self.store_latency = Histogram("neardup_store_round_trip_seconds", "Store calls", ["op"],
                                       buckets=STORE_BUCKETS, registry=r)
        for op in STORE_OPS:
            self.store_latency.labels(op)
        self.store_errors = _zero(Counter("neardup_store_errors_total", "Store calls that failed", ["op"],
                                          registry=r), STORE_OPS)
        self.threshold = Gauge("neardup_threshold", "Thresholds in force", ["name"], registry=r)
        self.threshold_updates = Counter("neardup_threshold_updates_total", "Adaptive threshold changes",
                                         registry=r)
        self.bloom_fill = Gauge("neardup_bloom_fill_ratio", "Share of set bits in the exact-hash Bloom filter",
                                registry=r)
        self.bloom_hits = _zero(Counter("neardup_bloom_hits_total", "Bloom answers, by outcome", ["outcome"],
                                        registry=r), BLOOM_OUTCOMES)
        self.replays = Counter("neardup_replayed_decisions_total", "Redelivered documents answered from the store",
                               registry=r)
        self.races = Counter("neardup_race_resolutions_total",
                             "Documents turned duplicate by the re-check after insert", registry=r)


class AgentMetrics:
    """The Kafka transport's collectors, and the standard process collectors of the worker's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        """Every collector on ``registry``, with the process and platform collectors."""
        r = registry
        register_standard_collectors(r)
        self.messages_in = Counter("neardup_agent_messages_in_total", "raw messages taken from Kafka", registry=r)
        self.outputs = _zero(Counter("neardup_agent_outputs_total", "records produced and acknowledged, by output",
                                     ["output"], registry=r), OUTPUTS)
        self.engine_retries = Counter("neardup_agent_engine_retries_total",
                                      "engine calls retried after a transient (store) error", registry=r)
        self.poison_batches = Counter("neardup_agent_poison_batches_total",
                                      "batches the engine rejected, then retried one by one", registry=r)
        self.produce_retries = Counter("neardup_agent_produce_retries_total",
                                       "output records re-sent after a failed produce", registry=r)
        self.batch_size = Histogram("neardup_agent_batch_size", "messages per window", registry=r,
                                    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000))
        self.batch_seconds = Histogram("neardup_agent_batch_seconds", "window processing time, decode to produce acks",
                                       registry=r, buckets=LATENCY_BUCKETS)
        self.ready = Gauge("neardup_agent_ready", "1 when the engine is open, partitions are assigned, the store "
                           "and the broker answer", registry=r)
        self.assigned_partitions = Gauge("neardup_agent_assigned_partitions", "raw partitions held", registry=r)
        self.broker_reachable = Gauge("neardup_broker_reachable",
                                      "0 while the broker has not answered the worker's log-end calls for "
                                      "broker_away_seconds, else 1", registry=r)
        self.broker_reachable.set(1)
        self.check_requests = _zero(Counter("neardup_agent_check_requests_total",
                                            "POST /check requests, by outcome (busy: refused with 429)", ["outcome"],
                                            registry=r), CHECK_OUTCOMES)
        self.consumer_lag = Gauge("neardup_consumer_lag_messages",
                                  "Messages of an assigned raw partition not yet decided (log end minus the next "
                                  "offset to decide); refreshed on every window and every few seconds",
                                  ["partition"], registry=r)
        self.decision_latency = Histogram("neardup_decision_latency_seconds",
                                          "From the worker taking a message off Kafka to its decision being "
                                          "produced and acknowledged", buckets=LATENCY_BUCKETS, registry=r)
        self.publish_to_decision = Histogram("neardup_publish_to_decision_seconds",
                                             "From the Kafka record timestamp (publish or log-append time) to its "
                                             "decision being produced; includes time queued in Kafka",
                                             buckets=LATENCY_BUCKETS, registry=r)
