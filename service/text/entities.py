"""Names in a text: which tokens are people, places and organisations, for the entity check.

Chinese names are the words jieba's dictionary tags as names (nr, nrt, nrfg: people; ns: places;
nt: organisations), looked up by token hash inside a kernel, and the names it lacks by what
surrounds them: a surname standing alone before a short word (:data:`SURNAMES`), words before an
administrative suffix (:data:`NAME_SUFFIXES`), before a company's legal form (:data:`BODY_HEADS`)
or, after a surname, before a person's title (:data:`TITLES`); a place's administrative suffix is
not part of its fill (:func:`canonical_name`). English names are
the words a text capitalises inside a sentence (after a lower-case word, a digit or a comma), as
the normalised text has lost its case; a capital at a sentence's start says nothing. They fill by
their first ``EN_FILL_LETTERS`` letters.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.kernels import entities as kent
from neardup.kernels import profile as kprof
from neardup.text.cache import cached_arrays
from neardup.text.lexicon import TOKEN_SEED, hash_words, in_sorted
from neardup.text.segment import jieba_dict_path, segmenter

NAME_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt"})
# jieba tags many two-character words nr that are no names (修正, 陈述, 花布: a surname's character
# and another); a three-character nr word is nearly always a person (江泽民)
MIN_NAME_CHARS = {"nr": 3}
EN_FILL_LETTERS = 3  # an English name fills by its first letters: crawler noise inside it (lon&g) reads alike
# the polarity byte of a name's fill (the kernel's constant): no polarity word, figure or
# sentence fill hashes to it (tests/unit/test_lookalikes.py)
NAME_FILL_BYTE = kprof.NAME_FILL_BYTE
NAME_PRESENT_FILL = kprof.NAME_PRESENT_FILL  # the fill of a name's presence entry (the same test)
NAME_LETTERS_FILL = kprof.NAME_LETTERS_FILL  # ... and of its second letter set (v10)
NAME_RUNS_SINCE = 9  # profiles of this version read a person's tokens as one name, one-character runs too
SECOND_LETTERS_SINCE = 10  # ... and give each name a second letter set, and read 赵/新民 and 卫志/刚 as people
PLACE_SUFFIXES = "省市县区镇乡村州"
# nouns that end as a body or a place are names; nz alone is not (大都会, 永恒性 are nz)
NOUN_TAGS = frozenset({"n", "nz", "j"})
BODY_SUFFIXES = PLACE_SUFFIXES + "部局厅委署社"  # ... and the suffixes of public bodies
CONTEXT_TOKENS = 3  # tokens each side of a name
CONTEXT_SEED = 0x0E17
EN_MIN_LETTERS = 3  # "Ph" of ph&innaeus is noise
# capitalised inside a sentence, yet no name: title-case articles, pronouns and particles; days and months
EN_NOT_NAMES = frozenset({
    "a", "an", "the", "and", "or", "but", "of", "in", "on", "at", "to", "for", "from", "by", "with", "as",
    "is", "are", "was", "were", "be", "it", "its", "this", "that", "these", "those", "he", "she", "they",
    "we", "you", "his", "her", "their", "our", "your", "i", "mr", "mrs", "ms", "dr", "my", "me", "him",
    "them", "not", "no",
    # days and months are when, not who or where: a reprint may name the day it is printed
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february",
    "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
    # a page's own buttons and banners, which a crawl leaves inside sentences (a better Click here fight)
    "click", "share", "print", "advertisement",
})
# words a sentence may start with that name nobody (What, However, Police: function words, adverbs
# and the subjects every story has): a sentence-start word is read as a name only when the text
# never writes it in lower case and it is none of these (profile v14)
EN_SENTENCE_WORDS = frozenset({
    "a", "an", "the", "and", "or", "but", "nor", "so", "yet", "for", "of", "in", "on", "at", "to", "from", "by",
    "with", "as", "into", "onto", "upon", "about", "above", "below", "after", "before", "since", "until", "while",
    "when", "where", "why", "how", "what", "which", "who", "whom", "whose", "that", "this", "these", "those",
    "there", "here", "it", "its", "he", "she", "they", "we", "you", "i", "his", "her", "their", "our", "your", "my",
    "me", "him", "them", "us", "not", "no", "yes", "if", "though", "although", "because", "unless", "whether",
    "than", "then", "now", "also", "still", "just", "only", "even", "already", "however", "meanwhile", "moreover",
    "furthermore", "therefore", "thus", "hence", "instead", "indeed", "overall", "finally", "first", "second",
    "third", "last", "next", "later", "earlier", "recently", "currently", "today", "yesterday", "tomorrow",
    "tonight", "some", "many", "most", "more", "much", "few", "several", "all", "any", "each", "every", "both",
    "either", "neither", "none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "other", "others", "another", "such", "same", "own", "is", "are", "was", "were", "be", "been", "being", "do",
    "does", "did", "has", "have", "had", "will", "would", "can", "could", "should", "may", "might", "must", "shall",
    "let", "please", "well", "oh", "according", "despite", "during", "under", "over", "through", "against",
    "within", "without", "among", "between", "across", "along", "around", "behind", "beyond", "near", "off", "out",
    "up", "down", "again", "ever", "never", "always", "often", "sometimes", "perhaps", "maybe", "almost", "nearly",
    "like", "unlike", "whatever", "whoever", "whichever", "everyone", "everything", "everybody", "someone",
    "something", "somebody", "anyone", "anything", "anybody", "nobody", "nothing", "police", "officials", "people",
    "analysts", "experts", "critics", "researchers", "scientists", "officers", "witnesses", "residents",
    "investigators", "sources", "besides", "elsewhere", "otherwise", "nevertheless", "nonetheless", "afterwards",
    "afterward", "likewise", "anyway", "regardless", "together", "once",
})
# a name starts its sentence as the subject of these (or with 's): Microsoft said, Virgin was told; a
# present tense that is as often a plural noun (calls, plans, reports: Bargain calls widen ...) is not one
EN_SUBJECT_VERBS = frozenset({
    "said", "says", "told", "tells", "added", "adds", "is", "was", "are", "were", "has", "have", "had", "will",
    "would", "can", "could", "should", "may", "might", "must", "did", "does", "announced", "announces", "reported",
    "confirmed", "confirms", "denied", "denies", "claimed", "insisted", "insists", "warned", "warns", "argued",
    "argues", "urged", "urges", "agreed", "agrees", "expects", "expected", "planned", "wanted", "hoped", "acquired",
    "acquires", "bought", "sold", "gave", "took", "made", "won", "lost", "loses", "beat", "led", "became",
    "becomes", "began", "begins", "faced", "needed", "refused", "refuses", "rejected", "rejects", "accused",
    "accuses", "launched", "unveiled", "unveils", "released", "signed", "joined", "remains", "remained",
    "continues", "continued", "believes", "believed", "called", "posted", "raised", "paid", "opened", "closed",
    "alleges", "alleged", "admits", "admitted", "blames", "blamed", "stated", "explained", "explains", "revealed",
    "reveals", "noted", "suggested", "suggests", "estimated", "predicted", "predicts", "responded", "responds",
    "welcomed", "welcomes", "criticised", "criticized", "condemned", "condemns", "dismissed", "described",
    "describes", "received", "receives", "reached", "hopes", "wants", "plans", "needs", "faces", "owns", "owned",
    "scored", "finished", "returned", "visited", "arrived", "spent", "showed", "thinks", "thought", "feels",
    "felt", "asked", "asks", "wrote", "writes", "approved", "approves", "ordered", "decided", "decides",
    "declined", "failed", "fails", "threatened", "threatens", "demanded", "demands", "vowed", "vows", "pledged",
    "accepted", "accepts", "acknowledged", "stressed", "stresses", "maintains", "maintained",
})
# one of these may stand between a sentence's subject and its verb (Britain now has)
EN_SUBJECT_ADVERBS = frozenset({
    "now", "also", "still", "already", "then", "later", "recently", "previously", "initially", "eventually",
    "currently", "reportedly", "yesterday", "today", "last", "first", "finally", "has", "had", "have", "will",
    "would", "could", "may", "might", "is", "was",
})
# after a hyphen, these make the capitalised word before them a place or a body's name at a
# sentence's start (Edinburgh-based, Paris-born, Hong Kong-listed); not owned or led: State-owned
EN_PLACE_PARTICIPLES = frozenset({"based", "born", "listed", "headquartered"})
SENTENCE_START_NAMES_SINCE = 14  # profiles of this version read an English name that only starts sentences
# ... and Chinese names the dictionary cuts: a company's brand cut into characters (商/软/冠/联/科技/
# 有限公司), a legal form cut in two (有限责任/公司), a surname that is a preposition too (于/丽), a
# place of one character (帅/市)
CUT_NAMES_SINCE = 14
LEAD_SURNAMES = "于"  # surnames that are prepositions too: read only before a given name's characters
SHORT_PLACE_SUFFIXES = "市县"  # after one character alone, these make a place (not 村, 局, 队: 分/局)
NOT_SHORT_PLACES = "一二三四五六七八九十百千万两零〇几"  # ... unless it is a numeral (两/市) or a suffix (省/市)
BRAND_CHARS = 4  # the most characters of such a brand: a company's trade name has two to four
SENTENCE_MARKS = np.array(sorted(map(ord, ".!?;。！？；\n")), dtype=np.uint32)  # in the normalised text


def canonical_name(word: str) -> str:
    """A Chinese name as its fill reads it: a place without its administrative suffix
    (北京市 and 北京 are one place)."""
    if len(word) >= 3 and word[-1] in PLACE_SUFFIXES:
        return word[:-1]
    return word


def is_dictionary_name(word: str, tag: str) -> bool:
    """Whether a word of jieba's dictionary is a name: tagged one (nr, nrt, nrfg, ns, nt), or a
    noun of three or more characters that ends as a body or a place does (公安部, 浇底乡: jieba
    tags many such words plain n)."""
    if tag in NAME_TAGS:
        return len(word) >= MIN_NAME_CHARS.get(tag, 2)
    if len(word) < 3:
        return False
    return tag in NOUN_TAGS and word[-1] in BODY_SUFFIXES


def is_rare_person(word: str, count: int, tag: str) -> bool:
    """Whether a two-character word jieba tags nr is a person (v9): it starts with a common
    surname (:data:`COMMON_SURNAMES`) and the dictionary sees it fewer than :data:`RARE_WORD`
    times (成龙 56, 乔丹 80; not 陈述 763 or 修正, whose 修 is no surname)."""
    return tag == "nr" and len(word) == 2 and word[0] in COMMON_SURNAMES and count < RARE_WORD


DIVISIONS = Path(__file__).resolve().parent / "data" / "divisions.tsv"
# the peoples an autonomous division names (恩施土家族苗族自治州), and 各 (各族自治)
PEOPLES = frozenset({
    "蒙古", "回", "藏", "维吾尔", "苗", "彝", "壮", "布依", "朝鲜", "满", "侗", "瑶", "白", "土家", "哈尼", "哈萨克",
    "傣", "黎", "傈僳", "佤", "畲", "拉祜", "水", "东乡", "纳西", "景颇", "柯尔克孜", "土", "达斡尔", "仫佬", "羌",
    "布朗", "撒拉", "毛南", "仡佬", "锡伯", "阿昌", "普米", "塔吉克", "怒", "乌孜别克", "俄罗斯", "鄂温克", "德昂",
    "保安", "裕固", "京", "塔塔尔", "独龙", "鄂伦春", "赫哲", "门巴", "珞巴", "基诺", "高山", "各",
})
# the suffixes a division's short form drops (和田地区 and 和田, 恩施土家族苗族自治州 and 恩施)
DIVISION_SUFFIX = re.compile(
    "(?:(?:" + "|".join(sorted(PEOPLES, key=lambda p: (-len(p), p))) + ")族?)*自治(?:区|州|县|旗)$"
    "|特别行政区$|地区$|林区$|[省市县区旗州盟]$")
PLAIN_SUFFIX = re.compile("自治(?:区|州|县|旗)$")
# prefecture short forms that are mostly ordinary words (sunshine, unseal, silver, guests)
COMMON_PREFECTURES = frozenset({"日照", "开封", "白银", "来宾"})
# a county's short form is a name when the dictionary sees it rarely, as a noun or a name
# (河间, 从江, 吴兴); many are words too (比如县, 公安县, 通道县, 和平区, 前进区)
COUNTY_SHORT_MAX_FREQ = 300
COUNTY_SHORT_TAGS = NOUN_TAGS | NAME_TAGS | {"nrt", "ns"}


def division_short(name: str) -> str:
    """A division's name without its administrative suffix (and the peoples of an autonomous
    one), or the name itself when that would leave fewer than two characters (义县)."""
    for pattern in (DIVISION_SUFFIX, PLAIN_SUFFIX):  # 内蒙古自治区: 蒙古 is a people, 内 no place
        short = pattern.sub("", name, count=1)
        if len(short) >= 2:
            return short
    return name


def division_names(dictionary: dict[str, tuple[int, str]]) -> dict[str, str]:
    """Name -> canonical name of China's administrative divisions (:data:`DIVISIONS`): every full
    name, the short form of every province and prefecture (but :data:`COMMON_PREFECTURES`), and
    that of a county the dictionary (word -> (count, tag)) counts fewer than
    :data:`COUNTY_SHORT_MAX_FREQ` times as a noun or a name, or not at all."""
    out: dict[str, str] = {}
    for line in DIVISIONS.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        level, name = line.split("\t")
        short = division_short(name)
        out[name] = short
        if short == name or (level == "prefecture" and short in COMMON_PREFECTURES):
            continue
        count, tag = dictionary.get(short, (0, ""))
        if level != "county" or not count or (count < COUNTY_SHORT_MAX_FREQ and tag in COUNTY_SHORT_TAGS):
            out.setdefault(short, short)
    return out


def read_dictionary(path: Path) -> dict[str, tuple[int, str]]:
    """jieba's dictionary file: word -> (count, part-of-speech tag)."""
    out: dict[str, tuple[int, str]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) == 3:
                out[parts[0]] = (int(parts[1]), parts[2])
    return out


