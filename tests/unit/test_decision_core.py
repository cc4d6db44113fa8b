"""The pure decision core, the shared adaptive thresholds, the hot tier and the engine paths they
change: each without a store where the code allows it."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import numpy as np
import pytest

from neardup.config import load_settings
from neardup.decision import Decision, Evidence, Reason, Rule, Status
from neardup.document import Document
from neardup.engine import Engine
from neardup.rules.policy import Thresholds, WindowCase, decide_window, rule, rule_codes
from neardup.rules.thresholds import STATE_NAME, AdaptiveThresholds
from neardup.sketch.similarity import Similarity, SketchTable
from neardup.storage import StateValue, WindowQuery
from neardup.storage.memory import MemoryFingerprintStore
from tests.fixtures.stores import FetchRecording
from tests.unit.test_engine import NOTICE

T = Thresholds.from_settings(load_settings().thresholds)


async def _engine(store: MemoryFingerprintStore | None = None, worker: str = "w", **overrides: object) -> Engine:
    settings = load_settings(store_url="memory://", worker_id=worker, **overrides)
    return Engine(settings, store or MemoryFingerprintStore())


# -- the rule and the pure window decision --------------------------------------------------------
def test_rule_codes_follow_the_documented_order() -> None:
    cases = [
        (Similarity(0.75, 40, 0.1), Rule.JACCARD),
        (Similarity(0.30, 2, 0.1), Rule.SIMHASH),
        (Similarity(0.50, 10, 0.1), Rule.HYBRID),
        (Similarity(0.30, 30, 0.9), Rule.CONTAINMENT),
        (Similarity(0.20, 2, 0.95), None),  # below half the low Jaccard nothing counts
        (Similarity(0.60, 20, 0.5), None),
    ]
    for sim, expected in cases:
        assert rule(sim, T) is expected, sim
    codes = rule_codes(np.array([c[0].jaccard for c in cases]), np.array([c[0].hamming for c in cases]),
                       np.array([c[0].containment for c in cases]), T)
    assert [c > 0 for c in codes.tolist()] == [c[1] is not None for c in cases]


async def test_decide_window_is_pure_and_matches_the_engine() -> None:
    """The same window through the pure core (no store) and through the engine (memory store)."""
    eng = await _engine()
    docs = [Document(id="a", text=NOTICE), Document(id="b", text="来源：某网\n" + NOTICE),
            Document(id="c", text=NOTICE.replace("给予批准", "不予批准")), Document(id="d", text=NOTICE),
            Document(id="e", text="完全无关的另一篇文章，讲述的是城市公园里春天开花的景象，游客很多，十分热闹。")]
    w = eng._prepare(docs, time.time())
    from neardup.kernels.pairs import self_join

    inner = self_join(w.keys)
    case = WindowCase(SketchTable.of(w.sketches, 128, 1), len(docs), w.profiles,
                      np.ascontiguousarray(inner[:, ::-1]), [None] * len(docs))
    verdicts = decide_window(case, T)
    assert [v.status for v in verdicts] == [Status.UNIQUE, Status.DUPLICATE, Status.UNIQUE, Status.DUPLICATE,
                                            Status.UNIQUE]
    assert verdicts[1].matched == "a" and verdicts[1].reason is Reason.NEAR
    assert verdicts[2].reason is Reason.CRITICAL and verdicts[2].critical is not None
    assert verdicts[3].reason is Reason.EXACT and verdicts[3].matched == "a"
    assert case.counters.get("critical", 0) >= 1
    decided = await eng.decide(docs)
    assert [(d.status, d.duplicate_of) for d in decided] == [
        (v.status, v.matched if v.status is Status.DUPLICATE else None) for v in verdicts]


async def test_symbol_only_texts_are_never_near_duplicates() -> None:
    eng = await _engine()
    a = Document(id="s1", text="★☆★☆★☆ ※※※ ◆◇◆◇ " * 8)
    b = Document(id="s2", text="→←→← ■□■□ ●○●○ ▲△▲△ " * 8)
    same = Document(id="s3", text=a.text)
    out = await eng.decide([a, b, same])
    assert out[1].status is Status.UNIQUE  # no comparable content: J of two empty sets is not 1
    assert out[2].status is Status.DUPLICATE and out[2].evidence.reason is Reason.EXACT


# -- decisions and evidence ----------------------------------------------------------------------
def test_evidence_round_trips_through_json() -> None:
    from neardup.decision import CriticalEvidence

    ev = Evidence(Reason.CRITICAL, None, "x", 0.91, 2, 0.95, 3, T.as_evidence(), 4, "w:1", "w", 1.5,
                  CriticalEvidence("polarity", "不予批准", "N approval+", "x", 0.91, 2), race=True, id_reused=True)
    back = Evidence.from_dict(json.loads(json.dumps(ev.to_dict())))
    assert back == ev
    plain = Evidence(Reason.UNIQUE).to_dict()
    assert "replay" not in plain and "critical" not in plain and plain["reason"] == "unique"
    d = Decision(Document(id="i", text="t", raw={"id": "i", "text": "t", "extra": 1}), Status.UNIQUE, None, ev)
    rec = d.to_record()
    assert rec["extra"] == 1 and rec["status"] == "unique" and rec["evidence"]["threshold_version"] == 4


async def test_a_reused_id_with_other_text_is_decided_anew_and_says_so() -> None:
    eng = await _engine()
    first = await eng.decide([Document(id="url-1", text=NOTICE)])
    same = await eng.decide([Document(id="url-1", text=NOTICE)])
    assert same[0].evidence.replay and same[0].status == first[0].status
    other_text = "本站于今日更新了全部栏目导航，新增图片频道与视频频道，欢迎读者浏览并提出宝贵意见。" * 3
    changed = await eng.decide([Document(id="url-1", text=other_text)])
    assert not changed[0].evidence.replay and changed[0].evidence.id_reused
    assert changed[0].status is Status.UNIQUE
    # the new text is what the id stands for now: a repeat of it is a replay
    assert (await eng.decide([Document(id="url-1", text=other_text)]))[0].evidence.replay


async def test_a_repeated_id_inside_one_window() -> None:
    eng = await _engine()
    other = "另一段完全不同的文字内容，用于检查同一窗口内重复编号的处理方式，不应被合并。" * 2
    out = await eng.decide([Document(id="r", text=NOTICE), Document(id="r", text=NOTICE),
                            Document(id="r", text=other)])
    assert out[1].evidence.replay and out[1].status == out[0].status
    assert out[2].evidence.id_reused and not out[2].evidence.replay


# -- the Bloom filter gates the exact read -------------------------------------------------------
class CountingStore(MemoryFingerprintStore):
    def __init__(self) -> None:
        super().__init__()
        self.queries: list[WindowQuery] = []

    async def lookup(self, query: WindowQuery):  # type: ignore[no-untyped-def]
        self.queries.append(query)
        return await super().lookup(query)


async def test_the_exact_read_happens_only_on_a_bloom_hit_and_the_claim_decides() -> None:
    store = CountingStore()
    eng = await _engine(store)
    await eng.decide([Document(id="a", text=NOTICE)])
    assert store.queries[-1].exact_hashes == []  # a Bloom miss: nothing to read
    out = await eng.decide([Document(id="b", text=NOTICE)])
    assert len(store.queries[-1].exact_hashes) == 1  # a hit: the owner is read
    assert out[0].evidence.reason is Reason.EXACT and out[0].duplicate_of == "a"
    # another process with an empty Bloom filter: the miss skips the read, the claim still decides
    other = await _engine(store, worker="w2")
    late = await other.decide([Document(id="c", text=NOTICE)])
    assert store.queries[-1].exact_hashes == []
    assert late[0].status is Status.DUPLICATE and late[0].duplicate_of == "a"
    assert late[0].evidence.reason is Reason.EXACT


# -- adaptive thresholds, shared through the store -----------------------------------------------
def test_adaptive_thresholds_start_at_the_configured_values_and_stay_in_the_band() -> None:
    s = load_settings().thresholds.model_copy(update={"adaptive_every": 50})
    a = AdaptiveThresholds(s)
    assert a.for_type("news") == T
    for _ in range(50):
        a.observe("news", 0.2, 12)  # a flood of weak near-duplicates
    assert a.due()
    a.written(a.next_value())
    moved = a.for_type("news")
    assert s.adaptive_floor <= moved.jaccard_high < T.jaccard_high
    assert moved.version == 1
    assert a.for_type("announcement").jaccard_high == T.jaccard_high  # per content type
    for _ in range(100_000):
        a.observe("news", 0.0, 64)
    a.written(a.next_value())
    assert a.for_type("news").jaccard_high == s.adaptive_floor  # never below the floor


def test_a_stream_without_duplicates_leaves_the_thresholds_alone() -> None:
    s = load_settings().thresholds.model_copy(update={"adaptive_every": 10})
    a = AdaptiveThresholds(s)
    assert not a.due()
    assert a.for_type("default") == T
    assert a.next_value().version == 1  # nothing observed: nothing to write until due


async def test_workers_share_one_threshold_version_that_survives_a_restart(tmp_path: object) -> None:
    store = MemoryFingerprintStore()
    overrides = {"thresholds": {"adaptive_every": 10}}
    w1 = await _engine(store, "w1", **overrides)
    w2 = await _engine(store, "w2", **overrides)
    docs = [Document(id=f"o{i}", text=NOTICE + f"（第{i}号）") for i in range(30)]
    reprints = [Document(id=f"r{i}", text="来源：某网\n" + d.text + "\n责任编辑：某某") for i, d in enumerate(docs)]
    await w1.decide(docs)
    await w1.decide(reprints[:15])
    assert w1.thresholds.version >= 1
    out = await w2.decide(reprints[15:])  # reads the shared version with its lookup
    assert {d.evidence.threshold_version for d in out} == {w1.thresholds.version}
    again = await _engine(store, "w3", **overrides)  # a restarted worker
    answer = await store.lookup(WindowQuery(state_names=[STATE_NAME]))
    again.thresholds.load(answer.states[STATE_NAME])
    assert again.thresholds.for_type("default") == w2.thresholds.for_type("default")


async def test_a_lost_compare_and_set_keeps_the_observations() -> None:
    store = MemoryFingerprintStore()
    eng = await _engine(store, thresholds={"adaptive_every": 10})
    assert await store.write_state(STATE_NAME, StateValue(1, eng.thresholds.encode({})))  # another worker wrote
    for _ in range(12):
        eng.thresholds.observe("default", 0.8, 2)
    await eng._adapt([])
    assert eng.thresholds.pending_count == 12  # lost the race: kept for the next version
    eng.thresholds.load((await store.lookup(WindowQuery(state_names=[STATE_NAME]))).states[STATE_NAME])
    await eng._adapt([])
    assert eng.thresholds.pending_count == 0 and eng.thresholds.version == 2


# -- the hot tier --------------------------------------------------------------------------------
def test_hot_tier_evicts_by_count_and_age() -> None:
    from neardup.sketch.hot import HotTier

    now = [0.0]
    hot = HotTier(3, 10.0, clock=lambda: now[0])
    s = replace(_sketch(), doc_id="x")
    hot.add((bytes([i]) * 8, s) for i in range(5))
    assert len(hot) == 3 and hot.get(bytes([0]) * 8) is None and hot.get(bytes([4]) * 8) is s
    now[0] = 11.0
    assert hot.get(bytes([4]) * 8) is None  # older than max_seconds


async def test_hot_tier_saves_the_fetch_of_recent_candidates() -> None:
    store = FetchRecording()
    eng = await _engine(store)
    await eng.decide([Document(id="a", text=NOTICE)])
    out = await eng.decide([Document(id="b", text="来源：某网\n" + NOTICE)])
    assert out[0].duplicate_of == "a"
    assert len(store.fetched) == 0 and eng.hot.hits >= 1
    cold = await _engine(store, worker="cold")  # a new process: the record comes from the store
    out = await cold.decide([Document(id="c", text="转载：\n" + NOTICE)])
    assert out[0].duplicate_of == "a" and len(store.fetched) >= 1


def _sketch():  # type: ignore[no-untyped-def]
    from neardup.sketch.similarity import Sketch

    return Sketch("x", np.zeros(128, dtype=np.uint32), 8, b"c", np.zeros(1, dtype=np.uint64), 1, 1, b"", 0.0,
                  np.zeros(0, dtype=np.uint64))


@pytest.mark.parametrize("bits", [8, 16, 32])
async def test_explain_reports_the_numbers_the_engine_used(bits: int) -> None:
    from neardup.explain import explain_pair

    settings = load_settings(store_url="memory://", fingerprint={"signature_bits": bits})
    a = {"id": "a", "text": NOTICE}
    b = {"id": "b", "text": "来源：某网\n" + NOTICE + "\n责任编辑：王五"}
    report = await explain_pair(settings, a, b)
    ev = report["decision_for_b_after_a"]["evidence"]
    assert report["signature_bits"] == bits
    assert (report["jaccard_estimate"], report["hamming"], report["containment"]) == (
        ev["jaccard"], ev["hamming"], ev["containment"])
    assert report["rule"] == ev["rule"]


async def test_reprints_whose_footers_carry_other_timestamps_stay_together() -> None:
    from neardup.text.stamps import mask_timestamps

    assert mask_timestamps("发布时间:2009-07-22 10:30:15 来源") == "发布时间:" + "t" * 19 + " 来源"
    assert mask_timestamps("自2024年1月1日起施行,比分3:1") == "自2024年1月1日起施行,比分3:1"  # content stays
    eng = await _engine()
    body = NOTICE.replace("三十日", "三十个工作日")
    out = await eng.decide([
        Document(id="a", text=body + "\n发布时间：2009-07-22 10:30:15 来源：中新网"),
        Document(id="b", text=body + "\n发布时间：2009-07-23 08:05:41 来源：新浪"),
        Document(id="c", text=body + "\n更新时间：2009年07月22日 16:45"),
        Document(id="d", text=body.replace("三十个工作日", "六十个工作日") + "\n发布时间：2009-07-22 10:30:15"),
    ])
    # together: b joins a, and c joins a's cluster through whichever of a and b is nearer
    assert (out[1].status.value, out[1].duplicate_of) == ("duplicate", "a")
    assert out[2].status is Status.DUPLICATE and out[2].duplicate_of in ("a", "b")
    assert out[3].status is Status.UNIQUE and out[3].evidence.critical is not None  # a changed term still counts


async def test_reprints_whose_headers_carry_other_dates_stay_together() -> None:
    """A date in a labelled field (Published: 5 March 2004, 发布日期：2019-03-05) is the page's, not
    the story's, even without a clock time; the same date in a sentence is content."""
    from neardup.text.stamps import mask_timestamps

    assert mask_timestamps("published: 5 march 2004 by") == "published: " + "t" * 12 + " by"
    assert mask_timestamps("发布日期:2019-03-05 来源") == "发布日期:" + "t" * 10 + " 来源"
    assert mask_timestamps("the vote on 5 march 2004 was") == "the vote on 5 march 2004 was"  # content stays
    eng = await _engine()
    story = ("The bank said profits rose 12% in the year to March, helped by strong demand for loans. "
             "Shares in the group were up 3% in early trading, and analysts said the results were "
             "better than expected. The chief executive said the outlook for the coming year was good.")
    out = await eng.decide([
        Document(id="a", text="Published: 5 March 2004\n" + story + "\nShare this story: Email Facebook"),
        Document(id="b", text="Published: 6 March 2004\n" + story + "\nPrint this page"),
        Document(id="c", text="Published: 6 March 2004\n" + story.replace("rose 12%", "fell 12%")),
    ])
    assert (out[1].status.value, out[1].duplicate_of) == ("duplicate", "a")
    assert out[2].status is Status.UNIQUE and out[2].evidence.critical is not None  # a reversal still counts


