"""Every error neardup raises on purpose, by cause: the one module users import (``neardup.errors``).

``NeardupError`` is the base; each error carries a ``hint`` (what to do) next to its message.

- :class:`ConfigError`: settings or flags that cannot work (bad value, port taken, file format).
- :class:`InputError`: input that cannot be read or validated; ``InvalidDocument`` (one bad
  document, with a ``reason`` code) is one.
- :class:`BrokerError`: the Kafka broker is unreachable or refused a request.
- :class:`MissingExtraError`: an optional part is not installed.
- The store's errors (defined in ``neardup.storage.errors`` so the store can raise them):
  ``StoreError`` and, by cause, ``StoreUnavailableError`` (transient: retried),
  ``StoreCorruptError`` (permanent: never retried, the document is rejected with reason
  ``store_corrupt``) and ``StoreAuthError`` (permanent: reported at once).
"""

from __future__ import annotations

from neardup.storage.errors import (
    MissingExtraError,
    NeardupError,
    StoreAuthError,
    StoreCorruptError,
    StoreError,
    StoreLayoutError,
    StoreLostDataError,
    StoreUnavailableError,
    is_transient,
)

__all__ = [
    "BrokerError",
    "ConfigError",
    "InputError",
    "MissingExtraError",
    "NeardupError",
    "StoreAuthError",
    "StoreCorruptError",
    "StoreError",
    "StoreLayoutError",
    "StoreLostDataError",
    "StoreUnavailableError",
    "is_transient",
]


class ConfigError(NeardupError, ValueError):
    """Settings, flags or a settings file that cannot work; fixed by the user, never retried."""

    reason = "bad_config"


class InputError(NeardupError, ValueError):
    """Input that cannot be read (missing file, unknown format) or a document that fails validation."""

    reason = "bad_input"


class BrokerError(NeardupError):
    """The Kafka broker is unreachable or refused a request."""

    reason = "broker_error"
