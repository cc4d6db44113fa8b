"""The public API: what ``neardup`` exports, and the README's "Use it from Python" example, run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import neardup

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_example_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it from Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    exec(compile(code.group(1), "README.md", "exec"), {})  # its asserts are the test


def test_exports_are_typed_and_documented() -> None:
    names = {"Deduplicator", "Decision", "Evidence", "Status", "Reason", "Settings", "open_store", "__version__"}
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