async def test_a_copy_matching_two_versions_equally_joins_the_one_more_copies_carry() -> None:
    """A truncated reprint ends before the word a flip changed, so it matches the original and the
    flip equally (here: the same signature, and the flip's id sorts first). It joins the cluster
    most of its candidates belong to (the original and its reprint), not the flip."""
    eng = await _engine()
    second = "第二条 该公司应当自本批复下达之日起三十日内办理变更登记手续，逾期未办理的，本批复自动失效。"
    original = NOTICE.split("该公司")[0] + second
    flip = original.replace("应当自", "不得自")
    docs = [Document(id="truncated", text=NOTICE.split("该公司")[0]), Document(id="original", text=original),
            Document(id="reprint", text="来源：某某网\n" + original), Document(id="a-flip", text=flip)]
    w = eng._prepare(docs, time.time())
    t, o, r, f = w.sketches
    r.original = "original"
    # as similar as the original
    f = replace(o, doc_id="a-flip", profile_entries=f.profile, content_hash=f.content_hash)
    assert w.profiles[3].critical_against(o.profile) is not None  # the flip contradicts the original
    case = WindowCase(SketchTable.of([t, o, r, f], 128, 1), 1, w.profiles[:1],
                      np.array([[0, 1], [0, 2], [0, 3]], dtype=np.int64), [None])
    (v,) = decide_window(case, T)
    assert v.status is Status.DUPLICATE and v.matched == "original", v


