"""The cold tier's schema and its versioned migrations (``neardup archive migrate``).

Each migration runs once, in its own transaction, and is recorded in ``neardup_migrations``; a
rerun applies only what is missing, so the command is idempotent. Migrations are append-only: a
released step is never edited, a change is a new step.

``neardup_documents``: one row per archived document, partitioned by month of ``first_seen`` (when
the document was decided), because that is the order in which rows arrive and age: a month is
created as it is first written and can be detached or moved to cheaper disk as a whole. Its key is
(ref, first_seen) because PostgreSQL wants the partition column in every unique index; a
document's first_seen never changes, so a repeated archive of it meets the same key.

``neardup_refs``: the directory of archived documents, one small row each (ref, content hash, id,
first seen), not partitioned. A window asks it who owns its content hashes and which of its ids
were archived (replays): one btree probe a value, where asking the partitioned table would probe
every month's index. It is also what makes a document archived once: its row goes in first,
``ON CONFLICT DO NOTHING``, and the document's other rows only with a new one.

``neardup_index``: one row per (index key, ref), a btree on (key, ref): a window's candidates are
one ``WHERE key = ANY(...)`` (an index-only scan), and a repeated insert of the same entry is a
no-op. It is not partitioned either: a lookup asks for keys, never for months.
"""

from __future__ import annotations

from typing import Final

MIGRATIONS: Final[tuple[tuple[int, str, str], ...]] = (
    (1, "documents by month, index entries by key", """
CREATE TABLE neardup_documents (
    ref bigint NOT NULL,
    doc_id text NOT NULL,
    content_type text NOT NULL,
    content_hash bytea NOT NULL,
    record bytea NOT NULL,
    decision bytea,
    first_seen timestamptz NOT NULL,
    published_at timestamptz,
    archived_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ref, first_seen)
) PARTITION BY RANGE (first_seen);
CREATE TABLE neardup_refs (
    ref bigint PRIMARY KEY,
    content_hash bytea NOT NULL,
    doc_id text NOT NULL,
    first_seen timestamptz NOT NULL
);
CREATE INDEX neardup_refs_hash ON neardup_refs (content_hash);
CREATE TABLE neardup_index (
    key bigint NOT NULL,
    ref bigint NOT NULL,
    PRIMARY KEY (key, ref)
);
"""),
)
"""(version, what it does, SQL)."""

LATEST: Final = MIGRATIONS[-1][0]

LEDGER = """
CREATE TABLE IF NOT EXISTS neardup_migrations (
    version integer PRIMARY KEY,
    description text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)"""

# one migration at a time, whoever runs it (two `archive migrate` started together): a
# transaction-scoped advisory lock, released at commit
LOCK = "SELECT pg_advisory_xact_lock(7235836516785516400)"


def month_partition(year: int, month: int) -> tuple[str, str, str]:
    """(table name, first day, first day of the next month) of one month's partition."""
    nxt = (year + month // 12, month % 12 + 1)
    return f"neardup_documents_{year:04d}{month:02d}", f"{year:04d}-{month:02d}-01", f"{nxt[0]:04d}-{nxt[1]:02d}-01"
