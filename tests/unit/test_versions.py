"""Version marks (service/rules/versions.py): the dates at a regulation's head tell its versions apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.rules.versions import (
    _DATE,
    _ZH_DATE,
    HEAD_CHARS,
    MAX_BODY_DATES,
    NO_MARKS,
    VersionMarks,
    dates_in,
    different_versions,
    version_marks,
)
from neardup.sketch.similarity import decode_meta, encode_meta
from neardup.text.normalize import normalize_batch, normalize_text

HEAD = "中华人民共和国某某管理条例\n（{adopted}国务院第十次常务会议通过 {amended}国务院令第588号修订）\n"
BODY = "第一章 总则\n第一条 为了加强管理，制定本条例。\n第二条 本条例适用于全国。"


def test_a_date_in_chinese_numerals_is_the_same_mark_as_in_figures() -> None:
    """Official documents print dates as 一九九五年一月一日 or 二〇〇九年八月二十七日; either spelling
    of one date is one mark, and a revision date the other version lacks tells them apart."""
    figures = HEAD.format(adopted="1994年12月6日", amended="2009年8月27日") + BODY
    numerals = HEAD.format(adopted="一九九四年十二月六日", amended="二〇〇九年八月二十七日") + BODY
    circle = HEAD.format(adopted="一九九四年十二月六日", amended="二○○九年八月二十七日") + BODY
    assert version_marks(figures) == version_marks(numerals) == version_marks(circle)
    assert len(version_marks(numerals).head) == 2
    older = HEAD.format(adopted="一九九四年十二月六日", amended="") + BODY
    assert different_versions(version_marks(older), version_marks(numerals))


def test_days_and_months_in_numerals_read_right() -> None:
    for spelled, date in (("一九五○年三月三日", "1950年3月3日"), ("二〇二〇年十月十日", "2020年10月10日"),
                          ("一九八三年九月十二日", "1983年9月12日"), ("二〇一九年十二月三十一日", "2019年12月31日")):
        assert version_marks(f"某法\n（{spelled}通过）\n{BODY}") == version_marks(f"某法\n（{date}通过）\n{BODY}")


def test_a_reprint_that_moves_a_revision_line_keeps_its_marks() -> None:
    """The dataset's paragraph_reorder swaps two paragraphs of a law, a revision line with an
    article among them: the dates stay in the head, so the reprint is no other version."""
    lines = ["某某管理条例", "（1994年12月6日国务院第十次常务会议通过", "2009年8月27日国务院令第588号修订）",
             "第一章 总则", "第一条 为了加强管理，制定本条例。", "第二条 本条例适用于全国。"]
    moved = list(lines)
    moved[2], moved[4] = moved[4], moved[2]
    a, b = "\n".join(lines), "\n".join(moved)
    assert version_marks(a) == version_marks(b) and len(version_marks(a).head) == 2


LAW = ["中华人民共和国某某管理条例", "2012年2月15日 国务院第192次常务会议通过",
       "2012年2月23日 中华人民共和国国务院令第614号公布"]
ARTICLES = [f"第{n}条 为了加强管理，保障有关各方的合法权益，根据有关法律，结合本地实际情况，制定本条例。" * 3
            for n in "一二三四五六七八九十"]


def test_a_revision_line_moved_out_of_the_head_is_the_same_version() -> None:
    """A reprint that swaps a revision line with an article far down (the fresh draws'
    paragraph_reorder) has one date fewer in its head, but the date still stands in its text: the
    same version. An amended version's new date stands nowhere in the older text."""
    text = "\n".join(LAW + ARTICLES)
    lines = LAW + ARTICLES
    lines[2], lines[-1] = lines[-1], lines[2]
    moved = "\n".join(lines)
    a, b = version_marks(text), version_marks(moved)
    assert len(a.head) == 2 and len(b.head) == 1 and set(b.head) < set(a.head)
    assert not different_versions(a, b) and not different_versions(b, a)
    amended = "\n".join([*LAW, "2024年3月10日 《国务院关于修改部分行政法规的决定》第一次修订", *ARTICLES])
    assert different_versions(version_marks(amended), a) and different_versions(a, version_marks(amended))
    # a record written before the body's dates were kept knows none of them: the move splits
    older = VersionMarks(b.head, None)
    assert different_versions(a, older) and different_versions(older, a)