async def test_a_document_never_joins_the_cluster_of_one_it_contradicts() -> None:
    """A flip came first; a copy without the flipped sentence joined it, and records name their
    cluster's original (the flip), so the original, arriving last, sees that copy as a member of the
    flip's cluster and stays apart, even though the copy is more similar to it than the flip is."""
    eng = await _engine()
    second = "第二条 该公司应当自本批复下达之日起三十日内办理变更登记手续，逾期未办理的，本批复自动失效。"
    original = NOTICE.split("该公司")[0] + second
    flip = original.replace("应当自", "不得自")
    docs = [Document(id="original", text=original), Document(id="flip", text=flip),
            Document(id="copy", text=NOTICE.split("该公司")[0])]
    w = eng._prepare(docs, time.time())
    o, f, c = w.sketches
    assert w.profiles[0].critical_against(f.profile) is not None  # the flip contradicts the original
    copy = replace(o, doc_id="copy", profile_entries=c.profile, content_hash=c.content_hash, original="flip")
    case = WindowCase(SketchTable.of([o, copy, f], 128, 1), 1, w.profiles[:1],
                      np.array([[0, 1], [0, 2]], dtype=np.int64), [None])
    (v,) = decide_window(case, T)  # the copy is as similar as the original itself; the flip less
    assert v.status is Status.UNIQUE and v.critical is not None and v.critical.against == "flip", v
    # and a document that joins a member names the member's original as its cluster
    member = replace(copy, original="flip", doc_id="member")
    case = WindowCase(SketchTable.of([replace(o, doc_id="reprint"), member], 128, 1), 1, w.profiles[2:3],
                      np.array([[0, 1]], dtype=np.int64), [None])
    (v,) = decide_window(case, T)
    assert v.matched == "member" and v.cluster == "flip" and case.table.sketches[0].original == "flip"


