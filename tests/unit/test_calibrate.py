"""``neardup calibrate``: thresholds by ROC from labelled pairs, a settings file dedup reproduces,
ROC plots, and a two-fold check whose halves share no document."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.config import load_settings
from neardup.errors import InputError
from neardup.learning.calibrate import (
    BAND,
    Counts,
    LabelledPairs,
    NoOperatingPoint,
    adaptive_band,
    cluster_counts,
    component_halves,
    load_pairs,
    search,
    searched,
)
from neardup.learning.scoring import score
from neardup.rules.policy import Thresholds

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample.jsonl"
PAIRS = ROOT / "samples" / "pairs.jsonl"
PNG = b"\x89PNG\r\n\x1a\n"


def neardup(*args: str, code: str | None = None) -> subprocess.CompletedProcess[bytes]:
    """``neardup ARGS`` in a child process (``code`` runs first, in the same interpreter)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    prog = f"{code or ''}\nimport sys\nfrom neardup.cli import main\nsys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", prog, *args], cwd=ROOT, capture_output=True, env=env, timeout=600,
                          check=False)


def one_error_line(res: subprocess.CompletedProcess[bytes]) -> str:
    lines = res.stderr.decode().strip().splitlines()
    assert res.returncode == 1 and len(lines) == 1 and lines[0].startswith("neardup: error: "), res.stderr.decode()
    return lines[0]


def read_jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------- end to end
def test_calibrated_settings_reproduce_the_reported_figures_in_dedup(tmp_path: Path) -> None:
    config, report = tmp_path / "calibrated.toml", tmp_path / "report"
    res = neardup("calibrate", "--docs", str(SAMPLE), "--pairs", str(PAIRS), "-o", str(config), "--report", str(report))
    assert res.returncode == 0, res.stderr.decode()[-3000:]
    out = res.stdout.decode()
    assert "fold 1: calibrated on" in out and "fold 2: calibrated on" in out and out.count("on the other half:") == 2
    figures = json.loads((report / "calibration.json").read_text())
    assert figures["pairs_decided_alone"]["pair_precision"] >= 0.99

    # the settings file is what dedup reads, and holds what was reported
    calibrated = load_settings(config)
    t = calibrated.thresholds
    assert {k: getattr(t, k) for k in figures["thresholds"]} == figures["thresholds"]
    assert t.target_precision == 0.99
    assert t.adaptive_floor <= t.jaccard_high <= t.adaptive_ceiling
    assert t.adaptive_ceiling - t.adaptive_floor <= 2 * BAND
    assert t.adaptive_hamming_floor == t.adaptive_hamming_ceiling == t.hamming_high

    decisions = tmp_path / "decisions.jsonl"
    run = neardup("dedup", str(SAMPLE), "--config", str(config), "-q", "-o", str(decisions))
    assert run.returncode == 0, run.stderr.decode()[-3000:]
    dup_of = {str(d["id"]): d["duplicate_of"] for d in read_jsonl(decisions)}
    assert {d["evidence"]["thresholds"]["jaccard_high"] for d in read_jsonl(decisions)} == {t.jaccard_high}
    pairs = load_pairs(PAIRS, set(dup_of))
    got = cluster_counts(pairs, list(dup_of), dup_of)  # type: ignore[arg-type]
    assert got.to_dict() == {k: figures["dedup"][k] for k in got.to_dict()}
    scores = score(list(dup_of), list(pairs), dup_of)  # type: ignore[arg-type]
    assert (round(scores.precision, 4), round(scores.f1, 4)) == (figures["dedup"]["edge_precision"],
                                                                 figures["dedup"]["f1"])
    line = next(x for x in out.splitlines() if "dedup with these settings" in x)
    assert f"pair precision {got.precision:.4f}  pair recall {got.recall:.4f}" in line

    for name in ("roc_simhash.png", "roc_minhash.png"):
        data = (report / name).read_bytes()
        assert data[:8] == PNG
        import matplotlib.pyplot as plt

        image = plt.imread(report / name)
        assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 200 and image.std() > 0


def test_an_unreachable_target_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    ids = [json.loads(line)["id"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:2]]
    pairs = tmp_path / "pairs.jsonl"  # the same pair labelled both ways: no rule can be right on both
    pairs.write_text("".join(json.dumps({"a": ids[0], "b": ids[1], "label": label}) + "\n" for label in (1, 0)))
    config = tmp_path / "c.toml"
    line = one_error_line(neardup("calibrate", "--docs", str(SAMPLE), "--pairs", str(pairs), "-o", str(config)))
    assert "no thresholds reach pair precision 0.99" in line and "--target-precision" in line
    assert not config.exists()


