"""The scanner: catalogue formats found in text and values, judged and deduplicated.

Why: one place decides, cheapest first, whether a string holds a credential: the keyword
pass, the candidate formats' regexes, structure and checksum validators, an entropy floor
and the placeholder allowlist; then key-name support for context-only secrets.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any, Final

from elicitguard.checks.secrets._catalogue import MAX_SCAN_CHARS as _MAX_SCAN_CHARS
from elicitguard.checks.secrets._catalogue import _Compiled, _compiled
from elicitguard.checks.secrets._keynames import (
    _identifier_like,
    _keyed_confidence,
    _password_like,
    is_secret_key_name,
    labelled_confidence,
    normalize_key_name,
)
from elicitguard.checks.secrets._placeholders import (
    PUBLISHABLE_PREFIXES,
    _is_repetitive,
    _is_sequential,
    has_filler_run,
    is_placeholder,
    is_wordlike_token,
    shown_as_fake,
)
from elicitguard.checks.secrets._types import CatalogueEntry, SecretMatch
from elicitguard.checks.secrets._validators import _CHECKSUMS, _STRUCTURES, shannon_entropy
from elicitguard.checks.visible import visible_form


def _span(match: Any, regex: Any) -> tuple[int, int]:
    """The secret's span: group ``s``, else ``t`` (a second alternative), else the match."""
    for name in ("s", "t"):
        group = regex.groupindex.get(name)
        if group is not None and match.start(group) != -1:
            return int(match.start(group)), int(match.end(group))
    group = regex.groupindex["m"]
    return int(match.start(group)), int(match.end(group))


def _judge(entry: CatalogueEntry, match: Any, regex: Any, secret: str) -> str | None:
    """Return the confidence for one raw regex match, or None to drop it."""
    if entry.structure == "keyed-assignment":
        key = match.group(regex.groupindex["k"])
        return _keyed_confidence(secret, key) if is_secret_key_name(key) else None
    if entry.structure == "labelled-token":
        return labelled_confidence(match.group(regex.groupindex["k"]), secret)
    if entry.structure and not _STRUCTURES[entry.structure](secret):
        if entry.structure not in _SOFT_STRUCTURES:
            return None
        return "medium"  # the shape is unmistakable even when its inner structure is not
    if entry.entropy and shannon_entropy(secret) < entry.entropy:
        return None
    if entry.structure != "url-password" and (
        is_placeholder(secret) or _filler_tail(secret) or is_wordlike_token(secret)
    ):
        return None
    if entry.check and not _CHECKSUMS[entry.check](secret):
        return "medium"
    return entry.confidence


# Structures whose failure lowers the confidence instead of dropping the find: a Discord
# token's three dotted segments are distinctive whatever its first segment decodes to.
_SOFT_STRUCTURES: Final = frozenset({"discord-token"})
_TAIL_SPLIT_RE: Final = re.compile(r"[_.-]")


def _filler_tail(secret: str) -> bool:
    """``ghp_xxxx…`` or ``sk_live_abcdef…``: a real prefix in front of filler."""
    parts = _TAIL_SPLIT_RE.split(secret)
    tail = parts[-1]
    if len(tail) >= 8 and (_is_repetitive(tail) or _is_sequential(tail)):
        return True
    if any(parts.count(p) >= 3 for p in parts if len(p) >= 3):
        return True  # ``xoxp-1234-1234-1234-…``: a segment repeated as filler
    return has_filler_run(secret) or _identifier_like(secret)


# ``{key: "9df2…", value: "Americas"}``, ``{"Key": "Name", "Value": "web"}``: an entry of a
# list of pairs (AWS tags, settings tables), where ``key`` is the entry's name, not a key.
_PAIR_KEY_NAMES: Final = frozenset({"key", "name", "k"})
_PAIR_VALUE_RE: Final = re.compile(
    r"""^[\s"',]{0,8}(?:value|val|v)["']?\s{0,3}[:=]""", re.IGNORECASE
)


def _names_pair_entry(entry: CatalogueEntry, match: Any, regex: Any, text: str, end: int) -> bool:
    """Whether a keyed find is the name half of a key/value pair entry."""
    if entry.structure not in ("keyed-assignment", "labelled-token") or "k" not in regex.groupindex:
        return False
    key = match.group(regex.groupindex["k"]) or ""
    if normalize_key_name(key) not in _PAIR_KEY_NAMES:
        return False
    closing = text[end : end + 1]
    after = end + 1 if closing in ("'", '"') else end
    return _PAIR_VALUE_RE.match(text[after : after + 40]) is not None


