"""The cold tier's commands without a server: durations and dates as a user types them, and the
one-line errors of a missing cold tier or a wrong flag (the commands against a real PostgreSQL:
tests/integration/test_archive_command.py and tests/integration/test_search.py)."""

from __future__ import annotations

import click
import pytest

from neardup.cli import main
from neardup.cli.archive import parse_duration, parse_since
from neardup.storage import DecisionRecord


@pytest.mark.parametrize(("text", "seconds"), [("30d", 2_592_000), ("12h", 43_200), ("90m", 5_400), ("45s", 45),
                                               ("2w", 1_209_600), ("0s", 0), ("1.5h", 5_400)])  # fmt: skip
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["30", "d", "-1d", "30 days", ""])
def test_bad_durations_say_what_is_expected(text: str) -> None:
    with pytest.raises(click.BadParameter, match="unit"):
        parse_duration(text)


def test_since_is_utc_unless_a_zone_is_given() -> None:
    assert parse_since("2026-01-01") == 1_767_225_600
    assert parse_since("2026-01-01T08:00:00+08:00") == 1_767_225_600
    with pytest.raises(click.BadParameter, match="ISO 8601"):
        parse_since("yesterday")


def test_archive_without_a_cold_tier_is_one_line(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEARDUP_ARCHIVE_URL", raising=False)
    for argv in (["archive"], ["archive", "migrate"]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "no cold tier given" in err and "NEARDUP_ARCHIVE_URL" in err


def test_a_bad_archive_url_names_the_setting_never_the_secret(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["archive", "--archive", "mysql://u:Secr3t@h/db"]) == 1
    err = capsys.readouterr().err
    assert "archive_url" in err and "Secr3t" not in err


def test_search_takes_text_or_id_not_both(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "some text", "--id", "x"]) == 2
    assert "either TEXT or --id" in capsys.readouterr().err


def test_a_decision_time_is_read_from_its_evidence() -> None:
    def decision(evidence: str) -> DecisionRecord:
        return DecisionRecord("a", "unique", None, evidence)

    assert decision('{"decided_at": 1796295181.762}').decided_at == 1796295181.762
    assert decision('{"reason": "unique"}').decided_at is None
    assert decision("[1, 2]").decided_at is None and decision("not json").decided_at is None
