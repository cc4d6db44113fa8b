"""``python -m neardup``: the same program as the ``neardup`` command."""

import sys

from neardup.cli import main

sys.exit(main())
