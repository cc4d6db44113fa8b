"""Files the commands write: never over their own input, never half-written over an earlier result.

Two rules, for every command that writes files (dedup, idf build, eval, bench, review):

1. :func:`check_paths` runs before anything is opened for writing. An output that is the same file
   as an input, the store's files or another output is an :class:`OutputError` (one line), however
   it is named: another path, a symlink, a hard link (existing files are compared by device and
   inode), or, for files that do not exist yet, the same resolved place. ``-`` is stdout as an
   output and stdin as an input, and is compared by what it is (a redirected file counts).
2. :class:`OutputFile`: a regular output is written to a temporary file in its folder and renamed
   over the final path only by :meth:`OutputFile.commit` at the end of a successful run (fsynced
   first), so a failed or interrupted run leaves the earlier file as it was; a run killed -9 leaves
   at most a ``.NAME.*.tmp`` file beside it. ``-`` (stdout), ``/dev/null``, pipes and other files
   that are not regular stay streams: written in place, never renamed onto.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from neardup.errors import ConfigError

STDIO = "-"
Identity = tuple[object, ...]


class OutputError(ConfigError):
    """An output that cannot be written: the same file as an input or another output, a folder, read-only."""

    reason = "bad_output"


@dataclass(frozen=True, slots=True)
class Named:
    """A path a command reads or writes and the option that names it (for the error message)."""

    option: str
    path: str


def _stdio_identity(fd: int) -> Identity | None:
    """The identity of stdin (0) or stdout (1) when it is a regular file, else None (a stream)."""
    try:
        st = os.fstat(fd)
    except (OSError, ValueError):
        return None
    return ("file", st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def identity(path: str, *, fd: int) -> Identity | None:
    """What ``path`` is, as far as writing over it goes; None for a stream that cannot be clobbered.

    Existing regular files: ("file", device, inode), so links and other spellings of the same file
    compare equal. Files that do not exist yet: ("new", device, inode of the nearest existing
    folder above, the rest of the resolved path). ``-``: the identity of ``fd`` (0 stdin, 1 stdout).
    """
    if path == STDIO:
        return _stdio_identity(fd)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _new_identity(Path(os.path.realpath(path)))
    except OSError:  # unreadable metadata: compare by resolved path only
        return ("path", os.path.realpath(path))
    if stat.S_ISREG(st.st_mode):
        return ("file", st.st_dev, st.st_ino)
    if stat.S_ISDIR(st.st_mode):
        return ("dir", st.st_dev, st.st_ino)
    return None  # a device, a pipe, a socket: a stream


def _new_identity(resolved: Path) -> Identity:
    rest: list[str] = []
    folder = resolved
    while True:
        try:
            st = os.stat(folder)
            return ("new", st.st_dev, st.st_ino, *reversed(rest))
        except OSError:
            if folder.parent == folder:
                return ("path", str(resolved))
            rest.append(folder.name)
            folder = folder.parent


def check_paths(reads: Sequence[Named], writes: Sequence[Named]) -> None:
    """Raise :class:`OutputError` if an output is a folder, read-only, the same file as one of
    ``reads`` or as another output (two outputs to stdout included). Opens nothing."""
    seen: dict[Identity, Named] = {}
    for r in reads:
        key = identity(r.path, fd=0)
        if key is not None:
            seen.setdefault(key, r)
    stdout_user: Named | None = None
    for w in writes:
        if w.path == STDIO:
            if stdout_user is not None:
                raise OutputError(f"{w.option} and {stdout_user.option} both write to stdout",
                                  hint="give one of them a file")  # fmt: skip
            stdout_user = w
        key = identity(w.path, fd=1)
        if key is None:
            continue
        if key[0] == "dir":
            raise OutputError(f"{w.option} {w.path} is a folder", hint="give a file name")
        other = seen.get(key)
        if other is not None:
            raise OutputError(_clash(w, other), hint=f"give {w.option} another file; nothing was written")
        if key[0] == "file" and w.path != STDIO and not os.access(w.path, os.W_OK):
            raise OutputError(f"{w.option} {w.path} is not writable", hint="check its permissions")
        seen[key] = w


def _clash(w: Named, other: Named) -> str:
    shown = "- (stdout)" if w.path == STDIO else w.path
    other_shown = "- (stdin)" if other.path == STDIO else other.path
    return f"{w.option} {shown} is the same file as {other.option} {other_shown}"


def is_stream(path: str) -> bool:
    """``-`` or an existing file that is not a regular file (``/dev/null``, a pipe): written in place."""
    if path == STDIO:
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return False


class OutputFile:
    """One output file. ``target`` is where to write now; :meth:`commit` puts it in place,
    :meth:`discard` removes what a failed run wrote (a stream is left as it is).

    For a regular file ``target`` is a temporary file created now (so an unwritable folder fails
    before any work) beside the final file; a symlink is followed, so the link stays and its
    target is replaced. The final file keeps an existing file's permission bits; a new one gets
    the umask's.
    """

    def __init__(self, path: str) -> None:
        """Prepare ``path`` (``-``: stdout) for writing."""
        self.path = path
        self.stream = is_stream(path)
        self.final = path if self.stream else os.path.realpath(path)
        self.target = self.final
        self._done = self.stream
        if self.stream:
            return
        folder = Path(self.final).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, self.target = tempfile.mkstemp(prefix=f".{Path(self.final).name}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}",
                              hint="check the folder exists and is writable") from exc  # fmt: skip
        os.close(fd)
        os.chmod(self.target, _mode_for(self.final))

    def commit(self) -> None:
        """Make the written file the final one (fsync, then rename over the old); a stream: nothing."""
        if self._done:
            return
        with open(self.target, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(self.target, self.final)
        _fsync_folder(Path(self.final).parent)
        self._done = True

    def discard(self) -> None:
        """Remove the temporary file (the earlier final file, if any, stays as it was)."""
        if not self._done:
            Path(self.target).unlink(missing_ok=True)
            self._done = True


def _mode_for(final: str) -> int:
    try:
        return stat.S_IMODE(os.stat(final).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_folder(folder: Path) -> None:
    """Persist a rename (the folder's entry) where the platform allows opening a folder."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
