"""``neardup review`` end to end in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

The decisions come from the engine itself (``neardup dedup`` on the bundled sample, run here); the
page is served by the real command in a subprocess. A reviewer opens it, sees a pair with its
evidence, answers with the buttons and with the keyboard, and the feedback records appear in the
file (or on the ``feedback`` topic of a real broker); the next page follows. Document texts with
markup are shown as text and never run; a bad decisions file ends the command with one line.

Playwright launches ``/usr/bin/chromium`` through ``executable_path`` and downloads no browser.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from neardup.learning.feedback import PairFeedback, parse_feedback, read_feedback
from tests.fixtures.kafka_broker import KafkaBroker, _die_with_parent

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample.jsonl"
EXPLAIN_TIMEOUT_MS = 120_000  # the first explanation opens an engine (dictionaries, compiled kernels)


def _chromium() -> str | None:
    return shutil.which("chromium") or next((p for p in ("/usr/bin/chromium",) if os.access(p, os.X_OK)), None)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = _chromium()
    if chromium is None:
        pytest.skip("Debian's chromium is not installed: `make services` installs it when run as root "
                    "(apt-get install chromium)")  # fmt: skip
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, headless=True)
        yield b
        b.close()


@dataclass
class Watched:
    """A page and whatever it did that it should not: dialogs, uncaught errors, console errors."""

    page: Page
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.fixture
def tab(browser: Browser) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    watched = Watched(page)

    def on_dialog(dialog: Any) -> None:
        watched.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda exc: watched.errors.append(str(exc)))
    page.on("console", lambda msg: watched.errors.append(msg.text) if msg.type == "error" else None)
    yield watched
    context.close()


def neardup(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "neardup", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False)  # fmt: skip


def dedup(docs: Path, out: Path) -> list[dict[str, Any]]:
    res = neardup("dedup", str(docs), "-o", str(out), "-q")
    assert res.returncode == 0, res.stderr[-2000:]
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def decisions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """The engine's decisions for the bundled sample."""
    out = tmp_path_factory.mktemp("review") / "decisions.jsonl"
    return out, dedup(SAMPLE, out)


@dataclass
class ReviewProcess:
    """``neardup review`` running in a subprocess."""

    proc: subprocess.Popen[str]
    url: str
    stderr: list[str]

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=30) == 0, "".join(self.stderr)


