"""Look-alikes that are distinct documents: the same notice about another name, figures that
traded places; and the reprints that must still merge (a header of its own, an abbreviation).

The four hand-written examples of the issue run through the library, as a user would; the name
kernel is checked against a slow reference on random tokens.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from neardup import Decision, Deduplicator, Status
from neardup.document import Document
from neardup.kernels import entities as kent
from neardup.kernels import profile as kprof
from neardup.kernels.hashing import fmix64
from neardup.rules.differences import (
    FIGURE_MARK,
    _furniture_name,
    _legal_form_end,
    _written_alike,
    credit_span,
    fill_hash,
    furniture_spans,
    profiler,
    twin_fill,
    unit_key,
)
from neardup.sketch import fingerprint
from neardup.sketch.fingerprint import FingerprintConfig, Fingerprinter
from neardup.text.entities import (
    BRAND_CHARS,
    CUT_NAMES_SINCE,
    EN_NOT_NAMES,
    EN_PLACE_PARTICIPLES,
    EN_SENTENCE_WORDS,
    EN_SUBJECT_ADVERBS,
    EN_SUBJECT_VERBS,
    RARE_WORD,
    SENTENCE_START_NAMES_SINCE,
    byline_markers,
    division_names,
    division_short,
    en_names,
    form_tokens,
    is_dictionary_name,
    is_rare_person,
    without_furniture_lines,
    zh_body_tables,
    zh_content_words_with_stops,
    zh_given_tails,
    zh_idioms,
    zh_lead_surnames,
    zh_name_verbs,
    zh_person_words,
    zh_place_suffixes,
    zh_run_surnames,
    zh_short_place_tables,
    zh_suffix_tables,
    zh_title_tables,
)
from neardup.text.lexicon import hash_words, in_sorted
from neardup.text.normalize import tables
from neardup.text.segment import segmenter

NOTICE = ("根据《中华人民共和国公司法》和有关规定，经审查，{c}提交的设立登记申请材料齐全，符合法定形式，"
          "本局决定准予登记。请{c}自收到本通知之日起三十日内领取营业执照，逾期未领取的，视为放弃。"
          "特此通知。市场监督管理局二〇二四年三月五日")
PETITIONS = ("某区2023年共受理群众信访事项{a}件，办结{b}件，办结率较上年有所提高，群众满意度持续上升，"
             "相关工作得到上级部门肯定，区委区政府对此给予充分肯定并要求继续做好相关工作。")
MATCH = ("昨晚进行的亚洲杯小组赛最后一轮比赛中，中国队以{score}对手，主教练在赛后新闻发布会上表示，"
         "球队在上半场的表现并不理想，下半场通过调整阵型逐渐掌握了场上主动，球员们的拼搏精神值得肯定。")
RATES = ("The unemployment rate fell from {a} in May to {b} in June, the statistics office said on Friday, "
         "citing stronger hiring in services and construction, while wages rose at the fastest pace in a year "
         "and more people returned to the labour market after the winter.")


def decide_pair(first: str, second: str) -> tuple[Status, str | None, str]:
    """The second text's status, original and critical kind after the first was decided."""
    with Deduplicator() as dedup:
        dedup.decide({"id": "first", "text": first})
        d = dedup.decide({"id": "second", "text": second})
    kind = d.evidence.critical.kind if d.evidence.critical else ""
    return d.status, d.duplicate_of, kind


def test_same_notice_about_another_company_is_unique() -> None:
    status, _, kind = decide_pair(NOTICE.format(c="深圳市华为技术有限公司"), NOTICE.format(c="深圳市中兴通讯有限公司"))
    assert status is Status.UNIQUE and kind == "entity"


def test_a_notice_about_a_company_whose_brand_the_dictionary_cuts_into_characters_is_another() -> None:
    # 商软冠联 and 网新恒天 are no words of the dictionary: it cuts them into characters, which
    # were read as no name, so the body that named another institution in their place merged
    news = ("国际在线消息：{x}18日发布的新一期《中国经济季报》预测，今年中国经济增长率为7.2%，"
            "通胀压力有所缓解，消费和投资仍将保持较快增长，出口增速可能放缓。")
    status, _, kind = decide_pair(news.format(x="世界银行"), news.format(x="商软冠联科技有限公司"))
    assert status is Status.UNIQUE and kind == "entity"
    status, _, kind = decide_pair(NOTICE.format(c="网新恒天科技有限公司"), NOTICE.format(c="浦华众城科技有限公司"))
    assert status is Status.UNIQUE and kind == "entity"
    status, original, _ = decide_pair(news.format(x="商软冠联科技有限公司"),
                                      "来源：新华网\n" + news.format(x="商软冠联科技有限公司"))
    assert status is Status.DUPLICATE and original == "first"  # its reprint still merges


def decide_after_the_reading_before(monkeypatch: pytest.MonkeyPatch, first: str, second: str) -> Decision:
    """The second text's decision, the first decided as names were read before v14's cut names
    (a record written before): what v14 reads there pairs with nothing in the record."""
    with Deduplicator() as dedup:
        monkeypatch.setattr(fingerprint, "CUT_NAMES_SINCE", CUT_NAMES_SINCE + 1)  # the reading before
        dedup.decide({"id": "first", "text": first})
        monkeypatch.setattr(fingerprint, "CUT_NAMES_SINCE", CUT_NAMES_SINCE)
        return dedup.decide({"id": "second", "text": second})


def test_a_reprint_merges_with_a_record_that_read_its_brand_as_no_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # a record written before brands were read has no entries for the company: the reprint's
    # entries for it pair with nothing there, which is no difference
    news = "商软冠联科技有限公司18日发布公告称，公司今年上半年营业收入同比增长12%，净利润同比增长8%，研发投入继续加大。"
    d = decide_after_the_reading_before(monkeypatch, news, "来源：新华网\n" + news + "\n责任编辑：王五")
    assert d.status is Status.DUPLICATE and d.duplicate_of == "first"


REVIEW = ("索尼卡片TX1促销2199元\u3000\u3000作者：{a}\u3000\u3000索尼TX1采用了1020万像素的CMOS传感器，"
          "支持4倍光学变焦，3.5英寸触摸屏操作方便，机身厚度仅16.5毫米。目前该机在北京市场的最新报价为2199元，"
          "感兴趣的朋友可以关注一下，该机的性价比还是相当不错的。")


def test_the_same_review_under_another_author_is_another_document() -> None:
    # 作者 alone under a title names the story's author, whose reprints keep it (a header line
    # that names the page's source first, 来源：新浪网 作者：赵磊, is still the page's)
    status, _, kind = decide_pair(REVIEW.format(a="杨子毅"), REVIEW.format(a="秦凯"))
    assert status is Status.UNIQUE and kind == "entity"
    header = "来源：新浪网　作者：赵磊\n"
    status, original, _ = decide_pair(REVIEW.format(a="杨子毅"), header + REVIEW.format(a="杨子毅"))
    assert status is Status.DUPLICATE and original == "first"


def test_a_reprint_merges_with_a_record_that_read_its_author_as_the_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    # a record written when every 作者 was a page's marker has no entries for the author
    review = REVIEW.format(a="杨子毅")
    d = decide_after_the_reading_before(monkeypatch, review, review + "\n责任编辑：王五")
    assert d.status is Status.DUPLICATE and d.duplicate_of == "first"


ECONOMIST = ("今年以来，本市商品住宅成交量同比下降了两成，成交均价基本持平。房地产高级经济师{p}说，"
           "土地供应节奏放缓和信贷政策收紧是主要原因，预计下半年市场将逐步回稳。此外，记者了解到，"
           "国土资源部门正在研究新的供地计划。")


def test_the_same_quote_from_another_person_named_before_said_is_another_document() -> None:
    # 任/婷/宇/说: three characters and the verb after them were a run of four, a phrase, so the
    # economist was read as no one, and the quote merged with 章林晓's (read as 林晓)
    status, _, kind = decide_pair(ECONOMIST.format(p="章林晓"), ECONOMIST.format(p="任婷宇"))
    assert status is Status.UNIQUE and kind == "entity"


def test_a_reprint_merges_with_a_record_that_read_no_name_before_said(monkeypatch: pytest.MonkeyPatch) -> None:
    quote = ECONOMIST.format(p="任婷宇")
    d = decide_after_the_reading_before(monkeypatch, quote, "来源：新华网\n" + quote + "\n责任编辑：王五")
    assert d.status is Status.DUPLICATE and d.duplicate_of == "first"


def test_the_same_rules_under_the_laws_of_a_county_of_one_character_are_other_rules() -> None:
    # 宇/县: one character and a suffix, which only two characters or more made a place
    rules = ("为了规范人民法院的审判工作，根据《{x}人民法院组织法》《{x}民事诉讼法》等法律的规定，"
             "结合审判实践，制定本规定。第一条 人民法院审理民事案件，应当以事实为根据，以法律为准绳。"
             "第二条 当事人有权委托代理人参加诉讼。")
    status, _, kind = decide_pair(rules.format(x="中华人民共和国"), rules.format(x="宇县"))
    assert status is Status.UNIQUE and kind == "entity"


def test_swapped_counts_are_unique() -> None:
    status, _, kind = decide_pair(PETITIONS.format(a=1200, b=980), PETITIONS.format(a=980, b=1200))
    assert status is Status.UNIQUE and kind == "figure"


DIVING = ("在男子{a}米板比赛中，周义霖以{b}分的总分夺得冠军，他的队友、前奥运会冠军孙淑伟以410.04分名列第二。"
          "在女子10米台比赛中，两名参加了世界游泳锦标赛这个项目的选手表现出色，分获冠亚军。本次比赛共有来自全国"
          "二十多个省市的一百余名运动员参加，赛事为期五天，是今年国内水平最高的跳水比赛之一。教练组表示，年轻选手"
          "在这次比赛中积累了经验，技术动作更加规范，心理素质也有明显提高，为明年的全国运动会打下了良好的基础。"
          "赛后，组委会为获奖运动员颁发了奖牌和证书，并对承办单位的组织工作给予了充分肯定。")


def test_swapped_figures_in_an_opening_line_with_a_decimal_are_unique() -> None:
    """A short first sentence is a reprint's own header where the bodies match (its figures are
    not compared), and a decimal's point once ended that sentence: 3 and 455.64 traded places
    in a story's opening words and were read as header figures."""
    status, _, kind = decide_pair(DIVING.format(a=3, b="455.64"), DIVING.format(a="455.64", b=3))
    assert status is Status.UNIQUE and kind == "figure"
    story = DIVING.format(a=3, b="455.64")
    status, original, _ = decide_pair(story, "转载第2次 编号00012。" + story)  # a reprint's own header
    assert status is Status.DUPLICATE and original == "first"


def test_swapped_counts_written_with_a_thousands_separator_are_unique() -> None:
    status, _, kind = decide_pair(PETITIONS.format(a="1,200", b=980), PETITIONS.format(a=980, b="1,200"))
    assert status is Status.UNIQUE and kind == "figure"


HUB = ("石家庄是一个重要的交通枢纽，104、{a}国道交汇于此，全省{b}个地市进出省会的通道也在此，"
       "加快这一区域的建设对全省经济发展意义重大，有关部门已经开始编制规划。")


def test_a_figure_of_a_list_swapped_with_another_is_unique() -> None:
    """The enumeration comma is no thousands separator: 104、320 is two figures, not 104,320."""
    status, _, kind = decide_pair(HUB.format(a=320, b=8), HUB.format(a=8, b=320))
    assert status is Status.UNIQUE and kind == "figure"


@pytest.mark.parametrize("a,b", [("1,200", "980"), ("12,500", "1,250"), ("1,200,000", "980,000")])
def test_swapped_english_amounts_with_thousands_separators_are_unique(a: str, b: str) -> None:
    text = ("The council said it had approved {a} new homes this year and rejected {b} applications, "
            "the planning committee reported on Tuesday after a review of the housing programme.")
    status, _, kind = decide_pair(text.format(a=a, b=b), text.format(a=b, b=a))
    assert status is Status.UNIQUE and kind == "figure"


def test_a_figure_written_with_or_without_its_separator_is_the_same_figure() -> None:
    """A reprint that writes 1200 where the original wrote 1,200 (or drops a separator's comma in
    a list: 1,2345 stays two figures) is a reprint."""
    status, original, _ = decide_pair(PETITIONS.format(a="1,200", b="980"), PETITIONS.format(a="1200", b="980"))
    assert status is Status.DUPLICATE and original == "first"


@pytest.mark.parametrize(("first", "second"), [
    # a date or a count written in Chinese numerals in one copy and in digits in the other
    (("2023", "1200", "980"), ("二〇二三", "1200", "980")),
    (("2023", "1200", "980"), ("2023", "一千二百", "九百八十")),
    (("2023", "1200", "980"), ("２０２３", "１２００", "９８０"))])
def test_figures_written_in_chinese_numerals_or_full_width_are_the_same(first: tuple[str, ...],
                                                                        second: tuple[str, ...]) -> None:
    text = ("某区{}年共受理群众信访事项{}件，办结{}件，办结率较上年有所提高，群众满意度持续上升，"
            "相关工作得到上级部门肯定。")
    status, original, _ = decide_pair(text.format(*first), text.format(*second))
    assert status is Status.DUPLICATE and original == "first"


def test_figures_that_traded_places_in_chinese_numerals_are_unique() -> None:
    status, _, kind = decide_pair(PETITIONS.format(a="1200", b="980"), PETITIONS.format(a="九百八十", b="一千二百"))
    assert status is Status.UNIQUE and kind == "figure"


def test_a_figure_of_a_hundred_thousand_digits_is_shown_cut_in_the_evidence() -> None:
    """An attacker's figure (1 then 40,000 thousands groups) is one anchor; the evidence names it
    in at most 40 characters, not 120,000."""
    text = "共计1" + ",000" * 40000 + "元，经审查，材料齐全，符合法定形式，本局决定准予登记，特此通知。"
    with Deduplicator() as dedup:
        dedup.decide({"id": "a", "text": text})
        d = dedup.decide({"id": "b", "text": text.replace("共计1", "共计2")})
    assert d.status is Status.UNIQUE and d.evidence.critical is not None
    assert d.evidence.critical.term.startswith("figure: 2000") and len(d.evidence.critical.term) < 100


def test_the_evidence_names_the_difference_in_words() -> None:
    with Deduplicator() as dedup:
        dedup.decide({"id": "a", "text": PETITIONS.format(a=1200, b=980)})
        swapped = dedup.decide({"id": "b", "text": PETITIONS.format(a=980, b=1200)})
        dedup.decide({"id": "c", "text": NOTICE.format(c="深圳市华为技术有限公司")})
        renamed = dedup.decide({"id": "d", "text": NOTICE.format(c="深圳市中兴通讯有限公司")})
    assert swapped.evidence.critical is not None and renamed.evidence.critical is not None
    assert swapped.evidence.critical.term in ("figures swapped: 980件 <-> 1200件", "figures swapped: 1200件 <-> 980件")
    assert renamed.evidence.critical.term == "entity: 中兴通讯 (the other text names another in its place)"


def test_a_polarity_difference_names_its_words() -> None:
    """The evidence quotes the polarity word with its negators as the text writes them, and says
    what the other text has in its place."""
    body = ("经审查，市场监督管理局决定{w}某某公司的设立登记申请，请申请人自收到本通知之日起三十日内"
            "到窗口办理相关手续，逾期视为放弃，特此通知。")
    with Deduplicator() as dedup:
        dedup.decide({"id": "granted", "text": body.format(w="给予批准")})
        refused = dedup.decide({"id": "refused", "text": body.format(w="不予批准")})
    critical = refused.evidence.critical
    assert critical is not None and critical.kind == "polarity"
    assert critical.term == "polarity: 不予批准 (approval+, negated) vs the other text: +, not negated"


def test_the_passage_is_quoted_from_the_text_as_written() -> None:
    """The passage comes from the original text (full-width punctuation, traditional characters,
    markup as sent), with its offsets there, not from the normalised text the check reads."""
    body = ("經審查，市場監督管理局決定<b>{w}</b>某某公司的設立登記申請，請申請人自收到本通知之日起三十日內"
            "到窗口辦理相關手續，逾期視為放棄，特此通知。")
    refused_text = body.format(w="不予批准")
    with Deduplicator() as dedup:
        dedup.decide({"id": "granted", "text": body.format(w="給予批准")})
        refused = dedup.decide({"id": "refused", "text": refused_text})
    critical = refused.evidence.critical
    assert critical is not None and critical.at is not None
    start, end = critical.at
    assert critical.passage == refused_text[start:end] and "<b>不予批准</b>" in critical.passage
    assert refused.evidence.to_dict()["critical"]["at"] == [start, end]


def test_reversed_score_is_unique() -> None:
    status, _, _ = decide_pair(MATCH.format(score="3比1战胜"), MATCH.format(score="1比3负于"))
    assert status is Status.UNIQUE


def test_swapped_english_rates_are_unique() -> None:
    status, _, kind = decide_pair(RATES.format(a="5.2%", b="4.1%"), RATES.format(a="4.1%", b="5.2%"))
    assert status is Status.UNIQUE and kind in ("figure", "entity")


def test_swapped_amounts_with_units_are_unique() -> None:
    """A decimal keeps its unit as a whole number does (57.2m, 110m): the two amounts of a
    conversion that trade places are a swap, not two words that moved."""
    body = ("Critics in the US were less complimentary about the {a} ({b}) project, with the Los Angeles "
            "Times calling it a disappointment for the studio and for its many investors this year.")
    status, _, kind = decide_pair(body.format(a="$110m", b="£57.2m"), body.format(a="$57.2m", b="£110m"))
    assert status is Status.UNIQUE and kind == "figure"
    status, _, _ = decide_pair(body.format(a="$110m", b="£57.2m"), body.format(a="$110m", b="£57.2m") + " More.")
    assert status is Status.DUPLICATE


COUNTY = ("该县共有耕地面积{a}，其中水田8万亩，旱地4万亩。全县总人口{b}，其中农业人口28万人。"
          "今年粮食总产量达到{c}，比上年增加0.3万吨，农民人均纯收入达到{d}，全县经济运行总体平稳。")
COUNTY_FIGURES = {"a": "12万亩", "b": "35万人", "c": "6.5万吨", "d": "4200元"}


@pytest.mark.parametrize(("first", "second"), [("a", "b"), ("c", "d"), ("a", "d")])
def test_quantities_swapped_with_their_units_are_unique(first: str, second: str) -> None:
    """Two quantities that trade places with their units (耕地面积12万亩 ... 总人口35万人 /
    耕地面积35万人 ... 总人口12万亩): a unit is the figure's (profile v17), not its place's context, so
    each place holds another figure and the swap is seen."""
    swapped = dict(COUNTY_FIGURES, **{first: COUNTY_FIGURES[second], second: COUNTY_FIGURES[first]})
    status, _, kind = decide_pair(COUNTY.format(**COUNTY_FIGURES), COUNTY.format(**swapped))
    assert status is Status.UNIQUE and kind == "figure"