@pytest.mark.parametrize("line", ["2015年9月1日 施行", "二〇一五年九月一日起施行"])
def test_a_date_of_coming_into_force_is_no_version_mark(line: str) -> None:
    """A law is filed with or without its effective-date line (2015年9月1日 施行): the same
    version (the development set's natural duplicate dev01073 / dev03630). Its adoption and
    revision dates still tell versions apart."""
    plain = "\n".join(LAW + ARTICLES)
    filed = "\n".join([*LAW, line, *ARTICLES])
    assert version_marks(filed).head == version_marks(plain).head
    assert not different_versions(version_marks(filed), version_marks(plain))
    amended = "\n".join([*LAW, "2015年9月1日 第十二届全国人民代表大会常务委员会第十四次会议修订", *ARTICLES])
    assert different_versions(version_marks(amended), version_marks(plain))
    # both give a date of coming into force, and they differ: a version whose revision line moved
    # out of the head is still told from the older one by it
    later = "\n".join([*LAW, "2024年1月1日施行", *ARTICLES])
    assert different_versions(version_marks(later), version_marks(filed))
    assert not different_versions(version_marks(filed), version_marks(filed.replace(line, "自2015年9月1日起实施")))
    # a date the other head gives as another kind (a revision line's, where this one has it come
    # into force) stands in that text
    assert not VersionMarks(head=(5,), body=(), effective=()).lacks({5})
    assert not VersionMarks(head=(), body=(), effective=(5,)).lacks({5}) and VersionMarks((1,), ()).lacks({5})
    # a record of meta v1 kept every date of its head: compared as it was written
    v1 = VersionMarks(version_marks(filed).legacy, None)
    assert not different_versions(version_marks(filed), v1) and different_versions(version_marks(plain), v1)


def test_version_marks_survive_a_records_meta() -> None:
    """The record's meta (v2) keeps the head's marks and the body's dates; a v1 meta reads with
    the body's dates not known."""
    marks = version_marks("\n".join([*LAW, "2012年4月1日 施行", *ARTICLES, "第十一条 本条例自2012年5月1日起执行。"]))
    assert marks.head and marks.body and marks.effective
    assert decode_meta(encode_meta("orig-7", marks)) == ("orig-7", marks)
    v1 = bytes([1]) + (6).to_bytes(2, "big") + b"orig-7" + len(marks.head).to_bytes(2, "big") + b"".join(
        m.to_bytes(4, "big") for m in marks.head)
    assert decode_meta(v1) == ("orig-7", VersionMarks(marks.head, None))
    # a text without marks is written as v1 (four bytes shorter) and reads back as no marks
    none = encode_meta("orig-7", NO_MARKS)
    assert none[0] == 1 and len(none) == len(v1) - 4 * len(marks.head)
    _, back = decode_meta(none)
    assert not back.head and not different_versions(back, marks) and not different_versions(marks, back)
    many = "\n".join(LAW + ARTICLES + [f"第{i}条 自{1950 + i}年1月1日起施行。" for i in range(40)])
    assert len(version_marks(many).body or ()) == MAX_BODY_DATES


def test_a_year_split_by_a_pages_markup_is_the_same_date() -> None:
    """Crawler noise put markup inside a year (20<br/>13年12月7日, normalised to 20 13年): the
    revision date is the same, so the copy is the same version; a year of other digits is not."""
    text = "\n".join(LAW + ARTICLES)
    split = normalize_text(text.replace("2012年2月23日", "20<br/>12年2月23日"))
    assert "20 12年2月23日" in split
    assert version_marks(split) == version_marks(normalize_text(text))
    assert not different_versions(version_marks(split), version_marks(text))
    other = normalize_text(text.replace("2012年2月23日", "20<br/>13年2月23日"))
    assert different_versions(version_marks(other), version_marks(normalize_text(text)))
    assert version_marks("某条例\n1 23年4月5日通过\n第一条 总则").head == ()  # three digits: no year to join


