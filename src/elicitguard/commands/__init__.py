"""The ``elicitguard`` commands, one module each.

A command module defines ``register(subparsers)``: it adds its parser and sets ``handler``
(``handler(args) -> int``, the exit code) with ``set_defaults``; a command group (``rules``,
``policy``) returns its own subparsers so that other modules can add subcommands to it.
:data:`elicitguard.cli.COMMANDS` and :data:`elicitguard.cli.SUBCOMMANDS` list the modules;
modules whose name starts with ``_`` are shared helpers (colour, help text, configuration).
"""
