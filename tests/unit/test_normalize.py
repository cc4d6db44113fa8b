"""normalize_text (code-point table + Numba kernel + NFKC fallback) against a slow reference that
applies the documented steps literally, one after another, with the standard library:

1. strip_html (tags and entities out, block tags become line breaks);
2. unicodedata.normalize("NFKC", ...) of the whole text;
3. per character: whitespace -> one space mark; DROP_CHARS, controls (Cc) and format characters
   (Cf) removed; otherwise PUNCT_FOLD, lower() where that stays one character, traditional ->
   simplified from service/text/data/t2s_chars.tsv;
4. whitespace runs collapse to one space, none at either end and none between two CJK ideographs;
5. unicodedata.normalize("NFC", ...): a letter lowered in step 3 composes with its mark (Ｗ̊ -> ẘ).
"""

from __future__ import annotations

import itertools
import json
import unicodedata
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from neardup.text.normalize import (
    DROP_CHARS,
    PUNCT_FOLD,
    TABLE_SIZE,
    is_decoration,
    normalize_batch,
    normalize_text,
    original_span,
    source_offsets,
    strip_html,
)

T2S_PATH = Path(__file__).resolve().parents[2] / "service" / "text" / "data" / "t2s_chars.tsv"


@lru_cache(maxsize=1)
def t2s_map() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in T2S_PATH.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            t, s = line.split("\t")
            out[t] = s
    return out


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    han = 0x3400 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp < TABLE_SIZE
    return (han and ch.isalpha()) or ch == "〇"


def fold_char(ch: str, t2s: bool) -> str:
    if ord(ch) >= TABLE_SIZE:
        return ch  # documented: code points beyond the table pass through unchanged
    ch = PUNCT_FOLD.get(ch, ch)
    low = ch.lower()
    if len(low) == 1:
        ch = low
    if t2s:
        ch = t2s_map().get(ch, ch)
    return ch


def reference(text: str, t2s: bool = True) -> str:
    text = unicodedata.normalize("NFKC", strip_html(text))
    chars: list[str | None] = []  # None marks whitespace
    for ch in text:
        if ch.isspace() or is_decoration(ch):
            chars.append(None)
        elif ch in DROP_CHARS or (ord(ch) < TABLE_SIZE and unicodedata.category(ch) in ("Cc", "Cf")):
            continue
        else:
            chars.append(fold_char(ch, t2s))
    out: list[str] = []
    pending = False
    for ch in chars:
        if ch is None:
            pending = bool(out)
            continue
        if pending and not (is_cjk(out[-1]) and is_cjk(ch)):
            out.append(" ")
        pending = False
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


# --------------------------------------------------------------------------------------------
# strategies: fragments of every kind the normaliser must treat the way NFKC + folds would
# --------------------------------------------------------------------------------------------

ASCII = "abcdefgXYZ0123456789 .,;:!?-'\"()[]"
CJK = "的是一不批准予上涨下跌中国人民政府通知〇"
TRADITIONAL = "這個國會議經濟發展區變體們說時間"
FULL_WIDTH = "".join(chr(c) for c in range(0xFF01, 0xFF5F))
COMBINING = "\u0300\u0301\u0302\u0303\u0308\u030a\u0327\u0345\u20dd\u3099\u309a"
LIGATURES = "\ufb00\ufb01\ufb02\ufb03\u0132\u01c4\u01c6\u2474\u2460\u00bd\u2122\u3392\u33a1\u2168"
WHITESPACE = " \t\n\r\x0b\x0c\u3000\u00a0\u2002\u2003\u2009\u202f\u205f\u2028\u0085\x1c"
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\x00\x07\x7f\u200e"
KANA_HANGUL = "\uff76\uff9e\uff8a\uff9f\uffa1\uffc2\uffaa\u3131\u314f\uac00\u1100\u1161\u11a8\u304b"
PUNCT = "".join(PUNCT_FOLD) + "\u00b4\u02bc\u2019\u201c"
OTHER = "ÀÉÎÕÜßİĲŉſΣσςДЖᏀ\u212b\u2126\U0001d400\U0001f600\U00020000\U0002f800\U00030000"
HTML = ["<b>", "</p>", "<br/>", "<div class='x'>", "&amp;", "&nbsp;", "&lt;", "&#12290;", "&#x4e2d;",
        "<script>var a = 1;</script>", "<!-- c -->", "&copy;"]

