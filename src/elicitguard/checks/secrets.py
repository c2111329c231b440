"""Secret detection: one catalogue of credential formats, scanned in linear time.

Why: URL mode exists so that credentials never pass through the MCP client; the URL checks
(EG303), the form-answer checks (EG2xx) and the identity checks all need to recognise a
credential in a string without sending it anywhere. This module is that one detector.

How it decides, in order (cheapest first):

1. one combined linear-time pass: an RE2 set of every format's lower-case keywords finds
   the candidate formats (an Aho-Corasick-style prefilter);
2. only those formats' own RE2 regexes (linear time, no backtracking) run to find
   positions. A combined RE2 set of the full patterns was measured 50-100x slower on
   random-looking input (its DFA explodes on counted repetitions such as ``{36}``), so
   the full patterns are combined only in the test that proves they compile together;
3. each candidate passes
   structural checks (JWT header, PyPI macaroon, Discord id), checksums (GitHub/npm CRC32:
   a failure lowers confidence), an entropy floor, and the placeholder allowlist.

Context-only secrets (a value whose only sign is its key name, e.g. ``password=hunter2``) are
judged by :func:`scan_value` with ``key_name``; entropy is used only where a key name or a
keyword supports it, never on free text alone. The catalogue lives in ``data/secrets.yaml``.
No message produced here ever contains a secret value.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

import orjson
import re2
import yaml

from elicitguard.checks.visible import visible_form

__all__ = [
    "CatalogueEntry",
    "SecretMatch",
    "catalogue",
    "could_match",
    "is_placeholder",
    "is_secret_key_name",
    "keyword_prefilter",
    "keywordless_min_length",
    "normalize_key_name",
    "scan_text",
    "scan_value",
    "shannon_entropy",
]

_BOUNDARY: Final = "[^0-9A-Za-z_-]"
_DEFAULT_ENTROPY: Final = 3.0
_RE2_MAX_MEM: Final = 256 << 20
_MAX_SCAN_CHARS: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """One credential found in a string.

    ``value`` is the secret itself; callers use it only to compute a keyed fingerprint and
    must never log or display it. ``confidence`` is ``high``, ``medium`` or ``low``.
    """

    type: str
    start: int
    end: int
    value: str
    confidence: str

    def __repr__(self) -> str:
        """Keep the secret out of reprs, tracebacks and assertion messages."""
        return (
            f"SecretMatch(type={self.type!r}, start={self.start}, end={self.end}, "
            f"value=<{len(self.value)} chars>, confidence={self.confidence!r})"
        )


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """One credential format of ``data/secrets.yaml``."""

    id: str
    name: str
    keywords: tuple[str, ...]
    regex: str
    wrapped: str
    check: str | None
    structure: str | None
    entropy: float
    confidence: str
    whole_url: bool
    source: str
    min_length: int = 0
    requires: tuple[tuple[str, ...], ...] = ()


# --------------------------------------------------------------------------- catalogue


def _wrap(body: str, boundary: str | None) -> str:
    if boundary == "none":
        return f"(?P<m>{body})"
    return f"(?:^|{_BOUNDARY})(?P<m>{body})(?:{_BOUNDARY}|$)"


# The standard library's regex parser (private, untyped): only its width computation is used.
_sre_parser: Any = importlib.import_module("re._parser")


def _min_width(regex: str) -> int:
    """The fewest characters any match of ``regex`` has (0 when that cannot be worked out).

    Computed with the standard library's regex parser, which reads this RE2 subset; a text
    shorter than this cannot hold a match, so the scanner skips the regex (an exact
    prefilter, and the only one keyword-less formats have).
    """
    try:
        low, _high = _sre_parser.parse(regex).getwidth()
    except Exception:  # any syntax it cannot read means "no prefilter"
        return 0
    return int(low)


def _entry(raw: Mapping[str, Any]) -> CatalogueEntry:
    regex = str(raw["regex"])
    return CatalogueEntry(
        id=str(raw["id"]),
        name=str(raw["name"]),
        keywords=tuple(str(k).lower() for k in raw.get("keywords", ())),
        regex=regex,
        wrapped=_wrap(regex, raw.get("boundary")),
        check=raw.get("check"),
        structure=raw.get("structure"),
        entropy=float(raw.get("entropy", _DEFAULT_ENTROPY)),
        confidence=str(raw.get("confidence", "high")),
        whole_url=bool(raw.get("whole_url", False)),
        source=str(raw.get("source", "")),
        min_length=_min_width(regex),
        requires=tuple(tuple(str(item).split("|")) for item in raw.get("requires", ())),
    )


@functools.cache
def catalogue() -> tuple[CatalogueEntry, ...]:
    """The credential formats, loaded once from the packaged data file."""
    text = resources.files("elicitguard.checks").joinpath("data/secrets.yaml").read_text("utf-8")
    data = yaml.safe_load(text)
    return tuple(_entry(raw) for raw in data["entries"])


def _re2_options() -> Any:
    options = re2.Options()
    options.max_mem = _RE2_MAX_MEM
    return options


class _Compiled:
    """Everything compiled once: the keyword set and one RE2 regex per format."""

    def __init__(self, entries: tuple[CatalogueEntry, ...]) -> None:
        self.entries = entries
        options = _re2_options()
        self.keywords: list[str] = sorted({k for e in entries for k in e.keywords})
        self.keyword_set = re2.Set.SearchSet(options)
        for keyword in self.keywords:
            self.keyword_set.Add(re2.escape(keyword))
        self.keyword_set.Compile()
        self.by_keyword: dict[str, list[int]] = {}
        self.always: list[int] = []
        for index, entry in enumerate(entries):
            if not entry.keywords:
                self.always.append(index)
            for keyword in entry.keywords:
                self.by_keyword.setdefault(keyword, []).append(index)
        self.regexes = [re2.compile(e.wrapped, options) for e in entries]
        self.whole_url = frozenset(i for i, e in enumerate(entries) if e.whole_url)
        # Whole-URL formats are few and their keywords long: plain substring tests on the
        # lower-cased URL decide them faster than a pass of the full keyword set.
        self.whole_url_keywords = tuple(
            (keyword, i) for i in sorted(self.whole_url) for keyword in entries[i].keywords
        )

    def candidates(self, lowered: str) -> list[int]:
        """Formats whose keyword occurs in ``lowered``: one linear pass over the text."""
        hits = self.keyword_set.Match(lowered) or []
        found = {i for k in hits for i in self.by_keyword[self.keywords[k]]}
        found.update(self.always)
        return sorted(found)

    def keywords_in(self, lowered: str) -> tuple[str, ...]:
        """The keywords that occur in ``lowered`` (one linear pass)."""
        hits = self.keyword_set.Match(lowered) or []
        return tuple(self.keywords[k] for k in sorted(hits))

    def candidates_among(self, lowered: str, keywords: tuple[str, ...]) -> list[int]:
        """:meth:`candidates` for a text whose keywords are among ``keywords``.

        ``keywords`` come from :meth:`keywords_in` over a text that contains ``lowered``
        (all components of one URL joined by NUL, which no keyword contains), so plain
        substring tests on that short list give exactly the same candidates.
        """
        if not keywords:
            return self.always
        found = {i for k in keywords if k in lowered for i in self.by_keyword[k]}
        if not found:
            return self.always
        found.update(self.always)
        return sorted(found)

    def viable(self, index: int, text: str) -> bool:
        """False when ``text`` is too short for the format or lacks a required literal."""
        entry = self.entries[index]
        if len(text) < entry.min_length:
            return False
        return all(any(literal in text for literal in group) for group in entry.requires)


@functools.cache
def _compiled() -> _Compiled:
    return _Compiled(catalogue())


# --------------------------------------------------------------------------- small helpers


_XLOGX: Final = tuple([0.0] + [c * math.log2(c) for c in range(1, 4097)])


def shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (0.0 for the empty string)."""
    if not value:
        return 0.0
    size = len(value)
    counts = Counter(value).values()
    if size < len(_XLOGX):
        # H = log2(n) - sum(c * log2(c)) / n, with c * log2(c) looked up (hot path).
        return max(0.0, math.log2(size) - math.fsum(map(_XLOGX.__getitem__, counts)) / size)
    return -sum(c / size * math.log2(c / size) for c in counts)


