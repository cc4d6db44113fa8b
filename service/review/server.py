"""``neardup review``: a local web page to confirm or overturn decisions, one pair at a time.

The page lists the duplicate decisions of a decisions file (``neardup dedup -o``), and on request
the unique ones whose evidence shows a near match close to the threshold, as pairs side by side
with the differing passages highlighted, the decision's evidence and :func:`neardup.explain.
explain_pair`'s account. Each confirm / overturn writes one :class:`neardup.learning.feedback.PairFeedback`
to a sink (a JSONL file, or the ``feedback`` topic through ``neardup.agents.feedback_sink``).

Served by the standard library (``ThreadingHTTPServer``), on loopback by default, with no asset
from elsewhere. Document texts are untrusted: everything is HTML-escaped on the server, the page
only sets text, and a nonce-based Content-Security-Policy keeps any injected script from running.
Writes need the page's random token and a JSON body; on a loopback address, requests must name
a loopback host (no DNS rebinding).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import hmac
import html
import importlib
import ipaddress
import json
import logging
import math
import secrets
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import click

from neardup.cli import (
    archive_option,
    batch_store_settings,
    broker_option,
    config_option,
    load_cli_settings,
    require_store_extra,
    store_option,
)
from neardup.config.settings import Settings
from neardup.decision import Status
from neardup.errors import ConfigError, InputError
from neardup.files.outputs import Named, check_paths
from neardup.files.records import Row, read_rows
from neardup.learning.feedback import (
    DecisionFeedback,
    FeedbackRecord,
    FeedbackSink,
    FeedbackSinkError,
    FileFeedbackSink,
    PairFeedback,
    read_feedback,
    utc_now,
)
from neardup.media.hashes import limits_of
from neardup.review.elsewhere import DEFAULT_LIMIT, WhereElse
from neardup.review.thumbnails import images_html
from neardup.search import MAX_LIMIT

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
PAGE_SIZE = 10
NEAR_MARGIN = 0.15  # a unique decision is "near" within this much Jaccard below jaccard_low
CONTEXT_CHARS = 160  # identical text shown around each difference; longer runs fold away
CHAR_DIFF_LIMIT = 4_000_000  # character diff only where len(a) * len(b) stays below this
MAX_BODY_BYTES = 64 * 1024
LIST_ITEMS_SHOWN = 64


class ReviewInputError(InputError):
    """A decisions, documents or feedback file the page cannot use; the message is one line."""


class Kind(Enum):
    """Why a pair is on the page."""

    DUPLICATE = "duplicate"  # the engine merged b into a
    NEAR = "near"  # the engine kept b unique although a was close


class Verdict(Enum):
    """A reviewer's answer about one decision."""

    CONFIRM = "confirm"
    OVERTURN = "overturn"


@dataclass(frozen=True)
class ReviewItem:
    """One decision to review: document ``doc_id`` against ``other_id``."""

    index: int
    doc_id: str
    other_id: str
    kind: Kind
    evidence: Mapping[str, Any]
    line: int

    def feedback(self, verdict: Verdict, *, reviewer: str | None, note: str | None) -> PairFeedback:
        """The record a verdict writes: the pair with the label the reviewer gave it."""
        decided_duplicate = self.kind is Kind.DUPLICATE
        is_duplicate = decided_duplicate if verdict is Verdict.CONFIRM else not decided_duplicate
        return PairFeedback(a=self.other_id, b=self.doc_id, is_duplicate=is_duplicate,
                            reviewer=reviewer, note=note, at=utc_now())  # fmt: skip

    def verdict_of(self, record: FeedbackRecord) -> Verdict | None:
        """What an earlier record says about this item, or None when it is about something else."""
        if isinstance(record, PairFeedback) and {record.a, record.b} == {self.doc_id, self.other_id}:
            return Verdict.CONFIRM if record.is_duplicate == (self.kind is Kind.DUPLICATE) else Verdict.OVERTURN
        if isinstance(record, DecisionFeedback) and record.id == self.doc_id:
            return Verdict.CONFIRM if record.correct else Verdict.OVERTURN
        return None


# --------------------------------------------------------------------------- inputs


