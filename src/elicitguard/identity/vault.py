"""The credential vault: third-party tokens a server holds, recognised in outgoing messages.

A server that completes a URL-mode flow (an OAuth connection to GitHub, a payment provider)
ends up holding the third party's token. EL-19 says that token must never transit the MCP
client. The server registers each such token here; EG603 then looks for all of them in
every server-to-client message outside elicitation (results, errors, notifications) with
one linear-time multi-string search: a single RE2 alternation of the escaped literals,
rebuilt when the vault changes. Each token is also registered in its percent-encoded form,
the way it appears inside a URL.

Registering the first token takes server messages off the fast path (they must be
scanned); an empty vault costs nothing. The tokens live in this process's memory only, as
they must to be recognised; nothing here writes them anywhere.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import re2

__all__ = ["CredentialVault", "VaultMatch"]

MIN_TOKEN_CHARS = 8
_MAX_MEM = 64 << 20


@dataclass(frozen=True, slots=True)
class VaultMatch:
    """Where a registered token was found; ``label`` is what the server called it."""

    label: str
    start: int
    end: int


def _escape(literal: str) -> str:
    """RE2-escape a literal: word characters as is, everything else as ``\\x{HEX}``."""
    return "".join(
        c if c.isascii() and (c.isalnum() or c == "_") else f"\\x{{{ord(c):x}}}" for c in literal
    )


class CredentialVault:
    """Third-party credentials this server obtained, to be kept away from the client."""

    def __init__(self) -> None:
        self._labels: dict[str, str] = {}
        self._pattern: Any = None
        self._snapshot: dict[str, str] = {}
        self._dirty = False
        self._lock = threading.Lock()

    def register(self, token: str, *, label: str = "third-party credential") -> None:
        """Remember ``token`` (at least 8 characters) so that EG603 finds it."""
        if not isinstance(token, str) or len(token) < MIN_TOKEN_CHARS:
            msg = f"a vault token must be a string of at least {MIN_TOKEN_CHARS} characters"
            raise ValueError(msg)
        with self._lock:
            for form in {token, quote(token, safe="")}:
                self._labels[form] = label
            self._dirty = True

    def forget(self, token: str) -> None:
        """Stop looking for ``token`` (it was revoked)."""
        with self._lock:
            for form in {token, quote(token, safe="")}:
                self._labels.pop(form, None)
            self._dirty = True

    def __len__(self) -> int:
        return len(self._labels)

    def _compiled(self) -> tuple[Any, dict[str, str]]:
        if not self._dirty:
            return self._pattern, self._snapshot
        with self._lock:
            literals = sorted(self._labels, key=len, reverse=True)
            if not literals:
                self._pattern = None
            else:
                options = re2.Options()
                options.max_mem = _MAX_MEM
                self._pattern = re2.compile("|".join(_escape(t) for t in literals), options)
            self._snapshot = dict(self._labels)
            self._dirty = False
            return self._pattern, self._snapshot

    def search(self, text: str) -> list[VaultMatch]:
        """Every registered token in ``text``, in order (one pass over the text)."""
        pattern, labels = self._compiled()
        if pattern is None or not text:
            return []
        return [
            VaultMatch(labels.get(m.group(0), "third-party credential"), m.start(), m.end())
            for m in pattern.finditer(text)
        ]

    def __repr__(self) -> str:
        return f"CredentialVault(<{len(self._labels)} forms>)"
