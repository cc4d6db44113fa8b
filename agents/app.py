"""The Faust app built from :class:`config.Settings`, its runtime state and its web views.

neardup keeps all of its state in the fingerprint store (``settings.store_url``), reached through
the engine. Faust tables are not used, so a worker can be replaced or scaled without changelog
recovery; Faust's own table store is set to memory and stays empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import faust
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from pydantic import SecretStr

from neardup.agents.topics import (
    Topics,
    bootstrap_servers,
    declare_topics,
    encode_json,
    ensure_topics,
    faust_credentials,
)
from neardup.config import Settings
from neardup.metrics import AgentMetrics
from neardup.retry import Backoff, retry

if TYPE_CHECKING:
    from faust.types import TP
    from faust.web import Request, Response, View

log = logging.getLogger(__name__)

EngineFactory = Callable[[Settings, CollectorRegistry], Awaitable[Any]]

# the consumer-lag gauge is refreshed from the broker this often, and after every window
LAG_REFRESH_SECONDS = 5.0
LAG_CALL_TIMEOUT = 5.0
# the broker has not answered the lag calls for this long: say so (log, /ready, a metric)
BROKER_AWAY_SECONDS = 15.0
# On SIGTERM a healthy window in flight may finish (and be committed) within WINDOW_GRACE_SECONDS;
# a window retrying a failing store is abandoned at once. Closing the store gets STORE_CLOSE_SECONDS.
# A worker still running STOP_DEADLINE_SECONDS after the stop began exits hard: its acked offsets
# were committed or will be redelivered, so nothing undecided is ever committed either way.
WINDOW_GRACE_SECONDS = 4.0
STORE_CLOSE_SECONDS = 2.0
STOP_DEADLINE_SECONDS = 9.0
EXIT_STOP_DEADLINE = 1
T = TypeVar("T")


async def open_service_engine(settings: Settings, registry: CollectorRegistry) -> Any:
    """The engine a worker runs: ``Engine.open`` with the worker's metrics registry."""
    from neardup import collector
    from neardup.engine import Engine

    engine = await Engine.open(settings, registry=registry)
    collector.settle()  # a worker runs the engine until it stops: its start-up objects stay
    return engine


