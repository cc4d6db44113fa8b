"""The decision a document gets and its evidence: typed records shared by the engine, the CLI,
the agents and the public API. ``to_dict`` gives the JSON that every output row carries."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from neardup.document import Document
from neardup.media.hashes import ImageReject
from neardup.storage.base import epoch_of, iso_utc


class Status(StrEnum):
    """What a document is: the first of its kind, or a duplicate of an earlier one."""

    UNIQUE = "unique"
    DUPLICATE = "duplicate"


class Reason(StrEnum):
    """Why: an exact copy, a near-duplicate, nothing similar, or similar but a critical difference."""

    EXACT = "exact"
    NEAR = "near"
    UNIQUE = "unique"
    CRITICAL = "critical"
    IMAGE = "image"  # a caption or an empty text whose image is an earlier document's


class Rule(StrEnum):
    """Which rule matched (see :mod:`neardup.rules.policy`)."""

    EXACT = "exact"
    JACCARD = "jaccard"
    SIMHASH = "simhash"
    HYBRID = "hybrid"
    CONTAINMENT = "containment"
    EXCERPT = "excerpt"  # the shorter text's sentences stand in the longer one (a part of an article)
    TRANSLATION = "translation"  # the optional translation check (neardup.rules.translation)
    IMAGE = "image"  # the image rule (neardup.rules.images)


@dataclass(frozen=True, slots=True)
class CriticalEvidence:
    """A critical difference with the most similar candidate: the passage and the term that differ."""

    kind: str  # "polarity" | "figure" | "entity" | "version"
    passage: str
    term: str
    against: str
    jaccard: float
    hamming: int
    at: tuple[int, int] | None = None  # the passage's offsets in the document's text as given
    # the passage's span in the normalised text the profile read (the engine quotes the original by it)
    normalized_span: tuple[int, int] | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``evidence.critical``); ``at`` only where the passage was traced to the
        original text (its offsets there, end exclusive)."""
        out: dict[str, Any] = {"kind": self.kind, "passage": self.passage, "term": self.term,
                               "against": self.against, "jaccard": self.jaccard, "hamming": self.hamming}
        if self.at is not None:
            out["at"] = list(self.at)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CriticalEvidence:
        """Inverse of :meth:`to_dict`."""
        at = d.get("at")
        return cls(str(d.get("kind", "")), str(d.get("passage", "")), str(d.get("term", "")),
                   str(d.get("against", "")), float(d.get("jaccard") or 0.0), int(d.get("hamming") or 0),
                   (int(at[0]), int(at[1])) if isinstance(at, list) and len(at) == 2 else None)


