"""What the bench scripts do with a result: print it as JSON and, given ``--json PATH``, write it there."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def emit(result: Mapping[str, Any], path: Path | None) -> None:
    """Print ``result`` (indented, non-ASCII kept) and write the same text to ``path`` if given."""
    text = json.dumps(result, ensure_ascii=False, indent=1)
    print(text)
    if path is not None:
        path.write_text(text + "\n", encoding="utf-8")
