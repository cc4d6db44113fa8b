"""The one definition of similarity: the engine, ``explain``, ``eval`` and calibration all call
:func:`similarities`, so the thresholds they report are the thresholds the engine applies.

A :class:`SketchTable` holds what a re-check needs of each document (MinHash signature at the
precision it is stored with, SimHash, shingle count, length, content hash, critical-difference
profile), for the documents of a window and for their candidates alike. A pair is compared:

- Jaccard J: the share of equal MinHash values in the low b bits, b the coarser of the two stored
  precisions, corrected for chance agreement (b-bit MinHash, Li & Koenig);
- Hamming H: the SimHash distance scaled to 64 bits;
- containment C of the smaller shingle set in the larger, from J and both set sizes:
  C = J (|A| + |B|) / ((1 + J) min(|A|, |B|)).

A pair is comparable only when both documents were shingled alike (characters vs words) with the
same SimHash width and both have shingles: two texts without comparable content (symbols only)
are never near-duplicates (an exact copy still is, by its content hash).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.kernels.pairs import pair_scores
from neardup.rules.differences import PROFILE_VERSION, Profile, decode_profile, profile_version
from neardup.rules.versions import NO_MARKS, VersionMarks
from neardup.sketch.fingerprint import Fingerprints, decode_signature, decode_simhash, truncate_signature
from neardup.storage import FingerprintRecord

ROUND = 4  # decimals of J and C in evidence and in the rule (the rule sees what the evidence shows)


@dataclass(frozen=True, slots=True)
class Similarity:
    """One pair's similarity: Jaccard, Hamming (64-bit scale) and containment."""

    jaccard: float
    hamming: int
    containment: float


def containment(jaccard: float, size_a: int, size_b: int) -> float:
    """Containment of the smaller shingle set in the larger, estimated from J and both sizes."""
    small = min(size_a, size_b)
    if small <= 0 or jaccard <= 0.0:
        return 0.0
    return min(1.0, jaccard * (size_a + size_b) / ((1.0 + jaccard) * small))


@dataclass(slots=True)
class Sketch:
    """One document as the re-check sees it (decoded once, then reused from the hot tier)."""

    doc_id: str
    signature: npt.NDArray[np.uint32]
    bits: int
    kind: bytes
    simhash: npt.NDArray[np.uint64]
    shingles: int
    length: int
    content_hash: bytes
    published_at: float
    # sorted critical-difference entries; None until a stored record's (``profile_data``) is
    # first asked for: most candidates a lookup proposes are never similar enough to need it
    profile_entries: npt.NDArray[np.uint64] | None
    marks: VersionMarks = NO_MARKS  # version marks (neardup.rules.versions)
    original: str = ""  # the document this one duplicates, once decided ("" for an original)
    profile_version: int = PROFILE_VERSION  # of the record ``profile`` came from (what its contexts cover)
    images: tuple[int, ...] = ()  # the pHash of each usable image (the record's ``images``)
    image_structure: tuple[int, ...] = ()  # the record's ``image_structure`` (a byte an image, () not known)
    profile_data: bytes = b""  # the stored profile, while ``profile_entries`` is None

    @property
    def profile(self) -> npt.NDArray[np.uint64]:
        """The sorted critical-difference entries, decoded on first use; ValueError when the
        stored profile does not decode (:meth:`decodes` tells first)."""
        if self.profile_entries is None:
            self.profile_entries = decode_profile(self.profile_data)
            self.profile_data = b""
        return self.profile_entries

    def decodes(self) -> bool:
        """Whether the profile is, or decodes to, entries (a record whose stored profile does
        not decode is compared with nothing, as one of another format)."""
        try:
            self.profile  # noqa: B018 (decoded for its error)
        except ValueError:
            return False
        return True

    def meta(self) -> bytes:
        """The record's ``meta`` bytes (:func:`encode_meta`): the original's id and the version marks."""
        return encode_meta(self.original, self.marks)

    @classmethod
    def from_record(cls, rec: FingerprintRecord, seed: int, num_perm: int, family: str) -> Sketch:
        """Decode a stored record; ValueError when its byte formats are unknown or its MinHash
        family (kind of hashing, seed, size) is not this engine's: such a signature is not comparable."""
        sig, kind, _size, rec_seed, bits, rec_family = decode_signature(rec.signature)
        if rec_seed != seed or sig.shape[0] != num_perm or rec_family != family:
            raise ValueError("signature of another MinHash family")
        if not profile_version(rec.profile):
            raise ValueError("a record without a critical-difference profile")
        original, marks = decode_meta(rec.meta)
        return cls(rec.doc_id, sig, bits, kind, decode_simhash(rec.simhash), rec.shingles, rec.length,
                   rec.content_hash, rec.published_at, None, marks, original, profile_version(rec.profile),
                   rec.images, rec.image_structure, profile_data=rec.profile)


@dataclass(slots=True)
class SketchTable:
    """Rows of sketches in arrays, as the pair kernel reads them."""

    sketches: list[Sketch]
    signatures: npt.NDArray[np.uint32]
    bits: npt.NDArray[np.int64]
    kinds: npt.NDArray[np.uint8]
    simhash: npt.NDArray[np.uint64]
    shingles: npt.NDArray[np.int64]

    @classmethod
    def of(cls, sketches: list[Sketch], num_perm: int, words: int) -> SketchTable:
        """Stack ``sketches``; rows whose shapes differ from (num_perm, words) are made incomparable."""
        n = len(sketches)
        sigs = np.zeros((n, num_perm), dtype=np.uint32)
        sims = np.zeros((n, words), dtype=np.uint64)
        kinds = np.zeros(n, dtype=np.uint8)
        for i, s in enumerate(sketches):
            if s.signature.shape[0] == num_perm and s.simhash.shape[0] == words:
                sigs[i] = s.signature
                sims[i] = s.simhash
                kinds[i] = s.kind[0] if s.kind else 0
        return cls(sketches, sigs, np.array([s.bits for s in sketches], dtype=np.int64), kinds, sims,
                   np.array([s.shingles for s in sketches], dtype=np.int64))

    def __len__(self) -> int:
        """Rows."""
        return len(self.sketches)