@lru_cache(maxsize=2)
def zh_name_table(rare_pairs: bool = True) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """The dictionary's names and China's administrative divisions (:func:`division_names`) as a
    lookup table (:func:`neardup.kernels.entities.build_name_table`): token hash -> the canonical
    name's hash. ``rare_pairs`` (profile v9): also the two-character words tagged nr that start
    with a common surname and that the dictionary rarely sees (:func:`is_rare_person`: 成龙, 乔丹)."""
    path = jieba_dict_path()

    def build() -> dict[str, npt.NDArray[np.generic]]:
        dictionary = read_dictionary(path)
        words = [w for w, (count, tag) in dictionary.items()
                 if is_dictionary_name(w, tag) or (rare_pairs and is_rare_person(w, count, tag))]
        canonical = {w: canonical_name(w) for w in words}
        for name, short in division_names(dictionary).items():
            canonical.setdefault(name, short)
        words = list(canonical)
        names = hash_words(words)
        canon = hash_words([canonical[w] for w in words])
        order = np.argsort(names, kind="stable")
        names, canon = names[order], canon[order]
        keep = np.ones(len(names), dtype=np.bool_)
        keep[1:] = names[1:] != names[:-1]
        return {"names": names[keep], "canonical": canon[keep]}

    stat = path.stat()
    rules = repr((sorted(NAME_TAGS), sorted(NOUN_TAGS), BODY_SUFFIXES, sorted(MIN_NAME_CHARS.items()),
                  DIVISION_SUFFIX.pattern, sorted(COMMON_PREFECTURES), COUNTY_SHORT_MAX_FREQ,
                  sorted(COUNTY_SHORT_TAGS), DIVISIONS.stat().st_size))
    if rare_pairs:
        rules += repr((COMMON_SURNAMES, RARE_WORD))
    tags = hashlib.sha1(rules.encode()).hexdigest()[:12]  # a changed rule is another table
    arrays = cached_arrays(f"names-zh-{stat.st_size}-{int(stat.st_mtime)}-{tags}-3", build)
    return kent.build_name_table(arrays["names"].astype(np.uint64), arrays["canonical"].astype(np.uint64))


