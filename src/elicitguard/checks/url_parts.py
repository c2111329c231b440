"""What a parsed URL is: its decoded components, labelled, and the problems found.

Why: every URL check reads the same split of a URL (built once by
:func:`elicitguard.checks.urls.parse_url`); the types live apart from the parser so that
a reader of a check sees what it reads without the parsing rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final, NamedTuple
from urllib.parse import unquote

__all__ = ["SCHEME_IN_VALUE_RE", "ParsedUrl", "UrlComponent"]

#: A value that starts with an absolute URL (``scheme://``).
SCHEME_IN_VALUE_RE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]{1,20}://")


class UrlComponent(NamedTuple):
    """One decoded piece of a URL: a stable label, the key if any, and the value.

    A named tuple rather than a frozen dataclass: a URL yields a dozen of these and building
    a frozen dataclass costs three ``object.__setattr__`` calls each (URL analysis is on the
    hot path of every URL-mode request).
    """

    location: str
    key: str | None
    value: str


class ParsedUrl(NamedTuple):
    """A URL split into decoded components; built by :func:`parse_url` only.

    An immutable named tuple (building one is a fifth of the cost of the frozen dataclass
    it replaced, and a URL-mode request builds one per URL). Equality and hashing use the
    raw URL only; the repr shows scheme, host and problems, never userinfo, path or query.
    """

    raw: str
    scheme: str
    host: str
    port: int | None
    user: str | None
    password: str | None
    path: str
    query: str | None
    fragment: str | None
    problems: tuple[str, ...]
    has_authority: bool
    parts: tuple[UrlComponent, ...]  # every decoded component in order

    def __hash__(self) -> int:
        return hash(self.raw)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ParsedUrl) and other.raw == self.raw

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __repr__(self) -> str:
        return (
            f"ParsedUrl(scheme={self.scheme!r}, host={self.host!r}, port={self.port!r}, "
            f"problems={self.problems!r}, parts=<{len(self.parts)}>)"
        )

    @property
    def valid(self) -> bool:
        """True when no parser disagreement or syntax problem was found."""
        return not self.problems

    def components(self) -> Iterator[UrlComponent]:
        """Every decoded component, nested ones labelled ``outer>inner``."""
        return iter(self.parts)

    def query_params(self) -> dict[str, str]:
        """Top-level query and fragment parameters, lower-cased keys (first value wins), then
        the ``key=value`` pairs found in a decoded (percent-encoded again or base64) value."""
        params: dict[str, str] = {}
        inner: list[tuple[str, str]] = []
        for location, key, value in self.parts:
            if key is None or not location.startswith(("query:", "fragment:")):
                continue
            if ">" not in location:
                params.setdefault(key.lower(), value)
            elif ">decoded:" in location and location.count(">") == 1:
                inner.append((key.lower(), value))
        for key, value in inner:
            params.setdefault(key, value)
        return params

    def nested_urls(self) -> list[tuple[str, str]]:
        """``(location, url)`` of each URL held by a top-level value (after decoding it)."""
        found: list[tuple[str, str]] = []
        for location, _key, value in self.parts:
            top = location.split(">", 1)[0]
            if (">" in location and not location.endswith(">decoded")) or "://" not in value:
                continue
            text = value.strip()
            if SCHEME_IN_VALUE_RE.match(text) and all(text != url for _, url in found):
                found.append((top, text))
        return found

    def path_segments(self) -> list[str]:
        """Decoded path segments in order (empty ones dropped)."""
        return [unquote(s) if "%" in s else s for s in self.path.split("/") if s]
