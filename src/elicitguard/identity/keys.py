"""Key material for fingerprints, the audit chain and sealing, with key ids and rotation.

Keys come from a key file or an environment variable, never from the policy itself. The
format is JSON::

    {"keys": [{"id": "2026-11", "secret": "<base64, at least 32 bytes>",
               "purposes": ["fingerprint", "chain", "seal"], "retired": false}]}

The first non-retired key of a purpose signs; every key of that purpose still verifies, so
a rotation keeps old fingerprints and chains checkable for a grace period. When nothing is
configured a random key is made per process: session and principal hashes still work, but
no fingerprint of a *value* is emitted, since a random key makes them useless and an
unkeyed hash of a low-entropy value (a PIN, a short password) could be reversed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from elicitguard.errors import KeyConfigError

__all__ = ["DEFAULT_KEYS_ENV", "Key", "KeyRing", "load_keyring"]

DEFAULT_KEYS_ENV = "ELICITGUARD_KEYS"
MIN_SECRET_BYTES = 32
PURPOSES = ("fingerprint", "chain", "seal", "bind", "state")


@dataclass(frozen=True, slots=True)
class Key:
    """One key: an id that may be written anywhere, and a secret that is never written."""

    id: str
    secret: bytes = field(repr=False)
    purposes: tuple[str, ...] = PURPOSES
    retired: bool = False


@dataclass(slots=True)
class KeyRing:
    """The keys of one process; ``configured`` is false for a random per-process key."""

    keys: tuple[Key, ...]
    configured: bool
    source: str

    def signing_key(self, purpose: str) -> Key:
        """The key that signs for ``purpose`` (the first non-retired one)."""
        for key in self.keys:
            if purpose in key.purposes and not key.retired:
                return key
        msg = f"no active key for {purpose!r} in {self.source}"
        raise KeyConfigError(msg)

    def verifying_keys(self, purpose: str) -> list[Key]:
        """Every key that may verify for ``purpose``, newest first."""
        return [k for k in self.keys if purpose in k.purposes]

    def by_id(self, key_id: str) -> Key | None:
        """The key with this id, if any."""
        return next((k for k in self.keys if k.id == key_id), None)

    def mac(self, purpose: str, data: bytes) -> tuple[str, bytes]:
        """HMAC-SHA256 of ``data`` with the signing key; returns the key id and the tag."""
        key = self.signing_key(purpose)
        return key.id, hmac.new(key.secret, data, hashlib.sha256).digest()

    def value_fingerprint(self, value: str) -> str | None:
        """A keyed fingerprint of a value from traffic, or ``None`` without configured keys."""
        if not self.configured:
            return None
        key_id, tag = self.mac("fingerprint", value.encode("utf-8", "surrogatepass"))
        return f"hmac:{key_id}:{tag[:12].hex()}"

    def id_hash(self, value: str) -> str:
        """A keyed hash of an identifier (session, principal); random-keyed if unconfigured."""
        key_id, tag = self.mac("fingerprint", b"id\x00" + value.encode("utf-8", "surrogatepass"))
        prefix = key_id if self.configured else "ephemeral"
        return f"{prefix}:{tag[:12].hex()}"

    @classmethod
    def random(cls) -> KeyRing:
        """A random key for this process only."""
        key = Key("ephemeral", secrets.token_bytes(32))
        return cls((key,), configured=False, source="a random per-process key")


def load_keyring(
    file: str | os.PathLike[str] | None = None,
    env: str | None = None,
    *,
    environ: dict[str, str] | None = None,
) -> KeyRing:
    """Load keys from ``file``, else from the environment variable ``env``, else random."""
    environ = dict(os.environ) if environ is None else environ
    if file is not None:
        path = Path(file)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise KeyConfigError(f"{path}: cannot read the key file: {exc.strerror}") from None
        return KeyRing(_parse(text, str(path)), configured=True, source=str(path))
    name = env or DEFAULT_KEYS_ENV
    value = environ.get(name)
    if value:
        text = value
        return KeyRing(_parse(text, f"${name}"), configured=True, source=f"${name}")
    return KeyRing.random()


def _parse(text: str, source: str) -> tuple[Key, ...]:
    try:
        data: Any = orjson.loads(text)
    except orjson.JSONDecodeError:
        msg = f'{source}: keys must be JSON: {{"keys": [{{"id": "k1", "secret": "<base64>"}}]}}'
        raise KeyConfigError(msg) from None
    entries = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise KeyConfigError(f'{source}: expected {{"keys": [...]}} with at least one key')
    keys: list[Key] = []
    for index, entry in enumerate(entries):
        keys.append(_parse_key(entry, f"{source} keys[{index}]"))
    ids = [k.id for k in keys]
    if len(set(ids)) != len(ids):
        raise KeyConfigError(f"{source}: key ids must be unique")
    return tuple(keys)


def _parse_key(entry: Any, where: str) -> Key:
    if not isinstance(entry, dict):
        raise KeyConfigError(f"{where}: each key is an object with id and secret")
    key_id = entry.get("id")
    secret = entry.get("secret")
    if not isinstance(key_id, str) or not key_id or len(key_id) > 64:
        raise KeyConfigError(f"{where}: `id` must be a short non-empty string")
    if not isinstance(secret, str):
        raise KeyConfigError(f"{where}: `secret` must be a base64 string")
    try:
        normal = secret.strip().replace("+", "-").replace("/", "_")
        raw = base64.urlsafe_b64decode(normal + "=" * (-len(normal) % 4))
    except (binascii.Error, ValueError):
        raise KeyConfigError(f"{where}: `secret` is not valid base64") from None
    if len(raw) < MIN_SECRET_BYTES:
        msg = f"{where}: `secret` must decode to at least {MIN_SECRET_BYTES} random bytes"
        raise KeyConfigError(msg)
    purposes = entry.get("purposes", list(PURPOSES))
    if not isinstance(purposes, list) or any(p not in PURPOSES for p in purposes):
        raise KeyConfigError(f"{where}: `purposes` is a list of {', '.join(PURPOSES)}")
    return Key(key_id, raw, tuple(purposes), bool(entry.get("retired", False)))