META_VERSION = 2  # v1 had no body dates: read as not known


def encode_meta(original: str, marks: VersionMarks) -> bytes:
    """Meta v2: version byte, the original's id (u16 length + UTF-8), the head's dates of adoption
    and revision, the body's dates, the head's dates of coming into force (each u16 count + u32
    each). A text without version marks (all but regulations) is written as v1, four bytes
    shorter, which reads back as the same: no marks."""
    raw = original.encode("utf-8", "surrogatepass")
    head, body, effective = marks.head, marks.body or (), marks.effective
    if not (head or body or effective):
        return struct.pack(f">BH{len(raw)}sH", 1, len(raw), raw, 0)
    return struct.pack(f">BH{len(raw)}sH{len(head)}IH{len(body)}IH{len(effective)}I", META_VERSION, len(raw), raw,
                       len(head), *head, len(body), *body, len(effective), *effective)


def decode_meta(data: bytes) -> tuple[str, VersionMarks]:
    """(original, marks) of a record's meta (v1 or v2); empty for records written without one."""
    if not data:
        return "", NO_MARKS
    if data[0] not in (1, META_VERSION):
        raise ValueError("record meta of an unknown version")
    (n,) = struct.unpack_from(">H", data, 1)
    original = data[3 : 3 + n].decode("utf-8", "surrogatepass")
    head, at = _hashes_at(data, 3 + n)
    if data[0] == 1:
        return original, VersionMarks(head, None)
    body, at = _hashes_at(data, at)
    effective, _ = _hashes_at(data, at)
    return original, VersionMarks(head, body, effective)


def _hashes_at(data: bytes, at: int) -> tuple[tuple[int, ...], int]:
    """(the u16 count and u32 hashes at ``at`` of a record's meta, the offset after them)."""
    (k,) = struct.unpack_from(">H", data, at)
    return tuple(struct.unpack_from(f">{k}I", data, at + 2)), at + 2 + 4 * k


def window_sketches(fps: Fingerprints, ids: list[str], published_at: list[float], profiles: Sequence[Profile],
                    bits: int, marks: list[VersionMarks] | None = None) -> list[Sketch]:
    """Sketches of a fingerprinted window, at the precision their records are stored with
    (``bits``), so that a document compares the same whether its candidate came from this window,
    the hot tier or the store."""
    return [
        Sketch(ids[i], truncate_signature(fps.signatures[i], bits), bits, fps.shingle_kind[i], fps.simhash[i],
               int(fps.shingle_counts[i]), fps.lengths[i], fps.content_hashes[i], published_at[i],
               profiles[i].entries, marks[i] if marks else NO_MARKS, profile_version=profiles[i].version)
        for i in range(len(fps))
    ]


@dataclass(slots=True)
class PairSimilarities:
    """Similarities of pairs (left[p], right[p]) of a table; ``comparable`` is False where a pair
    must never be a near-duplicate (other shingling, no shingles)."""

    left: npt.NDArray[np.int64]
    right: npt.NDArray[np.int64]
    jaccard: npt.NDArray[np.float64]
    hamming: npt.NDArray[np.int64]
    containment: npt.NDArray[np.float64]
    comparable: npt.NDArray[np.bool_]

    def at(self, p: int) -> Similarity:
        """Pair ``p`` as a :class:`Similarity`."""
        return Similarity(float(self.jaccard[p]), int(self.hamming[p]), float(self.containment[p]))


def similarities(table: SketchTable, left: npt.NDArray[np.int64], right: npt.NDArray[np.int64]) -> PairSimilarities:
    """Similarity of every pair (left[p], right[p]) of rows of ``table``, in one kernel call."""
    left = np.ascontiguousarray(left, dtype=np.int64)
    right = np.ascontiguousarray(right, dtype=np.int64)
    equal, used, ham = pair_scores(table.signatures, table.bits, table.simhash, left, right)
    chance = np.where(used >= 32, 0.0, np.exp2(-used.astype(np.float64)))
    jac = np.maximum(0.0, (equal - chance) / (1.0 - chance))
    jac = np.round(jac, ROUND)
    words = table.simhash.shape[1]
    hamming = np.rint(ham * (64.0 / (64 * words))).astype(np.int64)
    sa = table.shingles[left].astype(np.float64)
    sb = table.shingles[right].astype(np.float64)
    small = np.minimum(sa, sb)
    with np.errstate(divide="ignore", invalid="ignore"):
        cont = np.where((small > 0) & (jac > 0), np.minimum(1.0, jac * (sa + sb) / ((1.0 + jac) * small)), 0.0)
    comparable = (table.kinds[left] == table.kinds[right]) & (table.kinds[left] != 0) & (small > 0)
    return PairSimilarities(left, right, jac, hamming, np.round(cont, ROUND).astype(np.float64), comparable)


__all__ = [
    "PairSimilarities",
    "Similarity",
    "Sketch",
    "SketchTable",
    "containment",
    "similarities",
    "window_sketches",
]