def _dictionary_words(label: str, rules: str, keep: Callable[[str, str], bool]) -> npt.NDArray[np.uint64]:
    """Token hashes, sorted, of the words of jieba's dictionary that ``keep(word, tag)`` takes,
    cached under ``label`` and a digest of ``rules`` (what decides ``keep``: a changed rule is
    another table)."""
    path = jieba_dict_path()

    def build() -> dict[str, npt.NDArray[np.generic]]:
        words = [w for w, (_, tag) in read_dictionary(path).items() if keep(w, tag)]
        return {"words": np.unique(hash_words(words))}

    stat = path.stat()
    digest = hashlib.sha1(rules.encode()).hexdigest()[:12]
    return cached_arrays(f"{label}-zh-{stat.st_size}-{int(stat.st_mtime)}-{digest}", build)["words"].astype(np.uint64)


WEAK_NAME_TAG = "nr"  # a two-character word the dictionary tags a person: read as no name (修正, 高峰)


@lru_cache(maxsize=1)
def zh_person_words() -> npt.NDArray[np.uint64]:
    """Token hashes, sorted, of the words of two or three characters jieba's dictionary tags a
    person (:data:`WEAK_NAME_TAG`). Those of two that no reading takes for a name are weak names
    (高峰, 雷达): most are words, but a tagger takes every one of them for a person, and one
    replaced by another such word in the same place is another notice (雷达 / 普渡); the others
    are names (刘晓光, 古建筑), and a weak name in their place is another notice too."""
    return _dictionary_words("person-words", WEAK_NAME_TAG,
                             lambda w, tag: tag == WEAK_NAME_TAG and 2 <= len(w) <= 3)


