"""The input record and its validation. Every rejection carries a reason a person can act on."""

from __future__ import annotations

import json
import math
import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from typing import Any

from neardup.errors import InputError
from neardup.media.hashes import DocumentImage, ImageLimits, ImageReject
from neardup.media.subtitles import SubtitleError, detect_format, subtitle_text
from neardup.text.language import KNOWN_LANGS

# JSON may escape an unpaired UTF-16 surrogate; such a string cannot be written out as UTF-8
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
TEXT_FIELDS = ("title", "url", "source", "type", "lang")


class InvalidDocument(InputError):
    """A document that cannot be decided. ``reason`` is a short machine-readable code, ``detail`` prose.

    An :class:`neardup.errors.InputError` (and still a ``ValueError``): the document goes to the
    rejects file or the dead-letter topic with its reason.
    """

    def __init__(self, reason: str, detail: str) -> None:
        """``reason``: the code (bad_json, missing_id, ...); ``detail``: what is wrong, for a person."""
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(slots=True)
class Document:
    """A validated input document; ``raw`` is the input object, echoed in the output with the decision."""
    id: str
    text: str
    type: str = "default"
    title: str | None = None
    url: str | None = None
    lang: str | None = None
    published_at: float | None = None  # epoch seconds
    source: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)  # the input object, echoed in the output
    images: tuple[DocumentImage, ...] = ()  # the usable images of ``raw["images"]``, hashed
    images_rejected: tuple[ImageReject, ...] = ()  # the others, each with its reason


class NotStrictJson(ValueError):
    """A JSON text that only Python's lenient parser reads: NaN, Infinity, or a number out of float range."""


def _no_constant(token: str) -> Any:
    raise NotStrictJson(f"{token} is not JSON (strict JSON has no NaN or Infinity)")


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise NotStrictJson(f"number {token[:40]} is out of range")
    return value


def loads_strict(text: str | bytes) -> Any:
    """``json.loads`` that refuses what strict JSON has not: ``NaN``, ``Infinity``, ``-Infinity``
    and numbers beyond float range (``1e999``), as :class:`NotStrictJson` (a ``ValueError``).

    Whatever it returns can be written back with ``json.dumps(..., allow_nan=False)``.
    """
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)


