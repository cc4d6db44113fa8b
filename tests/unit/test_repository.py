"""The repository as a reader meets it: the license pyproject.toml names, and only paths that exist cited."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# a path into one of the repository's folders, as comments, docstrings and documents cite them
# ("docs/s" is a rate, documents a second, not a path)
FOLDERS = "service|storage|agents|config|tests|bench|scripts|deploy|samples|docs(?!/s\\b)|\\.ci"
PLACEHOLDER = re.compile(r"\b(?:NAME|DATE|KIND|N)\b")  # a file name's template: bench/results/NAME-DATE.json
CITED = re.compile(rf"(?<![\w./-])((?:{FOLDERS})/[\w./-]*\w)")
TEXT_SUFFIXES = (".py", ".md", ".toml", ".yml", ".yaml", ".sh", ".json", ".cfg")


def tracked_text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    names = [n for n in out.splitlines() if n.endswith(TEXT_SUFFIXES) or n in ("Makefile", "Dockerfile")]
    return [ROOT / n for n in names if (ROOT / n).is_file()]


def test_license_file_matches_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == {"text": "Apache-2.0"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text


def test_every_cited_path_exists() -> None:
    missing: dict[str, set[str]] = {}
    for path in tracked_text_files():
        for m in CITED.finditer(path.read_text(encoding="utf-8", errors="replace")):
            cited = m.group(1)
            if "*" not in cited and not PLACEHOLDER.search(cited) and not (ROOT / cited).exists():
                missing.setdefault(cited, set()).add(str(path.relative_to(ROOT)))
    assert not missing, {k: sorted(v) for k, v in missing.items()}
