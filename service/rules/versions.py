"""Version marks: the adoption and revision statements at the head of a regulation.

Two official versions of one regulation share almost every sentence; what tells them apart is the
list of dates on which it was adopted, published, amended or revised, at its head (中华人民共和国某法
/ 1999年4月29日……通过 / 2009年8月27日……第一次修正 / ... / 第一章 总则). A reprint keeps that list
(synonym edits, truncation and added boilerplate do not touch its dates); an amended version adds
to it. The marks of a text are the full dates in its first ``HEAD_CHARS`` characters (when it has
articles at all); two texts that both carry marks and not the same ones are different versions,
whatever their similarity.

Measured on the development set when introduced: 49 of 52 amended-version pairs carry different
marks, against 3 of 1,369 near-duplicate pairs (a paragraph moved into the head, a law filed twice
with a revision line more). Text without articles (news, prose) has no marks and is never vetoed.

A reprint that moves a revision line out of the head (or an article with a date into it) has
other marks, yet the date still stands in its text; an amended version's new date stands nowhere
in the older one. So each text also keeps the full dates of the rest of it (``body``), and a date
one head lacks counts only where the other text has it nowhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import mmh3

HEAD_CHARS = 800
# the definitions of a full date; version_marks finds the same matches from each 年 (dates_in)
_DATE = re.compile(r"(\d{4})年\s?(\d{1,2})\s?月\s?(\d{1,2})\s?日")
# the same date in Chinese numerals, as official documents print it (一九九五年一月一日, 二〇〇九年八月二十七日)
_ZH_DIGITS = "〇○零一二三四五六七八九"
_ZH_DATE = re.compile(f"([{_ZH_DIGITS}]{{4}})年([一二三四五六七八九十]{{1,3}})月([一二三四五六七八九十]{{1,3}})日")
# a space where markup split the date (11月<br/>7日 normalised to 11月 7日): no date is written with one
_MONTH_DAY = re.compile(r"\s?(\d{1,2})\s?月\s?(\d{1,2})\s?日")
_ZH_MONTH_DAY = re.compile("([一二三四五六七八九十]{1,3})月([一二三四五六七八九十]{1,3})日")
_BODY = re.compile(r"第[一1]条|第[一1]章")  # where a regulation's articles begin
# a date of coming into force (2015年9月1日 施行, 自二〇一五年九月一日起实施, 生效) is a mark of its own:
# a law is filed with or without its effective-date line, the same version either way, so it tells
# versions apart only where both heads give one (different_versions)
_DAY_OR_MONTH = r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})"
_EFFECTIVE = re.compile(rf"(?:\d{{4}}|[{_ZH_DIGITS}]{{4}})年\s?{_DAY_OR_MONTH}\s?月\s?{_DAY_OR_MONTH}\s?日"
                        r"\s*起?(?:施行|实施|生效)")


MAX_BODY_DATES = 32  # a record keeps at most this many dates of a regulation's body
# where a page starts listing other documents (their titles and dates follow): 相关阅读：, Related stories
# (in the normalised text, whose line breaks between Chinese characters are gone: the colon tells it)
_RELATED = re.compile(r"(?:相关阅读|延伸阅读|推荐阅读|相关新闻|相关链接|related (?:stories|articles))\s*[:：]",
                      re.IGNORECASE)
# what each of those patterns holds literally: a text with none of them is not searched (an
# alternation is tried at every position of the text, 33 us a 3 KB law)
_RELATED_HINTS = ("阅读", "相关")
_EFFECTIVE_HINTS = ("施行", "实施", "生效")


def _may_list_related(text: str) -> bool:
    """Whether ``text`` holds a word every :data:`_RELATED` match holds (its English one in any case)."""
    return any(h in text for h in _RELATED_HINTS) or "related" in text.lower()


@dataclass(frozen=True, slots=True)
class VersionMarks:
    """A regulation's version marks, as sorted 32-bit hashes of full dates: its head's dates of
    adoption and revision, its head's dates of coming into force (``effective``), and the other
    full dates of its text (``body``, at most :data:`MAX_BODY_DATES`). A record written before the
    body's dates were kept (meta v1) has ``body`` None and every date of its head in ``head``.
    Empty for a text without articles."""

    head: tuple[int, ...] = ()
    body: tuple[int, ...] | None = ()
    effective: tuple[int, ...] = ()

    def lacks(self, dates: set[int]) -> bool:
        """Whether some of ``dates`` (another text's head's, absent from the same kind of this
        head's) stands nowhere in this text: not moved, added (an amendment). Without a known body
        every one is lacking."""
        return bool(dates) and (self.body is None or not dates <= {*self.body, *self.head, *self.effective})

    @property
    def legacy(self) -> tuple[int, ...]:
        """Every date of the head, as a meta v1 record kept them."""
        return tuple(sorted({*self.head, *self.effective}))


NO_MARKS = VersionMarks()  # a text without articles (immutable: one is shared)


def version_marks(text: str) -> VersionMarks:
    """The full dates in the head of a regulation (its first ``HEAD_CHARS`` characters) and in
    the rest of it, as sorted 32-bit hashes; empty marks for a text that has no articles.

    The head is a length, not "before the first article": a reprint that moves a paragraph (the
    dataset's paragraph_reorder swaps a revision line with an article) mostly keeps its dates
    within it, where "before the first article" lost or gained one (3.4 % of fresh reorders of the
    development set's texts split); a date moved farther still stands in the body (``body``).
    None of the development set's 1,369 reprints has marks of another version; 49 of its 52
    amended versions have."""
    if _BODY.search(text) is None:
        return NO_MARKS
    related = _RELATED.search(text) if _may_list_related(text) else None
    if related is not None:  # a page's list of other documents, with their dates: none of this one's
        text = text[: related.start()]
    coming: list[str] = []  # the head's dates of coming into force, blanked there in one pass

    def blank(m: re.Match[str]) -> str:
        coming.append(m.group())
        return " " * len(m.group())

    head_text = text[:HEAD_CHARS]
    if any(h in head_text for h in _EFFECTIVE_HINTS):
        head_text = _EFFECTIVE.sub(blank, head_text)
    head = _date_hashes(head_text)
    effective = _date_hashes(" ".join(coming)) - head
    rest = _date_hashes(text) - head - effective
    return VersionMarks(tuple(sorted(head)), tuple(sorted(rest)[:MAX_BODY_DATES]), tuple(sorted(effective)))


# a year that markup or noise split (20<br/>13年 normalised to 20 13年): no year is written with a
# space inside, so its two runs of digits are joined again when they make four
_SPLIT_YEAR = re.compile(r"(?<!\d)(\d{1,3})\s+(\d{1,3})(?=年)")


def _join_year(m: re.Match[str]) -> str:
    return m[1] + m[2] if len(m[1]) + len(m[2]) == 4 else m.group()


def join_split_years(text: str) -> str:
    """``text`` with every year split by markup joined again (:data:`_SPLIT_YEAR`). The pattern
    runs only where it can match, found from each 年: one to three digits before it, whitespace
    before them. Tried at every position it took 50 us a text, a tenth of a window's version marks."""
    i = text.find("年")
    while i >= 0:
        j = i
        while j > 0 and i - j < 4 and text[j - 1].isdecimal():
            j -= 1
        if 1 <= i - j <= 3 and j > 0 and text[j - 1].isspace():
            return _SPLIT_YEAR.sub(_join_year, text)
        i = text.find("年", i + 1)
    return text


def _date_hashes(text: str) -> set[int]:
    """The 32-bit hashes of the full dates of ``text`` (a date in figures or in numerals is one)."""
    figures, numerals = dates_in(join_split_years(text))
    dates = {f"{y}-{int(m):02d}-{int(d):02d}" for y, m, d in figures}
    dates |= {f"{_zh_year(y)}-{_zh_number(m):02d}-{_zh_number(d):02d}" for y, m, d in numerals}
    return {mmh3.hash(date, 0x7E25, signed=False) for date in dates}


def dates_in(head: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """``(_DATE.findall(head), _ZH_DATE.findall(head))``, found from each 年 instead of trying the
    patterns at every position (a tenth of the time: the patterns start with a character class,
    which the regular expression engine tries at every one of the head's 800 characters). Both
    patterns hold exactly one 年, four digits before it and none after, so their matches are the
    years before each 年 that the rest of the pattern follows, in order, never overlapping."""
    figures: list[tuple[str, str, str]] = []
    numerals: list[tuple[str, str, str]] = []
    i = head.find("年", 4)
    while i >= 0:
        year = head[i - 4:i]
        if year.isdecimal():  # \d of a str pattern: Unicode decimal digits
            m = _MONTH_DAY.match(head, i + 1)
            if m:
                figures.append((year, m[1], m[2]))
        elif all(c in _ZH_DIGITS for c in year):
            m = _ZH_MONTH_DAY.match(head, i + 1)
            if m:
                numerals.append((year, m[1], m[2]))
        i = head.find("年", i + 1)
    return figures, numerals


_ZH_DIGIT_VALUE = {c: str(max(i - 2, 0)) for i, c in enumerate(_ZH_DIGITS)}  # 〇 ○ 零 -> 0, 一 -> 1, ...


def _zh_year(digits: str) -> str:
    """一九九五 -> "1995": one Chinese digit a place."""
    return "".join(_ZH_DIGIT_VALUE[c] for c in digits)


def _zh_number(text: str) -> int:
    """A day or month in Chinese numerals: 一 ... 九, 十, 十二, 二十, 二十七, 三十一."""
    units = "一二三四五六七八九"
    if "十" not in text:
        return units.index(text) + 1
    tens, _, ones = text.partition("十")
    return (units.index(tens) + 1 if tens else 1) * 10 + (units.index(ones) + 1 if ones else 0)


def different_versions(a: VersionMarks, b: VersionMarks) -> bool:
    """Both texts declare their versions, and not the same ones: a date of adoption or revision of
    one head that the other text has nowhere (a line moved out of the head keeps its date in the
    text), or both heads give a date of coming into force and one of them stands nowhere in the
    other text (a law filed without its effective-date line says nothing of it). A meta v1 record
    is compared as it was written: every date of both heads, all equal or not."""
    if a.body is None or b.body is None:
        old, new = a.legacy, b.legacy
        return bool(old) and bool(new) and old != new
    return _apart(a.head, b.head, a, b) or _apart(a.effective, b.effective, a, b)


def _apart(mine: tuple[int, ...], theirs: tuple[int, ...], a: VersionMarks, b: VersionMarks) -> bool:
    """Both texts have dates of one kind in their heads, and one of them stands nowhere in the other."""
    if not mine or not theirs or mine == theirs:
        return False
    return b.lacks(set(mine) - set(theirs)) or a.lacks(set(theirs) - set(mine))


__all__ = ["HEAD_CHARS", "MAX_BODY_DATES", "NO_MARKS", "VersionMarks", "dates_in", "different_versions",
           "version_marks"]