@lru_cache(maxsize=1)
def zh_person_word_table() -> tuple[npt.NDArray[np.uint64], ...]:
    """:func:`zh_person_words` as a lookup table (:func:`neardup.kernels.entities.build_name_table`):
    a window's million tokens are looked up in a few milliseconds, where a binary search each
    took sixty."""
    words = zh_person_words()
    return tuple(kent.build_name_table(words, words))


IDIOM_TAGS = frozenset({"i", "l"})  # jieba's tags of idioms and set phrases (而立之年, 与时俱进)


@lru_cache(maxsize=1)
def zh_idioms() -> npt.NDArray[np.uint64]:
    """Token hashes, sorted, of the words jieba's dictionary tags as idioms or set phrases
    (:data:`IDIOM_TAGS`): many are rare, and none stands for a name."""
    return _dictionary_words("idioms", repr(sorted(IDIOM_TAGS)), lambda _, tag: tag in IDIOM_TAGS)


# jieba's tags of nouns, names, abbreviations and nominal verbs and adjectives: a word of these
# that holds a particle's character is still a content word (人为, 对象), not a function word (或者)
CONTENT_TAGS = frozenset({"n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "j", "vn", "an"})


@lru_cache(maxsize=1)
def zh_content_words_with_stops() -> npt.NDArray[np.uint64]:
    """Token hashes, sorted, of the words of two characters or more that jieba's dictionary tags
    as nouns (:data:`CONTENT_TAGS`) and that hold a character of a particle, a preposition or a
    demonstrative (:func:`zh_suffix_tables`' stops: 人为 holds 为, 对象 对): words that may stand
    for another text's name, as the function words holding one (或者, 这个) may not."""
    stops = "".join(sorted(chr(c) for c in zh_suffix_tables()[1].tolist()))
    return _dictionary_words(
        "content-stops", repr((sorted(CONTENT_TAGS), stops)),
        lambda word, tag: tag in CONTENT_TAGS and len(word) >= 2 and any(c in stops for c in word))


# surnames rarely written alone for another word (张 counts sheets, 高 is high, 曾 is "once", 何 "what",
# 许 "perhaps", 莫 "do not", 于 "at", 余 "more than", 关 "close", 白 "white", 牛 "cow": left out), the
# common ones first, then rarer ones jieba leaves alone before a given name (鞠/雅莲, 邝/广杰)
SURNAMES = ("王李刘陈杨赵吴周徐孙朱胡郭罗郑梁谢宋唐韩冯邓曹彭肖董袁潘蒋蔡杜程苏魏吕丁沈姚卢姜崔"
            "钟谭陆汪范廖贾夏韦邹孟熊秦邱尹薛闫段雷侯史陶黎贺顾毛郝龚邵钱严覃戴孔汤黄林叶"
            "鞠邝瞿溥苟逄祝柴樊甘洪阎裴邢骆蒲岳翟尤姬聂靳焦傅殷柯庞倪牟晏屈戚卓詹俞童颜邬谷毕"
            # surnames of the People's Daily 1998 corpus (5 people or more) that jieba's dictionary,
            # holding the character alone, tags as a name (nr): written alone, it is someone's surname
            "江金尉褚温施伍荣梅萧赖辛霍葛康鲍庄艾郎鹏慕兰沙闵鲁鄢阳喻桂丛吉凌阮桑冉滕宗耿奚杰佟钮鹿厉麦")
RARE_ALONE = 2000  # a common surname the dictionary sees alone fewer times than this is rarely a word there
NAME_ALONE = 5000  # ... or fewer than this, tagged a name (nr)


@lru_cache(maxsize=2)
def zh_surnames(extended: bool = True) -> npt.NDArray[np.uint32]:
    """The surnames' code points, sorted (for :func:`neardup.kernels.entities.surname_names`):
    :data:`SURNAMES`, and (``extended``, profile v9) those of :data:`COMMON_SURNAMES` that jieba's
    dictionary rarely holds alone as another word (:data:`RARE_ALONE`, :data:`NAME_ALONE`: 窦, 苗,
    纪; not 章 "chapter", 费 "fee", 成 "become", 连 "even")."""
    if not extended:
        return np.array(sorted(map(ord, SURNAMES)), dtype=np.uint32)
    path = jieba_dict_path()

    def build() -> dict[str, npt.NDArray[np.generic]]:
        counts = read_dictionary(path)
        rare = {c for c in COMMON_SURNAMES if c not in TITLED_SURNAMES
                and (counts.get(c, (0, ""))[0] < RARE_ALONE
                     or (counts[c][1] == "nr" and counts[c][0] < NAME_ALONE))}
        return {"surnames": np.array(sorted(map(ord, set(SURNAMES) | rare)), dtype=np.uint32)}

    stat = path.stat()  # read once a dictionary and rule set, not at every start
    rules = repr((SURNAMES, TITLED_SURNAMES, COMMON_SURNAMES, RARE_ALONE, NAME_ALONE))
    tags = hashlib.sha1(rules.encode()).hexdigest()[:12]
    return cached_arrays(f"surnames-zh-{stat.st_size}-{int(stat.st_mtime)}-{tags}", build)["surnames"].astype(
        np.uint32)


# China's most common surnames (the 264 borne by most people, 单, 章, 窦, 柳 among them): a name
# jieba's dictionary lacks is cut into its characters (单/兴/缘), and a run of two or three such
# characters that starts with one of these is a person (:func:`neardup.kernels.entities.single_char_names`)
COMMON_SURNAMES = ("王李张刘陈杨黄赵吴周徐孙马胡朱郭何罗高林郑梁谢唐宋许邓冯韩曹曾彭萧蔡潘田董袁于余叶蒋杜苏魏程"
                   "吕丁沈任姚卢钟姜崔谭廖范汪陆金石戴贾韦夏邱方侯邹熊孟秦白毛江闫薛尹段雷黎史龙陶贺顾龚郝邵"
                   "万钱严赖覃洪武莫孔汤向常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左"
                   "柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈"
                   "饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵"
                   "苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝官封谈匡鞠惠荆乐冀郁")
NAME_RUN = 3  # one-character tokens a run read as a person may have (欧阳/修 is two tokens)
# ... and a verb that may end such a run, after the name it is the subject of (任/婷/宇/说: the
# dictionary holds none of them alone before a name as another word's end); since v14
NAME_VERBS = "说称讲道问答笑摄"


@lru_cache(maxsize=1)
def zh_name_verbs() -> npt.NDArray[np.uint32]:
    """The code points of :data:`NAME_VERBS`, sorted (the reading before v14 runs no verb pass)."""
    return np.array(sorted(map(ord, NAME_VERBS)), dtype=np.uint32)


@lru_cache(maxsize=2)
def zh_short_place_tables(short: bool = True) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    """The code points of :data:`SHORT_PLACE_SUFFIXES`, and of the characters that are no place
    alone before them (:data:`NOT_SHORT_PLACES` and every name suffix), sorted; both empty where
    not ``short`` (the reading before v14)."""
    if not short:
        return np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=np.uint32)
    return (np.array(sorted(map(ord, SHORT_PLACE_SUFFIXES)), dtype=np.uint32),
            np.array(sorted(set(map(ord, NOT_SHORT_PLACES + NAME_SUFFIXES))), dtype=np.uint32))


@lru_cache(maxsize=1)
def zh_lead_surnames() -> npt.NDArray[np.uint32]:
    """The code points of :data:`LEAD_SURNAMES`, sorted."""
    return np.array(sorted(map(ord, LEAD_SURNAMES)), dtype=np.uint32)


@lru_cache(maxsize=1)
def zh_run_surnames() -> npt.NDArray[np.uint32]:
    """The code points of every surname a run of one-character tokens may start with, sorted."""
    return np.array(sorted(set(map(ord, SURNAMES + TITLED_SURNAMES + COMMON_SURNAMES))), dtype=np.uint32)


# a character ends given names (刚, 明, 轩) when jieba's dictionary has it last in this many
# three-character names (nr) of a common surname at least, and holds it alone as a word at most
# TAIL_WORD_RATIO times as often as that (说, 起, 越 are words)
TAIL_NAMES = 5
TAIL_WORD_RATIO = 300


@lru_cache(maxsize=1)
def zh_given_tails() -> npt.NDArray[np.uint32]:
    """The code points of the characters given names end with (:data:`TAIL_NAMES`,
    :data:`TAIL_WORD_RATIO`), sorted (:func:`neardup.kernels.entities.surname_word_names`)."""
    path = jieba_dict_path()

    def build() -> dict[str, npt.NDArray[np.generic]]:
        dictionary = read_dictionary(path)
        common = set(COMMON_SURNAMES)
        named: dict[str, int] = {}
        for word, (_, tag) in dictionary.items():
            if tag == "nr" and len(word) == 3 and word[0] in common:
                named[word[2]] = named.get(word[2], 0) + 1
        tails = [c for c, n in named.items()
                 if c not in NAME_SUFFIXES and n >= TAIL_NAMES and dictionary.get(c, (0, ""))[0] <= TAIL_WORD_RATIO * n]
        return {"tails": np.array(sorted(map(ord, tails)), dtype=np.uint32)}

    stat = path.stat()
    rules = repr((COMMON_SURNAMES, NAME_SUFFIXES, TAIL_NAMES, TAIL_WORD_RATIO))
    tags = hashlib.sha1(rules.encode()).hexdigest()[:12]
    return cached_arrays(f"tails-zh-{stat.st_size}-{int(stat.st_mtime)}-{tags}", build)["tails"].astype(np.uint32)


# a place or a body the dictionary lacks ends with one of these (喻家湾村, 三庄乡, 财金队) ...
NAME_SUFFIXES = "省市县区镇乡村州队部局厅社"
# ... and has none of these: particles, demonstratives, quantities, places in (该市, 全县, 各区, 本部, 县内)
NOT_IN_NAMES = ("的了在是和与及或等到从向于为对把被将据经自至去来赴往离给内外"
                "该本全我各每其此这那个些有无不也都就又还所之以由")


# a company's legal form, and the words a legal form puts before it (股份/有限公司)
COMPANY_FORMS = ("有限公司", "有限责任公司", "集团公司", "股份公司")
FORM_LINKS = ("股份", "有限", "责任", "有限责任", "控股", "集团")
# words that end a company's or an institution's name (金鹰/建筑工程/有限公司), and the words
# between them and the name (股份, and 科技)
BODY_HEADS = (*COMPANY_FORMS, "事务所", "合作社", "研究院", "研究所", "基金会")
BODY_LINKS = (*FORM_LINKS, "科技")
# ... and a word that ends one only after a link: the dictionary cuts 有限责任公司 into 有限责任/公司,
# and 公司 alone follows words that name no company (电力/公司, 保险/公司)
LINKED_HEADS = ("公司",)


# a company's legal form: the contexts of the names around it leave these out (profile v10), so
# the same words follow 力拓化工有限公司 and 明辉农业开发股份有限公司
FORM_WORDS = (*COMPANY_FORMS, "股份有限公司", "集团有限公司", *FORM_LINKS)


@lru_cache(maxsize=1)
def zh_form_words() -> npt.NDArray[np.uint64]:
    """The legal form words' token hashes, sorted (:data:`FORM_WORDS`)."""
    return np.sort(hash_words(list(FORM_WORDS)))


def form_tokens(tok_hashes: npt.NDArray[np.uint64], forms: bool = True) -> npt.NDArray[np.bool_]:
    """Which tokens are a company's legal form (none unless ``forms``, profile v10)."""
    if not forms:
        return np.zeros(len(tok_hashes), dtype=np.bool_)
    return np.isin(tok_hashes, zh_form_words())


@lru_cache(maxsize=1)
def zh_body_tables() -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """The head words', the link words' and the linked head words' token hashes, sorted
    (for :func:`neardup.kernels.entities.body_names`)."""
    return (np.sort(hash_words(list(BODY_HEADS))), np.sort(hash_words(list(BODY_LINKS))),
            np.sort(hash_words(list(LINKED_HEADS))))


# a person's title after the name (高卫东同志), and the surnames a title confirms: the common ones
# too that :data:`SURNAMES` leaves out as words (高 high, 马 horse, 金 gold)
TITLES = ("同志", "先生", "女士", "教授", "院士", "老师")
TITLED_SURNAMES = SURNAMES + "张高曾何许莫于余关白牛马金方向付武江万田石任龙常康乔文易"


@lru_cache(maxsize=1)
def zh_title_tables() -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32]]:
    """The titles' token hashes and the titled surnames' code points, sorted
    (for :func:`neardup.kernels.entities.titled_names`)."""
    return np.sort(hash_words(list(TITLES))), np.array(sorted(set(map(ord, TITLED_SURNAMES))), dtype=np.uint32)


