"""The byte codec of stored records, decisions and states: compact, versioned, shared by the
Redis store (its values) and the PostgreSQL cold tier (its ``record`` column holds exactly these
bytes, so a record moves between tiers unchanged). Imports nothing else of neardup's but the
store's types.
"""

from __future__ import annotations

import struct
import zlib

from neardup.storage.base import DecisionRecord, FingerprintRecord, StateValue
from neardup.storage.errors import StoreCorruptError

RECORD_VERSION = 3
IMAGES_RECORD_VERSION = 4  # a record with image hashes; one without is written as v3, byte for byte as before
STRUCTURE_RECORD_VERSION = 5  # v4 with each image's structure; v4 when none is known
DECISION_VERSION = 3

_F64 = struct.Struct(">d")

def _put_uvarint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _put_int(out: bytearray, n: int) -> None:
    _put_uvarint(out, n << 1 if n >= 0 else (-n << 1) - 1)  # zigzag, for ints of any size


def _put_bytes(out: bytearray, data: bytes) -> None:
    _put_uvarint(out, len(data))
    out += data


# Strings that values repeat (statuses, content types), stored as their position + 1; 0: text
# follows. Append only: a word's position is its stored code.
_WORDS = ("unique", "duplicate", "default", "news", "announcement", "blog")
_WORD_CODES = {w: i + 1 for i, w in enumerate(_WORDS)}
_NUMBER_F64 = 0xFF
_MAX_DECIMALS = 6


def _put_word(out: bytearray, text: str) -> None:
    code = _WORD_CODES.get(text, 0)
    out.append(code)
    if not code:
        _put_bytes(out, text.encode("utf-8", "surrogatepass"))


def _put_number(out: bytearray, x: float) -> None:
    """A float as the shortest decimal that reads back as it (repr, what JSON writes): with at
    most 6 decimals and no exponent, a byte of decimals and the digits as a zigzag varint (a time
    in whole seconds: 6 bytes); else 0xFF and the double (-0.0, infinities, NaN, exponents)."""
    text = repr(x)
    if text.endswith(".0"):  # a whole number: no decimals
        text = text[:-2] + "."
    point = text.find(".")
    decimals = len(text) - point - 1
    if point > 0 and decimals <= _MAX_DECIMALS and "e" not in text and text != "-0.":
        out.append(decimals)
        _put_int(out, int(text[:point] + text[point + 1 :]))
    else:
        out.append(_NUMBER_F64)
        out += _F64.pack(x)


class _Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def uvarint(self) -> int:
        shift = n = 0
        while True:
            b = self.buf[self.pos]
            self.pos += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return n
            shift += 7

    def zigzag(self) -> int:
        z = self.uvarint()
        return (z >> 1) ^ -(z & 1)

    def blob(self) -> bytes:
        n = self.uvarint()
        end = self.pos + n
        if end > len(self.buf):
            raise IndexError("truncated")
        out = self.buf[self.pos : end]
        self.pos = end
        return out

    def text(self) -> str:
        return self.blob().decode("utf-8", "surrogatepass")

    def f64(self) -> float:
        (x,) = _F64.unpack_from(self.buf, self.pos)
        self.pos += 8
        return float(x)

    def word(self) -> str:
        code = self.buf[self.pos]
        self.pos += 1
        return _WORDS[code - 1] if code else self.text()

    def number(self) -> float:
        decimals = self.buf[self.pos]
        self.pos += 1
        if decimals == _NUMBER_F64:
            return self.f64()
        if decimals > _MAX_DECIMALS:
            raise ValueError("bad number")
        return self.zigzag() / 10**decimals


