"""``neardup search``: every near-duplicate of a text, or of a stored document, across the warm
store and the cold tier, and the first publisher of their cluster.

A text is fingerprinted as the engine would decide it; a document named by id is read back from
whichever tier holds it (the warm store, else the cold tier). Its candidates come from both tiers,
one batched lookup each, and each is re-checked by the engine's own rule and critical-difference
check (:func:`neardup.rules.policy.similar_candidates`), so a match here is a document the engine
would call a near-duplicate. By id the stored record has no text, so the critical-difference
check compares the two stored profiles without a reprint-header exception (a changed figure in a
short first sentence still keeps two documents apart).

Exact copies are not listed: an exact duplicate stores no record, only its decision naming the
original, which is listed.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from neardup.document import Document, InvalidDocument, parse_document
from neardup.errors import InputError
from neardup.rules.differences import Profile, decode_profile, profile_version
from neardup.rules.policy import similar_candidates
from neardup.sketch.similarity import Sketch, SketchTable
from neardup.storage import FingerprintRecord, FingerprintStore, WindowQuery, doc_ref
from neardup.storage.base import iso_utc

if TYPE_CHECKING:
    from neardup.config import Settings
    from neardup.engine import Engine
    from neardup.storage.postgres.archive import ColdArchive


@dataclass(frozen=True, slots=True)
class Match:
    """One near-duplicate: where it lives, the rule that matched, its similarity and its times."""

    doc_id: str
    tier: str  # "warm" | "cold"
    rule: str
    jaccard: float
    hamming: int
    containment: float
    first_seen: float | None  # when it was decided (epoch seconds), if known
    published_at: float  # its publication time (the decision time when it had none)

    def order(self) -> tuple[float, float]:
        """The cluster's first publisher sorts first: earliest published, then earliest decided."""
        return self.published_at, self.first_seen if self.first_seen is not None else self.published_at

    def to_row(self, first_publisher: str) -> dict[str, Any]:
        """The JSON line ``neardup search`` prints."""
        return {"id": self.doc_id, "tier": self.tier, "rule": self.rule, "jaccard": round(self.jaccard, 4),
                "hamming": self.hamming, "containment": round(self.containment, 4),
                "first_seen": iso(self.first_seen), "published_at": iso(self.published_at),
                "first_publisher": first_publisher}


def iso(epoch: float | None) -> str | None:
    """ISO 8601 in UTC with a Z (None stays None)."""
    return None if epoch is None else iso_utc(epoch, timespec="auto")


@dataclass(frozen=True, slots=True)
class Found:
    """What a search found: the matches, most similar first, and the id of the cluster's first
    publisher (over the matches and the document searched for, when it is stored)."""

    matches: list[Match]
    first_publisher: str | None


@dataclass(slots=True)
class _Stored:
    """A stored document as search reads it: record, tier, decision time."""

    record: FingerprintRecord
    tier: str
    first_seen: float | None


class Searcher:
    """Search over ``warm`` and, when given, ``cold`` (both open), deciding as ``engine`` does."""

    def __init__(self, engine: Engine, warm: FingerprintStore, cold: ColdArchive | None) -> None:
        """``engine`` fingerprints and holds the thresholds; the tiers are read directly."""
        self.engine = engine
        self.warm = warm
        self.cold = cold

    async def by_text(self, text: str, content_type: str = "default") -> Found:
        """Every near-duplicate of ``text``, most similar first, and the cluster's first publisher."""
        sketch, profile, keys = await self.engine.sketch_of(Document(id="neardup-search", text=text,
                                                                     type=content_type))  # fmt: skip
        return await self._matches(sketch, profile, keys[0].tolist(), content_type, None)

    async def by_id(self, doc_id: str) -> Found:
        """Every near-duplicate of the stored document ``doc_id`` (its cluster's first publisher may be itself)."""
        me = (await self._stored([doc_ref(doc_id)])).get(doc_ref(doc_id))
        if me is None:
            raise InputError(f"no stored document has the id {doc_id!r}",
                             hint="an exact copy stores no record: search its original, or search by text")
        if not me.record.index_keys:
            raise InputError(f"the stored record of {doc_id!r} carries no index keys (a Redis record of a type that "
                             "expires)", hint="search by its text instead")  # fmt: skip
        sketch = self._sketch(me.record)
        entries = decode_profile(me.record.profile)
        profile = Profile(entries, [""] * len(entries), [0] * len(entries), "",
                          version=profile_version(me.record.profile))
        own = Match(doc_id, me.tier, "", 1.0, 0, 1.0, me.first_seen, me.record.published_at)
        return await self._matches(sketch, profile, list(me.record.index_keys), me.record.content_type, own)

    def _sketch(self, rec: FingerprintRecord) -> Sketch:
        fp = self.engine.settings.fingerprint
        return Sketch.from_record(rec, fp.seed, fp.num_perm, fp.minhash_family)

    async def _matches(self, sketch: Sketch, profile: Profile, keys: list[int], content_type: str,
                       own: Match | None) -> Found:
        row = np.array([keys], dtype=np.uint64)
        refs = set((await self.warm.lookup(WindowQuery(index_keys=row))).candidates[0])
        if self.cold is not None:
            refs |= set((await self.cold.lookup(row, (), ())).candidates[0])
        refs.discard(doc_ref(own.doc_id) if own else b"")
        stored = list((await self._stored(sorted(refs))).values())
        comparable: list[_Stored] = []
        sketches: list[Sketch] = []
        for s in stored:
            try:
                sketches.append(self._sketch(s.record))
                comparable.append(s)
            except ValueError:  # another MinHash family or format: never a near-duplicate
                continue
        fp = self.engine.settings.fingerprint
        table = SketchTable.of([sketch, *sketches], fp.num_perm, sketch.simhash.shape[0])
        found = similar_candidates(table, 0, list(range(1, len(table))), profile,
                                   self.engine.thresholds.for_type(content_type))  # fmt: skip
        matches = [Match(comparable[i - 1].record.doc_id, comparable[i - 1].tier, rule.value, sim.jaccard, sim.hamming,
                         sim.containment, comparable[i - 1].first_seen, comparable[i - 1].record.published_at)
                   for i, sim, rule in found]  # fmt: skip
        cluster = [*matches, *([own] if own else [])]
        return Found(matches, min(cluster, key=Match.order).doc_id if cluster else None)

    async def _stored(self, refs: list[bytes]) -> dict[bytes, _Stored]:
        """Records by ref from the warm store (decision time from its decision), then the cold tier."""
        warm = await self.warm.fetch(refs)
        decisions = await self.warm.get_decisions([r.doc_id for r in warm.values()])
        out = {ref: _Stored(rec, "warm", d.decided_at if (d := decisions.get(rec.doc_id)) else None)
               for ref, rec in warm.items()}  # fmt: skip
        missing = [r for r in refs if r not in out]
        if self.cold is not None and missing:
            for ref, row in (await self.cold.rows(missing)).items():
                out[ref] = _Stored(row.record, "cold", row.first_seen.timestamp())
        return out


