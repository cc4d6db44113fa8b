"""The spoken text of SRT and WebVTT subtitles, for the text path.

Cue numbers and identifiers, timings and cue settings, the WEBVTT header, NOTE, STYLE and REGION
blocks, styling tags (``<i>``, ``<b>``, ``<c.yellow>``, ``<v Name>``, ``<00:00:01.000>``, ``<font>``)
and ASS override codes (``{\\an8}``) are removed; what is left is joined with single spaces. A cue
boundary is only a space, so a re-timed copy gives the same text and a copy split into other cues
the same text too; a line repeated by the next cue (roll-up captions) is kept once.

Malformed files are read as far as they can be: a missing blank line between cues, a cue number
without its timing, Windows or old Mac line ends, a byte-order mark. Only text without a single
timing line is refused, with :class:`SubtitleError`.
"""

from __future__ import annotations

import html
import re
from typing import Literal

from neardup.errors import InputError

SubtitleFormat = Literal["srt", "vtt"]
FORMATS: tuple[SubtitleFormat, ...] = ("srt", "vtt")

# 00:00:01,000 --> 00:00:04,000 (SRT), 00:01.000 --> 00:04.000 line:90% (WebVTT: hours optional,
# settings after the end time); either separator in either format, as files in the wild mix them
_TIME = r"(?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3}"
_TIMING = re.compile(rf"^\s*{_TIME}\s*-->\s*{_TIME}(?:\s.*)?$")
_CUE_NUMBER = re.compile(r"^\s*\d+\s*$")
# WebVTT blocks that are not cues; only WebVTT has them, and only at a block's start
_VTT_BLOCK = re.compile(r"^(?:NOTE|STYLE|REGION)(?:\s|$)")
# WebVTT and SRT markup: a tag opens with a letter or "/", a WebVTT timestamp with a digit; "1 < 2" stays
_TAG = re.compile(r"<(?:/?[A-Za-z][^<>\n]*|\d[\d:.]*)>")
_ASS_CODE = re.compile(r"\{\\[^{}\n]*\}")  # {\an8}, {\i1}: SubStation overrides many SRT files carry


class SubtitleError(InputError):
    """Text given as subtitles that has no cue timing line, or an unknown subtitle format."""

    reason = "bad_subtitles"


def detect_format(text: str) -> SubtitleFormat | None:
    """``vtt`` for text that starts with the WEBVTT signature, ``srt`` for other text with a cue timing
    line, None for text that is not subtitles."""
    if text.lstrip("\ufeff \t\r\n").startswith("WEBVTT"):
        return "vtt"
    if any(_TIMING.match(line) for line in _lines(text)):
        return "srt"
    return None


def subtitle_text(text: str, fmt: str | None = None) -> str:
    """The spoken text of SRT or WebVTT ``text``; ``fmt`` ('srt' or 'vtt') or detected."""
    if fmt is not None and fmt not in FORMATS:
        raise SubtitleError(f"unknown subtitle format {fmt!r}: expected 'srt' or 'vtt'")
    lines = _lines(text)
    segments = _cue_segments(lines)
    if not segments:
        raise SubtitleError("no cue timing line (00:00:01,000 --> 00:00:02,000) found: not SRT or WebVTT")
    vtt = (fmt or detect_format(text)) == "vtt"
    kept: list[str] = []
    for i, segment in enumerate(segments):
        followed = i + 1 < len(segments)
        for line in _cue_lines(segment, vtt=vtt, followed=followed):
            spoken = _spoken(line)
            if spoken and (not kept or kept[-1] != spoken):
                kept.append(spoken)
    return " ".join(kept)


def _lines(text: str) -> list[str]:
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _cue_segments(lines: list[str]) -> list[list[str]]:
    """The lines after each timing line up to the next one. What precedes the first timing line
    (the WEBVTT header, notes, styles, the first cue's number) is never cue text."""
    segments: list[list[str]] = []
    for line in lines:
        if _TIMING.match(line):
            segments.append([])
        elif segments:
            segments[-1].append(line)
    return segments


def _cue_lines(segment: list[str], *, vtt: bool, followed: bool) -> list[str]:
    """A segment's text lines: without WebVTT's non-cue blocks and, when another cue follows, without
    that cue's number or identifier at the segment's end."""
    blocks = _blocks(segment)
    if vtt:
        blocks = [b for b in blocks if not _VTT_BLOCK.match(b[0])]
    if followed and blocks:
        last = blocks[-1]
        # the next cue's identifier: in WebVTT any one line after the cue's text (a cue's text has
        # no blank line), in both a bare number, also where the blank line before it is missing
        if vtt and len(last) == 1 and len(blocks) > 1:
            blocks.pop()
        elif _CUE_NUMBER.match(last[-1]):
            last.pop()
    return [line for block in blocks for line in block]


def _blocks(segment: list[str]) -> list[list[str]]:
    """Runs of non-blank lines."""
    blocks: list[list[str]] = [[]]
    for line in segment:
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def _spoken(line: str) -> str:
    """One line without markup, entities decoded, whitespace collapsed."""
    bare = _ASS_CODE.sub("", _TAG.sub("", line))
    return " ".join(html.unescape(bare).split())
