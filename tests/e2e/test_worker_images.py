"""Images through a real worker process on the session broker: a caption-less repost of a story's
photograph comes out as the story's image duplicate, a message with no text and no usable image
goes to the dead-letter topic with its reason, on the memory store and on Redis Cluster."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from neardup.agents.client import publish_file
from tests.e2e.conftest import Pipeline, WorkerProcess, collect
from tests.unit.test_document_images import ARTICLE, jpeg_b64, photo

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(420)]


def publish(pipeline: Pipeline, path: Path, docs: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    assert publish_file(pipeline.settings(), path, progress=False) == len(docs)


@pytest.mark.parametrize("store_url", ["memory", "rediscluster"], indirect=True)
def test_a_worker_decides_a_photograph_repost_and_dead_letters_a_message_with_nothing_usable(
    pipeline: Pipeline, start_worker: Callable[..., WorkerProcess], store_url: str, tmp_path: Path
) -> None:
    worker = start_worker("img", store_url=store_url, NEARDUP_IMAGES__MAX_IMAGES="2")
    worker.wait_ready()
    # the story first (its decision out before the repost is sent: the earlier document is the original)
    publish(pipeline, tmp_path / "first.jsonl", [
        {"id": "story", "text": ARTICLE, "images": [{"data": jpeg_b64(photo(1))}], "published_at": 1.7e9},
        {"id": "nothing", "text": "", "images": [{"data": "@@"}, {"phash": "xyz"}, {"phash": "0" * 16}]},
    ])
    collect(pipeline.broker, pipeline.outputs, expected=2, timeout=180, settle=0.5)
    publish(pipeline, tmp_path / "second.jsonl", [
        {"id": "repost", "images": [{"data": jpeg_b64(photo(1).resize((240, 180)), 45)}],
         "published_at": 1.7e9 + 60},
    ])
    got = collect(pipeline.broker, pipeline.outputs, expected=3, timeout=180)
    decided = {rec["id"]: rec for rec in (json.loads(r.value) for r in got[pipeline.unique] + got[pipeline.duplicate])}
    dead = [json.loads(r.value) for r in got[pipeline.dead_letter]]
    assert set(decided) == {"story", "repost"}, worker.log_tail()
    assert decided["story"]["status"] == "unique"
    repost = decided["repost"]
    assert repost["status"] == "duplicate" and repost["duplicate_of"] == "story", repost["evidence"]
    assert repost["evidence"]["reason"] == "image" and repost["evidence"]["image"]["against"] == "story"
    [letter] = dead
    assert letter["reason"] == "no_usable_image" and letter["error"].startswith("no_usable_image: text is empty")
    assert "image 0: image_bad_base64" in letter["error"] and "(and 2 more)" in letter["error"]
    status, body = worker.http("GET", "/metrics")
    assert status == 200 and 'neardup_dead_letter_total{reason="no_usable_image"} 1.0' in body.decode()
    assert 'neardup_documents_total{reason="image",status="duplicate"} 1.0' in body.decode()
    probe = {"id": "probe", "text": "图", "images": [{"data": jpeg_b64(photo(1), 70)}]}
    status, decision = worker.json("POST", "/check", json.dumps(probe).encode())
    assert status == 200 and decision["duplicate_of"] == "story" and decision["evidence"]["reason"] == "image"
    status, err = worker.json("POST", "/check", json.dumps({"id": "p2", "images": [{"data": "@@"}]}).encode())
    assert status == 400 and err["reason"] == "no_usable_image"
    assert worker.stop() == 0
