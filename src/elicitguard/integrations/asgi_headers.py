"""The MCP headers of a Streamable HTTP exchange, and ASGI header lists.

Why: the 2026-07-28 transport repeats parts of the body in headers (``Mcp-Method``,
``Mcp-Name``, ``MCP-Protocol-Version``); a guard that judges the body must refuse a
request whose headers say otherwise (:func:`header_mismatch`), and must make the headers
agree with a body it rewrites (:func:`consistent_headers`). The small helpers below read
and edit ASGI's ``[(name, value)]`` header lists.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from elicitguard.integrations.asgi_types import Scope
from elicitguard.protocol.versions import META_PROTOCOL_VERSION

__all__ = [
    "HEADER_MISMATCH",
    "NAMED_METHODS",
    "consistent_headers",
    "content_type_of",
    "decode_header_value",
    "header_mismatch",
    "header_value",
    "header_values",
    "identity_accepted",
    "scope_headers",
    "set_length",
    "without_headers",
]

#: Methods whose target (``params.name`` or ``params.uri``) the ``Mcp-Name`` header repeats.
NAMED_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


def consistent_headers(
    headers: list[tuple[bytes, bytes]], message: dict[str, Any]
) -> list[tuple[bytes, bytes]]:
    """Headers that agree with ``message``: Content-Length, and the Mcp-* headers present.

    The 2026-07-28 transport makes a server refuse a request whose ``Mcp-Method``,
    ``Mcp-Name`` or ``MCP-Protocol-Version`` differs from its body (-32020), so a guard that
    rewrites a body must rewrite these too. Headers the client did not send are not added.
    """
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    method = message.get("method")
    meta = params.get("_meta")
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    name = params.get("name", params.get("uri")) if method in NAMED_METHODS else None
    out: list[tuple[bytes, bytes]] = []
    for key, value in headers:
        lower = key.lower()
        if lower == b"content-length":
            continue
        if lower == b"mcp-method" and isinstance(method, str):
            value = header_value(method)
        elif lower == b"mcp-name" and isinstance(name, str):
            value = header_value(name)
        elif lower == b"mcp-protocol-version" and isinstance(version, str):
            value = header_value(version)
        out.append((key, value))
    return out


HEADER_MISMATCH = -32020


def header_mismatch(headers: Mapping[str, str], message: dict[str, Any]) -> str | None:
    """Why the request's ``Mcp-Method``, ``Mcp-Name`` or ``MCP-Protocol-Version`` header
    disagrees with its body, or ``None`` when they agree (or the header is absent).

    A guard judges the body; a gateway or server may route on the headers. When the two
    disagree, refusing is the only safe reading (TR-01 asks servers for -32020 too).
    Only header names appear in the reason, never their values.
    """
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    method = message.get("method")
    checks: list[tuple[str, Any]] = [("mcp-method", method)]
    if method in NAMED_METHODS:
        checks.append(("mcp-name", params.get("name", params.get("uri"))))
    meta = params.get("_meta")
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
        checks.append(("mcp-protocol-version", meta.get(META_PROTOCOL_VERSION)))
    for header, body_value in checks:
        sent = headers.get(header)
        if sent is None or not isinstance(body_value, str):
            continue
        if decode_header_value(sent) != body_value:
            return f"the {header} header disagrees with the body"
    return None


def decode_header_value(value: str) -> str:
    """Undo the transport's ``=?base64?...?=`` form for non-ASCII header values."""
    text = value.strip()
    if text.startswith("=?base64?") and text.endswith("?="):
        try:
            return base64.b64decode(text[9:-2], validate=True).decode("utf-8", "surrogatepass")
        except (ValueError, UnicodeDecodeError):
            return text
    return text


def header_value(text: str) -> bytes:
    """A header value; non-ASCII (or unsafe) text uses the transport's ``=?base64?...?=``."""
    if text.isascii() and text.isprintable() and text.strip() == text:
        return text.encode("ascii")
    return b"=?base64?" + base64.b64encode(text.encode("utf-8", "surrogatepass")) + b"?="


def scope_headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (latin-1, as HTTP carries them)."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def identity_accepted(scope: Scope) -> Scope:
    """The scope with ``Accept-Encoding: identity``: bodies the guard can judge as sent."""
    headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"accept-encoding"]
    headers.append((b"accept-encoding", b"identity"))
    scope = dict(scope)
    scope["headers"] = headers
    return scope


def without_headers(headers: list[tuple[bytes, bytes]], *names: bytes) -> list[tuple[bytes, bytes]]:
    """``headers`` without those named (lower-case ``names``)."""
    return [(k, v) for k, v in headers if k.lower() not in names]


def header_values(headers: list[tuple[bytes, bytes]], name: bytes) -> list[bytes]:
    """Every value of the header ``name`` (lower case), in order."""
    return [v for k, v in headers if k.lower() == name]


def content_type_of(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The one label of a body; ``None`` when there is none or two that disagree (peers
    differ on which one counts, so neither is trusted)."""
    values = {v.strip().lower() for v in header_values(headers, b"content-type")}
    return values.pop() if len(values) == 1 else None


def set_length(headers: list[tuple[bytes, bytes]], length: int) -> list[tuple[bytes, bytes]]:
    """``headers`` with one ``Content-Length`` of ``length``."""
    out = [(k, v) for k, v in headers if k.lower() != b"content-length"]
    out.append((b"content-length", str(length).encode("ascii")))
    return out
