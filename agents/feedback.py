"""The feedback agent: reviewers' records from the ``feedback`` topic re-calibrate the shared model.

Records (:mod:`neardup.learning.feedback`) are taken in batches of up to ``FEEDBACK_BATCH`` or every
``FEEDBACK_SECONDS``; their pairs are judged on the fingerprints already in the store
(:func:`neardup.learning.model.learn_thresholds_from_store`: no texts travel on the topic), and an
accepted model is written as the next version, which every worker adopts with its next window.
A record that cannot be read is logged and counted, never retried; a batch whose model would
lower the pair F1 on the labels held is rejected (logged), as ``neardup feedback`` does.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import faust

    from neardup.agents.app import Runtime

log = logging.getLogger(__name__)
FEEDBACK_BATCH = 500
FEEDBACK_SECONDS = 5.0


async def learn_batch(runtime: Runtime, values: list[bytes | None]) -> Any:
    """Learn from one batch of raw feedback messages; returns the outcome (None: nothing usable)."""
    from neardup.learning.feedback import DecisionFeedback, FeedbackError, parse_feedback
    from neardup.learning.model import labels_from_feedback, learn_thresholds_from_store, read_model, write_model

    records = []
    for value in values:
        try:
            records.append(parse_feedback(value or b""))
        except FeedbackError as exc:
            log.warning("feedback record skipped: %s", exc)
    if not records or runtime.engine is None:
        return None
    store = runtime.engine.store
    decisions = await store.get_decisions([r.id for r in records if isinstance(r, DecisionFeedback)])
    labels, skipped = labels_from_feedback(records, decisions)
    for line in skipped:
        log.warning("feedback record skipped: %s", line)
    for _ in range(3):  # another worker may write a version meanwhile: merge into it
        model, history = await read_model(store)
        candidate, outcome = await learn_thresholds_from_store(runtime.settings, store, model, labels)
        if not outcome.accepted or await write_model(store, candidate, history):
            log.info("%s", outcome.message)
            return outcome
    log.warning("feedback batch not applied: the model kept changing under it")
    return None


def attach_feedback_agent(app: faust.App, runtime: Runtime) -> Any:
    """Register the feedback agent on ``app`` (its own topic, its own consumer position)."""
    t = runtime.settings.topics
    topic = app.topic(t.feedback, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw",
                      partitions=t.partitions, replicas=t.replicas)

    async def feedback(stream: Any) -> None:
        await runtime.engine_open.wait()
        async for values in stream.take(FEEDBACK_BATCH, within=FEEDBACK_SECONDS):
            try:
                await learn_batch(runtime, list(values))
            except Exception:  # learning must never stop the worker's deciding
                log.exception("feedback batch failed")

    return app.agent(topic, name="neardup.learning.feedback", concurrency=1)(feedback)


__all__ = ["FEEDBACK_BATCH", "attach_feedback_agent", "learn_batch"]