def test_a_quantitys_unit_is_out_of_the_frame_only_right_after_its_figure() -> None:
    """The longest unit written right after a figure is the figure's: the frame goes on after it;
    after a space or a punctuation mark it is words, and a word after it is never taken for a
    unit's start (条 of 第十六条公开, not 条公 as if of 公里), so a negator put there is seen."""
    zh = profiler()._zh
    assert zh("耕地面积12万亩，其中水田")[0] == "耕地面积" + FIGURE_MARK + "其中水田"
    assert zh("相差5个百分点以上")[0] == "相差" + FIGURE_MARK + "以上"
    assert zh("发电120千瓦时以上")[0] == "发电" + FIGURE_MARK + "以上"
    assert zh("耕地面积12 万亩")[0] == "耕地面积" + FIGURE_MARK + "万亩"
    assert zh("耕地面积12万亩", version=16)[0] == "耕地面积" + FIGURE_MARK + "万亩"
    assert zh("第十六条公开审判")[0] == "第" + FIGURE_MARK + "公开审判"
    assert zh("人口12人次多个")[0] == "人口" + FIGURE_MARK + "多个"


SUBSCRIBERS = ("Mobile subscriptions across the region will reach {a} by the end of the decade, an increase "
               "of {b} on last year, the consultancy said in a report published on Tuesday. Operators expect most "
               "of the growth to come from prepaid customers in rural areas, it added.")


@pytest.mark.parametrize(("a", "b"), [("159 million", "104%"), ("80 per cent", "2.5 billion"),
                                      ("60 people", "$80m")])
def test_english_quantities_swapped_with_their_unit_words_are_unique(a: str, b: str) -> None:
    """An English quantity's unit word (million, per cent, people) written after its number is the
    figure's in profile v17, as a Chinese unit is: swapped along with it, it hid the swap."""
    status, _, kind = decide_pair(SUBSCRIBERS.format(a=a, b=b), SUBSCRIBERS.format(a=b, b=a))
    assert status is Status.UNIQUE and kind == "figure"
    reprint = "Technology news\n" + SUBSCRIBERS.format(a=a, b=b)
    assert decide_pair(SUBSCRIBERS.format(a=a, b=b), reprint)[0] is Status.DUPLICATE


RESULTS = ("Hang Lung said its results were hurt by weaker rentals. Profits were down {a} by revenue to {b}. If "
           "the property market improves, the company expects growth next year, its chairman told reporters.")


def test_a_currencys_letters_before_its_dollar_sign_are_the_figures() -> None:
    """HK$6.31bn: the letters before $ read as a word of the frame, which moved with the figure
    when two quantities traded places (3.7% / HK$6.31bn), so the swap left no shared context.
    v18 reads them as the figure's, out of the frame and in its fill, as a unit after it."""
    en = profiler()._en
    assert en("revenue to hk$6.31bn if")[0] == ["revenue", "to", "#", "if"]
    assert en("revenue to hk$6.31bn if", version=17)[0] == ["revenue", "to", "hk", "#", "if"]
    assert "#hk6.31bn" in profiler().profile("revenue to hk$6.31bn if", "en").fills
    assert en("told us $5 today")[0] == ["told", "us", "#", "today"]  # a word, then a space: no currency
    status, _, kind = decide_pair(RESULTS.format(a="3.7%", b="HK$6.31bn"), RESULTS.format(a="HK$6.31bn", b="3.7%"))
    assert status is Status.UNIQUE and kind == "figure"
    text = RESULTS.format(a="3.7%", b="HK$6.31bn")
    assert decide_pair(text, "Business news\n" + text)[0] is Status.DUPLICATE


def test_an_english_unit_word_is_out_of_the_frame_only_right_after_a_figure() -> None:
    """Up to two unit words right after a figure (84 million barrels) leave the frame; after a
    sentence's end, or before the figure, they are words."""
    en = profiler()._en
    assert en("revenue of 4.2 billion for the quarter")[0] == ["revenue", "of", "#", "for", "the", "quarter"]
    assert en("output of 84 million barrels a day")[0] == ["output", "of", "#", "a", "day"]
    assert en("the total 12. million people")[0] == ["the", "total", "#", "million", "people"]
    assert en("million people in 12")[0] == ["million", "people", "in", "#"]
    assert en("revenue of 4.2 billion", version=16)[0] == ["revenue", "of", "#", "billion"]


def test_a_reprint_of_quantities_with_units_still_merges() -> None:
    text = COUNTY.format(**COUNTY_FIGURES)
    for copy in ("来源：县政府网\n" + text, text.replace("12万亩", "１２万亩"), text + "（责任编辑：李明）"):
        assert decide_pair(text, copy)[0] is Status.DUPLICATE


FINE = ("根据《中华人民共和国食品安全法》第一百二十二条规定，对当事人作出如下行政处罚：没收违法所得，并处罚款{a}。"
           "当事人应当自收到本决定书之日起十五日内缴纳罚款，逾期不缴纳的，每日按罚款数额的百分之三加处罚款。")


@pytest.mark.parametrize(("text", "old", "new"), [
    (FINE.format(a="5万元"), "5万元", "5千元"), (FINE.format(a="5万元"), "5万元", "5倍"),
    (FINE.format(a="5万元"), "5万元", "5元"), (COUNTY.format(**COUNTY_FIGURES), "12万亩", "12亿亩"),
    (COUNTY.format(**COUNTY_FIGURES), "35万人", "35人"), (COUNTY.format(**COUNTY_FIGURES), "4200元", "4200万元"),
    (SUBSCRIBERS.format(a="159 million", b="80 per cent"), "159 million", "159 billion"),
    (SUBSCRIBERS.format(a="159 million", b="80 per cent"), "80 per cent", "80 points"),
])
def test_a_quantity_whose_unit_changed_is_unique(text: str, old: str, new: str) -> None:
    """A fine of 5万元 is not one of 5千元, nor 159 million subscribers 159 billion: the same figure
    with another unit or magnitude is another figure. The unit leaves the frame (v17) and stands
    in the figure's fill (v18); before, it was nowhere, and the change merged."""
    changed = text.replace(old, new)
    assert changed != text
    status, _, kind = decide_pair(text, changed)
    assert status is Status.UNIQUE and kind == "figure"


def test_a_units_fill_keeps_its_word_characters_but_about() -> None:
    """A figure's fill is its figure then its unit's word characters, without 余 and 多 (v18): 3万余人
    and 3万多人 are one quantity, and so are 80 per cent and 80 percent; an English unit word joins
    the fill only written right after the figure (20个按键...pc is no 20 pc)."""
    assert unit_key("万余人") == unit_key("万多人") == "万人"
    assert unit_key(" per cent") == unit_key(" percent") == "percent"
    fills = profiler().profile("并处罚款5万元，涉及3万余人。", "zh").fills
    assert "#5万元" in fills and "#3万人" in fills
    assert "#5" in profiler().profile("并处罚款5万元，涉及3万余人。", "zh", version=17).fills
    assert "#4.2billion" in profiler().profile("revenue of 4.2 billion for the quarter", "en").fills
    assert "#20" in profiler().profile("20个按键的操作键位平台上体验胜于pc", "en").fills


def test_a_magnitude_in_numerals_is_a_units() -> None:
    """v18: a run of numerals right after a figure is its magnitude (1.5万亿, 5千万元), read into
    its unit, where v17 read it as a figure of its own (万亿, of value 0): wherever two such
    quantities traded places, one text's frame had a figure the other's lacked."""
    zh = profiler()._zh
    assert zh("产值是1.5万亿，占GDP的5%")[0] == "产值是" + FIGURE_MARK + "占GDP的" + FIGURE_MARK
    assert zh("产值是1.5万亿", version=17)[0] == "产值是" + FIGURE_MARK * 2
    assert zh("共5千万元和12万两千人")[0] == "共" + FIGURE_MARK + "和" + FIGURE_MARK * 2
    assert [fill for _, fill, _ in zh("共5千万元和12万两千人")[1]] == ["#5千万元", "#12万", "#2000人"]
    text = "家装行业近年来发展迅速。全国装饰业产值是{a}，占GDP的{b}。家装全国产值约占其中的一半，市场前景广阔。"
    status, _, kind = decide_pair(text.format(a="1.5万亿", b="5%"), text.format(a="5%", b="1.5万亿"))
    assert status is Status.UNIQUE and kind == "figure"


@pytest.mark.parametrize(("old", "new"), [("百分之三", "百分之五"), ("三分之二", "二分之一")])
def test_a_fraction_written_in_numerals_is_a_figure(old: str, new: str) -> None:
    """One numeral is no figure (一 is in too many words), but one beside 分之 is (v18): 百分之三
    and 百分之五 are two rates, 三分之二 and 二分之一 two thresholds. v17 read neither."""
    text = FINE.format(a="5万元").replace("百分之三", "百分之三，须经三分之二以上委员同意")
    assert old in text
    status, _, kind = decide_pair(text, text.replace(old, new))
    assert status is Status.UNIQUE and kind == "figure"
    assert [f for _, f, _ in profiler()._zh("按百分之三加处", version=17)[1]] == []


EGM_NOTICE = ("深圳市华远科技股份有限公司关于召开2024年第一次临时股东大会的通知。本公司董事会决定于2024年3月15日"
              "在公司会议室召开2024年第一次临时股东大会，审议三项议案：关于修订公司章程的议案、关于选举独立董事的议案、"
              "关于续聘会计师事务所的议案。大会推选两名股东代表监票。出席会议的股东应持本人身份证、股东账户卡办理登记手续。"
              "联系人：张明。特此公告。")


@pytest.mark.parametrize(("old", "new"), [("第一次", "第二次"), ("三项", "五项"), ("两名", "三名")])
def test_the_same_notice_numbered_or_counted_otherwise_is_another(old: str, new: str) -> None:
    """One numeral that numbers or counts is a figure (v19): the second extraordinary meeting's
    notice is not the first's reprint, nor is one of five motions one of three. Up to v18 one
    numeral was a frame character like any other (a change of it a synonym's)."""
    status, _, kind = decide_pair(EGM_NOTICE, EGM_NOTICE.replace(old, new))
    assert status is Status.UNIQUE and kind == "figure"
    assert [f for _, f, _ in profiler()._zh("召开第一次临时股东大会，审议三项议案", version=18)[1]] == []
    assert [f for _, f, _ in profiler()._zh("召开第一次临时股东大会，审议三项议案")[1]] == ["#1次", "#3项"]


@pytest.mark.parametrize(("old", "new"), [("两名", "二名"), ("两名", "2名"), ("第一次", "第1次")])
def test_a_count_written_another_way_still_merges(old: str, new: str) -> None:
    """A count's value is its figure: 两, 二 and 2 are one number."""
    assert decide_pair(EGM_NOTICE, "来源：证券时报网\n" + EGM_NOTICE.replace(old, new))[0] is Status.DUPLICATE


def test_one_numeral_in_a_word_or_a_laws_part_is_no_figure() -> None:
    """Only one to ten, after 第 or before a unit of things: 零件 and 百人 hold no figure, and a
    law's numbered part (第三条) keeps its characters in the frame, as it did before v19."""
    frame, anchors, _ = profiler()._zh("零件百人第三条第二款")
    assert frame == "零件百人第三条第二款" and anchors == []


def test_an_amendments_items_reordered_still_merge() -> None:
    """Items that each name the article they amend (1.将第二条修改为, 2.将第三条修改为) keep their
    contexts apart by the article's number: reordered, the items' own numbers change places, and
    that is a reprint's reorder, not a changed count."""
    items = ["将第二条修改为：“股东提起诉讼的，人民法院应当依法受理。”",
             "将第三条修改为：“被开办企业应当在注册资金范围内承担民事责任。”",
             "将第五条修改为：“本规定自公布之日起施行，原规定同时废止。”"]
    head = "最高人民法院关于修改相关司法解释的决定。根据审判实践的需要，决定作如下修改：\n"
    first = head + "\n".join(f"{n}.{item}" for n, item in enumerate(items, 1))
    moved = head + "\n".join(f"{n}.{item}" for n, item in enumerate(items[::-1], 1))
    assert decide_pair(first, moved)[0] is Status.DUPLICATE


@pytest.mark.parametrize(("text", "old", "new"), [
    (COUNTY.format(**COUNTY_FIGURES) + "共有3万余人参加。", "3万余人", "3万多人"),
    (SUBSCRIBERS.format(a="159 million", b="80 per cent"), "80 per cent", "80 percent"),
])
def test_a_quantity_written_another_way_still_merges(text: str, old: str, new: str) -> None:
    assert decide_pair(text, text.replace(old, new))[0] is Status.DUPLICATE


def test_a_figure_changed_to_one_whose_byte_its_twin_holds_is_unique() -> None:
    """15 and 30: 30's figure byte is the byte 15's twin holds. Under the figure's polarity byte
    (v15-v17), 30 in the place of 15 read as a 30 moved there from the twin; a twin's polarity byte
    of its own (v18) leaves it no figure to be taken for."""
    assert fill_hash("#30") & 0xFF == twin_fill("#15")
    text = FINE.format(a="5万元").replace("十五日", "15日")
    status, _, kind = decide_pair(text, text.replace("15日", "30日"))
    assert status is Status.UNIQUE and kind == "figure"


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("1200", "1,200"),  # a thousands separator
    lambda t: t.replace("1200", "１２００"),  # full-width digits
])
def test_format_only_changes_still_merge(edit: object) -> None:
    text = PETITIONS.format(a=1200, b=980)
    status, original, _ = decide_pair(text, edit(text))  # type: ignore[operator]
    assert status is Status.DUPLICATE and original == "first"


FLOODS = ("The state's flood bill has risen to 41 million dollars, after more damage was counted on the coast. "
          "A 52-year-old farmer, who lost his herd in the storm last week, has asked for help. Nine towns have "
          "been cut off in Queensland, four in Victoria, three in the Northern Territory, two each in Western "
          "Australia and South Australia. The ACT and Tasmania remain untouched.")


@pytest.mark.parametrize("noise", ["&nbsp;", "<br/>", "\xa0"])
def test_a_name_cut_by_a_pages_noise_is_the_same_name(noise: str) -> None:
    """Terr itory (a page's space inside the word) is Territory cut short, not another place."""
    status, original, _ = decide_pair(FLOODS, FLOODS.replace("Territory", "Terr" + noise + "itory"))
    assert status is Status.DUPLICATE and original == "first"


FILM = ("The film will be directed by Gary Winick, who made the comedy Tadpole, and shooting is due to "
        "start in January. Its producers said 12 actors had been cast so far and that the budget was "
        "about 85 million dollars. Beckham will appear in one scene, a spokesman for the studio said.")


@pytest.mark.parametrize("cut", [("Gary", "Gar<br/>y"), ("Beckham", "Bec&nbsp;kham"), ("January", "Januar\xa0y")])
def test_a_short_piece_of_a_word_cut_by_a_pages_space_is_no_other_name(cut: tuple[str, str]) -> None:
    """Gar y joined with the letters after it is Gary, the other text's name; Januar y is January,
    which is no name: neither is a new name in the other's place."""
    status, original, _ = decide_pair(FILM, FILM.replace(*cut))
    assert status is Status.DUPLICATE and original == "first"


CRITICS = ("Art historians have long argued about what the last century's painting achieved. One school held "
           "that every movement answered the one before it, and that none of them could claim to be the truth about "
           "art. \"It is the right of art to exist,\" one critic wrote in 1962. Relativism was accepted as an "
           "unavoidable truth by 1970, which led to the period of contemporary art and postmodern criticism, where "
           "cultures of the world and of history are seen as changing forms. Museums followed, and their collections "
           "grew wider.")


def test_a_name_a_crawls_button_cuts_is_read_as_the_page_shows_it() -> None:
    """R[Image]elativism is Relativism on the page: English names are read from the text with its
    markup and buttons out, so the clean copy decided after the noisy one names nobody new."""
    noisy = CRITICS.replace("Relativism", "R[Image]elativism").replace("postmodern", "post&nbsp;modern")
    status, original, _ = decide_pair(noisy, CRITICS)
    assert status is Status.DUPLICATE and original == "first"


SEASON = ["Agassi reached the quarter-finals of three majors that year and won five titles in ten finals.",
          "At Wimbledon, he had an early loss in the second round to Tommy Haas.",
          "He ended the season as the world's sixth-ranked player after a strong autumn on hard courts.",
          "Overall he won two majors and the Masters Series event in Paris, where he beat Marat Safin.",
          "He began the next year by capturing his second Australian Open title in a four-set final.",
          "Few players had ever come back from so low a ranking to the top of the game within two seasons."]
TEAM = ("England named an unchanged side for the match on Saturday. The team: Robinson; Lewsey, Tindall, "
        "Greenwood, Cohen; Wilkinson, Dawson; Woodman, Thompson, Vickery, {x}, Kay, Hill, Back, Dallaglio. "
        "The coach said he had no doubts about the players and that the squad was fit and ready.")


BUDGET = ["The chancellor was forced to defend the timing of his statement on Wednesday.",
          "Details of the plans appeared in a newspaper hours before Gordon Brown made his speech.",
          "The Tories said a large chunk of the Budget appeared to have been leaked in what they described as a "
          "serious breach of confidentiality.",
          "The Lib Dems called for the Commons leader to make a statement and said chancellors had resigned over "
          "leaks.",
          "They were told it would be looked into by officials over the coming days.",
          "The Treasury said it did not comment on leaks and that the figures had been published in full."]


def test_two_copies_that_each_cut_a_sentence_opening_with_the_and_a_name_are_one_story() -> None:
    """The of "The Tories said" and "The Lib Dems called" is all the left context either name has:
    a word alone beside a name at its sentence's edge is no place, so two copies that each cut
    one of the two sentences name no one in the other's place."""
    one = " ".join(s for i, s in enumerate(BUDGET) if i != 2)
    other = " ".join(s for i, s in enumerate(BUDGET) if i != 3)
    assert decide_pair(one, other)[0] is Status.DUPLICATE
    assert decide_pair(other, one)[0] is Status.DUPLICATE