@pytest.mark.parametrize("split", ["2012年2月<br/>23日", "2012年<br/>2月23日", "2012年2&nbsp;月23日"])
def test_a_month_or_day_split_by_a_pages_markup_is_the_same_date(split: str) -> None:
    """Markup inside a date's month or day (11月<br/>7日, normalised to 11月 7日) leaves the date."""
    text = "\n".join(LAW + ARTICLES)
    copy = normalize_text(text.replace("2012年2月23日", split))
    assert version_marks(copy) == version_marks(normalize_text(text))
    other = normalize_text(text.replace("2012年2月23日", split.replace("23", "24")))
    assert different_versions(version_marks(other), version_marks(normalize_text(text)))


def test_a_pages_list_of_related_documents_is_no_part_of_the_version() -> None:
    """A reprint's footer lists other regulations with their dates (相关阅读：...): not this one's,
    though in a short regulation it stands within the head's characters."""
    text = "\n".join(LAW + ARTICLES[:2])
    footer = "\n【我要纠错】 责任编辑：王芳\n相关阅读：\n政府参事工作条例\n2009年10月28日\n某某条例实施细则"
    copy = normalize_text(text + footer)
    assert not different_versions(version_marks(copy), version_marks(normalize_text(text)))
    assert not different_versions(version_marks(normalize_text(text)), version_marks(copy))
    # the English heading in any case, as the pattern reads it, whether or not the text was lower-cased
    for heading in ("Related stories:", "RELATED Articles:", "ReLated stories:"):
        raw = text + "\n" + heading + "\n政府参事工作条例\n2009年10月28日"
        assert version_marks(raw) == version_marks(text), heading


def test_text_without_articles_has_no_marks() -> None:
    """News and prose carry dates too, but no articles: they are never vetoed as versions."""
    assert version_marks("新华社北京一九九五年一月一日电 今天举行了会议，会议决定……") == NO_MARKS
    assert not different_versions(NO_MARKS, version_marks(HEAD.format(adopted="1994年12月6日", amended="") + BODY))


def test_the_development_sets_versions_and_reprints(datasets_dir: Path) -> None:
    """Most amended-version pairs carry different marks (49 of 52); no near-duplicate pair does
    (1 of 1,369 did before dates of coming into force were left out: a law filed twice, once with
    its effective-date line)."""
    with open(datasets_dir / "docs.jsonl", encoding="utf-8") as fh:
        text = {d["id"]: normalize_text(d["text"]) for d in map(json.loads, fh)}
    with open(datasets_dir / "pairs.jsonl", encoding="utf-8") as fh:
        pairs = [json.loads(line) for line in fh]

    def apart(p: dict[str, str]) -> bool:
        return different_versions(version_marks(text[p["a"]]), version_marks(text[p["b"]]))

    amended = [p for p in pairs if p["kind"] == "amended_version"]
    positives = [p for p in pairs if p["label"] == 1]
    assert sum(map(apart, amended)) >= 0.9 * len(amended)
    assert sum(map(apart, positives)) == 0


DATE_PIECES = ["年", "月", "日", "2009", "1999", "12", "3", "0", "１２", "٢٠٠٩", "一九九五", "二〇〇九", "〇",
               "十", "二十七", "三十一", "八", "第一条", "通过", " ", "\n", "(", "修正", "x"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(DATE_PIECES), max_size=40))
def test_dates_found_from_each_year_mark_are_the_patterns_matches(pieces: list[str]) -> None:
    """dates_in finds from each 年 what the two date patterns find when tried at every position."""
    head = "".join(pieces)
    assert dates_in(head) == (_DATE.findall(head), _ZH_DATE.findall(head))


def test_dates_found_in_the_development_set_heads_are_the_patterns_matches(datasets_dir: Path) -> None:
    with open(datasets_dir / "docs.jsonl", encoding="utf-8") as fh:
        heads = [t[:HEAD_CHARS] for t in normalize_batch([json.loads(line)["text"] for line in fh]).texts]
    assert sum(bool(dates_in(h)[0] or dates_in(h)[1]) for h in heads) > 500  # the check has dates to compare
    assert all(dates_in(h) == (_DATE.findall(h), _ZH_DATE.findall(h)) for h in heads)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789０１２年月日 \t\n\u3000a。", max_size=40))
def test_split_years_are_joined_as_the_pattern_everywhere_joins_them(text: str) -> None:
    """The gate (digits before a 年, whitespace before them) never skips a text the pattern would change."""
    from neardup.rules.versions import _SPLIT_YEAR, _join_year, join_split_years

    assert join_split_years(text) == _SPLIT_YEAR.sub(_join_year, text)
