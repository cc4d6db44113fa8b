"""Derived tables (normalisation, token weights, segmentation dictionary) cached on disk as .npz.

Each name carries a digest of everything the table is built from, so a stale file is never read.
The folder is ``NEARDUP_CACHE_DIR``, else ``$XDG_CACHE_HOME/neardup``, else ``~/.cache/neardup``: the
root of the folder whose ``numba`` subfolder holds the compiled kernels (:mod:`neardup.kernels.cache`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from neardup.kernels.cache import cache_root

Arrays = dict[str, npt.NDArray[np.generic]]


def cache_dir() -> Path:
    """Where derived tables are cached: ``NEARDUP_CACHE_DIR``, else ``$XDG_CACHE_HOME/neardup`` (``~/.cache/neardup``).
    """
    return cache_root()


def cached_arrays(name: str, build: Callable[[], Arrays]) -> Arrays:
    """The arrays saved under ``name``, or ``build()``'s, written atomically for next time."""
    path = cache_dir() / f"{name}.npz"
    try:
        with np.load(path) as data:
            return {k: data[k] for k in data.files}
    except (OSError, KeyError, ValueError):
        pass
    arrays = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # a file of this process and thread: two threads may build one table at once (prefetches)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp.npz")
        np.savez(tmp, **cast(dict[str, Any], arrays))  # numpy types the first keyword as bool
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home only costs the rebuild next time
    return arrays