@pytest.mark.parametrize(("pair", "message"), [
    ({"a": "dev00890", "b": "nope", "label": 1}, "id 'nope' is not in --docs"),
    ({"a": "dev00890", "b": "dev00890", "label": 1}, "a pair of a document with itself"),
    ({"a": "dev00890", "b": "dev02297", "label": "yes"}, "'label' must be 0 or 1"),
    ({"a": "dev00890", "label": 1}, "'b' must be a document id"),
])  # fmt: skip
def test_bad_pairs_name_the_line(tmp_path: Path, pair: dict[str, object], message: str) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(PAIRS.read_text(encoding="utf-8").splitlines()[0] + "\n" + json.dumps(pair) + "\n")
    with pytest.raises(InputError, match=f"line 2: {message}"):
        load_pairs(path, {"dev00890", "dev02297", "dev00843", "dev03010"})


def test_cli_input_and_extra_errors(tmp_path: Path) -> None:
    bad = tmp_path / "pairs.jsonl"
    bad.write_text('{"a": "dev00890", "b": "missing", "label": 1}\n')
    line = one_error_line(neardup("calibrate", "--docs", str(SAMPLE), "--pairs", str(bad),
                                  "-o", str(tmp_path / "c.toml")))
    assert "line 1: id 'missing' is not in --docs" in line
    # the plots need the [plots] extra: without matplotlib, one line that names it, before any work
    no_plots = neardup("calibrate", "--docs", str(SAMPLE), "--pairs", str(PAIRS), "-o", str(tmp_path / "c.toml"),
                       "--report", str(tmp_path / "r"), code="import sys; sys.modules['matplotlib'] = None")
    assert "pip install 'neardup[plots]'" in one_error_line(no_plots)
    usage = neardup("calibrate", "--docs", str(SAMPLE), "--pairs", str(PAIRS), "-o", str(tmp_path / "c.yaml"))
    assert usage.returncode == 2 and b"must end in .toml" in usage.stderr


# --------------------------------------------------------------------------- the search
def _pairs(jaccard: list[float], label: list[int], hamming: list[int] | None = None,
           containment: list[float] | None = None) -> LabelledPairs:
    n = len(jaccard)
    return LabelledPairs(
        tuple(f"a{i}" for i in range(n)), tuple(f"b{i}" for i in range(n)), ("k",) * n, np.array(label) == 1,
        np.array(jaccard, dtype=np.float64), np.array(hamming or [64] * n, dtype=np.int64),
        np.array(containment or [0.0] * n, dtype=np.float64), np.ones(n, dtype=bool), np.zeros(n, dtype=bool),
        np.zeros(n, dtype=bool), np.full(n, 1000, dtype=np.int64))


BASE = Thresholds.from_settings(load_settings(store_url="memory://").thresholds)


def test_the_search_refines_to_the_hundredth() -> None:
    # duplicates at J >= 0.63, non-duplicates up to 0.62 (SimHash and containment say nothing):
    # only a jaccard_high in (0.62, 0.63] separates them, between the coarse grid's points
    pairs = _pairs([0.63, 0.7, 0.9, 0.62, 0.5, 0.3], [1, 1, 1, 0, 0, 0])
    point, evaluated = search(pairs, BASE, 0.99)
    assert point.counts == Counts(3, 0, 3, 3)
    assert point.thresholds.jaccard_high == 0.63 and evaluated > 1000
    assert searched(point.thresholds).keys() == {"jaccard_high", "jaccard_low", "hamming_high", "hamming_low",
                                                 "containment_high"}


def test_the_search_uses_every_rule_jointly() -> None:
    # a truncation (low J, high containment) and a synonym edit (low J, small Hamming) are
    # duplicates; negatives at the same J but far in both: only the SimHash and containment rules
    # with jaccard_low/2 below 0.3 find them without a false merge
    pairs = _pairs([0.3, 0.3, 0.3, 0.3, 0.95], [1, 1, 0, 0, 1], hamming=[30, 2, 30, 25, 1],
                   containment=[0.97, 0.4, 0.5, 0.6, 0.99])
    point, _ = search(pairs, BASE, 0.99)
    assert point.counts == Counts(3, 0, 3, 2)
    t = point.thresholds
    assert t.jaccard_low / 2 <= 0.3 and t.hamming_high >= 2 and 0.6 < t.containment_high <= 0.97


def test_ties_keep_the_configured_thresholds() -> None:
    pairs = _pairs([0.9, 0.95, 0.1, 0.2], [1, 1, 0, 0])  # the configured rule is already perfect
    point, _ = search(pairs, BASE, 0.99)
    assert point.thresholds == BASE


def test_no_operating_point_says_the_best_precision() -> None:
    pairs = _pairs([0.8, 0.8], [1, 0])
    with pytest.raises(NoOperatingPoint, match=r"best 0\.5000"):
        search(pairs, BASE, 0.99)
    with pytest.raises(NoOperatingPoint, match="both duplicates"):
        search(_pairs([0.8, 0.9], [1, 1]), BASE, 0.99)