DECISIONS_HINT = "give the decisions file neardup dedup -o wrote (JSONL, CSV or Parquet)"
DOCUMENTS_HINT = "give --docs the documents dedup read (id, text; JSONL, CSV or Parquet)"


def _rows(path: Path, hint: str) -> Iterable[Row]:
    return read_rows(path, error=ReviewInputError, hint=hint)


def _id_field(row: Mapping[str, Any], name: str, where: str) -> str:
    value = row.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value:
        raise ReviewInputError(f"{where}: field {name!r} must be a document id, got {value!r}")
    return value


def _near_match(evidence: Mapping[str, Any], margin: float, default_low: float) -> str | None:
    """The document a unique decision was close to, if its evidence shows a near match."""
    critical = evidence.get("critical")
    if isinstance(critical, Mapping) and critical.get("against"):
        return str(critical["against"])  # a rule matched; a critical difference overruled it
    matched, jaccard = evidence.get("matched_id"), evidence.get("jaccard")
    if not matched or not isinstance(jaccard, int | float):
        return None
    thresholds = evidence.get("thresholds")
    low = thresholds.get("jaccard_low", default_low) if isinstance(thresholds, Mapping) else default_low
    return str(matched) if jaccard >= float(low) - margin else None


def load_decisions(path: Path, *, near_threshold: bool = False, near_margin: float = NEAR_MARGIN,
                   default_jaccard_low: float = 0.45) -> list[ReviewItem]:
    """The decisions to review, in file order. Every line must be a decision (``id``, ``status``
    unique or duplicate, ``duplicate_of`` for duplicates, ``evidence`` an object); anything else
    raises :class:`ReviewInputError` naming the line."""
    items: list[ReviewItem] = []
    rows = 0
    for row in _rows(path, DECISIONS_HINT):
        where, data = row.where, row.data
        rows += 1
        doc_id = _id_field(data, "id", where)
        status, evidence = data.get("status"), _evidence(data.get("evidence"))
        if status is None:
            raise ReviewInputError(f"{where}: no 'status': is this a decisions file (neardup dedup -o)?")
        if not isinstance(evidence, dict):
            raise ReviewInputError(f"{where}: field 'evidence' must be an object, got {evidence!r}")
        try:
            decided = Status(status)
        except ValueError:
            raise ReviewInputError(f"{where}: status must be 'unique' or 'duplicate', got {status!r}") from None
        if decided is Status.DUPLICATE:
            other = _id_field(data, "duplicate_of", where)
            kind = Kind.DUPLICATE
        else:
            near = _near_match(evidence, near_margin, default_jaccard_low) if near_threshold else None
            if near is None or near == doc_id:
                continue
            other, kind = near, Kind.NEAR
        items.append(ReviewItem(len(items), doc_id, other, kind, evidence, row.position))
    if rows == 0:
        raise ReviewInputError(f"{path}: holds no decisions")
    return items


