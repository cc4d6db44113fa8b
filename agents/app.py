"""The Faust app built from :class:`config.Settings`, its runtime state and its web views.

neardup keeps all of its state in the fingerprint store (``settings.store_url``), reached through
the engine. Faust tables are not used, so a worker can be replaced or scaled without changelog
recovery; Faust's own table store is set to memory and stays empty.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import faust
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from neardup.agents.topics import (
    Topics,
    bootstrap_servers,
    declare_topics,
    encode_json,
    ensure_topics,
    faust_credentials,
)
from neardup.config import Settings

if TYPE_CHECKING:
    from faust.types import TP
    from faust.web import Request, Response, View

log = logging.getLogger(__name__)

EngineFactory = Callable[[Settings, CollectorRegistry], Awaitable[Any]]


async def open_service_engine(settings: Settings, registry: CollectorRegistry) -> Any:
    from neardup.engine import Engine

    return await Engine.open(settings, registry=registry)


class AgentMetrics:
    """Transport-side collectors, on the same registry as the engine's (one /metrics page).

    Dead letters, rejected input, closed windows and consumer lag are counted on the engine's own
    collectors (``service.metrics.Metrics``), which exist for the transport to fill in.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        p = "neardup_agent_"
        self.messages_in = Counter(p + "messages_in_total", "raw messages taken from Kafka", registry=registry)
        self.outputs = Counter(
            p + "outputs_total", "records produced and acknowledged, by output", ["output"], registry=registry
        )
        self.engine_retries = Counter(
            p + "engine_retries_total",
            "engine calls retried after a transient (store) error",
            registry=registry,
        )
        self.poison_batches = Counter(
            p + "poison_batches_total",
            "batches the engine rejected, then retried one by one",
            registry=registry,
        )
        self.produce_retries = Counter(
            p + "produce_retries_total", "output records re-sent after a failed produce", registry=registry
        )
        self.batch_size = Histogram(
            p + "batch_size",
            "messages per window",
            registry=registry,
            buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000),
        )
        self.batch_seconds = Histogram(
            p + "batch_seconds",
            "window processing time, decode to produce acks",
            registry=registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
        )
        self.ready = Gauge(p + "ready", "1 when the engine is open and partitions are assigned", registry=registry)
        self.assigned_partitions = Gauge(p + "assigned_partitions", "raw partitions held", registry=registry)


