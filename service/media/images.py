"""Perceptual hashes of the images a document carries: a 64-bit DCT pHash and a 64-bit dHash each.

A document's ``images`` is a list of objects with either ``data`` (the image file, base64) or a
precomputed ``phash`` (16 hex digits), and optionally ``url`` and ``caption``. Nothing is ever
downloaded. The hashes are ``imagehash.phash`` and ``imagehash.dhash`` of the image as Pillow
decodes it; a JPEG is decoded at a reduced scale (Pillow's draft mode: libjpeg skips most of the
inverse DCT), since decoding is most of the cost and the hash only looks at 32x32 pixels.

Bad input never raises out of :func:`hash_document_images`: each image gets its hashes or its
own :class:`ImageError` (a reason code and a one-line message), so the document's text is decided
whatever its images hold. Limits are arguments (:class:`ImageLimits`) with defaults.
"""

from __future__ import annotations

import base64
import binascii
import io
import threading
import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from PIL import Image

from neardup.errors import InputError
from neardup.kernels.image import (
    DHASH_WIDTH,
    HASH_SIDE,
    PHASH_SIDE,
    dct_basis,
    dhash_batch,
    phash_batch,
    phash_structure_batch,
    view_phash_batch,
)
from neardup.media.hashes import (
    HEX_DIGITS,
    VIEWS,
    DocumentImage,
    ImageHashes,
    ImageLimits,
    ImageReject,
    format_hash,
    hamming,
)

#: the formats Pillow may try: the web's photo formats only, so crafted input never reaches a
#: rarely used plugin (EPS would even start Ghostscript)
FORMATS = ("JPEG", "PNG", "GIF", "WEBP", "BMP", "TIFF")
_BASIS = dct_basis()
DEFAULT_LIMITS = ImageLimits()
# Pillow's decompression-bomb guard is one process-wide value; the lock keeps each call's limit in
# force for its whole decode (Pillow checks again inside load: GIF frames, TIFF tiles). A window's
# images are decoded in one thread anyway, so the lock costs no parallelism there.
_PILLOW_GUARD = threading.Lock()


class ImageError(InputError):
    """An image of a document that cannot be hashed; the document's text is still decided."""

    reason = "bad_image"


class UndecodableImageError(ImageError):
    """The bytes are not an image of a supported format, or the file is truncated or corrupt."""

    reason = "image_undecodable"


class InvalidBase64Error(ImageError):
    """An image's ``data`` is not base64."""

    reason = "image_bad_base64"


class ImageTooLargeError(ImageError):
    """An image whose file or pixel count is above the limit (a decompression bomb, say)."""

    reason = "image_too_large"


class TooManyImagesError(ImageError):
    """An image beyond the per-document limit: the first ones are hashed, this one is not."""

    reason = "too_many_images"


class MalformedHashError(ImageError):
    """A precomputed ``phash`` that is not 16 hexadecimal digits."""

    reason = "image_bad_hash"


class BadImageEntryError(ImageError):
    """An ``images`` entry that is not an object with ``data`` or ``phash`` (or ``images`` is not a list)."""

    reason = "image_bad_entry"


ImageOutcome = ImageHashes | ImageError


def document_images(images: object, limits: ImageLimits = DEFAULT_LIMITS
                    ) -> tuple[tuple[DocumentImage, ...], tuple[ImageReject, ...]]:
    """A document's ``images`` hashed (:func:`hash_document_images`): the usable ones and the
    rejected ones, each with its place in the list. The entries beyond ``limits.max_images`` are
    one reject (at the first of them), however many: a list of a million entries costs neither a
    million errors nor a million lines of evidence. Never raises."""
    entries = images if isinstance(images, list) else []
    over = len(entries) - limits.max_images
    outcomes = hash_document_images(entries[: limits.max_images] if over > 0 else images, limits)
    usable: list[DocumentImage] = []
    rejected: list[ImageReject] = []
    for i, outcome in enumerate(outcomes):
        if isinstance(outcome, ImageError):
            rejected.append(ImageReject(i, outcome.reason, str(outcome)))
            continue
        entry = entries[i] if i < len(entries) else None
        url = entry.get("url") if isinstance(entry, dict) else None
        usable.append(DocumentImage(i, outcome, url if isinstance(url, str) else None))
    if over > 0:
        rejected.append(ImageReject(limits.max_images, TooManyImagesError.reason,
                                    f"images {limits.max_images + 1} to {len(entries)} are over the limit of "
                                    f"{limits.max_images} images a document: not decoded"))
    return tuple(usable), tuple(rejected)


