"""One compile cache for everything (service/kernels/cache.py), the notice while kernels compile,
and ``neardup warmup`` (service/cli/warmup.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from neardup.cli import cli
from neardup.cli.warmup import kernel_dispatchers
from neardup.kernels import cache as kcache
from neardup.text.cache import cache_dir

ROOT = Path(__file__).resolve().parents[2]


def _env(**set_: str) -> dict[str, str]:
    """The test's environment without any cache variable, plus ``set_``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "NEARDUP_CACHE_DIR", "XDG_CACHE_HOME", "NUMBA_DISABLE_JIT")}
    return {**env, **set_}


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          cwd=ROOT, check=True)  # fmt: skip


# ---------------------------------------------------------------- where the cache is


@pytest.mark.parametrize(("variables", "expected"), [
    ({"NUMBA_CACHE_DIR": "/n", "NEARDUP_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x"}, "/n"),
    ({"NEARDUP_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x"}, "/c/numba"),
    ({"XDG_CACHE_HOME": "/x"}, "/x/neardup/numba"),
    ({"HOME": "/h"}, "/h/.cache/neardup/numba"),
])  # fmt: skip
def test_kernel_cache_dir_order(monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], expected: str) -> None:
    for name in ("NUMBA_CACHE_DIR", "NEARDUP_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert kcache.kernel_cache_dir() == Path(expected)


def test_derived_tables_and_kernels_share_one_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("NEARDUP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    assert cache_dir() == kcache.cache_root() == tmp_path / "neardup"
    assert kcache.kernel_cache_dir() == cache_dir() / "numba"


def test_importing_neardup_points_numba_at_the_shared_cache(tmp_path: Path) -> None:
    # numba imported first (a notebook that uses numba itself): its configuration is read again
    code = ("import numba, os; from numba.core import config; import neardup.kernels; "
            "print(os.environ['NUMBA_CACHE_DIR']); print(config.CACHE_DIR)")  # fmt: skip
    out = _python(code, _env(XDG_CACHE_HOME=str(tmp_path))).stdout.split()
    assert out == [str(tmp_path / "neardup" / "numba")] * 2


def test_numba_cache_dir_wins(tmp_path: Path) -> None:
    code = "import os, neardup.kernels; from numba.core import config; print(config.CACHE_DIR)"
    out = _python(code, _env(XDG_CACHE_HOME=str(tmp_path / "x"), NUMBA_CACHE_DIR=str(tmp_path / "n"))).stdout
    assert out.strip() == str(tmp_path / "n")


# ---------------------------------------------------------------- keyed by the kernels' source

HASH_SPANS = ("import numpy as np; from neardup.kernels.hashing import hash_spans; "
              "cps = np.arange(10, dtype=np.uint32); s = np.array([0, 3], np.int64); "
              "e = np.array([3, 6], np.int64); print(hash_spans(cps, s, e, np.uint64(7)).shape)")  # fmt: skip


def test_kernels_are_cached_under_the_source_digest_and_a_callers_own_functions_as_numba_does(tmp_path: Path) -> None:
    mine = tmp_path / "mine.py"
    mine.write_text("import numba\n@numba.njit(cache=True)\ndef twice(x):\n    return 2 * x\n", encoding="utf-8")
    code = f"{HASH_SPANS}; import sys; sys.path.insert(0, {str(tmp_path)!r}); import mine; print(mine.twice(21))"
    out = _python(code, _env(NUMBA_CACHE_DIR=str(tmp_path / "numba"))).stdout.split()
    assert out == ["(2,)", "42"]
    kernels = tmp_path / "numba" / f"kernels-{kcache.kernels_digest()}"
    assert list(kernels.glob("hashing.hash_spans-*.nbi"))
    assert [p.parent.name for p in (tmp_path / "numba").rglob("mine.twice-*.nbi")] != [kernels.name]
    assert list((tmp_path / "numba").rglob("mine.twice-*.nbi")), "a caller's own cache=True function is cached"


def test_a_copy_of_the_kernels_elsewhere_loads_what_the_checkout_compiled(tmp_path: Path) -> None:
    # the same source installed at another path (a wheel, another virtual environment, the image)
    site = tmp_path / "site"
    shutil.copytree(ROOT / "service" / "kernels", site / "neardup" / "kernels",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    (site / "neardup" / "__init__.py").write_text("", encoding="utf-8")
    env = _env(NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    compiled = _python(HASH_SPANS, env)
    assert compiled.stderr.splitlines() == [kcache.COMPILE_NOTICE]
    packages = [p for p in sys.path if p.endswith("site-packages")]
    # -S: no site, so no editable install of neardup; numpy and numba from the same site-packages
    code = "import neardup.kernels as k; print(k.__file__); " + HASH_SPANS
    elsewhere = subprocess.run([sys.executable, "-S", "-c", code],
                               env={**env, "PYTHONPATH": os.pathsep.join([str(site), *packages])}, cwd=tmp_path,
                               capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    assert elsewhere.stdout.splitlines() == [str(site / "neardup" / "kernels" / "__init__.py"), "(2,)"]
    assert elsewhere.stderr == "", "loaded from the cache, not compiled again"


def test_a_cache_folder_that_cannot_be_made_leaves_the_kernels_to_numbas_own_locators(tmp_path: Path) -> None:
    # a file where the folder should be (root writes anywhere, so no permission bits can show it)
    (tmp_path / "not-a-folder").write_text("", encoding="utf-8")
    env = _env(NUMBA_CACHE_DIR=str(tmp_path / "not-a-folder" / "numba"))
    code = f"{HASH_SPANS}; from neardup.kernels.hashing import hash_spans; print(type(hash_spans._cache).__name__)"
    out = _python(code, env).stdout.split()
    assert out[0] == "(2,)" and out[1] != "NullCache"


def test_a_change_to_any_kernel_file_changes_the_cache_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = kcache.kernels_digest()
    package = tmp_path / "kernels"
    shutil.copytree(ROOT / "service" / "kernels", package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(kcache, "__file__", str(package / "cache.py"))
    kcache.kernels_digest.cache_clear()
    try:
        assert kcache.kernels_digest() == here, "the key is the source, not where it lies"
        (package / "pairs.py").write_text((package / "pairs.py").read_text(encoding="utf-8") + "\n", encoding="utf-8")
        kcache.kernels_digest.cache_clear()
        assert kcache.kernels_digest() != here
    finally:
        kcache.kernels_digest.cache_clear()


# ---------------------------------------------------------------- the notice


def test_first_compilation_says_so_once_and_a_warm_start_is_silent(tmp_path: Path) -> None:
    code = ("import numpy as np; from neardup.kernels.hashing import hash_spans; "
            "cps = np.arange(10, dtype=np.uint32); s = np.array([0, 3], np.int64); e = np.array([3, 6], np.int64); "
            "print(hash_spans(cps, s, e, np.uint64(7)).shape)")  # fmt: skip
    env = _env(NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    cold = _python(code, env)
    assert cold.stderr.splitlines() == [kcache.COMPILE_NOTICE]
    assert any((tmp_path / "numba").rglob("*.nbi")), "the compiled kernels must be cached"
    warm = _python(code, env)
    assert warm.stdout == cold.stdout == "(2,)\n"
    assert warm.stderr == ""


def test_the_notice_is_for_neardup_kernels_only(capsys: pytest.CaptureFixture[str]) -> None:
    notice = kcache._CompileNotice()

    def event(module: str) -> SimpleNamespace:
        return SimpleNamespace(data={"dispatcher": SimpleNamespace(py_func=SimpleNamespace(__module__=module))})

    notice.on_start(event("my_notebook"))  # type: ignore[arg-type]
    assert capsys.readouterr().err == ""
    notice.on_start(event("neardup.kernels.text"))  # type: ignore[arg-type]
    notice.on_start(event("neardup.kernels.minhash"))  # type: ignore[arg-type]
    assert capsys.readouterr().err == kcache.COMPILE_NOTICE + "\n"


# ---------------------------------------------------------------- neardup warmup


def test_warmup_command_reports_the_cache_and_leaves_the_store_alone(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store.bin"
    monkeypatch.setenv("NEARDUP_STORE_URL", f"file://{store}")
    result = CliRunner().invoke(cli, ["warmup"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("neardup: kernels ready in ")
    assert f"cache: {kcache.kernel_cache_dir()}" in result.output
    assert not store.exists(), "the warm-up documents must not reach the configured store"


def test_warmup_is_listed_in_help() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "warmup" in result.output


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"), reason="no kernels with the JIT off")
def test_warmup_compiles_every_kernel_the_engine_calls() -> None:
    # conftest.py ran the warm-up: each kernel called from Python has its signature now (the
    # others are called only from kernels, compiled into their callers)
    from neardup.cli.warmup import warm_up
    from neardup.config import load_settings

    warm_up(load_settings())
    ready = {d.py_func.__name__ for d in kernel_dispatchers() if d.signatures}
    assert {"normalize_batch", "segment_batch", "simhash_batch", "one_permutation_batch", "minhash_batch",
            "band_hashes", "pair_scores", "self_join", "profile_batch", "encode_batch", "replaced_context",
            "stamp_spans", "word_spans", "keep_word_spans", "hash_spans", "normalize_sources", "winnowed",
            "letter_sets", "suffix_names", "marker_names", "byline_names", "slot_contexts", "slot_words",
            "single_char_names", "name_runs", "surname_word_names",
            "one_sided_name", "phash_batch", "phash_structure_batch", "dhash_batch",
            "view_phash_batch"} <= ready  # fmt: skip


def test_docker_image_and_demo_warm_up() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "RUN neardup warmup" in dockerfile
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    demo = makefile[makefile.index("\ndemo:"):].split("\n\n")[0]
    assert "neardup warmup" in demo
    # no target of its own: make demo and make test share the user's compile cache
    assert "NUMBA_CACHE_DIR ?=" not in makefile and "export NUMBA_CACHE_DIR" not in makefile