@lru_cache(maxsize=1)
def zh_place_suffixes() -> npt.NDArray[np.uint32]:
    """The administrative suffixes' code points, sorted (a name's letters leave them out, as
    :func:`canonical_name` does)."""
    return np.array(sorted(map(ord, PLACE_SUFFIXES)), dtype=np.uint32)


@lru_cache(maxsize=1)
def zh_suffix_tables() -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    """The suffixes' and the excluded characters' code points, sorted
    (for :func:`neardup.kernels.entities.suffix_names`)."""
    return (np.array(sorted(map(ord, NAME_SUFFIXES)), dtype=np.uint32),
            np.array(sorted(map(ord, NOT_IN_NAMES)), dtype=np.uint32))


@lru_cache(maxsize=1)
def _not_names() -> npt.NDArray[np.uint64]:
    return np.sort(hash_words(sorted(EN_NOT_NAMES)))


@lru_cache(maxsize=1)
def _sentence_tables() -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint64],
                                npt.NDArray[np.uint64]]:
    """The sorted hashes of :data:`EN_SENTENCE_WORDS`, :data:`EN_SUBJECT_VERBS`,
    :data:`EN_SUBJECT_ADVERBS` and :data:`EN_PLACE_PARTICIPLES`."""
    def hashed(words: frozenset[str]) -> npt.NDArray[np.uint64]:
        return np.sort(hash_words(sorted(words)))

    return (hashed(EN_SENTENCE_WORDS), hashed(EN_SUBJECT_VERBS), hashed(EN_SUBJECT_ADVERBS),
            hashed(EN_PLACE_PARTICIPLES))


