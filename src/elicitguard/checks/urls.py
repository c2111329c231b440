"""URL decomposition for the URL-mode checks (EG3xx) and URL-in-text detection (EG202).

Why: detectors that scan a raw URL miss secrets followed by ``@``, ``/``, ``&`` or ``#``
and are fooled by percent-encoding, so every URL check runs per component instead. This
module splits a URL once (RFC 3986 Appendix B via ``rfc3986``), adds explicit checks where
parsers disagree (backslashes, several ``@``, control characters, odd IP spellings such
as ``http://2130706433/`` and ``http://[::ffff:7f00:1]/``), lower-cases scheme and host, percent-decodes each component and
decodes nested encodings one level (a URL inside a query value, base64url JSON in a value).

Decisions:

* IP literals are read by :mod:`elicitguard.checks.ip_literals` (the WHATWG rules), so every
  IPv4 spelling a browser accepts is one host: ``2130706433``, ``0x7f.1``, ``127.1`` and
  ``[::ffff:127.0.0.1]`` are all 127.0.0.1 for loopback and host-list tests, and
  :func:`ParsedUrl.problems` reports each non-canonical spelling as ``ambiguous-ip`` (a
  host that ends in a number but is no IPv4 address as ``bad-ipv4``).
* loopback means ``localhost`` and ``*.localhost`` (RFC 6761 and W3C Secure Contexts treat
  both as loopback), ``127.0.0.0/8`` and ``::1``. Not loopback: ``localhost.example.com``,
  ``127.0.0.1.nip.io``, ``0.0.0.0`` and private ranges.
* ``+`` in a query is kept as ``+`` (not a space): tokens and phone numbers use it far more
  often than form-encoded text does in a URL-mode target.
* :func:`find_urls_in_text` finds scheme URLs, ``www.`` links and bare domains whose last
  label is a real top-level domain and not a common file extension (``main.py``,
  ``README.md``, ``report.zip``); e-mail addresses are not URLs.
"""

from __future__ import annotations

import base64
import binascii
import functools
import ipaddress
import re
from collections.abc import Iterator, Sequence
from typing import Any, Final, NamedTuple
from urllib.parse import unquote

import idna
import orjson
from rfc3986 import misc as _rfc3986

from elicitguard.checks.domains._psl import is_known_tld
from elicitguard.checks.ip_literals import effective_address, ends_in_number, parse_ip
from elicitguard.checks.schemes import AUTHORITY_SCHEMES, WEB_SCHEMES

__all__ = [
    "ParsedUrl",
    "UrlComponent",
    "decoded_layers",
    "find_urls_in_text",
    "host_in",
    "is_known_tld",
    "is_loopback_host",
    "parse_url",
]

_MAX_CACHED_URL: Final = 8192
#: Past this many characters only the head of a URL is parsed (time stays bounded).
_MAX_PARSED_URL: Final = 65536
_MAX_COMPONENTS: Final = 512
_NESTED_JSON_DEPTH: Final = 3


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
            if _SCHEME_IN_VALUE_RE.match(text) and all(text != url for _, url in found):
                found.append((top, text))
        return found

    def path_segments(self) -> list[str]:
        """Decoded path segments in order (empty ones dropped)."""
        return [unquote(s) if "%" in s else s for s in self.path.split("/") if s]


# --------------------------------------------------------------------------- hosts


