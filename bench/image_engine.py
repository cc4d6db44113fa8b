"""The image index through the engine: what the views cost a window, and how often pictures that
are not copies of each other become image duplicates.

    .venv/bin/python bench/image_engine.py [--pictures 3000] [--window 500] [--rounds 3] [--json RESULTS.json]

Each document is a caption (a short distinct text) with one picture of bench/image_index.py's
random fields (no two are copies), validated with and without the views and decided through the
engine on the memory store in windows. Every duplicate found is a chance match. Timed in
interleaved rounds (validation and decision apart), medians; chance matches at views' radii 8 to
14 and without the views, each with the low-structure radii off and on (``images.low_structure``).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import image_index  # bench/image_index.py: the random fields

from neardup.bench.report import MachineLoad, default_json_path, environment
from neardup.config import load_settings
from neardup.decision import Status
from neardup.document import Document, parse_document
from neardup.engine import Engine, decide_all
from neardup.media.hashes import ImageLimits

T0 = 1.7e9


def raw_documents(n: int) -> list[dict[str, Any]]:
    """``n`` captions, each with one random-field picture, a second apart."""
    files = image_index.random_fields(n, seed=5)
    return [{"id": f"d{i}", "text": f"图{i}号", "images": [{"data": base64.b64encode(f).decode("ascii")}],
             "published_at": T0 + i} for i, f in enumerate(files)]


async def decide(docs: list[Document], views: bool, view_radius: int, window: int,
                 low_structure: int | None = None) -> tuple[float, int]:
    """Seconds to decide ``docs`` on a fresh memory store, and how many came out duplicates
    (``low_structure``: the setting, None its default; 0 turns the low-structure radii off)."""
    images: dict[str, Any] = {"views": views, "view_radius": view_radius}
    if low_structure is not None:
        images["low_structure"] = low_structure
    settings = load_settings(worker_id="bench", store_url="memory://", images=images)
    engine = await Engine.open(settings)
    started = time.perf_counter()
    decisions = await decide_all(engine, docs, window)
    seconds = time.perf_counter() - started
    await engine.close()
    return seconds, sum(d.status is Status.DUPLICATE for d in decisions)


async def run(pictures: int, window: int, rounds: int) -> dict[str, Any]:
    """Timings (views off and on, interleaved) and chance matches by views' radius."""
    raw = raw_documents(pictures)
    timings: dict[str, dict[str, list[float]]] = {"no views": {"validate": [], "decide": []},
                                                  "views": {"validate": [], "decide": []}}
    parsed: dict[str, list[Document]] = {}
    for _ in range(rounds):
        for label, limits in (("no views", ImageLimits(views=False)), ("views", ImageLimits())):
            started = time.perf_counter()
            parsed[label] = [parse_document(r, image_limits=limits) for r in raw]
            timings[label]["validate"].append(time.perf_counter() - started)
            seconds, _ = await decide(parsed[label], label == "views", 12, window)
            timings[label]["decide"].append(seconds)
    chance: dict[str, int] = {}
    for label, low in (("low-structure radii off", 0), ("low-structure radii", None)):
        chance[f"no views, {label}"] = (await decide(parsed["no views"], False, 12, window, low))[1]
        for radius in (8, 10, 12, 14):
            chance[f"views' radius {radius}, {label}"] = (await decide(parsed["views"], True, radius, window, low))[1]
    return {
        "documents_per_second": {label: {step: round(pictures / statistics.median(values))
                                         for step, values in steps.items()} for label, steps in timings.items()},
        "seconds": {label: {step: [round(v, 2) for v in values] for step, values in steps.items()}
                    for label, steps in timings.items()},
        "chance_duplicates": chance,
    }


def main() -> None:
    """Run, print and write the result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pictures", type=int, default=3000)
    parser.add_argument("--window", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=default_json_path("image-engine", quick=False))
    args = parser.parse_args()
    load = MachineLoad()
    result = {"benchmark": "image-engine", "pictures": args.pictures, "window": args.window,
              **asyncio.run(run(args.pictures, args.window, args.rounds)),
              "machine": load.result(), "environment": environment("pillow")}
    text = json.dumps(result, ensure_ascii=False, indent=1)
    print(text)
    args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