def en_names(raw_texts: list[str], version: int = SENTENCE_START_NAMES_SINCE
             ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """The token hashes of the words each text capitalises inside a sentence (after a lower-case
    word, a digit or a comma; :func:`neardup.kernels.entities.capitalised_names`) outside its
    furniture lines (:func:`without_furniture_lines`), and since profile v14 those that start a
    sentence as the subject of a verb (:data:`EN_SUBJECT_VERBS`) and that the text never writes
    in lower case (:data:`EN_SENTENCE_WORDS` left out): a story that names Virgin only as its
    sentences' subject. Sorted within each text, and each text's offsets into them."""
    texts = [without_furniture_lines(t) for t in raw_texts]
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in texts], out=offsets[1:])
    cps = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint32)
    return kent.capitalised_names(cps, offsets, TOKEN_SEED, EN_MIN_LETTERS, _not_names(), *_sentence_tables(),
                                  version >= SENTENCE_START_NAMES_SINCE)


@dataclass(frozen=True, slots=True)
class NameEntries:
    """A window's name entries: entries of document d are ``entries[doc_off[d]:doc_off[d+1]]``,
    each with the span of its name in the document's normalised text."""

    entries: npt.NDArray[np.uint64]
    starts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]
    doc_off: npt.NDArray[np.int64]

    @staticmethod
    def none(n: int) -> NameEntries:
        """No names in any of ``n`` documents."""
        empty = np.zeros(0, dtype=np.int64)
        return NameEntries(np.zeros(0, dtype=np.uint64), empty, empty, np.zeros(n + 1, dtype=np.int64))

    def without(self, fill_byte: np.uint64) -> NameEntries:
        """These entries less those whose fill has ``fill_byte`` (weak names, for older versions)."""
        keep = ((self.entries >> np.uint64(8)) & np.uint64(0xFF)) != fill_byte
        if keep.all():
            return self
        kept_before = np.concatenate([[0], np.cumsum(keep)]).astype(np.int64)
        return NameEntries(self.entries[keep], self.starts[keep], self.ends[keep], kept_before[self.doc_off])

    def document(self, d: int) -> NameEntries:
        """Document ``d``'s entries alone, as a window of one."""
        a, b = int(self.doc_off[d]), int(self.doc_off[d + 1])
        return NameEntries(self.entries[a:b], self.starts[a:b], self.ends[a:b], np.array([0, b - a], dtype=np.int64))


