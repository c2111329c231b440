"""AES-256-GCM with key ids: the one sealing primitive every identity feature uses.

A sealed blob is ``key id length (1 byte) | key id | nonce (12) | ciphertext and tag``. The
key id travels in clear (the reader needs it to pick the key) and is bound into the
authenticated data, so that a blob cannot be moved to another key. Each caller passes its
own ``purpose`` (the HKDF label of the subkey) and ``aad`` (what the blob is about: a store
slot, a token version), so a blob made for one use never opens in another.

The first non-retired key of the purpose seals; every key of the purpose opens, which is
what makes a rotation seamless: replicas roll the new key file out, new blobs use the new
key, blobs already issued keep opening until the old key is removed.
"""

from __future__ import annotations

import functools
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from elicitguard.base.keys import KeyRing

__all__ = ["NONCE_BYTES", "OVERHEAD", "SealedBlobError", "blob_key_id", "open_blob", "seal_blob"]

NONCE_BYTES = 12
TAG_BYTES = 16
#: Bytes a sealed blob adds to its plaintext, besides the key id.
OVERHEAD = 1 + NONCE_BYTES + TAG_BYTES


class SealedBlobError(Exception):
    """A blob did not open; ``reason`` is ``malformed``, ``unknown_key`` or ``tampered``."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@functools.lru_cache(maxsize=64)
def _cipher(key: bytes) -> AESGCM:
    return AESGCM(key)


def seal_blob(keys: KeyRing, purpose: str, plaintext: bytes, aad: bytes) -> bytes:
    """Encrypt and authenticate ``plaintext`` with the signing key of ``purpose``."""
    key = keys.signing_key(purpose)
    kid = key.id.encode("utf-8")
    if len(kid) > 255:
        raise ValueError("key ids are at most 255 bytes")  # load_keyring allows 64 chars
    nonce = os.urandom(NONCE_BYTES)
    header = bytes([len(kid)]) + kid
    body = _cipher(key.derive(purpose)).encrypt(nonce, plaintext, header + aad)
    return header + nonce + body


def blob_key_id(blob: bytes) -> str | None:
    """The key id a blob names, or ``None`` when it is too short to name one."""
    if not blob:
        return None
    size = blob[0]
    if len(blob) < 1 + size + NONCE_BYTES + TAG_BYTES:
        return None
    try:
        return blob[1 : 1 + size].decode("utf-8")
    except UnicodeDecodeError:
        return None


def open_blob(keys: KeyRing, purpose: str, blob: bytes, aad: bytes) -> bytes:
    """Decrypt a blob made by :func:`seal_blob`; raise :class:`SealedBlobError` otherwise."""
    kid = blob_key_id(blob)
    if kid is None:
        raise SealedBlobError("malformed")
    key = keys.by_id(kid)
    if key is None or purpose not in key.purposes:
        raise SealedBlobError("unknown_key")
    start = 1 + blob[0]
    header = blob[:start]
    nonce = blob[start : start + NONCE_BYTES]
    try:
        return _cipher(key.derive(purpose)).decrypt(
            nonce, blob[start + NONCE_BYTES :], header + aad
        )
    except InvalidTag:
        raise SealedBlobError("tampered") from None
