"""The Redis commands the fingerprint store needs: the ACL of its Redis user.

Production runs the store as a Redis user that may run these commands and nothing else, on its own
keys only. :data:`STORE_COMMANDS` is the one list; whoever changes what :mod:`neardup.storage.redis.store` sends
(its pipelines, its Lua scripts, redis-py's cluster client underneath) changes it here in the same
commit. ``tests/integration/test_redis_acl.py`` runs the engine as such a user against a real
Redis Cluster over TLS: a command missing here fails that test with NOPERM.

Commands called from inside a Lua script count: Redis checks the user's ACL for each of them.
Subcommands are ``container|sub`` (``script|load``). Give the list to Redis with
``ACL SETUSER neardup on >PASSWORD`` followed by :func:`acl_rules` (one rule per argument), or as
one ``user neardup on >PASSWORD ...`` line in ``redis.conf`` / an ACL file, on every node.
"""

from __future__ import annotations

STORE_COMMANDS: tuple[str, ...] = (
    # records, decisions, claims, shared state and generation markers, inside the scripts
    "get",
    "set",
    # the Lua scripts: loaded once per master, run by hash, re-sent by body where a node lacks them
    "script|load",
    "evalsha",
    "eval",
    # called inside the scripts: index lookup (ZRANGE BYLEX), index insert with bucket expiry
    "zrange",
    "zadd",
    "expireat",
    # the sets of ttl classes in use: registered (SADD) before a class's first entry, read by the
    # scripts (SMEMBERS) and at open
    "sadd",
    "smembers",
    # forget(): the archive removes a moved document's entries from the kept bucket
    "zrem",
    # kept(), forget() and migrate(): the scans of records and index keys, deletes (in scripts)
    "scan",
    "del",
    # stats(): keys and memory per master
    "dbsize",
    "info",
    # redis-py's cluster client reads the slot map at start and after MOVED
    "cluster|slots",
)
"""Every command (or ``container|subcommand``) the store's Redis user may run, beyond ``@connection``."""


def acl_rules(key_prefix: str = "nd") -> list[str]:
    """ACL rules for the store's user: its keys (``key_prefix:*``), no channels, and only
    ``@connection`` (less its admin and dangerous members, e.g. ``CLIENT KILL``) plus
    :data:`STORE_COMMANDS`. ``key_prefix`` is ``RedisSettings.key_prefix``."""
    return [
        "resetkeys",
        f"~{key_prefix}:*",
        "resetchannels",
        "-@all",
        "+@connection",
        "-@admin",
        "-@dangerous",
        *(f"+{command}" for command in STORE_COMMANDS),
    ]
