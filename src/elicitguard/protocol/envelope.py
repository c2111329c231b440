"""The envelope: one JSON-RPC message plus where it was seen.

Everything the engine decides depends on where a message travelled (direction), who is
evaluating it (side), the connection it belongs to (session), and the operator's name for the
server (never ``serverInfo``, which a server says about itself).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["Direction", "Envelope", "Side", "Transport"]


class _EmptyMapping(Mapping[str, Any]):
    """A read-only, hashable empty mapping: the shared default for headers and location."""

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and not other


_EMPTY: Mapping[str, Any] = _EmptyMapping()


class Direction(StrEnum):
    """Which way the message travelled."""

    CLIENT_TO_SERVER = "client_to_server"
    SERVER_TO_CLIENT = "server_to_client"


class Side(StrEnum):
    """Who is evaluating: an integration inside a client or server, a proxy, or the linter."""

    CLIENT = "client"
    SERVER = "server"
    PROXY = "proxy"
    CAPTURE = "capture"


class Transport(StrEnum):
    """How the message travelled."""

    STDIO = "stdio"
    HTTP = "http"


@dataclass(slots=True)
class Envelope:
    """One JSON-RPC message and its context.

    ``message`` is the parsed JSON-RPC object; ``raw`` the exact bytes when the caller has
    them (proxies forward unchanged messages byte for byte and the duplicate-key check needs
    them). ``principal`` is the verified identity, if any; never a client's claim.
    """

    message: dict[str, Any]
    direction: Direction
    side: Side = Side.CAPTURE
    transport: Transport | None = None
    session: str | None = None
    headers: Mapping[str, str] = _EMPTY
    principal: Any = None
    server: str | None = None
    ts: str | None = None
    protocol_version: str | None = None
    raw: bytes | None = None
    location: Mapping[str, Any] = _EMPTY