@dataclass(frozen=True, slots=True)
class ImageEvidence:
    """An image of this document within ``radius`` pHash bits of an image of ``against``: ``image``
    is its place in this document's ``images`` list, ``their_image`` the place of the other's among
    the usable images its record keeps."""

    against: str
    hamming: int
    image: int
    their_image: int
    radius: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``evidence.image``, ``evidence.shared_image``)."""
        return {"against": self.against, "hamming": self.hamming, "image": self.image,
                "their_image": self.their_image, "radius": self.radius}

    @classmethod
    def from_dict(cls, d: object) -> ImageEvidence | None:
        """Inverse of :meth:`to_dict`; None for anything that is not an object."""
        if not isinstance(d, dict):
            return None
        return cls(str(d.get("against", "")), int(d.get("hamming") or 0), int(d.get("image") or 0),
                   int(d.get("their_image") or 0), int(d.get("radius") or 0))


@dataclass(frozen=True, slots=True)
class Evidence:
    """Enough to explain a decision without re-running anything."""

    reason: Reason
    rule: Rule | None = None
    matched_id: str | None = None  # the duplicate's original, or the most similar candidate
    jaccard: float | None = None
    hamming: int | None = None  # SimHash distance on the 64-bit scale
    containment: float | None = None
    candidates: int = 0  # candidates re-checked
    thresholds: dict[str, float | int] = field(default_factory=dict)
    threshold_version: int = 0  # 0: the configured thresholds; n: the n-th shared adaptive state
    window_id: str = ""
    worker_id: str = ""
    decided_at: float = 0.0  # epoch seconds; written as ISO 8601 UTC (storage.base.iso_utc)
    critical: CriticalEvidence | None = None
    replay: bool = False  # the stored decision of an earlier delivery
    race: bool = False  # decided against a near-duplicate another worker stored meanwhile
    id_reused: bool = False  # the id was decided before with other text: this text was decided anew
    model_version: int = 0  # the learned model in force (0: none)
    cosine: float | None = None  # the translation check's: the embeddings' cosine
    tier: str | None = None  # where the matched document was found when not the warm store: "cold"
    images_rejected: tuple[ImageReject, ...] = ()  # the document's images that were not used, and why
    image: ImageEvidence | None = None  # the image that made this document a duplicate (reason image)
    shared_image: ImageEvidence | None = None  # an earlier document's photo this one shares, decided by its text

    def to_dict(self) -> dict[str, Any]:
        """The JSON form; optional flags appear only when set, so rows stay as short as before."""
        out: dict[str, Any] = {
            "reason": self.reason.value,
            "rule": self.rule.value if self.rule is not None else None,
            "matched_id": self.matched_id,
            "jaccard": self.jaccard,
            "hamming": self.hamming,
            "containment": self.containment,
            "candidates": self.candidates,
            "thresholds": dict(self.thresholds),
            "threshold_version": self.threshold_version,
            "window_id": self.window_id,
            "worker_id": self.worker_id,
            "decided_at": iso_utc(self.decided_at) if self.decided_at > 0 else None,
        }
        if self.model_version:
            out["model_version"] = self.model_version
        if self.cosine is not None:
            out["cosine"] = self.cosine
        if self.critical is not None:
            out["critical"] = self.critical.to_dict()
        if self.tier is not None:
            out["tier"] = self.tier
        if self.images_rejected:
            out["images_rejected"] = [r.to_dict() for r in self.images_rejected]
        if self.image is not None:
            out["image"] = self.image.to_dict()
        if self.shared_image is not None:
            out["shared_image"] = self.shared_image.to_dict()
        for flag in ("replay", "race", "id_reused"):
            if getattr(self, flag):
                out[flag] = True
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Evidence:
        """Inverse of :meth:`to_dict` (a stored decision read back for a replay)."""
        critical = d.get("critical")
        return cls(
            reason=Reason(d.get("reason", "unique")),
            rule=Rule(d["rule"]) if d.get("rule") else None,
            matched_id=d.get("matched_id"),
            jaccard=d.get("jaccard"),
            hamming=d.get("hamming"),
            containment=d.get("containment"),
            candidates=int(d.get("candidates") or 0),
            thresholds=dict(d.get("thresholds") or {}),
            threshold_version=int(d.get("threshold_version") or 0),
            window_id=str(d.get("window_id") or ""),
            worker_id=str(d.get("worker_id") or ""),
            decided_at=epoch_of(d.get("decided_at")) or 0.0,
            critical=CriticalEvidence.from_dict(critical) if isinstance(critical, dict) else None,
            replay=bool(d.get("replay")),
            race=bool(d.get("race")),
            id_reused=bool(d.get("id_reused")),
            model_version=int(d.get("model_version") or 0),
            cosine=float(d["cosine"]) if d.get("cosine") is not None else None,
            tier=d.get("tier"),
            images_rejected=tuple(ImageReject.from_dict(r) for r in d.get("images_rejected") or ()
                                  if isinstance(r, dict)),
            image=ImageEvidence.from_dict(d.get("image")),
            shared_image=ImageEvidence.from_dict(d.get("shared_image")),
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """One document's decision: ``status``, the original it duplicates, and the evidence."""

    doc: Document
    status: Status
    duplicate_of: str | None
    evidence: Evidence

    @property
    def id(self) -> str:
        """The document's id."""
        return self.doc.id

    def as_replay(self) -> Decision:
        """The same decision, marked as the answer to a repeated delivery."""
        return replace(self, evidence=replace(self.evidence, replay=True))

    def to_record(self) -> dict[str, Any]:
        """The output row: the input object plus ``status``, ``duplicate_of`` and ``evidence``."""
        out: dict[str, Any] = dict(self.doc.raw) if self.doc.raw else {"id": self.doc.id, "text": self.doc.text}
        out["status"] = self.status.value
        out["duplicate_of"] = self.duplicate_of
        out["evidence"] = self.evidence.to_dict()
        return out


__all__ = ["CriticalEvidence", "Decision", "Evidence", "ImageEvidence", "Reason", "Rule", "Status"]