def _run(entry: CatalogueEntry, regex: Any, text: str) -> Iterable[SecretMatch]:
    for match in regex.finditer(text):
        start, end = _span(match, regex)
        secret = text[start:end]
        if _names_pair_entry(entry, match, regex, text, end):
            continue
        confidence = _judge(entry, match, regex, secret)
        if confidence is not None and (
            entry.structure in _SHOWN_EXEMPT or not shown_as_fake(text, start, end)
        ):
            yield SecretMatch(entry.id, start, end, secret, confidence)


# Values that stand for themselves: a key's value or a URL's password is judged as it is.
_SHOWN_EXEMPT: Final = frozenset({"keyed-assignment", "labelled-token", "url-password"})


_RANK: Final = {"high": 0, "medium": 1, "low": 2}
_GENERIC: Final = frozenset(
    {
        "generic-secret-assignment",
        "url-basic-auth",
        "bearer-token",
        "authorization-header",
    }
)


def _tier(kind: str) -> int:
    """Specific formats first, then generic ones, then a bare label and value."""
    if kind == "labelled-token":
        return 2
    return 1 if kind in _GENERIC else 0


def _dedupe(matches: list[SecretMatch]) -> list[SecretMatch]:
    """Keep one match per overlapping span: specific formats over generic ones."""
    ordered = sorted(
        matches,
        key=lambda m: (_tier(m.type), _RANK.get(m.confidence, 3), m.start - m.end),
    )
    kept: list[SecretMatch] = []
    for match in ordered:
        if all(match.end <= k.start or match.start >= k.end for k in kept):
            kept.append(match)
    return sorted(kept, key=lambda m: m.start)


def _scan(text: str, only: frozenset[int] | None) -> list[SecretMatch]:
    if len(text) < 8:
        return []
    compiled = _compiled()
    text = text[:_MAX_SCAN_CHARS]
    return _run_candidates(compiled, compiled.candidates(text.lower()), text, only)


def _run_candidates(
    compiled: _Compiled, candidates: Iterable[int], text: str, only: frozenset[int] | None
) -> list[SecretMatch]:
    found: list[SecretMatch] = []
    for index in candidates:
        if (only is None or index in only) and compiled.viable(index, text):
            found.extend(_run(compiled.entries[index], compiled.regexes[index], text))
    return _dedupe(found) if len(found) > 1 else found


def scan_glued(text: str) -> list[SecretMatch]:
    """Catalogue formats with distinctive prefixes found even when glued to other text.

    ``"mytokenghp_…"`` or ``"AKIA…thanks"`` defeat the word boundaries :func:`scan_text`
    needs; the same formats without boundaries find them (validators and entropy still
    judge each find). Only for answers and defaults: URLs keep :func:`scan_value`.
    """
    if len(text) < 8:
        return []
    compiled = _compiled()
    text = text[:_MAX_SCAN_CHARS]
    found: list[SecretMatch] = []
    for index in compiled.candidates(text.lower()):
        regex = compiled.glued.get(index)
        if regex is not None and compiled.viable(index, text):
            found.extend(m for m in _run(compiled.entries[index], regex, text) if _glue_ok(text, m))
    return _dedupe(found) if len(found) > 1 else found


def _glue_ok(text: str, match: SecretMatch) -> bool:
    """A glued find, unless it sits inside a base64 blob or a URL (their own business)."""
    start = text.rfind(" ", 0, match.start) + 1
    end = text.find(" ", match.end)
    chunk = text[start : end if end != -1 else len(text)]
    if "://" in chunk or chunk.startswith("www."):
        return False
    if is_wordlike_token(chunk) or chunk.lstrip("\"'(").startswith(PUBLISHABLE_PREFIXES):
        return False  # ``TODAYINASIAASACKOFRICEFELLOVER``: a word in capitals, not ``ASIA…``
    inside = chunk.replace(match.value, "", 1)
    return not ("+" in inside and "/" in inside) and len(inside) <= 48


def scan_text(text: str) -> list[SecretMatch]:
    """Every catalogue credential in free text (form answers, messages, defaults)."""
    return _scan(text, None)


def scan_whole_urls(text: str) -> list[SecretMatch]:
    """Only the formats that span a whole URL (chat and automation webhooks)."""
    if len(text) < 8:
        return []
    compiled = _compiled()
    text = text[:_MAX_SCAN_CHARS]
    lowered = text.lower()
    found = {index for keyword, index in compiled.whole_url_keywords if keyword in lowered}
    if not found:
        return []
    return _run_candidates(compiled, sorted(found), text, compiled.whole_url)