class Runtime:
    """What the agent and the web views share: settings, engine, topics, readiness."""

    def __init__(
        self,
        settings: Settings,
        registry: CollectorRegistry | None = None,
        engine_factory: EngineFactory | None = None,
        *,
        hard_stop: bool = False,
    ) -> None:
        """Nothing is opened here; ``engine_factory`` defaults to :func:`open_service_engine`."""
        self.settings = settings
        self.hard_stop = hard_stop  # exit the process STOP_DEADLINE_SECONDS after the stop began
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
        # raw partition -> the next offset not yet decided (known once a window took from it)
        self.next_offsets: dict[int, int] = {}
        self.stopping = asyncio.Event()  # set when the worker begins to stop
        self._window: asyncio.Future[Any] | None = None  # the agent's window being decided
        self._window_idle = asyncio.Event()
        self._window_idle.set()
        self.checks_in_flight = 0  # POST /check requests being served
        self.broker_failing_since: float | None = None  # monotonic time of the first unanswered lag call
        self.broker_away = False  # unanswered for BROKER_AWAY_SECONDS: not ready, said once in the log

    # -- engine lifecycle ------------------------------------------------------------------------

    async def open_engine(self) -> None:
        """Open the engine, retrying transient store errors up to ``retry.startup_deadline_seconds``
        (the store may start later); a permanent error (wrong password) is raised at once."""
        r = self.settings.retry

        def not_yet(exc: Exception, delay: float) -> None:
            self.engine_error = f"{type(exc).__name__}: {exc}"
            log.warning("engine not available yet (%s); retrying in %.1fs", self.engine_error, delay)

        try:
            backoff = Backoff.from_settings(r, deadline=r.startup_deadline_seconds)
            self.engine = await retry(lambda: self.engine_factory(self.settings, self.registry), backoff,
                                      on_retry=not_yet)  # fmt: skip
        except Exception as exc:
            self.engine_error = f"{type(exc).__name__}: {exc}"
            log.error("could not open the engine: %s", self.engine_error)
            raise
        self.engine_error = None
        self.engine_open.set()
        self._update_ready()
        log.info("engine open (store %s)", self.settings.redacted()["store_url"])

    async def close_engine(self) -> None:
        """Close the engine (if open) and mark the worker not ready; a failing close is only logged."""
        engine, self.engine = self.engine, None
        self.engine_open.clear()
        self._update_ready()
        if engine is not None:
            try:
                # a store that does not answer must not hold up the stop
                await asyncio.wait_for(engine.close(), STORE_CLOSE_SECONDS)
            except Exception:
                log.exception("closing the engine failed")

    # -- stopping --------------------------------------------------------------------------------

    def begin_stop(self) -> None:
        """The worker is stopping: no new window starts; one retrying a failing store is cancelled."""
        if not self.stopping.is_set():
            log.info("stopping: a window in flight gets %.0fs to finish", WINDOW_GRACE_SECONDS)
            self.stopping.set()
            self._update_ready()
            if self.hard_stop:
                _exit_after(STOP_DEADLINE_SECONDS)
        self._cancel_window_if_degraded()

    async def run_window(self, work: Coroutine[Any, Any, T]) -> T | None:
        """``work``'s result; None when the stop cancelled it (or began before it)."""
        if self.stopping.is_set():
            work.close()
            return None
        self._window = asyncio.ensure_future(work)
        self._window_idle.clear()
        try:
            return await self._window
        except asyncio.CancelledError:
            if self.stopping.is_set() and self._window.cancelled():
                return None  # cancelled by the stop, not the agent: the agent goes on to leave
            raise
        finally:
            self._window = None

    def window_left(self) -> None:
        """The agent is done with its window: decided and acked, or abandoned."""
        self._window_idle.set()

    async def settle(self) -> None:
        """Wait (at most the grace) until the window in flight is decided and acked; else cancel it."""
        try:
            await asyncio.wait_for(self._window_idle.wait(), WINDOW_GRACE_SECONDS)
        except TimeoutError:
            if self._window is not None:
                log.warning("stopping: the window in flight did not finish in time; abandoned unacked")
                self._window.cancel()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._window_idle.wait(), 1.0)

    def _cancel_window_if_degraded(self) -> None:
        if self.stopping.is_set() and self.degraded is not None and self._window is not None:
            log.info("stopping: abandoning the window retrying the store (%s)", self.degraded)
            self._window.cancel()

    # -- readiness -------------------------------------------------------------------------------

    def on_assigned(self, assigned: Iterable[TP]) -> None:
        """The raw partitions now held (Faust's assignment callback); lag of lost ones is forgotten."""
        raw = self.settings.topics.raw
        before = self.assigned or set()
        self.assigned = {tp for tp in assigned if tp.topic == raw}
        self._forget(before - self.assigned)
        self.metrics.assigned_partitions.set(len(self.assigned))
        self._update_ready()

    def on_revoked(self, revoked: Iterable[TP]) -> None:
        """Partitions taken away: their lag is another worker's to report now."""
        raw = self.settings.topics.raw
        gone = {tp for tp in revoked if tp.topic == raw}
        if self.assigned is not None:
            self.assigned -= gone
            self.metrics.assigned_partitions.set(len(self.assigned))
        self._forget(gone)

    def _forget(self, partitions: Iterable[TP]) -> None:
        for tp in partitions:
            self.next_offsets.pop(tp.partition, None)
            with contextlib.suppress(KeyError):  # no lag reported for it yet
                self.metrics.consumer_lag.remove(str(tp.partition))

    def set_degraded(self, reason: str | None) -> None:
        """Mark the worker degraded for ``reason`` (not ready), or healthy again with None."""
        if reason != self.degraded:
            self.degraded = reason
            self._update_ready()
        self._cancel_window_if_degraded()

    @property
    def ready(self) -> bool:
        """Engine open, partitions assigned, store answering, not stopping."""
        return (self.engine is not None and self.assigned is not None and self.degraded is None
                and not self.broker_away and not self.stopping.is_set())  # fmt: skip

    def _update_ready(self) -> None:
        self.metrics.ready.set(1 if self.ready else 0)

    # -- consumer lag ----------------------------------------------------------------------------

    def _held(self) -> set[int]:
        return {tp.partition for tp in self.assigned or ()}

    def window_taken(self, offsets: Iterable[tuple[int, int]]) -> None:
        """A window of (partition, offset) was taken: a partition's first window starts its position."""
        held = self._held()
        for partition, offset in offsets:
            if partition in held and offset < self.next_offsets.setdefault(partition, offset):
                self.next_offsets[partition] = offset

    def window_decided(self, offsets: Iterable[tuple[int, int]]) -> None:
        """Every message of a window is decided and acked: positions move past them."""
        held = self._held()
        for partition, offset in offsets:
            if partition in held:
                self.next_offsets[partition] = max(self.next_offsets.get(partition, 0), offset + 1)

    def set_lag(self, log_ends: Mapping[int, int], positions: Mapping[int, int] | None = None) -> None:
        """Lag of each held raw partition: its log end minus the next offset to decide.

        ``positions`` stand in for partitions no window took from yet (the consumer's position).
        """
        for partition in self._held():
            end = log_ends.get(partition)
            position = self.next_offsets.get(partition, (positions or {}).get(partition))
            if end is not None and position is not None:
                self.metrics.consumer_lag.labels(str(partition)).set(max(0, end - position))

    def cached_log_ends(self, consumer: Any) -> dict[int, int]:
        """Log ends as the consumer last fetched them: no broker call (stale while fetching is paused)."""
        ends: dict[int, int] = {}
        for tp in self.assigned or ():
            with contextlib.suppress(Exception):  # not fetched yet, or the consumer is restarting
                end = consumer.highwater(tp)
                if end is not None and end >= 0:
                    ends[tp.partition] = end
        return ends

    async def refresh_lag(self, consumer: Any) -> None:
        """Lag from log ends asked of the broker: moves also while the agent is stuck on a window."""
        tps = sorted(self.assigned or ())
        if not tps:
            return
        try:
            ends = await asyncio.wait_for(consumer.highwaters(*tps), LAG_CALL_TIMEOUT)
            positions = {}
            for tp in tps:
                if tp.partition not in self.next_offsets:
                    position = await asyncio.wait_for(consumer.position(tp), LAG_CALL_TIMEOUT)
                    if position is not None:
                        positions[tp.partition] = position
        except Exception as exc:  # the broker is away or a rebalance is under way: try again next time
            log.debug("consumer lag not refreshed: %r", exc)
            self.broker_unanswered(exc)
            return
        self.broker_answered()
        self.set_lag({tp.partition: end for tp, end in ends.items() if end is not None}, positions)

    def broker_unanswered(self, exc: BaseException, now: float | None = None) -> None:
        """A call to the broker failed: after ``BROKER_AWAY_SECONDS`` of failures the worker says
        the broker is away, once, in the log, in ``/ready`` (not ready) and in a metric."""
        now = time.monotonic() if now is None else now
        if self.broker_failing_since is None:
            self.broker_failing_since = now
        away_for = now - self.broker_failing_since
        if not self.broker_away and away_for >= BROKER_AWAY_SECONDS:
            self.broker_away = True
            self.metrics.broker_reachable.set(0)
            self._update_ready()
            log.warning("the Kafka broker has not answered for %.0f s (%s): nothing is lost, documents wait "
                        "in their topic; /ready says not ready until it answers", away_for, type(exc).__name__)

    def broker_answered(self, now: float | None = None) -> None:
        """A call to the broker succeeded: a broker said away is back (logged with how long)."""
        now = time.monotonic() if now is None else now
        if self.broker_away and self.broker_failing_since is not None:
            log.warning("the Kafka broker answers again after %.0f s", now - self.broker_failing_since)
            self.broker_away = False
            self.metrics.broker_reachable.set(1)
            self._update_ready()
        self.broker_failing_since = None

    def status(self) -> dict[str, Any]:
        """The body of ``GET /ready``: readiness and what it depends on."""
        return {
            "ready": self.ready,
            "worker_id": self.settings.worker_id,
            "engine": "open" if self.engine is not None else "closed",
            "engine_error": self.engine_error,
            "degraded": self.degraded,
            "broker": "away" if self.broker_away else "answering",
            "assigned": sorted(f"{tp.topic}:{tp.partition}" for tp in self.assigned or ()),
            "assignment_received": self.assigned is not None,
            "uptime_seconds": round(time.time() - self.started_at, 3),
        }


