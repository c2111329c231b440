"""URL decomposition for the URL-mode checks (EG3xx).

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

Host tests live in :mod:`elicitguard.checks.url_hosts` and URLs in text (EG202) in
:mod:`elicitguard.checks.url_text`; this module re-exports their public names.
"""

from __future__ import annotations

import binascii
import functools
import ipaddress
import re
from collections.abc import Iterator
from typing import Any, Final
from urllib.parse import unquote

import idna
import orjson
from rfc3986 import misc as _rfc3986

from elicitguard.checks.domains._psl import is_known_tld
from elicitguard.checks.ip_literals import ends_in_number, parse_ip
from elicitguard.checks.schemes import AUTHORITY_SCHEMES, WEB_SCHEMES
from elicitguard.checks.url_hosts import host_in, is_loopback_host, strip_host
from elicitguard.checks.url_layers import (
    B64_TEXT_RE,
    could_unwrap,
    decode_b64,
    decoded_layers,
    is_pairs,
)
from elicitguard.checks.url_parts import SCHEME_IN_VALUE_RE, ParsedUrl, UrlComponent
from elicitguard.checks.url_text import find_urls_in_text

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


# --------------------------------------------------------------------------- parsing

_CONTROL_OR_SPACE_RE: Final = re.compile(r"[\x00-\x20\x7f-\x9f\s\u2028\u2029\ufeff]")
_BAD_PERCENT_RE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_HOST_CHARS_RE: Final = re.compile(r"^[^\x00-\x20#%/:<>?@\[\\\]^|*\"'`{}]+$")
_PORT_RE: Final = re.compile(r"^[0-9]{1,5}$")
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
    try:
        raw = decode_b64(value)
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
    if "://" in text and SCHEME_IN_VALUE_RE.match(text):
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
    if is_pairs(last):
        for inner_key, _, inner_value in (p.partition("=") for p in last.split("&")):
            inner = f"{where}:{inner_key}"
            out.append(UrlComponent(inner, inner_key, inner_value))
            if depth < 1 and inner_value and could_unwrap(inner_value):
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
        if could_unwrap(value):
            value = _add_layers(out, location, key, value)
        if _could_nest(value):
            out.extend(_nested(location, value))


def _add_text(out: list[UrlComponent], location: str, text: str, nested: bool) -> None:
    """A fragment or path segment without pairs, with its decoded layers when not nested."""
    out.append(tuple.__new__(UrlComponent, (location, None, text)))
    if not nested and text and could_unwrap(text):
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
            if not nested and len(segment) >= 12 and B64_TEXT_RE.match(segment):
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
    host = strip_host(host_decoded) if not host_decoded.startswith("[") else host_decoded.lower()
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
