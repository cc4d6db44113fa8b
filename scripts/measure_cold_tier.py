"""Measure the cold tier (storage/postgres) at N archived documents: disk per document, the archive's
write rate, and the window lookup's latency.

N documents of the development set's sizes (a 140-byte b-bit signature, a 470-byte profile, 38
index keys: the default layout's one SimHash block and 37 LSH bands, a deflated decision) are
archived with :meth:`ColdArchive.put` in batches of 1,000, first seen over twelve months (twelve
partitions). Then:

- ``bytes_per_document``: the documents' partitions and the directory (with the keys arrays), each
  with its indexes (``pg_total_relation_size``), after ``VACUUM ANALYZE``, divided by N;
- ``archive_docs_per_s``: the write rate of :meth:`ColdArchive.put` (one transaction a batch);
- ``lookup_ms``: :meth:`ColdArchive.lookup` of a window of 1,000 documents (38,000 index keys,
  1,000 content hashes, 1,000 ids), 5 % of them archived ones, as the tiered store sends it for a
  window of announcements: p50 and p99 over ``--windows`` windows, and :meth:`ColdArchive.fetch`
  of the records the lookup proposed.

The measurement is ``neardup bench cold``'s (:func:`neardup.bench.cold.volume`), here against a
server of your own, for sizes a throwaway cluster is no place for (10 M documents take hours).
Run: ``python scripts/measure_cold_tier.py --documents N --archive postgresql://...`` on an empty
database (the script migrates it); prints one JSON line. ``--reuse`` measures the lookups again on
a database an earlier run filled (no load; the archived documents looked up are sampled from it).
docs/cold-tier.md has the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json

from neardup.bench.cold import volume

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--archive", required=True, help="postgresql://USER:PASSWORD@HOST:PORT/DB (an empty database)")
    parser.add_argument("--windows", type=int, default=200)
    parser.add_argument("--reuse", action="store_true", help="measure again on a database an earlier run filled")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(volume(args.archive, args.documents, args.windows, args.reuse))))
