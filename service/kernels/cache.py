"""The one cache folder of neardup, and where the compiled kernels go in it.

The folder is ``NEARDUP_CACHE_DIR``, else ``$XDG_CACHE_HOME/neardup``, else ``~/.cache/neardup``.
The derived tables (:mod:`neardup.text.cache`) lie at its root and numba's compiled kernels in
its ``numba`` folder (``NUMBA_CACHE_DIR`` overrides that one), so the CLI, the library, the
workers and ``make demo`` compile the kernels once, not once each.

The kernels package calls :func:`use_kernel_cache` before any kernel is defined: numba reads its
cache folder when a kernel is decorated.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path

from numba.core import config, event

# the modules whose compilation is announced (a caller's own numba functions are not)
KERNELS = "neardup.kernels."
# what the first compilation of a process prints on stderr; a cache hit prints nothing
COMPILE_NOTICE = "neardup: compiling kernels once (30-60 s); later runs start in about 2 s"


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
    if not _listening:
        event.register("numba:compile", compile_notice)
        _listening = True