MOCK_VOTE = ["Thousands of pupils will take part in the Y Vote Mock Elections for schools this spring.",
             "Organisers hope the project will teach young people how the election process works and why it "
             "matters.",
             "\"By experiencing the election first hand, we hope that young people will develop the enthusiasm to "
             "take part in the future.\"",
             "The Hansard Society, the Electoral Commission and the Department for Education are running the "
             "programme.",
             "Pupils will stand as party candidates and take on roles such as speech writers and canvassers.",
             "Michael Raftery, project manager at the Hansard Society, said the Y Vote Mock Elections for schools "
             "mirror the excitement of a real election.",
             "The mock votes will take place in the week of the general election, with results published online."]


def test_a_copy_that_cut_a_sentence_with_a_repeated_phrase_does_not_rewrite_it_around_a_name() -> None:
    """Raftery's sentence repeats the first sentence's "Y Vote Mock Elections for schools": the other
    copy holds that phrase once, so it is no anchor the two share, and the sentence reads as cut
    from one copy (another cut from the other), not as rewritten around a new name."""
    one = " ".join(s for i, s in enumerate(MOCK_VOTE) if i != 5)
    other = " ".join(s for i, s in enumerate(MOCK_VOTE) if i != 2)
    assert decide_pair(one, other)[0] is Status.DUPLICATE
    assert decide_pair(other, one)[0] is Status.DUPLICATE


def test_two_copies_that_each_cut_a_sentence_ending_in_a_full_name_are_one_story() -> None:
    """Tommy of "to Tommy Haas." and Marat of "beat Marat Safin." both stand before their own
    surname at a sentence's end: that context is no place, so two copies that each cut one of
    the sentences name no one in the other's place; a name in a list, between other names across
    punctuation, keeps its place (another player is another team sheet)."""
    one = " ".join(s for i, s in enumerate(SEASON) if i != 1)
    other = " ".join(s for i, s in enumerate(SEASON) if i != 3)
    assert decide_pair(one, other)[0] is Status.DUPLICATE
    assert decide_pair(other, one)[0] is Status.DUPLICATE
    status, _, kind = decide_pair(TEAM.format(x="Grewcock"), TEAM.format(x="Borthwick"))
    assert status is Status.UNIQUE and kind == "entity"


def test_a_name_cut_in_one_mention_and_whole_in_another_is_the_same_name() -> None:
    """A guard: the other text's name counts whether or not this one writes it whole elsewhere."""
    text = FILM + " Beckham said he was pleased to have been asked."
    status, original, _ = decide_pair(text, text.replace("Beckham will", "Bec&nbsp;kham will"))
    assert status is Status.DUPLICATE and original == "first"


def test_another_name_that_begins_as_the_other_one_is_still_another_name() -> None:
    status, _, kind = decide_pair(FILM, FILM.replace("Gary Winick", "Gar Winick"))
    assert status is Status.UNIQUE and kind == "entity"


def test_abbreviated_place_still_merges() -> None:
    text = NOTICE.format(c="北京市华为技术有限公司")
    status, original, _ = decide_pair(text, text.replace("北京市华为", "北京华为"))
    assert status is Status.DUPLICATE and original == "first"


def test_reprint_rounds_with_their_own_header_numbers_merge() -> None:
    body = NOTICE.format(c="深圳市华为技术有限公司")
    status, original, _ = decide_pair(f"转载第2次 编号00012。{body}", f"转载第3次 编号00012。{body}")
    assert status is Status.DUPLICATE and original == "first"


def test_furniture_is_a_short_first_sentence_only() -> None:
    header = "转载第2次 编号00012。"
    assert furniture_spans(header + "正文很长很长的内容，" * 5 + "结束。") == [(0, len(header))]
    long_first = "这是一个很长的第一句话，超过了三十个字符的长度限制，所以它不是页眉，也不是页脚。"
    assert furniture_spans(long_first + "正文（第2批）") == []


def test_a_notice_of_another_batch_stays_unique() -> None:
    body = NOTICE.format(c="深圳市华为技术有限公司")
    status, _, kind = decide_pair(body + "（第1批）", body + "（第2批）")
    assert status is Status.UNIQUE and kind == "figure"


# ------------------------------------------------------------------------------ the name kernel

def ref_entries(hashes: list[int], flags: list[bool], breaks: list[bool], k: int, seed: int,
                fill_byte: int, letters: list[int], present_fill: int, last: list[int], cont: list[bool],
                letters2: list[int] | None = None, letters_fill: int = 0, skip: list[bool] | None = None) -> list[int]:
    """Two entries a name (its first token; ``cont`` the tokens that continue it up to ``last``):
    the context of up to k tokens before its first token and after its last, within its
    sentence, besides the ``skip`` ones, which it leaves out (none for a side without a token it
    reads); and one presence entry a distinct name: its fill byte on top of its 24-bit letter
    set; and, with ``letters2``, one more of its second letter set, filled ``letters_fill``."""
    skip = skip or [False] * len(hashes)
    mask = (1 << 64) - 1
    presence = {(((h & 0xFF) << 24) | (bits & 0xFFFFFF)) << 16 | present_fill
                for h, bits, is_name, c in zip(hashes, letters, flags, cont, strict=True) if is_name and not c}
    if letters2 is not None:
        presence |= {(((h & 0xFF) << 24) | (bits & 0xFFFFFF)) << 16 | letters_fill
                     for h, bits, is_name, c in zip(hashes, letters2, flags, cont, strict=True) if is_name and not c}

    def ctx(lo: int, hi: int, side: int) -> int:
        h = int(fmix64(np.uint64(seed ^ side)))
        for j in range(lo, hi):
            if not skip[j]:
                h = int(fmix64(np.uint64((h ^ (int(kent.NAME_MARK) if flags[j] else hashes[j])) & mask)))
        return h >> 32

    out = []
    for i, is_name in enumerate(flags):
        if not is_name or cont[i]:
            continue
        before = [j for j in range(i - 1, -1, -1) if not any(breaks[j + 1 : i + 1])]  # the sentence's, nearest first
        read_before = [j for j in before if not skip[j]][:k]
        lo = min(read_before) if read_before else i
        end = last[i]
        after = [j for j in range(end + 1, len(hashes)) if not any(breaks[end + 1 : j + 1])]
        read_after = [j for j in after if not skip[j]][:k]
        hi = max(read_after) + 1 if read_after else end + 1
        fill = fill_byte << 8 | (hashes[i] & 0xFF)
        out += [ctx(lo, i, int(kent.LEFT)) << 16 | fill] if read_before else []  # a side with no word: none
        out += [ctx(end + 1, hi, int(kent.RIGHT)) << 16 | fill] if read_after else []
    return sorted(out + list(presence))


def _runs(flags: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(last, cont) joining some flagged neighbours into one name, at random."""
    n = len(flags)
    last, cont = np.arange(n), np.zeros(n, dtype=np.bool_)
    i = 0
    while i < n:
        j = i + 1
        while flags[i] and j < n and flags[j] and rng.random() < 0.5:
            j += 1
        last[i:j] = j - 1
        cont[i + 1 : j] = True
        i = j
    return last, cont


@pytest.mark.parametrize(("seed", "second"), [(s, second) for s in range(3) for second in (False, True)])
def test_entity_entries_match_reference(seed: int, second: bool) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(50):
        n = int(rng.integers(0, 20))
        hashes = rng.integers(0, 6, size=n).astype(np.uint64)
        flags = rng.random(n) < 0.3
        breaks = rng.random(n) < 0.2
        if n:
            breaks[0] = True
        letters = rng.integers(0, 1 << 24, size=n).astype(np.uint64)
        letters[hashes == 0] = 12345  # one name written twice has one letter set
        letters2 = rng.integers(0, 1 << 24, size=n).astype(np.uint64)
        letters2[hashes == 0] = 54321
        last, cont = _runs(flags, rng)
        skip = (rng.random(n) < 0.2) & ~flags if second else np.zeros(n, dtype=np.bool_)  # a legal form (v10)
        entries, tokens, off = kent.entity_entries(
            hashes, np.array([0, n], dtype=np.int64), flags, hashes, letters,
            letters2 if second else np.zeros(0, dtype=np.uint64), breaks, skip, 3, 7, 0xAB, 0xCD00, 0xEF00, last, cont)
        want = ref_entries(hashes.tolist(), flags.tolist(), breaks.tolist(), 3, 7, 0xAB, letters.tolist(), 0xCD00,
                           last.tolist(), cont.tolist(), letters2.tolist() if second else None, 0xEF00, skip.tolist())
        assert entries.tolist() == want
        assert off.tolist() == [0, len(want)]
        assert all(flags[t] and not cont[t] for t in tokens.tolist())


def test_name_tokens_and_sentence_breaks() -> None:
    table = kent.build_name_table(np.array([3, 9], dtype=np.uint64), np.array([30, 90], dtype=np.uint64))
    flags, fills = kent.name_tokens(np.array([1, 3, 9, 4], dtype=np.uint64), *table)
    assert flags.tolist() == [False, True, True, False] and fills.tolist() == [0, 30, 90, 0]
    cps = np.array([ord(c) for c in "ab. cd ef"], dtype=np.uint32)
    marks = np.array([ord(".")], dtype=np.uint32)
    breaks = kent.sentence_breaks(cps, np.array([0, 4, 7]), np.array([2, 6, 9]), np.array([0, 3]), marks)
    assert breaks.tolist() == [True, True, False]


def _tokens(words: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(code points, token starts, token ends, token hashes) of a segmented text."""
    cps = np.array([ord(c) for c in "".join(words)], dtype=np.uint32)
    ends = np.cumsum([len(w) for w in words])
    return cps, ends - np.array([len(w) for w in words]), ends, hash_words(words)


def test_a_lone_surname_before_a_short_word_is_a_name() -> None:
    text = "由王新民主持"  # 由/王/新民/主持: 王 alone, then a two-character word
    cps = np.array([ord(c) for c in text], dtype=np.uint32)
    starts, ends = np.array([0, 1, 2, 4]), np.array([1, 2, 4, 6])
    hashes = np.arange(4, dtype=np.uint64) + np.uint64(100)
    flags, fills = np.zeros(4, dtype=np.bool_), np.zeros(4, dtype=np.uint64)
    surnames = np.array(sorted(map(ord, "王李黄")), dtype=np.uint32)
    stops = zh_suffix_tables()[1]
    joined = np.zeros(4, dtype=np.bool_)
    kent.surname_names(cps, starts, ends, np.array([0, 4]), hashes, flags, fills, surnames, stops, tables(True)[1],
                       True, joined, False)
    assert joined.tolist() == [False, True, True, False]
    assert flags.tolist() == [False, True, True, False] and fills.tolist() == [0, 101, 102, 0]
    # ... but not before a particle or a preposition: 颜色是/黄/的, 李/在/会上
    for text, words in (("颜色是黄的", ["颜色", "是", "黄", "的"]), ("李在会上", ["李", "在", "会上"])):
        cps, starts, ends, _ = _tokens(words)
        n = len(words)
        flags = np.zeros(n, dtype=np.bool_)
        kent.surname_names(cps, starts, ends, np.array([0, n]), np.arange(n, dtype=np.uint64), flags,
                           np.zeros(n, dtype=np.uint64), surnames, stops, tables(True)[1], True,
                           np.zeros(n, dtype=np.bool_), True)
        assert not flags.any(), text


def test_a_place_or_body_the_dictionary_lacks_ends_with_its_suffix() -> None:
    def flagged(words: list[str]) -> list[bool]:
        cps, starts, ends, _ = _tokens(words)
        n = len(words)
        flags, fills = np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.uint64)
        hashes = np.arange(n, dtype=np.uint64) + np.uint64(1)
        kent.suffix_names(cps, starts, ends, np.array([0, n]), hashes, flags, fills, *zh_suffix_tables(),
                          tables(True)[1], *zh_short_place_tables())
        assert all(fills[flags] == hashes[flags])
        return flags.tolist()

    assert flagged(["同期", "喻", "家", "湾", "村", "房价"]) == [False, True, True, True, True, False]
    assert flagged(["据", "财金", "队", "报道"]) == [False, True, True, False]
    assert flagged(["据", "该", "市", "报道"]) == [False] * 4  # a demonstrative: no name
    assert flagged(["全", "县", "人口"]) == [False] * 3  # one character before: too short
    assert flagged(["白纸坊", "市", "医院"]) == [True, True, False]  # one word before the suffix
    assert flagged(["报道", "财金", "队"]) == [False, True, True]  # several tokens: the first a single character
    # one character alone before 市 or 县, which the dictionary did not join to it (城市, 超市 it does)
    assert flagged(["浙江", "帅", "市", "成立"]) == [False, True, True, False]
    assert flagged(["《", "宇", "县", "人民法院"]) == [False, True, True, False]
    assert flagged(["沪深", "两", "市", "股指"]) == [False] * 4  # a numeral: two markets
    assert flagged(["、", "省", "市", "的"]) == [False] * 4  # a suffix alone is no place (各省、市)
    assert flagged(["总", "局"]) == [False, False]  # 局 only after two characters


def test_a_known_names_administrative_suffix_is_part_of_it() -> None:
    """建德/区 (a dictionary name, then its suffix) reads as 德清/市 (neither known): the suffix is
    a name token in both, so the two names have the same contexts and their difference is seen."""
    cps, starts, ends, hashes = _tokens(["预计", "建德", "区", "大部分"])
    flags = np.array([False, True, False, False])
    fills = np.where(flags, hashes, 0).astype(np.uint64)
    kent.suffix_names(cps, starts, ends, np.array([0, 4]), hashes, flags, fills, *zh_suffix_tables(),
                      tables(True)[1], *zh_short_place_tables())
    assert flags.tolist() == [False, True, True, False] and int(fills[2]) == int(hashes[2])


def test_a_place_after_a_word_for_inside_is_not_part_of_it() -> None:
    cps, starts, ends, hashes = _tokens(["六小时", "内", "德清", "市", "大部分"])
    flags, fills = np.zeros(5, dtype=np.bool_), np.zeros(5, dtype=np.uint64)
    kent.suffix_names(cps, starts, ends, np.array([0, 5]), hashes, flags, fills, *zh_suffix_tables(),
                      tables(True)[1], *zh_short_place_tables())
    assert flags.tolist() == [False, False, True, True, False]  # 内 (inside) is not the place's


def test_a_company_the_dictionary_lacks_ends_with_its_legal_form() -> None:
    def flagged(words: list[str], known: tuple[int, ...] = ()) -> list[bool]:
        cps, starts, ends, hashes = _tokens(words)
        flags = np.isin(np.arange(len(words)), known)
        fills = np.zeros(len(words), dtype=np.uint64)
        kent.body_names(cps, starts, ends, np.array([0, len(words)]), hashes, flags, fills, *zh_body_tables(),
                        zh_suffix_tables()[1], tables(True)[1], np.zeros(len(words), dtype=np.bool_), BRAND_CHARS)
        return flags.tolist()

    # the city is a known name; the words between it and the legal form are the company's
    assert flagged(["确定", "长沙市", "金鹰", "建筑工程", "有限公司", "为"], known=(1,)) == [
        False, True, True, True, False, False]
    assert flagged(["郑州市", "德润", "能源", "股份", "有限公司"], known=(0,)) == [True, True, True, False, False]
    assert flagged(["本", "有限公司"]) == [False, False]  # a demonstrative: this company, no name
    assert flagged(["，", "有限公司"]) == [False, False]
    assert flagged(["中", "石油", "集团公司"]) == [False, True, False]  # one character: not a company's word
    # a brand the dictionary cuts into characters, two to four of them, before the words
    assert flagged(["：", "商", "软", "冠", "联", "科技", "有限公司"]) == [False, True, True, True, True, False, False]
    assert flagged(["郑州市", "华", "腾", "电子", "有限公司"], known=(0,)) == [True, True, True, True, False]
    assert flagged(["最近", "网", "新", "恒", "天", "诚", "有限公司"]) == [False, False, True, True, True, True, False]
    assert flagged(["在", "华", "有限公司"]) == [False, False, False]  # 在: a preposition, not a brand's
    # the dictionary cuts 有限责任公司 in two: 公司 ends a company after a link word, not after any word
    assert flagged(["鹰", "新", "盛", "顺", "食品", "有限责任", "公司", "令"]) == [True] * 5 + [False] * 3
    assert flagged(["市", "电力", "公司"]) == [False, False, False]


def test_a_person_whose_surname_is_also_a_preposition_is_read_before_a_given_names_characters() -> None:
    def flagged(words: list[str]) -> list[bool]:
        cps, starts, ends, hashes = _tokens(words)
        flags, fills = np.zeros(len(words), dtype=np.bool_), np.zeros(len(words), dtype=np.uint64)
        joined = np.zeros(len(words), dtype=np.bool_)
        kent.lead_surname_names(cps, starts, ends, np.array([0, len(words)]), hashes, flags, fills,
                                zh_lead_surnames(), zh_given_tails(), zh_suffix_tables()[1], tables(True)[1], joined)
        assert (joined == flags).all()  # a person's tokens are one name
        return flags.tolist()

    assert flagged(["，", "于", "艳", "琳", "同志"]) == [False, True, True, True, False]
    assert flagged(["是", "于", "丽", "主持"]) == [False, True, True, False]
    assert flagged(["会议", "于", "3", "月"]) == [False] * 4  # at a date
    assert flagged(["取决", "于", "你", "的"]) == [False] * 4  # 你 ends no given name
    assert flagged(["于", "丽", "华", "美", "之"]) == [False] * 5  # a longer run of characters is a phrase


def test_the_same_story_about_a_person_surnamed_yu_is_another_story() -> None:
    story = ("据报道，{x}昨日在新闻发布会上表示，公司将在明年推出三款新产品，并计划在华东地区新建两座工厂，"
             "预计可新增就业岗位一千余个。{x}还透露，公司今年的研发投入将比去年增长两成。")
    status, _, kind = decide_pair(story.format(x="王建国"), story.format(x="于艳琳"))
    assert status is Status.UNIQUE and kind == "entity"


def test_a_person_the_dictionary_lacks_is_named_by_the_title_after_them() -> None:
    def flagged(words: list[str]) -> list[bool]:
        cps, starts, ends, hashes = _tokens(words)
        flags, fills = np.zeros(len(words), dtype=np.bool_), np.zeros(len(words), dtype=np.uint64)
        kent.titled_names(cps, starts, ends, np.array([0, len(words)]), hashes, flags, fills, *zh_title_tables(),
                          zh_suffix_tables()[1], tables(True)[1])
        return flags.tolist()

    assert flagged(["任命", "高", "卫东", "同志", "为"]) == [False, True, True, False, False]
    assert flagged(["马立新", "先生"]) == [True, False]
    assert flagged(["广大", "同志"]) == [False, False]  # no surname first
    assert flagged(["该", "同志"]) == [False, False]
    assert flagged(["老", "同志"]) == [False, False]