def _b64decode(text: str) -> bytes | None:
    padded = text + "=" * (-len(text) % 4)
    try:
        return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError):
        return None


_BASE62: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62_crc32(text: str) -> str:
    """The 6-character base62 CRC32 that GitHub and npm tokens end with."""
    number = binascii.crc32(text.encode("ascii"))
    digits = ""
    while number:
        number, rest = divmod(number, 62)
        digits = _BASE62[rest] + digits
    return digits.rjust(6, "0")


# --------------------------------------------------------------------------- placeholders

_TEMPLATE_RE: Final = re.compile(
    r"""^(?:
        \$\{[^}]*\}|\$\([^)]*\)|\{\{.*\}\}|\{%.*%\}|%[A-Za-z_][A-Za-z0-9_]*%|
        \$[A-Za-z_][A-Za-z0-9_]*|<[^<>]+>|\[[^\[\]]+\]|\{[A-Za-z_][A-Za-z0-9_.-]*\}|
        process\.env\.[A-Za-z0-9_]+|os\.environ.*|env\(.*\)
    )$""",
    re.VERBOSE | re.DOTALL,
)
_TEMPLATE_INSIDE_RE: Final = re.compile(r"\$\{[^}]*\}|\{\{[^}]*\}\}|%[A-Z_][A-Z0-9_]*%")
_MASK_RE: Final = re.compile(r"^(?:[*xX•·.#_-]{3,}|[*xX•]{2,}.{0,6}|.{0,6}[*•]{3,}.*)$")
_PLACEHOLDER_SUBSTRINGS: Final = (
    "example",
    "sample",
    "dummy",
    "placeholder",
    "redacted",
    "changeme",
    "change_me",
    "change-me",
    "replace_me",
    "replaceme",
    "insert_",
    "insert-",
    "your_",
    "your-",
    "yourapi",
    "yourtoken",
    "yoursecret",
    "xxxxxx",
    "notarealkey",
    "not_a_real",
    "not-a-real",
    "fake_",
    "fake-",
)
_PLACEHOLDER_WORDS: Final = frozenset(
    [
        "api",
        "key",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "pass",
        "here",
        "your",
        "my",
        "the",
        "a",
        "an",
        "enter",
        "insert",
        "put",
        "replace",
        "value",
        "string",
        "id",
        "client",
        "access",
        "auth",
        "my_token",
        "none",
        "null",
        "nil",
        "undefined",
        "true",
        "false",
        "yes",
        "no",
        "redacted",
        "hidden",
        "masked",
        "removed",
        "omitted",
        "todo",
        "fixme",
        "tbd",
        "xxx",
        "test",
        "testing",
        "foo",
        "bar",
        "baz",
        "qux",
        "demo",
        "example",
        "sample",
        "dummy",
        "fake",
        "placeholder",
        "default",
        "changeme",
        "letmein",
    ]
)
_SEQUENCES: Final = (
    "0123456789012345678901234567890123456789",
    "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
    "zyxwvutsrqponmlkjihgfedcba",
    "9876543210",
    "qwertyuiopasdfghjklzxcvbnm",
)
_SEQUENCE_TEXT: Final = "|".join(_SEQUENCES)


