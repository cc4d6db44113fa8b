"""The image rules (issue 23, docs/media.md): what a document's photographs decide.

- A text reprint stays a reprint whatever its photographs: the text rules decide first, and a
  duplicate by its text is never looked at again here.
- A document whose normalised text is shorter than ``images.caption_chars`` (an empty text, a
  caption) with an image within ``images.radius`` pHash bits of an image of an earlier document
  is that document's duplicate (reason and rule ``image``): there is too little text to tell them
  apart, and the photograph is the story.
- Different texts that share a photograph stay unique (a stock photo is not a reprint, nor is a
  second photograph of one scene); the evidence names the earlier document that shares it
  (``shared_image``).

Candidates come from the image index (:func:`neardup.sketch.index.image_keys`: a pHash's four
16-bit blocks; an image is filed under its whole pHash's and one crop view's, and asked under its
whole pHash's and all its crop and pad views', docs/media.md) and from the earlier rows of the
same window that share a block; a candidate only proposes, the Hamming distance decides: whole
pHash to stored whole pHash within ``images.radius``, or one of the new image's views to it
within ``images.view_radius``, both smaller for a pair with a picture of little structure
(``images.low_structure``: less than 5 % of its variance beyond the frequencies the pHash reads).
Two captions alike with different photographs are not exact copies: a caption's content hash
covers its images' hashes (:func:`caption_content_hash`).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from neardup.decision import ImageEvidence, Reason, Rule, Status
from neardup.document import Document
from neardup.kernels.pairs import self_join
from neardup.media.hashes import DocumentImage, ImageRadii, structure_byte, structure_of
from neardup.rules.policy import Verdict
from neardup.sketch.index import IMAGE_BLOCKS, image_keys
from neardup.sketch.similarity import Sketch
from neardup.storage import Candidates

_CAPTION_PERSON = b"neardup-caption"


def caption_content_hash(text_hash: bytes, images: Sequence[DocumentImage]) -> bytes:
    """The content hash of a caption with images: its text's hash and its images' pHashes, so that
    only the same caption with the same photographs is an exact copy."""
    packed = struct.pack(f">{len(images)}Q", *(i.hashes.phash for i in images))
    return hashlib.blake2b(text_hash + packed, digest_size=len(text_hash), person=_CAPTION_PERSON).digest()


@dataclass(slots=True)
class WindowImages:
    """A window's usable images as index rows: ``rows[i]`` is the window row of image row ``i``,
    ``keys[i]`` the four block keys of one pHash it is asked under, ``filed[i]`` whether it is
    filed under them too; ``refs`` the stored candidates of each window row (after the lookup)."""

    rows: npt.NDArray[np.int64]
    keys: npt.NDArray[np.uint64]
    filed: npt.NDArray[np.bool_]
    refs: dict[int, list[bytes]] = field(default_factory=dict)

    @classmethod
    def of(cls, docs: Sequence[Document], sketches: Sequence[Sketch]) -> WindowImages:
        """The index rows of ``docs`` (window rows in decision order): a row per pHash an image is
        asked under (:attr:`~neardup.media.hashes.ImageHashes.asked`: the whole image's, then its
        views'), the ones it is filed under marked; each of their ``sketches`` takes its
        document's whole pHashes."""
        for s, d in zip(sketches, docs, strict=True):
            s.images = tuple(i.hashes.phash for i in d.images)
            known = any(i.hashes.structure is not None for i in d.images)
            s.image_structure = tuple(structure_byte(i.hashes.structure) for i in d.images) if known else ()
        rows: list[int] = []
        hashes: list[int] = []
        filed: list[bool] = []
        for r, d in enumerate(docs):
            for image in d.images:
                kept = set(image.hashes.filed)
                for h in dict.fromkeys(image.hashes.asked):  # a view equal to the whole (a flat image) once
                    rows.append(r)
                    hashes.append(h)
                    filed.append(h in kept)
        return cls(np.asarray(rows, dtype=np.int64), image_keys(np.asarray(hashes, dtype=np.uint64)),
                   np.asarray(filed, dtype=bool))

    def __len__(self) -> int:
        """Image rows."""
        return int(self.rows.shape[0])

    def keys_of(self, row: int) -> tuple[int, ...]:
        """The block keys window row ``row`` is filed under (all its images' filed pHashes')."""
        return tuple(int(k) for k in self.keys[(self.rows == row) & self.filed].ravel())

    def under(self, text_keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
        """The window's text index rows, then its image rows: one lookup asks for both."""
        width = max(text_keys.shape[1], IMAGE_BLOCKS)
        out = np.zeros((text_keys.shape[0] + len(self), width), dtype=np.uint64)
        out[: text_keys.shape[0], : text_keys.shape[1]] = text_keys
        out[text_keys.shape[0] :, :IMAGE_BLOCKS] = self.keys
        return out

    def take(self, found: Sequence[Candidates], exclude: set[bytes], cap: int) -> None:
        """Keep, per window row, at most ``cap`` stored candidates of the image rows' ``found``
        (in image row order), those under the most blocks first."""
        merged: dict[int, dict[bytes, int]] = {}
        for row, cands in zip(self.rows.tolist(), found, strict=True):
            mine = merged.setdefault(row, {})
            for ref, n in cands.items():
                if ref not in exclude:
                    mine[ref] = max(n, mine.get(ref, 0))
        self.refs = {row: sorted(c, key=lambda ref: (-c[ref], ref))[:cap] for row, c in merged.items() if c}

    def earlier(self, n: int) -> dict[int, list[int]]:
        """Per window row, the earlier window rows (of ``n``) sharing a block with one of its own
        (asked or filed: a few proposals more than the store would make, each measured all the same)."""
        if not len(self):
            return {}
        per_row = np.zeros((n, IMAGE_BLOCKS * int(np.bincount(self.rows).max())), dtype=np.uint64)
        fill = np.zeros(n, dtype=np.int64)
        for row, keys in zip(self.rows.tolist(), self.keys, strict=True):
            per_row[row, fill[row] : fill[row] + IMAGE_BLOCKS] = keys
            fill[row] += IMAGE_BLOCKS
        out: dict[int, list[int]] = {}
        for first, later in self_join(per_row).tolist():
            out.setdefault(later, []).append(first)
        return out


@dataclass(frozen=True, slots=True)
class ImageMatch:
    """The nearest image of an earlier document within the radius: the evidence and that document."""

    evidence: ImageEvidence
    other: Sketch


def nearest_image(mine: Sequence[DocumentImage], others: Sequence[Sketch], radii: ImageRadii) -> ImageMatch | None:
    """The pair of images (one of ``mine``, one of an ``others``' images) nearest in pHash bits
    that match: whole pHash to whole pHash within the pair's radius, or one of ``mine``'s views to
    the other's whole pHash within its views' radius
    (:meth:`~neardup.media.hashes.ImageHashes.match_bits`), the smaller radii where either picture
    has little structure (:meth:`~neardup.media.hashes.ImageRadii.of`); at equal distance the
    earlier document (published_at, id). The evidence gives the radius the pair was held to."""
    best: tuple[tuple[int, float, str, int, int], ImageMatch] | None = None
    for other in others:
        for image in mine:
            for j, theirs in enumerate(other.images):
                radius, view_radius = radii.of(image.hashes.structure, _stored_structure(other, j))
                bits = image.hashes.match_bits(theirs, radius, view_radius, radii.corners(view_radius))
                if bits is None:
                    continue
                key = (bits, other.published_at, other.doc_id, image.index, j)
                if best is None or key < best[0]:
                    best = (key, ImageMatch(ImageEvidence(other.doc_id, bits, image.index, j, radius), other))
    return best[1] if best is not None else None


def _stored_structure(other: Sketch, j: int) -> int | None:
    """The structure of ``other``'s image ``j``, None when its record keeps none."""
    return structure_of(other.image_structure[j]) if j < len(other.image_structure) else None


def image_verdict(v: Verdict, length: int, match: ImageMatch | None, caption_chars: int) -> Verdict:
    """``v`` (the text rules' verdict) with the image rules applied: a caption (``length`` below
    ``caption_chars``) with a ``match`` is that document's duplicate; a longer text keeps its
    verdict and the match as evidence of a shared photograph. A duplicate by its text is kept."""
    if match is None or v.status is Status.DUPLICATE:
        return v
    if length < caption_chars:
        other = match.other
        return Verdict(Status.DUPLICATE, Reason.IMAGE, Rule.IMAGE, other.doc_id, None, v.candidates,
                       cluster=other.original or other.doc_id, image=match.evidence)
    return replace(v, image=match.evidence)


__all__ = ["ImageMatch", "WindowImages", "caption_content_hash", "image_verdict", "nearest_image"]