def test_a_one_letter_name_does_not_make_another_name_written_alike() -> None:
    """A surname token (王 of 王/新民) has a one-bit letter set: it shares its bit with about one
    name in twelve by collision, which must not hide a new name (延安市) as the same one."""
    assert not _written_alike(0b10, 0b110)
    assert _written_alike(0b110, 0b1110) and not _written_alike(0b110, 0b101)


NOTICE_ROLES = ("关于{p}同志任职的通知。经研究决定，任命{p}同志为市发展和改革委员会副主任，试用期一年。"
                "免去{p}同志的市统计局副局长职务。以上同志的任职时间从发文之日起计算。特此通知。")
WARNING = ("{p}气象台发布暴雨橙色预警信号。受强对流天气影响，预计未来六小时内{p}大部分地区将出现暴雨，"
           "局部大暴雨，并伴有雷电和短时大风。请有关单位和人员做好防范工作，注意防范山洪、地质灾害。")
AWARD = ("中标结果公告。项目名称：城市道路改造工程。经评标委员会评审，确定{p}为中标人。中标金额以合同为准。"
         "公示期为三个工作日，各投标人如对中标结果有异议，可在公示期内以书面形式向招标人提出。")


@pytest.mark.parametrize(("template", "first", "second"), [
    (NOTICE_ROLES, "高卫东", "马立新"),  # neither in the dictionary, the first surname a common word
    (WARNING, "德清市", "建德区"),  # one known to the dictionary, one not
    (AWARD, "长沙市金鹰建筑工程有限公司", "长沙市雅居实业股份有限公司"),  # the same city
])
def test_a_template_about_another_name_no_dictionary_knows_is_unique(template: str, first: str, second: str) -> None:
    status, _, kind = decide_pair(template.format(p=first), template.format(p=second))
    assert status is Status.UNIQUE and kind == "entity"


@pytest.mark.parametrize("template", [NOTICE_ROLES, WARNING, AWARD])
def test_the_same_templates_reprinted_still_merge(template: str) -> None:
    name = {NOTICE_ROLES: "高卫东", WARNING: "德清市", AWARD: "长沙市金鹰建筑工程有限公司"}[template]
    text = template.format(p=name)
    status, original, _ = decide_pair(text, "转载自市政府网站。" + text.replace("，", ",") + "（责任编辑：李明）")
    assert status is Status.DUPLICATE and original == "first"


def test_a_word_after_a_learned_field_marker_is_a_name() -> None:
    words = ["申请人", "嘉禾", "顺", "于", "申请人", "2024", "申请人", "，"]
    cps, starts, _, hashes = _tokens(words)
    flags, fills = np.zeros(len(words), dtype=np.bool_), np.zeros(len(words), dtype=np.uint64)
    markers = np.sort(hash_words(["申请人"]))
    kent.marker_names(cps, starts, np.array([0, len(words)]), hashes, flags, fills, markers,
                      np.ones(1, dtype=np.bool_), tables(True)[1])
    assert flags.tolist() == [False, True, False, False, False, False, False, False]  # not a figure, not a comma
    assert int(fills[1]) == int(hashes[1])
    # ... only in the documents whose content type taught the field
    flags[:] = False
    kent.marker_names(cps, starts, np.array([0, len(words)]), hashes, flags, fills, markers,
                      np.zeros(1, dtype=np.bool_), tables(True)[1])
    assert not flags.any()


def test_dictionary_words_that_end_as_a_body_are_names() -> None:
    assert is_dictionary_name("公安部", "n") and is_dictionary_name("浇底乡", "n")  # jieba tags them plain nouns
    assert is_dictionary_name("新华社", "nt") and is_dictionary_name("江泽民", "nr")
    assert not is_dictionary_name("大都会", "nz") and not is_dictionary_name("修正", "nr")
    assert not is_dictionary_name("城市", "n")  # two characters: a common noun as often as a name


def test_a_village_notice_about_another_village_is_unique() -> None:
    body = ("关于{p}2024年度农村危房改造补助资金发放情况的公示：根据县住建局的统一部署，经农户申请、"
            "村民代表评议、乡镇审核，{p}共有十二户农户符合补助条件，现将名单予以公示，公示期七天。")
    status, _, kind = decide_pair(body.format(p="喻家湾村"), body.format(p="前元庄村"))
    assert status is Status.UNIQUE and kind == "entity"


COUNTIES = ("到一九四三年底，各地都建立了县区党政机构和游击队，连同腹心区的浮山、翼城、沁水、{x}共9个县，"
            "工作都全面开展起来，基本上控制与稳定了整个岳南区的局面。此后，根据地的生产运动蓬勃开展，群众生活得到明显改善。")


def _letters(name: str) -> int:
    cps = np.array([ord(c) for c in name], dtype=np.uint32)
    return int(kent.letter_sets(cps, np.array([0]), np.array([len(name)]), np.array([True]), False,
                                zh_place_suffixes())[0])


def test_a_new_name_is_not_written_alike_with_a_name_both_texts_carry() -> None:
    """伊萨尔 where the other text has 士敏 (no name to it) is a new name, although 岳南 shares more
    than half of its letters by the letter sets' collisions: 岳南 stands in both texts, so it is
    no other spelling of 伊萨尔 (this pair merged when every name of the other text was asked)."""
    assert _written_alike(_letters("伊萨尔"), _letters("岳南"))
    status, _, kind = decide_pair(COUNTIES.format(x="士敏"), COUNTIES.format(x="伊萨尔"))
    assert status is Status.UNIQUE and kind == "entity"


def test_two_names_whose_letter_sets_collide_are_not_written_alike() -> None:
    """沂蒙 and 中国 have the same two bits of 24 (one pair of two-character names in about 280)
    but other fill bytes: two names, not one written two ways, so 沂蒙 is a new name where the
    other text has 中国 (merged while equal letter sets alone made them alike)."""
    assert _letters("沂蒙") == _letters("中国")
    body = ("法院办理送达事务，应当遵守一个{p}原则和法律的基本原则，不违反社会公共利益。"
            "2019年以来，各级法院共办理此类事务1200件，未发生差错。")
    status, _, kind = decide_pair(body.format(p="中国"), body.format(p="沂蒙"))
    assert status is Status.UNIQUE and kind == "entity"


@pytest.mark.parametrize("furniture", ["【字体：大 中 小】 2012-04-02 20:44 中国政府网\n", "来源：新华网\n",
                                       "【字体：大 中 小】 2011-11-24 01:25 中国新闻网\n"
                                       "来源：中国新闻网 发布时间：01:25\n",
                                       "【字体：大 中 小】 2018-09-09 03:30 央视网\n"])
def test_a_source_websites_name_in_a_reprints_header_is_furniture(furniture: str) -> None:
    status, original, _ = decide_pair(COUNTY_NEWS.format(p="和田县"), furniture + COUNTY_NEWS.format(p="和田县"))
    assert status is Status.DUPLICATE and original == "first"


@pytest.mark.parametrize(("text", "name", "furniture"), [
    ("来源：中国政府网 作者：赵磊", "赵磊", True),
    ("作者：赵磊", "磊", True),  # 赵/磊: the name's own first token stands between
    ("责任编辑 张三、李四", "李四", True),  # the byline's second name
    ("摄影/王五", "王五", True),
    ("by jane smith", "jane", True),
    ("2011-11-24 中国新闻网", "中国", True),  # a website named after the country
    ("来源：央视网", "央视网", True),
    ("本报记者 张三、李四报道", "李四", False),  # a reporter's: the story's, unless compared alone
    ("（记者衡志诚）今天上午，南宁市副市长", "南宁市", False),  # the byline closed: the story goes on
    ("记者董伟报道：顶着寒风，宜昌市各级领导", "宜昌市", False),
    ("中国网络安全", "中国", False),
    ("记者从宜昌市林业局获悉", "宜昌市", False),  # the reporter learned it from the place
])
def test_a_byline_or_a_website_is_furniture_and_the_story_after_it_is_not(text: str, name: str,
                                                                          furniture: bool) -> None:
    start = text.index(name)
    assert _furniture_name(text, start, start + len(name)) is furniture


@pytest.mark.parametrize(("text", "name", "furniture"), [
    ("本报记者 张三、李四报道", "李四", True),
    ("（新华社记者李学仁摄）", "李学仁", True),
    ("记者从宜昌市林业局获悉", "宜昌市", False),
])
def test_a_reporters_byline_is_furniture_only_to_a_credit_compared_alone(text: str, name: str,
                                                                        furniture: bool) -> None:
    start = text.index(name)
    assert _furniture_name(text, start, start + len(name), reporter=True) is furniture


PHONE_STORY = ("Mobile operator T-Mobile has launched its latest pocket office device, the MDA IV, which "
               "combines a phone with a small keyboard.\nChief executive Rene Obermann said the device was aimed "
               "at business users who want e-mail on the move, and that sales in Germany had exceeded forecasts.")


@pytest.mark.parametrize(("head", "tail"), [
    ("Published: 15 October 2004\nSource: The Guardian\n", "\nCopyright The Guardian. All rights reserved."
                                                             "\nReporting by Tom Brown"),
    ("By Maria Lopez, Associated Press\nAdvertisement\n", "\nShare this story: Email Facebook Twitter"),
    ("Source: World Service\n", "\n(Reporting by Anna Lee; Editing by David Clark)"),
])
def test_reprints_with_other_sites_furniture_lines_are_one_story(head: str, tail: str) -> None:
    """Each site that reprints a story names itself, its author or its reporter in lines of its
    own (Source: The Guardian, Reporting by Tom Brown): two reprints from two sites named two
    sources in the same place, which read as another name in the other's place, and the second
    reprint split from the story's cluster. A name written only in such a line is no name of the
    text."""
    other = "Source: BBC News\n" + PHONE_STORY + "\nCopyright BBC News. All rights reserved.\nReporting by Jane Smith"
    with Deduplicator() as dedup:
        decided = dedup.decide_many([{"id": "story", "text": PHONE_STORY}, {"id": "bbc", "text": other},
                                     {"id": "site", "text": head + PHONE_STORY + tail}])
        got = {d.doc.id: (d.status, d.duplicate_of) for d in decided}
    assert got["bbc"] == got["site"] == (Status.DUPLICATE, "story")


def test_a_name_changed_in_the_story_under_the_same_furniture_is_still_another_name() -> None:
    """Furniture lines hide only the names written nowhere else: the story about another chief
    executive stays apart whatever lines a site puts around it, and a long line that starts with a
    marker word (By the end of ...) is the story itself."""
    furniture = "Source: The Guardian\n{}\nReporting by Tom Brown"
    other_chief = PHONE_STORY.replace("Obermann", "Hoettges")
    status, _, kind = decide_pair(furniture.format(PHONE_STORY), furniture.format(other_chief))
    assert status is Status.UNIQUE and kind == "entity"
    long_line = "By the end of the year, Chief executive Rene Obermann said sales in Germany would double."
    assert without_furniture_lines(long_line + "\n" + PHONE_STORY).startswith(long_line)
    page = "Source: The Guardian\n" + PHONE_STORY + "\n  (Reporting by Tom Brown)"
    blanked = without_furniture_lines(page)
    assert len(blanked) == len(page)
    assert "Guardian" not in blanked and "Tom" not in blanked and "Obermann" in blanked


RIVERS = ("武平县人民法院积极开展法制宣传教育，先后开展法律知识咨询服务百余次，上法制课28场次。"
          "今冬，10万返乡民兵正奋战在{x}、得胜河及巢湖大堤冬修现场，完成土方120万立方米。")


def _name_bytes(text: str) -> dict[str, int]:
    """Each name of ``text`` read by the fingerprinter, with the fill byte of its entries."""
    fps = Fingerprinter(FingerprintConfig()).fingerprint([text])
    names = fps.names.document(0)
    return {fps.texts[0][a:b]: (int(e) >> 40) & 0xFF
            for e, a, b in zip(names.entries.tolist(), names.starts.tolist(), names.ends.tolist(), strict=True)
            if int(e) & 0xFFFF == kprof.NAME_PRESENT_FILL}


@pytest.mark.parametrize("new", ["紫荆山", "菜园坝"])
def test_a_new_name_sharing_its_fill_byte_with_a_carried_name_is_another_name(new: str) -> None:
    """紫荆山 where the other text has 沿岸 (no name), and its entries' fill byte is 武平县's, a
    name both texts carry: the two names' mentions are told apart by the names themselves. The
    pair merged when a new name sharing a carried name's byte was left alone (one name in 256
    does, so most long texts had one)."""
    bytes_of = _name_bytes(RIVERS.format(x=new))
    assert bytes_of[new] == bytes_of["武平县"]
    status, _, kind = decide_pair(RIVERS.format(x="沿岸"), RIVERS.format(x=new))
    assert status is Status.UNIQUE and kind == "entity"


def test_a_name_cut_by_a_pages_noise_is_the_name_both_texts_carry() -> None:
    """Gabri&nbsp;el reads as a name Gabri: its fill byte and most of its letters are those of
    Gabriel, which both texts name elsewhere, so it is that name, not another one."""
    story = ("Claude John Gabriel stabbed to death a Gold Coast teenager in 1998 and was receiving treatment for a "
             "mental illness. However, he absconded from a Queensland mental health facility earlier this year. "
             "Premier Peter Beattie says the Queensland Government is seeking legal advice about whether it can "
             "force Gabriel to return. \"I'm very unhappy about how this whole matter has been handled.\"")
    status, original, _ = decide_pair(story, story.replace("force Gabriel", "force Gabri&nbsp;el"))
    assert status is Status.DUPLICATE and original == "first"


CODED = ("关于准予{c}设立登记的通知。{c}（统一社会信用代码：{code}）：你单位提交的设立登记申请材料齐全，"
         "符合法定形式，本局决定准予登记。请自收到本通知之日起三十日内领取营业执照。特此通知。")


@pytest.mark.parametrize(("first", "second"), [("91440300MA5DAB1234", "91440300MA5DCD1234"),
                                               ("91440300192203821X", "91440300192203822X")])
def test_credit_codes_that_differ_in_a_letter_or_a_digit_are_other_notices(first: str, second: str) -> None:
    """A credit code is one figure (profile v8): MA5DAB / MA5DCD differ in letters only, which
    were words of the frame before, so the two notices merged."""
    c = "深圳市华为技术有限公司"
    status, _, kind = decide_pair(CODED.format(c=c, code=first), CODED.format(c=c, code=second))
    assert status is Status.UNIQUE and kind == "figure"


def test_a_credit_code_written_in_full_width_or_lower_case_is_the_same_code() -> None:
    c = "深圳市华为技术有限公司"
    text = CODED.format(c=c, code="91440300MA5DAB1234")
    for other in (text.replace("MA5DAB", "ｍａ５ｄａｂ"), text.replace("MA5DAB", "ma5dab")):
        status, original, _ = decide_pair(text, other)
        assert status is Status.DUPLICATE and original == "first"


@pytest.mark.parametrize(("story", "a", "b"), [
    ("Sales of the BMW {a} rose sharply this year, while its sibling, the {b}, sold fewer cars than in 2003 "
     "across Europe, the company said on Tuesday in its annual report to shareholders in Munich.", "X5", "X3"),
    ("Suharto has been charged with embezzling public funds worth AUD{a} billion during his time in office, "
     "and prosecutors say a further AUD{b} billion is held abroad, the court heard on Monday in Jakarta.",
     "1.102", "0.4"),
])
def test_figures_glued_to_letters_that_trade_places_are_other_figures(story: str, a: str, b: str) -> None:
    """x5 / x3 and aud1.102 are words with digits: figures since profile v8, so a swap of them is
    a figure difference (both merged when only a word starting with a digit was a figure)."""
    status, _, kind = decide_pair(story.format(a=a, b=b), story.format(a=b, b=a))
    assert status is Status.UNIQUE and kind == "figure"


STAFF = ("一汽集团吉林公司今年以来狠抓产品质量，全年销售汽车三万二千辆，比上年增长百分之十五。公司坚持用户至上，"
         "在全国建立了二百多个服务站。售后服务人员{p}，为了工作几次推迟婚期。用户称赞他们是贴心人，公司上下形成了"
         "比学赶超的良好风气。")


@pytest.mark.parametrize("other", ["孔令志", "彭楚政"])
def test_a_person_named_once_in_a_sentence_with_nothing_else_to_anchor_it_is_another_name(other: str) -> None:
    """The one sentence that names him has no figure or other name: it is the only sentence
    either text lacks of the other, and the lengths differ by the names' alone, so it was
    rewritten around the name. Both merged when a named sentence needed an anchor."""
    status, _, kind = decide_pair(STAFF.format(p="高广宾"), STAFF.format(p=other))
    assert status is Status.UNIQUE and kind == "entity"


RIVALS = ("电影讲述了两兄弟反目的故事。自他开始以这个形象示人，便与{p}成为敌人，各走各路。"
          "导演尔冬升表示拍摄过程非常顺利，演员们都很投入。变成这个形象后，他便要与{p}从兄弟变敌人，关系突变，幸好有这个形象帮他入戏。")


@pytest.mark.parametrize("first", ["成龙", "大哥"])
def test_a_person_named_in_two_sentences_with_nothing_to_anchor_them_is_another_name(first: str) -> None:
    """Two sentences name 彭楚政, where the other text has 成龙 (which it does not read as a
    name) or 大哥: both are the only sentences either text lacks, swapped for as many around the
    name alone. Merged when only one swapped sentence was allowed."""
    status, _, kind = decide_pair(RIVALS.format(p=first), RIVALS.format(p="彭楚政"))
    assert status is Status.UNIQUE and kind == "entity"


HOUSING = ("近期武昌区多个楼盘推出优惠，购房者看房热情明显升温。投资需求会否让楼市淡季不淡？{x}而市场需求未见大幅萎缩，"
           "开发商普遍看好年底行情。有消息称，有关部门将会对楼市优惠政策进行续期。{y}我要评论")


def test_two_copies_that_each_dropped_another_sentence_still_merge() -> None:
    """One copy keeps the sentence naming 新房网研究部, the other the sentence after it, of about
    the same length: a sentence for a sentence, as a rename would be, but the named one has
    figures the other text lacks, so it was dropped, not rewritten."""
    named = "新房网研究部分析人员认为，11月开盘的项目比9月、10月份减少了一大半。"
    other = "业内人士分析，如果这一说法属实，一些原本正观望的购房者可能会加快买房步伐。"
    status, original, _ = decide_pair(HOUSING.format(x="", y=other), HOUSING.format(x=named, y=""))
    assert status is Status.DUPLICATE and original == "first"


