"""A verifiable audit log: an HMAC chain over the records, and checkpoints.

With ``audit.chain: true`` every record written to a sink gets three fields:

* ``seq``: 1, 2, 3, ... in the order the records were written (the sink assigns it, so
  concurrent writers cannot interleave numbers and order);
* ``chain_key``: the id of the key (purpose ``chain``) that signed it;
* ``chain``: ``HMAC-SHA256(key, "elicitguard-audit-chain/v1" || previous chain || record)``
  in hex, where *record* is the written record without ``chain``, serialised with sorted
  keys, and *previous chain* is the ``chain`` of the record before (empty for ``seq`` 1).

Editing, inserting, dropping or reordering a record breaks a MAC or a link, and nobody
without the key can recompute them (an unkeyed hash chain could simply be rebuilt after an
edit). Cutting records off the end leaves a valid shorter chain, so a **checkpoint** holds
the last ``seq`` and ``chain`` seen, itself MAC'd with the same key: ``audit verify`` fails
when the log no longer reaches the checkpoint's record, or holds a different one at its
``seq``. The sink writes the checkpoint when it closes (``<audit file>.checkpoint``), and
``elicitguard audit checkpoint`` writes one for any verified log; keep checkpoints where
whoever can rewrite the log cannot (another host, a write-once store), since an old
checkpoint and a log cut back to it are consistent with each other.

A chain needs configured keys: with the random per-process key nobody could verify it
later, so :class:`ChainWriter` refuses one.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path
from typing import Any

import orjson

from elicitguard.base.keys import KeyRing
from elicitguard.errors import KeyConfigError

__all__ = [
    "CHAIN_PURPOSE",
    "ChainState",
    "ChainWriter",
    "Checkpoint",
    "VerifyReport",
    "chain_mac",
    "read_tail_state",
    "verify_chain",
]

CHAIN_PURPOSE = "chain"
_DOMAIN = b"elicitguard-audit-chain/v1"
_CHECKPOINT_DOMAIN = b"elicitguard-audit-checkpoint/v1"
_TAIL_BYTES = 1 << 20


def canonical(record: dict[str, Any]) -> bytes:
    """The bytes a record's MAC covers: every field but ``chain``, keys sorted."""
    body = {k: v for k, v in record.items() if k != "chain"}
    return orjson.dumps(body, option=orjson.OPT_SORT_KEYS, default=str)


def chain_mac(secret: bytes, previous: str, record: dict[str, Any]) -> str:
    """The ``chain`` value of ``record`` after ``previous``."""
    data = _DOMAIN + b"\x00" + previous.encode("ascii") + b"\x00" + canonical(record)
    return hmac.new(secret, data, sha256).hexdigest()


@dataclass(slots=True)
class ChainState:
    """Where a chain stands: the last ``seq`` and ``chain`` written."""

    seq: int = 0
    chain: str = ""


