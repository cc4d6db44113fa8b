"""``neardup worker``: checks what a worker needs, then runs the Faust worker until SIGTERM/SIGINT.

Before Faust starts, every cause of a failed start that a user can fix is checked and reported in
one line (:class:`neardup.errors.ConfigError`, ``BrokerError``, ``StoreError``): the web and
metrics ports are free, the broker answers, the store opens. Faust itself would report them as a
traceback, or not at all.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket

from neardup.config import Settings
from neardup.errors import ConfigError
from neardup.retry import Backoff, retry

log = logging.getLogger("neardup.worker")


def check_port_free(host: str, port: int, setting: str, flag: str) -> None:
    """Raise :class:`ConfigError` naming ``setting`` and ``flag`` if ``host:port`` cannot be bound (0: any port)."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        # the servers bind with SO_REUSEADDR too: only a listening socket makes the port taken
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(f"port {port} on {host} is in use (another worker on this host?)",
                                  hint=f"set {setting} or {flag} to a free port") from exc  # fmt: skip
            raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}",
                              hint=f"check web_bind / --web-bind and {setting} / {flag}") from exc  # fmt: skip


def check_ports(settings: Settings) -> None:
    """The web port and (when separate) the metrics port are free on ``settings.web_bind``."""
    check_port_free(settings.web_bind, settings.web_port, "NEARDUP_WEB_PORT", "--web-port")
    if settings.metrics_port and settings.metrics_port != settings.web_port:
        check_port_free(settings.web_bind, settings.metrics_port, "NEARDUP_METRICS_PORT", "--metrics-port")


async def preflight(settings: Settings) -> None:
    """The broker answers and the store opens (then closes again: the worker opens its own).

    A store that is not up yet is waited for up to ``retry.startup_deadline_seconds``.
    """
    from prometheus_client import CollectorRegistry

    from neardup.agents.app import open_service_engine
    from neardup.agents.client import check_broker

    await check_broker(settings)
    r = settings.retry

    def not_yet(exc: Exception, delay: float) -> None:
        log.warning("store not available yet (%s: %s); retrying in %.1fs", type(exc).__name__, exc, delay)

    backoff = Backoff.from_settings(r, deadline=r.startup_deadline_seconds)
    engine = await retry(lambda: open_service_engine(settings, CollectorRegistry()), backoff, on_retry=not_yet)
    await engine.close()


def start_metrics_server(settings: Settings, registry: object) -> None:
    """Prometheus' own port (deploy/ scrapes it); /metrics on the web port serves the same registry."""
    from prometheus_client import start_http_server

    if not settings.metrics_port or settings.metrics_port == settings.web_port:
        return
    try:
        start_http_server(settings.metrics_port, addr=settings.web_bind, registry=registry)  # type: ignore[arg-type]
    except OSError as exc:  # taken since check_ports looked
        raise ConfigError(f"metrics port {settings.metrics_port}: {exc.strerror}",
                          hint="set NEARDUP_METRICS_PORT or --metrics-port to a free port") from exc  # fmt: skip


def run_worker(settings: Settings, *, loglevel: str | None = None) -> int:
    """Run one dedup worker until SIGTERM/SIGINT; returns the exit code.

    Raises ConfigError, BrokerError or StoreError (one line each) when it cannot start.
    """
    import faust

    from neardup.agents.app import create_app

    check_ports(settings)
    asyncio.run(preflight(settings))
    # hard_stop: this process exits at the latest STOP_DEADLINE_SECONDS after a SIGTERM
    app = create_app(settings, web_bind=settings.web_bind, hard_stop=True)
    start_metrics_server(settings, app.runtime.registry)
    worker = faust.Worker(app, loglevel=(loglevel or settings.log_level).lower(), quiet=True)
    try:
        worker.execute_from_commandline()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0