@contextlib.contextmanager
def serve(*args: str, env: dict[str, str] | None = None) -> Iterator[ReviewProcess]:
    proc = subprocess.Popen([sys.executable, "-m", "neardup", "review", *args, "--port", "0"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, preexec_fn=_die_with_parent)  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    seen: list[str] = []

    def drain() -> None:  # keeps the pipe empty for as long as the server runs
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            lines.put(line)

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + 120
    url = None
    while url is None and time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(queue.Empty):
            m = re.search(r" at (http://\S+) ;", lines.get(timeout=0.5))
            url = m.group(1) if m else None
    try:
        assert url is not None, f"no page (exit {proc.poll()}): {''.join(seen)[-2000:]}"
        running = ReviewProcess(proc, url, seen)
        yield running
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def duplicates(rows: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(original, duplicate, evidence) of every duplicate decision, in file order."""
    return [(r["duplicate_of"], r["id"], r["evidence"]) for r in rows if r["status"] == "duplicate"]


def records(path: Path) -> list[PairFeedback]:
    out = [r for r in read_feedback(path) if isinstance(r, PairFeedback)]
    assert len(out) == sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return out


def labels(path: Path) -> list[tuple[str, str, bool]]:
    return [(r.a, r.b, r.is_duplicate) for r in records(path)]


# --------------------------------------------------------------------------------------------- tests


def test_review_pairs_with_buttons_and_keys_then_the_next_page(
    tab: Watched, decisions: tuple[Path, list[dict[str, Any]]], tmp_path: Path
) -> None:
    path, rows = decisions
    dups = duplicates(rows)
    assert len(dups) >= 6
    fb = tmp_path / "feedback.jsonl"
    args = (str(path), "--docs", str(SAMPLE), "--feedback", str(fb), "--page-size", "3", "--reviewer", "qa")
    page = tab.page
    with serve(*args) as server:
        page.goto(server.url)
        expect(page.locator("header")).to_contain_text(f"{len(dups)} pairs ({len(dups)} duplicate decisions")
        cards = page.locator("article.pair")
        expect(cards).to_have_count(3)
        first = cards.nth(0)
        a0, b0, ev0 = dups[0]
        expect(first.locator("h2")).to_contain_text(f"B {b0} vs A {a0}")
        facts = first.locator(".facts")
        expect(facts).to_contain_text(f"rule {ev0['rule']}")
        expect(facts).to_contain_text(f"Jaccard {ev0['jaccard']:.4g}")
        expect(facts).to_contain_text(f"Hamming {ev0['hamming']}")
        # the texts side by side, what differs marked; then explain_pair's account of the pair
        text_a, text_b = first.locator(".text.a"), first.locator(".text.b")
        expect(text_a).to_be_visible()
        expect(text_b).to_be_visible()
        assert first.locator("del.chg, ins.chg").count() > 0  # a near (not exact) duplicate differs
        # a one-character change is a mark one can see: bold, outlined, padded
        mark = first.locator("del.chg, ins.chg").first
        style = mark.evaluate("e => { const s = getComputedStyle(e); return [s.fontWeight, s.outlineStyle]; }")
        assert style == ["700", "solid"]
        assert mark.bounding_box() is not None and mark.bounding_box()["width"] >= 10
        # the full account of the comparison is folded away until asked for
        fold = first.locator("details.explain")
        assert fold.get_attribute("open") is None
        explain = first.locator("section.explain")
        expect(explain).to_contain_text("jaccard estimate", timeout=EXPLAIN_TIMEOUT_MS)
        expect(explain).to_contain_text("top weighted tokens")
        assert explain.locator(".chip").count() > 0  # the words that weighed most
        fold.locator("summary").click()
        expect(explain).to_be_visible()

        # the button
        first.locator("button.confirm").click()
        expect(first).to_have_attribute("data-state", "confirm")
        assert labels(fb) == [(a0, b0, True)]
        assert records(fb)[0].reviewer == "qa" and records(fb)[0].at is not None

        # the keyboard: the next pair is current after an answer
        second = cards.nth(1)
        expect(second).to_have_class(re.compile(r"\bcurrent\b"))
        page.keyboard.press("n")
        expect(second).to_have_attribute("data-state", "overturn")
        expect(second.locator(".verdict")).to_have_text("overturned")
        assert labels(fb)[1] == (dups[1][0], dups[1][1], False)

        page.keyboard.press("c")  # a note, then back to the keys
        page.keyboard.type("页脚不同 <b>")
        page.keyboard.press("Escape")
        page.keyboard.press("y")
        expect(cards.nth(2)).to_have_attribute("data-state", "confirm")
        assert labels(fb)[2] == (dups[2][0], dups[2][1], True)
        assert records(fb)[2].note == "页脚不同 <b>"
        expect(page.locator("#reviewed")).to_have_text("3")
        expect(page.locator("#status")).to_contain_text("page done")

        page.keyboard.press("?")
        expect(page.locator("#help")).to_be_visible()
        page.keyboard.press("Escape")
        expect(page.locator("#help")).to_be_hidden()

        # j past the last pair goes to the next page
        page.keyboard.press("j")
        expect(page).to_have_url(re.compile(r"\?page=2$"))
        expect(cards.nth(0).locator("h2")).to_contain_text(f"B {dups[3][1]} vs A {dups[3][0]}")
        expect(cards.nth(0)).to_have_attribute("data-state", "open")
        page.keyboard.press("k")  # before the first pair: the previous page, at its last pair
        expect(page).to_have_url(re.compile(r"\?page=1#last$"))
        expect(cards.nth(2)).to_have_class(re.compile(r"\bcurrent\b"))
        page.get_by_role("link", name="see the next page →").first.click()
        expect(page).to_have_url(re.compile(r"\?page=2$"))
        page.goto("about:blank")  # no request left in flight when the server stops
        server.stop()

    # a new session on the same file shows what was answered
    with serve(*args) as server:
        assert any("(3 reviewed)" in line for line in server.stderr)
        page.goto(server.url)
        states = [page.locator("article.pair").nth(i).get_attribute("data-state") for i in range(3)]
        assert states == ["confirm", "overturn", "confirm"]
        page.goto("about:blank")  # no request left in flight when the server stops
        server.stop()
    assert tab.dialogs == [] and tab.errors == []


def test_near_threshold_unique_decisions_on_request(
    tab: Watched, decisions: tuple[Path, list[dict[str, Any]]], tmp_path: Path
) -> None:
    path, rows = decisions
    reviewed = [r for r in rows if r["status"] == "duplicate" or r["evidence"].get("critical")]
    k = next(i for i, r in enumerate(reviewed) if r["status"] == "unique")
    near = reviewed[k]
    critical = near["evidence"]["critical"]
    fb = tmp_path / "feedback.jsonl"
    with serve(str(path), "--docs", str(SAMPLE), "--feedback", str(fb), "--near-threshold",
               "--page-size", "5") as server:  # fmt: skip
        page = tab.page
        page.goto(f"{server.url}?page={k // 5 + 1}")
        card = page.locator(f"article.pair#item-{k}")
        expect(card).to_have_attribute("data-kind", "near")
        expect(card.locator("h2")).to_contain_text(f"B {near['id']} vs A {critical['against']}")
        expect(card.locator(".critical")).to_contain_text(critical["passage"])
        card.locator("button.confirm").click()  # right to keep it unique: not a duplicate
        expect(card).to_have_attribute("data-state", "confirm")
        page.goto("about:blank")  # no request left in flight when the server stops
        server.stop()
    assert labels(fb) == [(critical["against"], near["id"], False)]
    assert tab.dialogs == [] and tab.errors == []


def test_document_markup_is_shown_as_text_and_never_runs(tab: Watched, tmp_path: Path) -> None:
    text = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])["text"]
    cut = text.index("\n", 300) + 1
    payload = '<script>window.__xss = 1; alert("xss")</script><img src=x onerror="window.__xss = 2">\n'
    title = '<img src=x onerror="window.__xss = 3">标题'
    weird_id = 'xss-b"<i>'
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in [
        {"id": "xss-a", "text": text[:cut] + payload + text[cut:]},
        {"id": weird_id, "text": text, "title": title},
    ]), encoding="utf-8")  # fmt: skip
    rows = dedup(docs, tmp_path / "decisions.jsonl")
    assert [(r["id"], r["status"], r["duplicate_of"]) for r in rows][1] == (weird_id, "duplicate", "xss-a")
    fb = tmp_path / "feedback.jsonl"
    with serve(str(tmp_path / "decisions.jsonl"), "--docs", str(docs), "--feedback", str(fb)) as server:
        page = tab.page
        page.goto(server.url)
        card = page.locator("article.pair").first
        expect(card.locator("del.chg")).to_contain_text(payload.strip())  # the markup, as text
        expect(card.locator(".title")).to_have_text(f"B: {title}")
        expect(card.locator("h2")).to_contain_text(weird_id)
        expect(card.locator("section.explain")).to_contain_text("jaccard estimate", timeout=EXPLAIN_TIMEOUT_MS)
        assert page.locator("main script, main img, main i").count() == 0  # no element was made from it
        assert page.evaluate("window.__xss") is None
        page.keyboard.press("y")
        expect(card).to_have_attribute("data-state", "confirm")
        page.goto("about:blank")  # no request left in flight when the server stops
        server.stop()
    assert labels(fb) == [("xss-a", weird_id, True)]
    assert tab.dialogs == []


def test_an_image_duplicate_shows_both_thumbnails_and_their_distance(tab: Watched, tmp_path: Path) -> None:
    """A caption-less repost of a story's photograph: the card shows the two pictures (made by the
    server, allowed by the page's policy) side by side with their pHash distance."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    def jpeg_b64(image: Any, quality: int) -> str:
        out = io.BytesIO()
        image.save(out, "JPEG", quality=quality)
        return base64.b64encode(out.getvalue()).decode("ascii")

    y, x = np.mgrid[0:300, 0:400]
    pixels = (128 + 90 * np.sin(x / 37.0) * np.cos(y / 23.0)).astype(np.uint8)
    photo = Image.fromarray(pixels).convert("RGB")
    text = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])["text"]
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in [
        {"id": "story", "text": text, "images": [{"data": jpeg_b64(photo, 90)}], "published_at": 1.7e9},
        {"id": "repost", "images": [{"data": jpeg_b64(photo.resize((200, 150)), 40)}], "published_at": 1.7e9 + 60},
    ]), encoding="utf-8")  # fmt: skip
    rows = dedup(docs, tmp_path / "decisions.jsonl")
    assert [(r["id"], r["status"], r["evidence"]["reason"]) for r in rows][1] == ("repost", "duplicate", "image")
    bits, radius = rows[1]["evidence"]["image"]["hamming"], rows[1]["evidence"]["image"]["radius"]
    assert radius == 10  # a smooth pattern has little structure beyond the hash's frequencies: the smaller radius
    with serve(str(tmp_path / "decisions.jsonl"), "--docs", str(docs), "--feedback",
               str(tmp_path / "fb.jsonl")) as server:  # fmt: skip
        page = tab.page
        page.goto(server.url)
        card = page.locator("article.pair").first
        expect(card.locator("h2")).to_contain_text("B repost vs A story")
        thumbs = card.locator(".images figure.thumb img")
        expect(thumbs).to_have_count(2)
        expect(card.locator(".images figcaption")).to_have_text(["A image 0", "B image 0"])
        expect(card.locator(".images .distance")).to_have_text(
            f"{bits} pHash bits apart (radius {radius}): B is a duplicate of A by this photograph")
        sizes = [thumbs.nth(i).evaluate("img => [img.complete, img.naturalWidth, img.naturalHeight]") for i in (0, 1)]
        assert sizes == [[True, 200, 150], [True, 200, 150]]  # decoded under the page's policy
        boxes = [thumbs.nth(i).bounding_box() for i in (0, 1)]
        assert boxes[0] is not None and boxes[1] is not None
        assert boxes[0]["x"] + boxes[0]["width"] <= boxes[1]["x"] and abs(boxes[0]["y"] - boxes[1]["y"]) < 2
        page.goto("about:blank")
        server.stop()
    assert tab.dialogs == [] and tab.errors == []