def parse_hash(text: object) -> int:
    """A 64-bit hash from 16 hex digits (either case); :class:`MalformedHashError` otherwise."""
    if not isinstance(text, str):
        raise MalformedHashError(f"phash must be a string of {HEX_DIGITS} hex digits, got {type(text).__name__}")
    if len(text) != HEX_DIGITS or not all(c in "0123456789abcdefABCDEF" for c in text):
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise MalformedHashError(f"phash must be {HEX_DIGITS} hex digits (64 bits), got {shown!r} "
                                 f"({len(text)} characters)")
    return int(text, 16)


def decode_base64(text: object, limits: ImageLimits) -> bytes:
    """An image file from base64 (whitespace and a ``data:...;base64,`` prefix allowed), size-checked first."""
    if not isinstance(text, str):
        raise InvalidBase64Error(f"image data must be a base64 string, got {type(text).__name__}")
    if text.startswith("data:"):
        text = text.partition(",")[2]
    compact = "".join(text.split())  # MIME base64 breaks its lines
    if len(compact) * 3 // 4 - 2 > limits.max_bytes:  # at most 2 bytes of padding; refused before decoding
        raise ImageTooLargeError(f"image data of about {len(compact) * 3 // 4} bytes is over the limit of "
                                 f"{limits.max_bytes} bytes")
    try:
        data = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidBase64Error(f"image data is not valid base64 ({exc})") from None
    _check_bytes(data, limits)
    return data


def _check_bytes(data: bytes, limits: ImageLimits) -> None:
    if len(data) > limits.max_bytes:
        raise ImageTooLargeError(f"image file of {len(data)} bytes is over the limit of {limits.max_bytes} bytes")
    if not data:
        raise UndecodableImageError("image data is empty")


class DecodedImage(NamedTuple):
    """An image as 8-bit grayscale (a JPEG at a reduced scale) and its size as the file's header gives it."""

    gray: Image.Image
    width: int
    height: int


def decode_gray(data: bytes, limits: ImageLimits = DEFAULT_LIMITS) -> DecodedImage:
    """The image in ``data`` as 8-bit grayscale; the first frame of an animation."""
    _check_bytes(data, limits)
    with _PILLOW_GUARD, warnings.catch_warnings():
        # Pillow only warns between its limit and twice it; inside this call that is an error too
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        previous = Image.MAX_IMAGE_PIXELS
        Image.MAX_IMAGE_PIXELS = limits.max_pixels
        try:
            return _decode_guarded(data, limits)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise ImageTooLargeError(f"image is over the limit of {limits.max_pixels} pixels ({exc})") from None
        finally:
            Image.MAX_IMAGE_PIXELS = previous


def _decode_guarded(data: bytes, limits: ImageLimits) -> DecodedImage:
    try:
        opened = Image.open(io.BytesIO(data), formats=FORMATS)
    except Image.UnidentifiedImageError:
        raise UndecodableImageError(f"not an image of a supported format ({', '.join(FORMATS)})") from None
    with opened as image:
        width, height = image.size
        if width * height > limits.max_pixels:
            raise ImageTooLargeError(f"image of {width}x{height} pixels is over the limit of "
                                     f"{limits.max_pixels} pixels")
        image.draft("L", (limits.draft_side, limits.draft_side))  # a no-op for every format but JPEG
        try:
            return DecodedImage(image.convert("L"), width, height)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            raise  # a bomb found inside the decoder (a GIF frame, a TIFF tile) stays a bomb
        except Exception as exc:  # decoder plugins raise assorted types on corrupt input; one cause for all
            raise UndecodableImageError(f"{image.format} image cannot be decoded "
                                        f"({type(exc).__name__}: {exc})") from None


def hash_inputs(gray: Image.Image) -> tuple[np.ndarray, np.ndarray]:
    """The 32x32 pixels pHash reads and the 9-wide, 8-high pixels dHash reads (imagehash's Lanczos resize)."""
    small = gray.resize((PHASH_SIDE, PHASH_SIDE), Image.Resampling.LANCZOS)
    tiny = gray.resize((DHASH_WIDTH, HASH_SIDE), Image.Resampling.LANCZOS)
    return np.asarray(small, dtype=np.uint8), np.asarray(tiny, dtype=np.uint8)


