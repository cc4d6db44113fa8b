"""Settings that cannot go wrong quietly: a misspelt name is an error naming the closest setting,
and no secret (URL password, SASL password, /check token) is echoed by validation, redaction or
the CLI's one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from neardup.config.settings import NOT_SETTINGS, UnknownSettingError, load_settings, unknown_variables
from neardup.storage.redact import redact_url
from tests.unit.test_cli import ROOT, SAMPLE, neardup, one_error_line

SECRET = "Zq7-s3cret-Pw"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.upper().startswith("NEARDUP_"):
            monkeypatch.delenv(name)


# --------------------------------------------------------------------------- item 12: unknown names
def test_a_misspelt_variable_is_an_error_naming_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEARDUP_STORE_ULR", "file://x")
    with pytest.raises(UnknownSettingError, match=r"NEARDUP_STORE_ULR \(did you mean NEARDUP_STORE_URL\?\)"):
        load_settings()
    res = neardup("dedup", str(SAMPLE), "-q", env={"NEARDUP_STORE_ULR": "file://x"})
    assert res.returncode == 1 and "did you mean NEARDUP_STORE_URL?" in one_error_line(res)


def test_nested_and_dict_variables() -> None:
    assert unknown_variables({"NEARDUP_THRESHOLDS__JACARD_HIGH": "0.8"}) == [
        "unknown setting NEARDUP_THRESHOLDS__JACARD_HIGH (did you mean NEARDUP_THRESHOLDS__JACCARD_HIGH?)"]
    assert unknown_variables({"NEARDUP_STORE_URL__X": "1"})  # a value has no parts
    ok = {"NEARDUP_TTL_SECONDS__NEWS": "60", "NEARDUP_REDIS__PASSWORD": "p", "NEARDUP_THRESHOLDS": "{}",
          "neardup_store_url": "memory://", "OTHER_STORE_ULR": "x"}  # fmt: skip
    assert unknown_variables(ok) == []


def test_variables_that_are_not_settings_are_listed_once() -> None:
    # every NEARDUP_* variable the code, tests and scripts read without being a setting is in NOT_SETTINGS
    read = set()
    for folder in ("service", "agents", "storage", "config", "tests", "scripts"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            read |= set(re.findall(r"(?:environ(?:\.get)?\(|getenv\(|\[)\s*[\"'](NEARDUP_[A-Z0-9_]+)[\"']", text))
    read |= set(re.findall(r"\$\{?(NEARDUP_[A-Z0-9_]+)", (ROOT / "Makefile").read_text(encoding="utf-8")))
    assert unknown_variables(dict.fromkeys(read, "x")) == [], sorted(read)
    assert unknown_variables(dict.fromkeys(NOT_SETTINGS, "x")) == []


def test_unknown_file_keys_name_the_closest_setting(tmp_path: Path) -> None:
    cfg = tmp_path / "neardup.yaml"
    cfg.write_text("thresholds:\n  jacard_high: 0.8\nstore_ulr: memory://\n")
    with pytest.raises(UnknownSettingError) as caught:
        load_settings(cfg)
    assert "'thresholds.jacard_high' (did you mean thresholds.jaccard_high?)" in str(caught.value)
    assert "'store_ulr' (did you mean store_url?)" in str(caught.value)
    toml = tmp_path / "neardup.toml"
    toml.write_text("[neardup.window]\nmax_cuont = 5\n")
    res = neardup("dedup", str(SAMPLE), "-q", "--config", str(toml))
    assert res.returncode == 1 and "did you mean window.max_count?" in one_error_line(res)


# --------------------------------------------------------------------------- item 5: no secret echoed
@pytest.mark.parametrize("url", [
    f"redis://user:{SECRET}@h:6379/0",
    f"redis://:{SECRET}@h:6379",
    f"redis://h:6379/0?password={SECRET}",
    f"redis://h:6379/0?db=1&Password={SECRET}&x=1",
    f"rediscluster://u:{SECRET}@a:1,b:2",
    f"rediss://u:{SECRET}@h:1?password={SECRET}",
    f"redis://u:{SECRET}@with@at@h:1",
    f"kafka://u:{SECRET}@b:9092",
])  # fmt: skip
def test_redact_url_masks_every_password_form(url: str) -> None:
    shown = redact_url(url)
    assert SECRET not in shown and "***" in shown
    assert shown.split("://")[0] == url.split("://")[0]


def test_redaction_keeps_what_is_not_secret() -> None:
    assert redact_url("redis://app@h:6379/0?db=2") == "redis://app@h:6379/0?db=2"
    assert redact_url("file:///tmp/store.json") == "file:///tmp/store.json"
    assert redact_url("memory://") == "memory://"


def test_settings_redacted_and_validation_never_show_a_secret(tmp_path: Path) -> None:
    s = load_settings(store_url=f"redis://h:1/0?password={SECRET}", broker_url=f"kafka://u:{SECRET}@b:1",
                      check_token=SECRET, redis={"password": SECRET}, kafka={"sasl_password": SECRET},
                      archive_url=f"postgresql://u:{SECRET}@h:5432/db?sslmode=require")  # fmt: skip
    assert SECRET not in json.dumps(s.redacted()) and SECRET not in repr(s)
    assert s.redacted()["archive_url"] == "postgresql://u:***@h:5432/db?sslmode=require"
    for bad in ({"store_url": f"redsi://u:{SECRET}@h"}, {"store_url": f"redis:/u:{SECRET}@h"},
                {"archive_url": f"mysql://u:{SECRET}@h/db"},
                {"broker_url": f"kafak://u:{SECRET}@b"}, {"redis": {"password": 12345}},
                {"check_token": 987654321}):  # fmt: skip
        with pytest.raises(ValidationError) as caught:
            load_settings(**bad)
        assert SECRET not in str(caught.value) and "12345" not in str(caught.value)
        assert "987654321" not in str(caught.value)


def test_the_cli_never_echoes_a_secret_from_a_bad_settings_file(tmp_path: Path) -> None:
    numeric = tmp_path / "numeric.yaml"
    numeric.write_text("redis:\n  password: 8675309112\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text(f"redis:\n  password: '{SECRET}\n  username: [\n")
    url = tmp_path / "url.toml"
    url.write_text(f'store_url = "redsi://u:{SECRET}@h:1"\n')
    sasl = tmp_path / "sasl.yaml"
    sasl.write_text(f"kafka:\n  sasl_password: {SECRET}\n  sasl_pasword: {SECRET}\n")
    for cfg, secret in ((numeric, "8675309112"), (broken, SECRET), (url, SECRET), (sasl, SECRET)):
        res = neardup("dedup", str(SAMPLE), "-q", "--config", str(cfg))
        out = (res.stdout + res.stderr).decode()
        assert res.returncode == 1 and secret not in out, out
        one_error_line(res)
    verbose = neardup("-v", "dedup", str(SAMPLE), "-q", "--config", str(url))  # the traceback too
    assert verbose.returncode == 1 and SECRET not in verbose.stderr.decode()