@pytest.mark.parametrize("case", ["documents_as_decisions", "bad_json", "document_missing"])
def test_a_bad_decisions_file_ends_with_one_line(case: str, tmp_path: Path,
                                                 decisions: tuple[Path, list[dict[str, Any]]]) -> None:  # fmt: skip
    path, rows = decisions
    lines = path.read_text(encoding="utf-8").splitlines()
    docs = SAMPLE
    if case == "documents_as_decisions":
        bad, expected = SAMPLE, f"{SAMPLE} line 1: no 'status': is this a decisions file (neardup dedup -o)?"
    elif case == "bad_json":
        bad = tmp_path / "decisions.jsonl"
        bad.write_text("\n".join([*lines[:2], lines[2][:40], *lines[3:]]) + "\n", encoding="utf-8")
        expected = f"{bad} line 3: not JSON"
    else:
        _, b0, _ = duplicates(rows)[0]
        docs = tmp_path / "docs.jsonl"
        docs.write_text("".join(f"{line}\n" for line in SAMPLE.read_text(encoding="utf-8").splitlines()
                                if json.loads(line)["id"] != b0), encoding="utf-8")  # fmt: skip
        bad, expected = path, f"{docs}: document {b0!r} named by the decisions is not in it"
    fb = tmp_path / "feedback.jsonl"
    res = neardup("review", str(bad), "--docs", str(docs), "--feedback", str(fb), "--port", "0", timeout=60)
    assert res.returncode == 1
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("neardup: error: "), res.stderr
    assert expected in res.stderr
    assert not fb.exists()  # nothing written, not even an empty file