_NOT_ALNUM_LOWER_RE: Final = re.compile(r"[^0-9a-z]")
_WORD_SPLIT_RE: Final = re.compile(r"[^a-z0-9]+")


def _is_sequential(value: str) -> bool:
    core = _NOT_ALNUM_LOWER_RE.sub("", value.lower())
    if len(core) < 6:
        return False
    if core in _SEQUENCE_TEXT:
        return True
    # ``abcdefghijklmnopqrstuvwxyz0123456789``-style fillers: two runs glued together.
    # A prefix that is not in the text has no longer prefix in it either: stop there.
    for cut in range(3, len(core) - 2):
        if core[:cut] not in _SEQUENCE_TEXT:
            return False
        if core[cut:] in _SEQUENCE_TEXT:
            return True
    return False


def _is_repetitive(value: str) -> bool:
    if len(value) < 4:
        return False
    rest = value.replace(value[0], "")
    if not rest or not rest.replace(rest[0], ""):
        return True  # at most two distinct characters
    # ``value`` repeats a unit of ``size`` characters exactly when it has that period,
    # i.e. ``value[size:] == value[:-size]``; a period needs ``value[size] == value[0]``.
    limit = min(8, len(value) // 3)
    size = value.find(value[0], 1, limit + 1)
    while size != -1:
        if value[size:] == value[:-size]:
            return True
        size = value.find(value[0], size + 1, limit + 1)
    return False


@functools.lru_cache(maxsize=8192)
def is_placeholder(value: str) -> bool:
    """True when ``value`` is a template, mask, documented example or filler, not a secret.

    Covers ``${VAR}``, ``{{ var }}``, ``%VAR%``, ``$VAR``, ``<token>``, masks (``****``,
    ``xxxx``), values marked as examples (``AKIAIOSFODNN7EXAMPLE``, ``your_api_key_here``),
    all-same or repeating characters and keyboard or alphabet sequences.
    """
    text = value.strip().strip("'\"`")
    if not text:
        return True
    lowered = text.lower()
    if _TEMPLATE_RE.match(text) or _TEMPLATE_INSIDE_RE.search(text) or _MASK_RE.match(text):
        return True
    if any(map(lowered.__contains__, _PLACEHOLDER_SUBSTRINGS)):
        return True
    words = [w for w in _WORD_SPLIT_RE.split(lowered) if w]
    if words and all(w in _PLACEHOLDER_WORDS for w in words):
        return True
    return _is_repetitive(text) or _is_sequential(text)


# --------------------------------------------------------------------------- key names

_CAMEL_RE: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS_RE: Final = re.compile(r"[^a-z0-9]+")

_SECRET_NAMES: Final = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "pass",
        "passphrase",
        "passcode",
        "secret",
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "auth_token",
        "api_key",
        "apikey",
        "api_token",
        "api_secret",
        "key",
        "secret_key",
        "private_key",
        "client_secret",
        "app_secret",
        "session",
        "session_id",
        "sessionid",
        "session_key",
        "session_token",
        "sid",
        "sessid",
        "jsessionid",
        "phpsessid",
        "aspsessionid",
        "asp_net_sessionid",
        "cfid",
        "cftoken",
        "auth",
        "authorization",
        "bearer",
        "jwt",
        "credential",
        "credentials",
        "sig",
        "signature",
        "otp",
        "totp",
        "mfa_code",
        "pin",
        "private_token",
        "x_api_key",
        "access_key",
        "secret_access_key",
        "aws_secret_access_key",
        "security_token",
        "x_amz_security_token",
        "oauth_token",
        "oauth_token_secret",
        "magic_token",
        "login_token",
        "reset_token",
        "reset_password_token",
        "access_code",
        "connection_string",
        "conn_str",
        "dsn",
        "cookie",
        "hmac",
        "webhook_secret",
    }
)
_SECRET_TAILS: Final = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "passcode",
        "secret",
        "token",
        "key",
        "apikey",
        "credential",
        "credentials",
        "signature",
        "jwt",
        "sessionid",
        "cookie",
        "otp",
        "hmac",
    }
)
_BENIGN_NAMES: Final = frozenset(
    {
        "state",
        "nonce",
        "code_challenge",
        "code_challenge_method",
        "client_id",
        "redirect_uri",
        "redirect_url",
        "response_type",
        "response_mode",
        "scope",
        "prompt",
        "elicitation_id",
        "elicitationid",
        "id",
        "page",
        "page_token",
        "next_page_token",
        "prev_page_token",
        "page_size",
        "cursor",
        "next_token",
        "continuation_token",
        "pagination_token",
        "sync_token",
        "max_tokens",
        "token_count",
        "token_type",
        "public_key",
        "key_id",
        "kid",
        "csrf_token",
        "xsrf_token",
        "csrf",
        "xsrf",
        "authenticity_token",
        "csrfmiddlewaretoken",
        "request_verification_token",
        "captcha_token",
        "recaptcha_token",
        "g_recaptcha_response",
        "turnstile_token",
        "publishable_key",
        "api_version",
        "sort_key",
        "partition_key",
        "cache_key",
        "idempotency_key",
        "object_key",
        "primary_key",
        "foreign_key",
        "hotkey",
        "keyboard",
        "keyword",
        "keywords",
        "monkey",
        "turkey",
        "key_name",
        "secret_name",
        "eg_bind",
        "author",
        "auth_method",
        "auth_type",
        "auth_url",
        "token_url",
        "token_endpoint",
        "password_policy",
        "session_state",
        "login_hint",
        "id_token_hint",
        "code",
        "passthrough",
        "passenger",
        "pass_through",
        "signature_method",
        "signature_version",
        "sig_method",
        "pin_code_length",
    }
)
_BENIGN_TAILS: Final = frozenset(
    {
        "id",
        "ids",
        "name",
        "names",
        "type",
        "types",
        "count",
        "length",
        "len",
        "size",
        "url",
        "uri",
        "urls",
        "method",
        "version",
        "at",
        "expires",
        "expiry",
        "expiration",
        "ttl",
        "hint",
        "format",
        "mode",
        "policy",
        "strength",
        "reset",
        "required",
        "min",
        "max",
        "rules",
        "file",
        "path",
        "dir",
        "enabled",
        "status",
        "label",
        "title",
        "description",
        "endpoint",
        "algorithm",
        "alg",
        "kind",
        "prefix",
        "suffix",
        "hash_alg",
        "field",
        "header",
        "param",
        "location",
        "region",
        "index",
        "idx",
        "timeout",
        "lifetime",
        "valid",
        "validity",
        "changed",
        "updated",
        "created",
        "last4",
    }
)
_BENIGN_QUALIFIERS: Final = frozenset(
    {
        "page",
        "next",
        "prev",
        "previous",
        "continuation",
        "pagination",
        "sync",
        "cursor",
        "csrf",
        "xsrf",
        "captcha",
        "recaptcha",
        "hcaptcha",
        "public",
        "publishable",
        "primary",
        "foreign",
        "sort",
        "partition",
        "cache",
        "idempotency",
        "object",
        "route",
        "lookup",
        "dedup",
        "dedupe",
        "i18n",
        "translation",
        "max",
        "min",
        "num",
        "total",
        "input",
        "output",
        "completion",
        "prompt",
        "hot",
        "map",
        "dict",
        "group",
        "row",
        "column",
        "unique",
        "composite",
        "sorting",
        "s3",
        "storage_object",
        "push",
        "device",
        "notification",
        "fcm",
        "apns",
        "registration",
    }
)