def encode_record(rec: FingerprintRecord, *, with_keys: bool = False) -> bytes:
    """Version byte, the id, then the re-check fields; the index keys only ``with_keys``.

    v3: the content type as a word (:data:`_WORDS`), published_at as a number (6 bytes for whole
    seconds instead of 8); v2 had both as text and a double. The index keys, when kept, follow the
    meta as one blob of big-endian uint64: a re-check never reads them, but moving a record to the
    cold tier does (its index entries there, and the warm entries to remove), and they cannot be
    computed again from the stored b-bit signature. Readers of records without them see ``()``.

    v4: v3 with the image hashes (one blob of big-endian uint64, one a usable image) between the
    meta and the index keys; written only for a record that has images, so a text-only record
    costs no byte more and stays readable by a reader that knows v3 only.

    v5: v4 with a byte per image after the image hashes (one blob): its structure
    (``FingerprintRecord.image_structure``); written when the record keeps them, v4 otherwise."""
    out = bytearray((_record_version(rec),))
    _put_bytes(out, rec.doc_id.encode("utf-8", "surrogatepass"))
    _put_word(out, rec.content_type)
    _put_number(out, rec.published_at)
    _put_int(out, rec.shingles)
    _put_int(out, rec.length)
    for part in (rec.content_hash, rec.simhash, rec.signature, rec.profile, rec.meta):
        _put_bytes(out, part)
    if rec.images:
        _put_bytes(out, _pack_u64(rec.images))
    if rec.images and rec.image_structure:
        _put_bytes(out, bytes(rec.image_structure))
    if with_keys and rec.index_keys:
        _put_bytes(out, _pack_u64(rec.index_keys))
    return bytes(out)


def _record_version(rec: FingerprintRecord) -> int:
    if not rec.images:
        return RECORD_VERSION
    if len(rec.image_structure) != len(rec.images):  # () when not known; anything else is a caller's bug
        if rec.image_structure:
            raise ValueError("a record's image_structure must have one byte per image")
        return IMAGES_RECORD_VERSION
    return STRUCTURE_RECORD_VERSION


def _pack_u64(values: tuple[int, ...]) -> bytes:
    return struct.pack(f">{len(values)}Q", *values)


def _unpack_u64(data: bytes) -> tuple[int, ...]:
    if len(data) % 8:
        raise ValueError("a uint64 blob of a length that is not a multiple of 8")
    return struct.unpack(f">{len(data) // 8}Q", data)


def decode_record(data: bytes) -> FingerprintRecord:
    """Inverse of :func:`encode_record` (versions 3 to 5), and reads version 2;
    :class:`StoreCorruptError` for anything else."""
    try:
        r = _Reader(data)
        version = r.uvarint()
        if version == 2:
            doc_id, content_type, published_at = r.text(), r.text(), r.f64()
        elif version in (RECORD_VERSION, IMAGES_RECORD_VERSION, STRUCTURE_RECORD_VERSION):
            doc_id, content_type, published_at = r.text(), r.word(), r.number()
        else:
            raise StoreCorruptError("stored record has an unknown format version")
        shingles, length = r.zigzag(), r.zigzag()
        content_hash, simhash, signature, profile = r.blob(), r.blob(), r.blob(), r.blob()
        meta = r.blob() if r.pos < len(data) else b""
        images = _unpack_u64(r.blob()) if version >= IMAGES_RECORD_VERSION else ()
        structure = tuple(r.blob()) if version == STRUCTURE_RECORD_VERSION else ()
        if len(structure) not in (0, len(images)):
            raise ValueError("image structure of another length than the images")
        index_keys = _unpack_u64(r.blob()) if r.pos < len(data) else ()
    except (IndexError, ValueError, struct.error) as exc:  # UnicodeDecodeError is a ValueError
        raise StoreCorruptError(f"stored record is corrupt: {type(exc).__name__}") from exc
    return FingerprintRecord(doc_id, content_type, published_at, content_hash, simhash, signature, profile,
                             shingles, length, index_keys, meta, images, structure)