def test_feedback_to_the_kafka_topic(tab: Watched, decisions: tuple[Path, list[dict[str, Any]]],
                                     kafka_broker: KafkaBroker) -> None:  # fmt: skip
    path, rows = decisions
    a0, b0, _ = duplicates(rows)[0]
    topic = kafka_broker.topic_name("feedback")
    env = {"NEARDUP_TOPICS__FEEDBACK": topic, "NEARDUP_TOPICS__PARTITIONS": "1"}
    with serve(str(path), "--docs", str(SAMPLE), "--broker", kafka_broker.url, env=env) as server:
        page = tab.page
        page.goto(server.url)
        expect(page.locator("header")).to_contain_text(f"feedback to topic {topic} on {kafka_broker.url}")
        card = page.locator("article.pair").first
        page.keyboard.press("n")
        expect(card).to_have_attribute("data-state", "overturn")  # shown once the broker acknowledged it
        page.goto("about:blank")  # no request left in flight when the server stops
        server.stop()
    [msg] = kafka_broker.consume_sync(topic, expected=1, timeout=30, settle=1.0)
    assert msg.key == b0.encode()
    rec = parse_feedback(msg.value)
    assert isinstance(rec, PairFeedback) and (rec.a, rec.b, rec.is_duplicate) == (a0, b0, False)
    assert tab.errors == []