def _strip_host(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host[:-1] if host.endswith(".") and not host.endswith("..") else host


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``host`` reaches in any WHATWG spelling (embedded IPv4 taken out)."""
    if ":" not in host and not ends_in_number(host):
        return None
    return effective_address(host)


@functools.lru_cache(maxsize=4096)
def is_loopback_host(host: str) -> bool:
    """True for ``localhost``, ``*.localhost``, ``127.0.0.0/8`` and ``::1``.

    An IPv4 address is loopback in every spelling a browser reads as one (``127.1``,
    ``0x7f.0.0.1``, ``[::ffff:127.0.0.1]``): the check is about where the URL goes; EG302
    refuses the odd spellings themselves.
    """
    name = _strip_host(host)
    if name == "localhost" or name.endswith(".localhost"):
        return all(name.split("."))
    address = _ip(name)
    if address is None:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        return address == ipaddress.IPv6Address("::1")
    return address.is_loopback


@functools.lru_cache(maxsize=256)
def _compile_entries(
    entries: tuple[str, ...],
) -> tuple[
    frozenset[str], tuple[str, ...], tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
]:
    names: set[str] = set()
    suffixes: list[str] = []
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for entry in entries:
        text = _strip_host(entry)
        if text.startswith("*."):
            suffixes.append(text[1:])
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            names.add(text)
    return frozenset(names), tuple(suffixes), tuple(networks)


def host_in(host: str, entries: Sequence[str]) -> bool:
    """True when ``host`` equals a listed name, is under a ``*.suffix``, or is in a CIDR.

    Names compare case-insensitively without a trailing dot; an IP literal matches a
    network entry (``127.0.0.0/8``, ``::1``) in every spelling, an IPv6 literal that embeds
    an IPv4 address (``[::ffff:10.0.0.1]``) as that IPv4 address.
    """
    names, suffixes, networks = _compile_entries(tuple(entries))
    name = _strip_host(host)
    if name in names or any(name.endswith(s) and len(name) > len(s) for s in suffixes):
        return True
    if not networks:
        return False
    address = _ip(name)
    return address is not None and any(
        address.version == net.version and address in net for net in networks
    )


# --------------------------------------------------------------------------- parsing

_CONTROL_OR_SPACE_RE: Final = re.compile(r"[\x00-\x20\x7f-\x9f\s\u2028\u2029\ufeff]")
_BAD_PERCENT_RE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_HOST_CHARS_RE: Final = re.compile(r"^[^\x00-\x20#%/:<>?@\[\\\]^|*\"'`{}]+$")
_PORT_RE: Final = re.compile(r"^[0-9]{1,5}$")
_SCHEME_IN_VALUE_RE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]{1,20}://")
_DOUBLE_ENCODED_URL_RE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]{1,20}%3[Aa]%2[Ff]%2[Ff]")
_B64_RE: Final = re.compile(r"^[A-Za-z0-9_\-+/]{12,}={0,2}$")
# The first base64 character fixes the top six bits of the first byte: ``{`` gives ``e``,
# ``[`` gives ``W``, and the ASCII whitespace ``bytes.strip`` removes gives ``I``, ``C`` or
# ``D``. Any other first character cannot decode to JSON, so nothing is decoded.
_B64_JSON_FIRST: Final = frozenset("eWICD")


def _decode(text: str) -> str:
    return unquote(text, errors="replace") if "%" in text else text


_PAIR_SEP_RE: Final = re.compile(r"[&;]")


def _pair_parts(text: str) -> list[str]:
    return _PAIR_SEP_RE.split(text) if ";" in text and "&" not in text else text.split("&")


def _split_pairs(text: str) -> Iterator[tuple[str, str]]:
    for part in _pair_parts(text):
        if not part:
            continue
        key, _, value = part.partition("=")
        yield _decode(key), _decode(value)


def _b64_json(value: str) -> Any:
    if len(value) < 12 or value[0] not in _B64_JSON_FIRST or not _B64_RE.match(value):
        return None
    padded = value + "=" * (-len(value) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError):
        return None
    raw = raw.strip()
    if raw[:1] not in (b"{", b"["):
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def _json_components(data: Any, prefix: str, path: str, depth: int) -> Iterator[UrlComponent]:
    if depth > _NESTED_JSON_DEPTH:
        return
    items: list[tuple[str, Any]]
    if isinstance(data, dict):
        items = [(str(k), v) for k, v in data.items()]
    elif isinstance(data, list):
        items = [(str(i), v) for i, v in enumerate(data)]
    else:
        return
    for key, item in items:
        dotted = f"{path}.{key}" if path else key
        if isinstance(item, dict | list):
            yield from _json_components(item, prefix, dotted, depth + 1)
        elif item is not None and not isinstance(item, bool):
            yield UrlComponent(f"{prefix}>json:{dotted}", key, str(item))


def _nested(location: str, value: str) -> Iterator[UrlComponent]:
    """Decode one level: a URL in a value, or base64url JSON in a value."""
    text = value.strip()
    if "%3" in text and _DOUBLE_ENCODED_URL_RE.match(text):
        text = _decode(text)
    if "://" in text and _SCHEME_IN_VALUE_RE.match(text):
        inner = _parse(text, nested=True)
        for comp in inner.parts:
            yield UrlComponent(f"{location}>{comp.location}", comp.key, comp.value)
        return
    data = _b64_json(text) if text[:1] not in ("{", "[") else _json_text(text)
    if data is not None:
        yield from _json_components(data, location, "", 1)


def _json_text(text: str) -> Any:
    """JSON written as text (what a base64 or percent-encoded layer decoded to)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _could_nest(value: str) -> bool:
    """Cheap test that :func:`_nested` might decode something (most values are plain)."""
    if "://" in value or "%3" in value:
        return True
    if len(value) < 12:
        return False
    head = value.lstrip()
    return bool(head) and (head[0] in _B64_JSON_FIRST or head[0] in "{[")


_MAX_LAYERS: Final = 4
_PCT_RE: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_B64_TEXT_RE: Final = re.compile(r"^[A-Za-z0-9_\-+/]{12,}={0,2}$")
_PRINTABLE_RE: Final = re.compile(r"^[\x20-\x7e]+$")


def _b64_text(value: str) -> str | None:
    """Printable ASCII text that ``value`` is the base64 (or base64url) encoding of."""
    if len(value) < 12 or len(value) % 4 == 1 or not _B64_TEXT_RE.match(value):
        return None
    if value.isdigit() or _HEXISH_RE.match(value):
        return None  # numbers and hex digests are not base64 text
    padded = value + "=" * (-len(value) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
        text = raw.decode("ascii")
    except (binascii.Error, ValueError):
        return None
    return text if len(text) >= 8 and _PRINTABLE_RE.match(text) else None


_HEXISH_RE: Final = re.compile(r"^[0-9a-fA-F]+$")


_INNER_PAIRS_RE: Final = re.compile(
    r"^[A-Za-z0-9_.\-\[\]]{1,64}=[^&\s]*(?:&[A-Za-z0-9_.\-\[\]]{1,64}=[^&\s]*)*$"
)


def _is_pairs(text: str) -> bool:
    """A decoded ``key=value&...`` query (base64 text with ``=`` padding is not one)."""
    return "=" in text and _INNER_PAIRS_RE.match(text) is not None and not _B64_TEXT_RE.match(text)


def decoded_layers(value: str) -> list[str]:
    """Each further decoding of ``value`` until it is stable: percent-decoding (a value
    encoded twice or thrice) and base64 text, at most four layers (bounded work)."""
    out: list[str] = []
    text = value
    for _ in range(_MAX_LAYERS):
        if out and _is_pairs(text):
            break  # a decoded query: its values are decoded one by one, not as one text
        if "%" in text and _PCT_RE.search(text):
            decoded = unquote(text, errors="replace")
        else:
            decoded = _b64_text(text.strip()) or text
        if decoded == text:
            break
        out.append(decoded)
        text = decoded
    return out


def _could_unwrap(value: str) -> bool:
    """Cheap test that :func:`decoded_layers` might decode something."""
    return ("%" in value and _PCT_RE.search(value) is not None) or (
        len(value) >= 12 and _B64_TEXT_RE.match(value) is not None
    )


def _add_layers(
    out: list[UrlComponent], location: str, key: str | None, value: str, depth: int = 0
) -> str:
    """Add what ``value`` finally decodes to as ``<location>>decoded`` (or, when that is a
    run of ``key=value`` pairs, each pair as ``<location>>decoded:<key>``, their values decoded
    in turn); return the final reading (``value`` when nothing decoded)."""
    layers = decoded_layers(value)
    if not layers:
        return value
    where = location + ">decoded"
    last = layers[-1]
    if _is_pairs(last):
        for inner_key, _, inner_value in (p.partition("=") for p in last.split("&")):
            inner = f"{where}:{inner_key}"
            out.append(UrlComponent(inner, inner_key, inner_value))
            if depth < 1 and inner_value and _could_unwrap(inner_value):
                inner_value = _add_layers(out, inner, inner_key, inner_value, depth + 1)
            if depth < 1 and inner_value and _could_nest(inner_value):
                out.extend(_nested(inner, inner_value))
        return last
    out.append(UrlComponent(where, key, last))
    return last


# The component builders append to one list (no generators): a URL yields a dozen
# components and this runs on every URL-mode request.


def _add_pairs(out: list[UrlComponent], prefix: str, text: str, nested: bool) -> None:
    """``key=value`` pairs of a query or fragment; ``prefix`` is ``"query:"`` or ``"fragment:"``."""
    for part in _pair_parts(text):
        if not part:
            continue
        key, _, value = part.partition("=")
        if "%" in key:
            key = unquote(key, errors="replace")
        if "%" in value:
            value = unquote(value, errors="replace")
        location = prefix + key
        out.append(tuple.__new__(UrlComponent, (location, key, value)))
        if nested or not value:
            continue
        if _could_unwrap(value):
            value = _add_layers(out, location, key, value)
        if _could_nest(value):
            out.extend(_nested(location, value))


def _add_text(out: list[UrlComponent], location: str, text: str, nested: bool) -> None:
    """A fragment or path segment without pairs, with its decoded layers when not nested."""
    out.append(tuple.__new__(UrlComponent, (location, None, text)))
    if not nested and text and _could_unwrap(text):
        _add_layers(out, location, None, text)


def _add_fragment(out: list[UrlComponent], fragment: str, nested: bool) -> None:
    route, mark, rest = fragment.partition("?")
    if mark:
        if route:
            _add_text(out, "fragment", _decode(route), nested)
        _add_pairs(out, "fragment:", rest, nested)
    elif "=" in fragment:
        _add_pairs(out, "fragment:", fragment, nested)
    elif fragment:
        _add_text(out, "fragment", _decode(fragment), nested)


def _add_path(out: list[UrlComponent], path: str, nested: bool = False) -> None:
    segments = path.split("/")
    for index, segment in enumerate(segments[1:] if path.startswith("/") else segments):
        if not segment:
            continue
        if ";" not in segment:
            if "%" in segment:
                segment = unquote(segment, errors="replace")
                _add_text(out, f"path[{index}]", segment, nested)
                continue
            out.append(tuple.__new__(UrlComponent, (f"path[{index}]", None, segment)))
            if not nested and len(segment) >= 12 and _B64_TEXT_RE.match(segment):
                _add_layers(out, f"path[{index}]", None, segment)
            continue
        base, _, params = segment.partition(";")
        label = f"path[{index}]"
        if base:
            out.append(UrlComponent(label, None, _decode(base)))
        for key, value in _split_pairs(params.replace(";", "&")):
            out.append(UrlComponent(f"{label};{key}", key, value))


def _host_problems(host: str, port_text: str | None) -> list[str]:
    problems: list[str] = []
    if not host:
        return ["no-host"]
    if port_text and (not _PORT_RE.match(port_text) or int(port_text) > 65535):
        problems.append("bad-port")
    if host.startswith("["):
        literal = parse_ip(host)
        if literal is None or not literal.is_ipv6:
            problems.append("bad-ip-literal")
        elif not literal.canonical:
            problems.append("ambiguous-ip")
        elif literal.address == "::":
            problems.append("unspecified-address")
        return problems
    if not _HOST_CHARS_RE.match(host) or ".." in host or host.startswith((".", "-")):
        problems.append("bad-host")
        return problems
    name = host.lower()
    if not name.isascii():
        try:
            name = idna.uts46_remap(name, std3_rules=False, transitional=False)
        except (idna.IDNAError, UnicodeError):
            return [*problems, "bad-idn"]
    if name and ends_in_number(name):
        literal = parse_ip(name)
        if literal is None:
            problems.append("bad-ipv4")
        elif not literal.canonical or name != host:
            problems.append("ambiguous-ip")
        elif ipaddress.IPv4Address(literal.address).is_unspecified:
            problems.append("unspecified-address")
    elif not host.isascii() and name.isascii():
        # Full-width, enclosed or mathematical letters that UTS 46 folds to an ASCII name
        # (``ⓔⓧⓐⓜⓟⓛⓔ.ⓒⓞⓜ`` is example.com): the browser goes to a host no list spells so.
        problems.append("compat-host")
    elif not host.isascii():
        try:
            host.encode("idna")
        except UnicodeError:
            problems.append("bad-idn")
    return problems


def _split_authority(authority: str) -> tuple[str | None, str, str | None]:
    userinfo, at, hostport = authority.rpartition("@")
    if hostport.startswith("["):
        close = hostport.find("]")
        host, rest = hostport[: close + 1], hostport[close + 1 :]
        port = rest[1:] if rest.startswith(":") else (rest or None)
    else:
        host, colon, port_text = hostport.partition(":")
        port = port_text if colon else None
    return (userinfo if at else None), host, port


@functools.lru_cache(maxsize=4096)
def _host_info(host_decoded: str, port_text: str | None) -> tuple[str, int | None, tuple[str, ...]]:
    """Normalised host, port and their problems; cached because hosts repeat across URLs."""
    problems = tuple(_host_problems(host_decoded, port_text or None))
    host = _strip_host(host_decoded) if not host_decoded.startswith("[") else host_decoded.lower()
    port = None
    if port_text and _PORT_RE.match(port_text) and int(port_text) <= 65535:
        port = int(port_text)
    return host, port, problems


def _parse(url: str, *, nested: bool = False) -> ParsedUrl:
    problems: list[str] = []
    if _CONTROL_OR_SPACE_RE.search(url):
        problems.append("control-or-space")
    if "%" in url and _BAD_PERCENT_RE.search(url):
        problems.append("bad-percent-encoding")
    match = _rfc3986.IRI_MATCHER.match(url.strip())
    assert match is not None  # the RFC 3986 Appendix B expression matches every string
    scheme_raw, authority, path, query, fragment = match.group(
        "scheme", "authority", "path", "query", "fragment"
    )
    scheme = scheme_raw.lower() if scheme_raw else ""
    if not scheme:
        problems.append("not-absolute")
    elif scheme not in WEB_SCHEMES and not _rfc3986.SCHEME_MATCHER.match(scheme):
        problems.append("bad-scheme")
    user = password = None
    host = ""
    port: int | None = None
    new = tuple.__new__
    components: list[UrlComponent] = []
    if authority is not None:
        if "\\" in authority:
            problems.append("backslash-in-authority")
        if "@" in authority:
            if authority.count("@") > 1:
                problems.append("ambiguous-userinfo")
            userinfo, host_raw, port_text = _split_authority(authority)
            if userinfo is not None:
                user_raw, colon, pass_raw = userinfo.partition(":")
                user, password = _decode(user_raw), (_decode(pass_raw) if colon else None)
                if user:
                    components.append(new(UrlComponent, ("userinfo", "user", user)))
                if password is not None:
                    components.append(new(UrlComponent, ("userinfo", "password", password)))
        else:
            _, host_raw, port_text = _split_authority(authority)
        host, port, host_problems = _host_info(
            unquote(host_raw, errors="replace") if "%" in host_raw else host_raw, port_text
        )
        problems.extend(host_problems)
        if host:
            components.append(new(UrlComponent, ("host", None, host)))
        if port is not None:
            components.append(new(UrlComponent, ("port", None, str(port))))
    elif scheme in AUTHORITY_SCHEMES:
        problems.append("no-host")
    if path:
        if "\\" in path and scheme in AUTHORITY_SCHEMES:
            problems.append(
                "backslash-in-authority" if path.startswith("\\") else "backslash-in-path"
            )
        _add_path(components, path, nested)
    if "\\" in (query or "") or "\\" in (fragment or ""):
        problems.append("backslash-in-query-or-fragment")
    if query:
        _add_pairs(components, "query:", query, nested)
    if fragment:
        _add_fragment(components, fragment, nested)
    return new(
        ParsedUrl,
        (
            url,
            scheme,
            host,
            port,
            user,
            password,
            path or "",
            query,
            fragment,
            tuple(dict.fromkeys(problems)) if problems else (),
            authority is not None,
            tuple(components)
            if len(components) <= _MAX_COMPONENTS
            else tuple(components[:_MAX_COMPONENTS]),
        ),
    )


@functools.lru_cache(maxsize=8192)
def _parse_cached(url: str) -> ParsedUrl:
    return _parse(url)


def _without_surrogates(url: str) -> str | None:
    """``url`` with each lone surrogate read as U+FFFD, or ``None`` when it has none."""
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        return url.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return None


def parse_url(url: str) -> ParsedUrl:
    """Split ``url`` into decoded components; never raises, records ``problems`` instead.

    Results for URLs up to 8 KiB are cached (URL analysis is on the hot path). A lone
    surrogate (JSON can carry one, no URL can) is read as U+FFFD, so that no check downstream
    meets text it cannot encode, and reported as ``lone-surrogate``.
    """
    cleaned = None if url.isascii() else _without_surrogates(url)
    if cleaned is not None:
        clean = parse_url(cleaned)
        return clean._replace(problems=(*clean.problems, "lone-surrogate"))
    if len(url) > _MAX_PARSED_URL:
        # Bounded work for hostile input: parse the first part only and say so. Such a URL
        # is far over EG302's length limit, which blocks it by default.
        head = _parse(url[:_MAX_PARSED_URL])
        return head._replace(raw=url, problems=(*head.problems, "too-long-to-parse"))
    if len(url) > _MAX_CACHED_URL:
        return _parse(url)
    return _parse_cached(url)


# --------------------------------------------------------------------------- URLs in text

_TRAILING: Final = ".,;:!?'\"*_~>"
_SCHEME_URL_RE: Final = re.compile(
    r"(?i)(?<![A-Za-z0-9+.-])(?:[a-z][a-z0-9+.-]{1,30}://|www\.)[^\s<>\"'`\u3000]+"
)
_BARE_SCHEME_RE: Final = re.compile(
    r"(?i)(?<![A-Za-z0-9+.-])(?:javascript|vbscript|data|mailto|tel|sms|file|blob|intent):[^\s<>\"'`]+"
)
_BARE_DOMAIN_RE: Final = re.compile(
    r"(?<![A-Za-z0-9@._/-])((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([a-z]{2,24}))"
    r"(?::[0-9]{1,5})?(?:/[^\s<>\"'`]*)?(?![A-Za-z0-9@_-])"
)
# TLDs that are far more often file extensions or code in prose than links.
_FILE_LIKE_TLDS: Final = frozenset(
    [
        "md",
        "py",
        "sh",
        "rs",
        "pl",
        "zip",
        "mov",
        "so",
        "ps",
        "cc",
        "cs",
        "ai",
        "app",
        "dev",
        "mp",
        "js",
        "ts",
        "go",
        "rb",
        "pm",
        "pdf",
        "doc",
        "txt",
        "csv",
        "json",
        "yml",
        "yaml",
        "toml",
        "ini",
        "cfg",
        "log",
        "bak",
        "tmp",
        "jar",
        "exe",
        "dll",
        "bin",
        "img",
        "iso",
        "gz",
        "tar",
        "tgz",
        "xz",
        "bz2",
        "rar",
        "sql",
        "db",
        "lock",
        "html",
        "htm",
        "css",
        "scss",
        "xml",
        "svg",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "webp",
        "ico",
        "bmp",
        "tif",
        "tiff",
        "wav",
        "mp3",
        "mp4",
        "avi",
        "mkv",
        "swift",
        "kt",
        "java",
        "php",
        "lua",
        "vue",
        "jsx",
        "tsx",
        "ipynb",
        "nix",
        "sys",
        "ax",
        "az",
        "ms",
        "ml",
    ]
)


def _trim(candidate: str) -> str:
    text = candidate.rstrip(_TRAILING)
    for opener, closer in ("()", "[]", "{}"):
        while text.endswith(closer) and text.count(closer) > text.count(opener):
            text = text[:-1].rstrip(_TRAILING)
    return text


def _bare_domains(text: str, taken: list[tuple[int, int]]) -> Iterator[tuple[int, str]]:
    for match in _BARE_DOMAIN_RE.finditer(text):
        start = match.start()
        if any(a <= start < b for a, b in taken):
            continue
        tld = match.group(2)
        if tld in _FILE_LIKE_TLDS or not is_known_tld(tld):
            continue
        if match.group(1).count(".") == 1 and match.group(1)[0].isdigit():
            continue
        yield start, _trim(match.group(0))


def find_urls_in_text(text: str) -> list[str]:
    """URLs a renderer might make clickable in ``text``, in order of appearance.

    Finds ``scheme://`` URLs, ``www.`` links, bare ``javascript:``/``data:``/``mailto:``/
    ``tel:``-style URLs, and bare domains (``evil-login.com/reset``) whose top-level domain
    is real and not a common file extension. E-mail addresses are not reported.
    """
    # Every pattern needs a ``:`` (schemes) or a ``.`` (``www.``, bare domains): most form
    # titles and messages have neither, and skip three regex scans (issue 9, hot path).
    if ":" not in text and "." not in text:
        return []
    if len(text) <= 256:  # servers repeat their texts: titles, messages, descriptions
        return list(_cached_urls(text))
    return _find_urls(text)


@functools.lru_cache(maxsize=4096)
def _cached_urls(text: str) -> tuple[str, ...]:
    return tuple(_find_urls(text))


def _find_urls(text: str) -> list[str]:
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for regex in (_SCHEME_URL_RE, _BARE_SCHEME_RE):
        for match in regex.finditer(text):
            if any(a <= match.start() < b for a, b in taken):
                continue
            url = _trim(match.group(0))
            if len(url) > match.group(0).find(":") + 1:
                found.append((match.start(), url))
                taken.append((match.start(), match.end()))
    found.extend(_bare_domains(text, taken))
    return [url for _, url in sorted(found)]
