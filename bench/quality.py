"""Quality of the engine on the development set, for any settings, and what it would store.

    .venv/bin/python bench/quality.py [--set fingerprint.signature_bits=4] [--set index.lsh_threshold=0.5]
                                      [--no-simhash-blocks] [--profile-version 7] [--flips-of-variants]
                                      [--json out.json]

Runs the engine (memory store, windows of 1,000 documents in file order, as the batch CLI does)
over ../shared/datasets/docs.jsonl and scores its duplicate_of against pairs.jsonl with the
project's scorer (neardup.learning.scoring): F1, precision, recall, per-kind recall / false-positive rate.
The store is wrapped so that every commit and put_decisions the engine makes is kept: the JSON
also gives what the engine stored (records, claims, decisions, index keys per record, byte sizes
of each field in the Redis value formats), and :func:`run` hands the captured calls to
bench/store_memory.py, which replays them at scale against Redis.

``--set SECTION.NAME=VALUE`` overrides one setting (as NEARDUP_SECTION__NAME would).
``--no-simhash-blocks`` is an experiment, not a setting: the engine's index layout files documents
under their LSH bands only (the SimHash block keys become 0, "no key"), to measure what the blocks
contribute to recall. ``--profile-version N`` is one too: critical-difference profiles made the
way records of an older version were (v2: one context over both sides of a polarity word; v3:
classes in contexts and fills, the first of two negators alone; v4: English negative prefixes not
read; v5: no names; v6: figures not read as values; v7: identifiers not read as figures).

``--flips-of-variants``: a harder test of the negation veto than the set's own flips, which are
made from originals. For each label-1 pair (a, b) of an edit kind, b' is b with the set's own
negation-flip edit applied (``Editor.negation_flip`` of ../shared/datasets/build.py, ``--flip-seed``), so the
flip sits in a text that is already a synonym edit, a truncation, a crawler-noise copy, ... of a.
The b' documents are decided after the set's; the report gives how many (a, b') pairs end in one
cluster ("merged"), per kind of b. No setting was chosen on these pairs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from report import emit

from neardup.config import load_settings
from neardup.config.settings import Settings
from neardup.document import Document, parse_document
from neardup.engine import Engine
from neardup.kernels.profile_codec import VERSIONS
from neardup.learning.scoring import score
from neardup.rules.differences import PROFILE_VERSION
from neardup.sketch.index import IndexLayout
from neardup.storage import (
    Candidates,
    Claim,
    CommitAnswer,
    DecisionRecord,
    FingerprintRecord,
    IndexKeys,
    Recheck,
    StateValue,
    WindowAnswer,
    WindowQuery,
    open_store,
)

DATASETS = Path(os.environ.get("NEARDUP_DATASETS", Path(__file__).resolve().parent.parent.parent / "shared"
                               / "datasets"))
WINDOW = 1000


@dataclass(slots=True)
class Captured:
    """The store calls that write, in the order the engine made them (one entry per window)."""

    commits: list[tuple[list[Claim], list[FingerprintRecord]]] = field(default_factory=list)
    decisions: list[list[DecisionRecord]] = field(default_factory=list)


class CapturingStore:
    """A store that passes every call to ``inner`` and keeps what was committed."""

    def __init__(self, inner: Any) -> None:
        """Pass every call to ``inner``."""
        self.inner = inner
        self.url = inner.url
        self.captured = Captured()

    async def open(self) -> None:
        """Open the inner store."""
        await self.inner.open()

    async def close(self) -> None:
        """Close the inner store."""
        await self.inner.close()

    async def lookup(self, query: WindowQuery) -> WindowAnswer:
        """The inner store's answer."""
        return await self.inner.lookup(query)  # type: ignore[no-any-return]

    async def candidates(self, index_keys: IndexKeys) -> list[Candidates]:
        """The inner store's answer."""
        return await self.inner.candidates(index_keys)  # type: ignore[no-any-return]

    async def fetch(self, refs: Sequence[bytes]) -> dict[bytes, FingerprintRecord]:
        """The inner store's answer."""
        return await self.inner.fetch(refs)  # type: ignore[no-any-return]

    async def commit(self, claims: Sequence[Claim], records: Sequence[FingerprintRecord],
                     recheck: Recheck | None = None) -> CommitAnswer:
        """Keep the claims and records, then commit them to the inner store."""
        self.captured.commits.append((list(claims), list(records)))
        return await self.inner.commit(claims, records, recheck)  # type: ignore[no-any-return]

    async def get_decisions(self, doc_ids: Sequence[str]) -> dict[str, DecisionRecord]:
        """The inner store's answer."""
        return await self.inner.get_decisions(doc_ids)  # type: ignore[no-any-return]

    async def put_decisions(self, decisions: Sequence[DecisionRecord]) -> None:
        """Keep the decisions, then store them in the inner store."""
        self.captured.decisions.append(list(decisions))
        await self.inner.put_decisions(decisions)

    async def write_state(self, name: str, value: StateValue) -> bool:
        """The inner store's answer."""
        return await self.inner.write_state(name, value)  # type: ignore[no-any-return]

    async def expire(self, now: float | None = None) -> int:
        """The inner store's answer."""
        return await self.inner.expire(now)  # type: ignore[no-any-return]

    async def stats(self) -> dict[str, int]:
        """The inner store's answer."""
        return await self.inner.stats()  # type: ignore[no-any-return]


