"""The learning loop: what feedback teaches, the harm guard, the model in the store, the commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from neardup.config import load_settings
from neardup.document import Document
from neardup.engine import Engine
from neardup.learning.model import (
    Label,
    Model,
    apply_to_lexicon,
    label_folds,
    learn,
    learn_thresholds_from_store,
    merge_labels,
    one_sided_words,
    read_model,
    replaced_words,
    write_model,
)
from neardup.storage.memory import MemoryFingerprintStore
from neardup.text.lexicon import load_lexicon
from tests.unit.test_engine import NOTICE

ROOT = Path(__file__).resolve().parents[2]
# 核准 / 否决 are in no configured polarity class: only feedback can teach them
TRAIN = NOTICE.replace("决定给予批准", "决定予以核准")
FLIP = TRAIN.replace("予以核准", "予以否决")
TEST = ("关于某某集团调整注册资本申请的批复\n各有关部门：经审核，某某集团提交的调整注册资本申请符合相关规定，"
        "依照《公司登记管理条例》第三十一条，决定予以核准。请该集团在收到本批复之日起二十日内办理相关手续，"
        "逾期未办理的，本批复自行失效。特此批复。\n二〇二四年五月十日")


def test_a_replaced_word_in_an_equal_passage_is_found() -> None:
    assert ("核准", "否决") in replaced_words(TRAIN, FLIP)
    assert replaced_words("the plan was approved by the board", "the plan was vetoed by the board") == [
        ("approved", "vetoed")]
    assert replaced_words(TRAIN, TRAIN) == []
    assert "责任编辑" in one_sided_words(TRAIN, TRAIN + "\n责任编辑：王五")


def test_model_round_trips_and_applies_to_the_lexicon() -> None:
    m = Model(version=3, polarity=(("核准", "learned1", "+"), ("否决", "learned1", "-")), heavier=("核准",),
              lighter=("责任编辑",), thresholds={"jaccard_high": 0.75}, labels=(Label("a", "b", False),),
              parent=2, note="n", metrics={"pair_f1": 0.9})
    assert Model.from_bytes(m.to_bytes()) == m
    lex = apply_to_lexicon(load_lexicon(), m)
    assert lex.polarity["否决"] == ("learned1", "-") and "核准" in lex.decision and "责任编辑" in lex.template
    assert lex.polarity["批准"] == load_lexicon().polarity["批准"]  # configured words keep their class


def test_a_later_judgement_of_a_pair_supersedes_an_earlier_one() -> None:
    held = merge_labels([Label("a", "b", True)], [Label("b", "a", False), Label("c", "d", True)])
    assert sorted((x.a, x.b, x.is_duplicate) for x in held) == [("b", "a", False), ("c", "d", True)]


def _three(text: str, prefix: str) -> dict[str, Document]:
    """Three independent notices made from ``text`` (another document number each), ids
    prefix0..prefix2."""
    return {f"{prefix}{k}": Document(id=f"{prefix}{k}", text=f"{text}\n文号：2024-{k + 17}") for k in range(3)}


async def test_feedback_teaches_a_reversal_the_engine_then_keeps_apart() -> None:
    settings = load_settings(store_url="memory://", worker_id="learn")
    docs = {**_three(TRAIN, "t"), **_three(FLIP, "f")}
    before = Engine(settings, MemoryFingerprintStore())
    out = await before.decide([Document(id="x", text=TEST), Document(id="y", text=TEST.replace("核准", "否决"))])
    assert out[1].status == "duplicate"  # unknown words: the reversal is missed
    model, outcome = await learn(settings, Model(), [Label(f"t{k}", f"f{k}", False) for k in range(3)], docs)
    assert outcome.accepted and model.version == 1
    assert ("否决", "approval", "-") in model.polarity  # the class of its configured partner 核准
    after = Engine(settings, MemoryFingerprintStore())
    after.apply_model(model)
    out = await after.decide([Document(id="x", text=TEST), Document(id="y", text=TEST.replace("核准", "否决"))])
    assert out[1].status == "unique" and out[1].evidence.critical is not None
    assert out[1].evidence.model_version == 1


async def test_one_pair_teaches_no_word_and_punctuation_or_stop_words_never() -> None:
    settings = load_settings(store_url="memory://", worker_id="learn")
    docs = {**_three(TRAIN, "t"), **_three(FLIP, "f")}
    model, outcome = await learn(settings, Model(), [Label("t0", "f0", False)], docs)
    assert outcome.accepted and model.polarity == ()  # one pair's word is a guess
    comma = {**_three(TRAIN, "t"), **_three(TRAIN.replace("，", "、"), "c")}
    model, _ = await learn(settings, Model(), [Label(f"t{k}", f"c{k}", False) for k in range(3)], comma)
    assert all(w not in ("，", "、") for w, _, _ in model.polarity)


async def test_feedback_that_lowers_f1_on_the_labels_held_is_rejected() -> None:
    settings = load_settings(store_url="memory://", worker_id="learn")
    synonym = TRAIN.replace("予以核准", "予以准许")  # a reprint with a synonym: a duplicate
    docs = {d.id: d for d in (Document(id="t", text=TRAIN), Document(id="s", text=synonym))}
    docs |= {**_three(TEST, "u"), **_three(TEST.replace("核准", "准许"), "v")}
    good, outcome = await learn(settings, Model(), [Label("t", "s", True)], docs)
    assert outcome.accepted and good.metrics["pair_f1"] == 1.0
    # a reviewer's slips: the same synonym swap judged "not a duplicate" three times would teach
    # 核准/准许 as a reversal and split the pair already held as a duplicate: the batch is refused
    _, rejected = await learn(settings, good, [Label(f"u{k}", f"v{k}", False) for k in range(3)], docs)
    assert not rejected.accepted and "rejected" in rejected.message
    assert rejected.version == good.version and rejected.after["pair_f1"] < rejected.before["pair_f1"]


def _many(text: str, prefix: str, n: int) -> dict[str, Document]:
    """``n`` independent notices made from ``text`` (another document number each)."""
    return {f"{prefix}{k}": Document(id=f"{prefix}{k}", text=f"{text}\n文号：2024-{k + 17}") for k in range(n)}


def test_folds_keep_pairs_that_share_a_document_together() -> None:
    labels = [Label("a", "b", True), Label("c", "d", False), Label("b", "e", True), Label("f", "g", True)]
    folds = label_folds(labels, 3)
    assert folds[0] == folds[2] and len({folds[0], folds[1], folds[3]}) == 3


async def test_a_batch_whose_lesson_fails_out_of_fold_is_rejected() -> None:
    """Six reviewers' "not a duplicate" on a synonym swap (核准 -> 准许) and three "duplicate" on
    the same swap: learned from all of them, 核准/准许 becomes a reversal; but each fold decided
    by what the others teach comes out worse than before (the duplicates are split), so nothing
    is learned, although no label was held before the batch."""
    settings = load_settings(store_url="memory://", worker_id="learn")
    synonym = TRAIN.replace("予以核准", "予以准许")
    docs = {**_many(TEST, "u", 6), **_many(TEST.replace("核准", "准许"), "v", 6),
            **_many(TRAIN, "t", 3), **_many(synonym, "s", 3)}
    labels = [Label(f"u{k}", f"v{k}", False) for k in range(6)] + [Label(f"t{k}", f"s{k}", True) for k in range(3)]
    candidate, outcome = await learn(settings, Model(), labels, docs)
    assert any(word == "准许" for word, _, _ in candidate.polarity)  # what all of them together would teach
    assert not outcome.accepted and "out of fold" in outcome.message
    assert outcome.version == 0 and outcome.out_of_fold_after["pair_f1"] < outcome.out_of_fold_before["pair_f1"]


async def test_thresholds_from_the_store_are_validated_out_of_fold() -> None:
    """The service's path (labels from the feedback topic, features from the stored records)
    reports and applies the same out-of-fold check."""
    settings = load_settings(store_url="memory://", worker_id="learn")
    store = MemoryFingerprintStore()
    docs = {**_many(TRAIN, "t", 3), **_many(FLIP, "f", 3)}
    await Engine(settings, store).decide(list(docs.values()))
    labels = [Label(f"t{k}", f"f{k}", False) for k in range(3)] + [Label("t0", "t1", True)]
    _, outcome = await learn_thresholds_from_store(settings, store, Model(), labels)
    assert outcome.out_of_fold_before and outcome.out_of_fold_after
    assert outcome.accepted == (outcome.out_of_fold_after["pair_f1"] >= outcome.out_of_fold_before["pair_f1"])


TEMPLATE = ("经审查，申请人{n}于2024年3月提交的食品经营许可申请材料齐全，符合法定形式，本局决定准予许可。"
            "请申请人{n}自收到本通知之日起三十日内到政务服务中心窗口领取许可证，逾期未领取的视为放弃。特此通知。")
SHOPS = ["福瑞达", "恒昌隆", "德润祥", "华信达", "鑫源泰", "瑞丰和", "永盛兴", "裕丰祥"]  # neither names nor places


async def test_reviewers_teach_a_templates_name_field() -> None:
    """Three overturned merges of one notice sent about other shops (names the dictionary lacks)
    teach the field (the word before the name, 申请人), not the names, for the content type of
    those notices: a fourth pair of that type with two shops never seen is kept apart by the name
    check, while the same pair sent as another type is not. Two pairs teach nothing."""
    settings = load_settings(store_url="memory://", worker_id="learn")
    docs, labels = {}, []
    for k in range(3):
        for side, shop in (("a", SHOPS[2 * k]), ("b", SHOPS[2 * k + 1])):
            docs[f"{side}{k}"] = Document(id=f"{side}{k}", text=TEMPLATE.format(n=shop) + f"编号{k}",
                                          type="announcement")
        labels.append(Label(f"a{k}", f"b{k}", False))

    def unseen(content_type: str) -> list[Document]:
        return [Document(id=f"x-{content_type}", text=TEMPLATE.format(n=SHOPS[6]), type=content_type),
                Document(id=f"y-{content_type}", text=TEMPLATE.format(n=SHOPS[7]), type=content_type)]

    before = await Engine(settings, MemoryFingerprintStore()).decide(unseen("announcement"))
    assert before[1].status == "duplicate"  # names the dictionary lacks: merged
    few, _ = await learn(settings, Model(), labels[:2], docs)
    assert few.type_name_fields == ()
    model, outcome = await learn(settings, Model(), labels, docs)
    assert outcome.accepted and model.name_fields_by_type() == {"announcement": ("申请人",)}
    assert Model.from_bytes(model.to_bytes()).name_fields_by_type() == {"announcement": ("申请人",)}
    after = Engine(settings, MemoryFingerprintStore())
    after.apply_model(model)
    out = await after.decide(unseen("announcement"))
    assert out[1].status == "unique" and out[1].evidence.critical is not None
    assert out[1].evidence.critical.kind == "entity"
    news = await after.decide(unseen("news"))  # the field was taught for announcements
    assert news[1].status == "duplicate"


async def test_workers_adopt_a_new_model_version_from_the_store_without_a_restart() -> None:
    store = MemoryFingerprintStore()
    settings = load_settings(store_url="memory://", worker_id="w")
    worker = Engine(settings, store)
    first = await worker.decide([Document(id="a", text=NOTICE)])
    assert first[0].evidence.model_version == 0
    model, history = await read_model(store)
    assert model.version == 0 and history == []
    learned = Model(version=1, polarity=(("核准", "learned1", "+"), ("否决", "learned1", "-")))
    assert await write_model(store, learned, history)
    assert not await write_model(store, learned, history)  # compare-and-set: version 1 exists
    out = await worker.decide([Document(id="b", text=TEST)])
    assert out[0].evidence.model_version == 1 and worker.model.version == 1
    assert (await read_model(store))[1][0]["version"] == 1


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "neardup", *args], capture_output=True, text=True, timeout=600,
                          cwd=ROOT, check=False)


def test_feedback_and_model_commands_on_a_file_store(tmp_path: Path) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in (
        {"id": "t", "text": TRAIN}, {"id": "f", "text": FLIP}, {"id": "r", "text": "来源：某网\n" + TRAIN})) + "\n")
    fb = tmp_path / "feedback.jsonl"
    fb.write_text('{"a": "t", "b": "f", "is_duplicate": false}\n{"a": "t", "b": "r", "is_duplicate": true}\n')
    store = f"file://{tmp_path / 'store.db'}"
    run = _cli("feedback", str(fb), "--docs", str(docs), "--store", store)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["version"] == 1
    show = json.loads(_cli("model", "show", "--store", store).stdout)
    assert show["version"] == 1 and show["labels"] == {"duplicate": 1, "not_duplicate": 1}
    back = _cli("model", "rollback", "--to", "0", "--store", store)
    assert back.returncode == 0, back.stderr
    history = json.loads(_cli("model", "history", "--store", store).stdout)
    assert [h["version"] for h in history] == [1, 2] and history[1]["note"] == "rollback to v0"
    assert json.loads(_cli("model", "show", "--store", store).stdout)["polarity_pairs"] == []
    missing = _cli("model", "rollback", "--to", "7", "--store", store)
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1 and "no model version 7" in missing.stderr


def _one_error_line(run: subprocess.CompletedProcess[str]) -> str:
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("neardup: error: "), run.stderr
    return lines[0]


def test_feedback_and_rollback_refuse_a_store_that_does_not_persist(tmp_path: Path) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "t", "text": TRAIN}, ensure_ascii=False) + "\n"
                    + json.dumps({"id": "f", "text": FLIP}, ensure_ascii=False) + "\n")
    fb = tmp_path / "feedback.jsonl"
    fb.write_text('{"a": "t", "b": "f", "is_duplicate": false}\n')
    for args in (("feedback", str(fb), "--docs", str(docs)), ("model", "rollback", "--to", "0"),
                 ("feedback", str(fb), "--docs", str(docs), "--store", "memory://")):
        run = _cli(*args)
        assert run.returncode == 1 and "accepted" not in run.stdout, (args, run.stdout)
        line = _one_error_line(run)
        assert "memory://" in line and "--store file://PATH" in line, line


def test_model_show_refuses_a_missing_file_store_and_creates_nothing(tmp_path: Path) -> None:
    store = tmp_path / "typo.db"
    for args in (("model", "show"), ("model", "history"), ("model", "rollback", "--to", "0")):
        run = _cli(*args, "--store", f"file://{store}")
        assert run.returncode == 1, run.stdout
        assert "no such store file" in _one_error_line(run) and str(store) in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_overturned_labels_are_counted() -> None:
    from neardup.learning.model import overturned_labels

    held = [Label("a", "b", True), Label("c", "d", False)]
    assert overturned_labels(held, [Label("b", "a", False), Label("c", "d", False), Label("e", "f", True)]) == 1
    assert overturned_labels(held, [Label("a", "b", False), Label("a", "b", True)]) == 0  # the last word counts


def test_the_feedback_summary_scores_as_model_show_and_counts_overturned_labels(tmp_path: Path) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in (
        {"id": "t", "text": TRAIN}, {"id": "f", "text": FLIP}, {"id": "r", "text": "来源：某网\n" + TRAIN})) + "\n")
    store = f"file://{tmp_path / 'store.db'}"
    first = tmp_path / "first.jsonl"
    first.write_text('{"a": "t", "b": "f", "is_duplicate": false}\n{"a": "t", "b": "r", "is_duplicate": true}\n')
    run = _cli("feedback", str(first), "--docs", str(docs), "--store", store)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    show = json.loads(_cli("model", "show", "--store", store).stdout)
    assert summary["metrics"] == show["metrics"] and "pair_f1" in show["metrics"]
    assert summary["labels_overturned"] == 0 and summary["guard"]["labels"] == 0
    second = tmp_path / "second.jsonl"  # a reviewer changes their mind about t / r
    second.write_text('{"a": "r", "b": "t", "is_duplicate": false}\n')
    again = json.loads(_cli("feedback", str(second), "--docs", str(docs), "--store", store).stdout)
    assert again["labels_overturned"] == 1 and again["labels_held"] == 2
    assert again["guard"]["labels"] == 2 and set(again["guard"]) == {"labels", "before", "after"}
    assert again["accepted"] and "1 label(s) held overturned" in again["message"], again
    assert again["metrics"] == json.loads(_cli("model", "show", "--store", store).stdout)["metrics"]