def non_finite_path(value: Any, path: str = "") -> str | None:
    """The path (``a.b[2]``) of a NaN or infinite float inside ``value``, else None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (path or "the value")
    if isinstance(value, Mapping):
        for k, v in value.items():
            found = non_finite_path(v, f"{path}.{k}" if path else str(k))
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            found = non_finite_path(v, f"{path}[{i}]")
            if found is not None:
                return found
    return None


@lru_cache(maxsize=16)
def time_zone(name: str) -> tzinfo:
    """The zone ``name`` (IANA, e.g. ``UTC``, ``Asia/Shanghai``), cached."""
    return UTC if name == "UTC" else zoneinfo.ZoneInfo(name)


def _parse_time(value: Any, naive_zone: tzinfo = UTC) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidDocument("bad_field", "published_at must be a number or an ISO-8601 string")
    if isinstance(value, int | float):
        if isinstance(value, int) and abs(value) > 10**15:
            raise InvalidDocument("bad_field", "published_at is out of range")
        if not math.isfinite(value):
            raise InvalidDocument("bad_field", "published_at is not finite")
        # milliseconds are common in crawlers' payloads
        return float(value) / 1000.0 if value > 1e11 else float(value)
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
            # a time without an offset is in naive_zone, never the host's zone: the same on every host
            return (when if when.tzinfo is not None else when.replace(tzinfo=naive_zone)).timestamp()
        except (ValueError, OverflowError, OSError) as exc:
            raise InvalidDocument("bad_field", f"published_at {value[:40]!r} is not ISO-8601") from exc
    raise InvalidDocument("bad_field", "published_at must be a number or an ISO-8601 string")


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _decoded(data: bytes, max_bytes: int) -> str:
    """The UTF-8 text of a message, refused when far beyond the size limit or not UTF-8."""
    if len(data) > max_bytes * 2 + 4096:
        raise InvalidDocument("too_large", f"message of {len(data)} bytes exceeds the size limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidDocument("bad_encoding", f"not valid UTF-8 at byte {exc.start}") from exc


def _strict_json(text: str) -> Any:
    """:func:`loads_strict`, its failures as ``bad_json``."""
    try:
        return loads_strict(text)
    except RecursionError as exc:
        raise InvalidDocument("bad_json", "JSON nested too deeply") from exc
    except ValueError as exc:
        raise InvalidDocument("bad_json", f"not JSON: {exc}") from exc


def _record_object(raw: bytes | str | Mapping[str, Any], max_bytes: int) -> Mapping[str, Any]:
    """The record as a mapping: decoded and parsed (bytes, JSON text) or given; strict JSON that
    can be written back out as UTF-8."""
    from_bytes = isinstance(raw, bytes | bytearray | memoryview)
    if isinstance(raw, bytes | bytearray | memoryview):
        raw = _decoded(bytes(raw), max_bytes)
    if isinstance(raw, str):
        # decoded bytes hold no surrogates; escapes in the JSON (or a str given directly) may
        check_encoding = bool(SURROGATE_ESCAPE.search(raw)) or (not from_bytes and _has_surrogate(raw))
        obj = _strict_json(raw)
    else:
        check_encoding = True
        obj = raw
    if not isinstance(obj, Mapping):
        raise InvalidDocument("bad_schema", f"expected a JSON object, got {type(obj).__name__}")
    if not isinstance(raw, str):  # a mapping (CSV, Parquet, renamed fields): JSON text was checked above
        where = non_finite_path(obj)
        if where is not None:
            raise InvalidDocument("bad_json", f"{where} is NaN or infinite, which strict JSON cannot hold")
    if check_encoding:
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except (UnicodeEncodeError, TypeError, ValueError) as exc:
            raise InvalidDocument("bad_encoding", f"a field is not encodable as UTF-8 JSON: {exc}") from exc
    return obj


def _document_id(obj: Mapping[str, Any], max_id_length: int) -> str:
    """Field ``id``: a non-empty string (an integer is read as its digits) of at most ``max_id_length``."""
    doc_id = obj.get("id")
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise InvalidDocument("missing_id", "field 'id' must be a non-empty string")
    if len(doc_id) > max_id_length:
        raise InvalidDocument("bad_field", f"id longer than {max_id_length} characters")
    return doc_id


def _document_text(obj: Mapping[str, Any], max_bytes: int, *, with_images: bool = False) -> str:
    """Field ``text``: a string of at most ``max_bytes`` UTF-8 bytes that is not only white space;
    ``with_images``, the document carries an ``images`` list and may leave the text out or empty
    (whether one of its images is usable is :func:`_document_images`' to say)."""
    text = obj.get("text")
    if text is None and with_images:
        return ""
    if not isinstance(text, str):
        raise InvalidDocument("missing_text", "field 'text' must be a string")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidDocument("bad_encoding", "text contains unpaired surrogates") from exc
    if size > max_bytes:
        raise InvalidDocument("too_large", f"text of {size} bytes exceeds the limit of {max_bytes}")
    if not text.strip() and not with_images:
        raise InvalidDocument("empty_text", "text is empty")
    return text


def _document_images(obj: Mapping[str, Any], text: str, limits: ImageLimits
                     ) -> tuple[tuple[DocumentImage, ...], tuple[ImageReject, ...]]:
    """Field ``images`` hashed: its usable and rejected entries. A bad image never rejects the
    document while it has text to decide; with no text, one usable image is needed."""
    if obj.get("images") is None:
        return (), ()
    from neardup.media.images import document_images  # Pillow and the kernels, only for documents with images

    usable, rejected = document_images(obj["images"], limits)
    if not text.strip() and not usable:
        raise InvalidDocument("no_usable_image", _unusable(rejected))
    return usable, rejected


def _unusable(rejected: tuple[ImageReject, ...]) -> str:
    """One line: the text is empty and why none of the images can stand in for it."""
    if not rejected:
        return "text is empty and images is an empty list"
    first = rejected[0]
    more = f" (and {len(rejected) - 1} more)" if len(rejected) > 1 else ""
    return f"text is empty and no image is usable: image {first.index}: {first.reason}: {first.detail}{more}"


SUBTITLE_SNIFF_LINES = 6  # subtitles show a WEBVTT header or a cue timing within their first lines


def _first_lines(text: str, n: int, probe: int = 2048) -> str:
    """The first ``n`` lines of ``text`` joined by newlines, without splitting the whole text
    (every document is sniffed for subtitles): a prefix that holds more than ``n`` lines holds
    the first ``n`` whole."""
    lines = text[:probe].splitlines()
    if len(lines) <= n and len(text) > probe:
        lines = text.splitlines()
    return "\n".join(lines[:n])


def _spoken_if_subtitles(text: str, fmt: Any) -> str:
    """The spoken text of SRT or WebVTT subtitles (field ``format``: 'srt' or 'vtt', or 'text' to
    take the text as it is; without it, subtitles are recognised by their first lines), else
    ``text``: a re-timed or re-split copy of a video's subtitles reads as the same text."""
    if fmt is not None and fmt not in ("srt", "vtt", "text"):
        raise InvalidDocument("bad_field", f"field 'format' must be 'srt', 'vtt' or 'text', got {fmt!r}")
    if fmt == "text":
        return text
    if fmt is None:
        fmt = detect_format(_first_lines(text.lstrip("\ufeff \t\r\n"), SUBTITLE_SNIFF_LINES))
        if fmt is None:
            return text
    try:
        spoken = subtitle_text(text, fmt)
    except SubtitleError as exc:
        raise InvalidDocument("bad_subtitles", str(exc)) from None
    if not spoken.strip():
        raise InvalidDocument("empty_text", "the subtitles have no spoken text")
    return spoken


def parse_document(raw: bytes | str | Mapping[str, Any], *, max_bytes: int = 1_000_000,
                   max_id_length: int = 512, naive_time_zone: str = "UTC",
                   image_limits: ImageLimits | None = None) -> Document:
    """Validate one input record (bytes, JSON text or a mapping) into a :class:`Document`.

    JSON text must be strict JSON (``NaN``, ``Infinity`` and out-of-range numbers are ``bad_json``;
    a mapping holding a NaN or infinite float is ``bad_json`` too), so that every record written
    back out is strict JSON. A ``published_at`` without a UTC offset is read in
    ``naive_time_zone`` (setting ``normalize.naive_time_zone``, default UTC).

    ``images`` (a list of ``{data | phash, url, caption}``) are hashed here under ``image_limits``
    (the ``images`` settings): a document may then have an empty text, if one image is usable;
    the images that are not are listed in ``images_rejected`` and the text is decided all the same.
    """
    obj = _record_object(raw, max_bytes)
    doc_id = _document_id(obj, max_id_length)
    with_images = obj.get("images") is not None
    text = _document_text(obj, max_bytes, with_images=with_images)
    if text.strip():
        text = _spoken_if_subtitles(text, obj.get("format"))
    images, rejected = _document_images(obj, text, image_limits or ImageLimits())
    for name in TEXT_FIELDS:
        value = obj.get(name)
        if value is not None and not isinstance(value, str):
            raise InvalidDocument("bad_field", f"field {name!r} must be a string")
    lang = obj.get("lang")
    if lang is not None and lang not in KNOWN_LANGS:
        lang = None  # unknown codes are detected instead of trusted
    return Document(
        id=doc_id,
        text=text,
        type=obj.get("type") or "default",
        title=obj.get("title"),
        url=obj.get("url"),
        lang=lang,
        published_at=_parse_time(obj.get("published_at"), time_zone(naive_time_zone)),
        source=obj.get("source"),
        raw=dict(obj),
        images=images,
        images_rejected=rejected,
    )
