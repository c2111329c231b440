"""``python -m elicitguard``."""

from elicitguard.cli import entry

entry()