def _evidence(value: Any) -> Any:
    """The evidence of a decision: an object (JSONL), or its JSON text (CSV and Parquet decisions files)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def load_documents(path: Path, wanted: set[str]) -> dict[str, dict[str, Any]]:
    """The documents of a JSONL file whose ids are in ``wanted`` (others are not kept in memory).

    Every line must be an object with an ``id``; a wanted document needs a string ``text`` (or,
    with ``images``, none: it is shown as empty); a wanted id missing from the file is an error."""
    docs: dict[str, dict[str, Any]] = {}
    for row in _rows(path, DOCUMENTS_HINT):
        doc_id = _id_field(row.data, "id", row.where)
        if doc_id in wanted and doc_id not in docs:
            text = row.data.get("text")
            if text is None and row.data.get("images") is not None:
                text = ""  # a photograph with no words, as validation accepts it
            if not isinstance(text, str):
                raise ReviewInputError(f"{row.where}: document {doc_id!r} has no string 'text'")
            docs[doc_id] = {**row.data, "id": doc_id, "text": text}
    missing = sorted(wanted - docs.keys())
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ReviewInputError(f"{path}: document {missing[0]!r}{more} named by the decisions is not in it")
    return docs


def earlier_verdicts(items: list[ReviewItem], records: Iterable[FeedbackRecord]) -> dict[int, Verdict]:
    """Items already reviewed by ``records`` (the last record about an item wins)."""
    by_doc: dict[str, list[ReviewItem]] = {}
    for item in items:
        by_doc.setdefault(item.doc_id, []).append(item)
    out: dict[int, Verdict] = {}
    for record in records:
        ids = (record.a, record.b) if isinstance(record, PairFeedback) else (record.key(),)
        for item in (it for doc in ids for it in by_doc.get(doc, ())):
            verdict = item.verdict_of(record)
            if verdict is not None:
                out[item.index] = verdict
    return out


# --------------------------------------------------------------------------- rendering

esc = html.escape


def _line_chunks(text: str) -> list[str]:
    return text.splitlines(keepends=True) or [text]


def diff_blocks(a: str, b: str) -> list[tuple[bool, str, str]]:
    """The two texts as aligned blocks ``(changed, text in a, text in b)``; unchanged blocks hold
    the same text on both sides. Lines are aligned first, then the characters of replaced lines
    (cheap on long texts, exact where they differ)."""
    blocks: list[tuple[bool, str, str]] = []
    la, lb = _line_chunks(a), _line_chunks(b)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes():
        sa, sb = "".join(la[i1:i2]), "".join(lb[j1:j2])
        if tag == "replace" and len(sa) * len(sb) <= CHAR_DIFF_LIMIT:
            chars = difflib.SequenceMatcher(None, sa, sb, autojunk=False)
            blocks.extend((ctag != "equal", sa[c1:c2], sb[d1:d2]) for ctag, c1, c2, d1, d2 in chars.get_opcodes())
        else:
            blocks.append((tag != "equal", sa, sb))
    merged: list[tuple[bool, str, str]] = []
    for changed, ta, tb in blocks:
        if merged and merged[-1][0] == changed:
            merged[-1] = (changed, merged[-1][1] + ta, merged[-1][2] + tb)
        elif ta or tb:
            merged.append((changed, ta, tb))
    return merged


def _fold(text: str, tail: int) -> str:
    """Escaped unchanged text: its first CONTEXT_CHARS and last ``tail`` characters shown, the
    middle folded into a ``<details>`` so that the differences stay close together."""
    if len(text) <= 2 * CONTEXT_CHARS + tail:
        return esc(text)
    middle = text[CONTEXT_CHARS : len(text) - tail]
    return (f'{esc(text[:CONTEXT_CHARS])}<details class="same"><summary>… {len(middle):,} identical characters …'
            f"</summary>{esc(middle)}</details>{esc(text[len(text) - tail :])}")


def diff_html(a: str, b: str) -> tuple[str, str, int]:
    """Escaped HTML of both texts, what only one side has in ``<del>`` (a) / ``<ins>`` (b), long
    unchanged runs folded the same way on both sides; and the number of differing passages."""
    left: list[str] = []
    right: list[str] = []
    blocks = diff_blocks(a, b)
    for k, (changed, ta, tb) in enumerate(blocks):
        if changed:
            left.append(f'<del class="chg">{esc(ta)}</del>' if ta else "")
            right.append(f'<ins class="chg">{esc(tb)}</ins>' if tb else "")
        else:
            same = _fold(ta, CONTEXT_CHARS if k < len(blocks) - 1 else 0)
            left.append(same)
            right.append(same)
    return "".join(left), "".join(right), sum(1 for changed, _, _ in blocks if changed)


def _scalar(value: Any) -> str:
    if value is None:
        return '<span class="none">–</span>'
    if isinstance(value, float):
        return esc(f"{value:.4g}" if math.isfinite(value) else str(value))
    return esc(str(value))


def _is_weighted_list(value: list[Any]) -> bool:
    return bool(value) and all(
        isinstance(x, list | tuple) and len(x) == 2 and isinstance(x[0], str)
        and isinstance(x[1], int | float) and not isinstance(x[1], bool) for x in value)  # fmt: skip


def render_value(value: Any) -> str:
    """Escaped HTML for any JSON-like value: objects as key/value tables, (word, weight) lists as
    chips, other lists inline. Keys are shown as they are, so new fields appear without changes."""
    if isinstance(value, Mapping):
        if not value:
            return '<span class="none">–</span>'
        rows = "".join(f"<tr><th>{esc(str(k).replace('_', ' '))}</th><td>{render_value(v)}</td></tr>"
                       for k, v in value.items())  # fmt: skip
        return f'<table class="kv">{rows}</table>'
    if isinstance(value, list | tuple):
        shown, rest = list(value[:LIST_ITEMS_SHOWN]), len(value) - LIST_ITEMS_SHOWN
        more = f' <span class="none">… {rest} more</span>' if rest > 0 else ""
        if _is_weighted_list(shown):
            chips = "".join(f'<span class="chip">{esc(w)} <b>{_scalar(float(x))}</b></span>' for w, x in shown)
            return chips + more
        if any(isinstance(x, Mapping | list | tuple) for x in shown):
            return "".join(f'<div class="li">{render_value(x)}</div>' for x in shown) + more
        return (", ".join(_scalar(x) for x in shown) or '<span class="none">none</span>') + more
    return _scalar(value)


def _facts(item: ReviewItem, doc: Mapping[str, Any]) -> str:
    ev = item.evidence
    if item.kind is Kind.DUPLICATE:
        decision = f"B is a duplicate of A ({ev.get('reason', '?')}, rule {ev.get('rule')})"
    else:
        decision = f"B was kept unique ({ev.get('reason', '?')}) although close to A"
    facts = [("decision", decision), ("Jaccard", ev.get("jaccard")), ("Hamming", ev.get("hamming")),
             ("containment", ev.get("containment")), ("candidates", ev.get("candidates"))]  # fmt: skip
    cells = "".join(f'<span class="fact"><span class="k">{esc(k)}</span> {_scalar(v)}</span>' for k, v in facts)
    critical = ev.get("critical")
    if isinstance(critical, Mapping):
        cells += (f'<div class="critical">critical difference ({_scalar(critical.get("kind"))}, term '
                  f'<code>{_scalar(critical.get("term"))}</code>): <q>{_scalar(critical.get("passage"))}</q>'
                  f' against {_scalar(critical.get("against"))}</div>')
    title = doc.get("title")
    if isinstance(title, str) and title:
        cells += f'<div class="title">B: {esc(title)}</div>'
    return cells


# --------------------------------------------------------------------------- the review session


@dataclass
class ReviewSession:
    """The decisions under review, their documents, the verdicts so far, and where they go."""

    items: list[ReviewItem]
    docs: dict[str, dict[str, Any]]
    sink: FeedbackSink
    settings: Settings
    page_size: int = PAGE_SIZE
    reviewer: str | None = None
    verdicts: dict[int, Verdict] = field(default_factory=dict)
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    source: str = ""
    where_else: WhereElse | None = None  # no store given: the page does not search
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _explain_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _explained: dict[int, str] = field(default_factory=dict, repr=False)

    @property
    def pages(self) -> int:
        """Number of pages (at least one, which may be empty)."""
        return max(1, -(-len(self.items) // self.page_size))

    def review(self, index: int, verdict: Verdict, note: str | None) -> FeedbackRecord:
        """Write the record for a verdict; the verdict counts once the sink has stored it."""
        item = self.items[index]
        record = item.feedback(verdict, reviewer=self.reviewer, note=note)
        with self._lock:  # file order = the order verdicts were taken
            self.sink.write(record)
            self.verdicts[index] = verdict
        return record

    def explanation(self, index: int) -> str:
        """``explain_pair``'s account of one item as escaped HTML (computed once)."""
        with self._explain_lock:  # one engine at a time; results are kept
            if index not in self._explained:
                self._explained[index] = self._explain(self.items[index])
            return self._explained[index]

    def _explain(self, item: ReviewItem) -> str:
        from neardup.explain import explain_pair

        try:
            report = asyncio.run(explain_pair(self.settings, self.docs[item.other_id], self.docs[item.doc_id]))
        except Exception as exc:  # a document the engine rejects: say so on the page, keep serving
            log.warning("explain %s / %s failed: %r", item.other_id, item.doc_id, exc)
            return f'<p class="error">explain failed: {esc(type(exc).__name__)}: {esc(str(exc))}</p>'
        return f'<h4>explain (A = {esc(item.other_id)}, B = {esc(item.doc_id)})</h4>{render_value(report)}'

    def where_else_html(self, index: int) -> str:
        """Where else the item's B (or, for an exact copy, its A) appeared, as escaped HTML."""
        if self.where_else is None:
            return '<p class="none">no store given (--store, --archive): not searched</p>'
        item = self.items[index]
        return self.where_else.html(item.doc_id, item.other_id)

    def render_page(self, page: int, nonce: str) -> str:
        """The whole page ``page`` (1-based), every document text escaped."""
        start = (page - 1) * self.page_size
        chunk = self.items[start : start + self.page_size]
        cards = "".join(self._card(item) for item in chunk) or '<p class="empty">Nothing to review.</p>'
        dups = sum(1 for it in self.items if it.kind is Kind.DUPLICATE)
        nav = self._nav(page)
        return _PAGE.format(
            nonce=nonce, token=self.token, page=page, pages=self.pages, css=_CSS, js=_JS, cards=cards, nav=nav,
            source=esc(self.source), sink=esc(self.sink.describe()), total=len(self.items), dups=dups,
            near=len(self.items) - dups, reviewed=len(self.verdicts),
        )

    def _nav(self, page: int) -> str:
        prev = f'<a href="?page={page - 1}" rel="prev">← previous page</a>' if page > 1 else ""
        nxt = f'<a href="?page={page + 1}" rel="next" class="next">see the next page →</a>' if page < self.pages else ""
        return f'<nav>{prev} <span>page {page} of {self.pages}</span> {nxt}</nav>'

    def _card(self, item: ReviewItem) -> str:
        a, b = self.docs[item.other_id], self.docs[item.doc_id]
        left, right, passages = diff_html(a["text"], b["text"])
        verdict = self.verdicts.get(item.index)
        state = verdict.value if verdict else "open"
        shown = {"confirm": "confirmed", "overturn": "overturned"}.get(state, "not reviewed")
        return _CARD.format(
            index=item.index, number=item.index + 1, line=item.line, state=state, shown=shown, kind=item.kind.value,
            a_id=esc(item.other_id), b_id=esc(item.doc_id), facts=_facts(item, b), left=left, right=right,
            passages=passages, evidence=render_value(dict(item.evidence)),
            images=images_html(item.evidence, a, b, item.other_id, limits_of(self.settings.images)),
            a_chars=len(a["text"]), b_chars=len(b["text"]), where=self._where_section(item),
        )

    def _where_section(self, item: ReviewItem) -> str:
        if self.where_else is None:
            return ""
        return (f'<details class="where" open><summary>where else B appeared ({esc(self.where_else.describe())}; '
                f'at most {self.where_else.limit})</summary>'
                f'<section class="where" data-item="{item.index}">searching...</section></details>')


