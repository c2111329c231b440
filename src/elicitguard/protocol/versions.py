"""Per-version knowledge of MCP elicitation: which era a version belongs to and what it has.

The push era (2025-06-18, 2025-11-25) sends ``elicitation/create`` as a server-to-client
request inside a session; the 2026-07-28 era embeds elicitation in an
``InputRequiredResult`` and gets the answers in a retry. Rules that only make sense in one era
consult this table; a message whose version is not known is never guessed at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "ELICITATION_ERAS",
    "ERA_ALIASES",
    "INPUT_REQUEST_METHODS",
    "INPUT_REQUIRED_METHODS",
    "KNOWN_VERSIONS",
    "LATEST_ERA",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_PROTOCOL_VERSION",
    "MODERN_VERSIONS",
    "PUSH_VERSIONS",
    "VersionFeatures",
    "elicitation_era",
    "features",
    "is_known_era",
    "is_modern",
    "normalise_version",
]

V2025_06_18: Final = "2025-06-18"
V2025_11_25: Final = "2025-11-25"
V2026_07_28: Final = "2026-07-28"

PUSH_VERSIONS: Final = frozenset({"2024-11-05", "2025-03-26", V2025_06_18, V2025_11_25})
MODERN_VERSIONS: Final = frozenset({V2026_07_28})
KNOWN_VERSIONS: Final = PUSH_VERSIONS | MODERN_VERSIONS

#: The protocol versions that have elicitation, oldest first (the schema checks' eras).
ELICITATION_ERAS: Final[tuple[str, ...]] = (V2025_06_18, V2025_11_25, V2026_07_28)
#: The newest released era; ``draft`` and unknown era strings are judged as this one.
LATEST_ERA: Final = V2026_07_28

#: Names people write for a version; ``draft`` is 2026-07-28 apart from link targets.
#: The one alias table: version normalisation and the schema checks' eras both read it.
ERA_ALIASES: Final = {"draft": V2026_07_28, "modern": V2026_07_28, "latest": V2026_07_28}

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"

#: The only methods whose results may be an ``InputRequiredResult`` (MR-02); their retries
#: echo ``requestState``.
INPUT_REQUIRED_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: The methods an ``inputRequests`` entry may carry (MR-03).
INPUT_REQUEST_METHODS: Final = frozenset(
    {"elicitation/create", "sampling/createMessage", "roots/list"}
)


@dataclass(frozen=True, slots=True)
class VersionFeatures:
    """What one protocol version has, as far as elicitation is concerned."""

    version: str
    modern: bool
    elicitation: bool
    url_mode: bool
    elicitation_id: bool
    completion_notification: bool
    url_required_error: bool
    titled_enums: bool
    multi_select: bool
    string_number_defaults: bool
    schema_keyword: bool
    task_augmented: bool
    array_content: bool


_FEATURES: Final = {
    "2024-11-05": VersionFeatures(
        "2024-11-05",
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
    ),
    "2025-03-26": VersionFeatures(
        "2025-03-26",
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
    ),
    V2025_06_18: VersionFeatures(
        V2025_06_18,
        False,
        True,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
    ),
    V2025_11_25: VersionFeatures(
        V2025_11_25,
        False,
        True,
        True,
        True,
        True,
        True,
        True,
        True,
        True,
        True,
        True,
        True,
    ),
    V2026_07_28: VersionFeatures(
        V2026_07_28,
        True,
        True,
        True,
        False,
        False,
        False,
        True,
        True,
        True,
        True,
        False,
        True,
    ),
}


def normalise_version(version: object) -> str | None:
    """Return the known version string for ``version`` (aliases resolved), else ``None``."""
    if not isinstance(version, str):
        return None
    version = ERA_ALIASES.get(version, version)
    return version if version in KNOWN_VERSIONS else None


def is_known_era(era: object) -> bool:
    """Whether ``era`` names an era with elicitation, directly or through :data:`ERA_ALIASES`."""
    return isinstance(era, str) and (era in ELICITATION_ERAS or era in ERA_ALIASES)


def elicitation_era(era: object) -> str:
    """One of :data:`ELICITATION_ERAS` for ``era``; aliases resolved, anything else the newest."""
    if isinstance(era, str):
        if era in ELICITATION_ERAS:
            return era
        return ERA_ALIASES.get(era, LATEST_ERA)
    return LATEST_ERA


def features(version: str | None) -> VersionFeatures | None:
    """The feature table of a known version, or ``None`` when the version is unknown."""
    if version is None:
        return None
    return _FEATURES.get(version)


def is_modern(version: str | None) -> bool:
    """True for the 2026-07-28 era (no sessions, MRTR)."""
    return version in MODERN_VERSIONS