def select(found: Found, since: float | None, limit: int) -> list[dict[str, Any]]:
    """The JSON lines of the matches first seen at or after ``since`` (a match without a known
    time by its publication time), at most ``limit``, most similar first."""
    rows = [m for m in found.matches if since is None or m.order()[1] >= since]
    return [m.to_row(found.first_publisher or "") for m in rows[:limit]]


async def search_stores(settings: Settings, text: str | None, doc_id: str | None,
                        content_type: str = "default") -> Found:
    """Open the store (and the cold tier, when ``settings`` name one), search ``text`` or the stored
    ``doc_id``, close them. ``neardup search`` prints what it found (:func:`select`); the review page
    shows it for the document under review. An id stored in neither tier is an :class:`InputError`."""
    from neardup.engine import Engine, store_options
    from neardup.storage import open_store

    warm = open_store(settings.store_url, ttl=settings.ttl_seconds, **store_options(settings))
    cold = None
    if settings.archive_url:
        from neardup.storage.postgres.archive import ColdArchive

        cold = ColdArchive(settings.archive_url, key_filter_bytes=0)  # one search: no filter worth loading
    await warm.open()
    try:
        if cold is not None:
            await cold.open()
        searcher = Searcher(Engine(settings, warm), warm, cold)
        return await (searcher.by_id(doc_id) if doc_id is not None else searcher.by_text(text or "", content_type))
    finally:
        await warm.close()
        if cold is not None:
            await cold.close()


# ------------------------------------------------------------------------------ the worker's POST /search
MAX_LIMIT = 100  # matches one request may ask for: the endpoint is bounded, like POST /check


def searcher_for(engine: Engine) -> Searcher:
    """A searcher over the engine's store: its two tiers when it has a cold tier behind it."""
    if engine.settings.archive_url:
        from neardup.storage.postgres.tiered import TieredStore

        if isinstance(engine.store, TieredStore):
            return Searcher(engine, engine.store.warm, engine.store.cold)
    return Searcher(engine, engine.store, None)


async def answer(searcher: Searcher, body: bytes) -> tuple[int, dict[str, Any]]:
    """``POST /search``: a JSON object with ``text`` (and ``type``) or ``id``, optional ``since``
    (ISO 8601) and ``limit`` (at most :data:`MAX_LIMIT`) -> (HTTP status, the matches and the
    cluster's first publisher, or the reason it was refused)."""
    try:
        ask = _request(body, searcher.engine.settings.normalize.max_bytes)
    except (ValueError, InvalidDocument) as exc:
        return 400, {"reason": "bad_request", "error": str(exc)}
    try:
        found = await (searcher.by_id(ask.doc_id) if ask.doc_id is not None
                       else searcher.by_text(ask.text, ask.content_type))  # fmt: skip
    except InputError as exc:
        return 404, {"reason": "not_found", "error": exc.one_line()}
    return 200, {"matches": select(found, ask.since, ask.limit), "first_publisher": found.first_publisher}


@dataclass(frozen=True, slots=True)
class _Ask:
    text: str
    doc_id: str | None
    content_type: str
    since: float | None
    limit: int


def _request(body: bytes, max_bytes: int) -> _Ask:
    """The search a request body asks for; ValueError (or InvalidDocument for the text) says what is wrong."""
    try:
        payload = json.loads(body)
    except ValueError:
        raise ValueError("the body is not JSON") from None
    if not isinstance(payload, dict) or ("text" in payload) == ("id" in payload):
        raise ValueError('give a JSON object with "text" or "id"')
    limit = payload.get("limit", 20)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f'"limit" must be an integer from 1 to {MAX_LIMIT}')
    since = payload.get("since")
    when = None
    if since is not None:
        parsed = dt.datetime.fromisoformat(str(since))  # ValueError names the bad value's format
        when = (parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)).timestamp()
    content_type = str(payload.get("type") or "default")
    if "id" in payload:
        return _Ask("", str(payload["id"]), content_type, when, limit)
    doc = parse_document({"id": "neardup-search", "text": payload["text"], "type": content_type}, max_bytes=max_bytes)
    return _Ask(doc.text, None, content_type, when, limit)
