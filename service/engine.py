"""The one decision path behind the library, the batch CLI and the Faust agents.

``Engine.decide(window)`` takes a window of validated documents and returns one decision per
document, in input order. The engine orchestrates; the decision itself is the pure
:func:`neardup.rules.policy.decide_window`. A window costs a fixed number of store calls, whatever its
size (:mod:`neardup.storage.base`):

1. fingerprint the window in one batch (normalise, segment, SimHash, MinHash, index keys,
   critical-difference profiles), in a thread so that the event loop stays responsive;
2. ``lookup``: stored decisions of its ids (a redelivered document gets its decision again; an id
   decided before with other text is decided anew, and says so), owners of the content hashes the
   Bloom filter has seen (a miss skips the read: the claim at commit is the authority), the
   candidates under every index key, and the shared adaptive thresholds;
3. the hot tier (the last documents this process decided, in memory) answers for the candidates'
   records first; ``fetch`` reads the others in one call;
4. decide (pure): exact copies, then near-duplicates through the rule and the veto chain;
5. ``commit``: atomic exact claims, then records and index entries (a claim lost to a document
   stored meanwhile makes this one its exact duplicate);
6. races: the documents decided unique re-query the index; a near-duplicate another worker stored
   meanwhile wins when it is already decided unique, or, both undecided, when it is earlier
   (published_at, id); the earlier one waits (``index.race_wait_seconds`` at most) for the later
   one's decision in case that one re-checked before this one was stored;
7. ``put_decisions``, last: a stored decision tells racing workers that a document is final.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from neardup.config.settings import Settings
from neardup.decision import CriticalEvidence, Decision, Evidence, Reason, Rule, Status
from neardup.document import Document
from neardup.kernels.pairs import self_join
from neardup.learning.model import MODEL_STATE, Model, apply_to_lexicon
from neardup.media.hashes import radii_of
from neardup.metrics import Metrics
from neardup.rules.differences import AnchorProfiler, Profile, profiler
from neardup.rules.images import WindowImages, caption_content_hash, image_verdict, nearest_image
from neardup.rules.policy import Thresholds, Verdict, WindowCase, decide_window, similar_candidates
from neardup.rules.thresholds import STATE_NAME, AdaptiveThresholds
from neardup.rules.translation import STATE_NAME as TRANSLATION_STATE
from neardup.rules.translation import TranslationCheck
from neardup.rules.versions import version_marks
from neardup.sketch.bloom import RotatingBloom
from neardup.sketch.fingerprint import FingerprintConfig, Fingerprinter, Fingerprints, encode_simhash
from neardup.sketch.hot import HotTier
from neardup.sketch.index import IndexLayout, excerpt_keys
from neardup.sketch.similarity import Sketch, SketchTable, window_sketches
from neardup.storage import (
    Candidates,
    Claim,
    DecisionRecord,
    FingerprintRecord,
    FingerprintStore,
    TierAware,
    WindowQuery,
    doc_ref,
    open_store,
)
from neardup.text.lexicon import load_lexicon
from neardup.text.normalize import original_span
from neardup.text.stamps import mask_timestamps_batch

log = logging.getLogger(__name__)
T = TypeVar("T")

BLOOM_CAPACITY = 10_000_000  # a generation of the worker's Bloom filter (neardup.sketch.bloom)


@dataclass(slots=True)
class _Window:
    """A fingerprinted window: row r is document ``docs[r]`` (decision order)."""

    docs: list[Document]
    fps: Fingerprints
    refs: list[bytes]
    keys: npt.NDArray[np.uint64]  # what each document is filed under, and paired by inside the window
    profiles: list[Profile]
    sketches: list[Sketch]
    records: list[FingerprintRecord]
    images: WindowImages
    asked: npt.NDArray[np.uint64]  # what the store is asked for: ``keys`` less a long text's excerpt keys

    def asked_keys(self, r: int) -> frozenset[int]:
        """The keys row ``r`` was looked up under (its images' filed keys among them): what its
        race check looks under as it is filed."""
        text = frozenset(k for k in self.asked[r].tolist() if k)
        return text | frozenset(self.images.keys_of(r)) if self.docs[r].images else text


PREFETCH_AHEAD = 2  # windows fingerprinted ahead of the one decided, each in a thread of its own


@dataclass(slots=True)
class _Prefetch:
    """A window being fingerprinted ahead of its decision (:meth:`Engine.prefetch`): its documents
    in decision order, the model version it is fingerprinted under, the thread's result."""

    batch: list[Document]
    model_version: int
    task: asyncio.Future[_Window]

    def holds(self, batch: list[Document], model_version: int) -> bool:
        """Whether this is ``batch``'s window (the same documents, in order) under ``model_version``."""
        return (self.model_version == model_version and len(self.batch) == len(batch)
                and all(a is b for a, b in zip(self.batch, batch, strict=True)))


class Engine:
    """Decides windows of documents against a fingerprint store (see the module docstring)."""

    def __init__(self, settings: Settings, store: FingerprintStore, metrics: Metrics | None = None) -> None:
        """An engine on an opened ``store``; :meth:`open` builds both from settings."""
        self.settings = settings
        self.store = store
        # a runtime Protocol check costs microseconds: once, not once a decision
        self._tiers = store if isinstance(store, TierAware) else None
        self.metrics = metrics or Metrics()
        fp = settings.fingerprint
        self.fingerprinter = Fingerprinter(FingerprintConfig(
            simhash_bits=fp.simhash_bits, num_perm=fp.num_perm, zh_shingle=fp.zh_shingle,
            en_shingle=fp.en_shingle, seed=fp.seed, t2s=settings.normalize.traditional_to_simplified,
            strip_html=settings.normalize.strip_html, idf_path=fp.idf_path,
            lexicon_path=fp.domain_weights_path, segment_hmm=fp.segment_hmm, signature_bits=fp.signature_bits,
            minhash_family=fp.minhash_family,
        ))
        self.layout = IndexLayout.create(fp.simhash_bits, settings.index.hamming_radius, fp.num_perm,
                                         settings.index.lsh_threshold, settings.index.lsh_fp_weight,
                                         settings.index.lsh_fn_weight)
        self.profiler = profiler(fp.domain_weights_path)
        self.thresholds = AdaptiveThresholds(settings.thresholds)
        self.model = Model()
        self.bloom = RotatingBloom(BLOOM_CAPACITY)
        self.hot = HotTier(settings.window.hot_count, settings.window.hot_seconds)
        self.translation = (TranslationCheck(settings.translation, settings.window.hot_count,
                                             settings.window.hot_seconds)
                            if settings.translation.enabled else None)
        self._state_names = [MODEL_STATE, STATE_NAME] + ([TRANSLATION_STATE] if self.translation is not None else [])
        self.windows = 0
        self._prefetched: list[_Prefetch] = []  # in the order they were asked for
        self._fingerprinting: ThreadPoolExecutor | None = None  # the prefetches' threads, made on the first prefetch
        self._publish_thresholds()

    # ---------------------------------------------------------------- life cycle
    @classmethod
    async def open(cls, settings: Settings, registry: Any = None,
                   store: FingerprintStore | None = None) -> Engine:
        """Open the store named by ``settings.store_url`` (unless given) and build an engine on it."""
        if store is None:
            store = open_store(settings.store_url, ttl=settings.ttl_seconds, archive_url=settings.archive_url,
                               archive_key_filter_bytes=settings.archive_key_filter_mb << 20, **store_options(settings))
        await store.open()
        return cls(settings, store, Metrics(registry) if registry is not None else None)

    async def close(self) -> None:
        """Close the store (after any window still being fingerprinted ahead)."""
        await self._settle_prefetches()
        if self._fingerprinting is not None:
            self._fingerprinting.shutdown(wait=True)
            self._fingerprinting = None
        await self.store.close()

    # ---------------------------------------------------------------- store calls, timed
    async def _store(self, op: str, call: Callable[[], Awaitable[T]]) -> T:
        start = time.perf_counter()
        try:
            return await call()
        except Exception:
            self.metrics.store_errors.labels(op).inc()
            raise
        finally:
            self.metrics.store_latency.labels(op).observe(time.perf_counter() - start)

    def _publish_thresholds(self) -> None:
        for name, value in self.thresholds.for_type("default").as_evidence().items():
            self.metrics.threshold.labels(name).set(float(value))

    # ---------------------------------------------------------------- public API
    async def decide(self, docs: Sequence[Document]) -> list[Decision]:
        """Decide, store and return one decision per document, in input order."""
        return await self._run(list(docs), dry_run=False)

    async def check(self, doc: Document) -> Decision:
        """The decision ``doc`` would get now; nothing is stored."""
        return (await self._run([doc], dry_run=True))[0]

    async def sketch_of(self, doc: Document) -> tuple[Sketch, Profile, npt.NDArray[np.uint64]]:
        """The sketch, critical-difference profile and index keys (one row) that ``doc`` would be
        decided with; nothing is stored (``neardup search``)."""
        w = await asyncio.to_thread(self._prepare, [doc], time.time())
        return w.sketches[0], w.profiles[0], w.keys

    def prefetch(self, docs: Sequence[Document]) -> None:
        """Start fingerprinting the window ``docs`` now, in a thread, for a later :meth:`decide`
        of the same documents (:class:`WindowPipeline` does it for a stream of windows). Windows
        fingerprinted while another is decided share the cores: the kernels release the GIL. The
        decisions are the same: fingerprints depend on the documents and the model only, and a
        window fingerprinted under a model that changed meanwhile is fingerprinted again.
        :data:`PREFETCH_AHEAD` windows are fingerprinted at once at most, in the order asked."""
        batch = self._fresh_batch(list(docs))
        if not batch:
            return
        if self._fingerprinting is None:
            self._fingerprinting = ThreadPoolExecutor(max_workers=PREFETCH_AHEAD, thread_name_prefix="neardup-prefetch")
        # threads of their own, fed in order: a window starts as soon as a thread is free, without
        # waiting for the event loop (busy deciding the window before)
        task = asyncio.get_running_loop().run_in_executor(self._fingerprinting, self._prepare, batch, time.time())
        task.add_done_callback(_retrieved)  # a failed prefetch is its decide's error, or no one's
        self._prefetched.append(_Prefetch(batch, self.model.version, task))

    # ---------------------------------------------------------------- the path
    async def _prepared(self, batch: list[Document], t0: float) -> _Window:
        """``batch`` fingerprinted: by its prefetch where there is one under the model in force
        (the prefetches asked before it are dropped: their windows were not decided), else now."""
        at = next((k for k, p in enumerate(self._prefetched) if p.holds(batch, self.model.version)), -1)
        if at >= 0:
            pre = self._prefetched[at]
            del self._prefetched[: at + 1]
            try:
                return await pre.task
            except Exception:  # fingerprinted again below, where the error shows as the decide's own
                pass
        return await asyncio.to_thread(self._prepare, batch, t0)

    async def _settle_prefetches(self) -> None:
        """Wait for the windows being fingerprinted ahead, and forget them."""
        pending, self._prefetched = self._prefetched, []
        if pending:
            await asyncio.wait([p.task for p in pending])

    def _fresh_batch(self, docs: list[Document]) -> list[Document]:
        """The documents of ``docs`` that :meth:`_decide_fresh` fingerprints, in its order."""
        fresh, _, _ = _split_ids(docs)
        batch = [docs[i] for i in fresh]
        return [batch[i] for i in _decision_order(batch)]

    async def _run(self, docs: list[Document], dry_run: bool) -> list[Decision]:
        started = time.perf_counter()
        out = await self._decide_all(docs, dry_run)
        if out and not dry_run:
            self._account(out, started)
        return out

    async def _decide_all(self, docs: list[Document], dry_run: bool) -> list[Decision]:
        if not docs:
            return []
        results: list[Decision | None] = [None] * len(docs)
        fresh, later, first_of = _split_ids(docs)
        decided = await self._decide_fresh([docs[i] for i in fresh], dry_run)
        for i, d in zip(fresh, decided, strict=True):
            results[i] = d
        if later:
            for i, d in zip(later, await self._decide_all([docs[i] for i in later], dry_run), strict=True):
                results[i] = d
        for i, doc in enumerate(docs):
            if results[i] is None:
                first = results[first_of[doc.id]]
                assert first is not None
                results[i] = replace(first, doc=doc).as_replay()
        return [r for r in results if r is not None]

    def _account(self, out: list[Decision], started: float) -> None:
        self.metrics.window_size.observe(len(out))
        self.metrics.window_seconds.observe(time.perf_counter() - started)
        now = time.time()
        for d in out:
            if d.evidence.replay:
                self.metrics.replays.inc()
                continue
            self.metrics.documents.labels(d.status.value, d.evidence.reason.value).inc()
            if d.doc.published_at is not None:
                self.metrics.document_age.observe(max(0.0, now - d.doc.published_at))

    async def _decide_fresh(self, docs: list[Document], dry_run: bool) -> list[Decision]:
        """Decide documents with distinct ids; returns decisions in the order of ``docs``."""
        self.windows += 1
        window_id = f"{self.settings.worker_id}:{self.windows}"
        t0 = time.time()
        order = _decision_order(docs)
        w = await self._prepared([docs[i] for i in order], t0)
        n = len(w.docs)

        # lookup: replays, exact owners (Bloom hits only), candidates, shared thresholds
        maybe = [r for r in range(n) if w.fps.content_hashes[r] in self.bloom]
        self.metrics.bloom_hits.labels("maybe").inc(len(maybe))
        self.metrics.bloom_hits.labels("miss").inc(n - len(maybe))
        # the image rows ride in the same lookup, after the text rows (a text-only window: none)
        answer = await self._store("lookup", lambda: self.store.lookup(WindowQuery(
            doc_ids=[d.id for d in w.docs], exact_hashes=[w.fps.content_hashes[r] for r in maybe],
            index_keys=w.images.under(w.asked) if len(w.images) else w.asked, state_names=self._state_names,
            content_types=[d.type for d in w.docs] + [w.docs[r].type for r in w.images.rows.tolist()])))
        w = await self._adopt_states(answer, w, t0)
        w.images.take(answer.candidates[n:], set(w.refs), self.settings.index.max_candidates)
        owner_of = {r: o for r, o in zip(maybe, answer.owners, strict=True)}
        final, reused = _replays(w, answer)
        rows = [r for r in range(n) if r not in final]
        if rows:
            decisions = await self._decide_rows(w, rows, answer.candidates, owner_of, reused, window_id, dry_run)
            final.update(zip(rows, decisions, strict=True))
        out: list[Decision | None] = [None] * n
        for r, pos in enumerate(order):
            out[pos] = final[r]
        return [d for d in out if d is not None]

    async def _adopt_states(self, answer: Any, w: _Window, t0: float) -> _Window:
        """The shared states the lookup brought: a newer model (the window fingerprinted again
        under it), the adaptive thresholds, the translation window."""
        model = answer.states.get(MODEL_STATE)
        if model is not None and model.version != self.model.version:
            await self._settle_prefetches()  # not while a window is fingerprinted under the model it replaces
            await asyncio.to_thread(self.apply_model, Model.from_bytes(model.payload))
            w = await asyncio.to_thread(self._prepare, w.docs, t0)  # fingerprinted again under the new model
        if self.settings.thresholds.adaptive:
            self.thresholds.load(answer.states.get(STATE_NAME))
        if self.translation is not None:
            try:
                self.translation.merge(answer.states.get(TRANSLATION_STATE))
            except ValueError as exc:  # a corrupt shared window costs its matches, not the window
                log.warning("translation window in the store ignored: %s", exc)
        return w

    def apply_model(self, model: Model) -> None:
        """Decide from now on with a learned model (:mod:`neardup.learning.model`): its words in the
        SimHash weights and the critical-difference lexicon, its name fields in the name check, its
        thresholds as the base of the adaptive ones. Documents already stored keep the
        fingerprints they were stored with."""
        fp = self.settings.fingerprint
        lexicon = apply_to_lexicon(load_lexicon(fp.domain_weights_path), model)
        self.fingerprinter.use_lexicon(lexicon)
        self.fingerprinter.use_name_fields(model.name_fields, model.name_fields_by_type())
        self.profiler = AnchorProfiler(lexicon)
        self.thresholds = AdaptiveThresholds(self.settings.thresholds.model_copy(update=model.thresholds))
        self.model = model
        self._publish_thresholds()
        log.info("model version %d in force", model.version)

    def _prepare(self, batch: list[Document], t0: float) -> _Window:
        fp_settings = self.settings.fingerprint
        fps = self.fingerprinter.fingerprint([d.text for d in batch], [d.lang for d in batch], [d.type for d in batch])
        _fold_captions(batch, fps, self.settings.images.caption_chars)
        # stamps (crawl and publication times) are furniture, not figures: masked for the profile
        profiles = self.profiler.profile_batch(mask_timestamps_batch(fps.texts), fps.langs, names=fps.names,
                                               slots=fps.name_slots)
        idx = self.settings.index
        lsh = self.layout.window_keys(fps.simhash, fps.signatures, fps.shingle_counts > 0)
        excerpts = excerpt_keys([p.sentence_contexts(idx.excerpt_sentence_chars) for p in profiles],
                                idx.excerpt_keys, window=idx.excerpt_window)
        keys = np.hstack([lsh, excerpts])
        # a text longer than an excerpt can be is nobody's excerpt: it files its sentence keys for
        # the excerpts of it to come, but asks the store under its LSH keys alone
        asked = keys.copy()
        asked[np.asarray(fps.lengths) > idx.excerpt_max_chars, lsh.shape[1]:] = 0
        published = [d.published_at if d.published_at is not None else t0 for d in batch]
        ids = [d.id for d in batch]
        marks = [version_marks(t) for t in fps.texts]
        sketches = window_sketches(fps, ids, published, profiles, fp_settings.signature_bits, marks)
        images = WindowImages.of(batch, sketches)
        key_rows = keys.tolist()  # Python ints in one call, not one numpy scalar a key
        records = [
            FingerprintRecord(
                doc_id=doc.id, content_type=doc.type, published_at=published[r],
                content_hash=fps.content_hashes[r], simhash=encode_simhash(fps.simhash[r]),
                signature=self.fingerprinter.encode_signature(fps, r), profile=profiles[r].encode(),
                shingles=int(fps.shingle_counts[r]), length=fps.lengths[r],
                index_keys=tuple(k for k in key_rows[r] if k) + (images.keys_of(r) if doc.images else ()),
                images=sketches[r].images, image_structure=sketches[r].image_structure,
            )
            for r, doc in enumerate(batch)
        ]
        return _Window(batch, fps, [doc_ref(i) for i in ids], keys, profiles, sketches, records, images, asked)

    async def _decide_rows(self, w: _Window, rows: list[int], stored_cands: list[Candidates],
                           owner_of: dict[int, str | None], reused: set[int], window_id: str,
                           dry_run: bool) -> list[Decision]:
        """Decide window rows ``rows`` (no replays among them)."""
        n = len(rows)
        keys = w.keys[rows]
        own = set(w.refs)
        cap = self.settings.index.max_candidates
        seen = [strongest(stored_cands[r], own, cap) for r in rows]
        image_refs = [w.images.refs.get(r, []) for r in rows]
        sketches = await self._sketches(sorted({ref for refs in seen + image_refs for ref in refs}))

        table_rows, pairs = _candidate_pairs([w.sketches[r] for r in rows], seen, sketches, keys)
        fp = self.settings.fingerprint
        table = SketchTable.of(table_rows, fp.num_perm, w.fps.simhash.shape[1])
        case = WindowCase(table, n, [w.profiles[r] for r in rows], pairs, [owner_of.get(r) for r in rows])
        thresholds = [self.thresholds.for_type(w.docs[r].type) for r in rows]
        verdicts = decide_window(case, thresholds)
        for why, count in case.counters.items():
            self.metrics.recheck_rejections.labels(why).inc(count)
        for v in verdicts:
            self.metrics.candidates.observe(v.candidates)
        embedded: list[int] = []
        vectors = np.zeros((0, 0), dtype=np.float32)
        if self.translation is not None:
            verdicts, embedded, vectors = await asyncio.to_thread(self._translate, self.translation, w, rows, verdicts)
        if len(w.images):
            verdicts = self._image_rule(w, rows, verdicts, sketches)

        if not dry_run:
            verdicts, rechecked = await self._commit(w, rows, verdicts, owner_of)
            # a race is a document filed since the lookup: not one the lookup found (over the
            # cap too) or an image candidate seen
            known = [[*stored_cands[r], *more] for r, more in zip(rows, image_refs, strict=True)]
            verdicts = await self._resolve_races(w, rows, table, verdicts, known, thresholds, rechecked)
            await self._remember_translations(w, rows, verdicts, embedded, vectors)
        decisions = [
            Decision(w.docs[r], v.status, v.matched if v.status is Status.DUPLICATE else None,
                     self._evidence(v, thresholds[k], window_id, w.docs[r], id_reused=r in reused))
            for k, (r, v) in enumerate(zip(rows, verdicts, strict=True))
        ]
        if not dry_run:
            await self._store("put_decisions", lambda: self.store.put_decisions([
                DecisionRecord(d.doc.id, d.status.value, d.duplicate_of,
                               json.dumps(d.evidence.to_dict(), ensure_ascii=False, allow_nan=False),
                               d.doc.type, w.fps.content_hashes[r])
                for r, d in zip(rows, decisions, strict=True)]))
            await self._adapt(decisions)
        return decisions

    def _image_rule(self, w: _Window, rows: list[int], verdicts: list[Verdict],
                    stored: dict[bytes, Sketch]) -> list[Verdict]:
        """The image rules (:mod:`neardup.rules.images`) over the rows with images: against their
        stored image candidates and the earlier rows of this window that share an image block
        (an exact copy is nobody's original)."""
        s = self.settings.images
        earlier = w.images.earlier(len(w.docs))
        at = {r: k for k, r in enumerate(rows)}
        out = list(verdicts)
        for k, r in enumerate(rows):
            doc = w.docs[r]
            if not doc.images or out[k].status is Status.DUPLICATE:
                continue
            others = [stored[ref] for ref in w.images.refs.get(r, ()) if ref in stored]
            others += [w.sketches[e] for e in earlier.get(r, ())
                       if e not in at or out[at[e]].reason is not Reason.EXACT]
            out[k] = image_verdict(out[k], w.fps.lengths[r],
                                   nearest_image(doc.images, others, radii_of(s)), s.caption_chars)
            if out[k].reason is Reason.IMAGE:
                w.sketches[r].original = out[k].cluster or ""  # a later row of this window sees its cluster
        return out

    async def _remember_translations(self, w: _Window, rows: list[int], verdicts: list[Verdict],
                                     embedded: list[int], vectors: npt.NDArray[np.float32]) -> None:
        """Keep the embeddings of the rows that stayed unique, and share the window with the store."""
        if self.translation is None or not embedded:
            return
        kept = [i for i, k in enumerate(embedded) if verdicts[k].status is Status.UNIQUE]
        self.translation.remember([w.docs[rows[embedded[i]]].id for i in kept],
                                  [w.fps.langs[rows[embedded[i]]] for i in kept], vectors[kept])
        await self._share_translations()

    @staticmethod
    def _translate(check: TranslationCheck, w: _Window, rows: list[int], verdicts: list[Verdict]
                   ) -> tuple[list[Verdict], list[int], npt.NDArray[np.float32]]:
        """The translation ``check`` over the rows the lexical path found nothing like: (verdicts
        with its matches, the verdicts' indices it embedded, their embeddings)."""
        embedded = [k for k, v in enumerate(verdicts) if v.status is Status.UNIQUE and v.reason is Reason.UNIQUE]
        if not embedded:
            return verdicts, [], np.zeros((0, 0), dtype=np.float32)
        docs = [w.docs[rows[k]] for k in embedded]
        matches, vectors = check.match([d.id for d in docs], [w.fps.langs[rows[k]] for k in embedded],
                                                  [d.text for d in docs])
        out = list(verdicts)
        for k, m in zip(embedded, matches, strict=True):
            if m is not None:
                out[k] = Verdict(Status.DUPLICATE, Reason.NEAR, Rule.TRANSLATION, m.matched, None,
                                 verdicts[k].candidates, cosine=m.cosine)
        return out, embedded, vectors

    async def _share_translations(self) -> None:
        """Write this process's translation window to the store (compare-and-set): when another
        worker wrote first, the next lookup merges its version and the next write carries ours."""
        check = self.translation
        if check is None:
            return
        value = check.to_share()
        if value is not None and await self._store(
                "write_state", lambda: self.store.write_state(TRANSLATION_STATE, value)):
            check.shared(value)

    async def _sketches(self, refs: list[bytes]) -> dict[bytes, Sketch]:
        """Sketches of candidate refs: from the hot tier, else fetched and decoded."""
        out: dict[bytes, Sketch] = {}
        missing: list[bytes] = []
        for ref in refs:
            s = self.hot.get(ref)
            if s is not None:
                out[ref] = s
            else:
                missing.append(ref)
        if missing:
            records = await self._store("fetch", lambda: self.store.fetch(missing))
            fp = self.settings.fingerprint
            for ref, rec in records.items():
                try:
                    out[ref] = Sketch.from_record(rec, fp.seed, fp.num_perm, fp.minhash_family)
                except ValueError:  # another format version or MinHash family: not comparable
                    self.metrics.recheck_rejections.labels("format").inc()
        return out

    async def _commit(self, w: _Window, rows: list[int], verdicts: list[Verdict],
                      owner_of: dict[int, str | None]) -> tuple[list[Verdict], dict[str, Candidates]]:
        """Claim the window's content hashes and store the records of the documents that hold them;
        the unique ones are looked up again as they are filed (the race check, same call)."""
        claims: list[Claim] = []
        claimed: list[int] = []
        records: list[FingerprintRecord] = []
        for k, (r, v) in enumerate(zip(rows, verdicts, strict=True)):
            if v.reason is Reason.EXACT and owner_of.get(r) == v.matched:
                continue  # the owner was read from the store: nothing to claim
            claims.append(Claim(w.fps.content_hashes[r], w.docs[r].id, w.docs[r].type))
            claimed.append(k)
            if v.reason is not Reason.EXACT:
                # the record says which original it joined: a later document must not join that
                # cluster when it contradicts a member (policy.decide_window, "cluster conflict")
                w.sketches[r].original = (v.cluster or v.matched) if v.status is Status.DUPLICATE and v.matched else ""
                records.append(replace(w.records[r], meta=w.sketches[r].meta()))
        # under the keys the lookup asked: a long text is nobody's excerpt, in a race as in order
        recheck = {w.docs[rows[k]].id: w.asked_keys(rows[k]) for k, v in enumerate(verdicts)
                   if v.status is Status.UNIQUE}
        answer = await self._store("commit", lambda: self.store.commit(claims, records, recheck))
        owners = answer.owners
        out = list(verdicts)
        for k, owner in zip(claimed, owners, strict=True):
            v = verdicts[k]
            expected = v.matched if v.reason is Reason.EXACT else w.docs[rows[k]].id
            if owner != expected:  # the hash was claimed meanwhile (another worker, an earlier run)
                out[k] = Verdict(Status.DUPLICATE, Reason.EXACT, Rule.EXACT, owner, v.similarity, v.candidates)
        self.bloom.add_all(w.fps.content_hashes[r] for r in rows)
        self.metrics.bloom_fill.set(self.bloom.fill)
        self.hot.add((w.refs[r], w.sketches[r]) for r, v in zip(rows, out, strict=True) if v.reason is not Reason.EXACT)
        return out, answer.rechecked

    def _quoted(self, critical: CriticalEvidence | None, text: str) -> CriticalEvidence | None:
        """The critical difference's passage as the document writes it, with its offsets there
        (the normalised passage where the two cannot be traced)."""
        if critical is None or critical.normalized_span is None:
            return critical
        cfg = self.fingerprinter.config
        span = original_span(text, *critical.normalized_span, t2s=cfg.t2s, html_strip=cfg.strip_html)
        if span is None:
            return critical
        return replace(critical, passage=text[span[0] : span[1]], at=span)

    def _evidence(self, v: Verdict, t: Thresholds, window_id: str, doc: Document, *,
                  id_reused: bool = False) -> Evidence:
        s = v.similarity
        return Evidence(
            reason=v.reason, rule=v.rule, matched_id=v.matched,
            jaccard=s.jaccard if s else None, hamming=s.hamming if s else None,
            containment=s.containment if s else None, candidates=v.candidates,
            thresholds=t.as_evidence(), threshold_version=t.version, window_id=window_id,
            worker_id=self.settings.worker_id, decided_at=round(time.time(), 3),
            critical=self._quoted(v.critical, doc.text), images_rejected=doc.images_rejected,
            image=v.image if v.reason is Reason.IMAGE else None,
            shared_image=v.image if v.reason is not Reason.IMAGE else None,
            race=v.race, id_reused=id_reused, model_version=self.model.version, cosine=v.cosine,
            tier=self._tiers.tier_of(v.matched) if v.matched and self._tiers is not None else None,
        )

    async def _adapt(self, decisions: list[Decision]) -> None:
        """Feed near-duplicates to the adaptive thresholds; write the next shared version when due."""
        for d in decisions:
            e = d.evidence
            if e.reason is Reason.NEAR and e.jaccard is not None and e.hamming is not None:
                self.thresholds.observe(d.doc.type, e.jaccard, e.hamming)
        if not self.thresholds.due():
            return
        value = self.thresholds.next_value()
        if await self._store("write_state", lambda: self.store.write_state(STATE_NAME, value)):
            self.thresholds.written(value)
            self.metrics.threshold_updates.inc()
            self._publish_thresholds()
            log.info("adaptive thresholds: version %d, default %s", value.version,
                     self.thresholds.for_type("default").as_evidence())
        # else another worker wrote first: the next lookup reads its version, ours merges into it

    # ---------------------------------------------------------------- races
    async def _await_decision(self, doc_id: str) -> DecisionRecord | None:
        """Poll for another worker's decision; None when it does not come in time (that worker
        died: its redelivered document will see ours in the store)."""
        deadline = time.monotonic() + self.settings.index.race_wait_seconds
        while True:
            found = await self._store("get_decisions", lambda: self.store.get_decisions([doc_id]))
            if doc_id in found or time.monotonic() >= deadline:
                return found.get(doc_id)
            await asyncio.sleep(0.02)

    async def _resolve_races(self, w: _Window, rows: list[int], table: SketchTable, verdicts: list[Verdict],
                             seen: list[list[bytes]], thresholds: list[Thresholds],
                             rechecked: dict[str, Candidates]) -> list[Verdict]:
        """A near-duplicate another worker stored since our lookup (found by the commit's recheck)."""
        uniques = [k for k, v in enumerate(verdicts) if v.status is Status.UNIQUE]
        if not uniques:
            return verdicts
        own = set(w.refs)
        late = {k: new for k in uniques
                if (new := sorted(rechecked.get(w.docs[rows[k]].id, {}).keys() - set(seen[k]) - own))}
        if not late:
            return verdicts
        wanted = sorted({ref for refs in late.values() for ref in refs})
        sketches = await self._sketches(wanted)
        decided = await self._store("get_decisions", lambda: self.store.get_decisions(
            [s.doc_id for s in sketches.values()]))
        out = list(verdicts)
        base = len(table.sketches)
        extra = [sketches[ref] for ref in wanted if ref in sketches]
        row_of = {s.doc_id: base + i for i, s in enumerate(extra)}
        big = SketchTable.of(table.sketches + extra, table.signatures.shape[1], table.simhash.shape[1])
        for k, late_refs in late.items():
            me = w.sketches[rows[k]]
            cands = [row_of[sketches[ref].doc_id] for ref in late_refs if ref in sketches]
            for row, sim, rule in similar_candidates(big, k, cands, w.profiles[rows[k]], thresholds[k]):
                other = big.sketches[row]
                if await self._other_first(me, other, decided.get(other.doc_id)):
                    out[k] = Verdict(Status.DUPLICATE, Reason.NEAR, rule, other.doc_id, sim, len(cands), race=True)
                    me.original = other.original or other.doc_id
                    self.metrics.races.inc()
                    break
        return await self._image_races(w, rows, out, late, sketches, decided)

    async def _image_races(self, w: _Window, rows: list[int], verdicts: list[Verdict], late: dict[int, list[bytes]],
                           sketches: dict[bytes, Sketch], decided: dict[str, DecisionRecord]) -> list[Verdict]:
        """The image rule against what other workers stored since our lookup, under the same
        protocol as the text's: a caption whose photograph a racing document holds yields when that
        document is earlier and undecided, or decided unique."""
        s = self.settings.images
        out = list(verdicts)
        for k, refs in late.items() if len(w.images) else ():
            r = rows[k]
            if out[k].status is not Status.UNIQUE or not w.docs[r].images or w.fps.lengths[r] >= s.caption_chars:
                continue
            match = nearest_image(w.docs[r].images, [sketches[ref] for ref in refs if ref in sketches], radii_of(s))
            if match is not None and await self._other_first(w.sketches[r], match.other,
                                                             decided.get(match.other.doc_id)):
                out[k] = replace(image_verdict(out[k], w.fps.lengths[r], match, s.caption_chars), race=True)
                w.sketches[r].original = out[k].cluster or ""
                self.metrics.races.inc()
        return out

    async def _other_first(self, me: Sketch, other: Sketch, theirs: Any) -> bool:
        """Whether ``other`` (stored by another worker since our lookup, ``theirs`` its decision if
        written) wins the race against ``me``."""
        if theirs is None and (other.published_at, other.doc_id) < (me.published_at, me.doc_id):
            return True  # both in flight and it is earlier: we yield at once
        if theirs is None:
            # we are earlier, but the other may have re-checked before our insert and missed us:
            # its decision (written right after its re-check) tells
            theirs = await self._await_decision(other.doc_id)
        # decided, so possibly emitted: a unique one wins; one that names us does not
        return theirs is not None and theirs.status == Status.UNIQUE.value


def strongest(candidates: Candidates, exclude: set[bytes], cap: int) -> list[bytes]:
    """At most ``cap`` candidate refs not in ``exclude``: those found under the most index keys
    first (most LSH bands shared), then by ref. A flood of weak candidates (a template many
    documents share) must not push out the one that shares most of the document's bands."""
    refs = [r for r in candidates if r not in exclude]
    if len(refs) > cap:
        refs.sort(key=lambda r: (-candidates[r], r))
        return refs[:cap]
    return sorted(refs)


def _candidate_pairs(table_rows: list[Sketch], seen: list[list[bytes]], sketches: dict[bytes, Sketch],
                     keys: npt.NDArray[np.uint64]) -> tuple[list[Sketch], npt.NDArray[np.int64]]:
    """The sketch table (the window's rows, then each stored candidate once) and the (row, table
    row) pairs to compare: each row with its stored candidates, and the window's rows with the
    earlier rows that share a key with them."""
    slot: dict[bytes, int] = {}
    left: list[int] = []
    right: list[int] = []
    for k, refs in enumerate(seen):
        for ref in refs:
            s = sketches.get(ref)
            if s is None:
                continue
            if ref not in slot:
                slot[ref] = len(table_rows)
                table_rows.append(s)
            left.append(k)
            right.append(slot[ref])
    inner = self_join(keys)  # (earlier, later) rows of this window sharing a key
    pairs = np.empty((len(left) + inner.shape[0], 2), dtype=np.int64)
    pairs[: len(left), 0] = left
    pairs[: len(left), 1] = right
    pairs[len(left):, 0] = inner[:, 1]
    pairs[len(left):, 1] = inner[:, 0]
    return table_rows, pairs


def _fold_captions(batch: list[Document], fps: Fingerprints, caption_chars: int) -> None:
    """A caption's content hash covers its images (:func:`neardup.rules.images.caption_content_hash`)."""
    for r, d in enumerate(batch):
        if d.images and fps.lengths[r] < caption_chars:
            fps.content_hashes[r] = caption_content_hash(fps.content_hashes[r], d.images)


def _replays(w: _Window, answer: Any) -> tuple[dict[int, Decision], set[int]]:
    """The rows the store already decided (replayed as they were), and the rows whose id came
    back with other text (decided anew)."""
    final: dict[int, Decision] = {}
    reused: set[int] = set()
    for r, doc in enumerate(w.docs):
        stored = answer.decisions.get(doc.id)
        if stored is None:
            continue
        if stored.content_hash and stored.content_hash != w.fps.content_hashes[r]:
            reused.add(r)  # the id came back with other text: decide the new text
        else:
            final[r] = _replay(doc, stored)
    return final, reused


def _replay(doc: Document, stored: DecisionRecord) -> Decision:
    return Decision(doc, Status(stored.status), stored.duplicate_of,
                    replace(Evidence.from_dict(json.loads(stored.evidence)), replay=True))


def store_options(settings: Settings) -> dict[str, Any]:
    """Keyword options of :func:`neardup.storage.open_store` for the settings' store URL."""
    if not settings.store_url.startswith(("redis", "rediss", "rediscluster")):
        return {}
    r = settings.redis
    return {
        "password": r.password.get_secret_value() if r.password else None,
        "username": r.username, "tls": r.tls, "tls_ca_file": r.tls_ca_file,
        "max_connections": r.max_connections, "key_prefix": r.key_prefix,
        "index_shards": r.index_shards,
        "index_bucket_seconds": r.index_bucket_seconds or None,
        "retry_seconds": r.retry_seconds,
    }


def _split_ids(docs: list[Document]) -> tuple[list[int], list[int], dict[str, int]]:
    """(the first document of each id, the later ones of an id whose text differs, each id's
    first position). An id repeated in a window: the same text is a replay of the first
    occurrence; other text is decided in a window of its own after this one."""
    first_of: dict[str, int] = {}
    fresh: list[int] = []
    later: list[int] = []
    for i, doc in enumerate(docs):
        j = first_of.setdefault(doc.id, i)
        if j == i:
            fresh.append(i)
        elif docs[j].text != doc.text:
            later.append(i)
    return fresh, later, first_of


def _decision_order(docs: list[Document]) -> list[int]:
    """The earlier document is the original: a window is decided in (published_at, arrival) order."""
    return sorted(range(len(docs)), key=lambda i: (docs[i].published_at if docs[i].published_at is not None
                                                   else math.inf, i))


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class WindowPipeline:
    """Decides a stream of windows in order, the next :data:`PREFETCH_AHEAD` fingerprinted
    (:meth:`Engine.prefetch`) while one is decided: on two cores the batch CLI and the library
    decide about a third more documents a second (docs/measurements.md). A window's decisions
    come once that many windows followed it, or at :meth:`drain`."""

    def __init__(self, engine: Engine, ahead: int | None = None) -> None:
        """Windows of ``engine``, ``ahead`` of them fingerprinted ahead of the one decided: by
        default :data:`PREFETCH_AHEAD` where the process may run on two cores or more, else none
        (on one core the threads only take turns: 6-7 % slower, window after window is best)."""
        self.engine = engine
        self.ahead = ahead if ahead is not None else (PREFETCH_AHEAD if usable_cores() > 1 else 0)
        self._waiting: deque[list[Document]] = deque()

    async def add(self, docs: Sequence[Document]) -> list[list[Decision]]:
        """Queue a window; the decisions of the windows decided now (each a list, in input order)."""
        batch = list(docs)
        if not batch:
            return []
        if self.ahead:
            self.engine.prefetch(batch)
        self._waiting.append(batch)
        out = []
        while len(self._waiting) > self.ahead:
            out.append(await self.engine.decide(self._waiting.popleft()))
        return out

    async def drain(self) -> list[list[Decision]]:
        """Decide every window queued."""
        out = []
        while self._waiting:
            out.append(await self.engine.decide(self._waiting.popleft()))
        return out


async def decide_all(engine: Engine, docs: Sequence[Document], window: int) -> list[Decision]:
    """Helper for batch use: decide ``docs`` in windows of ``window`` documents (a :class:`WindowPipeline`)."""
    pipeline = WindowPipeline(engine)
    out: list[Decision] = []
    for start in range(0, len(docs), window):
        for decided in await pipeline.add(docs[start : start + window]):
            out.extend(decided)
        await asyncio.sleep(0)
    for decided in await pipeline.drain():
        out.extend(decided)
    return out
