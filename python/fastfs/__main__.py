"""``python -m fastfs``: the ``fastfs`` console command (fastfs.cli)."""

import sys

from .cli import main

sys.exit(main())