class BandsOnly(IndexLayout):
    """The engine's layout with the SimHash block keys left out (set to 0, "no key")."""

    def window_keys(self, simhash: npt.NDArray[np.uint64], signatures: npt.NDArray[np.uint32] | None,
                    comparable: npt.NDArray[np.bool_] | None = None) -> npt.NDArray[np.uint64]:
        """The engine's keys with the SimHash block keys zeroed."""
        keys = IndexLayout.window_keys(self, simhash, signatures, comparable)
        keys[:, : self.hamming_radius + 1] = 0
        return keys


def parse_sets(pairs: Sequence[str]) -> dict[str, Any]:
    """``a.b=v`` strings -> nested overrides for load_settings (values parsed as JSON when they parse)."""
    out: dict[str, Any] = {}
    for item in pairs:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"--set wants SECTION.NAME=VALUE, got {item!r}")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        *path, last = name.split(".")
        node = out
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return out


def load_docs(path: Path) -> list[Document]:
    """The development documents, validated as the CLI validates them."""
    with path.open("rb") as fh:
        return [parse_document(line) for line in fh if line.strip()]


def load_pairs(path: Path) -> list[dict[str, Any]]:
    """The labelled pairs."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


class ProfilesOfVersion:
    """The engine's profiler, making profiles of another record version (``--profile-version``)."""

    def __init__(self, inner: Any, version: int) -> None:
        """Wrap the engine's profiler ``inner``."""
        self.inner = inner
        self.version = version

    def profile_batch(self, texts: Sequence[str], langs: Sequence[str], **window: Any) -> Any:
        """The inner profiler's profiles, made as record version ``version`` (with the window's
        names and name slots, which versions before 6 leave out)."""
        return self.inner.profile_batch(texts, langs, version=self.version, **window)