# an editor's line (责任编辑:吴霞) is a reprint's furniture, and so are the author and the source
# of a page's header line (来源:环球网 作者:陈静), which each site fills with its own; a reporter
# (记者) is left a name, as a story under another's byline may be another story
BYLINE_MARKERS = ("责任编辑", "编辑", "责编", "校对", "审核", "审校", "作者", "来源")
BYLINE_TOKENS = 3  # tokens after a marker that are the byline's names (吴/霞, 通讯员 张 三)
# ... but an author alone is the story's (作者：杨子毅 under a review's title: its reprints keep
# it, and the same review under another author is another): since v14 作者 is a page's marker
# only in a header line that names the page's source first (来源：新浪网　作者：赵磊)
HEADER_BYLINE_MARKERS = ("作者",)
SOURCE_MARKERS = ("来源",)
SOURCE_REACH = 8  # tokens back from 作者 to 来源 in one header (来源/：/新浪/科技/ / /作者)


@lru_cache(maxsize=2)
def byline_markers(headed: bool = True) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64],
                                                 npt.NDArray[np.uint64]]:
    """The editor markers' token hashes, those that are markers only after a source marker, and
    the source markers', each sorted (for :func:`neardup.kernels.entities.byline_names`); where
    not ``headed`` (the reading before v14), every marker is one wherever it stands."""
    if not headed:
        return np.unique(hash_words(list(BYLINE_MARKERS))), np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint64)
    always = [m for m in BYLINE_MARKERS if m not in HEADER_BYLINE_MARKERS]
    return (np.unique(hash_words(always)), np.unique(hash_words(list(HEADER_BYLINE_MARKERS))),
            np.unique(hash_words(list(SOURCE_MARKERS))))


# an English page's furniture lines start with one of these (Source: The Guardian, By Jane Smith,
# The Guardian / Copyright ..., Reporting by Tom Brown, Share this story: Email Facebook Twitter):
# their names are each reprinting site's own, not the story's
EN_FURNITURE_MARKERS = ("source", "sources", "by", "copyright", "reporting", "editing", "writing", "written",
                        "published", "updated", "posted", "photo", "photograph", "image", "credit", "via",
                        "share", "follow")
EN_FURNITURE_WORDS = 8  # a furniture line is this many words at most; a longer one is the text
EN_FURNITURE_LINE = re.compile(r"^[ \t(\[]*(?:" + "|".join(EN_FURNITURE_MARKERS) + r")\b[^\n]*$",
                               re.IGNORECASE | re.MULTILINE)


def without_furniture_lines(raw: str) -> str:
    """``raw`` with its furniture lines blanked (spaces, so offsets stay): a line of at most
    :data:`EN_FURNITURE_WORDS` words that starts with a marker (Source: The Guardian). A name
    written only there is no name of the text; a longer line is the text itself (By the end of
    the year, Microsoft ...)."""
    if "\n" not in raw:
        return raw
    return EN_FURNITURE_LINE.sub(lambda m: m.group() if len(m.group().split()) > EN_FURNITURE_WORDS
                                 else " " * len(m.group()), raw)


MIDDLE_DOT = 0xB7  # what normalisation makes of ·, ・ and •
ENUMERATION_MARK = ord("、")  # between the items of a list
RARE_WORD = 200  # a word the dictionary counts fewer times than this may stand alone for a name
ONE_SIDED_MAX_TOKENS = 4  # words a name may stand as where the other text names it (何/炼成 for 江泽民)
WEAK_RUN_MAX_TOKENS = 3  # one-character words a name may stand as where the other text has a weak name


@dataclass(frozen=True, slots=True)
class SlotTokens:
    """One Chinese document's tokens, as the name step saw them: the window's code points, the
    document's token spans in them (``base``: where the document starts), token hashes, which
    tokens are names, where sentences start."""

    cps: npt.NDArray[np.uint32]
    starts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]
    hashes: npt.NDArray[np.uint64]
    flags: npt.NDArray[np.bool_]
    breaks: npt.NDArray[np.bool_]
    base: int
    classes: npt.NDArray[np.uint8]


def marked_gaps(t: SlotTokens, mark: int) -> npt.NDArray[np.bool_]:
    """Per pair of neighbouring tokens (one fewer than the tokens): whether ``mark`` alone stands
    between them."""
    gap = t.starts[1:] - t.ends[:-1]
    return (gap == 1) & (t.cps[np.minimum(t.ends[:-1], len(t.cps) - 1)] == mark)


def listed_beside_a_name(t: SlotTokens) -> npt.NDArray[np.bool_]:
    """Per token: a word of two characters or more that an enumeration mark (、) sets beside a name
    of the text, an item of a list of names. Where the other text names a place or a person there,
    the word alone is another name the dictionary does not know as one (广州、天津 against
    约旦、天津: jieba tags 约旦 an adverb), not an edit's synonym: a list is not rewritten so."""
    n = len(t.starts)
    listed = np.zeros(n, dtype=np.bool_)
    if n < 2:
        return listed
    marked = marked_gaps(t, ENUMERATION_MARK)
    long_ = (t.ends - t.starts) >= 2
    listed[:-1] |= marked & t.flags[1:]
    listed[1:] |= marked & t.flags[:-1]
    return listed & long_ & ~t.flags