def test_a_source_line_and_a_pages_buttons_are_no_names() -> None:
    story = ("Moya won the final in straight sets on Sunday, and the home crowd of 27,000 cheered as he lifted "
             "the trophy. Roddick battled hard and had chances in the second set. \"I think we put up a better "
             "fight here than last year,\" the captain said after the match in the late afternoon.")
    for edited in ("Source: Associated Press\n" + story, story.replace("a better fight", "a better Click here fight")):
        status, original, _ = decide_pair(story, edited)
        assert status is Status.DUPLICATE and original == "first", edited[:40]


PENALTY = ("关于对{x}安全生产违法行为的处罚公告。经查，{x}未按规定对从业人员进行安全生产教育和培训，"
           "违反了《中华人民共和国安全生产法》的规定。根据相关规定，责令其限期改正，并处以罚款。")


@pytest.mark.parametrize(("first", "second"), [("正泰制药股份有限公司", "海南省同创机械有限公司"),
                                               ("力拓化工有限公司", "浙江省明辉农业开发股份有限公司")])
def test_a_name_in_a_headline_with_nothing_else_to_anchor_it_is_another_name(first: str, second: str) -> None:
    """The company is named in the headline (no figure, polarity word or other name beside it) and
    in the body (beside 中华人民共和国): one named sentence without an anchor is allowed when the
    others have one. Both merged when every named sentence needed its own anchor."""
    for a, b in ((first, second), (second, first)):
        status, _, kind = decide_pair(PENALTY.format(x=a), PENALTY.format(x=b))
        assert status is Status.UNIQUE and kind == "entity", (a, b)


COUNTY_NEWS = ("记者从{p}林业和草原局获悉，今年以来，{p}坚持生态优先、绿色发展，全年共完成人工造林三万二千亩，"
               "退化林修复一万五千亩，森林覆盖率比上年提高零点八个百分点。下一步，{p}将继续推进国土绿化行动，"
               "加强森林防火和有害生物防治，巩固生态建设成果，努力让群众共享绿色发展红利。")


@pytest.mark.parametrize(("first", "second"), [("和田", "吴兴"), ("河间", "从江"), ("酒泉", "宿迁"), ("集安", "信宜")])
def test_a_report_about_another_county_is_unique(first: str, second: str) -> None:
    """Places the dictionary tags as a person or an ordinary word (和田 nz, 吴兴 nr, 河间 n) are
    names by the table of administrative divisions: the same report about another county is
    another document (merged as a reprint before the table)."""
    status, _, kind = decide_pair(COUNTY_NEWS.format(p=first), COUNTY_NEWS.format(p=second))
    assert status is Status.UNIQUE and kind == "entity"


def test_the_county_report_reprinted_with_its_full_name_still_merges() -> None:
    """A reprint that writes the county's full name (和田地区 for 和田) names the same place."""
    first = COUNTY_NEWS.format(p="和田")
    second = first.replace("记者从和田", "记者从和田地区", 1) + "（来源：当地融媒体中心）"
    status, original, _ = decide_pair(first, second)
    assert status is Status.DUPLICATE and original == "first"


@pytest.mark.parametrize(("full", "short"), [
    ("北京市", "北京"), ("和田地区", "和田"), ("恩施土家族苗族自治州", "恩施"), ("内蒙古自治区", "内蒙古"),
    ("双江拉祜族佤族布朗族傣族自治县", "双江"), ("香港特别行政区", "香港"), ("阿拉善盟", "阿拉善"), ("义县", "义县"),
])
def test_a_divisions_short_form_drops_its_suffix_and_peoples(full: str, short: str) -> None:
    assert division_short(full) == short


def test_county_short_forms_that_are_ordinary_words_are_no_names() -> None:
    """比如县, 公安县 and 和平区 are divisions, but 比如 (for example), 公安 (police) and 和平
    (peace) alone are words; their full names stay names. Rare short forms (河间) are names."""
    dictionary = {"比如": (5621, "v"), "公安": (2800, "n"), "和平": (7998, "nz"), "河间": (225, "n")}
    names = division_names(dictionary)
    assert {"比如县", "公安县", "和平区", "河间市", "河间"} <= set(names)
    assert not {"比如", "公安", "和平"} & set(names)
    assert names["河间市"] == "河间"


DISCIPLINE = ("关于给予{x}党内严重警告处分的决定。经查，{x}违反中央八项规定精神，违规收受礼品礼金，造成不良影响。"
              "经研究，决定给予{x}党内严重警告处分。")
COMMENDATION = ("表彰决定。在全市抗洪抢险工作中，{x}同志冲锋在前，不怕牺牲，表现突出。"
                "为弘扬先进，市委决定授予{x}同志优秀共产党员称号，号召全市广大党员向其学习。")


@pytest.mark.parametrize(("template", "first", "second"),
                         [(DISCIPLINE, "郎振华", "柏晓燕"), (COMMENDATION, "奚斌", "邹秀兰")])
def test_a_notice_about_someone_of_a_rarer_surname_is_unique(template: str, first: str, second: str) -> None:
    """郎 and 奚 are surnames the People's Daily corpus gives people and jieba tags nr when alone:
    郎/振华 and 奚/斌 are people, so the notice about another person stays apart (merged before)."""
    status, _, kind = decide_pair(template.format(x=first), template.format(x=second))
    assert status is Status.UNIQUE and kind == "entity"


CONFERENCE = ("本届全国职业教育工作交流大会于近日在{p}召开。本次会议上，来自各地的职业院校代表围绕产教融合、校企合作"
              "和人才培养模式等议题进行了深入交流，与会代表一致认为，职业教育要紧密对接产业需求，不断提高人才培养质量。")


def test_a_rare_word_at_a_sentences_end_in_a_text_of_no_names_is_another_name() -> None:
    """稀树 where the other text has 广州, one content word (召开) before the sentence's end: the
    slot's two contexts hold four words. The deciding text names nobody else: no presence entries
    of its own is no name of its own, not an old record."""
    status, _, kind = decide_pair(CONFERENCE.format(p="广州"), CONFERENCE.format(p="稀树"))
    assert status is Status.UNIQUE and kind == "entity"


RESALE = ("今年以来，{p}的二手房成交量明显下降，高单价房源的挂牌时间普遍延长，买卖双方的观望情绪较为浓厚。"
          "业内人士认为，随着新政落地，{p}的房价短期内仍将保持平稳，刚需购房者可以适当把握入市时机。")


@pytest.mark.parametrize("other", ["怀来", "外滩"])
def test_a_rare_word_holding_a_particles_character_is_another_name(other: str) -> None:
    """怀来 (来) and 外滩 (外) hold a character that is a particle or a preposition on its own, as
    the function words that may not stand for a name do (或者, 这个); those are common, these are
    rare: in the place of 西湖区 they are another place."""
    status, _, kind = decide_pair(RESALE.format(p="西湖区"), RESALE.format(p=other))
    assert status is Status.UNIQUE and kind == "entity"


def test_idioms_are_read_from_the_dictionary() -> None:
    idioms = zh_idioms()
    assert in_sorted(hash_words(["而立之年", "与时俱进", "怀来", "外滩", "西湖"]), idioms).tolist() == [
        True, True, False, False, False]
    assert not in_sorted(hash_words(["而立之年"]), idioms[:0]).any()


INTERVIEW = ("记者近日来到这家老国有企业采访。该厂副厂长{p}坦承，企业效益不好，作为领导班子成员压力很大。"
             "他介绍，工厂鼎盛时期有两千多名职工，如今只剩下不到五百人，退休职工却有近七百人，负担十分沉重。")


def test_a_noun_holding_a_particles_character_stands_for_another_name() -> None:
    """张/人为 where the other text names 郑朝铨: 人为 is a common noun that holds 为, a particle's
    character; a noun is a content word, so the two tokens stand for a person (merged before)."""
    status, _, kind = decide_pair(INTERVIEW.format(p="郑朝铨"), INTERVIEW.format(p="张人为"))
    assert status is Status.UNIQUE and kind == "entity"


def test_content_words_with_a_particles_character_are_read_from_the_dictionary() -> None:
    table = zh_content_words_with_stops()
    assert in_sorted(hash_words(["人为", "对象", "或者", "这个", "西湖"]), table).tolist() == [
        True, True, False, False, False]


PHARMA = ("公司代总经理、32岁的工商管理硕士刘臣恢带着我参观了这座总面积达4个足球场大的现代化制药基地。"
          "办公大楼仿照美国摩托罗拉公司的智能化设计，公司管理人员可以通过可视通讯手段与全国各地的分公司面对面交谈。"
          "计算机管理使公司的销售、生产、管理一体化，效率大大提高。")


def test_a_copy_whose_title_line_reads_a_name_one_character_longer_is_a_reprint() -> None:
    """A copy headed by its first sentence cut after a name (原标题：...硕士刘臣恢), joined to the
    next line's 公司: there the dictionary reads 刘臣恢, where both texts read 刘臣 before 带着. A
    name both texts carry, read one character longer, is the same person (split before)."""
    status, original, _ = decide_pair(PHARMA, "原标题：公司代总经理、32岁的工商管理硕士刘臣恢\n" + PHARMA)
    assert status is Status.DUPLICATE and original == "first"


COVERAGE = ("从1月8日开始，人民日报、新华社、解放军报、光明日报、中国青年报、北京日报等媒体，纷纷就此发表消息、评论、"
            "特写、通讯。中央人民广播电台在《新闻纵横》和《军事生活》节目中两次对《虎踞钟山》进行了介绍。"
            "中央电视台在《新闻联播》节目中进行连续报道，社会各界反响热烈。")


def test_a_copy_whose_title_line_cuts_a_name_one_character_short_is_a_reprint() -> None:
    """The title line cuts the first sentence inside 解放军报: 解放军, a name both texts carry read
    one character shorter, is the same name (split before)."""
    head = "原标题：从1月8日开始，人民日报、新华社、解放军\n来源：中国经济网　发布时间：2018-11-21 13:19\n"
    status, original, _ = decide_pair(COVERAGE, head + COVERAGE)
    assert status is Status.DUPLICATE and original == "first"


@pytest.mark.parametrize("other", ["与时俱进", "这个"])
def test_an_idiom_or_a_function_word_in_a_names_place_is_no_other_name(other: str) -> None:
    """An idiom (与时俱进: rare, holding 与) and a common function word (这个) stand for no name:
    the text is an edit of the other (its only difference a word)."""
    status, original, _ = decide_pair(RESALE.format(p="西湖区"), RESALE.format(p=other))
    assert status is Status.DUPLICATE and original == "first"


def test_a_name_that_only_shares_a_fill_byte_is_not_carried() -> None:
    """Whether the other text still carries a replaced name is asked of 32 bits of it: a text with
    many names has one whose 8-bit fill matches the replacement's by chance."""
    c, d, e = 7 << 16, 9 << 16, 11 << 16
    n1, n2 = kprof.NAME_FILL_BYTE << 8 | 1, kprof.NAME_FILL_BYTE << 8 | 2
    present = kprof.NAME_PRESENT_FILL

    def p(byte: int, ident: int) -> int:
        return ((byte << 24) | ident) << 16 | present

    def run(mine: list[int], theirs: list[int]) -> int:
        return int(kprof.replaced_context(np.array(sorted(mine), dtype=np.uint64),
                                          np.array(sorted(theirs), dtype=np.uint64)))

    x, y, z = 0x00000F, 0x000F00, 0x0F0000  # letter sets: three names written nothing alike
    # mine names X (byte 1) where theirs names Y (byte 2); both also name Z, whose byte is 2 too
    mine = [c | n1, d | n1, p(1, x), e | n2, p(2, z)]
    theirs = [c | n2, d | n2, p(2, y), e | n2, p(2, z)]
    assert run(mine, theirs) >= 0  # Y is not carried by mine: Z only shares its byte
    # ... and so does one mention renamed whole (both its contexts) to a name the other text never
    # names, although this text still names Y elsewhere (成都 ... 成都市一环路 / 文锦渡一环路)
    assert run([*mine, p(2, y)], theirs) >= 0
    # ... while in one context only, a name the text still carries is a typo there, no other name
    assert run([c | n1, d | n2, p(1, x), e | n2, p(2, z), p(2, y)], theirs) == -1
    # ... nor is a name written another way (more than half of its letters shared)
    def renamed(mine_letters: int, their_letters: int) -> int:
        return run([c | n1, d | n1, p(1, mine_letters), e | n2, p(2, z)],
                   [c | n2, d | n2, p(2, their_letters), e | n2, p(2, z)])

    assert renamed(0x00003F, 0x00001F) == -1  # 5 of 6 letters shared
    assert renamed(0x00000F, 0x0000F3) >= 0  # 2 of 8
    # a record without presence entries is compared by fill bytes, as before
    assert run([c | n1, d | n1, e | n2], [c | n2, d | n2, e | n2]) == -1


def test_letter_sets_tell_a_name_written_otherwise_from_another_name() -> None:
    def letters(words: list[str], pairs: bool = False) -> list[int]:
        cps, starts, ends, _ = _tokens(words)
        flags = np.ones(len(words), dtype=np.bool_)
        return [int(v) for v in kent.letter_sets(cps, starts, ends, flags, pairs, zh_place_suffixes())]

    def alike(a: int, b: int) -> bool:
        return 2 * bin(a & b).count("1") > bin(a | b).count("1")

    bank, peoples_bank, wang, wang2, beijing, beijing_city = letters(
        ["中国银行", "中国人民银行", "王新民", "王新明", "北京", "北京市"])
    assert alike(bank, peoples_bank) and not alike(wang, wang2)
    assert beijing == beijing_city and all(v < 1 << kent.PRESENCE_BITS for v in (bank, wang))
    kurosawa, hurosawa, blair = letters(["kurosawa", "hurosawa", "blair"], pairs=True)
    assert alike(kurosawa, hurosawa) and not alike(kurosawa, blair)


def test_another_person_not_in_the_dictionary_is_unique() -> None:
    body = ("本次会议由{p}主持，会议听取了各部门关于上半年工作情况的汇报，"
            "研究部署了下半年重点工作任务，要求各单位{p}同志牵头抓好落实。")
    status, _, kind = decide_pair(body.format(p="王新民"), body.format(p="刘业定"))
    assert status is Status.UNIQUE and kind == "entity"


# the kernel's rule as a pattern: the slow reference of neardup.kernels.entities.capitalised_names
EN_NAME = re.compile(r"(?<=[a-z0-9,;] )[A-Z][A-Za-z]{2,}")


def test_capitalised_names_kernel_matches_the_pattern() -> None:
    texts = ["Shares of Microsoft rose, and Google fell; Apple said on Monday it would hire 300 Engineers.",
             "The firm ph&innaeus Ph went to London, then to Paris and the Hague.", "", "no names here"]
    hashes, off = en_names(texts)
    for d, text in enumerate(texts):
        want = sorted(set(hash_words(sorted({w.lower() for w in EN_NAME.findall(text)} - EN_NOT_NAMES)).tolist()))
        assert hashes[off[d] : off[d + 1]].tolist() == want


# the v14 rule as patterns: a capitalised word (then lower-case letters only) that starts a
# sentence (after an end mark, its closing quote and spaces; after a dateline's dash; after an
# opening quote; first on a line that ends as a sentence does) as a subject, alone or first of a
# run of capitalised words (Acme Corp said): before a verb of EN_SUBJECT_VERBS (maybe after an
# adverb of EN_SUBJECT_ADVERBS), with 's, or before "and" or a comma and a capitalised word, or a
# comma and an apposition (an article and a lower-case word); or, subject or not, before a hyphen
# and a participle of place (Edinburgh-based, Paris-born, Hong Kong-listed)
_VERB = f"(?:{'|'.join(sorted(EN_SUBJECT_VERBS))})(?![A-Za-z])"
_SUBJECT = (rf"(?=(?: [A-Z][A-Za-z]*)*(?: (?:(?:{'|'.join(sorted(EN_SUBJECT_ADVERBS))}) )?{_VERB}"
            r"|['’]s(?![A-Za-z])|(?<!ly), (?:[A-Z]|(?:a|an|the) [a-z])| and [A-Z])"
            rf"|(?: [A-Z][A-Za-z]*)*-(?:{'|'.join(sorted(EN_PLACE_PARTICIPLES))})(?![A-Za-z]))")
_AFTER_MARK = re.compile(r"(?:[.!?][\"'”’]?\s+|(?:(?<=\))|(?<=[A-Z]{2})) [-–—]\s+|[\"“])"
                         r"([A-Z][a-z]{2,})(?![A-Za-z])" + _SUBJECT)
_LINE_START = re.compile(r"^[ \t]*([A-Z][a-z]{2,})(?![A-Za-z])" + _SUBJECT + r"[^\n]*[.!?\"'”’][ \t]*$", re.MULTILINE)


def sentence_start_names(text: str) -> set[str]:
    """The slow reference of the kernel's v14 sentence-start names (lower-cased)."""
    lower = {w for w in re.findall(r"(?<![A-Za-z])[a-z][A-Za-z]*", text)}
    found = {m.group(1).lower() for pattern in (_AFTER_MARK, _LINE_START) for m in pattern.finditer(text)}
    return {w for w in found if w not in lower and w not in EN_NOT_NAMES and w not in EN_SENTENCE_WORDS}


SENTENCE_STARTS = [
    "Virgin Blue has set up a tent. Virgin's deputy chief spoke. Virgin was told last Thursday.",
    "Shares fell.  Britain will lead the force. However, Police said nothing. He said it was fine.",
    '"Arnaud is a great scrapper," Gambill said. Gambill was pressed hard. Seles had to fight.',
    "Mobile Networks Seek Turbo Boost\nVodafone said on Monday it would invest.\nIt agreed.",
    "Maintenan\xa0ce units said so. Obtain good advice. Microsoft, Sony and Nintendo agreed. Microsoft has said.",
    "A virgin forest. Virgin said no. The Apple's core. Apple's shares rose. Appleby'sx went. Ian Harris, editor.",
    "It rose. Britain now has more. France, Britain and Germany agreed. Tories and Lib Dems backed it. Sales and "
    "costs fell. Bargain calls widen. Separately, Pyra said. Google acquired Pyra.",
    "LONDON (Reuters) - Acme said on Tuesday it would cut jobs. PARIS - Globex has. Iran - Opec's share rose.",
    "It fell. Initech Global Corp said so. Pied Piper's plan. Hooli And Co agreed. Massive Dynamic, Inc. said.",
    "Blogs grew. Technorati, a blog search engine, tracks them. Besides, the firm grew. Thus, an era ended. "
    "Wikia, an encyclopedia, grew. Lately, the site fell. Oddly, a man came. Maria, the novice, sang. Dogs, a pet.",
    "It grew. Edinburgh-based Rockstar said so. Hong Kong-listed shares fell. State-owned firms grew. "
    "Paris-born actors came. Oslo-basedx went. Wire-based systems failed; the wire held.",
]