@functools.lru_cache(maxsize=4096)
def normalize_key_name(name: str) -> str:
    """``accessToken`` / ``X-Amz-Signature`` / ``api.key`` → ``access_token`` style."""
    spaced = _CAMEL_RE.sub("_", name.strip())
    return _SEPARATORS_RE.sub("_", spaced.lower()).strip("_")


@functools.lru_cache(maxsize=4096)
def is_secret_key_name(name: str) -> bool:
    """True when a parameter or field called ``name`` usually carries a credential.

    Decided on the normalised name: explicit secret names win, then the benign vocabulary
    (OAuth ``state``/``nonce``/``code_challenge``, pagination tokens, ``*_id``, ``*_name``,
    ``public_key``, CSRF tokens …), then the last word (``github_token`` yes,
    ``password_policy`` no, ``page_token`` no).
    """
    normal = normalize_key_name(name)
    if not normal:
        return False
    if normal in _SECRET_NAMES:
        return True
    if normal in _BENIGN_NAMES or normal.startswith("utm_"):
        return False
    words = normal.split("_")
    if words[-1] in _BENIGN_TAILS:
        return False
    if words[-1] not in _SECRET_TAILS and not normal.endswith(("apikey", "secret", "password")):
        return False
    return not any(word in _BENIGN_QUALIFIERS for word in words[:-1])


