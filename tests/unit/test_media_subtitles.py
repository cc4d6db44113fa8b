"""Subtitles: SRT and WebVTT detected, their markup and timings removed, re-timed and re-split copies
read as the same text, and malformed files read as far as they go or refused with one clear line."""

from __future__ import annotations

import re

import pytest

from neardup.media.subtitles import SubtitleError, detect_format, subtitle_text

SRT = """1
00:00:01,000 --> 00:00:04,000
<i>Previously on</i> the show:
{\\an8}the <b>river</b> rose.

2
00:00:04,500 --> 00:00:07,250
<font color="#ffff00">We left at dawn</font>
and crossed before noon.

3
00:00:08,000 --> 00:00:10,000
Nobody saw us &amp; nobody asked.
"""

SPOKEN = ("Previously on the show: the river rose. We left at dawn and crossed before noon. "
          "Nobody saw us & nobody asked.")

VTT = """WEBVTT - the same episode
Kind: captions
Language: en

STYLE
::cue { color: yellow }

NOTE this file was
made by hand

intro
00:01.000 --> 00:04.000 align:start position:10% line:90%
<v Narrator><i>Previously on</i> the show:</v>
the <c.yellow.bg_blue>river</c> rose.

00:00:04.500 --> 00:00:07.250
We left <00:00:05.000>at dawn
and crossed before noon.

NOTE a note between cues

3
00:08.000 --> 00:10.000
Nobody saw us &amp; nobody asked.
"""

CHINESE_SRT = """1
00:00:01,000 --> 00:00:03,000
今天的新闻：
<i>河水上涨了。</i>

2
00:00:03,500 --> 00:00:06,000
我们黎明出发，
中午之前过了河。
"""


def shift(text: str, seconds: float) -> str:
    """Every timestamp moved by ``seconds``: a re-timed copy."""
    def moved(match: re.Match[str]) -> str:
        h, m, s, ms, sep = int(match["h"] or 0), int(match["m"]), int(match["s"]), int(match["ms"]), match["sep"]
        total = max(0, round(((h * 60 + m) * 60 + s) * 1000 + ms + seconds * 1000))
        return f"{total // 3_600_000:02d}:{total // 60_000 % 60:02d}:{total // 1000 % 60:02d}{sep}{total % 1000:03d}"
    return re.sub(r"(?:(?P<h>\d+):)?(?P<m>\d{2}):(?P<s>\d{2})(?P<sep>[.,])(?P<ms>\d{3})", moved, text)


def test_srt_and_vtt_give_the_spoken_text() -> None:
    assert subtitle_text(SRT) == SPOKEN
    assert subtitle_text(VTT) == SPOKEN
    assert subtitle_text(SRT, "srt") == subtitle_text(VTT, "vtt") == SPOKEN


def test_formats_are_detected() -> None:
    assert detect_format(SRT) == "srt"
    assert detect_format(VTT) == "vtt"
    assert detect_format("\ufeffWEBVTT\n\n00:01.000 --> 00:02.000\nhi\n") == "vtt"
    assert detect_format("an ordinary article, no timings --> anywhere") is None
    assert detect_format("") is None


def test_a_retimed_copy_gives_the_same_text() -> None:
    for original in (SRT, VTT, CHINESE_SRT):
        retimed = shift(original, 12.345)
        assert retimed != original
        assert subtitle_text(retimed) == subtitle_text(original)


def test_a_copy_split_into_other_cues_gives_the_same_text() -> None:
    resplit = """1
00:00:01,000 --> 00:00:02,500
Previously on the show: the river

2
00:00:02,500 --> 00:00:05,000
rose. We left at dawn and crossed

3
00:00:05,000 --> 00:00:07,000
before noon. Nobody saw us &amp;

4
00:00:07,000 --> 00:00:10,000
nobody asked.
"""
    assert subtitle_text(resplit) == SPOKEN


