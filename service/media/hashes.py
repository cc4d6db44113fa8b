"""What neardup keeps of a document's images: plain values, no decoder (``neardup.media.images``
decodes and hashes; this module is light enough for every module that only passes hashes on)."""

from __future__ import annotations

from dataclasses import dataclass

from neardup.config.settings import ImageSettings

HEX_DIGITS = 16  # a 64-bit hash as hex
HASH_BITS = 64


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
    #: hash each image's crop and pad views too (:data:`VIEWS`), for the image index to find a cropped copy
    views: bool = True


#: a tenth off two adjacent sides (left and top, top and right, ...): the corner views
CORNERS = ((0.1, 0.1, 0.0, 0.0), (0.0, 0.1, 0.1, 0.0), (0.0, 0.0, 0.1, 0.1), (0.1, 0.0, 0.0, 0.1))
#: the views an image is also hashed in, as (left, top, right, bottom) fractions: 5 % and 10 % off
#: each side, the four :data:`CORNERS` and 5 % off all four. An image is cropped by each (its crop
#: views: what a cropped copy of it looks like) and padded by each, its edge pixels repeated until
#: the part it shows is that fraction less than the whole (its pad views: what the photograph it
#: was cropped from looked like, near enough for the low frequencies the pHash keeps).
#: docs/media.md measures them.
VIEWS = ((0.05, 0.0, 0.0, 0.0), (0.0, 0.05, 0.0, 0.0), (0.0, 0.0, 0.05, 0.0), (0.0, 0.0, 0.0, 0.05),
         (0.1, 0.0, 0.0, 0.0), (0.0, 0.1, 0.0, 0.0), (0.0, 0.0, 0.1, 0.0), (0.0, 0.0, 0.0, 0.1),
         *CORNERS, (0.05, 0.05, 0.05, 0.05))
#: the places of the corner views in :attr:`ImageHashes.views` (their crop views, then their pad views)
CORNER_VIEWS = frozenset(p for i, v in enumerate(VIEWS) if v in CORNERS for p in (i, len(VIEWS) + i))
#: the crop view filed in the image index beside the whole image (5 % off all four sides)
FILED_VIEW = len(VIEWS) - 1


@dataclass(frozen=True, slots=True)
class ImageHashes:
    """One image's hashes. ``dhash``, ``width`` and ``height`` are None for a precomputed ``phash``;
    ``views`` are the pHashes of its crop views, then of its pad views (:data:`VIEWS` order), empty
    for a precomputed ``phash`` (no pixels) or with :attr:`ImageLimits.views` off."""

    phash: int
    dhash: int | None = None
    width: int | None = None
    height: int | None = None
    views: tuple[int, ...] = ()
    #: percent of the picture's variance beyond the frequencies its pHash reads
    #: (:func:`neardup.kernels.image.phash_structure_batch`); None for a precomputed ``phash``
    structure: int | None = None

    @property
    def filed(self) -> tuple[int, ...]:
        """The pHashes the image index files this image under: the whole image's, and its crop
        view with 5 % off all four sides (a copy cropped on every side finds it there)."""
        return (self.phash, self.views[FILED_VIEW]) if self.views else (self.phash,)

    @property
    def asked(self) -> tuple[int, ...]:
        """The pHashes an image is looked up under: the whole image's, then every view's. Each
        candidate is measured from them to its whole pHash (:meth:`match_bits`)."""
        return (self.phash, *self.views)

    def match_bits(self, stored: int, radius: int, view_radius: int, corner_radius: int | None = None) -> int | None:
        """The bits the image rules count from this image to a ``stored`` whole pHash, or None
        when it is no match: the whole pHashes' distance within ``radius``, or a view's within
        ``view_radius`` (a corner view's within ``corner_radius``, ``view_radius`` when None), the
        least of them (a crop of the stored photograph is near one of its pad views; the stored
        photograph, if it is the crop, near one of its crop views). A view's radius is the smaller
        because each view is one more chance for a different photograph to come near, a corner
        view's smaller still (docs/media.md)."""
        corner = view_radius if corner_radius is None else corner_radius
        whole = hamming(self.phash, stored)
        within = [whole] if whole <= radius else []
        for place, h in enumerate(self.views):
            bits = hamming(h, stored)
            if bits <= (corner if place in CORNER_VIEWS else view_radius):
                within.append(bits)
        return min(within) if within else None

    @property
    def phash_hex(self) -> str:
        """The pHash as 16 hex digits, as ``str(imagehash.phash(...))`` writes it."""
        return format_hash(self.phash)


#: a record's byte for an image whose structure is not known (a precomputed ``phash``)
UNKNOWN_STRUCTURE = 255


@dataclass(frozen=True, slots=True)
class ImageRadii:
    """The pHash radii the image rules match within, by how much structure a pair of pictures has.

    A picture whose variance lies nearly all in the 8x8 lowest frequencies (a smooth gradient, a
    blurred field: less than ``low_structure`` percent beyond them) leaves its 64 bits few degrees
    of freedom, and two such pictures come within the usual radius by chance; a pair where either
    picture is one matches within the smaller radii (docs/media.md measures them)."""

    radius: int = 14
    view_radius: int = 12
    low_structure: int = 5
    low_radius: int = 10
    low_view_radius: int = 8
    corner_radius: int = 10

    def corners(self, view_radius: int) -> int:
        """The corner views' radius for a pair held to ``view_radius`` (:meth:`of`): never above it."""
        return min(view_radius, self.corner_radius)

    def of(self, mine: int | None, theirs: int | None) -> tuple[int, int]:
        """(radius, views' radius) for a pair of pictures of structure ``mine`` and ``theirs``
        (None: not known, a precomputed ``phash``, which leaves the pair to the other's)."""
        known = [s for s in (mine, theirs) if s is not None]
        if known and min(known) < self.low_structure:
            return self.low_radius, self.low_view_radius
        return self.radius, self.view_radius


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


def radii_of(settings: ImageSettings) -> ImageRadii:
    """The radii the ``images`` settings give."""
    return ImageRadii(settings.radius, settings.view_radius, settings.low_structure, settings.low_structure_radius,
                      settings.low_structure_view_radius, settings.corner_radius)


def structure_byte(structure: int | None) -> int:
    """A structure as a record keeps it: :data:`UNKNOWN_STRUCTURE` for None."""
    return UNKNOWN_STRUCTURE if structure is None else structure


def structure_of(byte: int) -> int | None:
    """Inverse of :func:`structure_byte`."""
    return None if byte == UNKNOWN_STRUCTURE else byte


def limits_of(settings: ImageSettings) -> ImageLimits:
    """The limits the ``images`` settings give."""
    return ImageLimits(max_images=settings.max_images, max_bytes=settings.max_bytes, max_pixels=settings.max_pixels,
                       views=settings.views)