# --------------------------------------------------------------------------- HTTP


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ReviewServer(ThreadingHTTPServer):
    """Serves one :class:`ReviewSession`."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that leaves mid-request (a closed tab, a reload) is not an error worth a
        traceback; anything else is reported as the standard library does."""
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
            log.debug("%s left before the answer was sent", client_address)
            return
        super().handle_error(request, client_address)

    def __init__(self, session: ReviewSession, bind: str, port: int) -> None:
        """Listen on ``bind``:``port`` (IPv6 when ``bind`` has a colon) for ``session``."""
        self.session = session
        self._busy = 0  # requests being answered (not connections waiting for their next one)
        self._idle = threading.Condition()
        self.address_family = socket.AF_INET6 if ":" in bind else socket.AF_INET
        super().__init__((bind, port), _Handler)
        self.loopback = _is_loopback(bind)

    @contextlib.contextmanager
    def working(self) -> Iterator[None]:
        """Count a request as being answered while the body runs."""
        with self._idle:
            self._busy += 1
        try:
            yield
        finally:
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no request is being answered (at most ``timeout`` seconds); whether none is.
        The request threads are daemons: one killed inside a kernel at exit aborts the process."""
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)

    @property
    def url(self) -> str:
        """Where the page is, for the reviewer's browser."""
        host, port = str(self.server_address[0]), self.server_address[1]
        return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"

    def allowed_host(self, header: str | None) -> bool:
        """On loopback, only loopback host names (a rebound DNS name must not read the page)."""
        if not self.loopback:
            return True
        if not header:
            return False
        host = header.rsplit(":", 1)[0] if not header.endswith("]") else header
        return _is_loopback(host.strip("[]"))


