"""Quality on the development set (../shared/datasets): the targets of the engine issue."""

from __future__ import annotations

from pathlib import Path

import pytest

from neardup.config import load_settings
from neardup.learning.evaluate import run_eval

pytestmark = pytest.mark.quality

REQUIRED_RECALL = ["natural_duplicate", "paragraph_reorder", "boilerplate_added",
                   "punctuation_width_change", "traditional_simplified"]


async def test_development_set_quality(datasets_dir: Path) -> None:
    settings = load_settings(store_url="memory://")
    result = await run_eval(settings, datasets_dir / "docs.jsonl", datasets_dir / "pairs.jsonl", None)
    m = result["metrics"]
    print(result["table"])
    assert m["f1"] >= 0.95, result["table"]
    for kind in REQUIRED_RECALL:
        assert m["per_kind"][kind]["recall"] >= 0.97, (kind, result["table"])
    assert m["per_kind"]["negation_flip"]["fpr"] <= 0.02, result["table"]
    assert m["hard_negative_fpr"] <= 0.02, result["table"]
