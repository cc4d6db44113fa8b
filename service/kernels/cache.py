"""The one cache folder of neardup, and where the compiled kernels go in it.

The folder is ``NEARDUP_CACHE_DIR``, else ``$XDG_CACHE_HOME/neardup``, else ``~/.cache/neardup``.
The derived tables (:mod:`neardup.text.cache`) lie at its root and numba's compiled kernels in
its ``numba`` folder (``NUMBA_CACHE_DIR`` overrides that one), so the CLI, the library, the
workers and ``make demo`` compile the kernels once, not once each.

The kernels package calls :func:`use_kernel_cache` before any kernel is defined: numba reads its
cache folder when a kernel is decorated.

The kernels are cached under a digest of the kernel package's source (:class:`KernelCacheLocator`),
not under the path they are installed at, as numba does by default: a new virtual environment, a
reinstall, a wheel or the Docker image with the same kernels loads what a checkout compiled, and a
change to any kernel file compiles them all again (numba alone would keep a kernel whose callee in
another file changed).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
import threading
from pathlib import Path
from types import FunctionType
from typing import Any

from numba.core import config, event
from numba.core.caching import CacheImpl, _CacheLocator

# the modules whose compilation is announced (a caller's own numba functions are not)
KERNELS = "neardup.kernels."
# what the first compilation of a process prints on stderr; a cache hit prints nothing
COMPILE_NOTICE = "neardup: compiling kernels once (1-2 minutes); later runs start in about 2 s"


def cache_root() -> Path:
    """``NEARDUP_CACHE_DIR``, else ``$XDG_CACHE_HOME/neardup``, else ``~/.cache/neardup``."""
    base = os.environ.get("NEARDUP_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "neardup"
    try:
        return Path.home() / ".cache" / "neardup"
    except RuntimeError:  # no home directory (a bare container user): numba falls back to __pycache__
        return Path(".cache") / "neardup"


def kernel_cache_dir() -> Path:
    """Where numba keeps the compiled kernels: ``NUMBA_CACHE_DIR``, else ``numba`` under :func:`cache_root`."""
    return Path(os.environ.get("NUMBA_CACHE_DIR") or cache_root() / "numba")


@functools.cache
def kernels_digest() -> str:
    """A digest of every source file of the kernel package: the cache key of the compiled kernels."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:20]


class KernelCacheLocator(_CacheLocator):
    """numba's cache locator for neardup's kernels: ``kernels-<digest>`` in the cache folder.

    Other functions (a caller's own ``cache=True`` kernels) are left to numba's locators.
    """

    def __init__(self, py_func: FunctionType) -> None:
        """The locator of one kernel: its first line and its package's cache folder."""
        self._lineno = py_func.__code__.co_firstlineno
        folder = Path(getattr(config, "CACHE_DIR", None) or kernel_cache_dir())
        self._cache_path = str(folder / f"kernels-{kernels_digest()}")

    def get_cache_path(self) -> str:
        """The folder of this kernel package's compiled kernels."""
        return self._cache_path

    def get_source_stamp(self) -> str:
        """The package digest: any kernel file's change makes every cached kernel stale."""
        return kernels_digest()

    def get_disambiguator(self) -> str:
        """The kernel's first line, as numba's own locators: two kernels of one name stay apart."""
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func: FunctionType, py_file: str) -> KernelCacheLocator | None:
        """A locator for a neardup kernel whose cache folder is writable, else None (numba's own)."""
        if not py_func.__module__.startswith(KERNELS) or not os.path.exists(py_file):
            return None
        locator = cls(py_func)
        try:
            locator.ensure_cache_path()
        except OSError:
            return None
        return locator


class _CompileNotice(event.Listener):
    """Says once per process, on stderr, that kernels are being compiled.

    numba broadcasts ``numba:compile`` only when a kernel is not in the cache, so a warm start
    says nothing.
    """

    def __init__(self) -> None:
        self.said = False
        self._lock = threading.Lock()

    def on_start(self, ev: event.Event) -> None:
        """Print the notice the first time a neardup kernel compiles; later compilations stay silent."""
        dispatcher = (ev.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
        if not module.startswith(KERNELS):
            return
        with self._lock:
            if self.said:
                return
            self.said = True
        with contextlib.suppress(OSError, ValueError):  # stderr closed: the notice is only a courtesy
            print(COMPILE_NOTICE, file=sys.stderr, flush=True)

    def on_end(self, ev: event.Event) -> None:
        """Nothing to do when a compilation ends."""


compile_notice = _CompileNotice()
_listening = False


def use_kernel_cache() -> None:
    """Point numba at :func:`kernel_cache_dir`, and print :data:`COMPILE_NOTICE` on the first compilation.

    ``NUMBA_CACHE_DIR`` is set only when it is not set already; numba reads it again here in case
    it was imported before neardup.
    """
    global _listening
    if not os.environ.get("NUMBA_CACHE_DIR"):
        os.environ["NUMBA_CACHE_DIR"] = str(kernel_cache_dir())
    if os.environ["NUMBA_CACHE_DIR"] != getattr(config, "CACHE_DIR", None):
        config.reload_config()
    locators: list[Any] = CacheImpl._locator_classes  # numba's search order: ours first
    if KernelCacheLocator not in locators:
        locators.insert(0, KernelCacheLocator)
    if not _listening:
        event.register("numba:compile", compile_notice)
        _listening = True
