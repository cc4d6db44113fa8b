"""The check for an optional part (an extra) at the point of use, before importing it.

``require_extra("redis", "redis")`` raises :class:`MissingExtraError` (one line: which extra to
install) instead of an ``ImportError`` traceback. It lives in ``storage`` because the store needs it
for Redis and may import only itself; the rest of neardup imports it from here.
"""

from __future__ import annotations

import importlib.util

from neardup.storage.errors import MissingExtraError


def require_extra(module: str, extra: str, feature: str | None = None) -> None:
    """Raise :class:`MissingExtraError` unless ``module`` can be imported.

    ``extra`` is the name in ``pip install 'neardup[EXTRA]'``; ``feature`` what needs it, for the
    message (default: the module name).
    """
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken install
        found = False
    if not found:
        raise MissingExtraError(feature or module, extra)
