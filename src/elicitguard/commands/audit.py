"""``elicitguard audit verify|checkpoint``: check a chained audit log, or record where it ends.

``verify FILE [--checkpoint CKPT]`` exits 0 when every record's MAC and link verify and the
log still reaches the checkpoint's record, 1 when something was edited, inserted, dropped,
reordered or cut off (each problem names the line, never the content), 2 when the keys or
the files cannot be used. ``checkpoint FILE --output CKPT`` verifies the log and writes a
checkpoint of its last record, so that a later ``verify`` notices records cut off the end.
Keys come from ``--keys FILE`` or ``ELICITGUARD_KEYS``, as for the engine.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elicitguard.audit.chain import Checkpoint, VerifyReport, verify_chain
from elicitguard.base.keys import KeyRing, load_keyring
from elicitguard.errors import ElicitguardError

__all__ = ["register"]

EXIT_OK = 0
EXIT_TAMPERED = 1
EXIT_ERROR = 2


def register(subparsers: Any) -> None:
    """Add ``audit`` with its ``verify`` and ``checkpoint`` subcommands."""
    audit = subparsers.add_parser("audit", help="verify chained audit logs")
    commands = audit.add_subparsers(dest="audit_command", required=True)
    verify = commands.add_parser("verify", help="check the chain of an audit log")
    verify.add_argument("file", type=Path)
    verify.add_argument("--checkpoint", type=Path, help="the checkpoint the log must reach")
    _key_args(verify)
    verify.set_defaults(handler=_verify)
    checkpoint = commands.add_parser(
        "checkpoint", help="verify a log and write a checkpoint of its last record"
    )
    checkpoint.add_argument("file", type=Path)
    checkpoint.add_argument("--output", type=Path, required=True, help="checkpoint file")
    checkpoint.add_argument("--checkpoint", type=Path, help="an earlier checkpoint to check too")
    _key_args(checkpoint)
    checkpoint.set_defaults(handler=_checkpoint)


def _key_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keys", type=Path, help="key file (else $ELICITGUARD_KEYS)")
    parser.add_argument("--keys-env", help="environment variable holding the keys")


def _keys(args: argparse.Namespace) -> KeyRing:
    keys = load_keyring(args.keys, args.keys_env)
    if not keys.configured:
        msg = "no keys configured: pass --keys FILE or set ELICITGUARD_KEYS to the chain's keys"
        raise ElicitguardError(msg)
    return keys


def _lines(path: Path) -> Iterator[bytes]:
    with path.open("rb") as stream:
        yield from stream


def _run(args: argparse.Namespace) -> tuple[KeyRing, VerifyReport] | int:
    try:
        keys = _keys(args)
        checkpoint = Checkpoint.load(args.checkpoint, keys) if args.checkpoint else None
        report = verify_chain(_lines(args.file), keys, checkpoint)
    except OSError as exc:
        print(f"elicitguard: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return EXIT_ERROR
    except ElicitguardError as exc:
        print(f"elicitguard: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for problem in report.problems:
        print(f"{args.file}: {problem}")
    return keys, report


def _verify(args: argparse.Namespace) -> int:
    outcome = _run(args)
    if isinstance(outcome, int):
        return outcome
    _, report = outcome
    if not report.ok:
        return EXIT_TAMPERED
    print(f"{args.file}: ok, {report.records} records, chain intact up to record {report.last.seq}")
    return EXIT_OK


def _checkpoint(args: argparse.Namespace) -> int:
    outcome = _run(args)
    if isinstance(outcome, int):
        return outcome
    keys, report = outcome
    if not report.ok:
        print("elicitguard: not writing a checkpoint for a log that fails verification")
        return EXIT_TAMPERED
    Checkpoint.make(keys, report.last.seq, report.last.chain).write(args.output)
    print(f"wrote {args.output} (record {report.last.seq})")
    return EXIT_OK
