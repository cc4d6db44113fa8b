"""Image hashes: the kernel against a slow reference and against imagehash on the same pixels, JPEG
draft decoding against a full decode on real photographs, hex and Hamming helpers, and every kind of
bad input answered per image with its own error."""

from __future__ import annotations

import base64
import io
import math
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

Image = pytest.importorskip("PIL.Image", reason="Pillow is the image path's dependency (pip install 'neardup[media]')")

from neardup.kernels.image import (  # noqa: E402 (Pillow first, or skip)
    dct_basis,
    dhash_batch,
    phash_batch,
    phash_structure_batch,
)
from neardup.media.hashes import CORNER_VIEWS, CORNERS, FILED_VIEW, VIEWS, ImageRadii  # noqa: E402
from neardup.media.images import (  # noqa: E402
    BadImageEntryError,
    ImageError,
    ImageHashes,
    ImageLimits,
    ImageTooLargeError,
    InvalidBase64Error,
    MalformedHashError,
    TooManyImagesError,
    UndecodableImageError,
    decode_gray,
    format_hash,
    hamming,
    hash_document_images,
    hash_files,
    hash_pixels,
    parse_hash,
    view_hashes,
)

PHOTOS = ("astronaut.png", "coffee.png", "chelsea.png", "camera.png", "rocket.jpg", "hubble_deep_field.jpg",
          "motorcycle_left.png", "retina.jpg")


Photos = dict[str, Any]  # name -> PIL image


def reference_phash(pixels: np.ndarray) -> int:
    """imagehash.phash's steps on a 32x32 array with the DCT as a matrix product (no scipy)."""
    n = np.arange(32)
    basis = 2.0 * np.cos(np.pi * np.outer(n, 2 * n + 1) / 64.0)
    low = np.rint((basis @ pixels.astype(np.float64) @ basis.T)[:8, :8] * 1e6)  # ties as in exact arithmetic
    return bits_to_int(low > np.median(low))


def reference_dhash(pixels: np.ndarray) -> int:
    return bits_to_int(pixels[:, 1:] > pixels[:, :-1])


def bits_to_int(bits: np.ndarray) -> int:
    return int("".join("1" if b else "0" for b in bits.ravel()), 2)


