"""``python -m ampere``: see ``ampere.cli``."""

import sys

from .cli import main

sys.exit(main())