_PASSWORD_HEADS: Final = frozenset(
    {"password", "passwd", "pwd", "pass", "passphrase", "passcode", "pin"}
)
_TOKEN_ALPHABET_RE: Final = re.compile(r"^[A-Za-z0-9._~+/=:$!@*%-]+$")
_PLAIN_WORD_RE: Final = re.compile(r"^[A-Za-z]+(?:[ _-][A-Za-z]+)*$")
_NUMBER_RE: Final = re.compile(r"^[0-9]{1,6}$")
_PATH_OR_URL_RE: Final = re.compile(r"^(?:[~/.]|[a-z][a-z0-9+.-]*://)", re.IGNORECASE)


_FILE_OR_PATH_RE: Final = re.compile(r"(?:^|/)[\w-]+\.[A-Za-z][A-Za-z0-9]{1,4}$")


_WORD_PATH_PART_RE: Final = re.compile(r"[a-z0-9._-]*")


def _word_path(text: str) -> bool:
    parts = text.split("/")
    return len(parts) >= 3 and all(_WORD_PATH_PART_RE.fullmatch(p) for p in parts)


def _password_like(normal: str) -> bool:
    words = normal.split("_")
    return words[-1] in _PASSWORD_HEADS or normal in _PASSWORD_HEADS


def _keyed_confidence(value: str, key_name: str) -> str | None:
    """Confidence that ``value`` under a secret-bearing ``key_name`` is a live credential."""
    text = value.strip()
    if not text or is_placeholder(text) or _PATH_OR_URL_RE.match(text):
        return None
    if text.lower() in {"true", "false", "null", "none", "yes", "no", "on", "off"}:
        return None
    normal = normalize_key_name(key_name)
    if _password_like(normal):
        if len(text) < 4 or (normal.endswith("pin") and not text.isdigit()):
            return None
        return "medium"
    if len(text) < 8 or _NUMBER_RE.match(text) or not _TOKEN_ALPHABET_RE.match(text):
        return None
    if _PLAIN_WORD_RE.match(text) and len(text) < 24:
        return None
    if _FILE_OR_PATH_RE.search(text) or _word_path(text):
        return None
    entropy = shannon_entropy(text)
    if entropy < 2.5:
        return None
    return "high" if len(text) >= 20 and entropy >= 3.5 else "medium"