char_groups = [ASCII, CJK, TRADITIONAL, FULL_WIDTH, COMBINING, LIGATURES, WHITESPACE, ZERO_WIDTH,
               KANA_HANGUL, PUNCT, OTHER]
fragment = st.one_of(
    *[st.text(alphabet=st.sampled_from(g), min_size=1, max_size=6) for g in char_groups],
    st.sampled_from(HTML),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=4),
)
mixed_text = st.lists(fragment, max_size=12).map("".join)

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(mixed_text)
@example("\uff76\uff9e")  # half-width katakana KA + voiced mark: NFKC composes them to ガ
@example("\uffa1\uffc2")  # half-width Hangul KIYEOK + A: NFKC composes them to 가
@example("\uac00\uffaa")  # Hangul syllable + half-width final consonant: 갉
@example("\u00e9 \u0301x")
def test_normalize_text_matches_reference(text: str) -> None:
    assert normalize_text(text) == reference(text)


@settings(max_examples=40, deadline=None)
@given(st.lists(mixed_text, max_size=6))
def test_batch_matches_reference_per_document(texts: list[str]) -> None:
    """A window mixing fast-path and NFKC-fallback documents normalises each one independently."""
    batch = normalize_batch(texts)
    assert batch.texts == [reference(t) for t in texts]
    assert batch.offsets[-1] == batch.cps.shape[0]
    assert [int(batch.offsets[i + 1] - batch.offsets[i]) for i in range(len(texts))] == [
        len(t) for t in batch.texts]


@settings(max_examples=40, deadline=None)
@given(mixed_text)
def test_without_t2s(text: str) -> None:
    assert normalize_text(text, t2s=False) == reference(text, t2s=False)


@settings(max_examples=60, deadline=None)
@given(mixed_text)
@example("\uff37\u030a")  # full-width W + ring: NFKC has no composed capital, the lowered w composes (ẘ)
@example("Y\x7f\u0300")  # a control dropped between a letter and its mark: they compose (ỳ)
def test_idempotent(text: str) -> None:
    """Normalised text normalises to itself. One documented exception is kept out: a second HTML
    pass would read folded 《书名》 = <书名> as a tag (hence html_strip=False)."""
    once = normalize_text(text)
    assert normalize_text(once, html_strip=False) == once


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("ＡＢＣ１２３", "abc123"),  # full width -> ASCII, lower case
        ("Ｈｅｌｌｏ，Ｗｏｒｌｄ！", "hello,world!"),
        ("這是", "这是"),  # traditional -> simplified
        ("國務院關於發展經濟的通知", "国务院关于发展经济的通知"),
        ("中国 人民", "中国人民"),  # no space between two ideographs
        ("中国 ABC 人民", "中国 abc 人民"),
        ("  \t hello \u3000\n world \u00a0 ", "hello world"),
        ("<p>Hello <b>world</b></p>", "hello world"),
        ("a<br>b", "a b"),
        ("AT&amp;T &lt;tag&gt;", "at&t <tag>"),
        ("a&nbsp;b", "a b"),
        ("中&nbsp;国", "中国"),
        ("<script>alert(1)</script>text", "text"),
        ("“引号”《书名》（括号）", '"引号"<书名>(括号)'),
        ("zero\u200bwidth\u00adsoft", "zerowidthsoft"),
        ("\ufb01ne \ufb02ow", "fine flow"),
        ("\u2460 \u2168", "1 ix"),
        ("Cafe\u0301", "café"),
        ("\uff76\uff9e", "\u30ac"),
        ("", ""),
        ("   ", ""),
    ],
)
def test_explicit_cases(raw: str, want: str) -> None:
    assert normalize_text(raw) == want
    assert reference(raw) == want


