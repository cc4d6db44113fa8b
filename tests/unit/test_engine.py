"""Engine invariants on the embedded store (ARCHITECTURE.md: one test each)."""

from __future__ import annotations

import asyncio
import functools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from neardup.config import Settings, load_settings
from neardup.decision import Reason
from neardup.document import Document, InvalidDocument, parse_document
from neardup.engine import Engine, decide_all
from neardup.rules.differences import PROFILE_VERSION, SECOND_LETTERS_SINCE, decode_profile
from neardup.sketch import fingerprint
from neardup.storage import doc_ref
from neardup.storage.memory import MemoryFingerprintStore
from neardup.text.entities import SENTENCE_START_NAMES_SINCE, en_names
from neardup.text.normalize import normalize_text
from tests.fixtures.stores import FetchRecording

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample.jsonl"

NOTICE = (
    "关于某某公司变更经营范围申请的批复\n各有关单位：经审查，某某公司提交的变更经营范围申请材料齐全，"
    "符合相关规定。根据《行政许可法》第三十八条的规定，决定给予批准。该公司应当自本批复下达之日起"
    "三十日内办理变更登记手续，逾期未办理的，本批复自动失效。特此批复。\n二〇二四年三月十五日"
)


def sample_docs(n: int | None = None) -> list[Document]:
    docs = [parse_document(line) for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    return docs[:n] if n else docs


async def engine(**overrides: Any) -> Engine:
    overrides.setdefault("store_url", "memory://")
    settings = load_settings(worker_id="test", **overrides)
    return await Engine.open(settings)


async def test_no_document_is_its_own_duplicate_and_replays_repeat() -> None:
    eng = await engine()
    docs = sample_docs()
    first = await decide_all(eng, docs, 50)
    assert all(d.duplicate_of != d.doc.id for d in first)
    again = await decide_all(eng, docs, 50)  # redelivery of everything
    assert [(d.status, d.duplicate_of) for d in again] == [(d.status, d.duplicate_of) for d in first]
    assert all(d.evidence.replay for d in again)


async def test_batch_equals_one_by_one() -> None:
    docs = sample_docs(120)
    whole = await decide_all(await engine(), docs, 1000)
    single = await decide_all(await engine(), docs, 1)
    assert [(d.status, d.duplicate_of) for d in whole] == [(d.status, d.duplicate_of) for d in single]
    assert sum(d.status == "duplicate" for d in whole) > 0


def _outcomes(decisions: list[Any]) -> list[tuple[Any, ...]]:
    return [(d.doc.id, d.status, d.duplicate_of, d.evidence.reason, d.evidence.rule, d.evidence.critical)
            for d in decisions]


def _counting_prepare(eng: Engine, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The windows ``eng`` fingerprints, as lists of ids (prefetches and its own alike)."""
    calls: list[list[str]] = []
    real = eng._prepare

    def counted(batch: list[Document], t0: float) -> Any:
        calls.append([d.id for d in batch])
        return real(batch, t0)

    monkeypatch.setattr(eng, "_prepare", counted)
    return calls


async def test_windows_fingerprinted_ahead_decide_as_one_after_another(monkeypatch: pytest.MonkeyPatch) -> None:
    """decide_all fingerprints the next windows while one is decided (WindowPipeline): each window
    is fingerprinted once, and the decisions are those of plain decide calls, window after window."""
    docs = sample_docs()
    eng = await engine()
    calls = _counting_prepare(eng, monkeypatch)
    ahead = await decide_all(eng, docs, 40)
    assert len(calls) == 5 and sorted(i for c in calls for i in c) == sorted(d.id for d in docs)
    plain_engine = await engine()
    plain = [d for k in range(0, len(docs), 40) for d in await plain_engine.decide(docs[k : k + 40])]
    assert _outcomes(ahead) == _outcomes(plain)
    assert sum(d.status == "duplicate" for d in ahead) > 0
    await eng.close()
    assert eng._fingerprinting is None


async def test_on_one_core_windows_are_decided_one_after_another(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fingerprinting ahead on one core only makes threads take turns: the pipeline decides each
    window as it comes."""
    from neardup import engine as engine_module

    monkeypatch.setattr(engine_module, "usable_cores", lambda: 1)
    eng = await engine()
    asked: list[int] = []
    monkeypatch.setattr(eng, "prefetch", lambda docs: asked.append(len(docs)))
    pipeline = engine_module.WindowPipeline(eng)
    decided = await pipeline.add(sample_docs(10))
    assert pipeline.ahead == 0 and not asked and len(decided) == 1 and len(decided[0]) == 10
    await eng.close()


async def test_a_window_fingerprinted_under_a_model_replaced_since_is_fingerprinted_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from neardup.learning.model import Model

    eng = await engine()
    calls = _counting_prepare(eng, monkeypatch)
    docs = sample_docs(20)
    eng.prefetch(docs)
    await asyncio.wait([eng._prefetched[0].task])
    eng.apply_model(Model(version=1))
    await eng.decide(docs)
    assert len(calls) == 2  # the prefetch, then again under version 1
    await eng.close()


async def test_a_window_whose_prefetch_failed_is_fingerprinted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A prefetch's error is no one's: the window's decide fingerprints it again, and raises only
    if that fails too."""
    eng = await engine()
    real = eng._prepare
    failures = [RuntimeError("a kernel failed once")]

    def flaky(batch: list[Document], t0: float) -> Any:
        if failures:
            raise failures.pop()
        return real(batch, t0)

    monkeypatch.setattr(eng, "_prepare", flaky)
    docs = sample_docs(10)
    eng.prefetch(docs)
    decided = await eng.decide(docs)
    assert len(decided) == 10 and not failures
    await eng.close()


async def test_a_window_fingerprinted_ahead_and_never_decided_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    eng = await engine()
    calls = _counting_prepare(eng, monkeypatch)
    docs = sample_docs(40)
    eng.prefetch(docs[:20])
    eng.prefetch(docs[20:])
    await eng.decide(docs[20:])  # the second window's prefetch; the first is dropped
    assert len(calls) == 2 and not eng._prefetched
    await eng.decide(docs[:20])  # fingerprinted now
    assert len(calls) == 3
    await eng.close()


async def test_every_duplicate_carries_its_evidence() -> None:
    decisions = await decide_all(await engine(), sample_docs(), 100)
    dups = [d for d in decisions if d.status == "duplicate"]
    assert dups
    for d in dups:
        ev = d.evidence.to_dict()
        assert ev["matched_id"] == d.duplicate_of
        assert ev["rule"] in {"exact", "jaccard", "simhash", "hybrid", "containment"}
        assert ev["jaccard"] is not None and ev["hamming"] is not None
        assert set(ev["thresholds"]) >= {"jaccard_high", "jaccard_low", "hamming_high", "hamming_low"}
        assert isinstance(ev["threshold_version"], int)
        json.dumps(d.to_record(), ensure_ascii=False)


async def test_earlier_document_is_the_original() -> None:
    a = Document(id="b-later", text=NOTICE, published_at=2000.0, raw={"id": "b-later"})
    b = Document(id="a-earlier", text=NOTICE + "（转载）", published_at=1000.0, raw={"id": "a-earlier"})
    out = await (await engine()).decide([a, b])
    by_id = {d.doc.id: d for d in out}
    assert by_id["a-earlier"].status == "unique"
    assert by_id["b-later"].duplicate_of == "a-earlier"
    assert [d.doc.id for d in out] == ["b-later", "a-earlier"]  # output keeps input order


async def test_negation_flip_is_not_a_duplicate_and_names_the_difference() -> None:
    eng = await engine()
    original = Document(id="granted", text=NOTICE)
    flipped = Document(id="refused", text=NOTICE.replace("给予批准", "不予批准"))
    reprint = Document(id="reprint", text="来源：某某网\n" + NOTICE + "\n责任编辑：王五")
    out = await eng.decide([original, flipped, reprint])
    assert out[0].status == "unique"
    assert out[1].status == "unique"
    crit = out[1].evidence.critical
    assert crit is not None and crit.kind == "polarity" and crit.against == "granted"
    assert "不予批准" in crit.passage
    assert out[2].status == "duplicate" and out[2].duplicate_of == "granted"


async def engine_writing_profile(version: int, store: MemoryFingerprintStore, settings: Settings) -> Engine:
    """An engine on ``store`` whose records carry profiles made as version ``version`` made them
    (names and slots passed on, as the engine's profiler takes them)."""
    engine = await Engine.open(settings, store=store)
    made = engine.profiler

    class Older:
        def profile_batch(self, texts: Any, langs: Any, names: Any = None, slots: Any = None) -> Any:
            if version >= SECOND_LETTERS_SINCE or names is None or slots is None:
                return made.profile_batch(texts, langs, version=version, names=names, slots=slots)
            out = []  # names read as that version read them, one document at a time
            for d, (text, lang, slot) in enumerate(zip(texts, langs, slots, strict=True)):
                own, older = (slot.as_version(names.document(d), version) if slot is not None
                              else (names.document(d), None))
                out += made.profile_batch([text], [lang], version=version, names=own, slots=[older])
            return out

    engine.profiler = Older()  # type: ignore[assignment]
    return engine


async def engine_over_profile(version: int, docs: dict[str, str]) -> tuple[Engine, dict[str, bytes]]:
    """A current engine over a store whose records of ``docs`` (id -> text) an engine writing
    profile ``version`` made, and each record's stored profile (checked to be of that version)."""
    store = MemoryFingerprintStore()
    settings = load_settings(worker_id="test", store_url="memory://")
    old = await engine_writing_profile(version, store, settings)
    await old.decide([Document(id=doc_id, text=text) for doc_id, text in docs.items()])
    stored = await store.fetch([doc_ref(doc_id) for doc_id in docs])
    profiles = {doc_id: stored[doc_ref(doc_id)].profile for doc_id in docs}
    assert {p[:3] for p in profiles.values()} == {b"NP" + bytes([version])}
    return await Engine.open(settings, store=store), profiles


@pytest.mark.parametrize("version", [2, 3])
async def test_a_record_stored_with_an_older_profile_still_vetoes_a_flip(version: int) -> None:
    """Records written before profile v4 (v2: one context over both sides; v3: classes in the
    contexts) keep their veto: the deciding document is compared with them through its own
    profile made that version's way."""
    new, _ = await engine_over_profile(version, {"granted": NOTICE})
    out = await new.decide([Document(id="refused", text=NOTICE.replace("给予批准", "不予批准")),
                            Document(id="reprint", text="来源：某某网\n" + NOTICE)])
    assert out[0].status == "unique" and out[0].evidence.critical is not None
    assert out[0].evidence.critical.against == "granted"
    assert out[1].status == "duplicate" and out[1].duplicate_of == "granted"


async def test_records_of_profile_v6_keep_their_names_and_reprints() -> None:
    """A store written with profile v6 (a thousands separator split its figure in two) is read by
    a newer engine through the text's own v6 profile, names included: the notice about another
    company stays unique against the v6 record, and the reprints of both stored texts merge."""
    company = ("根据有关规定，经审查，深圳市华为技术有限公司提交的设立登记申请材料齐全，符合法定形式，"
               "本局决定准予登记。请深圳市华为技术有限公司自收到本通知之日起三十日内领取营业执照，逾期未领取的，视为放弃。特此通知。")
    counts = ("某区2023年共受理群众信访事项1,200件，办结980件，办结率较上年有所提高，群众满意度持续上升，"
              "相关工作得到上级部门肯定，区委区政府对此给予充分肯定并要求继续做好相关工作。")
    new, _ = await engine_over_profile(6, {"company": company, "counts": counts})
    out = await new.decide([Document(id="other", text=company.replace("华为技术", "中兴通讯")),
                            Document(id="reprint", text="来源：某某网\n" + company),
                            Document(id="counts-again", text="转载：" + counts)])
    assert out[0].status == "unique" and out[0].evidence.critical is not None
    assert out[0].evidence.critical.kind == "entity" and out[0].evidence.critical.against == "company"
    assert out[1].status == "duplicate" and out[1].duplicate_of == "company"
    assert out[2].status == "duplicate" and out[2].duplicate_of == "counts"


STATEMENT = ("{c} said on Tuesday it had agreed to buy a regional rival for 420 million dollars in cash. "
             "{c} has been looking for a deal since the spring, when its founder stepped down. The board of the "
             "smaller company backed the offer. {c} will pay with cash on hand and a new loan.")


async def test_a_v13_record_of_a_story_named_at_sentence_starts_merges_its_reprint() -> None:
    """A v13 record read no name in a story that names its company only as its sentences'
    subject; v14 reads one. A reprint compared with the record through its own v13 profile (its
    names read the v14 way) merges; a v14 record of the same story keeps the other company's
    story apart."""
    text = STATEMENT.format(c="Ventora")
    with pytest.MonkeyPatch.context() as patch:  # the v13 engine read its English names the v13 way
        v13_names = functools.partial(en_names, version=SENTENCE_START_NAMES_SINCE - 1)
        patch.setattr(fingerprint, "en_names", v13_names)
        new, _ = await engine_over_profile(13, {"v13": text})
    reprint = "Deal news\n" + text.replace("in cash. ", "in cash, it said. ")
    out = await new.decide([Document(id="reprint", text=reprint)])
    assert out[0].status == "duplicate" and out[0].duplicate_of == "v13"
    newer, _ = await engine_over_profile(PROFILE_VERSION, {"v14": text})
    out = await newer.decide([Document(id="other", text=STATEMENT.format(c="Halbrook"))])
    assert out[0].status == "unique" and out[0].evidence.critical is not None
    assert out[0].evidence.critical.kind == "entity"


COUNTY = ("该县共有耕地面积{a}，其中水田8万亩，旱地4万亩。全县总人口{b}，其中农业人口28万人。"
          "今年粮食总产量达到6.5万吨，比上年增加0.3万吨，农民人均纯收入达到4200元，全县经济运行总体平稳。")


async def told_apart_only_against_the_newer_record(older: int, original: str, changed: str, reprint: str) -> None:
    """A record of profile ``older`` merges a reprint of ``original`` (compared through the deciding
    text's own profile of that version); against a record of this version, ``changed`` is another
    notice for a figure, and the reprint still merges."""
    engine, _ = await engine_over_profile(older, {f"v{older}": original})
    out = await engine.decide([Document(id="reprint", text=reprint)])
    assert out[0].status == "duplicate" and out[0].duplicate_of == f"v{older}"
    newer = f"v{older + 1}"
    engine, _ = await engine_over_profile(PROFILE_VERSION, {newer: original})
    out = await engine.decide([Document(id="changed", text=changed), Document(id="reprint", text=reprint)])
    assert out[0].status == "unique" and out[0].evidence.critical is not None
    assert out[0].evidence.critical.kind == "figure" and out[0].evidence.critical.against == newer
    assert out[1].status == "duplicate" and out[1].duplicate_of == newer


async def test_quantities_swapped_with_their_units_against_a_v16_record() -> None:
    """Profile v17 leaves a Chinese figure's unit out of the frame, so two quantities that trade
    places with their units are a swap; a v16 record is compared with the deciding text's own v16
    profile (units in the frame), which merges a reprint as before."""
    text = COUNTY.format(a="12万亩", b="35万人")
    await told_apart_only_against_the_newer_record(16, text, COUNTY.format(a="35万人", b="12万亩"),
                                                   "来源：县政府网\n" + text)


async def test_a_unit_changed_against_a_v17_record() -> None:
    """Profile v18 fills a figure with its unit (5万元 is not 5千元): against a v18 record the
    changed fine is another notice; a v17 record is compared with the deciding text's own v17
    profile (the figure alone), so a reprint merges with it as before."""
    text = COUNTY.format(a="12万亩", b="35万人")
    await told_apart_only_against_the_newer_record(17, text, COUNTY.format(a="12亿亩", b="35万人"),
                                                   "来源：县政府网\n" + text)


async def test_a_count_changed_against_a_v18_record() -> None:
    """Profile v19 reads one numeral that numbers or counts as a figure (第二次, 三项): against a
    v19 record the notice of the second meeting is another notice; a v18 record is compared with
    the deciding text's own v18 profile (the numeral a frame character), so a reprint merges with
    it as before."""
    text = ("市人大常委会第一次会议昨日召开，会议审议通过了三项决定，要求各级政府认真贯彻落实，"
            "切实做好生态环境保护的相关工作，确保各项措施落到实处，按期完成年度目标任务。")
    await told_apart_only_against_the_newer_record(18, text, text.replace("第一次", "第二次"),
                                                   "来源：市政府网\n" + text)


GROWTH = ("It said TV companies faced a major threat, with broadband predicted to grow from {a}% to {b}% of "
          "households by 2009. The report said the firms must adapt. Analysts agreed with the findings of the "
          "report on Monday, and the shares rose.")


async def test_figures_that_share_their_fill_byte_are_told_apart_by_their_twins() -> None:
    """19% and 37% hash to one figure byte, so their swap left the entries as they were; v15
    gives each figure a twin entry with 8 more bits of its value, and the swap is another story
    against a v15 record. A v14 record has no twins: a reprint is compared with it through its
    own v14 profile, and merges."""
    text = GROWTH.format(a=19, b=37)
    await told_apart_only_against_the_newer_record(14, text, GROWTH.format(a=37, b=19), "Tech news\n" + text)


CODED = ("关于准予深圳市华为技术有限公司设立登记的通知。深圳市华为技术有限公司（统一社会信用代码：{code}）："
         "你单位提交的设立登记申请材料齐全，符合法定形式，本局决定准予登记。请自收到本通知之日起三十日内领取营业执照。")


async def test_records_of_profile_v7_are_read_the_v7_way() -> None:
    """A store written with profile v7 (a credit code's letters were words of the frame) is read
    by a v8 engine through the text's own v7 profile: a reprint merges, a changed figure still
    splits, and a code that differs in a letter only is no other figure against the v7 record."""
    text = CODED.format(code="91440300MA5DAB1234")
    new, profiles = await engine_over_profile(7, {"coded": text})
    out = await new.decide([Document(id="reprint", text="来源：某某网\n" + text)])
    assert out[0].status == "duplicate" and out[0].duplicate_of == "coded"
    out = await new.decide([Document(id="sixty", text=text.replace("三十日", "六十日"))])
    assert out[0].status == "unique" and out[0].evidence.critical is not None
    assert out[0].evidence.critical.kind == "figure" and out[0].evidence.critical.against == "coded"
    other, again = new.profiler.profile_batch([normalize_text(CODED.format(code="91440300MA5DCD1234")),
                                               normalize_text(text)], ["zh", "zh"])
    assert other.version == PROFILE_VERSION
    assert other.critical_against(decode_profile(profiles["coded"]), 7) is None
    assert other.critical_against(again.entries, PROFILE_VERSION) is not None


CHAIRED = ("市人大常委会第十二次会议昨日召开，会议由邹秀兰主持，审议通过了关于加强生态环境保护的决定，"
           "会议要求各级政府认真贯彻落实，切实做好相关工作，确保各项措施落到实处。")


async def test_records_of_profile_v8_are_compared_with_names_read_the_v8_way() -> None:
    """A v8 record read 邹/秀/兰 as three names, a v9 text reads one (邹秀兰): a reprint compared
    with names read the v9 way would name another person where the record named 邹; compared
    the v8 way it merges. The same notice chaired by someone else still splits."""
    new, _ = await engine_over_profile(8, {"chaired": CHAIRED})
    out = await new.decide([Document(id="reprint", text="来源：某某网\n" + CHAIRED)])
    assert out[0].status == "duplicate" and out[0].duplicate_of == "chaired"
    out = await new.decide([Document(id="other", text=CHAIRED.replace("邹秀兰", "李建国"))])
    assert out[0].status == "unique" and out[0].evidence.critical is not None
    assert out[0].evidence.critical.kind == "entity"


PUNISHED = ("关于给予卫志刚党内严重警告处分的决定。经查，卫志刚违反中央八项规定精神，违规收受礼品礼金，"
            "造成不良影响。经研究，决定给予卫志刚党内严重警告处分。")


async def test_records_of_profile_v9_are_compared_with_names_read_the_v9_way() -> None:
    """v9 read 卫志/刚 as no name; v10 reads the person 卫志刚 (a surname glued to the first
    character of its given name). A reprint of a v9 record compared with names read the v10 way
    would name someone where the record named no one; compared the v9 way it merges. The same
    notice about someone v9 reads too (李/建国) still splits."""
    new, stored = await engine_over_profile(9, {"punished": PUNISHED})
    assert decode_profile(stored["punished"]).tolist()  # a v9 record with entries (its sentences)
    out = await new.decide([Document(id="reprint", text="来源：某某网\n" + PUNISHED)])
    assert out[0].status == "duplicate" and out[0].duplicate_of == "punished"
    chaired, _ = await engine_over_profile(9, {"chaired": CHAIRED.replace("邹秀兰", "赵新民")})
    out = await chaired.decide([Document(id="reprint", text="来源：某某网\n" + CHAIRED.replace("邹秀兰", "赵新民"))])
    assert out[0].status == "duplicate" and out[0].duplicate_of == "chaired"
    out = await chaired.decide([Document(id="other", text=CHAIRED.replace("邹秀兰", "李建国"))])
    assert out[0].status == "unique" and out[0].evidence.critical is not None
    assert out[0].evidence.critical.kind == "entity"


def test_the_candidates_under_most_keys_are_kept_when_there_are_too_many() -> None:
    """Past ``index.max_candidates`` the refs found under the most index keys are re-checked: a
    flood of one-key candidates must not push out the one that shares most of the bands."""
    from neardup.engine import strongest

    weak = {bytes([i]) * 8: 1 for i in range(60)}
    best, own = b"\xfe" * 8, b"\x00" * 8
    kept = strongest({**weak, best: 9}, {own}, 50)
    assert len(kept) == 50 and kept[0] == best and own not in kept
    assert strongest({b"b" * 8: 1, b"a" * 8: 2}, set(), 50) == [b"a" * 8, b"b" * 8]  # under the cap: by ref


async def test_changed_figure_is_a_critical_difference() -> None:
    eng = await engine()
    out = await eng.decide([Document(id="a", text=NOTICE),
                            Document(id="b", text=NOTICE.replace("三十日", "六十日"))])
    assert out[1].status == "unique"
    assert out[1].evidence.critical is not None and out[1].evidence.critical.kind == "figure"


async def test_short_texts_only_match_exactly() -> None:
    eng = await engine()
    out = await eng.decide([Document(id="s1", text="今天天气很好，适合出门散步。"),
                            Document(id="s2", text="今天天气很好,适合出门散步. "),
                            Document(id="s3", text="今天天气很好，适合出门散散步。")])
    assert out[1].status == "duplicate" and out[1].evidence.reason is Reason.EXACT  # same after folding
    assert out[2].status == "unique"  # similar, but too short for an estimate to count


async def test_check_stores_nothing() -> None:
    eng = await engine()
    await eng.decide([Document(id="a", text=NOTICE)])
    before = await eng.store.stats()
    d = await eng.check(Document(id="b", text=NOTICE + " "))
    assert d.status == "duplicate" and d.duplicate_of == "a"
    assert d.evidence.reason is Reason.EXACT  # the Bloom hit, confirmed by a read of the claim
    assert await eng.store.stats() == before
    again = await eng.check(Document(id="a", text=NOTICE))  # an id already decided: its decision
    assert again.status == "unique" and again.evidence.replay is True


class InterleavingStore(MemoryFingerprintStore):
    """Yields to the event loop in every call, so two engines' windows interleave like two workers."""

    async def _yield(self) -> None:
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    async def lookup(self, query: Any) -> Any:
        await self._yield()
        return await super().lookup(query)

    async def candidates(self, index_keys: Any) -> Any:
        await self._yield()
        return await super().candidates(index_keys)

    async def commit(self, claims: Any, records: Any, recheck: Any = ()) -> Any:
        await self._yield()
        return await super().commit(claims, records, recheck)

    async def fetch(self, refs: Any) -> Any:
        await self._yield()
        return await super().fetch(refs)


def _pair(k: int) -> tuple[Document, Document]:
    a = Document(id=f"x{k}", text=NOTICE + f"（第{k}批）", published_at=100.0 + k)
    b = Document(id=f"y{k}", text="来源：某网\n" + NOTICE + f"（第{k}批）", published_at=100.0 + k + 0.5)
    return a, b


def _two_workers(store: MemoryFingerprintStore) -> tuple[Engine, Engine]:
    s = load_settings(store_url="memory://")
    return (Engine(s.model_copy(update={"worker_id": "w1"}), store),
            Engine(s.model_copy(update={"worker_id": "w2"}), store))


async def test_a_candidate_over_the_cap_is_no_race() -> None:
    """A stored candidate the lookup found but left out over ``index.max_candidates`` comes back
    in the commit's race check; it was there before the lookup, so it is no race and is not
    fetched and compared there (before, every one of them was)."""
    store = FetchRecording()
    s = load_settings(store_url="memory://")
    capped = s.model_copy(update={"index": s.index.model_copy(update={"max_candidates": 1})})
    for k, extra in enumerate(("", "来源：某网\n", "（责任编辑：张三）")):
        await Engine(capped, store).decide([Document(id=f"copy{k}", text=extra + NOTICE, published_at=float(k))])
    store.fetched.clear()
    flipped = Document(id="flip", text=NOTICE.replace("给予批准", "不予批准"), published_at=9.0)
    (flip,) = await Engine(capped, store).decide([flipped])
    assert flip.status == "unique"
    assert len(store.fetched) == 1


def _regulation() -> str:
    """A long regulation of the bundled sample (2,543 characters)."""
    return next(d.text for d in sample_docs() if d.id == "dev01939")


async def test_a_stored_profile_is_decoded_only_when_a_rule_needs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stored candidate that shares two sentences with a short notice (found under a sentence
    key) but is not similar to it is fetched, and its critical-difference profile never decoded:
    most candidates a lookup proposes are not near enough for the rules to read it."""
    import neardup.sketch.similarity as similarity

    decoded: list[bytes] = []
    real = similarity.decode_profile

    def counted(data: bytes, bits: int | None = None) -> Any:
        decoded.append(data)
        return real(data, bits)

    store = FetchRecording()
    s = load_settings(store_url="memory://")
    text = _regulation()
    await Engine(s, store).decide([Document(id="regulation", text=text)])
    start = text.index("第一条")
    two = text[start : text.index("。", text.index("第二条")) + 1]  # two lead sentences share a key
    monkeypatch.setattr(similarity, "decode_profile", counted)
    other = next(d.text for d in sample_docs() if d.id == "dev04004")  # another regulation, 975 characters
    (out,) = await Engine(s, store).decide([Document(id="notice", text=two + other)])
    assert doc_ref("regulation") in store.fetched
    assert out.status == "unique" and decoded == []


async def test_a_stored_profile_that_does_not_decode_is_compared_with_nothing() -> None:
    """A record whose profile bytes are damaged after their header is not compared (counted as
    a record of another format), and the window is decided all the same."""
    store = MemoryFingerprintStore()
    s = load_settings(store_url="memory://")
    await Engine(s, store).decide([Document(id="a", text=NOTICE)])
    held = store._records[doc_ref("a")]
    damaged = held.record.profile[:3] + b"\xff" * (len(held.record.profile) - 3)
    store._records[doc_ref("a")] = replace(held, record=replace(held.record, profile=damaged))
    eng = Engine(s, store)
    (out,) = await eng.decide([Document(id="b", text="来源：某网\n" + NOTICE)])
    assert out.status == "unique"
    assert eng.metrics.recheck_rejections.labels("format")._value.get() == 1


async def test_two_workers_two_near_duplicates_at_once_exactly_one_unique() -> None:
    w1, w2 = _two_workers(InterleavingStore())
    for k in range(5):
        a, b = _pair(k)
        d1, d2 = await asyncio.gather(w1.decide([a]), w2.decide([b]))
        (unique,) = [d for d in (d1[0], d2[0]) if d.status == "unique"]
        (dup,) = [d for d in (d1[0], d2[0]) if d.status == "duplicate"]
        assert dup.duplicate_of == unique.doc.id, (d1[0].evidence, d2[0].evidence)


class BarrierStore(MemoryFingerprintStore):
    """Holds both workers at ``commit`` until both arrive: both first passes see an empty store, so
    only the recheck as the records are filed can keep the pair from coming out unique twice."""

    def __init__(self) -> None:
        super().__init__()
        self.barrier = asyncio.Barrier(2)

    async def commit(self, claims: Any, records: Any, recheck: Any = ()) -> Any:
        await self.barrier.wait()
        return await super().commit(claims, records, recheck)


async def test_race_both_missed_in_first_pass_exactly_one_unique() -> None:
    store = BarrierStore()
    w1, w2 = _two_workers(store)
    for k in range(4):
        a, b = _pair(k)
        # either worker may hold either document, and either may re-check first
        first, second = (w1, w2) if k % 2 == 0 else (w2, w1)
        da, db = await asyncio.gather(first.decide([a]), second.decide([b]))
        (unique,) = [d for d in (da[0], db[0]) if d.status == "unique"]
        (dup,) = [d for d in (da[0], db[0]) if d.status == "duplicate"]
        assert dup.duplicate_of == unique.doc.id
        assert dup.evidence.race is True


async def test_ttl_per_content_type() -> None:
    now = [1_000_000.0]
    store = MemoryFingerprintStore(clock=lambda: now[0])
    s = load_settings(store_url="memory://", ttl_seconds={"news": 7 * 86400, "announcement": None})
    store.ttl = type(store.ttl)(by_type=s.ttl_seconds)
    eng = Engine(s, store)
    await eng.decide([Document(id="n", text=NOTICE, type="news"),
                      Document(id="a", text=sample_docs(1)[0].text, type="announcement")])
    now[0] += 8 * 86400
    assert await store.expire() == 1
    assert set(await store.fetch([doc_ref("n"), doc_ref("a")])) == {doc_ref("a")}
    out = await eng.decide([Document(id="n2", text=NOTICE, type="news")])
    assert out[0].status == "unique"  # the week-old news item is gone


async def test_file_store_second_run_dedups_against_first(tmp_path: Path) -> None:
    url = f"file://{tmp_path / 'store.json'}"
    docs = sample_docs(60)
    eng = await engine(store_url=url)
    first = await decide_all(eng, docs[:30], 100)
    await eng.close()
    eng2 = await engine(store_url=url)
    again = await decide_all(eng2, docs[:30], 100)
    assert [d.status for d in again] == [d.status for d in first]
    await eng2.close()


def test_invalid_input_has_reasons() -> None:
    cases = {
        b"not json": "bad_json",
        b'{"text": "x"}': "missing_id",
        b'{"id": "1"}': "missing_text",
        b'{"id": "1", "text": "   "}': "empty_text",
        b'{"id": "1", "text": "\xff\xfe"}': "bad_encoding",
        b"[1, 2]": "bad_schema",
        b'{"id": "1", "text": "' + b"a" * 2000 + b'"}': "too_large",
        b'{"id": "1", "text": "ok", "published_at": "yesterday"}': "bad_field",
    }
    for raw, reason in cases.items():
        with pytest.raises(InvalidDocument) as err:
            parse_document(raw, max_bytes=1000)
        assert err.value.reason == reason, raw[:40]
    with pytest.raises(InvalidDocument) as err:
        parse_document(b"[" * 100_000 + b"]" * 100_000)
    assert err.value.reason == "bad_json"


def test_unencodable_fields_and_absurd_times_are_rejected() -> None:
    for raw in (b'{"id": "a\\ud800", "text": "ok"}', b'{"id": "a", "text": "ok", "title": "\\udfff"}',
                b'{"id": "a", "text": "ok", "extra": {"deep": ["\\ud83d"]}}'):
        with pytest.raises(InvalidDocument) as err:
            parse_document(raw)
        assert err.value.reason == "bad_encoding", raw
    ok = parse_document(b'{"id": "a", "text": "\\ud83d\\ude00 ok"}')  # a proper pair is fine
    assert ok.text.startswith("\U0001f600")
    for when in ("1" + "0" * 400, '"9999-12-31T23:59:59+99:00"'):
        with pytest.raises(InvalidDocument) as err:
            parse_document(b'{"id": "a", "text": "ok", "published_at": ' + when.encode() + b"}")
        assert err.value.reason == "bad_field"