# --------------------------------------------------------------------------- validators


def _check_jwt(secret: str) -> bool:
    parts = secret.split(".")
    if len(parts) != 3:
        return False
    header, payload = (_b64decode(p) for p in parts[:2])
    if header is None or payload is None:
        return False
    try:
        head = orjson.loads(header)
        body = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return False
    return isinstance(head, dict) and "alg" in head and isinstance(body, dict)


def _check_pypi(secret: str) -> bool:
    raw = _b64decode(secret.removeprefix("pypi-")[:64])
    if raw is None or len(raw) < 4 or raw[0] != 2 or raw[1] != 1:
        return False
    location = raw[3 : 3 + raw[2]]
    return location.endswith(b"pypi.org")


def _check_discord(secret: str) -> bool:
    raw = _b64decode(secret.split(".", 1)[0])
    return raw is not None and raw.isdigit() and 15 <= len(raw) <= 21


def _check_url_password(secret: str) -> bool:
    return not is_placeholder(secret)


_STRUCTURES: Final[dict[str, Callable[[str], bool]]] = {
    "jwt": _check_jwt,
    "pypi-macaroon": _check_pypi,
    "discord-token": _check_discord,
    "url-password": _check_url_password,
}


def _check_github_crc32(secret: str) -> bool:
    body = secret.split("_", 1)[1] if "_" in secret else secret
    return len(body) > 6 and base62_crc32(body[:-6]) == body[-6:]


_CHECKSUMS: Final[dict[str, Callable[[str], bool]]] = {"github-crc32": _check_github_crc32}


# --------------------------------------------------------------------------- scanning


def _span(match: Any, regex: Any) -> tuple[int, int]:
    group = regex.groupindex.get("s") or regex.groupindex["m"]
    return int(match.start(group)), int(match.end(group))


def _judge(entry: CatalogueEntry, match: Any, regex: Any, secret: str) -> str | None:
    """Return the confidence for one raw regex match, or None to drop it."""
    if entry.structure == "keyed-assignment":
        key = match.group(regex.groupindex["k"])
        return _keyed_confidence(secret, key) if is_secret_key_name(key) else None
    if entry.structure and not _STRUCTURES[entry.structure](secret):
        return None
    if entry.entropy and shannon_entropy(secret) < entry.entropy:
        return None
    if entry.structure != "url-password" and (is_placeholder(secret) or _filler_tail(secret)):
        return None
    if entry.check and not _CHECKSUMS[entry.check](secret):
        return "medium"
    return entry.confidence


_TAIL_SPLIT_RE: Final = re.compile(r"[_.-]")


def _filler_tail(secret: str) -> bool:
    """``ghp_xxxx…`` or ``sk_live_abcdef…``: a real prefix in front of filler."""
    tail = _TAIL_SPLIT_RE.split(secret)[-1]
    return len(tail) >= 8 and (_is_repetitive(tail) or _is_sequential(tail))


def _run(entry: CatalogueEntry, regex: Any, text: str) -> Iterable[SecretMatch]:
    for match in regex.finditer(text):
        start, end = _span(match, regex)
        secret = text[start:end]
        confidence = _judge(entry, match, regex, secret)
        if confidence is not None:
            yield SecretMatch(entry.id, start, end, secret, confidence)


_RANK: Final = {"high": 0, "medium": 1, "low": 2}
_GENERIC: Final = frozenset(
    {"generic-secret-assignment", "url-basic-auth", "bearer-token", "authorization-header"}
)


def _dedupe(matches: list[SecretMatch]) -> list[SecretMatch]:
    """Keep one match per overlapping span: specific formats over generic ones."""
    ordered = sorted(
        matches,
        key=lambda m: (m.type in _GENERIC, _RANK.get(m.confidence, 3), m.start - m.end),
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


@functools.cache
def keywordless_min_length() -> int:
    """The shortest value any keyword-less format can match (and never less than 8).

    A value shorter than this, holding no catalogue keyword, cannot match any format.
    """
    compiled = _compiled()
    lengths = [compiled.entries[i].min_length for i in compiled.always]
    return max(8, min(lengths, default=1 << 30))


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
