"""The core install as a new user gets it: a fresh virtual environment with only the core dependencies.

The core requirements of pyproject.toml are installed with requirements.lock as constraints (so
the same pins as CI), then the project itself as a wheel with ``--no-deps``. In that environment
``neardup dedup`` runs on the sample, the optional parts are absent and ask for their extra in one
line, and from outside the checkout ``import neardup`` works while ``service``, ``storage``,
``agents`` and ``config`` do not exist.

Needs the package index (or uv's cache): skipped only when the index cannot be reached.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from neardup.kernels.cache import COMPILE_NOTICE

pytestmark = [pytest.mark.install, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample.jsonl"
# what uv prints when it cannot reach the index (and has nothing cached)
OFFLINE = re.compile(
    r"(failed to fetch|error sending request|dns error|connection refused|network is unreachable|"
    r"could not connect|timed out|temporary failure in name resolution|offline)",
    re.IGNORECASE,
)


def uv() -> list[str]:
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=900,
                          check=False)  # fmt: skip


def install_step(cmd: list[str]) -> None:
    res = run(cmd, cwd=ROOT)
    if res.returncode != 0 and OFFLINE.search(res.stderr):
        pytest.skip(f"package index unreachable, cannot build the core environment: {res.stderr.strip()[-300:]}")
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr[-3000:]}"


@pytest.fixture(scope="module")
def core_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A venv holding the core dependencies (pinned by requirements.lock) and neardup, nothing else."""
    base = tmp_path_factory.mktemp("core-install")
    venv = base / "venv"
    install_step([*uv(), "venv", "-q", "--python", sys.executable, str(venv)])
    python = venv / "bin" / "python"
    core = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    install_step([*uv(), "pip", "install", "-q", "--python", str(python), "-c", str(ROOT / "requirements.lock"), *core])
    # the wheel is built from a copy: a build in the checkout would leave build/ and *.egg-info there
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    for name in ("service", "storage", "agents", "config", "bench/suite"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    install_step([*uv(), "pip", "install", "-q", "--python", str(python), "--no-deps", str(source)])
    yield venv


def outside(venv: Path, tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``neardup ARGS`` (or ``python -c`` when args start with -c) run in ``tmp_path``, outside the checkout.

    The kernel cache is the test session's (tests/conftest.py sets ``NUMBA_CACHE_DIR``): kernels
    are cached by their source, so the installed wheel loads what the checkout compiled.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    exe = [str(venv / "bin" / "python")] if args[0] == "-c" else [str(venv / "bin" / "neardup")]
    return run([*exe, *args], cwd=tmp_path, env=env, stdin=stdin)


def test_core_install_has_no_optional_parts(core_env: Path, tmp_path: Path) -> None:
    code = ("import importlib.util as u, json; "
            "print(json.dumps({m: u.find_spec(m) is not None for m in "
            "('faust', 'aiokafka', 'redis', 'matplotlib', 'pyarrow', 'numba', 'click')}))")  # fmt: skip
    res = outside(core_env, tmp_path, "-c", code)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"faust": False, "aiokafka": False, "redis": False, "matplotlib": False,
                                      "pyarrow": False, "numba": True, "click": True}  # fmt: skip


def test_core_install_runs_dedup_on_the_sample_with_the_checkouts_compiled_kernels(core_env: Path,
                                                                                   tmp_path: Path) -> None:
    # the checkout's run compiles what the sample needs, unless an earlier test did
    here = subprocess.run([sys.executable, "-m", "neardup", "dedup", str(SAMPLE), "-q", "-o", os.devnull],
                          capture_output=True, text=True, timeout=900, check=False, cwd=ROOT)  # fmt: skip
    assert here.returncode == 0, here.stderr[-3000:]
    out = tmp_path / "decisions.jsonl"
    res = outside(core_env, tmp_path, "dedup", str(SAMPLE), "-q", "-o", str(out))
    assert res.returncode == 0, res.stderr[-3000:]
    assert COMPILE_NOTICE not in res.stderr, "the installed wheel compiled the kernels again"
    decided = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(decided) == sum(1 for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip())
    assert {d["status"] for d in decided} == {"unique", "duplicate"}
    summary = json.loads(res.stderr.strip().splitlines()[-1])
    assert summary["documents"] == len(decided) and summary["rejected"] == 0


@pytest.mark.parametrize(("args", "extra"), [
    (["worker"], "kafka"),
    (["publish", str(SAMPLE)], "kafka"),
    (["tail", "raw"], "kafka"),
    (["dedup", str(SAMPLE), "--store", "redis://127.0.0.1:6379"], "redis"),
    (["dedup", str(SAMPLE), "-o", "out.parquet"], "parquet"),
    (["eval", "--docs", str(SAMPLE), "--pairs", str(ROOT / "samples" / "pairs.jsonl"), "--report", "r"], "plots"),
])  # fmt: skip
def test_a_missing_extra_is_named_in_one_line(core_env: Path, tmp_path: Path, args: list[str], extra: str) -> None:
    res = outside(core_env, tmp_path, *args)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(lines) == 1, res.stderr[-3000:]
    assert f"pip install 'neardup[{extra}]'" in lines[0] and "Traceback" not in res.stderr


def test_only_neardup_is_importable_outside_the_checkout(core_env: Path, tmp_path: Path) -> None:
    code = ("import importlib, json; r = {}\n"
            "for m in ('neardup', 'neardup.cli', 'neardup.storage', 'neardup.config', 'neardup.errors', "
            "'service', 'storage', 'agents', 'config'):\n"
            "    try:\n        importlib.import_module(m); r[m] = True\n"
            "    except ImportError:\n        r[m] = False\n"
            "print(json.dumps(r))")  # fmt: skip
    res = outside(core_env, tmp_path, "-c", code)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"neardup": True, "neardup.cli": True, "neardup.storage": True,
                                      "neardup.config": True, "neardup.errors": True, "service": False,
                                      "storage": False, "agents": False, "config": False}  # fmt: skip