def encode(image: Any, fmt: str = "JPEG", **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def gradient_image(width: int = 200, height: int = 150, seed: int = 0) -> Any:
    """A smooth picture with some texture: hashes that are neither all zeros nor noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = 128 + 70 * np.sin(x / (30 + seed)) * np.cos(y / (25 + seed)) + 40 * np.sin((x + y) / 9) \
        + rng.normal(0, 4, (height, width))
    gray = np.clip(base, 0, 255).astype(np.uint8)
    return Image.fromarray(np.stack([gray, np.roll(gray, 5, axis=1), gray[::-1]], axis=-1))


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height pixels, with one tiny compressed row behind it."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


@pytest.fixture(scope="module")
def photos() -> Photos:
    """Real photographs bundled in scikit-image's wheel (read from its folder: nothing is downloaded)."""
    skimage_data = pytest.importorskip("skimage.data", reason="scikit-image ships the photographs")
    folder = Path(skimage_data.__file__).parent
    return {name: Image.open(folder / name).convert("RGB") for name in PHOTOS}


@pytest.fixture(scope="module")
def imagehash() -> ModuleType:
    return pytest.importorskip("imagehash", reason="imagehash is the reference the kernel is measured against")


# --- the kernel --------------------------------------------------------------------------------


def test_kernel_agrees_with_the_slow_reference_on_random_arrays() -> None:
    rng = np.random.default_rng(23)
    small = rng.integers(0, 256, (300, 32, 32), dtype=np.uint8)
    tiny = rng.integers(0, 256, (300, 8, 9), dtype=np.uint8)
    phashes, dhashes = hash_pixels(small, tiny)
    assert [int(h) for h in phashes] == [reference_phash(a) for a in small]
    assert [int(h) for h in dhashes] == [reference_dhash(a) for a in tiny]
    assert len({int(h) for h in phashes}) == 300, "random images do not collide"


def test_kernel_on_smooth_arrays_and_edge_values() -> None:
    y, x = np.mgrid[0:32, 0:32]
    smooth = np.stack([((x * 8 + y * k) % 256).astype(np.uint8) for k in range(1, 6)])
    assert [int(h) for h in phash_batch(smooth, dct_basis())] == [reference_phash(a) for a in smooth]
    ramp = np.tile(np.arange(9, dtype=np.uint8) * 30, (1, 8, 1))
    assert int(dhash_batch(ramp)[0]) == 2**64 - 1, "brighter to the right everywhere: every bit set"
    assert int(dhash_batch(ramp[:, :, ::-1].copy())[0]) == 0
    assert phash_batch(np.zeros((0, 32, 32), dtype=np.uint8), dct_basis()).shape == (0,)


def test_flat_and_one_way_images_hash_as_in_exact_arithmetic(imagehash: ModuleType) -> None:
    # every coefficient but a few is zero in exact arithmetic: rounding noise must not pick the bits
    y, x = np.mgrid[0:32, 0:32]
    arrays = [np.full((32, 32), v, dtype=np.uint8) for v in (0, 17, 128, 255)]
    arrays += [(x * 8).astype(np.uint8), (y * 8).astype(np.uint8), ((x + y) * 4).astype(np.uint8)]
    arrays += [((x * 8 + y * k) % 256).astype(np.uint8) for k in range(1, 6)]  # ties between equal coefficients
    phashes, _ = hash_pixels(np.stack(arrays), np.zeros((len(arrays), 8, 9), dtype=np.uint8))
    assert [format_hash(int(h)) for h in phashes] == [str(imagehash.phash(Image.fromarray(a))) for a in arrays]
    assert [int(h) for h in phashes[:4]] == [0] + [1 << 63] * 3, "a flat image: only the mean is above the median"


def test_kernel_matches_imagehash_on_the_same_pixels(imagehash: ModuleType) -> None:
    rng = np.random.default_rng(5)
    small = rng.integers(0, 256, (200, 32, 32), dtype=np.uint8)
    tiny = rng.integers(0, 256, (200, 8, 9), dtype=np.uint8)
    phashes, dhashes = hash_pixels(small, tiny)
    # imagehash resizes a 32x32 (9x8) image to the same size: the pixels pass unchanged
    assert [format_hash(int(h)) for h in phashes] == [str(imagehash.phash(Image.fromarray(a))) for a in small]
    assert [format_hash(int(h)) for h in dhashes] == [str(imagehash.dhash(Image.fromarray(a))) for a in tiny]


# --- decoding and hashing whole files ---------------------------------------------------------


def test_hashes_equal_imagehash_on_the_image_pillow_decoded(photos: Photos, imagehash: ModuleType) -> None:
    files = [encode(p, "PNG") for p in photos.values()] + [encode(p.resize((800, 600)), quality=85)
                                                           for p in photos.values()]
    for data, result in zip(files, hash_files(files), strict=True):
        gray = decode_gray(data).gray  # the JPEGs in draft mode: the very pixels the hash was made from
        assert isinstance(result, ImageHashes)
        assert result.phash_hex == str(imagehash.phash(gray))
        assert format_hash(result.dhash or 0) == str(imagehash.dhash(gray))


def test_draft_decoding_moves_few_bits_from_a_full_decode_on_real_photos(photos: Photos, imagehash: ModuleType) -> None:
    phash_bits, dhash_bits = [], []
    for photo in photos.values():
        for size, quality in (((800, 600), 85), ((1600, 1200), 60), ((640, 480), 90)):
            data = encode(photo.resize(size), quality=quality)
            decoded = decode_gray(data)
            assert decoded.gray.width <= size[0] // 4, "JPEG decoded at a reduced scale"
            assert (decoded.width, decoded.height) == size, "the header's size is reported"
            ours = hash_files([data])[0]
            assert isinstance(ours, ImageHashes)
            full = Image.open(io.BytesIO(data))
            phash_bits.append(hamming(ours.phash, int(str(imagehash.phash(full)), 16)))
            dhash_bits.append(hamming(ours.dhash or 0, int(str(imagehash.dhash(full)), 16)))
    assert max(phash_bits) <= 4 and sum(phash_bits) / len(phash_bits) <= 1.0, phash_bits
    assert max(dhash_bits) <= 6 and sum(dhash_bits) / len(dhash_bits) <= 2.0, dhash_bits


# --- the index's views --------------------------------------------------------------------------


def crop_of(image: Any, fractions: tuple[float, ...]) -> Any:
    left, top, right, bottom = fractions
    w, h = image.size
    return image.crop((round(w * left), round(h * top), round(w * (1 - right)), round(h * (1 - bottom))))


def test_view_kernel_agrees_with_matrix_products() -> None:
    from neardup.kernels.image import view_phash_batch
    from neardup.media import images

    rng = np.random.default_rng(23)
    bases = rng.integers(0, 256, (5, 64, 64)).astype(np.float64)
    rows, columns = images._ROWS_DCT, images._COLUMNS_DCT
    got = view_phash_batch(bases, images._ROW_SET, images._ROW_OF, images._COLUMNS_ACROSS)
    assert len(images._ROW_SET) < len(rows)  # views share their row products
    assert got.shape == (5, 2 * len(VIEWS)) and got.dtype == np.uint64
    for d in range(5):
        for v in range(rows.shape[0]):
            low = (rows[v] @ bases[d] @ columns[v].T).ravel()
            assert int(got[d, v]) == bits_to_int(low > np.median(low))


def test_views_see_what_a_crop_sees_and_what_it_was_cut_from(photos: Photos) -> None:
    """On real photographs, for each view's crop: the photograph's crop view is within a few bits
    of the cropped copy's whole pHash, and the copy's pad view of that crop nearer the
    photograph's whole pHash than the copy's whole pHash is."""
    crop_bits, pad_bits, whole_bits = [], [], []
    for photo in photos.values():
        original = hash_files([encode(photo.resize((800, 600)), quality=90)])[0]
        assert isinstance(original, ImageHashes) and len(original.views) == 2 * len(VIEWS)
        for v, fractions in enumerate(VIEWS):
            copy = hash_files([encode(crop_of(photo.resize((800, 600)), fractions), quality=90)])[0]
            assert isinstance(copy, ImageHashes)
            crop_bits.append(hamming(original.views[v], copy.phash))
            pad_bits.append(hamming(copy.views[len(VIEWS) + v], original.phash))
            whole_bits.append(hamming(original.phash, copy.phash))
            nearest = min(whole_bits[-1], *(hamming(h, original.phash) for h in copy.views))
            assert copy.match_bits(original.phash, 64, 64) == nearest
    n = len(whole_bits)
    # the crop view is the copy's own pixels (0-4 bits); the pad view guesses the cut-off strip
    # from the edge, so it is nearer than the whole pHash but not near (0-16 bits, half on average)
    assert max(crop_bits) <= 6 and sum(crop_bits) / n <= 2, crop_bits
    corner = [v in CORNERS for _ in photos for v in VIEWS]
    sides = [(p, w) for p, w, c in zip(pad_bits, whole_bits, corner, strict=True) if not c]
    corners = [(p, w) for p, w, c in zip(pad_bits, whole_bits, corner, strict=True) if c]
    # a corner's pad view guesses two strips: farther (10.7 bits on average), still about half the whole's
    for measured, mean in ((sides, 7), (corners, 11)):
        pads, wholes = sum(p for p, _ in measured), sum(w for _, w in measured)
        assert pads / len(measured) <= mean and pads < 0.65 * wholes, (measured, pads / len(measured), pads / wholes)


def test_filed_and_asked_hashes() -> None:
    """Filed: the whole pHash and the 5 %-all-round crop view; asked: the whole and every view.
    A precomputed pHash, or views turned off, is one pHash both ways."""
    picture = encode(gradient_image())
    hashed = hash_files([picture])[0]
    assert isinstance(hashed, ImageHashes)
    assert VIEWS[FILED_VIEW] == (0.05, 0.05, 0.05, 0.05)
    assert hashed.filed == (hashed.phash, hashed.views[FILED_VIEW]) and hashed.asked == (hashed.phash, *hashed.views)
    assert hashed.match_bits(hashed.phash, 0, 0) == 0 and hashed.match_bits(hashed.views[3], 0, 0) == 0
    plain = hash_files([picture], ImageLimits(views=False))[0]
    assert plain == ImageHashes(hashed.phash, hashed.dhash, 200, 150, (), hashed.structure)  # the same hashes, no views
    given = ImageHashes(0x0F0F)
    assert given.filed == given.asked == (0x0F0F,) and given.match_bits(0x0F0E, 1, 0) == 1
    # a match: the whole pHash within the radius, or a view within the views' (smaller) radius
    near_view = ImageHashes(0, views=(0xFFF, 0xFFFF_FFFF))  # 12 and 32 bits from 0
    assert near_view.match_bits((1 << 15) - 1, 14, 12) == 3 and near_view.match_bits(0, 14, 12) == 0
    assert near_view.match_bits(0xFFFF_FFFF_FFFF_0000, 14, 12) is None  # 48 whole, 60 and 48 by the views
    far_whole = 0xFFF0_0000_0000_0FFF  # 24 bits whole, 12 and 32 by the views
    assert near_view.match_bits(far_whole, 14, 12) == 12 and near_view.match_bits(far_whole, 14, 11) is None
    assert given.match_bits(0x0F0F ^ 0x3FFF, 14, 0) == 14 and given.match_bits(0x0F0F ^ 0x7FFF, 14, 64) is None
    assert view_hashes([]).shape == (0, 2 * len(VIEWS))
    again = hash_files([picture])[0]
    assert isinstance(again, ImageHashes) and again.views == hashed.views  # the same bits every time


def test_views_of_tiny_and_flat_images_never_fail() -> None:
    tiny, flat = Image.new("L", (1, 1), 77), Image.new("RGB", (300, 200), (40, 90, 200))
    for result in hash_files([encode(tiny, "PNG"), encode(flat, "PNG"), encode(gradient_image(9, 3), "PNG")]):
        assert isinstance(result, ImageHashes) and len(result.views) == 2 * len(VIEWS)


def test_modes_and_formats_all_hash() -> None:
    picture = gradient_image()
    files = [encode(picture, "PNG"), encode(picture.convert("L"), "PNG"), encode(picture.convert("P"), "GIF"),
             encode(picture.convert("RGBA"), "WEBP"), encode(picture, "BMP"), encode(picture, "TIFF"),
             encode(picture.convert("CMYK"), "JPEG"), encode(picture.convert("L"), "JPEG")]
    results = hash_files(files)
    assert all(isinstance(r, ImageHashes) and r.width == 200 and r.height == 150 for r in results), results
    reference = results[0]
    assert isinstance(reference, ImageHashes)
    for other in results[1:]:
        assert isinstance(other, ImageHashes)
        assert hamming(reference.phash, other.phash) <= 4, "the same picture in another format or mode"


def test_hex_round_trip_and_hamming() -> None:
    for value in (0, 1, 0x8000000000000000, 0xFEDCBA9876543210, 2**64 - 1):
        text = format_hash(value)
        assert len(text) == 16 and parse_hash(text) == value and parse_hash(text.upper()) == value
    assert format_hash(1) == "0000000000000001"
    assert hamming(0, 2**64 - 1) == 64 and hamming(0xF0, 0x0F) == 8 and hamming(5, 5) == 0


@pytest.mark.parametrize("bad", ["", "abc", "0" * 15, "0" * 17, "g" * 16, "0x" + "0" * 14, " " + "0" * 15,
                                 "０" * 16, 12345, None])
def test_malformed_hash_is_refused_with_a_clear_message(bad: object) -> None:
    with pytest.raises(MalformedHashError, match="16 hex digits") as caught:
        parse_hash(bad)
    assert caught.value.reason == "image_bad_hash" and "\n" not in caught.value.one_line()


# --- bad input --------------------------------------------------------------------------------


def test_undecodable_bytes_and_truncated_files() -> None:
    jpeg = encode(gradient_image(), quality=80)
    for data in (b"not an image at all", b"\xff\xd8\xff" + b"\0" * 100, jpeg[: len(jpeg) // 2], b"%!PS-Adobe-3.0 EPSF"):
        with pytest.raises(UndecodableImageError) as caught:
            decode_gray(data)
        assert caught.value.reason == "image_undecodable"
    with pytest.raises(UndecodableImageError, match="empty"):
        decode_gray(b"")


def test_invalid_base64() -> None:
    for text in ("@@@@", "abc", "ab=c", "\u4e2d\u6587\u5b57\u7b26"):
        [outcome] = hash_document_images([{"data": text}])
        assert isinstance(outcome, InvalidBase64Error) and "base64" in str(outcome)
    [outcome] = hash_document_images([{"data": b"bytes, not text"}])
    assert isinstance(outcome, InvalidBase64Error) and "string" in str(outcome)


def test_base64_with_line_breaks_and_a_data_url_prefix() -> None:
    data = encode(gradient_image(), quality=80)
    wrapped = base64.encodebytes(data).decode()  # MIME: a newline every 76 characters
    url = "data:image/jpeg;base64," + base64.b64encode(data).decode()
    first, second = hash_document_images([{"data": wrapped}, {"data": url}])
    assert isinstance(first, ImageHashes) and first == second


def test_decompression_bomb_is_refused_from_its_header() -> None:
    bomb = png_header_only(60_000, 60_000)  # 3.6 gigapixels claimed in 100 bytes
    with pytest.raises(ImageTooLargeError, match="pixels") as caught:
        decode_gray(bomb)
    assert caught.value.reason == "image_too_large"
    before = Image.MAX_IMAGE_PIXELS
    picture = encode(gradient_image(), "PNG")  # 30,000 pixels
    # our header check, Pillow's warning band (limit..2x limit) and Pillow's own error (> 2x limit)
    for limit in (29_999, 20_000, 10_000):
        with pytest.raises(ImageTooLargeError):
            decode_gray(picture, ImageLimits(max_pixels=limit))
    after = Image.MAX_IMAGE_PIXELS
    assert after == before, "Pillow's process-wide guard is put back after each call"
    assert isinstance(hash_files([picture], ImageLimits(max_pixels=30_000))[0], ImageHashes)


def test_each_call_keeps_its_own_pixel_limit_across_threads() -> None:
    picture = encode(gradient_image(), "PNG")  # 30,000 pixels
    tight, loose = ImageLimits(max_pixels=20_000), ImageLimits(max_pixels=40_000)
    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(lambda limits: hash_files([picture], limits)[0], [tight, loose] * 40))
    assert all(isinstance(o, ImageTooLargeError) for o in outcomes[0::2])
    assert all(isinstance(o, ImageHashes) for o in outcomes[1::2])


def test_oversized_file_is_refused_before_decoding() -> None:
    data = encode(gradient_image(), "PNG")
    limits = ImageLimits(max_bytes=len(data) - 1)
    [from_bytes] = hash_files([data], limits)
    [from_base64] = hash_document_images([{"data": base64.b64encode(data).decode()}], limits)
    huge = hash_document_images([{"data": "A" * 40_000_000}])[0]  # refused before it is decoded
    for outcome in (from_bytes, from_base64, huge):
        assert isinstance(outcome, ImageTooLargeError) and "bytes" in str(outcome)


def test_too_many_images_hashes_the_first_ones() -> None:
    data = base64.b64encode(encode(gradient_image(), quality=80)).decode()
    outcomes = hash_document_images([{"data": data}] * 5, ImageLimits(max_images=3))
    assert [type(o) for o in outcomes[:3]] == [ImageHashes] * 3
    assert all(isinstance(o, TooManyImagesError) for o in outcomes[3:])
    assert "image 4 of 5" in str(outcomes[3]) and "3 images" in str(outcomes[3])


def test_document_images_mix_results_and_errors_in_order() -> None:
    data = base64.b64encode(encode(gradient_image(seed=1), quality=80)).decode()
    images: list[object] = [
        {"data": data, "url": "https://example.org/a.jpg", "caption": "a"},
        {"phash": "fedcba9876543210"},
        {"phash": "not-a-hash"},
        {"url": "https://example.org/only-a-url.jpg"},
        "just a string",
        {"data": base64.b64encode(b"garbage").decode()},
        {"data": data, "phash": "0000000000000000"},  # data wins: hashed here, the same way as every other
    ]
    outcomes = hash_document_images(images)
    assert len(outcomes) == len(images)
    first, given, bad_hash, no_data, not_object, garbage, both = outcomes
    assert isinstance(first, ImageHashes) and first.dhash is not None and first.width == 200
    assert given == ImageHashes(0xFEDCBA9876543210) and given.dhash is None and given.width is None
    assert isinstance(bad_hash, MalformedHashError)
    assert isinstance(no_data, BadImageEntryError) and "data" in str(no_data)
    assert isinstance(not_object, BadImageEntryError) and "str" in str(not_object)
    assert isinstance(garbage, UndecodableImageError)
    assert both == first
    [not_a_list] = hash_document_images({"data": data})
    assert isinstance(not_a_list, BadImageEntryError) and "list" in str(not_a_list)
    assert hash_document_images([]) == []


def test_random_entries_never_raise() -> None:
    rng = np.random.default_rng(7)
    jpeg = encode(gradient_image(), quality=70)
    pieces: list[object] = [None, 3, 1.5, [], {}, "x", {"data": None}, {"phash": None}, {"data": 7}, {"phash": 7}]
    for _ in range(40):
        cut = int(rng.integers(0, len(jpeg)))
        noisy = bytearray(jpeg)
        noisy[cut:cut + 8] = rng.integers(0, 256, 8, dtype=np.uint8).tobytes()
        pieces.append({"data": base64.b64encode(bytes(noisy[: int(rng.integers(1, len(noisy) + 1))])).decode()})
    outcomes = hash_document_images(pieces)
    assert len(outcomes) == len(pieces)
    assert all(isinstance(o, ImageHashes | ImageError) for o in outcomes)
    for error in (o for o in outcomes if isinstance(o, ImageError)):
        assert error.reason.startswith(("image_", "too_many")) and "\n" not in error.one_line()


# --- structure: how much of a picture lies beyond the frequencies its pHash reads ------------------


def reference_structure(pixels: np.ndarray) -> int:
    """The percent (rounded down) of a 32x32 array's variance outside the 8x8 lowest frequencies,
    from its whole orthonormal 2-D DCT in plain Python loops: no Parseval shortcut, no kernel."""
    side = 32
    values = [[float(v) for v in row] for row in pixels.tolist()]

    def coefficient(k: int, n: int) -> float:
        scale = math.sqrt((1 if k == 0 else 2) / side)
        return scale * math.cos(math.pi * k * (2 * n + 1) / (2 * side))

    basis = [[coefficient(k, n) for n in range(side)] for k in range(side)]
    down = [[sum(basis[k][i] * values[i][j] for i in range(side)) for j in range(side)] for k in range(side)]
    dct = [[sum(down[k][j] * basis[m][j] for j in range(side)) for m in range(side)] for k in range(side)]
    energy = sum(c * c for row in dct for c in row) - dct[0][0] ** 2
    read = sum(dct[k][m] ** 2 for k in range(8) for m in range(8)) - dct[0][0] ** 2
    return 0 if energy <= 1e-9 else math.floor(100 * (1 - read / energy))


def test_structure_agrees_with_the_slow_reference() -> None:
    """The kernel's structure (the pHash's own coefficients and the pixels' energy) is the whole
    DCT's share beyond the 8x8 low frequencies, on noise, smooth enlargements and a flat image."""
    rng = np.random.default_rng(11)
    noise = rng.integers(0, 256, (4, 32, 32), dtype=np.uint8)
    smooth = np.stack([np.asarray(Image.fromarray(rng.integers(0, 256, (4, 6), dtype=np.uint8))
                                  .resize((32, 32), Image.Resampling.BICUBIC)) for _ in range(4)])
    y, x = np.mgrid[0:32, 0:32]
    waves = np.stack([(128 + 100 * np.sin(x / p) * np.cos(y / (p + 1))).astype(np.uint8) for p in (1.5, 3.0, 6.0)])
    arrays = np.concatenate([noise, smooth, waves, np.full((1, 32, 32), 77, dtype=np.uint8)])
    phashes, structure = phash_structure_batch(arrays, dct_basis())
    assert [int(h) for h in phashes] == [int(h) for h in phash_batch(arrays, dct_basis())]
    assert [int(s) for s in structure] == [reference_structure(a) for a in arrays]
    assert min(structure[:4]) > 80 and max(structure[4:8]) < 5 and structure[-1] == 0


def test_hashed_images_carry_their_structure() -> None:
    """A photograph-like picture has structure well above the low-structure bound, a blurred field
    below it; a precomputed pHash has none known."""
    textured = hash_files([encode(gradient_image())])[0]
    field = Image.fromarray(np.random.default_rng(3).integers(0, 256, (4, 6), dtype=np.uint8))
    blurred = hash_files([encode(field.resize((160, 120), Image.Resampling.BICUBIC).convert("RGB"))])[0]
    assert isinstance(textured, ImageHashes) and isinstance(blurred, ImageHashes)
    assert textured.structure is not None and textured.structure >= ImageRadii().low_structure
    assert blurred.structure is not None and blurred.structure < ImageRadii().low_structure
    assert hash_document_images([{"phash": "8f373714acfcf4d0"}])[0] == ImageHashes(0x8F373714ACFCF4D0)


def test_a_pair_with_a_low_structure_picture_is_held_to_the_smaller_radii() -> None:
    radii = ImageRadii(radius=14, view_radius=12, low_structure=5, low_radius=10, low_view_radius=8)
    assert radii.of(40, 60) == (14, 12) and radii.of(5, 60) == (14, 12)
    assert radii.of(4, 60) == radii.of(60, 4) == radii.of(0, 0) == (10, 8)
    assert radii.of(None, 3) == (10, 8) and radii.of(40, None) == (14, 12) and radii.of(None, None) == (14, 12)
    assert ImageRadii(low_structure=0).of(0, 0) == (14, 12)  # 0 turns the smaller radii off


def test_corner_views_are_held_to_their_own_radius() -> None:
    """The corner views (a tenth off two adjacent sides, crop and pad) count within the corner
    radius; the other views within the views' radius."""
    assert len(CORNER_VIEWS) == 8 and all(VIEWS[p % len(VIEWS)] in CORNERS for p in CORNER_VIEWS)
    assert VIEWS[FILED_VIEW] == (0.05, 0.05, 0.05, 0.05)
    views = [(1 << 64) - 1] * (2 * len(VIEWS))
    corner, side = min(CORNER_VIEWS), 0
    views[corner] = (1 << 11) - 1  # 11 bits from 0
    hashed = ImageHashes(0xFFFF_FFFF_0000_0000, views=tuple(views))
    assert hashed.match_bits(0, 14, 12) == 11 and hashed.match_bits(0, 14, 12, 10) is None
    views[side] = (1 << 12) - 1
    assert ImageHashes(0xFFFF_FFFF_0000_0000, views=tuple(views)).match_bits(0, 14, 12, 10) == 12
    assert ImageRadii().corners(12) == 10 and ImageRadii().corners(8) == 8