def hash_pixels(small: np.ndarray, tiny: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """pHashes of (n, 32, 32) and dHashes of (n, 8, 9) uint8 arrays, as uint64 arrays."""
    return (phash_batch(np.ascontiguousarray(small, dtype=np.uint8), _BASIS),
            dhash_batch(np.ascontiguousarray(tiny, dtype=np.uint8)))


VIEW_BASE = 64  # the square grid the views are cut from: twice the pHash's 32 pixels


def _view_weights(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """(views, 32, 64) weights taking each view's source span ``[lo, hi)`` of a 64-pixel axis to
    32 pixels: a tent as wide as an output pixel's span (at least one source pixel); taps beyond
    the axis take its edge pixel (a pad view repeats the edge)."""
    scale = (hi - lo) / PHASH_SIDE
    support = np.maximum(scale, 1.0)
    centers = lo[:, None] + (np.arange(PHASH_SIDE) + 0.5)[None, :] * scale[:, None]
    first, last = int(np.floor((lo - support).min())), int(np.ceil((hi + support).max()))
    taps = np.arange(first, last + 1) + 0.5
    w = np.maximum(0.0, 1.0 - np.abs(taps[None, None, :] - centers[:, :, None]) / support[:, None, None])
    w /= w.sum(axis=2, keepdims=True)
    lead = max(0, -first)
    inner = w[:, :, lead : lead + VIEW_BASE].copy()
    inner[:, :, 0] += w[:, :, :lead].sum(axis=2)
    inner[:, :, -1] += w[:, :, lead + VIEW_BASE :].sum(axis=2)
    return inner


def _axis_weights(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """The crop views' weights, then the pad views', along one axis (``before``/``after``: the
    fractions cut off its two ends). A pad view's span reaches past the image so that the image
    is ``1 - before - after`` of it."""
    full = VIEW_BASE / (1 - before - after)
    return _view_weights(np.concatenate([VIEW_BASE * before, -full * before]),
                         np.concatenate([VIEW_BASE * (1 - after), VIEW_BASE + full * after]))


_FRACTIONS = np.array(VIEWS, dtype=np.float64)
# The pHash keeps the 8x8 lowest frequencies of a view's 32x32 DCT: C (R B K^T) C^T for the view's
# row and column resampling R and K of the 64x64 base B, so (C R) and (C K) are made once and a
# view costs two small products of the base, never its 32x32 pixels.
_ROWS_DCT = np.ascontiguousarray(np.einsum("kr,vrb->vkb", _BASIS, _axis_weights(_FRACTIONS[:, 1], _FRACTIONS[:, 3])))
_COLUMNS_DCT = np.ascontiguousarray(np.einsum("kc,vcb->vkb", _BASIS,
                                              _axis_weights(_FRACTIONS[:, 0], _FRACTIONS[:, 2])))


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct row products, each view's index among them): views that cut nothing off the
    top or the bottom share one (11 of 26), and the kernel makes each once an image."""
    flat, row_of = np.unique(rows.reshape(len(rows), -1), axis=0, return_inverse=True)
    return np.ascontiguousarray(flat.reshape(-1, *rows.shape[1:])), row_of.astype(np.int64).ravel()


_ROW_SET, _ROW_OF = _distinct_rows(_ROWS_DCT)
_COLUMNS_ACROSS = np.ascontiguousarray(_COLUMNS_DCT.transpose(0, 2, 1))  # (views, 64, 8): the kernel's inner loop


def view_hashes(grays: Sequence[Image.Image]) -> np.ndarray:
    """(n, 2 x len(VIEWS)) pHashes of each image's crop views, then its pad views (:data:`VIEWS`), as uint64.

    Each image is resized to 64x64 (bilinear; a view cuts fractions, so a square grid keeps its
    geometry), each view resampled from that grid and its low frequencies taken as a pHash's are,
    a bit per coefficient above their median (:func:`neardup.kernels.image.view_phash_batch`).
    A view is only looked up and measured against whole pHashes, never stored as a hash.
    """
    # bilinear (with Pillow's antialiasing when it shrinks): a third of Lanczos' time, and the
    # views' low frequencies are the same near enough for the index (docs/media.md measures them)
    bases = np.zeros((len(grays), VIEW_BASE, VIEW_BASE), dtype=np.float64)
    for i, g in enumerate(grays):
        bases[i] = np.asarray(g.resize((VIEW_BASE, VIEW_BASE), Image.Resampling.BILINEAR), dtype=np.float64)
    out: np.ndarray = view_phash_batch(bases, _ROW_SET, _ROW_OF, _COLUMNS_ACROSS)
    return out


def hash_structured(small: np.ndarray, tiny: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`hash_pixels`'s pHashes and dHashes and each image's structure (the percent of its
    variance beyond the frequencies its pHash reads, uint8), from the same DCT."""
    phashes, structure = phash_structure_batch(np.ascontiguousarray(small, dtype=np.uint8), _BASIS)
    return phashes, dhash_batch(np.ascontiguousarray(tiny, dtype=np.uint8)), structure


def hash_files(files: Sequence[bytes], limits: ImageLimits = DEFAULT_LIMITS) -> list[ImageOutcome]:
    """Hashes of each image file in ``files``, or its error; one kernel call for all of them (the
    views too, with ``limits.views``)."""
    outcomes: dict[int, ImageOutcome] = {}
    decoded: dict[int, DecodedImage] = {}
    for i, data in enumerate(files):
        try:
            decoded[i] = decode_gray(data, limits)
        except ImageError as exc:
            outcomes[i] = exc
    if decoded:
        small, tiny = zip(*(hash_inputs(image.gray) for image in decoded.values()), strict=True)
        phashes, dhashes, structure = hash_structured(np.stack(small), np.stack(tiny))
        views = view_hashes([image.gray for image in decoded.values()] if limits.views else []).tolist()
        for k, ((i, image), p, d, s) in enumerate(zip(decoded.items(), phashes, dhashes, structure, strict=True)):
            outcomes[i] = ImageHashes(int(p), int(d), image.width, image.height,
                                      tuple(views[k]) if limits.views else (), int(s))
    return [outcomes[i] for i in range(len(files))]


def hash_document_images(images: object, limits: ImageLimits = DEFAULT_LIMITS) -> list[ImageOutcome]:
    """Each entry of a document's ``images`` list: its hashes or its error, in order. Never raises.

    The first ``limits.max_images`` entries are hashed; later ones get :class:`TooManyImagesError`,
    so an oversized list costs no decoding and the document keeps the evidence of its first images.
    An entry with ``data`` is hashed from its bytes even when it also carries a ``phash``: a hash
    made here is made the same way as every other one it is compared with.
    """
    if not isinstance(images, list):
        return [BadImageEntryError(f"images must be a list of objects, got {type(images).__name__}")]
    outcomes: dict[int, ImageOutcome] = {}
    files: dict[int, bytes] = {}
    for i, entry in enumerate(images):
        if i >= limits.max_images:
            outcomes[i] = TooManyImagesError(f"image {i + 1} of {len(images)} is over the limit of "
                                             f"{limits.max_images} images a document")
            continue
        try:
            read = _read_entry(entry, limits)
        except ImageError as exc:
            outcomes[i] = exc
            continue
        if isinstance(read, ImageHashes):
            outcomes[i] = read
        else:
            files[i] = read
    outcomes.update(zip(files, hash_files(list(files.values()), limits), strict=True))
    return [outcomes[i] for i in range(len(images))]


def _read_entry(entry: object, limits: ImageLimits) -> bytes | ImageHashes:
    """An entry's image file, or its precomputed hash when it carries no ``data``."""
    if not isinstance(entry, dict):
        raise BadImageEntryError(f"an image must be an object with data or phash, got {type(entry).__name__}")
    if entry.get("data") is not None:
        return decode_base64(entry["data"], limits)
    if entry.get("phash") is not None:
        return ImageHashes(parse_hash(entry["phash"]))
    raise BadImageEntryError("an image needs data (base64) or phash (16 hex digits)")


# format_hash and hamming live in neardup.media.hashes (no decoder); this module's callers keep them
__all__ = ["DEFAULT_LIMITS", "FORMATS", "BadImageEntryError", "DecodedImage", "DocumentImage", "ImageError",
           "ImageHashes", "ImageLimits", "ImageOutcome", "ImageReject", "ImageTooLargeError", "InvalidBase64Error",
           "MalformedHashError", "TooManyImagesError", "UndecodableImageError", "decode_base64", "decode_gray",
           "document_images", "format_hash", "hamming", "hash_document_images", "hash_files", "hash_inputs",
           "hash_pixels", "hash_structured", "parse_hash", "view_hashes"]