def test_capitalised_names_kernel_reads_sentence_starts_as_the_pattern_does() -> None:
    """Since v14 a word that only starts sentences, as a verb's subject, is a name unless the text
    writes it in lower case or any sentence may start with it; v13 read none of them."""
    hashes, off = en_names(SENTENCE_STARTS)
    older, older_off = en_names(SENTENCE_STARTS, SENTENCE_START_NAMES_SINCE - 1)
    for d, text in enumerate(SENTENCE_STARTS):
        inside = {w.lower() for w in EN_NAME.findall(text)} - EN_NOT_NAMES
        want = sorted(set(hash_words(sorted(inside | sentence_start_names(text))).tolist()))
        assert hashes[off[d] : off[d + 1]].tolist() == want, text
        assert older[older_off[d] : older_off[d + 1]].tolist() == sorted(set(hash_words(sorted(inside)).tolist()))
    assert sentence_start_names(SENTENCE_STARTS[0]) == {"virgin"}
    assert sentence_start_names(SENTENCE_STARTS[1]) == {"britain"}  # two spaces; Police and He any story has
    assert sentence_start_names(SENTENCE_STARTS[2]) == {"arnaud", "gambill", "seles"}
    assert sentence_start_names(SENTENCE_STARTS[3]) == {"vodafone"}  # not the headline's Mobile
    assert sentence_start_names(SENTENCE_STARTS[4]) == {"microsoft"}  # no cut word, no imperative
    assert sentence_start_names(SENTENCE_STARTS[5]) == {"apple"}  # virgin is written in lower case
    # Separately: an adverb in -ly before its comma; calls, as often a plural noun, is no verb
    assert sentence_start_names(SENTENCE_STARTS[6]) == {"britain", "france", "tories", "google"}
    assert sentence_start_names(SENTENCE_STARTS[7]) == {"acme", "globex"}  # a dateline's dash, not any dash
    assert sentence_start_names(SENTENCE_STARTS[8]) == {"initech", "pied", "hooli", "massive"}
    # an apposition after the comma; not after a connective (Besides, Thus) or a word in -ly
    assert sentence_start_names(SENTENCE_STARTS[9]) == {"technorati", "wikia", "maria", "dogs"}
    # a participle of place after the hyphen, a whole word; not owned; wire is written in lower case
    assert sentence_start_names(SENTENCE_STARTS[10]) == {"edinburgh", "hong", "paris"}


STATEMENT = ("{c} said on Tuesday it had agreed to buy a regional rival for 420 million dollars in cash. "
             "{c} has been looking for a deal since the spring, when its founder stepped down. "
             "The board of the smaller company backed the offer, which values its shares at a premium of "
             "about a third to their price before talks were disclosed. {c} will pay with cash on hand and a "
             "new loan, and expects the deal to close by the end of the year.")


APPOSITION = ("{c}, a maker of industrial pumps based in Ohio, agreed on Tuesday to buy a regional rival for 420 "
              "million dollars in cash. The board of the smaller company backed the offer, which values its shares "
              "at a premium of about a third to their price before talks were disclosed. {c}, the larger of the two, "
              "expects the deal to close by the end of the year and will pay with cash on hand and a new loan.")


def test_a_company_introduced_by_an_apposition_at_sentence_starts_is_another_company() -> None:
    """Ventora, a maker of ...: a name a story introduces with an apposition at its sentences'
    starts, replaced by another, is another story; a reprint of it still merges."""
    status, _, kind = decide_pair(APPOSITION.format(c="Ventora"), APPOSITION.format(c="Halbrook"))
    assert status is Status.UNIQUE and kind == "entity"
    reprint = APPOSITION.format(c="Ventora") + "\nShare this article"
    assert decide_pair(APPOSITION.format(c="Ventora"), reprint)[0] is Status.DUPLICATE


ALLEGED = ("Tensions between the two countries have risen since a suicide attack on the parliament two weeks "
           "ago. {c} alleges the attack was backed by a foreign intelligence service and has moved troops to the "
           "border. {c} admits that talks are the only way out, but wants the groups behind the attack banned first.")


def test_a_country_named_only_as_the_subject_of_a_reporting_verb_is_another_country() -> None:
    """India alleges ..., India admits ...: a name a story writes only at its sentences' starts, as
    the subject of a reporting verb (not only said or told), replaced by another, is another story."""
    status, _, kind = decide_pair(ALLEGED.format(c="India"), ALLEGED.format(c="Georgia"))
    assert status is Status.UNIQUE and kind == "entity"
    assert decide_pair(ALLEGED.format(c="India"), ALLEGED.format(c="India") + "\nPrint")[0] is Status.DUPLICATE


PLACED = ("The developer behind the driving series said on Monday that its next game would reach shops in the "
          "spring. {p}-based staff have worked on it for three years, and the studio hired two hundred testers "
          "for the last months of the work. {p}-based managers expect the game to sell well in Europe, where the "
          "series has always been strongest, and in Japan.")


def test_the_same_story_about_staff_based_elsewhere_is_another_story() -> None:
    """Edinburgh-based staff ...: a place written only before a hyphen and a participle of place at
    its sentences' starts, replaced by another, is another story; a reprint of it still merges."""
    status, _, kind = decide_pair(PLACED.format(p="Edinburgh"), PLACED.format(p="Glasgow"))
    assert status is Status.UNIQUE and kind == "entity"
    assert decide_pair(PLACED.format(p="Edinburgh"), PLACED.format(p="Edinburgh") + "\nPrint")[0] is Status.DUPLICATE


def test_the_same_statement_by_another_company_named_only_at_sentence_starts_is_unique() -> None:
    """A story that names its company only as its sentences' subject (Virgin said ..., Virgin
    has ...) is another story when the company is another: v13 read no name there and merged them."""
    status, _, kind = decide_pair(STATEMENT.format(c="Ventora"), STATEMENT.format(c="Halbrook"))
    assert status is Status.UNIQUE and kind == "entity"
    reprint = STATEMENT.format(c="Ventora").replace("in cash. ", "in cash, the company said. ")
    status, original, _ = decide_pair(STATEMENT.format(c="Ventora"), "Deal news\n" + reprint)
    assert status is Status.DUPLICATE and original == "first"


WIRE = ("LONDON (Reuters) - {c} said on Tuesday it would cut 2,000 jobs over the next two years as it moves "
        "more of its production overseas, sending its shares up 4 percent in early trade. The company, which "
        "employs about 30,000 people worldwide, said the cuts would save 150 million pounds a year by 2026.")


@pytest.mark.parametrize(("first", "second"), [("Vodafone", "Unilever"), ("Acme Corp", "Globex Corp")])
def test_a_wire_story_about_another_company_named_after_its_dateline_is_unique(first: str, second: str) -> None:
    """A wire story names its subject right after the dateline's dash, and a company's legal form
    (Corp) is the same in both: the first word of the run is the name that changed."""
    status, _, kind = decide_pair(WIRE.format(c=first), WIRE.format(c=second))
    assert status is Status.UNIQUE and kind == "entity"
    reprint = WIRE.format(c=first).replace("(Reuters)", "(AP)").replace("early trade", "early trading")
    assert decide_pair(WIRE.format(c=first), reprint)[:2] == (Status.DUPLICATE, "first")


def test_merge_order_merges_each_document() -> None:
    first, second = np.array([1, 5, 2], dtype=np.uint64), np.array([3, 0, 9], dtype=np.uint64)
    order, off = kent.merge_order(first, np.array([0, 2, 3]), second, np.array([0, 1, 3]))
    joined = np.concatenate([first, second])
    assert joined[order].tolist() == [1, 3, 5, 0, 2, 9] and off.tolist() == [0, 3, 6]


async def test_explain_and_eval_read_a_reprint_header_as_the_engine_does() -> None:
    from neardup.config import load_settings
    from neardup.engine import Engine
    from neardup.explain import explain_pair
    from neardup.learning.evaluate import pair_features
    from neardup.storage.memory import MemoryFingerprintStore

    body = NOTICE.format(c="深圳市华为技术有限公司")
    a, b = {"id": "r2", "text": f"转载第2次 编号00012。{body}"}, {"id": "r3", "text": f"转载第3次 编号00012。{body}"}
    settings = load_settings(store_url="memory://")
    report = await explain_pair(settings, a, b)
    assert report["critical_differences"] == []
    engine = Engine(settings, MemoryFingerprintStore())
    feats = pair_features(engine, [Document(id=a["id"], text=a["text"]), Document(id=b["id"], text=b["text"])],
                          [{"a": "r2", "b": "r3", "label": 1}])
    assert feats["critical"].tolist() == [False]
    batch = {"id": "b1", "text": body + "（第1批）"}, {"id": "b2", "text": body + "（第2批）"}
    assert (await explain_pair(settings, *batch))["critical_differences"] != []


def test_a_polarity_difference_is_not_called_a_swap() -> None:
    # 应当 elsewhere carries the same fill as the replaced 可以: no swap for all that
    text = PETITIONS.format(a=1200, b=980).replace("有所提高", "有所提高，可以继续推广") + "各单位应当认真落实。"
    status, _, kind = decide_pair(text, text.replace("可以", "不得"))
    assert status is Status.UNIQUE and kind == "polarity"
    with Deduplicator() as dedup:
        dedup.decide({"id": "a", "text": text})
        d = dedup.decide({"id": "b", "text": text.replace("可以", "不得")})
    assert d.evidence.critical is not None and "swapped" not in d.evidence.critical.term


MEETING = ("国务院总理{p}今天在人民大会堂会见了来访的日本经济代表团，双方就进一步加强两国经贸合作交换了意见。"
           "{p}表示，中方愿同日方一道，推动双边贸易和投资持续健康发展。会见后，双方签署了三项合作协议。")


def test_a_name_written_as_words_no_dictionary_knows_is_unique() -> None:
    # 朱镕基 is a dictionary name; 何炼成 (何 is no surname on its own) reads as two ordinary words:
    # the other text's name is looked up by its contexts in this text's words
    status, _, kind = decide_pair(MEETING.format(p="朱镕基"), MEETING.format(p="何炼成"))
    assert status is Status.UNIQUE and kind == "entity"


RAIDED = ("一些厂家已经被有关部门查处。为{p}组装车的这些工厂，为什么敢这样做？{p}花巨资为他的非法组装车购买了全套牌照。"
          "{p}的这批组装车车型是小轿车，已经在本地市场上销售多时。{p}租用部队的仓库和公安部门的场地存放车辆。"
          "有关部门已经对此事展开全面调查，结果将向社会公布。")


def test_a_person_named_at_several_sentences_starts_written_as_words_is_unique() -> None:
    """龚德俊 is read as a person (a surname before a given name); 闻邦椿 is not. The one mention
    inside a sentence follows a particle alone (为), no word to place the name by; the others
    start their sentences, where only the right context places a name, which one edit could
    leave beside other words: the same words at two sentences' starts, before two contexts of the
    same name, are the name replaced. One such place rewritten (厂长) is still a reprint."""
    status, _, kind = decide_pair(RAIDED.format(p="龚德俊"), RAIDED.format(p="闻邦椿"))
    assert status is Status.UNIQUE and kind == "entity"
    once = RAIDED.format(p="龚德俊").replace("龚德俊花巨资", "厂长花巨资")
    status, original, _ = decide_pair(RAIDED.format(p="龚德俊"), once)
    assert status is Status.DUPLICATE and original == "first"


def test_a_name_where_the_other_text_has_an_ordinary_word_is_unique() -> None:
    body = ("2024年3月1日，全市安全生产工作会议在北京召开，会议由{p}主持，审议通过了2024年安全生产工作要点。"
            "会议要求各区县切实落实安全生产责任，加强隐患排查治理，坚决遏制重特大事故发生。")
    # 主任 is no name; 王新民 is (a surname standing alone): the sentence naming him is missing
    # from the first text, which misses its own sentence there and shares the sentence's anchors
    status, _, kind = decide_pair(body.format(p="主任"), body.format(p="王新民"))
    assert status is Status.UNIQUE and kind == "entity"


def test_one_mention_renamed_where_the_place_is_named_twice_is_unique() -> None:
    body = ("成都本地商家今日发布促销信息，全场数码产品八折销售，活动持续一周。"
            "联系电话请见官网，销售地址：{p}一环路南二段新世纪电脑城东楼十八楼。")
    status, _, kind = decide_pair(body.format(p="成都市"), body.format(p="文锦渡"))
    assert status is Status.UNIQUE and kind == "entity"


@pytest.mark.parametrize("added", [
    "来源：中国政府网 作者：赵磊 ",  # a byline's names are furniture
    "相关阅读：王新民当选市作协主席，他表示将继续扎根基层创作。",  # a sentence added, not rewritten
])
def test_a_reprint_adding_a_byline_or_a_sentence_with_a_name_still_merges(added: str) -> None:
    body = MEETING.format(p="朱镕基")
    status, original, _ = decide_pair(body, added + body)
    assert status is Status.DUPLICATE and original == "first"


