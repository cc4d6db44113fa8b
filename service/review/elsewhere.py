"""The review page's "where else": for the document under review, every near-duplicate the store
and the cold tier hold, with the cluster's first publisher. It is :func:`neardup.search.
search_stores`, the search ``neardup search --id`` prints, bounded by a limit and escaped to HTML.

A search opens the store and the cold tier and closes them again (one at a time, each document's
answer kept): the page's server threads each run their own event loop, and a connection belongs
to the loop that opened it.
"""

from __future__ import annotations

import asyncio
import html
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from neardup.errors import InputError, NeardupError
from neardup.search import Found, Match, iso

if TYPE_CHECKING:
    from neardup.config import Settings

log = logging.getLogger(__name__)

esc = html.escape
DEFAULT_LIMIT = 10
COLUMNS = ("document", "tier", "rule", "Jaccard", "Hamming", "first seen", "published")


@dataclass
class WhereElse:
    """Searches of the stores ``settings`` name, at most ``limit`` matches each."""

    settings: Settings
    limit: int = DEFAULT_LIMIT
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _shown: dict[str, str] = field(default_factory=dict, repr=False)

    def describe(self) -> str:
        """Where it searches, passwords left out."""
        shown = self.settings.redacted()
        tiers = [f"store {shown['store_url']}"]
        if shown["archive_url"]:
            tiers.append(f"cold tier {shown['archive_url']}")
        return " and ".join(tiers)

    def html(self, doc_id: str, other_id: str) -> str:
        """Escaped HTML: the matches of stored document ``doc_id`` (``other_id``, the pair's A, marked)."""
        with self._lock:
            key = f"{doc_id}\0{other_id}"
            if key not in self._shown:
                self._shown[key] = self._search(doc_id, other_id)
            return self._shown[key]

    def _search(self, doc_id: str, other_id: str) -> str:
        from neardup.search import search_stores

        searched, note = doc_id, ""
        try:
            try:
                found = asyncio.run(search_stores(self.settings, None, doc_id))
            except InputError:
                # an exact copy stores no record, only its decision: its original's neighbours are its own
                searched, note = other_id, f"B is not stored (an exact copy stores no record): those of A, {other_id}. "
                found = asyncio.run(search_stores(self.settings, None, other_id))
        except NeardupError as exc:  # not stored, a store that does not answer: say so, keep serving
            log.warning("where else %s: %s", doc_id, exc.one_line())
            return f'<p class="error">where else: {esc(exc.one_line())}</p>'
        return (f'<p class="note">{esc(note)}</p>' if note else "") + render(found, searched, other_id, self.limit)


def render(found: Found, doc_id: str, other_id: str, limit: int) -> str:
    """The ``limit`` most similar matches as a table (the order ``neardup search`` prints them in),
    the cluster's first publisher above it."""
    matches = found.matches[:limit]
    if not matches:
        return f'<p class="none">no near-duplicate of <code>{esc(doc_id)}</code> in the store or the cold tier</p>'
    first = found.first_publisher or ""
    head = "".join(f"<th>{esc(title)}</th>" for title in COLUMNS)
    body = "".join(_row(m, other_id, first) for m in matches)
    more = f" (the {limit} most similar of {len(found.matches)})" if len(found.matches) > limit else ""
    return (f'<p class="first">first publisher of the cluster: <code>{esc(first)}</code>'
            f"{' (B itself)' if first == doc_id else ''}; {len(matches)} other documents{esc(more)}</p>"
            f'<table class="where"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')  # fmt: skip


def _row(m: Match, other_id: str, first: str) -> str:
    cells = (m.doc_id, m.tier, m.rule, f"{m.jaccard:.4g}", str(m.hamming), iso(m.first_seen) or "–",
             iso(m.published_at) or "–")  # fmt: skip
    marks = " ".join(c for c, on in (("a", m.doc_id == other_id), ("first", m.doc_id == first)) if on)
    tds = "".join(f"<td>{esc(c)}</td>" for c in cells)
    return f'<tr data-id="{esc(m.doc_id)}" data-tier="{esc(m.tier)}" class="{marks}">{tds}</tr>'
