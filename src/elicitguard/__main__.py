"""``python -m elicitguard``."""

import sys

from elicitguard.cli import main

sys.exit(main())
