"""Sampling profiles with py-spy (attached by PID, so the profiled process runs unchanged) and
their top as text: where the CPU time goes, by function (self and inclusive)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

RATE_HZ = 100
ATTACH_SECONDS = 1.0
_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")
_SITE = re.compile(r".*/(?:site-packages|lib/python3\.\d+)/")
_REPO_DIRS = ("service/", "storage/", "agents/", "config/")


def py_spy() -> str | None:
    """The py-spy executable: beside this Python (the virtualenv), else on PATH."""
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else shutil.which("py-spy")


def _short(path: str) -> str:
    """A frame's file without the site-packages or checkout prefix."""
    path = _SITE.sub("", path)
    for d in _REPO_DIRS:
        i = path.find("/" + d)
        if i >= 0:
            return path[i + 1:]
    return path


def _frame_name(frame: str) -> str:
    m = _FRAME.match(frame)
    if not m:
        return frame
    return f"{m.group('func')} ({_short(m.group('file'))})"


@dataclass(frozen=True, slots=True)
class Profile:
    """A py-spy profile reduced to per-function sample counts."""

    title: str
    samples: int
    seconds: float
    self_samples: Counter[str]
    total_samples: Counter[str]

    @classmethod
    def from_collapsed(cls, title: str, text: str, seconds: float) -> Profile:
        """Parse py-spy's raw (collapsed stacks) output: ``frame;frame;...;leaf COUNT`` per line."""
        own: Counter[str] = Counter()
        total: Counter[str] = Counter()
        samples = 0
        for line in text.splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                continue
            n = int(count)
            frames = [_frame_name(f) for f in stack.split(";") if f and not f.startswith(("process ", "thread "))]
            if not frames:
                continue
            samples += n
            own[frames[-1]] += n
            for name in set(frames):
                total[name] += n
        return cls(title, samples, seconds, own, total)

    def text(self, top: int = 25) -> str:
        """The top functions by self time and by inclusive time, in % of the samples."""
        if not self.samples:
            return f"{self.title}\n  (no samples)\n"
        busy = self.samples / (self.seconds * RATE_HZ) if self.seconds > 0 else 0.0
        lines = [self.title,
                 f"  {self.samples} samples at {RATE_HZ} Hz over {self.seconds:.0f} s (all threads, idle excluded): "
                 f"on average {busy:.2f} threads on CPU", "", "  self %   function (file)"]
        lines += [f"  {100 * n / self.samples:6.1f}   {name}" for name, n in self.self_samples.most_common(top)]
        lines += ["", "  total %  function (file)  [inclusive: the function and what it calls]"]
        lines += [f"  {100 * n / self.samples:6.1f}   {name}" for name, n in self.total_samples.most_common(top)]
        return "\n".join(lines) + "\n"


class Recorder:
    """``py-spy record`` attached to a running process for a fixed time (no-op without py-spy)."""

    def __init__(self, pid: int, seconds: float, out: Path, title: str) -> None:
        """Start sampling ``pid`` now for ``seconds``; raw stacks go to ``out``."""
        self.title = title
        self.seconds = seconds
        self.out = out
        self.error: str | None = None
        exe = py_spy()
        self.proc: subprocess.Popen[bytes] | None = None
        if exe is None:
            self.error = "py-spy is not installed (pip install py-spy)"
            return
        out.parent.mkdir(parents=True, exist_ok=True)
        # nonblocking: the target is never paused to be sampled, so it runs at full speed
        self.proc = subprocess.Popen(
            [exe, "record", "--pid", str(pid), "--duration", str(max(1, round(seconds))), "--rate", str(RATE_HZ),
             "--format", "raw", "--nonblocking", "--output", str(out)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        time.sleep(ATTACH_SECONDS)  # py-spy takes a moment to attach: the caller's work starts after that

    def finish(self, timeout: float = 60.0) -> Profile | None:
        """Wait for py-spy to write its file; the parsed profile, or None (see ``error``)."""
        if self.proc is None:
            return None
        try:
            _, err = self.proc.communicate(timeout=self.seconds + timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        if not self.out.exists():
            self.error = f"py-spy wrote nothing (exit {self.proc.returncode}): {err.decode(errors='replace')[-300:]}"
            return None
        return Profile.from_collapsed(self.title, self.out.read_text(encoding="utf-8", errors="replace"),
                                      self.seconds)