@pytest.mark.parametrize("seed", range(3))
def test_slot_contexts_are_the_contexts_a_name_there_would_have(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    for _ in range(30):
        n = int(rng.integers(1, 20))
        hashes = rng.integers(0, 6, size=n).astype(np.uint64)
        flags = rng.random(n) < 0.3
        breaks = rng.random(n) < 0.2
        breaks[0] = True
        skip = (rng.random(n) < 0.2) & ~flags  # a company's legal form (v10): left out of every context
        left, right, worded = kent.slot_contexts(hashes, np.array([0, n], dtype=np.int64), flags, breaks, skip, 3, 7)
        one = np.arange(n), np.zeros(n, dtype=np.bool_)  # each name one token
        for i in np.flatnonzero(flags).tolist():
            entries, tokens, _ = kent.entity_entries(hashes, np.array([0, n], dtype=np.int64), flags, hashes,
                                                     np.zeros(n, dtype=np.uint64), np.zeros(0, dtype=np.uint64),
                                                     breaks, skip, 3, 7, 0xAB, 0xCD00, 0xEF00, *one)
            mine = {int(v) >> 16 for v, t in zip(entries.tolist(), tokens.tolist(), strict=True)
                    if t == i and int(v) & 0xFFFF != 0xCD00}
            before, after = _read_sides(breaks, skip, i, 3)
            assert mine == {c for c, read in ((int(left[i]), before), (int(right[i]), after)) if read}
        for i in range(n):  # whether a side holds a token that is no name
            before, after = _read_sides(breaks, skip, i, 3)
            assert worded[i].tolist() == [any(not flags[j] for j in before), any(not flags[j] for j in after)]


def _read_sides(breaks: np.ndarray, skip: np.ndarray, i: int, k: int) -> tuple[list[int], list[int]]:
    """The tokens a name at token ``i`` reads each side: up to ``k`` of its sentence that are not
    skipped."""
    n = len(breaks)
    before = [j for j in range(i - 1, -1, -1) if not breaks[j + 1 : i + 1].any() and not skip[j]][:k]
    after = [j for j in range(i + 1, n) if not breaks[i + 1 : j + 1].any() and not skip[j]][:k]
    return before, after


def test_one_sided_name_needs_the_slot_both_sides_words_and_a_name_not_carried() -> None:
    fb, pf = kprof.NAME_FILL_BYTE, kprof.NAME_PRESENT_FILL
    left = np.arange(10, 20, dtype=np.uint64)  # token t's contexts: left 10 + t, right 20 + t
    right = np.arange(20, 30, dtype=np.uint64)
    letters = np.zeros(10, dtype=np.uint64)
    words, glued, breaks = np.ones(10, dtype=np.bool_), np.ones(10, dtype=np.bool_), np.zeros(10, dtype=np.bool_)
    breaks[0] = True

    def theirs_name(l_ctx: int, r_ctx: int, letter_set: int = 0xF00000) -> np.ndarray:
        fill = fb << 8 | 7
        return np.array(sorted([l_ctx << 16 | fill, r_ctx << 16 | fill, ((7 << 24) | letter_set) << 16 | pf]),
                        dtype=np.uint64)

    common = np.zeros(10, dtype=np.bool_)

    worded = np.ones((10, 2), dtype=np.bool_)

    def slot(mine: np.ndarray, theirs: np.ndarray, letters: np.ndarray, words: np.ndarray,
             glued: np.ndarray, rare: np.ndarray = common, worded: np.ndarray = worded,
             inner: np.ndarray = common) -> tuple[int, int]:
        return kent.one_sided_name(mine, theirs, left, right, worded, letters, letters, words, words, glued, rare,
                                   inner, breaks, 4, fb, pf, kprof.NAME_LETTERS_FILL)

    mine = np.array([((9 << 24) | 0x00000F) << 16 | pf], dtype=np.uint64)  # a name of its own elsewhere
    # their name stands where mine has tokens 3..4: its left context before 3, its right after 4
    assert slot(mine, theirs_name(13, 24), letters, words, glued) == (3, 4)
    # one token in its place is one word: a synonym (我国 for 中国), not a name ...
    assert slot(mine, theirs_name(13, 23), letters, words, glued) == (-1, -1)
    # ... unless the dictionary rarely sees it (稀树 where the other text has 墨西哥)
    rare = common.copy()
    rare[3] = True
    assert slot(mine, theirs_name(13, 23), letters, words, glued, rare) == (3, 3)
    # a token that is no word (a figure, a particle) or a name of mine ends the slot
    no_word = words.copy()
    no_word[4] = False
    assert slot(mine, theirs_name(13, 24), letters, no_word, glued) == (-1, -1)
    # ... but a particle's character between two words (廖/全/京: ``inner``) may stand inside
    # the name, never end it
    inside = common.copy()
    inside[4] = True
    assert slot(mine, theirs_name(13, 25), letters, no_word, glued, inner=inside) == (3, 5)
    assert slot(mine, theirs_name(13, 24), letters, no_word, glued, inner=inside) == (-1, -1)
    # ... and so does punctuation between two tokens (管理，保障 is no name)
    apart = glued.copy()
    apart[4] = False
    assert slot(mine, theirs_name(13, 24), letters, words, apart) == (-1, -1)
    # both sides of only names (inside a list: 镇 鹜 窝 村 / 王 素 琴) are every listed name's
    # context: no slot; one side of names (广州、天津、重庆 -> 约旦、天津、重庆) is one place
    for side in (0, 1):
        listed = worded.copy()
        listed[3 if side == 0 else 4, side] = False
        assert slot(mine, theirs_name(13, 24), letters, words, glued, worded=listed) == (3, 4)
    inside_a_list = worded.copy()
    inside_a_list[3, 0] = inside_a_list[4, 1] = False
    assert slot(mine, theirs_name(13, 24), letters, words, glued, worded=inside_a_list) == (-1, -1)
    # mine carries their name (the same presence entry): not another name
    carried = np.sort(np.append(mine, theirs_name(13, 24)[-1:]))
    assert slot(carried, theirs_name(13, 24), letters, words, glued) == (-1, -1)
    # written alike: half the letters or more shared
    alike = letters.copy()
    alike[3] = 0xF00000
    assert slot(mine, theirs_name(13, 24), alike, words, glued) == (-1, -1)
    # a record without presence entries says nothing of its names; the deciding text's own
    # profile without them has none (its other name is found all the same)
    bare = np.zeros(0, dtype=np.uint64)
    assert slot(mine, theirs_name(13, 24)[:-1], letters, words, glued) == (-1, -1)
    assert slot(bare, theirs_name(13, 24), letters, words, glued) == (3, 4)
    # one token before it in its sentence is enough when that token is a word, whether or not a
    # particle's character is in it (经查 before 费/美玲: ``sides``), and no word stands for a name
    late = breaks.copy()
    late[2] = True
    not_a_name = words.copy()
    not_a_name[2] = False  # 经查 holds 经: it may stand beside a name, not for one
    for side, want in ((True, (3, 4)), (False, (-1, -1))):
        sides = not_a_name.copy()
        sides[2] = side
        assert kent.one_sided_name(mine, theirs_name(13, 24), left, right, worded, letters, letters, not_a_name,
                                   sides, glued, common, common, late, 4, fb, pf, kprof.NAME_LETTERS_FILL) == want


def test_another_person_whose_name_holds_a_particles_character_is_unique() -> None:
    """A name no dictionary knows, cut by the segmenter around a particle's character (廖/全/京,
    吴/有/彩), where the other text names 张耒: the character stands inside the name's slot."""
    body = ("立春过后，各地气温逐步回升。宋朝诗人{p}就有“残雪暗随冰笋滴，新春偷向柳梢归”的诗句，描写的正是"
            "早春时节冰雪消融、万物复苏的景象。气象部门提醒，本周后期仍有一次冷空气过程，市民出行注意保暖。")
    for other in ("廖全京", "吴有彩"):
        status, _, kind = decide_pair(body.format(p="张耒"), body.format(p=other))
        assert status is Status.UNIQUE and kind == "entity", other
    assert decide_pair(body.format(p="张耒"), body.format(p="张耒"))[0] is Status.DUPLICATE


def test_another_foreign_name_written_with_a_middle_dot_is_unique() -> None:
    """A transliterated name whose parts stand a middle dot apart (伊·福阿), where the other text
    names 戴高乐: the dot joins the parts as punctuation would not, so they are one slot."""
    body = ("新浪体育讯 记者{p}报道 作为西部常规赛冠军，太阳队在季后赛首轮的表现令人失望，主教练赛后表示球队需要在"
            "防守端做出调整，下一场比赛将于周六晚在主场进行，球队上下都憋着一股劲。")
    status, _, kind = decide_pair(body.format(p="戴高乐"), body.format(p="伊·福阿"))
    assert status is Status.UNIQUE and kind == "entity"
    assert decide_pair(body.format(p="戴高乐"), body.format(p="戴高乐"))[0] is Status.DUPLICATE


def test_another_place_first_or_last_in_a_list_is_unique() -> None:
    """A list's first or last place replaced by one no dictionary knows: one side of the slot is
    the list's other names, the other side words (适用于, 的相关)."""
    body = ("第二条 本办法适用于黄河流域{p}的相关县级行政区域。第三条 流域内各级人民政府应当加强生态保护和高质量发展"
            "工作，建立健全协调机制，统筹推进水资源节约集约利用和污染防治，每年向上一级人民政府报告工作进展情况。")
    for first, other in (("山西省、陕西省、河南省、山东省", "山西省、陕西省、河南省、牛角湾村"),
                         ("山东省、山西省、陕西省、河南省", "牛角湾村、山西省、陕西省、河南省")):
        status, _, kind = decide_pair(body.format(p=first), body.format(p=other))
        assert status is Status.UNIQUE and kind == "entity", other
    assert decide_pair(body.format(p=first), body.format(p=first))[0] is Status.DUPLICATE


def test_a_list_item_beside_names_where_the_other_text_has_a_name_is_another_name() -> None:
    """One word of a list of names (、 beside 天津), where the other text lists 广州, is another place
    even when the dictionary tags it otherwise (约旦, an adverb to jieba) and sees it often (a
    common word alone, outside a list, stays an edit's synonym: the test below)."""
    body = ("该公司是国内领先的房地产开发商，其土地资源分布于{p}、天津、重庆等二十四个主要城市，"
            "截至今年九月底，公司在建项目共计一百三十个，全年销售目标已完成八成以上，现金流保持稳健。")
    status, _, kind = decide_pair(body.format(p="广州"), body.format(p="约旦"))
    assert status is Status.UNIQUE and kind == "entity"
    assert decide_pair(body.format(p="广州"), body.format(p="广州"))[0] is Status.DUPLICATE


def test_a_rare_word_where_the_other_text_has_a_name_is_another_name() -> None:
    """One dictionary word where the other text has a name is a synonym when the dictionary sees it
    often (城市), and may be another name when it rarely does (稀树, 14 times)."""
    body = "当地时间周二，{p}的一座火山再次喷发，火山灰柱高达三千米，附近多个城镇的居民已被紧急疏散，机场暂时关闭。"
    status, _, kind = decide_pair(body.format(p="墨西哥"), body.format(p="稀树"))
    assert status is Status.UNIQUE and kind == "entity"
    freq = segmenter().frequencies(*_tokens(["稀树", "城市"])[:3])
    assert freq[0] < RARE_WORD <= freq[1]


CREDITED = ("昨天下午，市体育中心举行了一场友谊赛，吸引了近万名球迷到场观战。比赛中，主队球员积极拼抢，"
            "多次制造威胁，最终以两球的优势取胜。赛后，主教练表示，球队的状态正在逐步回升，"
            "下一阶段将重点加强防守训练，争取在联赛中取得更好的成绩。“我们还有很多需要改进的地方。”他笑着说。{c}")


@pytest.mark.parametrize("credits", [("(陈醉)", "(唐运张)"), ("（陈醉）", "（唐运张）")])
def test_the_same_story_under_another_authors_credit_is_another_story(credits: tuple[str, str]) -> None:
    """A credit in brackets names its author alone, with no words beside it to compare: another
    name there is another document, while a credit dropped, or an editor's line, is the page's."""
    status, _, kind = decide_pair(CREDITED.format(c=credits[0]), CREDITED.format(c=credits[1]))
    assert status is Status.UNIQUE and kind == "entity"
    assert decide_pair(CREDITED.format(c=credits[0]), CREDITED.format(c=""))[0] is Status.DUPLICATE
    editors = CREDITED.format(c="(责任编辑：陈醉)"), CREDITED.format(c="(责任编辑：唐运张)")
    assert decide_pair(*editors)[0] is Status.DUPLICATE


REPORTED = ("新华社北京1月9日电 昨天下午，市体育中心举行了一场友谊赛，吸引了近万名球迷到场观战。"
            "比赛中，主队球员积极拼抢，多次制造威胁，最终以两球的优势取胜。"
            "赛后，主教练表示，球队的状态正在逐步回升，下一阶段将重点加强防守训练。")


@pytest.mark.parametrize(("byline", "other"), [("本报记者曹照琴谢国明王尧\n", "本报记者曹照琴田小楠王尧\n"),
                                               ("本报记者：潘清 ", "本报记者：李四 "),
                                               ("（记者诸葛仓麟）", "（记者沙立仓麟）")])
def test_the_same_story_under_another_reporters_byline_is_another_story(byline: str, other: str) -> None:
    """A reporter (记者) is the story's, not the page's as an editor is: another name in the
    reporter's place, the byline's other names and words around it the same, is another document;
    the byline dropped is a reprint."""
    story = (byline + REPORTED) if byline.endswith(("\n", " ")) else (REPORTED + byline)
    status, _, kind = decide_pair(story, story.replace(byline, other))
    assert status is Status.UNIQUE and kind == "entity"
    assert decide_pair(story, story.replace(byline, ""))[0] is Status.DUPLICATE


@pytest.mark.parametrize("credits", [("（王彦田周亮）", "（韦凯辉周亮）"), ("（刘全应李金宝）", "（何东兴李金宝）")])
def test_a_credit_of_two_authors_with_one_replaced_is_another_story(credits: tuple[str, str]) -> None:
    """Names side by side in a credit have only each other as context, and the dictionary may cut
    the new one differently (韦凯/辉): one author replaced is another document all the same, while
    the credit kept, dropped or followed by an editor's name is the page's."""
    status, _, kind = decide_pair(CREDITED.format(c=credits[0]), CREDITED.format(c=credits[1]))
    assert status is Status.UNIQUE and kind == "entity"
    for kept in (credits[0], "", credits[0] + "（责任编辑：唐运张）"):
        assert decide_pair(CREDITED.format(c=credits[0]), CREDITED.format(c=kept))[0] is Status.DUPLICATE
    dropped = CREDITED.format(c="（责任编辑：唐运张）")
    assert decide_pair(CREDITED.format(c=credits[0]), dropped)[0] is Status.DUPLICATE


def test_a_copy_cut_before_a_credit_under_a_sites_header_is_a_reprint() -> None:
    """The credit's other names (日报社) are gone from the copy, so the site's name in its header
    (中国经济网, read as 中国) replaced no one, though the credit's place (九江) is in the story."""
    story = CREDITED.format(c="").replace("市体育中心", "九江市体育中心")
    copy = "2018-07-28 19:44　中国经济网\n原标题：" + story
    assert decide_pair(story + "（九江日报社潘浔）", copy)[0] is Status.DUPLICATE


def test_a_credit_is_brackets_of_a_few_names_alone() -> None:
    text = "正文。 (王彦田周亮) 他说王彦田来了。 (王彦田对周亮的看法很重要吗) (王彦田, 周亮) (Wang Yantian)"
    assert credit_span(text, 5, 8) == (5, 10)
    for name in ("王彦田来", "王彦田对", "王彦田,", "Wang"):
        assert credit_span(text, text.index(name), text.index(name) + 3) is None, name


BRAND_REVIEW = ("售1600元 {b}3.0英寸触摸屏S230卡片机。{b}在外观上采用了金属外壳，时尚又靓丽，很受年轻人的欢迎。"
          "{b}拥有拉丝处理的铝制外壳，平直简洁的机身没有半点浮华的气息。{b}搭载了一块感光元件，支持光学变焦，"
          "画质清晰细腻。一句话点评：采用了流线的外形，{b}相机配置上属于主流，值得购买。")


def test_a_name_the_dictionary_cuts_short_at_one_mention_is_still_one_name() -> None:
    """姚梅慧 is read as 姚梅 before 3.0 and whole elsewhere: the short reading's sentence is the
    same name's, so the review of another brand is another review (the dictionary reads no name
    in 尼康 for the new name to replace), and a reprint of it with a footer is still one."""
    status, _, kind = decide_pair(BRAND_REVIEW.format(b="尼康"), BRAND_REVIEW.format(b="姚梅慧"))
    assert status is Status.UNIQUE and kind == "entity"
    reprint = BRAND_REVIEW.format(b="姚梅慧") + "（责任编辑：赵磊）"
    assert decide_pair(BRAND_REVIEW.format(b="姚梅慧"), reprint)[0] is Status.DUPLICATE


STORY = ("Fire crews were called to the church on Tuesday after smoke was seen from the roof. The fire "
         "started at around {a} local time in the church's gift shop and was under control by {b}, a "
         "spokesman said, adding that nobody had been hurt and that the cause was still being investigated "
         "by officers from the state fire service and police.")


def test_clock_times_of_the_story_are_figures_and_a_pages_times_furniture() -> None:
    from neardup.text.stamps import mask_timestamps, mask_timestamps_batch

    text = "Updated: 10:30 " + STORY.format(a="6:30am", b="8:15am")
    masked = mask_timestamps(text)
    assert "10:30" not in masked and "6:30am" in masked and "8:15am" in masked  # a labelled field's time is masked
    assert mask_timestamps_batch([text]) == [masked]
    status, _, kind = decide_pair(STORY.format(a="6:30am", b="8:15am"), STORY.format(a="8:15am", b="6:30am"))
    assert status is Status.UNIQUE and kind == "figure"


CAMERA = ("每秒八张、高清摄像 佳能单反7D最新价格（中关村在线数码影像行情报道）佳能EOS-7D是一款拥有1800万像素成像能力，"
          "每秒钟8张连拍性能的单反相机，目前该机在{place}的最新报价为8999元，感兴趣的朋友不妨关注一下。")


@pytest.mark.parametrize(("first", "second"), [
    ("2016-09-18 18:33　来源：环球网　作者：陈静\n", "2018-02-16 10:19　来源：中国政府网　作者：王丽华\n"),
    ("来源：人民网　作者：赵磊\n", "来源：新华网　作者：钱卫东\n"),
])
def test_reprints_whose_header_lines_name_other_authors_and_sources_merge(first: str, second: str) -> None:
    status, original, _ = decide_pair(first + CAMERA.format(place="北京"), second + CAMERA.format(place="北京"))
    assert status is Status.DUPLICATE and original == "first"


def test_a_name_after_an_author_line_break_is_the_storys() -> None:
    header = "作者：飘雪　[{place}行情] "
    status, _, kind = decide_pair(header.format(place="河南") + CAMERA.format(place="河南"),
                                  header.format(place="湖北") + CAMERA.format(place="湖北"))
    assert status is Status.UNIQUE and kind == "entity"


def test_a_byline_marker_unflags_only_the_tokens_written_together_after_it() -> None:
    text = "作者：飘雪 河南行情"  # 作者/飘/雪/河南/行情: the colon and the space are no tokens
    words = ["作者", "飘", "雪", "河南", "行情"]
    starts, ends = np.array([0, 3, 4, 6, 8]), np.array([2, 4, 5, 8, 10])
    assert [text[a:b] for a, b in zip(starts, ends, strict=True)] == words
    flags = np.array([False, True, True, True, False])
    none = np.zeros(0, dtype=np.uint64)
    kent.byline_names(starts, ends, np.array([0, len(words)]), hash_words(words), flags,
                      np.sort(hash_words(["作者"])), none, none, 3, 8)
    assert flags.tolist() == [False, False, False, True, False]


def test_an_author_is_a_pages_marker_only_after_the_pages_source() -> None:
    words = ["来源", "：", "新浪网", "作者", "赵", "磊", "作者", "杨", "毅"]  # the header's author, then the story's
    starts = np.cumsum([0] + [len(w) for w in words[:-1]])
    ends = starts + np.array([len(w) for w in words])
    named = np.array([w in ("赵", "磊", "杨", "毅") for w in words])
    offsets, hashes = np.array([0, len(words)]), hash_words(words)
    flags = named.copy()
    kent.byline_names(starts, ends, offsets, hashes, flags, *byline_markers(), 3, 3)
    assert flags.tolist() == [False] * 7 + [True, True]  # 来源 is 3 tokens before the first 作者 only
    flags = named.copy()
    kent.byline_names(starts, ends, offsets, hashes, flags, *byline_markers(False), 3, 3)
    assert not flags.any()  # before v14 every 作者 was the page's


SCHOLAR = ("来自哈尔滨理工大学的访问学者{p}向记者表示，独在异乡为异客，每逢佳节倍思亲，春节前夕他和同事们一起"
           "包饺子、写春联，感受到了浓浓的年味。")


@pytest.mark.parametrize(("first", "second"), [("单兴缘", "张舟"), ("单兴缘", "安学发"), ("窦建军", "陈军")])
def test_a_person_the_dictionary_cuts_into_characters_is_another_person(first: str, second: str) -> None:
    """jieba's dictionary cut leaves a name it lacks as its characters (单/兴/缘): a run of two or
    three that starts with a common surname is a person, and the whole run is the name."""
    status, _, kind = decide_pair(SCHOLAR.format(p=first), SCHOLAR.format(p=second))
    assert status is Status.UNIQUE and kind == "entity"
    with Deduplicator() as dedup:
        dedup.decide({"id": "first", "text": SCHOLAR.format(p=first)})
        d = dedup.decide({"id": "second", "text": SCHOLAR.format(p=second)})
    assert d.evidence.critical is not None and second in d.evidence.critical.term


@pytest.mark.parametrize("name", ["单兴缘", "窦建军", "邹秀兰"])
def test_a_reprint_about_a_person_cut_into_characters_still_merges(name: str) -> None:
    text = SCHOLAR.format(p=name)
    status, original, _ = decide_pair(text, "转载自市政府网站。" + text.replace("，", ",") + "（责任编辑：李明）")
    assert status is Status.DUPLICATE and original == "first"


def _run_flags(words: list[str], surnames: str) -> list[bool]:
    cps, starts, ends, hashes = _tokens(words)
    n = len(words)
    flags, fills = np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.uint64)
    kent.single_char_names(cps, starts, ends, np.array([0, n]), hashes, flags, fills,
                           np.array(sorted(map(ord, surnames)), dtype=np.uint32), zh_suffix_tables()[1],
                           tables(True)[1], 3)
    return flags.tolist()


def test_a_run_of_two_or_three_characters_after_a_surname_is_a_person() -> None:
    assert _run_flags(["学者", "单", "兴", "缘", "表示"], "单") == [False, True, True, True, False]
    assert _run_flags(["学者", "陈", "军", "表示"], "陈") == [False, True, True, False]
    assert _run_flags(["学者", "兴", "缘", "表示"], "单") == [False] * 4  # no surname first
    assert _run_flags(["单", "兴", "缘", "乐", "表示"], "单") == [False] * 5  # four characters: a phrase
    assert _run_flags(["说", "单", "兴", "表示"], "单") == [False] * 4  # ... and so is a run begun before it
    assert _run_flags(["学者", "单", "的", "缘"], "单") == [False] * 4  # a particle is no name's


def _verb_run_flags(words: list[str], surnames: str, flagged: tuple[int, ...] = ()) -> list[bool]:
    cps, starts, ends, hashes = _tokens(words)
    n = len(words)
    flags, fills, joined = np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.uint64), np.zeros(n, dtype=np.bool_)
    flags[list(flagged)] = True
    kent.verb_run_names(cps, starts, ends, np.array([0, n]), hashes, flags, fills,
                        np.array(sorted(map(ord, surnames)), dtype=np.uint32), zh_suffix_tables()[1],
                        tables(True)[1], 3, zh_name_verbs(), joined)
    assert (joined == (flags & ~np.isin(np.arange(n), flagged))).all()
    return flags.tolist()


