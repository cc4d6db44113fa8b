"""neardup: streaming near-duplicate detection for crawled text.

The public API (each name is imported on first use, so ``import neardup`` stays light)::

    from neardup import Deduplicator, AsyncDeduplicator, Decision, Evidence, Status, Reason, Settings, open_store

:class:`Deduplicator` decides documents (unique, or duplicate of which earlier one, and why), and
:class:`AsyncDeduplicator` does the same from async code (Jupyter, an async service);
:class:`Decision` and :class:`Evidence` are what it returns, :class:`Status` and :class:`Reason`
their string-valued enums; :class:`Settings` is the one settings object; :func:`open_store` opens
a fingerprint store by URL. ``neardup.engine.Engine`` is the async engine underneath.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Deduplicator": "neardup.api",
    "AsyncDeduplicator": "neardup.api",
    "Decision": "neardup.decision",
    "Evidence": "neardup.decision",
    "Status": "neardup.decision",
    "Reason": "neardup.decision",
    "Settings": "neardup.config",
    "open_store": "neardup.storage",
}

if TYPE_CHECKING:
    from neardup.api import AsyncDeduplicator, Deduplicator
    from neardup.config import Settings
    from neardup.decision import Decision, Evidence, Reason, Status
    from neardup.storage import open_store


def _version() -> str:
    # importlib.metadata costs about 50 ms of every start: read only when asked
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("neardup")
    except PackageNotFoundError:  # a checkout that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    """Import a public name on first use (and read ``__version__`` then)."""
    if name == "__version__":
        globals()[name] = _version()
        return globals()[name]
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'neardup' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "AsyncDeduplicator",
    "Decision",
    "Deduplicator",
    "Evidence",
    "Reason",
    "Settings",
    "Status",
    "__version__",
    "open_store",
]