@dataclass(slots=True)
class ChainWriter:
    """Seals records for one sink, in write order."""

    keys: KeyRing
    state: ChainState = field(default_factory=ChainState)

    def __post_init__(self) -> None:
        if not self.keys.configured:
            msg = (
                "audit.chain needs configured keys (keys.file or ELICITGUARD_KEYS with a key "
                "for the `chain` purpose): a random per-process key makes the chain "
                "unverifiable once the process ends"
            )
            raise KeyConfigError(msg)
        self.keys.signing_key(CHAIN_PURPOSE)  # fails now, not at the first record

    def seal(self, event: dict[str, Any]) -> dict[str, Any]:
        """Number ``event`` and add its ``chain_key`` and ``chain``."""
        key = self.keys.signing_key(CHAIN_PURPOSE)
        sealed = {k: v for k, v in event.items() if k not in ("chain", "chain_key")}
        sealed["seq"] = self.state.seq + 1
        sealed["chain_key"] = key.id
        sealed["chain"] = chain_mac(key.secret, self.state.chain, sealed)
        self.state = ChainState(sealed["seq"], sealed["chain"])
        return sealed

    def checkpoint(self) -> Checkpoint:
        """The checkpoint of the chain as it stands."""
        return Checkpoint.make(self.keys, self.state.seq, self.state.chain)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The last record of a verified chain: ``seq`` and ``chain``, MAC'd with the key."""

    seq: int
    chain: str
    key: str
    mac: str

    @classmethod
    def make(cls, keys: KeyRing, seq: int, chain: str) -> Checkpoint:
        key = keys.signing_key(CHAIN_PURPOSE)
        return cls(seq, chain, key.id, _checkpoint_mac(key.secret, seq, chain))

    def to_json(self) -> bytes:
        data = {"version": 1, "seq": self.seq, "chain": self.chain, "key": self.key}
        data["mac"] = self.mac
        return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write atomically (a temporary file renamed over the old checkpoint), mode 0600."""
        target = Path(path)
        temporary = target.with_name(target.name + ".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as stream:
            stream.write(self.to_json())
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)

    @classmethod
    def load(cls, path: str | os.PathLike[str], keys: KeyRing) -> Checkpoint:
        """Read and authenticate a checkpoint; raise :class:`KeyConfigError` when forged."""
        try:
            data = orjson.loads(Path(path).read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            msg = f"{path}: cannot read the checkpoint ({type(exc).__name__})"
            raise KeyConfigError(msg) from None
        seq, chain, key_id, mac = (data.get(k) for k in ("seq", "chain", "key", "mac"))
        if not (
            isinstance(seq, int)
            and isinstance(chain, str)
            and isinstance(key_id, str)
            and isinstance(mac, str)
        ):
            raise KeyConfigError(f"{path}: a checkpoint holds seq, chain, key and mac")
        key = keys.by_id(key_id)
        if key is None or CHAIN_PURPOSE not in key.purposes:
            raise KeyConfigError(f"{path}: signed by key {key_id!r}, which is not configured")
        if not hmac.compare_digest(mac, _checkpoint_mac(key.secret, seq, chain)):
            raise KeyConfigError(f"{path}: the checkpoint's MAC does not verify (edited?)")
        return cls(seq, chain, key_id, mac)


def _checkpoint_mac(secret: bytes, seq: int, chain: str) -> str:
    data = _CHECKPOINT_DOMAIN + b"\x00" + str(seq).encode() + b"\x00" + chain.encode("ascii")
    return hmac.new(secret, data, sha256).hexdigest()


@dataclass(slots=True)
class VerifyReport:
    """What ``audit verify`` found: problems (by line, never content) and the chain's end."""

    records: int = 0
    last: ChainState = field(default_factory=ChainState)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_chain(
    lines: Iterable[bytes], keys: KeyRing, checkpoint: Checkpoint | None = None
) -> VerifyReport:
    """Check every record's MAC, its link to the one before, ``seq`` order and the checkpoint."""
    report = VerifyReport()
    state = ChainState()
    seen_checkpoint = checkpoint is None or checkpoint.seq == 0
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        problem = _check_line(raw, number, state, keys)
        if isinstance(problem, str):
            report.problems.append(problem)
            break  # later links are meaningless after a break
        report.records += 1
        state = problem
        if checkpoint is not None and state.seq == checkpoint.seq:
            if not hmac.compare_digest(state.chain, checkpoint.chain):
                report.problems.append(
                    f"line {number}: record {state.seq} differs from the checkpoint's record"
                )
                break
            seen_checkpoint = True
    report.last = state
    if report.ok and not seen_checkpoint and checkpoint is not None:
        report.problems.append(
            f"the log ends at record {state.seq} but the checkpoint recorded {checkpoint.seq}: "
            "records were cut off the end"
        )
    return report


def _check_line(raw: bytes, number: int, state: ChainState, keys: KeyRing) -> ChainState | str:
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return f"line {number}: not a JSON record"
    if not isinstance(record, dict):
        return f"line {number}: not a JSON record"
    seq, key_id, mac = record.get("seq"), record.get("chain_key"), record.get("chain")
    if not isinstance(seq, int) or not isinstance(key_id, str) or not isinstance(mac, str):
        return f"line {number}: the record has no seq, chain_key and chain (chain off?)"
    if seq != state.seq + 1:
        if seq <= state.seq:
            return f"line {number}: record {seq} after record {state.seq}: reordered or repeated"
        return f"line {number}: record {seq} follows record {state.seq}: records are missing"
    key = keys.by_id(key_id)
    if key is None or CHAIN_PURPOSE not in key.purposes:
        return f"line {number}: signed by key {key_id!r}, which is not configured for `chain`"
    if not hmac.compare_digest(mac, chain_mac(key.secret, state.chain, record)):
        return (
            f"line {number}: record {seq} does not verify: edited, inserted, or not linked "
            "to the record before it"
        )
    return ChainState(seq, mac)


def read_tail_state(path: str | os.PathLike[str]) -> ChainState:
    """The ``seq`` and ``chain`` of the last record of an existing log, to continue it."""
    target = Path(path)
    try:
        size = target.stat().st_size
    except OSError:
        return ChainState()
    if size == 0:
        return ChainState()
    with target.open("rb") as stream:
        stream.seek(max(0, size - _TAIL_BYTES))
        tail = stream.read()
    for line in reversed(tail.splitlines()):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            break
        if isinstance(record, dict):
            seq, chain = record.get("seq"), record.get("chain")
            if isinstance(seq, int) and isinstance(chain, str):
                return ChainState(seq, chain)
        break
    msg = f"{target}: cannot continue the audit chain: the last record is not a chained record"
    raise KeyConfigError(msg)