class _Handler(BaseHTTPRequestHandler):
    server: ReviewServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        """The page (``/?page=N``), each pair's explanation (``/api/explain/N``) and where else its
        B appeared (``/api/where-else/N``)."""
        with self.server.working():
            self._get()

    def do_POST(self) -> None:
        """``/api/feedback`` with ``{"item": N, "verdict": "confirm"|"overturn", "note": str|null}``."""
        with self.server.working():
            self._post()

    def _get(self) -> None:
        if not self.server.allowed_host(self.headers.get("Host")):
            return self._send(HTTPStatus.FORBIDDEN, "text/plain", "unknown host")
        url = urlsplit(self.path)
        session = self.server.session
        if url.path == "/":
            raw = parse_qs(url.query).get("page", ["1"])[0]
            page = int(raw) if raw.isdigit() else 0
            if not 1 <= page <= session.pages:
                return self._send(HTTPStatus.NOT_FOUND, "text/plain", f"no page {raw!r}: pages 1 to {session.pages}")
            nonce = secrets.token_urlsafe(16)
            return self._send(HTTPStatus.OK, "text/html", session.render_page(page, nonce), nonce=nonce)
        if url.path.startswith("/api/explain/"):
            index = self._item_index(url.path.removeprefix("/api/explain/"))
            if index is None:
                return self._send(HTTPStatus.NOT_FOUND, "text/plain", "no such item")
            return self._send(HTTPStatus.OK, "text/html", session.explanation(index))
        if url.path.startswith("/api/where-else/"):
            index = self._item_index(url.path.removeprefix("/api/where-else/"))
            if index is None:
                return self._send(HTTPStatus.NOT_FOUND, "text/plain", "no such item")
            return self._send(HTTPStatus.OK, "text/html", session.where_else_html(index))
        if url.path == "/favicon.ico":
            return self._send(HTTPStatus.NO_CONTENT, "text/plain", "")
        return self._send(HTTPStatus.NOT_FOUND, "text/plain", "not found")

    def _post(self) -> None:
        if not self.server.allowed_host(self.headers.get("Host")):
            return self._error(HTTPStatus.FORBIDDEN, "unknown host")
        if urlsplit(self.path).path != "/api/feedback":
            return self._error(HTTPStatus.NOT_FOUND, "not found")
        session = self.server.session
        # a page of another origin can neither read the token nor send JSON without a preflight
        if not hmac.compare_digest(self.headers.get("X-Review-Token", ""), session.token):
            return self._error(HTTPStatus.FORBIDDEN, "missing or wrong review token: reload the page")
        if self.headers.get_content_type() != "application/json":
            return self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send application/json")
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY_BYTES:
            return self._error(HTTPStatus.BAD_REQUEST, f"body of {length} bytes (1 to {MAX_BODY_BYTES})")
        try:
            body = json.loads(self.rfile.read(length))
            index, verdict, note = _feedback_request(body, len(session.items))
        except (ValueError, UnicodeDecodeError) as exc:
            return self._error(HTTPStatus.BAD_REQUEST, str(exc))
        try:
            record = session.review(index, verdict, note)
        except FeedbackSinkError as exc:
            log.error("feedback not stored: %s", exc)
            return self._error(HTTPStatus.SERVICE_UNAVAILABLE, f"not stored: {exc}")
        reply = {"record": record.to_json(), "verdict": verdict.value, "reviewed": len(session.verdicts)}
        return self._send(HTTPStatus.OK, "application/json", json.dumps(reply, ensure_ascii=False))

    def _item_index(self, text: str) -> int | None:
        index = int(text) if text.isdigit() else -1
        return index if 0 <= index < len(self.server.session.items) else None

    def _error(self, status: HTTPStatus, message: str) -> None:
        self._send(status, "application/json", json.dumps({"error": message}, ensure_ascii=False))

    def _send(self, status: HTTPStatus, ctype: str, body: str, nonce: str | None = None) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{ctype}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        script = f"'nonce-{nonce}'" if nonce else "'none'"
        self.send_header("Content-Security-Policy",
                         f"default-src 'none'; script-src {script}; style-src {script}; connect-src 'self'; "
                         "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")  # fmt: skip
        self.end_headers()
        self.wfile.write(data)


