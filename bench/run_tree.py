"""Run a script of another tree of neardup with ``neardup`` imported from that tree, not from the
editable install: an A/B of two commits in one session, on one machine.

    git archive <commit> | tar -x -C /tmp/old
    .venv/bin/python bench/run_tree.py /tmp/old bench/image_engine.py --json /tmp/old.json

The tree's packages are mapped as the editable install maps this checkout's (``neardup`` to
``service/``, ``neardup.config`` to ``config/``, ...), by a finder placed ahead of it. Give each
tree its own ``NUMBA_CACHE_DIR``.
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path

PACKAGES = {"neardup": "service", "neardup.agents": "agents", "neardup.bench": "bench/suite",
            "neardup.config": "config", "neardup.storage": "storage"}


class TreeFinder:
    """Finds ``neardup`` and its mapped packages under one tree's folders."""

    def __init__(self, root: Path) -> None:
        """The packages of the tree at ``root``."""
        self.mapping = {name: root / folder for name, folder in PACKAGES.items()}

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        """The spec of a mapped package, or of a module directly inside one; None otherwise."""
        if fullname in self.mapping:
            folder = self.mapping[fullname]
            return importlib.util.spec_from_file_location(fullname, folder / "__init__.py",
                                                          submodule_search_locations=[str(folder)])
        parent = fullname.rpartition(".")[0]
        if parent in self.mapping:
            return PathFinder.find_spec(fullname, path=[str(self.mapping[parent])])
        return None


def main() -> None:
    """``run_tree.py TREE SCRIPT [ARGS...]``: run TREE/SCRIPT as ``__main__`` with TREE's neardup."""
    root = Path(sys.argv[1]).resolve()
    script = str(root / sys.argv[2])
    sys.meta_path.insert(0, TreeFinder(root))
    sys.path[0] = str(Path(script).parent)  # as ``python SCRIPT`` would: the tree's bench/, not this one's
    sys.argv = [script, *sys.argv[3:]]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
