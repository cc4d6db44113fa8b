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

``neardup_refs.keys``: a document's index keys as one ``bigint[]`` (in the record's order), with a
GIN index over its elements (built in, no extension). A window's candidates are the directory rows
whose keys overlap the window's. One row per document instead of one per (key, document): the 38
heap tuples a document's entries took (a 24-byte header each, plus a btree entry of 40 bytes) are
one array, and GIN keeps one entry per key with a compressed posting list. The keys are not kept a
second time in ``neardup_documents.record`` (the record is written without them and read back with
the array's). ``fastupdate`` is off: a pending list would be scanned whole by every lookup.
Version 1 had a table ``neardup_index (key, ref)`` instead; migration 2 folds it into the arrays
(records archived under version 1 keep their keys inside, which readers prefer).

``neardup_refs.archived_tx`` (version 3): the id of the transaction that archived the row (its
``pg_current_xact_id()``), under a BRIN index (rows arrive in about that order and are never
updated: a few pages for millions of rows). A worker's filter of archived keys
(:mod:`neardup.storage.postgres.keyfilter`) reads the rows of the transactions it may not have
seen, not the whole directory. Migrating rewrites the directory once (the column's default is
evaluated for every row).

``neardup_key_filter`` (version 4): one row, the filter of archived keys as ``neardup archive``
last saved it (its words, its size in bits, the keys it holds, and the oldest transaction still
running when it had read them all), so that a worker starts from it and reads only what was
archived since instead of every key (10 s at a million documents). Its bits are random:
``STORAGE EXTERNAL`` stores them without trying to compress them.
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
    (2, "index keys as one array a document, under GIN", """
CREATE TABLE neardup_refs_v2 (
    ref bigint PRIMARY KEY,
    content_hash bytea NOT NULL,
    doc_id text NOT NULL,
    first_seen timestamptz NOT NULL,
    keys bigint[] NOT NULL
);
INSERT INTO neardup_refs_v2 (ref, content_hash, doc_id, first_seen, keys)
SELECT r.ref, r.content_hash, r.doc_id, r.first_seen, coalesce(k.keys, '{}')
FROM neardup_refs r LEFT JOIN (SELECT ref, array_agg(key ORDER BY key) AS keys FROM neardup_index GROUP BY ref) k
    ON k.ref = r.ref;
DROP TABLE neardup_refs;
DROP TABLE neardup_index;
ALTER TABLE neardup_refs_v2 RENAME TO neardup_refs;
ALTER INDEX neardup_refs_v2_pkey RENAME TO neardup_refs_pkey;
CREATE INDEX neardup_refs_hash ON neardup_refs (content_hash);
CREATE INDEX neardup_refs_keys ON neardup_refs USING gin (keys) WITH (fastupdate = off);
"""),
    (3, "the transaction that archived each directory row, for the workers' key filters", """
ALTER TABLE neardup_refs ADD COLUMN archived_tx bigint NOT NULL DEFAULT pg_current_xact_id()::text::bigint;
CREATE INDEX neardup_refs_archived_tx ON neardup_refs USING brin (archived_tx);
"""),
    (4, "the filter of archived keys as neardup archive saves it, for the workers to start from", """
CREATE TABLE neardup_key_filter (
    id smallint PRIMARY KEY CHECK (id = 1),
    bits bigint NOT NULL,
    keys bigint NOT NULL,
    since bigint NOT NULL,
    data bytea NOT NULL,
    saved_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE neardup_key_filter ALTER COLUMN data SET STORAGE EXTERNAL;
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