def flips_of_variants(docs: list[Document], pairs: list[dict[str, Any]],
                      seed: int = 7) -> tuple[list[Document], list[dict[str, Any]]]:
    """(the b' documents, the (a, b') pairs): see ``--flips-of-variants`` in the module docstring."""
    import importlib.util
    import random

    spec = importlib.util.spec_from_file_location("dataset_build", DATASETS / "build.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"{DATASETS / 'build.py'}: not found (the development set's build script)")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    editor = build.Editor(random.Random(seed), None, None)
    by_id = {d.id: d for d in docs}
    extra: list[Document] = []
    flips: list[dict[str, Any]] = []
    for p in pairs:
        if p["label"] != 1 or p["kind"] in ("exact_duplicate", "natural_duplicate"):
            continue
        b = by_id[p["b"]]
        text = editor.negation_flip({"text": b.text, "lang": b.lang}, None)
        if not text or text == b.text:
            continue
        flipped = parse_document(json.dumps({"id": f"flip-{len(extra)}-{b.id}", "text": text, "lang": b.lang}))
        extra.append(flipped)
        flips.append({"a": p["a"], "b": flipped.id, "label": 0, "kind": "flip_of_" + p["kind"]})
    return extra, flips


def merged_flips(ids: list[str], flips: list[dict[str, Any]], duplicate_of: dict[str, str | None]) -> dict[str, Any]:
    """How many (a, b') pairs end in one cluster, in all and per kind of b."""
    from neardup.learning.scoring import UnionFind

    uf = UnionFind(ids)
    for i, t in duplicate_of.items():
        if t:
            uf.union(i, t)
    per_kind: dict[str, list[int]] = {}
    for f in flips:
        hit = per_kind.setdefault(f["kind"], [0, 0])
        hit[0] += uf.find(f["a"]) == uf.find(f["b"])
        hit[1] += 1
    total = sum(m for m, _ in per_kind.values())
    count = sum(n for _, n in per_kind.values())
    return {"pairs": count, "merged": total, "merged_rate": round(total / count, 4) if count else None,
            "per_kind": {k: f"{m}/{n}" for k, (m, n) in sorted(per_kind.items())}}


async def decide(settings: Settings, docs: list[Document], bands_only: bool,
                 profile_version: int | None = None) -> tuple[dict[str, str | None], Captured, float, Engine]:
    """Decide ``docs`` in windows on a fresh memory store; (duplicate_of by id, captured calls, seconds)."""
    warm = await Engine.open(settings)  # compiles the kernels outside the timed run
    await warm.decide(docs[:50])
    await warm.close()
    store = CapturingStore(open_store("memory://", ttl=settings.ttl_seconds))
    engine = await Engine.open(settings, store=store)  # type: ignore[arg-type]
    if bands_only:
        lay = engine.layout
        engine.layout = BandsOnly(lay.simhash_bits, lay.hamming_radius, lay.bands, lay.rows)
    if profile_version is not None:
        engine.profiler = ProfilesOfVersion(engine.profiler, profile_version)  # type: ignore[assignment]
    t0 = time.perf_counter()
    out: dict[str, str | None] = {}
    for k in range(0, len(docs), WINDOW):
        for d in await engine.decide(docs[k : k + WINDOW]):
            out[d.doc.id] = d.duplicate_of
    seconds = time.perf_counter() - t0
    await engine.close()
    return out, store.captured, seconds, engine


def _mean(values: Sequence[float]) -> float:
    return round(statistics.fmean(values), 1) if values else 0.0


def stored_sizes(captured: Captured, docs: int) -> dict[str, Any]:
    """What the engine stored per document, field by field, in the Redis value formats."""
    from neardup.storage.redis.store import encode_decision, encode_record

    records = [r for _, recs in captured.commits for r in recs]
    claims = [c for cl, _ in captured.commits for c in cl]
    decisions = [d for ds in captured.decisions for d in ds]
    statuses: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for d in decisions:
        statuses[d.status] = statuses.get(d.status, 0) + 1
        reason = json.loads(d.evidence).get("reason", "")
        reasons[reason] = reasons.get(reason, 0) + 1
    return {
        "documents": docs,
        "records": len(records),
        "claims": len(claims),
        "distinct_claimed_hashes": len({c.content_hash for c in claims}),
        "decisions": len(decisions),
        "decisions_by_status": statuses,
        "decisions_by_reason": reasons,
        "index_keys_per_record": _mean([len(r.index_keys) for r in records]),
        "id_bytes": _mean([len(r.doc_id.encode()) for r in records]),
        "signature_bytes": _mean([len(r.signature) for r in records]),
        "profile_bytes": _mean([len(r.profile) for r in records]),
        "profile_bytes_median": statistics.median([len(r.profile) for r in records]) if records else 0,
        "simhash_bytes": _mean([len(r.simhash) for r in records]),
        "record_value_bytes": _mean([len(encode_record(r)) for r in records]),
        "evidence_json_bytes": _mean([len(d.evidence.encode()) for d in decisions]),
        "decision_value_bytes": _mean([len(encode_decision(d)) for d in decisions]),
    }


def quality(ids: list[str], pairs: list[dict[str, Any]], duplicate_of: dict[str, str | None]) -> dict[str, Any]:
    """Scores of ``duplicate_of`` against the labelled pairs, as the README reports them."""
    sc = score(ids, pairs, duplicate_of)
    per_kind = {k: round(v.get("recall", v.get("fpr", 0.0)), 4) for k, v in sc.per_kind.items()}
    return {
        "f1": round(sc.f1, 4),
        "precision": round(sc.precision, 4),
        "recall": round(sc.recall, 4),
        "hard_negative_fpr": round(sc.hard_negative_fpr, 4),
        "truncation_recall": per_kind.get("truncation"),
        "negation_flip_fpr": per_kind.get("negation_flip"),
        "per_kind": per_kind,
    }


async def run(overrides: dict[str, Any], bands_only: bool = False, docs_path: Path | None = None,
              pairs_path: Path | None = None, profile_version: int | None = None,
              with_flips: bool = False, flip_seed: int = 7) -> tuple[dict[str, Any], Captured]:
    """Decide the development set under ``overrides``; (report, the captured store writes)."""
    settings = load_settings(**overrides)
    docs = load_docs(docs_path or DATASETS / "docs.jsonl")
    pairs = load_pairs(pairs_path or DATASETS / "pairs.jsonl")
    if with_flips:  # scored separately: the set's own figures come from a run without them
        extra, flips = flips_of_variants(docs, pairs, flip_seed)
        flip_of, _, _, _ = await decide(settings, docs + extra, bands_only, profile_version)
    duplicate_of, captured, seconds, engine = await decide(settings, docs, bands_only, profile_version)
    layout = engine.layout
    report = {
        "settings": overrides,
        "simhash_blocks_indexed": not bands_only,
        "profile_version": profile_version or PROFILE_VERSION,
        "layout": {"simhash_blocks": 0 if bands_only else layout.hamming_radius + 1, "bands": layout.bands,
                   "rows": layout.rows, "width": layout.width},
        **quality([d.id for d in docs], pairs, duplicate_of),
        "docs_per_s": round(len(docs) / seconds),
        "stored": stored_sizes(captured, len(docs)),
    }
    if with_flips:
        report["flips_of_variants"] = {"seed": flip_seed,
                                       **merged_flips([d.id for d in docs + extra], flips, flip_of)}
    return report, captured


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print (or write) its report."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="SECTION.NAME=VALUE")
    p.add_argument("--no-simhash-blocks", action="store_true", help="experiment: index LSH bands only")
    p.add_argument("--docs", type=Path, default=None, help="default: ../shared/datasets/docs.jsonl")
    p.add_argument("--pairs", type=Path, default=None, help="default: ../shared/datasets/pairs.jsonl")
    p.add_argument("--profile-version", type=int, choices=VERSIONS[:-1], default=None,
                   help="experiment: critical-difference profiles of this record version (default: the engine's)")
    p.add_argument("--flips-of-variants", action="store_true",
                   help="also: the set's negation flip applied to edited variants (module docstring)")
    p.add_argument("--flip-seed", type=int, default=7, help="seed of the flips of --flips-of-variants")
    p.add_argument("--json", type=Path, default=None, help="also write the report here")
    args = p.parse_args(argv)
    report, _ = asyncio.run(run(parse_sets(args.sets), args.no_simhash_blocks, args.docs, args.pairs,
                                args.profile_version, args.flips_of_variants, args.flip_seed))
    emit(report, args.json)


if __name__ == "__main__":
    main()
