"""``elicitguard keys generate``: make a key file, or rotate one.

Shared setups (several replicas, a Redis or SQLite state store, sealing that must survive a
restart, a verifiable audit chain) refuse to run on a random per-process key; this command
makes the key file they need::

    elicitguard keys generate --output /etc/elicitguard/keys.json
    elicitguard keys generate --rotate /etc/elicitguard/keys.json --output keys.new.json

``--rotate`` puts a new key first (it signs and seals from now on) and keeps the existing
ones after it (they still verify and open what they sealed); roll the new file out to every
replica, and drop the old keys once the longest-lived state they sealed has expired. The
file is written with mode 0600; the secrets are never printed when ``--output`` is given.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from elicitguard.base.keys import load_keyring
from elicitguard.errors import ElicitguardError

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add ``keys generate``."""
    keys = subparsers.add_parser("keys", help="make or rotate a key file")
    commands = keys.add_subparsers(dest="keys_command", required=True)
    generate = commands.add_parser("generate", help="write a key file with a new random key")
    generate.add_argument("--id", help="the new key's id (default: the date and a suffix)")
    generate.add_argument(
        "--rotate", type=Path, metavar="FILE", help="keep this file's keys after the new one"
    )
    generate.add_argument(
        "--output", type=Path, metavar="FILE", help="write here (mode 0600) instead of stdout"
    )
    generate.set_defaults(handler=_generate)


def _generate(args: argparse.Namespace) -> int:
    key_id = args.id or f"{dt.date.today():%Y-%m-%d}-{secrets.token_hex(2)}"
    entries: list[dict[str, Any]] = [
        {"id": key_id, "secret": base64.b64encode(secrets.token_bytes(32)).decode("ascii")}
    ]
    if args.rotate is not None:
        try:
            load_keyring(args.rotate)  # validates the old file before anything is written
            old = json.loads(args.rotate.read_text(encoding="utf-8"))["keys"]
        except (ElicitguardError, OSError, ValueError, KeyError) as exc:
            print(f"elicitguard: {exc}", file=sys.stderr)
            return 2
        if any(entry.get("id") == key_id for entry in old):
            print(f"elicitguard: {args.rotate} already has a key {key_id!r}", file=sys.stderr)
            return 2
        entries.extend(old)
    text = json.dumps({"keys": entries}, indent=2) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as exc:
        print(f"elicitguard: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
        return 2
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(args.output, 0o600)
    print(f"wrote {args.output}: new key {key_id!r} signs, {len(entries) - 1} older key(s) verify")
    return 0
