"""``neardup bench cold --quick`` as a user runs it: it makes its own PostgreSQL cluster with
initdb (the tests' fixture code, :mod:`neardup.bench.pg_server`), archives documents, looks windows
up, decides reprints and flips against originals in the warm store and then in the cold tier, and
writes its JSON; and without PostgreSQL's programs it refuses in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from neardup.errors import ConfigError
from tests.fixtures.postgres import postgres_bin

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_bench_cold_quick_runs_and_the_tiers_decide_alike(tmp_path: Path) -> None:
    pytest.importorskip("psycopg", reason="the 'archive' extra (psycopg) is not installed")
    postgres_bin()  # skips when PostgreSQL is not installed
    out = tmp_path / "cold.json"
    env = {**os.environ, "NUMBA_CACHE_DIR": os.environ.get("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))}
    res = subprocess.run([sys.executable, "-m", "neardup", "bench", "cold", "--quick", "--json", str(out)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "reprint recall, warm store / cold tier" in res.stdout and f"results: {out}" in res.stdout
    r = json.loads(out.read_text(encoding="utf-8"))
    assert r["benchmark"] == "cold"
    assert r["environment"]["servers"]["postgresql"][0].isdigit()

    v = r["volume"]
    assert v["documents"] == 2000 and v["windows"] == 10
    assert v["index_entries"] == 38 * 2000 and v["bytes_per_document"] > 0
    assert v["archive_docs_per_s"] > 0 and 0 < v["lookup_ms_p50"] <= v["lookup_ms_p99"]
    assert v["candidates_per_window"] > 0, "the windows' archived documents were proposed"
    # the filter of archived keys: most of a window's new keys are not searched
    assert v["keys_searched_per_window"] < v["keys_searched_unfiltered_per_window"] / 4
    assert v["filter_bytes"] > 0 and v["reprints_only_keys_searched_per_window"] > 0
    assert set(v["engine_rates"]["docs_per_s"]) == {"memory_store", "cold_tier", "cold_tier_unfiltered"}

    rc = r["recall"]
    assert rc["moved_to_cold"] == rc["originals"] == 40 and rc["left_in_warm_store"] == 0
    assert rc["same_decisions"] and rc["differing_ids"] == []
    warm, cold = rc["warm"], rc["cold"]
    assert {k: v for k, v in warm.items() if k != "matched_in_cold_tier"} == \
        {k: v for k, v in cold.items() if k != "matched_in_cold_tier"}  # fmt: skip
    assert warm["reprints"] == 40 and warm["recall"] >= 0.9
    assert warm["matched_in_cold_tier"] == 0 and cold["matched_in_cold_tier"] >= cold["reprints_found"]
    # the server was stopped and its folder removed
    assert not list(Path(tempfile.gettempdir()).glob("neardup-bench-cold-*/postgres.log"))


def test_without_postgresql_the_bench_refuses_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neardup.bench.pg_server import postgres_bin as find

    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError) as err:
        find(str(tmp_path / "lib" / "postgresql" / "*" / "bin" / "initdb"))
    assert "\n" not in str(err.value) and "initdb" in str(err.value) and "postgresql" in (err.value.hint or "")
