"""The review page's "where else", end to end in a real headless Chromium: a pair's B is searched
across the store and a real PostgreSQL cold tier (the search ``neardup search --id`` prints, the
same rows in the same order), bounded by ``--where-else-limit``, and a page without a store shows
no such section.

The decisions come from the engine: the bundled sample as announcements, the first half decided
and moved to the cold tier with ``neardup archive``, the second half decided into the store; the
second run's duplicates of the first half have their originals in the cold tier.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.test_review_page import EXPLAIN_TIMEOUT_MS, SAMPLE, Watched, browser, neardup, serve, tab

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

__all__ = ["browser", "tab"]  # the fixtures this module uses, imported with the page tests' helpers

LIMIT = 3


def _rows(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _run(*args: str) -> str:
    res = neardup(*args)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


@pytest.fixture
def two_tiers(tmp_path: Path, postgres_url: str) -> tuple[Path, list[str], list[dict[str, Any]]]:
    """(the second run's decisions file, the --store/--archive arguments, its duplicates whose
    original is in the cold tier)."""
    lines = [json.dumps({**json.loads(x), "type": "announcement"}, ensure_ascii=False)
             for x in SAMPLE.read_text(encoding="utf-8").splitlines() if x.strip()]  # fmt: skip
    first, later = tmp_path / "first.jsonl", tmp_path / "later.jsonl"
    first.write_text("\n".join(lines[:100]) + "\n", encoding="utf-8")
    later.write_text("\n".join(lines[100:]) + "\n", encoding="utf-8")
    stores = ["--store", f"file://{tmp_path / 'store.db'}", "--archive", postgres_url]
    _run("archive", "migrate", "--archive", postgres_url)
    _run("dedup", str(first), "-o", str(tmp_path / "first-out.jsonl"), "-q", *stores)
    moved = json.loads(_run("archive", "--older-than", "0s", *stores))
    assert moved["moved"] > 0
    decisions = tmp_path / "decisions.jsonl"
    _run("dedup", str(later), "-o", str(decisions), "-q", *stores)
    rows = _rows(decisions.read_text(encoding="utf-8"))
    from_cold = [r for r in rows if r["status"] == "duplicate" and r["evidence"].get("tier") == "cold"
                 and r["evidence"].get("reason") != "exact"]  # fmt: skip
    assert from_cold, "no near-duplicate of an archived document in the second half"
    return decisions, stores, from_cold


def test_where_else_shows_the_search_across_tiers(tab: Watched, two_tiers: tuple[Path, list[str],
                                                  list[dict[str, Any]]], tmp_path: Path) -> None:  # fmt: skip
    decisions, stores, from_cold = two_tiers
    dups = [r for r in _rows(decisions.read_text(encoding="utf-8")) if r["status"] == "duplicate"]
    k = next(i for i, r in enumerate(dups) if r["id"] == from_cold[0]["id"])
    b_id, a_id = dups[k]["id"], dups[k]["duplicate_of"]
    cli = _rows(_run("search", "--id", b_id, "--limit", str(LIMIT), *stores))
    assert cli and len(cli) <= LIMIT and any(r["id"] == a_id and r["tier"] == "cold" for r in cli)

    fb = tmp_path / "feedback.jsonl"
    page = tab.page
    with serve(str(decisions), "--docs", str(SAMPLE), "--feedback", str(fb), "--page-size", "1",
               "--where-else-limit", str(LIMIT), *stores) as server:  # fmt: skip
        password = stores[-1].split(":")[2].split("@")[0]
        assert password not in "".join(server.stderr)
        page.goto(f"{server.url}?page={k + 1}")
        card = page.locator("article.pair").first
        expect(card.locator("h2")).to_contain_text(f"B {b_id} vs A {a_id}")
        where = card.locator("details.where")
        expect(where).to_have_attribute("open", "")
        summary = where.locator("summary")
        expect(summary).to_contain_text(f"at most {LIMIT}")
        expect(summary).to_contain_text("cold tier postgresql://")
        assert password not in (summary.text_content() or "")
        table = card.locator("section.where table.where")
        expect(table).to_be_visible(timeout=EXPLAIN_TIMEOUT_MS)
        rows = table.locator("tbody tr")
        expect(rows).to_have_count(len(cli))
        shown = [(rows.nth(i).get_attribute("data-id"), rows.nth(i).get_attribute("data-tier"))
                 for i in range(len(cli))]  # fmt: skip
        assert shown == [(r["id"], r["tier"]) for r in cli], "the page and neardup search --id differ"
        a_row = table.locator(f'tbody tr[data-id="{a_id}"]')
        expect(a_row).to_have_attribute("data-tier", "cold")
        expect(a_row).to_have_class("a" if cli[0]["first_publisher"] != a_id else "a first")
        expect(card.locator("section.where p.first")).to_contain_text(
            f"first publisher of the cluster: {cli[0]['first_publisher']}")
        # the answer is kept: the same section from the server again, without another search
        again = page.request.get(f"{server.url}api/where-else/{k}")
        assert again.ok and f'data-id="{a_id}"' in again.text()
        page.goto("about:blank")  # no request left in flight when the server stops
        server.stop()

    # without a store the page does not search
    with serve(str(decisions), "--docs", str(SAMPLE), "--feedback", str(tmp_path / "fb2.jsonl"),
               "--page-size", "1") as server:  # fmt: skip
        page.goto(f"{server.url}?page={k + 1}")
        expect(page.locator("article.pair")).to_have_count(1)
        expect(page.locator("details.where")).to_have_count(0)
        page.goto("about:blank")
        server.stop()
    assert tab.dialogs == [] and tab.errors == []
