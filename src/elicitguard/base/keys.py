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

A random key is also why shared setups refuse to start without configured keys: state
sealed or stored by one replica (or before a restart) must be readable by another, and a
per-process key makes every such value garbage. :meth:`KeyRing.require_configured` is the
one place that says so; the persistent and shared state stores and ``replicas > 1`` call it.

Secrets are never used directly as cipher keys: :meth:`Key.derive` gives each use its own
HKDF-SHA256 subkey (``seal``, ``state``, ``bind`` ...), so one secret may serve several
purposes without one use's output being valid for another.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

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

    def derive(self, label: str) -> bytes:
        """A 32-byte subkey of this key for one use (HKDF-SHA256, ``label`` as info)."""
        return _hkdf(self.secret, label)


@functools.lru_cache(maxsize=256)
def _hkdf(secret: bytes, label: str) -> bytes:
    kdf = HKDF(
        algorithm=hashes.SHA256(),
        length=32,
        salt=b"elicitguard/v1",
        info=label.encode("utf-8"),
    )
    return kdf.derive(secret)


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

    def require_configured(self, what: str) -> None:
        """Refuse to go on with a random per-process key where ``what`` needs shared keys.

        Raises :class:`KeyConfigError` naming ``what`` and the two ways to configure keys.
        """
        if self.configured:
            return
        msg = (
            f"{what} needs configured keys, but only {self.source} is available: state "
            "sealed or stored with it is unreadable by other replicas and after a restart. "
            f"Set `keys: {{file: /path/keys.json}}` in the policy or the {DEFAULT_KEYS_ENV} "
            "environment variable (make one with `elicitguard keys generate`), and give "
            "every replica the same keys"
        )
        raise KeyConfigError(msg)

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
    require: str | None = None,
) -> KeyRing:
    """Load keys from ``file``, else from the environment variable ``env``, else random.

    ``require`` names what needs shared keys (``"the redis state store"``, ``"3 replicas"``);
    with it, falling back to a random key raises :class:`KeyConfigError` instead.
    """
    ring = _load(file, env, dict(os.environ) if environ is None else environ)
    if require is not None:
        ring.require_configured(require)
    return ring


def _load(file: str | os.PathLike[str] | None, env: str | None, environ: dict[str, str]) -> KeyRing:
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
