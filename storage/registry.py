"""URL scheme -> backend (``memory://``, ``file://PATH``, ``redis://``, ``rediss://``, ``rediscluster://``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neardup.storage.base import FingerprintStore, TTLPolicy
from neardup.storage.extras import require_extra
from neardup.storage.redact import redact_url


def open_store(url: str, ttl: Mapping[str, int | None] | None = None, **options: Any) -> FingerprintStore:
    """Build (not yet open) the backend for ``url``. ``options`` go to network backends."""
    policy = TTLPolicy(by_type=dict(ttl or {}))
    scheme, _, rest = url.partition("://")
    if scheme == "memory":
        from neardup.storage.memory import MemoryFingerprintStore

        return MemoryFingerprintStore(url=url, ttl=policy)
    if scheme == "file":
        if not rest:
            raise ValueError("file:// needs a path, e.g. file://./neardup-store.json")
        from neardup.storage.file import FileFingerprintStore

        return FileFingerprintStore(rest, ttl=policy)
    if scheme in {"redis", "rediss", "rediscluster"}:
        require_extra("redis", "redis", f"the store {scheme}://")
        from neardup.storage.redis.store import RedisFingerprintStore

        return RedisFingerprintStore(url=url, ttl=policy, **options)
    raise ValueError(f"unknown store URL scheme {scheme!r} in {redact_url(url)!r}")