@pytest.mark.parametrize("wrap", ["{}", "a{}中"])
def test_every_code_point_of_the_table(wrap: str) -> None:
    """Each code point below TABLE_SIZE alone and between neighbours, in one window."""
    texts = [wrap.format(chr(cp)) for cp in range(TABLE_SIZE) if not 0xD800 <= cp <= 0xDFFF]
    got = normalize_batch(texts, html_strip=False).texts
    bad = [(ascii(t), ascii(g)) for t, g in zip(texts, got, strict=True) if g != reference(t)]
    assert not bad, f"{len(bad)} code points differ, e.g. {bad[:5]}"


def test_html_strip_can_be_switched_off() -> None:
    assert normalize_text("<b>x</b>", html_strip=False) == "<b>x</b>"


@pytest.mark.parametrize(("noisy", "clean"), [
    ("It also says AuClick herestralia will", "It also says Australia will"),
    ("he was n| Print |ot told", "he was not told"),
    ("[Image]The minister said", "The minister said"),
    ("记者赵返回搜狐，查看更多天衡报道", "记者赵天衡报道"),
    ("（图片来源：网络）点击图片进入下一页市政府决定", "市政府决定"),
    ("据新华▲社华盛顿电", "据新华社华盛顿电"),
    ("■ Beck★ham scored", "Beck ham scored"),
    ("Mr Nelson will n&amp;ot identify", "Mr Nelson will not identify"),
    ("who was a F&amp;rench science teacher", "who was a French science teacher"),
])
def test_page_furniture_is_dropped_wherever_it_stands(noisy: str, clean: str) -> None:
    """A crawl's buttons inside a word or a name leave the word whole (the name and the negation
    read as in the page's copy without them)."""
    assert normalize_text(noisy) == normalize_text(clean)


def test_the_enumeration_comma_is_kept() -> None:
    """、 is never a thousands separator (104、320 is a list of two); ， still folds to ","."""
    assert normalize_text("104、320国道，1，200人") == "104、320国道,1,200人"


def test_an_escaped_ampersand_is_dropped_inside_a_word_only() -> None:
    assert normalize_text("R&amp;D at AT&amp;T, rock &amp; roll") == "r&d at at&t, rock & roll"


def test_page_furniture_stays_without_html_strip() -> None:
    assert "click here" in normalize_text("Click here to register", html_strip=False)


# ------------------------------------------------------------------------------ source offsets

@SETTINGS
@given(mixed_text)
def test_source_offsets_point_into_the_original(text: str) -> None:
    """Where the offsets can be traced, there is one for each normalised character, each inside
    the original, in the original's order."""
    src = source_offsets(text)
    if src is None:
        return
    norm = normalize_text(text)
    assert len(src) == len(norm)
    assert all(0 <= at < len(text) for at in src)
    assert all(a <= b for a, b in itertools.pairwise(src))


@pytest.mark.parametrize(("raw", "span", "quoted"), [
    ("经审查，决定不予批准某某公司的申請。", "不予批准", "不予批准"),
    ("The <b>plan</b> was &quot;not&quot;  approved.", '"not" approved', "&quot;not&quot;  approved"),
    ("ﬁnancial  ＷＩＤＴＨ", "financial width", "ﬁnancial  ＷＩＤＴＨ"),
    ("設立登記申請", "设立登记", "設立登記"),
    ("says AuClick herestralia will", "australia", "AuClick herestralia"),
    ("it has no&amp;t yet", "not", "no&amp;t"),
])
def test_original_span_quotes_the_text_as_written(raw: str, span: str, quoted: str) -> None:
    norm = normalize_text(raw)
    start = norm.index(span)
    got = original_span(raw, start, start + len(span))
    assert got is not None and raw[got[0] : got[1]] == quoted


def test_source_offsets_trace_the_development_set() -> None:
    docs = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "docs.jsonl"
    if not docs.exists():
        pytest.skip("the development set is not beside the repository")
    texts = [json.loads(line)["text"] for line in docs.read_text(encoding="utf-8").splitlines()[:300]]
    traced = sum(source_offsets(t) is not None for t in texts)
    assert traced >= 0.99 * len(texts)
