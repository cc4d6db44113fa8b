"""The two photographs behind an image decision, side by side on the review page, with their distance.

The page never shows a document's own bytes: each thumbnail is made here from the image's
``data`` (decoded under the ``images`` limits, as validation decodes it: a decompression bomb is
refused from its header), as the grayscale picture the hash saw, at most ``THUMB_SIDE`` pixels a
side, re-encoded as a JPEG ``data:`` URL (the page's policy allows images from ``data:`` only).
An image given as a precomputed ``phash`` has no picture: the card says so.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from dataclasses import replace
from html import escape as esc
from typing import Any

from neardup.media.hashes import ImageLimits

THUMB_SIDE = 200
THUMB_QUALITY = 80


def thumbnail(entry: object, limits: ImageLimits) -> str | None:
    """A ``data:image/jpeg`` URL of a small picture made from an ``images`` entry, or None when the
    entry carries no image data or it cannot be decoded."""
    if not isinstance(entry, Mapping) or entry.get("data") is None:
        return None
    from neardup.media.images import ImageError, decode_base64, decode_gray

    try:
        # a JPEG decoded at a reduced scale still as large as the thumbnail, not as small as the hash's
        gray = decode_gray(decode_base64(entry["data"], limits), replace(limits, draft_side=THUMB_SIDE)).gray
    except ImageError:
        return None
    gray.thumbnail((THUMB_SIDE, THUMB_SIDE))
    out = io.BytesIO()
    gray.save(out, "JPEG", quality=THUMB_QUALITY)
    return "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode("ascii")


Found = tuple[int | None, object]  # (place in the document's images, the entry): (None, None) when not found


def _usable_entry(doc: Mapping[str, Any], usable_index: object, limits: ImageLimits) -> Found:
    """A document's ``usable_index``-th usable image (what a record's ``their_image`` counts)."""
    from neardup.media.images import document_images

    entries = doc.get("images")
    if not isinstance(entries, list) or not isinstance(usable_index, int):
        return None, None
    usable, _ = document_images(entries, limits)
    if not 0 <= usable_index < len(usable):
        return None, None
    place = usable[usable_index].index
    return place, entries[place]


def _entry(doc: Mapping[str, Any], place: object) -> Found:
    """A document's ``images`` entry at ``place``."""
    entries = doc.get("images")
    if isinstance(entries, list) and isinstance(place, int) and 0 <= place < len(entries):
        return place, entries[place]
    return None, None


def _figure(side: str, place: int | None, entry: object, limits: ImageLimits) -> str:
    url = thumbnail(entry, limits) if place is not None else None
    label = f"{side} image {place}" if place is not None else f"{side}: image not found"
    picture = (f'<img src="{url}" alt="{esc(label)}">' if url is not None
               else '<span class="none">no picture (a pHash only, or data that cannot be decoded)</span>')
    return f'<figure class="thumb {side.lower()}">{picture}<figcaption>{esc(label)}</figcaption></figure>'


def images_html(evidence: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any], a_id: str,
                limits: ImageLimits) -> str:
    """The thumbnails of B's image and A's image that an image decision (``evidence.image``) or a
    shared photograph (``evidence.shared_image``, when it names A) is about, and their distance;
    empty when the evidence names no image of A."""
    shown = evidence.get("image") or evidence.get("shared_image")
    if not isinstance(shown, Mapping) or shown.get("against") != a_id:
        return ""
    why = ("B is a duplicate of A by this photograph" if evidence.get("image")
           else "a photograph both share; the texts decided")
    distance = (f'<p class="distance">{esc(str(shown.get("hamming")))} pHash bits apart '
                f'(radius {esc(str(shown.get("radius")))}): {why}</p>')
    return ('<div class="images">' + _figure("A", *_usable_entry(a, shown.get("their_image"), limits), limits)
            + _figure("B", *_entry(b, shown.get("image")), limits) + distance + "</div>")


__all__ = ["THUMB_SIDE", "images_html", "thumbnail"]
