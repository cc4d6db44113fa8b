"""``neardup archive``: move the documents kept forever from the warm store to the cold tier.

Page by page (:meth:`~neardup.storage.base.FingerprintStore.kept`): the documents first seen
before the cutoff are copied (one transaction, idempotent), verified (the same record bytes and
every index entry read back), and only then forgotten by the warm store. Killed at any point, the
next run finds each document in one of three states and finishes it: not copied (copied now),
copied but still warm (the copy is a no-op, verified, forgotten), or gone from the warm store
(not seen again). A document is never in neither tier, and never twice in the cold one: its row's
key (ref, first seen) is the same on every run, because its decision (which gives the time) is
forgotten with its record.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from neardup.storage.base import FingerprintStore, KeptDocument
from neardup.storage.postgres.archive import ColdArchive, ColdDocument


def first_seen(doc: KeptDocument) -> float:
    """When the document was decided (its decision's evidence), else its record's publication time."""
    decided = doc.decision.decided_at if doc.decision is not None else None
    return decided if decided is not None else doc.record.published_at


@dataclass(slots=True)
class MoveReport:
    """What one run did."""

    seen: int = 0  # documents kept forever that the warm store listed
    moved: int = 0  # forgotten by the warm store after a verified copy
    copied: int = 0  # rows new in the cold tier (a rerun after a kill copies fewer than it moves)
    unverified: int = 0  # copied but not read back whole: left in the warm store
    younger: int = 0  # first seen after the cutoff: left in the warm store

    def as_dict(self) -> dict[str, int]:
        """The report as JSON-ready numbers."""
        return {"seen": self.seen, "moved": self.moved, "copied": self.copied, "unverified": self.unverified,
                "younger": self.younger}


async def move(warm: FingerprintStore, cold: ColdArchive, older_than: float, batch: int = 500,
               now: float | None = None) -> MoveReport:
    """Move every kept document first seen more than ``older_than`` seconds before ``now``."""
    cutoff = (time.time() if now is None else now) - older_than
    report = MoveReport()
    cursor = ""
    while True:
        page = await warm.kept(cursor, batch)
        report.seen += len(page.documents)
        due = [ColdDocument(d.record, d.decision, seen, d.record.published_at)
               for d in page.documents if (seen := first_seen(d)) <= cutoff]  # fmt: skip
        report.younger += len(page.documents) - len(due)
        if due:
            await _move_page(warm, cold, due, report)
        cursor = page.cursor
        if not cursor:
            return report


async def _move_page(warm: FingerprintStore, cold: ColdArchive, due: list[ColdDocument], report: MoveReport) -> None:
    """Copy, verify, then forget one page."""
    report.copied += await cold.put(due)
    held = await cold.verify([d.record for d in due])
    verified = [d.record for d in due if d.record.ref in held]
    report.unverified += len(due) - len(verified)
    report.moved += await warm.forget(verified)