def test_roll_up_captions_keep_a_repeated_line_once() -> None:
    rolling = """WEBVTT

00:00:01.000 --> 00:00:02.000
we left at dawn

00:00:02.000 --> 00:00:03.000
we left at dawn
and crossed before noon

00:00:03.000 --> 00:00:04.000
and crossed before noon
"""
    assert subtitle_text(rolling) == "we left at dawn and crossed before noon"


def test_chinese_lines_are_joined_for_the_text_path() -> None:
    # the normaliser removes the spaces between CJK characters that the join leaves
    assert subtitle_text(CHINESE_SRT) == "今天的新闻： 河水上涨了。 我们黎明出发， 中午之前过了河。"


def test_another_episode_gives_another_text() -> None:
    other = SRT.replace("crossed before noon", "turned back at the bridge").replace("dawn", "midnight")
    assert subtitle_text(other) != subtitle_text(SRT)
    assert "bridge" in subtitle_text(other) and "midnight" in subtitle_text(other)


def test_line_ends_and_byte_order_mark() -> None:
    assert subtitle_text("\ufeff" + SRT.replace("\n", "\r\n")) == SPOKEN
    assert subtitle_text(SRT.replace("\n", "\r")) == SPOKEN


def test_malformed_srt_is_read_as_far_as_it_goes() -> None:
    no_blank_lines = """1
00:00:01,000 --> 00:00:02,000
first line
2
00:00:02,000 --> 00:00:03,000
second line
"""
    assert subtitle_text(no_blank_lines) == "first line second line"
    cue_text_is_a_number = "1\n00:00:01,000 --> 00:00:02,000\n3\n\n2\n00:00:02,000 --> 00:00:03,000\nand done\n"
    assert subtitle_text(cue_text_is_a_number) == "3 and done"
    unclosed_tags = "1\n00:00:01,000 --> 00:00:02,000\n<i>half <b>open\n1 < 2 and 3 > 2\n"
    assert subtitle_text(unclosed_tags) == "half open 1 < 2 and 3 > 2"
    orphan_number = "7\n\n1\n00:00:01,000 --> 00:00:02,000\nonly cue\n"
    assert subtitle_text(orphan_number) == "only cue"
    dot_millis_and_short_hours = "1\n0:00:01.5 --> 0:00:02.75\nsloppy but timed\n"
    assert subtitle_text(dot_millis_and_short_hours) == "sloppy but timed"
    empty_cues = "1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:02,000 --> 00:00:03,000\n<i></i>\n"
    assert subtitle_text(empty_cues) == ""


def test_vtt_without_its_header_is_read_as_vtt_when_told() -> None:
    body = VTT.split("intro\n", 1)[1]
    assert subtitle_text(body, "vtt") == SPOKEN


@pytest.mark.parametrize("text", ["", "just prose, no cues at all", "1\n\n2\n\nhello\n",
                                  "00:00:01 --> 00:00:02\nno milliseconds"])
def test_text_without_a_timing_line_is_refused(text: str) -> None:
    with pytest.raises(SubtitleError, match="no cue timing line") as caught:
        subtitle_text(text)
    assert caught.value.reason == "bad_subtitles" and "\n" not in caught.value.one_line()


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(SubtitleError, match="'ass'"):
        subtitle_text(SRT, "ass")


@pytest.mark.parametrize("seed", range(20))
def test_the_sniffed_head_is_the_first_lines_of_the_whole_text(seed: int) -> None:
    """Every document is sniffed for subtitles by its first lines, read from a prefix: they are
    the whole text's first lines, whatever line breaks (\\r\\n, \\r, \\u2028) fall where the prefix ends."""
    import random

    from neardup.document import _first_lines

    rng = random.Random(seed)
    pieces = ["a", "bb", "字", "00:00:01,000 --> 00:00:02,000", "\n", "\r\n", "\r", "\u2028", "\x0b", " "]
    text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
    for probe in (1, 2, 3, 5, 8, 13, 2048):
        for n in (1, 2, 6):
            assert _first_lines(text, n, probe) == "\n".join(text.splitlines()[:n]), (text, n, probe)
