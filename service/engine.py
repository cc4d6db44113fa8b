"""The one decision path behind the batch CLI and the Faust agents.

``Engine.decide(window)`` takes a window of validated documents and returns one decision per
document, in input order, after storing fingerprints and decisions. Steps:

1. replays: ids the store already decided get that decision again (idempotent redelivery);
2. fingerprint the window in one batch (normalise, segment, SimHash, MinHash, clause profile);
3. exact path: atomic claim of each content hash; a claim held by another id is an exact
   duplicate (the Bloom filter only short-cuts, the store's claim decides);
4. near path: candidates from the store (SimHash blocks, LSH bands, one round trip) and from
   the earlier documents of this window, re-checked on full signatures (Jaccard, Hamming,
   containment), the hybrid rule, then the critical-difference check;
5. store the window's fingerprints, then re-query (a document another worker stored meanwhile
   is seen now) and resolve such races: a candidate already decided wins, otherwise the earlier
   (published_at, id) is the original;
6. store the decisions.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from rbloom import Bloom

from neardup.config.settings import Settings
from neardup.differences import CriticalDifference, Profile, decode_profile, profiler
from neardup.document import Document
from neardup.fingerprint import (
    FingerprintConfig,
    Fingerprinter,
    Fingerprints,
    corrected_jaccard,
    decode_signature,
    decode_simhash,
    encode_simhash,
    truncate_signature,
)
from neardup.index import IndexLayout
from neardup.kernels.minhash import jaccard_estimates
from neardup.kernels.simhash import hamming_distances
from neardup.metrics import Metrics
from neardup.policy import HybridPolicy, Similarity, containment
from neardup.storage import DecisionRecord, FingerprintRecord, FingerprintStore, open_store

log = logging.getLogger(__name__)
T = TypeVar("T")

UNIQUE = "unique"
DUPLICATE = "duplicate"
BLOOM_CAPACITY = 10_000_000


@dataclass(slots=True)
class Decision:
    doc: Document
    status: str
    duplicate_of: str | None
    evidence: dict[str, Any]

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.doc.raw) if self.doc.raw else {"id": self.doc.id, "text": self.doc.text}
        out["status"] = self.status
        out["duplicate_of"] = self.duplicate_of
        out["evidence"] = self.evidence
        return out


@dataclass(slots=True)
class _Candidate:
    doc_id: str
    signature: npt.NDArray[np.uint32]  # the stored (possibly b-bit) values
    sig_bits: int
    sig_kind: bytes
    simhash: npt.NDArray[np.uint64]
    shingles: int
    length: int
    content_hash: bytes
    profile: npt.NDArray[np.uint64]
    published_at: float


@dataclass(slots=True)
class _Match:
    candidate: _Candidate
    similarity: Similarity
    rule: str | None
    critical: CriticalDifference | None = None


@dataclass(slots=True)
class _Prepared:
    """Per-document state of one window while it is decided."""

    doc: Document
    row: int
    published_at: float
    keys: list[bytes] = field(default_factory=list)
    record: FingerprintRecord | None = None
    clauses: Profile | None = None
    decision: Decision | None = None
    seen: set[str] = field(default_factory=set)


def _bloom_hash(item: Any) -> int:
    # rbloom needs a stable hash: the first 16 bytes of the content hash as a signed int128
    return int.from_bytes(item[:16], "big", signed=True)


class Engine:
    def __init__(self, settings: Settings, store: FingerprintStore, metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.store = store
        self.metrics = metrics or Metrics()
        fp = settings.fingerprint
        self.fingerprinter = Fingerprinter(FingerprintConfig(
            simhash_bits=fp.simhash_bits, num_perm=fp.num_perm, zh_shingle=fp.zh_shingle,
            en_shingle=fp.en_shingle, seed=fp.seed, t2s=settings.normalize.traditional_to_simplified,
            strip_html=settings.normalize.strip_html, idf_path=fp.idf_path,
            lexicon_path=fp.domain_weights_path, segment_hmm=fp.segment_hmm, signature_bits=fp.signature_bits,
        ))
        self.layout = IndexLayout.create(fp.simhash_bits, settings.index.hamming_radius, fp.num_perm,
                                         settings.index.lsh_threshold, settings.index.lsh_fp_weight,
                                         settings.index.lsh_fn_weight)
        self.profiler = profiler(fp.domain_weights_path)
        self.policy = HybridPolicy(settings.thresholds)
        self.bloom = Bloom(BLOOM_CAPACITY, 0.01, hash_func=_bloom_hash)
        # only an in-process store sees every write through this engine: only there does a Bloom
        # miss prove a hash unclaimed (other workers write to a shared Redis)
        self.exclusive_store = settings.store_url.startswith(("memory://", "file://"))
        self._bloom_items = 0
        self.windows = 0
        self._publish_thresholds()

    # ---------------------------------------------------------------- life cycle
    @classmethod
    async def open(cls, settings: Settings, registry: Any = None,
                   store: FingerprintStore | None = None) -> Engine:
        if store is None:
            r = settings.redis
            options: dict[str, Any] = {}
            if settings.store_url.startswith(("redis", "rediss", "rediscluster")):
                options = {
                    "password": r.password.get_secret_value() if r.password else None,
                    "username": r.username, "tls": r.tls, "tls_ca_file": r.tls_ca_file,
                    "max_connections": r.max_connections, "key_prefix": r.key_prefix,
                    "time_bucket_seconds": r.time_bucket_seconds, "index_shards": r.index_shards,
                    "keep_index_keys": r.keep_index_keys, "retry_seconds": r.retry_seconds,
                }
            store = open_store(settings.store_url, ttl=settings.ttl_seconds, **options)
        await store.open()
        return cls(settings, store, Metrics(registry) if registry is not None else None)

    async def close(self) -> None:
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
        for name, value in self.policy.thresholds().items():
            self.metrics.threshold.labels(name).set(float(value))

    # ---------------------------------------------------------------- public API
    async def decide(self, docs: Sequence[Document]) -> list[Decision]:
        return await self._run(list(docs), dry_run=False)

    async def check(self, doc: Document) -> Decision:
        """The decision ``doc`` would get now; nothing is stored."""
        return (await self._run([doc], dry_run=True))[0]

    # ---------------------------------------------------------------- the path
    async def _run(self, docs: list[Document], dry_run: bool) -> list[Decision]:
        if not docs:
            return []
        started = time.perf_counter()
        self.windows += 1
        window_id = f"{self.settings.worker_id}:{self.windows}"
        results: list[Decision | None] = [None] * len(docs)

        # 1. replays, and repeated ids inside the window
        first_of: dict[str, int] = {}
        # a dry run reads decisions too: checking an id that was already decided returns that decision
        stored = await self._store(
            "get_decisions", lambda: self.store.get_decisions(list({d.id for d in docs})))
        fresh: list[int] = []
        for i, doc in enumerate(docs):
            rec = stored.get(doc.id)
            if rec is not None:
                results[i] = Decision(doc, rec.status, rec.duplicate_of,
                                      {**json.loads(rec.evidence), "replay": True})
                self.metrics.replays.inc()
            elif doc.id in first_of:
                continue  # answered below with the first occurrence's decision
            else:
                first_of[doc.id] = i
                fresh.append(i)

        if fresh:
            await self._decide_fresh(docs, fresh, results, window_id, dry_run)
        for i, doc in enumerate(docs):
            if results[i] is None:
                first = results[first_of[doc.id]]
                assert first is not None
                results[i] = Decision(doc, first.status, first.duplicate_of, {**first.evidence, "replay": True})

        out = [r for r in results if r is not None]
        if not dry_run:
            self.metrics.window_size.observe(len(docs))
            self.metrics.window_seconds.observe(time.perf_counter() - started)
            now = time.time()
            for d in out:
                if d.evidence.get("replay"):
                    continue
                self.metrics.documents.labels(d.status, d.evidence.get("reason", "")).inc()
                if d.doc.published_at is not None:
                    self.metrics.decision_latency.observe(max(0.0, now - d.doc.published_at))
            dup_j = [float(d.evidence["jaccard"]) for d in out
                     if d.status == DUPLICATE and d.evidence.get("reason") == "near"]
            if self.policy.observe(len(out), dup_j):
                self.metrics.threshold_updates.inc()
                self._publish_thresholds()
        return out

    async def _decide_fresh(self, docs: list[Document], fresh: list[int], results: list[Decision | None],
                            window_id: str, dry_run: bool) -> None:
        # documents are decided in (published_at, arrival) order: the earlier one is the original
        t0 = time.time()
        order = sorted(fresh, key=lambda i: (docs[i].published_at if docs[i].published_at is not None
                                             else math.inf, i))
        batch = [docs[i] for i in order]
        # the CPU-bound part runs in a thread so that the event loop (Kafka heartbeats, web
        # probes) stays responsive during a large window
        fps, preps = await asyncio.to_thread(self._prepare, batch, t0)

        # 3. exact path
        owners: list[str]
        for p in preps:
            assert p.record is not None
            hit = p.record.content_hash in self.bloom
            self.metrics.bloom_hits.labels("maybe" if hit else "miss").inc()
        if dry_run:
            # nothing may be claimed: a Bloom hit (a hash this process stored) is confirmed by a
            # read of the claim; a miss skips the store, as no claim can exist from here
            maybe = [p for p in preps if p.record is not None
                     and (not self.exclusive_store or p.record.content_hash in self.bloom)]
            held = await self._store("lookup_exact", lambda: self.store.lookup_exact(
                [p.record.content_hash for p in maybe if p.record is not None])) if maybe else []
            owner_of = {p.doc.id: o for p, o in zip(maybe, held, strict=True) if o is not None}
            owners = [owner_of.get(p.doc.id, p.doc.id) for p in preps]
        else:
            owners = await self._store("claim_exact", lambda: self.store.claim_exact(
                [(p.record.content_hash, p.doc.id, p.doc.type) for p in preps if p.record is not None]))
        near: list[_Prepared] = []
        for p, owner in zip(preps, owners, strict=True):
            if owner != p.doc.id:
                p.decision = Decision(p.doc, DUPLICATE, owner, self._evidence(
                    "exact", window_id, matched=owner, jaccard=1.0, hamming=0, containment=1.0,
                    rule="exact", candidates=1))
            else:
                near.append(p)

        # 4. near path
        found = await self._store("query", lambda: self.store.query([p.keys for p in near]))
        cap = self.settings.index.max_candidates
        wanted: set[str] = set()
        for p, ids in zip(near, found, strict=True):
            ids.discard(p.doc.id)
            p.seen = set(sorted(ids)[:cap])
            wanted |= p.seen
        records = await self._store("fetch", lambda: self.store.fetch(sorted(wanted))) if wanted else {}
        stored_cands: dict[str, _Candidate] = {}
        for i, r in records.items():
            cand = self._candidate(r)
            if cand is not None:
                stored_cands[i] = cand

        local_index: dict[bytes, list[int]] = {}
        local: list[_Candidate] = []
        for p in preps:
            if p.decision is None:
                local_ids = {local[j].doc_id for k in p.keys for j in local_index.get(k, ())}
                local_ids.discard(p.doc.id)
                cands = [stored_cands[i] for i in sorted(p.seen) if i in stored_cands]
                cands += [c for c in local if c.doc_id in local_ids and c.doc_id not in p.seen]
                p.decision = self._judge(p, fps, cands, window_id)
            # every fresh document is a candidate for the later ones in this window
            if p.decision.evidence.get("reason") != "exact":
                cand = self._candidate(p.record) if p.record is not None else None
                if cand is not None:
                    local.append(cand)
                    for k in p.keys:
                        local_index.setdefault(k, []).append(len(local) - 1)

        if not dry_run:
            # 5. store fingerprints, then resolve races with documents stored meanwhile
            new_records = [p.record for p in preps if p.record is not None
                           and p.decision is not None and p.decision.evidence.get("reason") != "exact"]
            await self._store("add", lambda: self.store.add(new_records))
            for p in preps:
                assert p.record is not None
                self.bloom.add(p.record.content_hash)
            self._bloom_items += len(preps)
            self.metrics.bloom_fill.set(min(1.0, self._bloom_items / BLOOM_CAPACITY))
            await self._resolve_races(preps, fps, window_id)
            # 6. decisions
            await self._store("put_decisions", lambda: self.store.put_decisions([
                DecisionRecord(p.doc.id, p.decision.status, p.decision.duplicate_of,
                               json.dumps(p.decision.evidence, ensure_ascii=False), p.doc.type)
                for p in preps if p.decision is not None]))
        for p, pos in zip(preps, order, strict=True):
            results[pos] = p.decision

    def _prepare(self, batch: list[Document], t0: float) -> tuple[Fingerprints, list[_Prepared]]:
        fps = self.fingerprinter.fingerprint([d.text for d in batch], [d.lang for d in batch])
        band_keys = self.layout.band_keys(fps.signatures)
        preps: list[_Prepared] = []
        for row, doc in enumerate(batch):
            p = _Prepared(doc, row, doc.published_at if doc.published_at is not None else t0)
            p.keys = self.layout.simhash_keys(fps.simhash[row]) + band_keys[row]
            p.clauses = self.profiler.profile(fps.texts[row], fps.langs[row])
            p.record = FingerprintRecord(
                doc_id=doc.id, content_type=doc.type, published_at=p.published_at,
                content_hash=fps.content_hashes[row], simhash=encode_simhash(fps.simhash[row]),
                signature=self.fingerprinter.encode_signature(fps, row), profile=p.clauses.encode(),
                shingles=int(fps.shingle_counts[row]), length=fps.lengths[row], index_keys=tuple(p.keys),
            )
            preps.append(p)
        return fps, preps

    # ---------------------------------------------------------------- re-check
    def _candidate(self, rec: FingerprintRecord) -> _Candidate | None:
        try:
            sig, kind, _size, seed, bits = decode_signature(rec.signature)
            profile = decode_profile(rec.profile)
        except Exception:  # a record from another format version is not comparable
            self.metrics.recheck_rejections.labels("format").inc()
            return None
        if seed != self.settings.fingerprint.seed or sig.shape[0] != self.settings.fingerprint.num_perm:
            self.metrics.recheck_rejections.labels("format").inc()
            return None
        return _Candidate(rec.doc_id, sig, bits, kind, decode_simhash(rec.simhash), rec.shingles, rec.length,
                          rec.content_hash, profile, rec.published_at)

    def _similarities(self, row: int, fps: Fingerprints, cands: list[_Candidate]) -> list[_Match]:
        kind = fps.shingle_kind[row]
        usable = [c for c in cands if c.sig_kind == kind and c.simhash.shape[0] == fps.simhash.shape[1]]
        if len(usable) < len(cands):
            self.metrics.recheck_rejections.labels("language").inc(len(cands) - len(usable))
        if not usable:
            return []
        # compare at the coarsest precision among the pair's signatures (b-bit MinHash)
        bits = min(c.sig_bits for c in usable)
        raw = jaccard_estimates(truncate_signature(fps.signatures[row], bits),
                                np.stack([truncate_signature(c.signature, bits) for c in usable]))
        js = np.array([corrected_jaccard(float(j), bits) for j in raw])
        hs = hamming_distances(fps.simhash[row], np.stack([c.simhash for c in usable]))
        scale = 64.0 / (64 * fps.simhash.shape[1])
        out: list[_Match] = []
        for c, j, h in zip(usable, js.tolist(), hs.tolist(), strict=True):
            sim = Similarity(round(j, 4), round(h * scale),
                             round(containment(j, int(fps.shingle_counts[row]), c.shingles), 4))
            out.append(_Match(c, sim, self.policy.rule(sim)))
        return out

    def _judge(self, p: _Prepared, fps: Fingerprints, cands: list[_Candidate], window_id: str) -> Decision:
        self.metrics.candidates.observe(len(cands))
        matches = self._similarities(p.row, fps, cands)
        similar = [m for m in matches if m.rule is not None]
        self.metrics.recheck_rejections.labels("similarity").inc(len(matches) - len(similar))
        short = [m for m in similar if self.policy.too_short(fps.lengths[p.row], m.candidate.length)]
        for m in short:
            if m.candidate.content_hash != fps.content_hashes[p.row]:
                m.rule = None
                self.metrics.recheck_rejections.labels("short_text").inc()
        similar = [m for m in similar if m.rule is not None]
        similar.sort(key=lambda m: (-m.similarity.jaccard, m.similarity.hamming, m.candidate.doc_id))
        assert p.clauses is not None
        critical: list[_Match] = []
        for m in similar:
            m.critical = p.clauses.critical_against(m.candidate.profile)
            if m.critical is not None:
                self.metrics.recheck_rejections.labels("critical").inc()
                critical.append(m)
                continue
            s = m.similarity
            if critical and critical[0].similarity.jaccard - s.jaccard > self.settings.thresholds.reversal_margin:
                # the nearest document says the opposite; a much looser match must not pull this
                # reversal into that document's cluster through a third one
                self.metrics.recheck_rejections.labels("reversal_nearer").inc()
                break
            return Decision(p.doc, DUPLICATE, m.candidate.doc_id, self._evidence(
                "near", window_id, matched=m.candidate.doc_id, jaccard=s.jaccard, hamming=s.hamming,
                containment=s.containment, rule=m.rule, candidates=len(cands)))
        best = max(matches, key=lambda m: m.similarity.jaccard, default=None)
        ev = self._evidence("critical" if critical else "unique", window_id,
                            matched=best.candidate.doc_id if best else None,
                            jaccard=best.similarity.jaccard if best else None,
                            hamming=best.similarity.hamming if best else None,
                            containment=best.similarity.containment if best else None,
                            rule=None, candidates=len(cands))
        if critical:
            m = critical[0]
            ev["critical"] = {**m.critical.as_evidence(), "against": m.candidate.doc_id,  # type: ignore[union-attr]
                              "jaccard": m.similarity.jaccard, "hamming": m.similarity.hamming}
        return Decision(p.doc, UNIQUE, None, ev)

    def _evidence(self, reason: str, window_id: str, *, matched: str | None, jaccard: float | None,
                  hamming: int | None, containment: float | None, rule: str | None,
                  candidates: int) -> dict[str, Any]:
        return {
            "reason": reason,
            "rule": rule,
            "matched_id": matched,
            "jaccard": jaccard,
            "hamming": hamming,
            "containment": containment,
            "candidates": candidates,
            "thresholds": self.policy.thresholds(),
            "window_id": window_id,
            "worker_id": self.settings.worker_id,
            "decided_at": round(time.time(), 3),
        }

    async def _await_decision(self, doc_id: str) -> DecisionRecord | None:
        """Poll for another worker's decision; None when it does not come in time (that worker
        died: its redelivered document will see ours in the store)."""
        deadline = time.monotonic() + self.settings.index.race_wait_seconds
        while True:
            found = await self._store("get_decisions", lambda: self.store.get_decisions([doc_id]))
            if doc_id in found or time.monotonic() >= deadline:
                return found.get(doc_id)
            await asyncio.sleep(0.02)

    async def _resolve_races(self, preps: list[_Prepared], fps: Fingerprints, window_id: str) -> None:
        """Re-query after our insert: a near-duplicate stored meanwhile by another worker."""
        uniques = [p for p in preps if p.decision is not None and p.decision.status == UNIQUE]
        if not uniques:
            return
        ours = {p.doc.id for p in preps}
        found = await self._store("query", lambda: self.store.query([p.keys for p in uniques]))
        late: dict[int, set[str]] = {}
        for k, (p, ids) in enumerate(zip(uniques, found, strict=True)):
            new = ids - p.seen - ours
            if new:
                late[k] = new
        if not late:
            return
        wanted = sorted(set().union(*late.values()))
        records = await self._store("fetch", lambda: self.store.fetch(wanted))
        decided = await self._store("get_decisions", lambda: self.store.get_decisions(wanted))
        for k, ids in late.items():
            p = uniques[k]
            cands = [c for c in (self._candidate(records[i]) for i in sorted(ids) if i in records) if c]
            matches = [m for m in self._similarities(p.row, fps, cands) if m.rule is not None]
            assert p.clauses is not None
            for m in sorted(matches, key=lambda m: -m.similarity.jaccard):
                if p.clauses.critical_against(m.candidate.profile) is not None:
                    continue
                other = m.candidate
                theirs = decided.get(other.doc_id)
                if theirs is None and (other.published_at, other.doc_id) < (p.published_at, p.doc.id):
                    other_first = True  # both in flight and it is earlier: we yield at once
                else:
                    if theirs is None:
                        # we are earlier, but the other may have re-checked before our insert and
                        # missed us: its decision (written right after its re-check) tells
                        theirs = await self._await_decision(other.doc_id)
                    # decided, so possibly emitted: a unique one wins; one that names us does not
                    other_first = theirs is not None and theirs.status == UNIQUE
                if other_first:
                    s = m.similarity
                    p.decision = Decision(p.doc, DUPLICATE, other.doc_id, {
                        **self._evidence("near", window_id, matched=other.doc_id, jaccard=s.jaccard,
                                         hamming=s.hamming, containment=s.containment, rule=m.rule,
                                         candidates=len(cands)),
                        "race": True})
                    self.metrics.races.inc()
                    break


async def decide_all(engine: Engine, docs: Sequence[Document], window: int) -> list[Decision]:
    """Helper for batch use: decide ``docs`` in windows of ``window`` documents."""
    out: list[Decision] = []
    for start in range(0, len(docs), window):
        out.extend(await engine.decide(docs[start : start + window]))
        await asyncio.sleep(0)
    return out