def _feedback_request(body: Any, n_items: int) -> tuple[int, Verdict, str | None]:
    if not isinstance(body, dict):
        raise ValueError("expected a JSON object")
    index = body.get("item")
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n_items:
        raise ValueError(f"item must be 0 to {n_items - 1}, got {index!r}")
    try:
        verdict = Verdict(body.get("verdict"))
    except ValueError:
        raise ValueError(f"verdict must be 'confirm' or 'overturn', got {body.get('verdict')!r}") from None
    note = body.get("note")
    if note is not None and not isinstance(note, str):
        raise ValueError("note must be a string")
    return index, verdict, (note.strip() or None) if note else None


# --------------------------------------------------------------------------- entry points


def open_session(decisions: Path, docs: Path, open_sink: Callable[[], FeedbackSink], settings: Settings, *,
                 near_threshold: bool = False, near_margin: float = NEAR_MARGIN, page_size: int = PAGE_SIZE,
                 reviewer: str | None = None, resume: Path | None = None,
                 where_else: WhereElse | None = None) -> ReviewSession:
    """Read and check the inputs (and the verdicts already in ``resume``, a feedback file), then
    open the sink with ``open_sink``: inputs that cannot be used leave no feedback file behind."""
    items = load_decisions(decisions, near_threshold=near_threshold, near_margin=near_margin,
                           default_jaccard_low=settings.thresholds.jaccard_low)  # fmt: skip
    texts = load_documents(docs, {i for it in items for i in (it.doc_id, it.other_id)})
    verdicts: dict[int, Verdict] = {}
    if resume is not None and resume.is_file():
        verdicts = earlier_verdicts(items, read_feedback(resume))  # a bad line: FeedbackError
    session = ReviewSession(items, texts, open_sink(), settings, page_size=page_size, reviewer=reviewer,
                            source=str(decisions), where_else=where_else)  # fmt: skip
    session.verdicts = verdicts
    return session