class NameSlots:
    """One document's tokens as places a name of another text could stand in
    (:func:`neardup.kernels.entities.one_sided_name`): each token's left and right name contexts,
    letter set and whether it may stand for a name (ideographs, not a name of this text), made on
    the first comparison that asks (most documents are compared with no near candidate)."""

    __slots__ = ("_forms", "_made", "_older", "_read", "_tokens")

    def __init__(self, tokens: SlotTokens,
                 older: Callable[[int], tuple[NameEntries, NameSlots]] | None = None, forms: bool = True) -> None:
        """The slots of ``tokens``' document, made when first asked for; ``older``: how to read
        the document's names as the records of an older profile version were read (this reading
        when None); ``forms``: contexts leave a company's legal form out (v10)."""
        self._tokens = tokens
        self._forms = forms
        self._made: tuple[npt.NDArray[Any], ...] | None = None
        self._older = older
        self._read: dict[int, tuple[NameEntries, NameSlots]] = {}

    def as_version(self, names: NameEntries, version: int) -> tuple[NameEntries, NameSlots]:
        """The document's name entries and slots as records of profile ``version`` (8 or 9) read
        names (``names`` and these slots, when there is no older reading), made once a version:
        compared with such a record."""
        if self._older is None:
            return names, self
        if version not in self._read:
            self._read[version] = self._older(version)
        return self._read[version]

    def _tables(self) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.bool_],
                               npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.bool_],
                               npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_],
                               npt.NDArray[np.bool_]]:
        t = self._tokens
        if self._made is None:
            n = np.array([0, len(t.hashes)], dtype=np.int64)
            left, right, worded = kent.slot_contexts(t.hashes, n, t.flags, t.breaks, form_tokens(t.hashes, self._forms),
                                                     CONTEXT_TOKENS, CONTEXT_SEED)
            every = np.ones(len(t.flags), dtype=np.bool_)
            letters = kent.letter_sets(t.cps, t.starts, t.ends, every, False, zh_place_suffixes())
            letters2 = kent.letter_sets(t.cps, t.starts, t.ends, every, False, zh_place_suffixes(), kent.SECOND_LETTERS)
            words, sides, inner = kent.slot_words(t.cps, t.starts, t.ends, t.flags, zh_suffix_tables()[1], t.classes)
            glued = np.zeros(len(t.starts), dtype=np.bool_)
            # a foreign name's parts stand a middle dot apart (伊·福阿, 卡尔·蔡司): one name
            glued[1:] = (t.starts[1:] == t.ends[:-1]) | marked_gaps(t, MIDDLE_DOT)
            # a rare word alone may stand for a name (稀树, 客车队 where the other text has 墨西哥):
            # a common one there is an edit's synonym
            rare = ((t.ends - t.starts) >= 2) & (segmenter().frequencies(t.cps, t.starts, t.ends) < RARE_WORD)
            rare |= listed_beside_a_name(t)
            # a function word holds a particle's character (或者, 这个) and is common: a rare word
            # that holds one is a name's word all the same (怀来 for 西湖区, 外滩 for 中国), unless
            # it is an idiom (而立之年), and so is a noun that holds one (张/人为 for 郑朝铨)
            words = words | (rare & sides & ~in_sorted(t.hashes, zh_idioms()))
            words = words | (sides & in_sorted(t.hashes, zh_content_words_with_stops()))
            self._made = (left, right, worded, letters, letters2, words, sides, glued, rare, inner)
        return self._made  # type: ignore[return-value]

    def weak_name_run_at(self, mine: npt.NDArray[np.uint64], theirs: npt.NDArray[np.uint64],
                         shared_starts: npt.NDArray[np.int64], shared_ends: npt.NDArray[np.int64],
                         ) -> tuple[int, int] | None:
        """The text span where ``theirs`` has a weak name (profile v16) that this text writes as a
        run of one-character words, a name no dictionary knows (:func:`neardup.kernels.entities.
        weak_name_run`), or None; not inside the sentences ``shared_starts`` to ``shared_ends``,
        which the other text has too."""
        left, right, _, _, _, words, _, glued, _, _ = self._tables()
        t = self._tokens
        single = words & ((t.ends - t.starts) == 1) & ~self._inside(shared_starts, shared_ends)
        t1, t2 = kent.weak_name_run(mine, theirs, left, right, single, glued, t.breaks, t.cps, t.starts,
                                    kprof.WEAK_NAME_BYTE, WEAK_RUN_MAX_TOKENS)
        if t1 < 0:
            return None
        return int(t.starts[t1]) - t.base, int(t.ends[t2]) - t.base

    def _inside(self, shared_starts: npt.NDArray[np.int64], shared_ends: npt.NDArray[np.int64],
                ) -> npt.NDArray[np.bool_]:
        """Which tokens stand inside the text spans ``shared_starts`` to ``shared_ends``."""
        at = self._tokens.starts - self._tokens.base
        if not len(shared_starts):
            return np.zeros(len(at), dtype=np.bool_)
        k = np.searchsorted(shared_starts, at, side="right") - 1
        return np.asarray((k >= 0) & (at < shared_ends[np.maximum(k, 0)]))

    def other_name_at(self, mine: npt.NDArray[np.uint64], theirs: npt.NDArray[np.uint64],
                      shared_starts: npt.NDArray[np.int64] | None = None,
                      shared_ends: npt.NDArray[np.int64] | None = None) -> tuple[int, int] | None:
        """The text span where ``theirs`` has a name that ``mine`` (this text's entries) writes
        as words it does not read as a name, or None; not inside the sentences (text spans)
        ``shared_starts`` to ``shared_ends``, which the other text has too."""
        left, right, worded, letters, letters2, words, sides, glued, rare, inner = self._tables()
        if shared_starts is not None and shared_ends is not None:
            words = words & ~self._inside(shared_starts, shared_ends)
        t1, t2 = kent.one_sided_name(mine, theirs, left, right, worded, letters, letters2, words, sides, glued, rare,
                                     inner,
                                     self._tokens.breaks, ONE_SIDED_MAX_TOKENS, NAME_FILL_BYTE, NAME_PRESENT_FILL,
                                     NAME_LETTERS_FILL)
        if t1 < 0:
            return None
        t = self._tokens
        return int(t.starts[t1]) - t.base, int(t.ends[t2]) - t.base