def _exit_after(seconds: float) -> None:
    """Exit the process in ``seconds`` unless it ended by then (a thread: a stuck event loop cannot stop it)."""

    def expire() -> None:
        log.error("still running %.0fs after the stop began: exiting now (only acked offsets were committed)",
                  seconds)  # fmt: skip
        for handler in logging.getLogger().handlers:
            with contextlib.suppress(Exception):
                handler.flush()
        os._exit(EXIT_STOP_DEADLINE)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()


class NeardupApp(faust.App):
    """Opens the engine before the consumer starts and closes it after everything has stopped."""

    runtime: Runtime

    async def on_start(self) -> None:
        """Make sure the topics exist, then open the engine before the consumer starts."""
        await super().on_start()
        try:
            await ensure_topics(self.runtime.settings)
        except Exception as exc:  # the broker's auto-creation or the operators' topics may still do
            log.warning("topic check failed: %r", exc)
        await self.runtime.open_engine()

    async def on_stop(self) -> None:
        """Let the agent's window finish (or abandon it unacked) before Faust stops the consumer."""
        # before Faust stops the consumer: the agent's window finishes or is abandoned unacked
        self.runtime.begin_stop()
        await self.runtime.settle()
        await super().on_stop()

    async def _consumer_wait_empty(self, consumer: Any, logger: Any) -> None:
        # Faust waits here until every event taken is acked. A stopping worker acks nothing more:
        # the agent has finished or abandoned its window, and an abandoned one must stay unacked.
        if not self.runtime.stopping.is_set():
            await super()._consumer_wait_empty(consumer, logger)

    async def on_shutdown(self) -> None:
        """Close the engine after everything else has stopped."""
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
    hard_stop: bool = False,
) -> NeardupApp:
    """The worker's Faust app: topics, the dedup agent and the web views, nothing started yet.

    ``hard_stop`` (the worker process only) exits the process if a stop takes longer than
    ``STOP_DEADLINE_SECONDS``.
    """
    k = settings.kafka
    data = Path(datadir or Path(tempfile.gettempdir()) / "neardup-faust" / settings.app_id)
    data.parent.mkdir(parents=True, exist_ok=True)  # Faust creates only the last level
    runtime = Runtime(settings, registry=registry, engine_factory=engine_factory, hard_stop=hard_stop)
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
        producer_max_batch_size=k.producer_batch_bytes,
        topic_partitions=settings.topics.partitions,
        topic_replication_factor=settings.topics.replicas,
        # no @app.timer(on_leader=True) here: skip the leader-election topic
        topic_disable_leader=True,
        store="memory://",
        # a window holds up to max_count events in the stream buffer while the engine works
        stream_buffer_maxsize=max(4096, 2 * settings.window.max_count),
        web_enabled=True,
        web_port=settings.web_port,
        web_bind=web_bind or settings.web_bind,
        autodiscover=False,
        # Faust keeps table files there; with no tables it stays empty, so keep it out of the cwd
        datadir=str(data),
    )
    app.runtime = runtime
    runtime.topics = declare_topics(app, settings)

    async def _on_assigned(_sender: Any, /, *args: Any, signal: Any, **kwargs: Any) -> None:
        runtime.on_assigned(args[0] if args else kwargs.get("assigned", ()))

    app.on_partitions_assigned.connect(_on_assigned)

    async def _on_revoked(_sender: Any, /, *args: Any, signal: Any, **kwargs: Any) -> None:
        runtime.on_revoked(args[0] if args else kwargs.get("revoked", ()))

    app.on_partitions_revoked.connect(_on_revoked)

    @app.timer(LAG_REFRESH_SECONDS)
    async def _refresh_lag() -> None:
        if not app.rebalancing:
            await runtime.refresh_lag(app.consumer)

    register_views(app, runtime)
    if with_agent:
        from neardup.agents.dedup import attach_dedup_agent

        attach_dedup_agent(app, runtime)
        from neardup.agents.feedback import attach_feedback_agent

        attach_feedback_agent(app, runtime)
    return app


