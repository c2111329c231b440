"""Command-line commands that live in their own modules.

A module here defines ``register(subparsers) -> None``: it adds its parser to the
``elicitguard`` command and sets ``handler`` (``handler(args) -> int``, the exit code) with
``set_defaults``. :mod:`elicitguard.cli` discovers the modules; nothing else to edit.
"""