def serve_review(session: ReviewSession, *, bind: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 on_ready: Callable[[ReviewServer], None] | None = None) -> None:
    """Serve the page until Ctrl-C or SIGTERM; the sink is closed at the end."""
    try:
        server = ReviewServer(session, bind, port)
    except OSError as exc:
        session.sink.close()
        raise ConfigError(f"cannot serve on {bind}:{port}: {exc.strerror or exc}",
                          hint="pick another --port (0: any free one) or --bind") from None
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        if on_ready is not None:
            on_ready(server)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
    finally:
        server.wait_idle(SHUTDOWN_WAIT_SECONDS)
        server.server_close()
        session.sink.close()


SHUTDOWN_WAIT_SECONDS = 20.0  # a stop waits this long for the answers under way (an explanation takes seconds)


def _stop_on_sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # serve_forever returns, the sink closes


def exposure_warning(bind: str) -> str | None:
    """One line for a ``--bind`` other than loopback: the page, its documents and its answer token
    are open to whoever reaches the port; None on loopback."""
    if _is_loopback(bind):
        return None
    return (f"neardup review: warning: --bind {bind} is not a loopback address: anyone who can reach this port "
            "can read the page, its documents and its answer token, and write feedback; use 127.0.0.1 "
            "(the default) and an SSH tunnel to review from elsewhere")  # fmt: skip


def _open_sink(feedback: Path | None, settings: Settings) -> FeedbackSink:
    if feedback is not None:
        return FileFeedbackSink(feedback)
    from neardup.storage.extras import require_extra

    require_extra("aiokafka", "kafka", "feedback to a Kafka topic (--broker)")
    # service must not import neardup.agents at module level (imports flow agents -> service)
    sinks = importlib.import_module("neardup.agents.feedback_sink")
    sink: FeedbackSink = sinks.KafkaFeedbackSink.open(settings)
    return sink


