"""The public API: what ``neardup`` exports, and the README's "Use it from Python" example, run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import neardup
from neardup import Deduplicator, Evidence
from neardup.storage import DecisionRecord

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_example_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it from Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    exec(compile(code.group(1), "README.md", "exec"), {})  # its asserts are the test


def test_exports_are_typed_and_documented() -> None:
    names = {"AsyncDeduplicator", "Deduplicator", "Decision", "Evidence", "Status", "Reason", "Settings",
             "open_store", "__version__"}
    assert set(neardup.__all__) == names
    for name in names - {"__version__"}:
        obj = getattr(neardup, name)
        assert obj.__doc__ and obj.__doc__.strip(), name
    assert isinstance(neardup.__version__, str) and neardup.__version__
    assert (ROOT / "service" / "py.typed").exists()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text()
    assert neardup.Status.DUPLICATE == "duplicate" and neardup.Reason.NEAR == "near"


def test_decisions_serialise_to_the_rows_dedup_writes(tmp_path: Path) -> None:
    with neardup.Deduplicator(store=f"file://{tmp_path / 's.db'}") as dedup:
        text = "一段足够长的测试文字，用来检查公开接口返回的判定与命令行写出的记录完全一致，没有任何差别。"
        out = list(dedup.decide_many([{"id": "x", "text": text, "extra": 1}, {"id": "y", "text": text}]))
        assert [d.status for d in out] == [neardup.Status.UNIQUE, neardup.Status.DUPLICATE]
        row = json.loads(json.dumps(out[1].to_record()))
        assert row["status"] == "duplicate" and row["duplicate_of"] == "x" and row["evidence"]["reason"] == "exact"
        assert json.loads(json.dumps(out[0].to_record()))["extra"] == 1
        assert dedup.check({"id": "z", "text": text}).duplicate_of == "x"
    with neardup.Deduplicator(store=f"file://{tmp_path / 's.db'}") as again:  # the file store kept them
        assert again.decide({"id": "x", "text": text}).evidence.replay


TEXT = "一段足够长的测试文字，用来检查异步接口与同步接口给出完全相同的判定，在事件循环里也能直接使用。"


async def test_the_async_deduplicator_decides_inside_a_running_loop(tmp_path: Path) -> None:
    async def stream():  # type: ignore[no-untyped-def]
        for i in range(3):
            yield {"id": f"s{i}", "text": TEXT}

    async with neardup.AsyncDeduplicator(store=f"file://{tmp_path / 's.db'}") as dedup:
        first = await dedup.decide({"id": "a", "text": TEXT})
        assert first.status is neardup.Status.UNIQUE
        many = await dedup.decide_many([{"id": "b", "text": TEXT}, {"id": "c", "text": TEXT}])
        assert isinstance(many, list) and [d.duplicate_of for d in many] == ["a", "a"]
        streamed = await dedup.decide_many(stream())
        assert [(d.id, d.status) for d in streamed] == [(f"s{i}", neardup.Status.DUPLICATE) for i in range(3)]
        assert (await dedup.check({"id": "z", "text": TEXT})).duplicate_of == "a"
    again = neardup.AsyncDeduplicator(store=f"file://{tmp_path / 's.db'}")
    try:
        assert (await again.decide({"id": "a", "text": TEXT})).evidence.replay  # closed: the file store kept it
    finally:
        await again.close()


async def test_the_sync_deduplicator_inside_a_running_loop_names_the_async_one() -> None:
    from neardup.api import EventLoopRunningError

    dedup = neardup.Deduplicator()
    for call in (lambda: dedup.decide({"id": "a", "text": TEXT}), lambda: dedup.decide_many([]), dedup.open):
        with pytest.raises(EventLoopRunningError, match="running an event loop") as caught:
            call()
        assert "AsyncDeduplicator" in caught.value.one_line()
    dedup.close()


def test_decide_many_is_eager_and_returns_a_list(tmp_path: Path) -> None:
    with neardup.Deduplicator(store=f"file://{tmp_path / 's.db'}") as dedup:
        out = dedup.decide_many([{"id": "a", "text": TEXT}, {"id": "b", "text": TEXT}])  # never iterated
        assert isinstance(out, list) and [d.status for d in out] == [neardup.Status.UNIQUE, neardup.Status.DUPLICATE]
    with neardup.Deduplicator(store=f"file://{tmp_path / 's.db'}") as again:
        assert again.check({"id": "c", "text": TEXT}).duplicate_of == "a"  # decided and stored without iterating


def test_decision_times_are_iso_8601_utc_and_older_epoch_times_still_read() -> None:
    with Deduplicator() as dedup:
        d = dedup.decide({"id": "t", "text": "国家统计局今天发布了十月份国民经济运行数据，工业增加值同比增长。"})
    written = d.evidence.to_dict()["decided_at"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", written)
    assert abs(Evidence.from_dict(d.evidence.to_dict()).decided_at - d.evidence.decided_at) < 1e-3
    assert Evidence.from_dict({"decided_at": 1796295181.762}).decided_at == 1796295181.762  # stored before
    record = DecisionRecord("t", "unique", None, json.dumps({"decided_at": written}))
    assert record.decided_at is not None and abs(record.decided_at - d.evidence.decided_at) < 1e-3
    assert DecisionRecord("t", "unique", None, '{"decided_at": "yesterday"}').decided_at is None