# -- decisions -----------------------------------------------------------------------------------
# Decision v3 keeps its evidence (JSON text) deflated (raw deflate, zlib) against a preset
# dictionary: the evidence the engine writes, with its keys, rules and default thresholds, plus
# the decision's duplicate_of (the evidence names it again). About 50 bytes instead of about 400,
# byte for byte the same text back. _EVIDENCE_DICT is part of the format: a new one is a new version.
_EVIDENCE_DICT = (
    b'"critical": {"kind": "figure", "passage": "", "term": "", "against": "", "jaccard": 0.'
    b', "race": true, "replay": true, "id_reused": true, "model_version": 1, '
    b'"critical": {"kind": "polarity", "passage": "'
    b'{"reason": "critical", "rule": null, "matched_id": "'
    b'{"reason": "exact", "rule": "exact", "matched_id": "", "jaccard": 1.0, "hamming": 0, "containment": 1.0, '
    b'"candidates": 1, '
    b'{"reason": "near", "rule": "containment", "rule": "hybrid", "rule": "simhash", "rule": "jaccard", '
    b'"matched_id": "", "jaccard": 0.9, "hamming": 1, "containment": 1.0, "candidates": 1, '
    b'{"reason": "unique", "rule": null, "matched_id": null, "jaccard": null, "hamming": null, "containment": null, '
    b'"candidates": 0, "thresholds": {"jaccard_high": 0.7, "jaccard_low": 0.45, "hamming_high": 3, '
    b'"hamming_low": 12, "containment_high": 0.73, "short_text_chars": 50}, "threshold_version": 0, '
    b'"window_id": "", "worker_id": "", "decided_at": 17'
)


def _evidence_dict(duplicate_of: str | None) -> bytes:
    return _EVIDENCE_DICT + (duplicate_of or "").encode("utf-8", "surrogatepass")


def _deflate(text: str, zdict: bytes) -> bytes:
    # memLevel 8, not 9: the same bytes for texts this short, and 8 us a decision instead of 70 (at 9
    # zlib sets up twice the hash state for every compressor)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, zdict)
    return packer.compress(text.encode("utf-8", "surrogatepass")) + packer.flush()


def _inflate(data: bytes, zdict: bytes) -> str:
    unpacker = zlib.decompressobj(-15, zdict=zdict)
    text = unpacker.decompress(data) + unpacker.flush()
    if not unpacker.eof:
        raise ValueError("truncated evidence")
    return text.decode("utf-8", "surrogatepass")


def encode_decision(d: DecisionRecord) -> bytes:
    """Version byte, id, status, duplicate_of, content type, content hash, deflated evidence."""
    out = bytearray((DECISION_VERSION,))
    _put_bytes(out, d.doc_id.encode("utf-8", "surrogatepass"))
    _put_word(out, d.status)
    if d.duplicate_of is None:
        out.append(0)
    else:
        out.append(1)
        _put_bytes(out, d.duplicate_of.encode("utf-8", "surrogatepass"))
    _put_word(out, d.content_type)
    _put_bytes(out, d.content_hash)
    out += _deflate(d.evidence, _evidence_dict(d.duplicate_of))
    return bytes(out)


def decode_decision(data: bytes) -> DecisionRecord:
    """Inverse of :func:`encode_decision`, and reads version 2 (evidence as text);
    :class:`StoreCorruptError` for anything else."""
    try:
        r = _Reader(data)
        version = r.uvarint()
        if version == 2:
            doc_id, status = r.text(), r.text()
            duplicate_of = r.text() if r.uvarint() else None
            return DecisionRecord(doc_id, status, duplicate_of, r.text(), r.text(), r.blob())
        if version != DECISION_VERSION:
            raise StoreCorruptError("stored decision has an unknown format version")
        doc_id, status = r.text(), r.word()
        duplicate_of = r.text() if r.uvarint() else None
        content_type, content_hash = r.word(), r.blob()
        evidence = _inflate(data[r.pos :], _evidence_dict(duplicate_of))
    except (IndexError, ValueError, zlib.error) as exc:
        raise StoreCorruptError(f"stored decision is corrupt: {type(exc).__name__}") from exc
    return DecisionRecord(doc_id, status, duplicate_of, evidence, content_type, content_hash)


def encode_state(value: StateValue) -> bytes:
    """The version as 20 decimal digits, then the payload (the CAS script reads the version)."""
    return b"%020d" % value.version + value.payload


def decode_state(data: bytes) -> StateValue:
    """Inverse of :func:`encode_state`."""
    try:
        return StateValue(int(data[:20]), data[20:])
    except ValueError as exc:
        raise StoreCorruptError("stored state is corrupt") from exc