@click.command("review", short_help="Confirm or overturn decisions in a browser page.")
@click.argument("decisions", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--docs", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The documents' texts (id and text; JSONL, CSV or Parquet).")
@click.option("--feedback", "feedback_path", type=click.Path(dir_okay=False, path_type=Path), metavar="OUT.jsonl",
              help="Append feedback records to this JSONL file (verdicts already in it are shown).")
@broker_option
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
              help="Port of the page; 0 picks a free one.")
@click.option("--bind", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--near-threshold", is_flag=True, help="Also review unique decisions with a near match.")
@click.option("--near-margin", type=click.FloatRange(0.0, 1.0), default=NEAR_MARGIN, show_default=True,
              help="Near: a critical difference overruled a match, or Jaccard >= jaccard_low - margin.")
@click.option("--page-size", type=click.IntRange(1, 500), default=PAGE_SIZE, show_default=True)
@click.option("--reviewer", help="Name written into every record.")
@store_option
@archive_option
@click.option("--where-else-limit", type=click.IntRange(1, MAX_LIMIT), default=DEFAULT_LIMIT, show_default=True,
              help="With --store or --archive: at most this many other documents shown where B appeared.")
@config_option
@click.pass_context
def review_command(ctx: click.Context, decisions: Path, docs: Path, feedback_path: Path | None,
                   broker_url: str | None, port: int, bind: str, near_threshold: bool, near_margin: float,
                   page_size: int, reviewer: str | None, store_url: str | None, archive_url: str | None,
                   where_else_limit: int, config_path: str | None) -> None:
    """Review decisions in a browser page: confirm or overturn each pair (keys y / n), writing one
    feedback record per answer to --feedback OUT.jsonl or, with --broker, to the feedback topic.
    With --store (and --archive), each pair also shows where else B appeared, across the store and
    the cold tier: the search neardup search --id prints."""
    broker_flag = ctx.get_parameter_source("broker_url") is click.core.ParameterSource.COMMANDLINE
    if feedback_path is not None and broker_flag:
        raise click.UsageError("give either --feedback OUT.jsonl or --broker URL, not both")
    if feedback_path is None and broker_url is None:
        raise click.UsageError("give --feedback OUT.jsonl (a file) or --broker URL (the feedback topic)")
    if feedback_path is not None:  # feedback is appended: it must not be one of the files read
        check_paths([Named("DECISIONS", str(decisions)), Named("--docs", str(docs))],
                    [Named("--feedback", str(feedback_path))])  # fmt: skip
    settings = load_cli_settings(config_path, broker_url=broker_url if feedback_path is None else None,
                                 store_url=store_url, archive_url=archive_url)  # fmt: skip
    where_else = None
    if store_url is not None or settings.archive_url:
        require_store_extra(settings)
        where_else = WhereElse(batch_store_settings(settings), where_else_limit)
    session = open_session(decisions, docs, lambda: _open_sink(feedback_path, settings), settings,
                           near_threshold=near_threshold, near_margin=near_margin, page_size=page_size,
                           reviewer=reviewer, resume=feedback_path, where_else=where_else)  # fmt: skip
    warning = exposure_warning(bind)
    if warning is not None:
        click.echo(warning, err=True)

    def ready(server: ReviewServer) -> None:
        click.echo(f"neardup review: {len(session.items)} pairs ({len(session.verdicts)} reviewed) at {server.url}"
                   f" ; feedback -> {session.sink.describe()} ; Ctrl-C stops", err=True)

    serve_review(session, bind=bind, port=port, on_ready=ready)


# --------------------------------------------------------------------------- page template

STATIC = Path(__file__).resolve().parent / "static"  # the page's HTML, CSS and JS (package data)
_CSS = (STATIC / "review.css").read_text(encoding="utf-8")
_JS = (STATIC / "review.js").read_text(encoding="utf-8")
_PAGE = (STATIC / "page.html").read_text(encoding="utf-8")  # str.format fields: {nonce}, {css}, {js}, ...
_CARD = (STATIC / "card.html").read_text(encoding="utf-8")
