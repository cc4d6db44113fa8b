"""What every benchmark result carries: versions, date, how busy the machine was; tables and JSON files."""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import os
import platform
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# below this share of the machine's CPU time used by processes outside the benchmark's own process
# tree, the machine counts as otherwise idle
IDLE_SHARE = 0.05
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def today() -> str:
    """The date results are filed under (UTC, ISO)."""
    return dt.datetime.now(dt.UTC).date().isoformat()


def default_json_path(name: str, quick: bool) -> Path:
    """``bench/results/NAME-DATE.json`` (``NAME-quick-DATE.json`` for a --quick run), under the current folder."""
    return Path("bench") / "results" / f"{name}{'-quick' if quick else ''}-{today()}.json"


def package_versions(*names: str) -> dict[str, str | None]:
    """Installed versions of the named distributions (None where one is missing)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def environment(*extra_packages: str, **servers: str | None) -> dict[str, Any]:
    """Python, the packages every path uses, ``extra_packages``, and server versions given by keyword."""
    return {
        "date": today(),
        "utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "packages": package_versions("neardup", "numpy", "numba", *extra_packages),
        "servers": dict(servers),
    }


def _cpu_busy_seconds() -> float:
    """Seconds of CPU time the whole machine spent busy since boot (all cores, /proc/stat)."""
    with open("/proc/stat", encoding="ascii") as fh:
        fields = fh.readline().split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def _proc_stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of the process and its reaped children), None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    rest = text.rsplit(")", 1)[1].split()  # the command name may hold spaces and parentheses
    ppid = int(rest[1])
    utime, stime, cutime, cstime = (int(x) for x in rest[11:15])
    return ppid, (utime + stime + cutime + cstime) / CLOCK_TICKS


def _tree_cpu_seconds(root: int) -> float:
    """CPU seconds of the processes below ``root`` that are alive now (children reaped by them included)."""
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _proc_stat(int(entry))) is not None:
            stats[int(entry)] = st
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        total += stats[pid][1]
        todo.extend(children.get(pid, []))
    return total


def _own_cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class MachineLoad:
    """How much CPU the rest of the machine used while a benchmark ran.

    Everything this process and its descendants used is the benchmark's; the machine's busy time
    (``/proc/stat``) minus that is the others' (other engineers' tests, say). Descendants that
    started before :meth:`start` would be counted whole: start this before any server or worker.
    """

    def __init__(self) -> None:
        """Take the first snapshot."""
        self.wall0 = time.monotonic()
        self.busy0 = _cpu_busy_seconds()
        self.own0 = _own_cpu_seconds() + _tree_cpu_seconds(os.getpid())
        self.load0 = os.getloadavg()[0]

    def result(self) -> dict[str, Any]:
        """Wall time, the benchmark's CPU seconds, the others', and whether the machine was otherwise idle."""
        wall = time.monotonic() - self.wall0
        busy = _cpu_busy_seconds() - self.busy0
        own = _own_cpu_seconds() + _tree_cpu_seconds(os.getpid()) - self.own0
        others = max(0.0, busy - own)
        share = others / (wall * (os.cpu_count() or 1)) if wall > 0 else 0.0
        return {
            "wall_seconds": round(wall, 1),
            "benchmark_cpu_seconds": round(own, 1),
            "other_processes_cpu_seconds": round(others, 1),
            "other_processes_cpu_share": round(share, 3),
            "load_average_1m_at_start": round(self.load0, 2),
            "otherwise_idle": share < IDLE_SHARE,
        }


@dataclass(frozen=True, slots=True)
class Row:
    """One line of a printed table: what, the figure, and the target it is held against (if any)."""

    what: str
    figure: str
    target: str = ""


def table(title: str, rows: Sequence[Row]) -> str:
    """A plain-text table with a title line."""
    width = max((len(r.what) for r in rows), default=0)
    fig = max((len(r.figure) for r in rows), default=0)
    lines = [title]
    for r in rows:
        target = f"   (target {r.target})" if r.target else ""
        lines.append(f"  {r.what.ljust(width)}  {r.figure.rjust(fig)}{target}")
    return "\n".join(lines)


def number(x: float | None, digits: int = 0) -> str:
    """``12,345`` or ``1.23``; ``-`` for None."""
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def write_json(path: Path, result: dict[str, Any]) -> None:
    """Write ``result`` (strict JSON, no NaN) to ``path``, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result, indent=1, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def percentile(values: Iterable[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) by nearest rank; None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = min(len(ordered) - 1, max(0, int(-(-q * len(ordered) // 1)) - 1))
    return ordered[rank]