def test_the_adaptive_band_keeps_the_target() -> None:
    pairs = _pairs([0.63, 0.7, 0.9, 0.6, 0.5], [1, 1, 1, 0, 0])
    point, _ = search(pairs, BASE, 0.99)
    floor, ceiling = adaptive_band(pairs, point, 0.99)
    jh = point.thresholds.jaccard_high
    assert jh - BAND - 1e-9 <= floor <= jh <= ceiling <= min(1.0, jh + BAND)
    assert floor > 0.6  # any lower merges the non-duplicate at 0.6


# --------------------------------------------------------------------------- the two folds
def _docs_of(pairs: list[tuple[str, str]], half: np.ndarray, side: bool) -> set[str]:
    return {d for (a, b), h in zip(pairs, half.tolist(), strict=True) if h == side for d in (a, b)}


def test_the_sample_halves_share_no_document() -> None:
    pairs = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    ends = [(p["a"], p["b"]) for p in pairs]
    label = np.array([p["label"] == 1 for p in pairs])
    half = component_halves([a for a, _ in ends], [b for _, b in ends], label)
    assert not _docs_of(ends, half, False) & _docs_of(ends, half, True)
    assert 0.35 < half.mean() < 0.65 and 0 < label[half].sum() < label.sum()


@settings(max_examples=200, deadline=None)
@given(edges=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30), st.booleans()), min_size=2, max_size=80))
def test_no_document_is_in_both_halves(edges: list[tuple[int, int, bool]]) -> None:
    ends = [(f"d{a}", f"d{b}") for a, b, _ in edges if a != b]
    label = np.array([x for a, b, x in edges if a != b], dtype=bool)
    half = component_halves([a for a, _ in ends], [b for _, b in ends], label)
    assert not _docs_of(ends, half, False) & _docs_of(ends, half, True)


# --------------------------------------------------------------------------- one search, one definition of the scores
def test_pair_scores_follow_the_dataset_scorer() -> None:
    import importlib.util

    from neardup.learning.model import pair_scores
    from neardup.learning.scoring import prf

    nothing = pair_scores([False, False], [True, False])
    assert (nothing.precision, nothing.recall, nothing.f1) == (0.0, 0.0, 0.0)  # nothing predicted: precision 0
    assert Counts.of(np.zeros(2, dtype=bool), np.array([True, False])).precision == 0.0
    scorer = ROOT.parent / "shared" / "datasets" / "score.py"
    if scorer.is_file():  # the development set's own scorer, where the checkout has it
        spec = importlib.util.spec_from_file_location("dataset_score", scorer)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        # the script sets SIGPIPE to its default for its own command line; left so, a later test that
        # writes to a process it killed would kill this pytest process
        sigpipe = signal.getsignal(signal.SIGPIPE)
        try:
            spec.loader.exec_module(module)
        finally:
            signal.signal(signal.SIGPIPE, sigpipe)
        for case in [(0, 0, 0), (0, 0, 3), (1, 4, 2), (3, 3, 3), (2, 5, 0)]:
            assert prf(*case) == module.prf(*case), case


def test_every_threshold_search_is_calibrates(monkeypatch: pytest.MonkeyPatch) -> None:
    from neardup.learning import calibrate as calibrate_module
    from neardup.learning.evaluate import recommend
    from neardup.learning.model import calibrate as learn_thresholds

    spaces: list[tuple[str, ...]] = []
    real = calibrate_module.search

    def spy(pairs: LabelledPairs, base: Thresholds, target: float, space: tuple[calibrate_module.Axis, ...]
            = calibrate_module.SEARCH) -> tuple[calibrate_module.OperatingPoint, int]:
        spaces.append(tuple(axis[0] for axis in space))
        return real(pairs, base, target, space)

    monkeypatch.setattr(calibrate_module, "search", spy)
    feats = {"jaccard": np.array([0.95, 0.9, 0.5, 0.3]), "hamming": np.array([1.0, 2.0, 20.0, 30.0]),
             "containment": np.array([0.95, 0.9, 0.5, 0.3]), "comparable": np.ones(4, dtype=bool),
             "critical": np.zeros(4, dtype=bool), "label": np.array([1, 1, 0, 0])}
    settings = load_settings()
    chosen = learn_thresholds(feats, settings.thresholds.model_dump(), 0.99)
    recommended = recommend(settings, feats, 0.99)
    assert spaces == [("jaccard_high", "jaccard_low")] * 2
    assert set(chosen) == {"jaccard_high", "jaccard_low"} and recommended["pair_precision"] == 1.0


def test_labels_of_one_kind_leave_the_learned_thresholds_alone() -> None:
    from neardup.learning.model import calibrate as learn_thresholds

    # one "not a duplicate" label the engine already keeps apart: nothing to learn about thresholds
    feats = {"jaccard": np.array([0.2]), "hamming": np.array([30.0]), "containment": np.array([0.2]),
             "comparable": np.ones(1, dtype=bool), "critical": np.zeros(1, dtype=bool), "label": np.array([0])}
    assert learn_thresholds(feats, load_settings().thresholds.model_dump(), 0.99) == {}
