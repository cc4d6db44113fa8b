"""neardup's error classes by cause, at the bottom of the import graph so that the store can raise them.

``neardup.errors`` (service/errors.py) is the module users import: it re-exports these and adds the
domain's own (configuration, input, broker). This module imports nothing else of neardup's.

Every class says what failed; ``hint`` says what to do about it (the CLI prints both on one line).
A retry decision is a check on the class (:func:`is_transient`), never on the message text.
"""

from __future__ import annotations

from typing import ClassVar

#: the logger of notices meant for the person running a command (a store that does not answer and
#: is being retried): the CLI prints them on stderr as ``neardup: MESSAGE``, a worker logs them
NOTICE_LOGGER = "neardup.notice"


class NeardupError(Exception):
    """Base of every error neardup raises on purpose. ``hint``: what the user can do about it."""

    #: short machine-readable code (dead-letter ``reason``, CLI summaries)
    reason: str = "error"
    #: worth retrying the same call later (see :func:`is_transient`)
    transient: ClassVar[bool] = False
    #: the hint when the raiser gives none
    default_hint: ClassVar[str | None] = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        """``message``: what failed; ``hint``: what to do (default: the class's ``default_hint``)."""
        super().__init__(message)
        self.hint = hint if hint is not None else self.default_hint

    def one_line(self) -> str:
        """The message and the hint on one line (no newlines), as the CLI prints it."""
        text = str(self) if not self.hint else f"{self}; {self.hint}"
        return " ".join(text.split())


class StoreError(NeardupError, RuntimeError):
    """The fingerprint store failed. A bare ``StoreError`` is of unknown cause: retried as transient.

    Backends raise one of the subclasses where the cause is known.
    """

    reason = "store_error"
    transient = True
    default_hint = "check that the store is up and that NEARDUP_STORE_URL / --store points at it"


class StoreUnavailableError(StoreError):
    """Transient: connection lost or refused, timeout, cluster down or failing over. Retried."""

    reason = "store_unavailable"
    transient = True


class StoreCorruptError(StoreError):
    """Permanent: a stored record cannot be decoded. Never retried; the document is rejected with this reason."""

    reason = "store_corrupt"
    transient = False
    default_hint = "the store holds a record this version cannot read (another version or program wrote it?)"


class StoreAuthError(StoreError):
    """Permanent: the store refused the credentials (wrong password, ACL). Reported at once, not retried."""

    reason = "store_auth"
    transient = False
    default_hint = "check NEARDUP_REDIS__USERNAME / NEARDUP_REDIS__PASSWORD and the server's ACL"


class StoreLostDataError(StoreError):
    """Permanent: the store no longer holds what this worker wrote (restarted empty, flushed, or
    another store behind the same address). Deciding on would call every repeat unique, so the
    worker stops deciding and alerts instead."""

    reason = "store_lost_data"
    transient = False
    default_hint = ("the store's generation marker changed or vanished: restore the store's data, or restart "
                    "the workers to accept the store as it is now (a new generation)")


class StoreLayoutError(StoreError):
    """Permanent: the store's index was written in another layout than these settings read (another
    shard count, another bucket width): every lookup would look in the wrong keys and find nothing."""

    reason = "store_layout"
    transient = False
    default_hint = ("use the store's redis.index_shards and redis.index_bucket_seconds (neardup store migrate "
                    "re-files another width)")


class MissingExtraError(NeardupError, ImportError):
    """A feature needs an optional part that is not installed (``pip install 'neardup[EXTRA]'``)."""

    reason = "missing_extra"

    def __init__(self, feature: str, extra: str) -> None:
        """``feature``: what needs the extra (a command, a store scheme); ``extra``: its name in pyproject.toml."""
        super().__init__(f"{feature} needs the optional part '{extra}'",
                         hint=f"install it with: pip install 'neardup[{extra}]'")  # fmt: skip
        self.feature = feature
        self.extra = extra


def is_transient(exc: BaseException) -> bool:
    """True for errors worth retrying the same call: not the document's fault, and may pass.

    neardup's own errors say so by class (``StoreUnavailableError`` and a ``StoreError`` of unknown
    cause: yes; ``StoreCorruptError``, ``StoreAuthError``: no); of the others only the built-in
    ``ConnectionError`` and ``TimeoutError`` count.
    """
    if isinstance(exc, NeardupError):
        return type(exc).transient
    return isinstance(exc, ConnectionError | TimeoutError)
