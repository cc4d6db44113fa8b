"""What neardup keeps of a document's images: plain values, no decoder (``neardup.media.images``
decodes and hashes; this module is light enough for every module that only passes hashes on)."""

from __future__ import annotations

from dataclasses import dataclass

from neardup.config.settings import ImageSettings

HEX_DIGITS = 16  # a 64-bit hash as hex


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """What one document's images may cost. The defaults admit a 48-megapixel phone photo."""

    #: images hashed per document; the rest get :class:`TooManyImagesError`
    max_images: int = 16
    #: bytes of one image file (after base64 decoding)
    max_bytes: int = 16 * 1024 * 1024
    #: width x height of one image, read from its header before any pixel is decoded
    max_pixels: int = 50_000_000
    #: a JPEG is decoded at the largest reduction (1/2 .. 1/8) that keeps both sides >= this
    draft_side: int = 64


@dataclass(frozen=True, slots=True)
class ImageHashes:
    """One image's hashes. ``dhash``, ``width`` and ``height`` are None for a precomputed ``phash``."""

    phash: int
    dhash: int | None = None
    width: int | None = None
    height: int | None = None

    @property
    def phash_hex(self) -> str:
        """The pHash as 16 hex digits, as ``str(imagehash.phash(...))`` writes it."""
        return format_hash(self.phash)


@dataclass(frozen=True, slots=True)
class DocumentImage:
    """A usable image of a document: its place in the document's ``images`` list and its hashes."""

    index: int
    hashes: ImageHashes
    url: str | None = None


@dataclass(frozen=True, slots=True)
class ImageReject:
    """An image of a document that was not used, and why (``evidence.images_rejected``)."""

    index: int
    reason: str
    detail: str

    def to_dict(self) -> dict[str, int | str]:
        """The JSON form: ``{"index", "reason", "detail"}``."""
        return {"index": self.index, "reason": self.reason, "detail": self.detail}

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> ImageReject:
        """Inverse of :meth:`to_dict`."""
        index = d.get("index")
        return cls(index if isinstance(index, int) else -1, str(d.get("reason", "")), str(d.get("detail", "")))


def format_hash(value: int) -> str:
    """A 64-bit hash as 16 lower-case hex digits."""
    return f"{value:0{HEX_DIGITS}x}"


def hamming(a: int, b: int) -> int:
    """Bits that differ between two 64-bit hashes."""
    return (a ^ b).bit_count()


def limits_of(settings: ImageSettings) -> ImageLimits:
    """The limits the ``images`` settings give."""
    return ImageLimits(max_images=settings.max_images, max_bytes=settings.max_bytes, max_pixels=settings.max_pixels)
