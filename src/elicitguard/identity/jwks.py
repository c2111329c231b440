"""The authorization server's public keys (JWKS), from the operator's file or HTTPS URL.

Why: a token is only as trustworthy as the keys it is checked against, so keys come from
one place the operator names, never from the token (``jku``, ``x5u``, ``jwk`` headers are
not read); symmetric (``oct``) entries are ignored. A file is re-read when it changes, a
URL cached for ``jwks_cache_s`` and refreshed at most every ``jwks_min_refresh_s`` to pick
up a rotation. :class:`~elicitguard.identity.tokens.TokenVerifier` asks
:class:`JwksSource` for the keys of an algorithm.
"""

from __future__ import annotations

import json
import os
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jwt

from elicitguard.errors import KeyConfigError, TokenError
from elicitguard.identity.token_config import TokenConfig

__all__ = ["ALG_FAMILY", "MAX_JWKS_BYTES", "JwksSource"]

MAX_JWKS_BYTES = 1 << 20


class JwksSource:
    """The operator's JWKS, from a file or an HTTPS URL, cached.

    Only asymmetric keys with a usable ``kty`` are kept; each becomes a :class:`jwt.PyJWK`.
    """

    def __init__(self, config: TokenConfig, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.clock = clock
        self._keys: list[tuple[dict[str, Any], Any]] = []
        #: Keys parsed for one algorithm, per load: parsing a JWK is far dearer than verifying.
        self._typed: dict[tuple[int, str], Any] = {}
        self._loaded_at: float | None = None
        self._file_stamp: tuple[int, int] | None = None
        self._lock = threading.Lock()
        self.fetches = 0

    def keys(self, *, refresh: bool = False) -> list[tuple[dict[str, Any], Any]]:
        """``(jwk dict, PyJWK)`` pairs; ``refresh`` asks for a reload (rate limited)."""
        with self._lock:
            now = self.clock()
            stale = self._loaded_at is None or now - self._loaded_at > self.config.jwks_cache_s
            if refresh and self._loaded_at is not None:
                stale = stale or now - self._loaded_at > self.config.jwks_min_refresh_s
            if self.config.jwks_file is not None:
                stamp = self._stamp()
                stale = stale or stamp != self._file_stamp
            if stale:
                self._load(now)
            return list(self._keys)

    def _stamp(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self.config.jwks_file or "")
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size)

    def _load(self, now: float) -> None:
        if self.config.jwks_file is not None:
            self._file_stamp = self._stamp()
            try:
                text = Path(self.config.jwks_file).read_bytes()[: MAX_JWKS_BYTES + 1]
            except OSError as exc:
                msg = f"{self.config.jwks_file}: cannot read the JWKS file: {exc.strerror}"
                raise KeyConfigError(msg) from None
        else:
            text = self._fetch()
            if not text:  # the refresh failed: keep serving the keys we have
                self._loaded_at = now
                return
        self._keys = _parse_jwks(text)
        self._typed = {}
        self._loaded_at = now

    def typed_key(self, index: int, entry: dict[str, Any], alg: str) -> Any:
        """The key of JWKS entry ``index`` for ``alg`` (cached; ``None`` when it does not fit)."""
        cache_key = (index, alg)
        if cache_key not in self._typed:
            try:
                self._typed[cache_key] = jwt.PyJWK(entry, algorithm=alg)
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError, KeyError):
                self._typed[cache_key] = None
        return self._typed[cache_key]

    def _fetch(self) -> bytes:
        url = self.config.jwks_url or ""
        context = self.config.ssl_context or ssl.create_default_context()
        request = urllib.request.Request(url, headers={"Accept": "application/json"})  # noqa: S310 (https only, checked in TokenConfig)
        self.fetches += 1
        try:
            with urllib.request.urlopen(request, timeout=5.0, context=context) as response:  # noqa: S310
                return bytes(response.read(MAX_JWKS_BYTES + 1))
        except (OSError, ValueError) as exc:
            if self._keys:
                return b""  # keep the cached keys when a refresh fails
            msg = f"cannot fetch the JWKS from the configured jwks_url: {type(exc).__name__}"
            raise TokenError("jwks_unavailable", msg) from None


def _parse_jwks(text: bytes) -> list[tuple[dict[str, Any], Any]]:
    if not text:
        return []
    if len(text) > MAX_JWKS_BYTES:
        raise KeyConfigError("the JWKS is larger than 1 MiB")
    try:
        data = json.loads(text)
    except ValueError:
        raise KeyConfigError('the JWKS is not JSON; expected {"keys": [...]}') from None
    entries = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise KeyConfigError('the JWKS has no "keys" list')
    keys: list[tuple[dict[str, Any], Any]] = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("kty") not in ("RSA", "EC", "OKP"):
            continue  # symmetric keys never verify anything here
        if entry.get("use") not in (None, "sig"):
            continue
        try:
            keys.append((entry, jwt.PyJWK(entry)))
        except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError, KeyError):
            continue
    return keys


#: The JWK key type (``kty``) each algorithm family signs with.
ALG_FAMILY = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}