_JWT_BENIGN_KEYS: Final = frozenset({"state", "nonce", "request", "relay_state", "id_token_hint"})


def _scan_among(text: str, keywords: tuple[str, ...]) -> list[SecretMatch]:
    """:func:`_scan` with the keyword pass already done over a text containing ``text``."""
    if len(text) < 8:
        return []
    compiled = _compiled()
    text = text[:_MAX_SCAN_CHARS]
    return _run_candidates(compiled, compiled.candidates_among(text.lower(), keywords), text, None)


def _scan_value_impl(
    value: str, key_name: str | None, keywords: tuple[str, ...] | None
) -> tuple[SecretMatch, ...]:
    normal = normalize_key_name(key_name) if key_name else ""
    scanned = _scan(value, None) if keywords is None else _scan_among(value, keywords)
    found = [m for m in scanned if not (m.type == "jwt" and normal in _JWT_BENIGN_KEYS)]
    if found or not key_name or not is_secret_key_name(key_name):
        return tuple(found)
    confidence = _keyed_confidence(value, key_name)
    if confidence is None:
        return ()
    kind = "password-under-key" if _password_like(normal) else "secret-under-key"
    return (SecretMatch(kind, 0, len(value), value, confidence),)


@functools.lru_cache(maxsize=16384)
def _scan_value_cached(value: str, key_name: str | None) -> tuple[SecretMatch, ...]:
    return _scan_value_impl(value, key_name, None)


def could_match(value: str, keywords: tuple[str, ...]) -> bool:
    """False only when no catalogue format can match ``value`` (cheap and exact).

    ``keywords`` is :func:`keyword_prefilter` over values that include this one. A format
    can match only if its keyword occurs (or it needs none), ``value`` is at least as long
    as its shortest match, and ``value`` holds the literals the format requires.
    """
    if len(value) < 8:
        return False
    known = _COULD_MATCH.get(value)
    if known is not None:
        return known
    compiled = _compiled()
    text = value[:_MAX_SCAN_CHARS]
    candidates = compiled.candidates_among(text.lower(), keywords)
    result = any(compiled.viable(index, text) for index in candidates)
    if len(_COULD_MATCH) >= _COULD_MATCH_SIZE:
        _COULD_MATCH.clear()
    _COULD_MATCH[value] = result
    return result


# The answer depends on ``value`` alone (``keywords`` holds every keyword of ``value``), so
# it is kept per value: hosts and path words recur across URLs. Cleared when full.
_COULD_MATCH: dict[str, bool] = {}
_COULD_MATCH_SIZE: Final = 16384


def keyword_prefilter(values: Iterable[str]) -> tuple[str, ...]:
    """The catalogue keywords that occur in any of ``values``, in one linear pass.

    Pass the result to :func:`scan_value` as ``keywords=`` for each of those values: the
    per-value keyword pass then becomes a few substring tests (most URLs hold no keyword
    at all, and then no value runs a format regex beyond the keyword-less ones).
    """
    return _compiled().keywords_in("\x00".join(values).lower())


def scan_value(
    value: str, key_name: str | None = None, *, keywords: tuple[str, ...] | None = None
) -> list[SecretMatch]:
    """Credentials in one value (a form answer, a URL component), using its key name.

    Catalogue formats are found whatever the key. When none is found and ``key_name`` is
    secret-bearing (``token``, ``api_key``, ``password``, ``session`` …), a non-placeholder
    value of plausible shape is reported as ``secret-under-key`` or ``password-under-key``.
    JWTs under ``state``/``nonce``/``request`` are signed OAuth state, not credentials.
    ``keywords`` is :func:`keyword_prefilter` over a set of values that includes this one;
    the result is the same, only faster (and not cached: such values are rarely seen twice).
    """
    if not value.isascii():
        # Full-width letters and invisible characters must not hide a token from the
        # catalogue: scan the visible NFKC form (callers use matches for type and
        # fingerprint, never for offsets into the original).
        visible = visible_form(value)
        if visible != value:
            value = visible
            keywords = None
    if keywords is not None:
        return list(_scan_value_impl(value, key_name, keywords))
    if len(value) > _MAX_SCAN_CHARS:
        return list(_scan_value_cached.__wrapped__(value, key_name))
    return list(_scan_value_cached(value, key_name))
