"""Real parallel text for the translation check: Linux manual pages in English and their Chinese
translations, as Debian ships them (manpages-zh, and the English pages of manpages, manpages-dev,
coreutils and util-linux), rendered by man(1) and written to /tmp, never committed.

    python bench/parallel_manpages.py [--out /tmp/neardup-parallel]

Writes ``docs.jsonl`` (``{"id", "text", "lang"}``: ``en:man1/ls`` and ``zh:man1/ls`` ...) and
``pairs.jsonl`` (``{"a", "b", "label": 1, "kind": "translation"}`` for each page found in both
languages). The translations were made from older versions of the English pages, so a pair is a
translation of an earlier version, as a reprint in another language often is. The packages are
fetched with ``apt-get download`` (Debian's package registry) and unpacked with ``dpkg-deb``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
from pathlib import Path

PACKAGES = ("manpages-zh", "manpages", "manpages-dev", "coreutils", "util-linux")
MAX_CHARS = 20_000  # long pages (bash, gcc) are cut: the check reads a document's head anyway


def render(page: Path) -> str:
    """The page as man(1) prints it, without its header and footer lines, whitespace collapsed."""
    env = {**os.environ, "MANWIDTH": "100", "LANG": "C.UTF-8", "MAN_KEEP_FORMATTING": ""}
    # groff loops on a few translated pages (zh_CN df.1): those are left out, its whole group killed
    with subprocess.Popen(["man", "-l", str(page)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                          start_new_session=True) as proc:
        try:
            raw, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return ""
    text = subprocess.run(["col", "-bx"], input=raw, capture_output=True, check=False).stdout.decode("utf-8", "replace")
    lines = [line.strip() for line in text.splitlines()[1:-1]]
    return re.sub(r"\s+", " ", " ".join(line for line in lines if line))[:MAX_CHARS]


def main() -> None:
    """Fetch the manual-page packages (apt-get download) and write the Chinese and English pages as parallel texts."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("/tmp/neardup-parallel"))
    args = ap.parse_args()
    debs = args.out / "debs"
    root = args.out / "root"
    debs.mkdir(parents=True, exist_ok=True)
    if not any(debs.glob("*.deb")):
        subprocess.run(["apt-get", "download", *PACKAGES], cwd=debs, check=True, capture_output=True)
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    man = root / "usr" / "share" / "man"
    docs: list[dict[str, str]] = []
    pairs: list[dict[str, object]] = []
    for zh_page in sorted((man / "zh_CN").glob("man*/*.gz")):
        section = zh_page.parent.name
        en_page = man / section / zh_page.name
        if not en_page.exists():
            continue
        name = f"{section}/{zh_page.name.removesuffix('.gz')}"
        zh, en = render(zh_page), render(en_page)
        if len(zh) < 200 or len(en) < 200:  # a page that only points to another one
            continue
        docs += [{"id": f"en:{name}", "text": en, "lang": "en"}, {"id": f"zh:{name}", "text": zh, "lang": "zh"}]
        pairs.append({"a": f"en:{name}", "b": f"zh:{name}", "label": 1, "kind": "translation"})
    with open(args.out / "docs.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
    with open(args.out / "pairs.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(p) + "\n" for p in pairs)
    print(f"{args.out}/docs.jsonl: {len(docs)} documents, {len(pairs)} translated pages")


if __name__ == "__main__":
    main()
