"""URL scheme -> backend (``memory://``, ``file://PATH``, ``redis://``, ``rediss://``, ``rediscluster://``), and
the cold tier (``postgresql://``) behind it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neardup.storage.base import FingerprintStore, TTLPolicy
from neardup.storage.extras import require_extra
from neardup.storage.redact import redact_url


def open_store(url: str, ttl: Mapping[str, int | None] | None = None, archive_url: str | None = None,
               archive_key_filter_bytes: int | None = None, **options: Any) -> FingerprintStore:
    """Build (not yet open) the backend for ``url``, with the cold tier at ``archive_url`` behind it
    when given (:class:`~neardup.storage.postgres.tiered.TieredStore`; ``archive_key_filter_bytes``:
    the memory its filter of archived keys may take, None: the default). ``options`` go to network
    backends."""
    policy = TTLPolicy(by_type=dict(ttl or {}))
    warm = _warm_store(url, policy, options)
    if archive_url is None:
        return warm
    require_extra("psycopg", "archive", "the cold tier (--archive, archive_url)")
    from neardup.storage.postgres.archive import DEFAULT_KEY_FILTER_BYTES, ColdArchive
    from neardup.storage.postgres.tiered import TieredStore

    budget = DEFAULT_KEY_FILTER_BYTES if archive_key_filter_bytes is None else archive_key_filter_bytes
    return TieredStore(warm, ColdArchive(archive_url, key_filter_bytes=budget), policy)


def _warm_store(url: str, policy: TTLPolicy, options: dict[str, Any]) -> FingerprintStore:
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