async def test_a_truncated_copy_is_as_near_as_it_is_contained() -> None:
    """A copy cut after the flipped word came first, then the flip, then the original. The flip
    contradicts the original and, by Jaccard, is far nearer to it than the cut copy (about half
    its shingles); the cut copy is all inside the original. *Reversal nearer* measures nearness by
    the larger of Jaccard and containment, so the original still joins its own cut copy."""
    eng = await _engine()
    tail = ("该公司应当自本批复下达之日起三十日内向登记机关办理变更登记手续，并将变更后的营业执照副本报送我局备案。"
            "逾期未办理的，本批复自动失效，该公司如需继续变更，应当重新提出申请并提交完整的申请材料。"
            "各有关单位应当按照职责分工做好后续监管工作，发现违法违规行为的，依法予以查处并及时向社会公开。"
            "本批复自下达之日起执行，此前有关文件与本批复不一致的，以本批复为准。特此批复，请遵照执行。")
    original = NOTICE.split("该公司")[0] + tail
    flip = original.replace("决定给予批准", "决定不予批准")
    cut = NOTICE.split("该公司")[0] + tail.split("。")[0] + "。"  # about half the original: an LSH candidate
    out = await eng.decide([Document(id="cut", text=cut), Document(id="flip", text=flip),
                            Document(id="original", text=original)])
    assert out[1].status is Status.UNIQUE and out[1].evidence.critical is not None  # the flip is no copy of the cut
    o = out[2].evidence
    assert (out[2].status, out[2].duplicate_of) == (Status.DUPLICATE, "cut") and o.rule in (Rule.HYBRID,
                                                                                        Rule.CONTAINMENT), o
    assert o.jaccard is not None and o.jaccard < 0.55 and (o.containment or 0) > 0.9  # far by J, inside by C


# -- one name for each thing: Status, the outputs, dead_letter / dead-letter ---------------------
def test_decisions_are_compared_as_the_status_enum_not_as_strings() -> None:
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    literal = re.compile(r"""(?:[=!]=\s*["'](?:unique|duplicate)["'])|(?:in \(["']unique["'], ["']duplicate["']\))""")
    found = [f"{path.relative_to(root)}:{n}: {line.strip()}"
             for folder in ("service", "agents", "storage")
             for path in sorted((root / folder).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if literal.search(line)]  # fmt: skip
    assert not found, "compare with neardup.decision.Status:\n" + "\n".join(found)


def test_outputs_are_an_enum_named_as_the_metric_labels_and_topics() -> None:
    from neardup.agents.dedup import Output
    from neardup.agents.topics import resolve_topic
    from neardup.metrics import OUTPUTS

    assert tuple(o.value for o in Output) == OUTPUTS
    assert {o.value for o in Output if o is not Output.DEAD_LETTER} == {s.value for s in Status}
    settings = load_settings()
    assert settings.topics.dead_letter == "dead-letter"  # a topic name: with a hyphen
    assert resolve_topic(settings, "dead-letter") == resolve_topic(settings, Output.DEAD_LETTER) == "dead-letter"