class Runtime:
    """What the agent and the web views share: settings, engine, topics, readiness."""

    def __init__(
        self,
        settings: Settings,
        registry: CollectorRegistry | None = None,
        engine_factory: EngineFactory | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry or CollectorRegistry()
        self.metrics = AgentMetrics(self.registry)
        self.engine_factory = engine_factory or open_service_engine
        self.engine: Any = None
        self.engine_error: str | None = None
        self.engine_open = asyncio.Event()
        self.topics: Topics | None = None
        self.assigned: set[TP] | None = None  # None until the first assignment
        self.degraded: str | None = None  # set while the store fails; cleared on the next success
        self.started_at = time.time()

    # -- engine lifecycle ------------------------------------------------------------------------

    async def open_engine(self, deadline_seconds: float = 120.0) -> None:
        """Open the engine, retrying transient store errors for a while (the store may start later)."""
        from neardup.agents.dedup import is_transient

        delay, deadline = 0.5, time.monotonic() + deadline_seconds
        while True:
            try:
                self.engine = await self.engine_factory(self.settings, self.registry)
            except Exception as exc:
                self.engine_error = f"{type(exc).__name__}: {exc}"
                if not is_transient(exc) or time.monotonic() > deadline:
                    log.error("could not open the engine: %s", self.engine_error)
                    raise
                log.warning("engine not available yet (%s); retrying in %.1fs", self.engine_error, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
                continue
            self.engine_error = None
            self.engine_open.set()
            self._update_ready()
            log.info("engine open (store %s)", self.settings.redacted()["store_url"])
            return

    async def close_engine(self) -> None:
        engine, self.engine = self.engine, None
        self.engine_open.clear()
        self._update_ready()
        if engine is not None:
            try:
                await engine.close()
            except Exception:
                log.exception("closing the engine failed")

    # -- readiness -------------------------------------------------------------------------------

    def on_assigned(self, assigned: Iterable[TP]) -> None:
        raw = self.settings.topics.raw
        self.assigned = {tp for tp in assigned if tp.topic == raw}
        self.metrics.assigned_partitions.set(len(self.assigned))
        self._update_ready()

    def set_degraded(self, reason: str | None) -> None:
        if reason != self.degraded:
            self.degraded = reason
            self._update_ready()

    @property
    def ready(self) -> bool:
        return self.engine is not None and self.assigned is not None and self.degraded is None

    def _update_ready(self) -> None:
        self.metrics.ready.set(1 if self.ready else 0)

    def status(self) -> dict[str, Any]:
        return {
            "ready": self.ready,
            "worker_id": self.settings.worker_id,
            "engine": "open" if self.engine is not None else "closed",
            "engine_error": self.engine_error,
            "degraded": self.degraded,
            "assigned": sorted(f"{tp.topic}:{tp.partition}" for tp in self.assigned or ()),
            "assignment_received": self.assigned is not None,
            "uptime_seconds": round(time.time() - self.started_at, 3),
        }


class NeardupApp(faust.App):
    """Opens the engine before the consumer starts and closes it after everything has stopped."""

    runtime: Runtime

    async def on_start(self) -> None:
        await super().on_start()
        try:
            await ensure_topics(self.runtime.settings)
        except Exception as exc:  # the broker's auto-creation or the operators' topics may still do
            log.warning("topic check failed: %r", exc)
        await self.runtime.open_engine()

    async def on_shutdown(self) -> None:
        await super().on_shutdown()
        await self.runtime.close_engine()


def create_app(
    settings: Settings,
    *,
    engine_factory: EngineFactory | None = None,
    registry: CollectorRegistry | None = None,
    web_bind: str | None = None,
    datadir: str | Path | None = None,
    with_agent: bool = True,
) -> NeardupApp:
    """The worker's Faust app: topics, the dedup agent and the web views, nothing started yet."""
    k = settings.kafka
    data = Path(datadir or Path(tempfile.gettempdir()) / "neardup-faust" / settings.app_id)
    data.parent.mkdir(parents=True, exist_ok=True)  # Faust creates only the last level
    runtime = Runtime(settings, registry=registry, engine_factory=engine_factory)
    app = NeardupApp(
        settings.app_id,
        broker=[f"kafka://{hp}" for hp in bootstrap_servers(settings)],
        broker_credentials=faust_credentials(settings),
        broker_session_timeout=k.session_timeout_seconds,
        broker_heartbeat_interval=k.heartbeat_interval_seconds,
        broker_commit_interval=k.commit_interval_seconds,
        # a new group must see documents published before the first worker started
        consumer_auto_offset_reset="earliest",
        processing_guarantee="at_least_once",
        producer_acks=-1,
        topic_partitions=settings.topics.partitions,
        topic_replication_factor=settings.topics.replicas,
        # no @app.timer(on_leader=True) here: skip the leader-election topic
        topic_disable_leader=True,
        store="memory://",
        # a window holds up to max_count events in the stream buffer while the engine works
        stream_buffer_maxsize=max(4096, 2 * settings.window.max_count),
        web_enabled=True,
        web_port=settings.web_port,
        web_bind=web_bind or "0.0.0.0",
        autodiscover=False,
        # Faust keeps table files there; with no tables it stays empty, so keep it out of the cwd
        datadir=str(data),
    )
    app.runtime = runtime
    runtime.topics = declare_topics(app, settings)

    async def _on_assigned(sender: Any, /, *args: Any, signal: Any, **kwargs: Any) -> None:
        runtime.on_assigned(args[0] if args else kwargs.get("assigned", ()))

    app.on_partitions_assigned.connect(_on_assigned)

    register_views(app, runtime)
    if with_agent:
        from neardup.agents.dedup import attach_dedup_agent

        attach_dedup_agent(app, runtime)
    return app


# ---------------------------------------------------------------------------------------------
# web views (Faust's aiohttp server on settings.web_port)


def _json_response(view: View, body: Any, status: int = 200) -> Response:
    return view.bytes(encode_json(body), content_type="application/json", status=status)


def register_views(app: faust.App, runtime: Runtime) -> None:
    from faust.web import View as WebView

    @app.page("/health")
    class Health(WebView):
        """Liveness: the process and its event loop answer."""

        async def get(self, request: Request) -> Response:
            crashed = bool(getattr(app, "_crashed", None) and app._crashed.is_set())
            body = {"status": "crashed" if crashed else "ok", "worker_id": runtime.settings.worker_id}
            return _json_response(self, body, 503 if crashed else 200)

    @app.page("/ready")
    class Ready(WebView):
        """Readiness: engine open, partitions assigned (possibly none), store answering."""

        async def get(self, request: Request) -> Response:
            status = runtime.status()
            status["rebalancing"] = bool(app.rebalancing)
            return _json_response(self, status, 200 if runtime.ready else 503)

    @app.page("/metrics")
    class Metrics(WebView):
        """Prometheus text: the engine's collectors and the agent's, one registry."""

        async def get(self, request: Request) -> Response:
            return self.bytes(generate_latest(runtime.registry), content_type=CONTENT_TYPE_LATEST.split(";")[0])

    @app.page("/check")
    class Check(WebView):
        """Dry run: one document in, its decision and evidence out; nothing stored or emitted."""

        async def post(self, request: Request) -> Response:
            from neardup.agents.dedup import decode_document
            from neardup.document import InvalidDocument

            body = await request.read()
            try:
                doc = decode_document(body, runtime.settings)
            except InvalidDocument as exc:
                return _json_response(self, {"reason": exc.reason, "error": str(exc)}, 400)
            engine = runtime.engine
            if engine is None:
                return _json_response(self, {"reason": "not_ready", "error": "engine is not open"}, 503)
            try:
                decision = await engine.check(doc)
                record = decision.to_record()
            except InvalidDocument as exc:
                return _json_response(self, {"reason": exc.reason, "error": str(exc)}, 400)
            except Exception as exc:
                log.exception("check failed for %r", doc.id)
                return _json_response(self, {"reason": "engine_error", "error": f"{type(exc).__name__}: {exc}"}, 500)
            return _json_response(self, record)

        async def get(self, request: Request) -> Response:
            return _json_response(self, {"reason": "method", "error": "POST one document as JSON"}, 405)