# ---------------------------------------------------------------------------------------------
# web views (Faust's aiohttp server on settings.web_port)


def _json_response(view: View, body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return view.bytes(encode_json(body), content_type="application/json", status=status, headers=headers)


def register_views(app: faust.App, runtime: Runtime) -> None:
    """``GET /health``, ``GET /ready``, ``GET /metrics``, ``POST /check`` and ``POST /search`` on the
    worker's web port."""
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
        """Dry run: one document in, its decision and evidence out; nothing stored or emitted.

        With ``check_token`` set, only requests with ``Authorization: Bearer <token>`` are served
        (401 otherwise). At most ``check_max_concurrent`` are served at once; more get 429 at once
        (never queued), so checks cannot take the worker's CPU and store from the agent.
        """

        async def post(self, request: Request) -> Response:
            checks = runtime.metrics.check_requests
            if not bearer_ok(request.headers.get("Authorization"), runtime.settings.check_token):
                checks.labels("unauthorized").inc()
                body = {"reason": "unauthorized", "error": "POST /check needs Authorization: Bearer <token>"}
                return _json_response(self, body, 401, {"WWW-Authenticate": 'Bearer realm="neardup"'})
            limit = runtime.settings.check_max_concurrent
            if runtime.checks_in_flight >= limit:
                checks.labels("busy").inc()
                body = {"reason": "busy", "error": f"{limit} checks in flight; retry later"}
                return _json_response(self, body, 429, {"Retry-After": "1"})
            runtime.checks_in_flight += 1
            try:
                outcome, status, body = await self._check(await request.read())
            finally:
                runtime.checks_in_flight -= 1
            checks.labels(outcome).inc()
            return _json_response(self, body, status)

        async def _check(self, body: bytes) -> tuple[str, int, Any]:
            from neardup.agents.dedup import decode_document
            from neardup.document import InvalidDocument

            try:
                # its images are decoded and hashed: off the event loop, which serves the consumer too
                doc = await asyncio.to_thread(decode_document, body, runtime.settings)
            except InvalidDocument as exc:
                return "invalid", 400, {"reason": exc.reason, "error": str(exc)}
            engine = runtime.engine
            if engine is None:
                return "not_ready", 503, {"reason": "not_ready", "error": "engine is not open"}
            try:
                decision = await engine.check(doc)
                record = decision.to_record()
            except InvalidDocument as exc:
                return "invalid", 400, {"reason": exc.reason, "error": str(exc)}
            except Exception as exc:
                log.exception("check failed for %r", doc.id)
                return "error", 500, {"reason": "engine_error", "error": f"{type(exc).__name__}: {exc}"}
            return "ok", 200, record

        async def get(self, request: Request) -> Response:
            return _json_response(self, {"reason": "method", "error": "POST one document as JSON"}, 405)

    @app.page("/search")
    class Search(WebView):
        """History: every near-duplicate of a text or a stored id across the store and the cold
        tier (what ``neardup search`` prints, as ``{"matches": [...], "first_publisher": ID}``).

        Guarded as ``POST /check`` is: the same bearer token, and it counts among the
        ``check_max_concurrent`` requests in flight (429 beyond); at most 100 matches a request.
        """

        async def post(self, request: Request) -> Response:
            from neardup.search import answer, searcher_for

            if not bearer_ok(request.headers.get("Authorization"), runtime.settings.check_token):
                body = {"reason": "unauthorized", "error": "POST /search needs Authorization: Bearer <token>"}
                return _json_response(self, body, 401, {"WWW-Authenticate": 'Bearer realm="neardup"'})
            if runtime.checks_in_flight >= runtime.settings.check_max_concurrent:
                return _json_response(self, {"reason": "busy", "error": "too many requests in flight; retry later"},
                                      429, {"Retry-After": "1"})  # fmt: skip
            engine = runtime.engine
            if engine is None:
                return _json_response(self, {"reason": "not_ready", "error": "engine is not open"}, 503)
            runtime.checks_in_flight += 1
            try:
                status, body = await answer(searcher_for(engine), await request.read())
            finally:
                runtime.checks_in_flight -= 1
            return _json_response(self, body, status)


def bearer_ok(header: str | None, token: SecretStr | None) -> bool:
    """True when no token is configured, or ``header`` is ``Bearer <token>`` (compared in constant time).

    An empty token counts as none (``NEARDUP_CHECK_TOKEN=`` from an unset compose variable).
    """
    if token is None or not token.get_secret_value():
        return True
    scheme, _, given = (header or "").strip().partition(" ")
    expected = token.get_secret_value().encode()
    return scheme.lower() == "bearer" and bool(given) and hmac.compare_digest(given.strip().encode(), expected)