def test_a_run_of_a_name_and_the_verb_after_it_is_the_person() -> None:
    # three characters, then the verb they are the subject of: a run of four, once a phrase
    assert _verb_run_flags(["经济师", "任", "婷", "宇", "说"], "任") == [False, True, True, True, False]
    assert _verb_run_flags(["记者", "张", "生", "贵", "摄"], "张") == [False, True, True, True, False]
    assert _verb_run_flags(["学者", "单", "兴", "缘", "乐", "说"], "单") == [False] * 6  # five: a phrase
    assert _verb_run_flags(["学者", "单", "兴", "缘", "乐"], "单") == [False] * 5  # no verb last
    # where another reading found a name in the run (林/晓 after 章), nothing is added
    assert _verb_run_flags(["经济师", "章", "林", "晓", "说"], "章林", (2, 3)) == [False, False, True, True, False]
    assert _run_flags(["学者", "单", "表示"], "单") == [False] * 3  # one character alone


def test_a_persons_tokens_are_one_name_and_a_dictionarys_name_stands_alone() -> None:
    words = ["由", "王", "新民", "和", "北京", "上海", "主持"]
    cps, starts, ends, hashes = _tokens(words)
    n = len(words)
    flags = np.array([False, True, True, False, True, True, False])
    pieces = np.array([False, True, True, False, False, False, False])  # 北京, 上海: the dictionary's
    fills = hashes.copy()
    last, cont = kent.name_runs(cps, starts, ends, np.array([0, n]), flags, fills, pieces, 0)
    assert last.tolist() == [0, 2, 2, 3, 4, 5, 6]
    assert cont.tolist() == [False, False, True, False, False, False, False]
    assert int(fills[1]) == int(hash_words(["王新民"])[0]) and fills[4:6].tolist() == hashes[4:6].tolist()


def test_a_surname_and_a_word_after_punctuation_are_no_person() -> None:
    """兰，男: a surname's character and the word after a comma are two words (v9 reads the pair
    only when written together); v8 records read them as v8 did."""
    words = ["兰", "男", "现年"]
    text = "兰，男现年"
    starts, ends = np.array([0, 2, 3]), np.array([1, 3, 5])
    cps = np.array([ord(c) for c in text], dtype=np.uint32)
    for glued, want in ((True, [False, False, False]), (False, [True, True, False])):
        flags, fills = np.zeros(3, dtype=np.bool_), np.zeros(3, dtype=np.uint64)
        kent.surname_names(cps, starts, ends, np.array([0, 3]), hash_words(words), flags, fills,
                           np.array([ord("兰")], dtype=np.uint32), zh_suffix_tables()[1], tables(True)[1], glued,
                           np.zeros(3, dtype=np.bool_), False)
        assert flags.tolist() == want


RIVAL = ("自他开始以这个形象示人，便与{p}成为敌人，各走各路。要化这个妆原来十分费时，尤其是最后一场戏，"
         "化妆师足足花了五个小时才完成，拍摄结束时已是第二天凌晨。")


def test_a_rare_two_character_person_of_the_dictionary_is_a_name() -> None:
    """jieba tags many two-character words nr that are other words (陈述, 祝福); one that starts
    with a common surname and that it rarely sees is a person (成龙: 56 times)."""
    assert is_rare_person("成龙", 56, "nr") and not is_rare_person("陈述", 763, "nr")
    assert not is_rare_person("修正", 12, "nr") and not is_rare_person("成龙", 56, "n")
    for first, second in (("成龙", "乔丹"), ("乔丹", "袁枚")):
        status, _, kind = decide_pair(RIVAL.format(p=first), RIVAL.format(p=second))
        assert status is Status.UNIQUE and kind == "entity"
    text = RIVAL.format(p="成龙")
    status, original, _ = decide_pair(text, "转载自市政府网站。" + text.replace("，", ",") + "（责任编辑：李明）")
    assert status is Status.DUPLICATE and original == "first"


RAISINS = ("新疆小伙儿来到南京，在鼓楼附近摆起了卖葡萄干的摊子，街坊邻居都说这个年轻人实在，称得准，货也好，"
           "生意一直很红火，老顾客越来越多。{p}卖了3000公斤葡萄干。{p}说不会再涨价。{p}每天营业12个小时。"
           "他打算明年把家人也接过来一起做生意，在南京扎下根来，把新疆的好东西介绍给更多的人。")


def test_a_person_named_in_three_sentences_with_figures_and_polarity_beside_the_name_is_another_person() -> None:
    """Three sentences rewritten around a new name alone, each with a figure or a polarity word
    next to the name (so it changed with the name on both sides): another person, though the
    other text's name (买买提) is no name its rules read."""
    status, _, kind = decide_pair(RAISINS.format(p="买买提"), RAISINS.format(p="李建国"))
    assert status is Status.UNIQUE and kind == "entity"
    text = RAISINS.format(p="买买提")
    status, original, _ = decide_pair(text, "转载自市政府网站。" + text.replace("，", ",") + "（责任编辑：李明）")
    assert status is Status.DUPLICATE and original == "first"


# ---------------------------------------------------------- profile v10: people told apart more often

PUNISHMENT = ("关于给予{x}党内严重警告处分的决定。经查，{x}违反中央八项规定精神，违规收受礼品礼金，"
              "造成不良影响。经研究，决定给予{x}党内严重警告处分。")
MISSING = ("寻人启事。{x}，男，现年七十二岁，于本月三日上午在公园附近走失，走失时身穿蓝色外套，"
           "患有老年痴呆症。如有知情者请与家属联系，必有重谢。")


def _letters2(name: str) -> int:
    cps = np.array([ord(c) for c in name], dtype=np.uint32)
    return int(kent.letter_sets(cps, np.array([0]), np.array([len(name)]), np.array([True]), False,
                                zh_place_suffixes(), kent.SECOND_LETTERS)[0])


def test_two_people_whose_first_letter_sets_collide_are_two_people() -> None:
    """袁永强 and 韩志刚 share two of the three bits their first letter sets have (24 bits: two
    names of three characters do about one time in 30), which alone made them one name written
    two ways; their second sets (v10) do not, so the same notice about each is two notices."""
    assert _written_alike(_letters("袁永强"), _letters("韩志刚"))
    assert not _written_alike(_letters2("袁永强"), _letters2("韩志刚"))
    assert _written_alike(_letters2("中国银行"), _letters2("中国人民银行"))  # one name written two ways still is
    status, _, kind = decide_pair(PUNISHMENT.format(x="袁永强"), PUNISHMENT.format(x="韩志刚"))
    assert status is Status.UNIQUE and kind == "entity"


def _people(words: list[str], onto_names: bool = True) -> tuple[list[bool], list[bool]]:
    """(flags, joined) of the person patterns for surnames over ``words``: 新民 is flagged first,
    as the dictionary's name it is."""
    cps, starts, ends, hashes = _tokens(words)
    n = len(words)
    flags = np.array([w == "新民" for w in words], dtype=np.bool_)
    fills, joined = hashes * flags, np.zeros(n, dtype=np.bool_)
    kent.surname_names(cps, starts, ends, np.array([0, n]), hashes, flags, fills,
                       np.array(sorted(map(ord, "赵王")), dtype=np.uint32), zh_suffix_tables()[1], tables(True)[1],
                       True, joined, onto_names)
    kent.surname_word_names(cps, starts, ends, np.array([0, n]), hashes, flags, fills, zh_run_surnames(),
                            zh_given_tails(), zh_suffix_tables()[1], tables(True)[1], joined)
    return flags.tolist(), joined.tolist()


def test_a_surname_before_a_name_of_the_dictionary_is_a_person() -> None:
    """赵/新民: 新民 is a town of the dictionary, and after a lone surname a given name (v10)."""
    assert _people(["由", "赵", "新民", "主持"]) == ([False, True, True, False], [False, True, True, False])
    assert _people(["由", "赵", "新民", "主持"], onto_names=False)[1] == [False] * 4  # v9: the town alone


def test_a_surname_glued_to_the_first_character_of_its_given_name_is_a_person() -> None:
    """卫志/刚, 王国/庆: jieba glues the surname to the given name's first character; a last
    character that given names end with (刚, 庆) makes the pair a person, not a word that is one
    more often (程度/越/接近: 越 is), nor three single characters (周一/鸣/笛)."""
    assert _people(["经查", "卫志", "刚", "违反"])[0] == [False, True, True, False]
    assert _people(["授予", "王国", "庆", "同志"])[1] == [False, True, True, False]
    assert not any(_people(["收入", "程度", "越", "接近"])[0])
    assert not any(_people(["下", "周一", "鸣", "笛"])[0])


def test_a_name_that_starts_its_sentence_where_the_other_text_has_none_is_another_person() -> None:
    """寻人启事。费美玲，男: 费 is a word alone (fee), so 费/美玲 is read as no name; where the
    earlier notice read 郑丽华 at the start of the same sentence, the words in its place stand for
    another person (its right context, of two words at least, and a name named there only)."""
    status, _, kind = decide_pair(MISSING.format(x="郑丽华"), MISSING.format(x="费美玲"))
    assert status is Status.UNIQUE and kind == "entity"


DELETED = ("本条例所称精神卫生工作，是指预防精神障碍、促进康复的各项活动。赵新民精神卫生工作实行预防为主的方针，"
           "坚持预防、治疗和康复相结合的原则。第三条精神卫生工作实行预防为主的方针，坚持预防、治疗和康复相结合。"
           "各级人民政府应当将精神卫生工作纳入国民经济和社会发展规划，建设和完善精神障碍的预防、治疗和康复服务体系。"
           "县级以上人民政府卫生行政部门主管本行政区域的精神卫生工作，其他有关部门在各自职责范围内负责有关工作。")


def test_a_sentence_the_other_text_has_too_holds_no_other_name() -> None:
    """A copy without the sentence that starts with 赵新民: its 第三条 starts a sentence that the
    original has word for word, so it stands for no name of the original, whose sentence
    starting with 赵新民 goes on with the same words."""
    cut = DELETED.replace("赵新民精神卫生工作实行预防为主的方针，坚持预防、治疗和康复相结合的原则。", "")
    status, original, _ = decide_pair(DELETED, cut)
    assert status is Status.DUPLICATE and original == "first"


LAW = ("第八条 煤矿企业必须坚持安全第一、预防为主的安全生产方针，建立健全安全生产的责任制度和群防群治制度。"
       "第九条 {x}鼓励和支持在开发利用煤炭资源过程中采用先进的科学技术和管理方法。"
       "第十条 煤矿企业应当加强和改善经营管理，提高劳动生产率和经济效益。"
       "第十一条 县级以上地方人民政府煤炭管理部门和有关部门依法负责本行政区域内煤炭行业的监督管理。")


def test_words_that_start_a_sentence_stand_for_no_name_the_other_text_has_inside_one() -> None:
    """第九条 江山鼓励 / 第九条 国家鼓励 (an edit's word, 江山 read as a name): the name has words
    before it in its sentence, so 第九条国家 at the sentence's start is not its place; only a name
    named once, at the start of its sentence, has no left context to compare."""
    status, original, _ = decide_pair(LAW.format(x="江山"), LAW.format(x="国家"))
    assert status is Status.DUPLICATE and original == "first"


HONOURED = ("表彰决定。在全市抗洪抢险工作中，{x}同志冲锋在前，不怕牺牲，表现突出。为弘扬先进，市委决定授予{x}"
            "同志优秀共产党员称号，号召全市广大党员向其学习。")


@pytest.mark.parametrize(("template", "unread", "read"),
                         [(MISSING, "费美玲", "郑丽华"), (HONOURED, "花红梅", "冯丽华")])
def test_a_record_that_read_no_name_lacks_the_name_of_a_new_notice(template: str, unread: str, read: str) -> None:
    """The earlier notice's person was read as no name (费 "fee", 花 "flower" are words alone), so
    its record has no presence entry; a record of v7 or later without them read no name (only a
    v5 record, of v6's scheme, says nothing of its names), so the person of the later notice, in
    the sentences it swapped, is a name the earlier one lacks."""
    status, _, kind = decide_pair(template.format(x=unread), template.format(x=read))
    assert status is Status.UNIQUE and kind == "entity"


SHAREHOLDERS = ("{x}关于召开临时股东大会的通知。本公司董事会决定召开临时股东大会，审议关于变更公司经营范围的议案。"
           "股权登记日收市后登记在册的公司股东均有权出席本次股东大会。")


def test_a_company_read_as_several_names_is_one_name_swapped() -> None:
    """浙江省/明/辉/农业/开发 股份有限公司 is read as five names written together: the title
    rewritten around them is longer by the names' own length (7 characters, not the 3 a person's
    swap allows), and the other four are the same company's parts, not anchors of a sentence cut."""
    status, _, kind = decide_pair(SHAREHOLDERS.format(x="力拓化工有限公司"),
                                  SHAREHOLDERS.format(x="浙江省明辉农业开发股份有限公司"))
    assert status is Status.UNIQUE and kind == "entity"


MEETING_OF = ("本报讯 {x}近日召开年度工作会议。会上，{x}总结了过去一年的经营情况。"
              "{x}表示，将继续深化改革，提升服务质量。与会代表认为，{x}的发展思路清晰。会议还听取了{x}各部门的工作汇报。会议期间，代表们参观了新建的生产车间和研发中心。")


@pytest.mark.parametrize(("first", "second"), [("新设公司", "众盛信息技术股份有限公司"),
                                               ("新设公司", "康富物流有限责任公司"),
                                               ("华天公司", "众盛信息技术股份有限公司")])
def test_a_company_swapped_in_every_sentence_is_longer_by_its_whole_name(first: str, second: str) -> None:
    """Five sentences rewritten around a company alone, with no figure or polarity word to
    anchor them: a swap changes each by the name's length, and the readers leave the legal form
    (股份有限公司) out of the name, so the swap looked longer than the names allowed (merged before)."""
    status, _, kind = decide_pair(MEETING_OF.format(x=first), MEETING_OF.format(x=second))
    assert status is Status.UNIQUE and kind == "entity"


def test_a_legal_form_ends_the_name_written_before_it() -> None:
    text = "众盛信息技术股份有限公司主张债权，康富物流有限责任公司，华天公司，华天集团"
    assert _legal_form_end(text, 6) == 12
    assert _legal_form_end(text, 21) == 27
    assert _legal_form_end(text, 30) == 32
    assert _legal_form_end(text, 35) == 35  # 集团 alone is no legal form after a name


def test_a_company_s_legal_form_is_left_out_of_the_contexts_around_it() -> None:
    """九州化工有限公司 / 正泰化工股份有限公司 at a title's start: the words after each company
    differ by 股份 unless its legal form is left out of the contexts (v10), and then the other
    text's 九州 stands where this one has 正/泰, at the start of the same sentence."""
    hashes = _tokens(["化工", "股份", "有限公司", "关于", "召开", "临时"])[3]
    assert form_tokens(hashes).tolist() == [False, True, True, False, False, False]
    assert not form_tokens(hashes, forms=False).any()  # v8 and v9 read every token
    status, _, kind = decide_pair(SHAREHOLDERS.format(x="九州化工有限公司"),
                                  SHAREHOLDERS.format(x="正泰化工股份有限公司"))
    assert status is Status.UNIQUE and kind == "entity"


RADAR = ("上海广电凯歌{w}通讯设备厂今年推出的新型号，在市场上受到了广泛欢迎，销量比去年同期增长了三成。"
         "厂长表示，将继续加大研发投入，提高产品质量，满足用户的需求。")


def test_a_word_tagged_a_person_replaced_by_another_is_another_notice() -> None:
    """雷达 and 普渡: two words jieba's dictionary tags a person, read as no name (two characters,
    no common surname or too common): a tagger takes each for a person, and one in the other's
    place, sharing no character with it, is the same notice about someone else (profile v16's
    weak names; merged before)."""
    status, _, kind = decide_pair(RADAR.format(w="雷达"), RADAR.format(w="普渡"))
    assert status is Status.UNIQUE and kind == "entity"


def test_a_word_tagged_a_person_in_place_of_a_name_is_another_notice() -> None:
    """马来 for 刘晓光, 林子 for 古建筑: a name of the dictionary (a person's, or a word it tags a
    person of three characters) replaced by a word it tags a person that no reading takes for a
    name: the two sides of the word show the same two (the name's twin entries, profile v16;
    merged before)."""
    for first, second in (("刘晓光", "马来"), ("古建筑", "林子")):
        status, _, kind = decide_pair(RADAR.format(w=first), RADAR.format(w=second))
        assert status is Status.UNIQUE and kind == "entity", (first, second)


def test_a_name_no_dictionary_knows_in_place_of_a_word_tagged_a_person_is_another_notice() -> None:
    """蔚少辉 for 雷达: the dictionary cuts an unknown name into one-character words (蔚/少/辉), which
    no reading takes for a person; in the place of a weak name they are another (merged before)."""
    status, _, kind = decide_pair(RADAR.format(w="雷达"), RADAR.format(w="蔚少辉"))
    assert status is Status.UNIQUE and kind == "entity"


def test_a_word_tagged_a_person_written_with_a_character_changed_is_a_reprint() -> None:
    """林子 and 林木, 高峰 and 高潮: both tagged a person, the first character shared: a synonym or
    a typo of the same word, not another name."""
    for first, second in (("林子", "林木"), ("高峰", "高潮")):
        status, original, _ = decide_pair(RADAR.format(w=first), RADAR.format(w=second))
        assert status is Status.DUPLICATE and original == "first", (first, second)


def test_person_words_are_words_of_two_or_three_characters_the_dictionary_tags_a_person() -> None:
    table = zh_person_words()
    assert in_sorted(hash_words(["雷达", "高峰", "普渡", "古建筑", "国家", "北京", "诸葛亮"]), table).tolist() == [
        True, True, True, True, False, False, True]


def test_weak_names_bytes_are_no_other_fills() -> None:
    """Weak names' and names' twins' entries pair only with each other: their polarity bytes are
    no polarity word's, figure's, sentence's or name's."""
    signs = ["+", "-"]  # polarity words' fills as profiles since v4 write them: negations and sign
    fills = ["#1", "N #1", "N"] + [f"S{n}" for n in range(kprof.MAX_SENTENCE_NEGATORS + 1)]
    fills += ["N " * n + sign for n in range(kprof.MAX_SENTENCE_NEGATORS + 1) for sign in signs]
    used = {fill_hash(f) >> 8 for f in fills} | {kprof.NAME_FILL_BYTE, kprof.NAME_PRESENT_FILL >> 8,
                                                 kprof.NAME_LETTERS_FILL >> 8}
    assert kprof.WEAK_NAME_BYTE not in used and kprof.NAME_TWIN_BYTE not in used
    assert kprof.WEAK_NAME_BYTE != kprof.NAME_TWIN_BYTE
