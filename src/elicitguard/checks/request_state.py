"""What a ``requestState`` value looks like on the wire: protected or not, and what it reveals.

MR-06 treats ``requestState`` as attacker-controlled and asks for integrity protection (a MAC
or AEAD) whenever it matters; it does not ask for secrecy. So the question is structural:
does the value carry a recognisable integrity mechanism?

* **sealed** (AEAD, nothing readable): the Python SDK's ``v1.`` tokens, elicitguard's
  ``egs1.`` tokens, Fernet tokens, JWE compact serialisation;
* **signed** (a MAC or signature, payload readable): a JWS whose ``alg`` is not ``none``, and
  ``payload.signature`` forms (itsdangerous, Rails ``--``, Express ``s:``) with a signature
  of at least 16 random-looking bytes;
* **opaque**: base64 or hex of high-entropy bytes, a UUID, or a bare token without structure
  (``st-18``, ``42``): a reference to server-side state or ciphertext in an unknown format;
  tampering can only fail a lookup, which MR-06 allows, so no finding;
* **none**: plain JSON, base64 or base64url of JSON or of structured text, ``key=value`` or
  ``key: value`` pairs, free text, and a JWS with ``alg: none`` or no signature.

For readable values (``none`` and ``signed``) the payload is searched for what makes tampering
or reading harmful: identity (``user_id``, ``sub``, ``role`` ...), credentials (secret key names,
recognised token formats) and personal data.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl

from elicitguard.checks.identity import is_identity_name, jwt_parts
from elicitguard.checks.pii import scan_pii
from elicitguard.checks.secrets import is_secret_key_name, scan_text, scan_value

__all__ = ["StateAnalysis", "analyse_request_state"]

_B64 = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_SEALED_PREFIXES: Final = ("v1.", "egs1.")
#: Words joined by separators (``plaintext-state-seen-by-handler``, ``step_2``): text, even
#: though the alphabet is base64's.
_WORDS = re.compile(r"^[A-Za-z]{2,24}(?:[-_.:][A-Za-z0-9]{1,24})+$")
_MAX_SCAN: Final = 64 * 1024
_MAX_REFERENCE: Final = 128


@dataclass(frozen=True, slots=True)
class StateAnalysis:
    """The verdict on one ``requestState`` value.

    ``protection``: ``none``, ``signed``, ``sealed`` or ``opaque``. ``form`` names the
    encoding found (``json``, ``base64-json``, ``text``, ``jws``, ``jws-unsigned``, ``jwe``,
    ``fernet``, ``mcp-sdk``, ``elicitguard``, ``signed-pair``, ``random``, ``uuid``, ``empty``).
    ``sensitive`` lists what a readable payload carries: ``identity``, ``credential``,
    ``personal-data``. ``evidence`` is the first offending key name (never a value).
    """

    protection: str
    form: str
    sensitive: tuple[str, ...] = ()
    evidence: str | None = None


def _b64decode(text: str) -> bytes | None:
    if len(text) < 4 or not _B64.match(text):
        return None
    body = text.rstrip("=")
    try:
        if "-" in body or "_" in body:
            return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        return base64.b64decode(body + "=" * (-len(body) % 4), validate=False)
    except (binascii.Error, ValueError):
        return None


def _entropy_bits_per_byte(data: bytes) -> float:
    if not data:
        return 0.0
    counts = Counter(data)
    total = len(data)
    return -sum(c / total * math.log2(c / total) for c in counts.values())


def _text(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\r\n\t")
    return text if text and printable / len(text) > 0.95 else None


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None


def _random_bytes(data: bytes) -> bool:
    """Looks like ciphertext, a MAC or a random id: long enough and high entropy."""
    if len(data) < 16:
        return False
    if _text(data) is not None and _entropy_bits_per_byte(data) < 5.0:
        return False
    # Random bytes have ~log2(n) bits per byte for short samples; demand most of it.
    ceiling = min(8.0, math.log2(len(data)))
    return _entropy_bits_per_byte(data) >= 0.8 * ceiling


def _signature(segment: str) -> bool:
    raw = _b64decode(segment)
    if raw is not None and _random_bytes(raw):
        return True
    return len(segment) >= 32 and bool(_HEX.match(segment))


def _walk(value: Any, key: str | None, depth: int = 0) -> Iterator[tuple[str | None, Any]]:
    if depth > 32:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k), v
            yield from _walk(v, str(k), depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, key, depth + 1)
    else:
        yield key, value


def _sensitive_in(payload: Any, text: str) -> tuple[tuple[str, ...], str | None]:
    found: dict[str, str | None] = {}
    if isinstance(payload, (dict, list)):
        for key, value in _walk(payload, None):
            if key is not None and isinstance(value, (str, int)) and not isinstance(value, bool):
                if is_identity_name(key):
                    found.setdefault("identity", key)
                if isinstance(value, str) and is_secret_key_name(key) and value:
                    found.setdefault("credential", key)
            if isinstance(value, str) and value:
                if "credential" not in found and scan_value(value, key):
                    found.setdefault("credential", key)
                if "personal-data" not in found and scan_pii(value, key):
                    found.setdefault("personal-data", key)
    else:
        for name, value in _pairs(text):
            if is_identity_name(name):
                found.setdefault("identity", name)
            if is_secret_key_name(name) and value:
                found.setdefault("credential", name)
        if "credential" not in found and scan_text(text[:_MAX_SCAN]):
            found["credential"] = None
        if "personal-data" not in found and scan_pii(text[:_MAX_SCAN]):
            found["personal-data"] = None
    kinds = tuple(k for k in ("identity", "credential", "personal-data") if k in found)
    evidence = next((found[k] for k in kinds if found[k] is not None), None)
    return kinds, evidence


def _pairs(text: str) -> list[tuple[str, str]]:
    """``a=1&b=2`` or ``a=1;b=2`` or ``a:1,b:2`` pairs in a text payload."""
    if "=" in text:
        try:
            return parse_qsl(text.replace(";", "&"), keep_blank_values=True)
        except ValueError:
            return []
    pairs = []
    for part in re.split(r"[,;\n]", text):
        name, sep, value = part.partition(":")
        if sep and name.strip() and len(name) < 64:
            pairs.append((name.strip(), value.strip()))
    return pairs


def _readable(payload_text: str, protection: str, form: str) -> StateAnalysis:
    payload = _json(payload_text)
    sensitive, evidence = _sensitive_in(payload, payload_text)
    if (
        form in ("text", "base64-text")
        and protection == "none"
        and not sensitive
        and not _pairs(payload_text)
        and len(payload_text) <= _MAX_REFERENCE
        and not any(c.isspace() for c in payload_text)
    ):
        # A bare token ("st-18", "42", a handle): a reference to state kept on the server.
        # Tampering can only fail its lookup, which MR-06 allows; nothing to read either.
        return StateAnalysis("opaque", "reference")
    return StateAnalysis(protection, form, sensitive, evidence)


def analyse_request_state(value: str) -> StateAnalysis:
    """Classify one ``requestState`` string (see the module docstring)."""
    if not value.strip():
        return StateAnalysis("opaque", "empty")
    value = value[: 4 * _MAX_SCAN]
    if value.startswith(_SEALED_PREFIXES) and _B64.match(value.split(".", 1)[1] or "="):
        # The SDK's and elicitguard's own AEAD formats (examples often shorten them).
        return StateAnalysis("sealed", "mcp-sdk" if value.startswith("v1.") else "elicitguard")
    if _UUID.match(value):
        return StateAnalysis("opaque", "uuid")
    dots = value.count(".")
    if dots == 4:
        jwe_header = _b64decode(value.split(".", 1)[0])
        if jwe_header is not None and isinstance(_json(_text(jwe_header) or ""), dict):
            return StateAnalysis("sealed", "jwe")
    if dots == 2:
        parts = jwt_parts(value)
        if parts is not None:
            header, claims = parts
            signature = value.rsplit(".", 1)[1]
            text = json.dumps(claims)
            if str(header.get("alg", "")).lower() == "none" or not signature:
                return _readable(text, "none", "jws-unsigned")
            return _readable(text, "signed", "jws")
    raw = _b64decode(value)
    if raw is not None and raw[:1] == b"\x80" and len(raw) >= 57:
        return StateAnalysis("sealed", "fernet")
    signed = _signed_pair(value)
    if signed is not None:
        return signed
    if _json(value) is not None:
        return _readable(value, "none", "json")
    if _WORDS.match(value):
        return _readable(value, "none", "text")
    if raw is not None:
        decoded = _text(raw)
        if decoded is not None and not _random_bytes(raw):
            return _readable(
                decoded, "none", "base64-json" if _json(decoded) is not None else "base64-text"
            )
        if _random_bytes(raw):
            return StateAnalysis("opaque", "random")
    if _HEX.match(value) and len(value) >= 32:
        return StateAnalysis("opaque", "random")
    return _readable(value, "none", "text")


def _signed_pair(value: str) -> StateAnalysis | None:
    """``payload.signature`` (itsdangerous, optionally with a timestamp), ``payload--sig``
    (Rails), ``s:payload.sig`` (Express)."""
    body = value[2:] if value.startswith("s:") else value
    for separator in ("--", "."):
        if separator not in body:
            continue
        payload, _, signature = body.rpartition(separator)
        if not payload or not _signature(signature):
            continue
        if separator == "." and payload.count(".") == 1:
            payload = payload.split(".", 1)[0]  # itsdangerous: payload.timestamp.signature
        raw = _b64decode(payload.lstrip("."))
        readable = _text(raw) if raw is not None else None
        if readable is None and _json(payload) is not None:
            readable = payload
        if readable is None:
            return StateAnalysis("signed", "signed-pair")
        return _readable(readable, "signed", "signed-pair")
    return None
