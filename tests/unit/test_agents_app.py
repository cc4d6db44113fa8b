"""The worker's Faust app as configured from the settings (nothing started, no broker)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from neardup.agents.app import create_app
from neardup.config import load_settings


def test_the_producer_batches_a_partitions_outputs_up_to_the_setting(tmp_path: Path) -> None:
    settings = load_settings(kafka={"producer_batch_bytes": 300_000})
    app = create_app(settings, with_agent=False, datadir=tmp_path)
    assert app.conf.producer_max_batch_size == 300_000
    # the default: far more than the client's 16 KB, which held three ~5 KB outputs a batch
    assert create_app(load_settings(), with_agent=False, datadir=tmp_path).conf.producer_max_batch_size == 524_288


def test_a_producer_batch_over_the_brokers_default_message_limit_is_refused() -> None:
    with pytest.raises(ValidationError, match="producer_batch_bytes"):
        load_settings(kafka={"producer_batch_bytes": 2_000_000})
