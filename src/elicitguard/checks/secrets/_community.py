"""A community-maintained credential catalogue beside our own, behind our own validators.

Why: our catalogue covers the formats we wrote (about 130); community catalogues track
hundreds of vendors and are updated by their maintainers as formats change. The adopted
one is Kingfisher's SDK (``kingfisher-secret-scanner``, Apache-2.0, maintained by MongoDB;
its rule set bundles Kingfisher's own rules and Betterleaks' and ships with each release,
compiled for vectorscan). Scanning never uses the network (the SDK's validation and
revocation, which do, are never called).

Its findings pass our validators before they count: placeholders and fillers are dropped,
JWT-shaped finds must decode to a JWT, GitHub/npm-style tokens must carry their CRC32 (or
count as medium), and a find needs our entropy floor. Only texts holding a token-like run
reach it, so ordinary text costs one regex test. Loading compiles its rule database (a
cached copy on disk loads in a few seconds): :func:`load_community` runs in
``Engine.warm_up``, and the first scan loads it otherwise. A missing or broken package is
an error, never a catalogue that silently finds nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from typing import Any, Final

from elicitguard.checks.secrets._keynames import _identifier_like, _keyed_confidence
from elicitguard.checks.secrets._placeholders import (
    _is_repetitive,
    _is_sequential,
    is_placeholder,
    is_wordlike_token,
)
from elicitguard.checks.secrets._types import SecretMatch
from elicitguard.checks.secrets._validators import (
    _check_github_crc32,
    _check_jwt,
    shannon_entropy,
)

__all__ = [
    "community_enabled",
    "community_scan",
    "load_community",
    "load_community_in_background",
    "vendor_names",
]

#: Set to ``0`` to run without the community catalogue (our own catalogue only).
ENV_SWITCH: Final = "ELICITGUARD_COMMUNITY_SECRETS"
_TOKEN_RUN_RE: Final = re.compile(r"[A-Za-z0-9_+/=.:-]{20,}")
_MIN_ENTROPY: Final = 3.0
_MAX_CHARS: Final = 64 << 10
_LOCK = threading.Lock()
_SCAN_LOCK = threading.Lock()
_TYPE_PREFIX: Final = "community:"


def community_enabled() -> bool:
    """Whether the community catalogue is in use (on unless the switch says ``0``)."""
    return os.environ.get(ENV_SWITCH, "1") != "0"


_SCANNER: list[Any] = []
_VENDORS: set[str] = set()
# Rule-id words that name a kind of credential or a generic rule, not a vendor.
_NOT_VENDORS: Final = frozenset(
    {
        "generic", "jwt", "private", "password", "secret", "token", "api", "key", "url",
        "http", "https", "basic", "bearer", "oauth", "ssh", "pem", "pgp", "gpg", "aws",
        "base64", "hex", "webhook", "credentials", "credential", "connection", "database",
        "mysql", "postgres", "postgresql", "mongodb", "redis", "jdbc", "odbc", "ldap", "smtp",
        "ftp", "sftp", "docker", "kubernetes", "k8s", "git", "curl", "test", "sample",
        "example", "default", "user", "username", "email", "client", "account", "app",
        "service", "server", "cloud", "data", "auth", "access", "admin", "root", "foo",
        "bar", "baz", "qux", "quux", "demo", "dummy", "fake", "mock", "stub", "widget",
    }
)  # fmt: skip
_VENDOR_SPLIT_RE: Final = re.compile(r"[^a-z0-9]+")


def _vendor_names(rule_ids: Any) -> set[str]:
    """Vendor words from the community catalogue's rule ids (``kingfisher.spotify.1``,
    ``betterleaks.scalingo-api-token``): the names a user may write in front of a key."""
    names: set[str] = set()
    for rule_id in rule_ids:
        body = rule_id.split(".", 1)[-1].lower()
        head = _VENDOR_SPLIT_RE.split(body)[0]
        if len(head) >= 4 and not head.isdigit() and head not in _NOT_VENDORS:
            names.add(head)
    return names


def vendor_names() -> frozenset[str]:
    """The vendor words known to the community catalogue (empty when it is off)."""
    if not community_enabled():
        return frozenset()
    load_community()
    return frozenset(_VENDORS)


def load_community() -> Any:
    """The compiled community scanner, loaded once per process (thread-safe).

    Seconds with a warm disk cache (the SDK keeps the compiled rule database in the user's
    cache directory); the first load on a machine compiles it (tens of seconds).
    """
    if _SCANNER:
        return _SCANNER[0]
    with _LOCK:
        if not _SCANNER:
            import kingfisher_sdk

            rules = kingfisher_sdk.Rules(confidence="medium")
            _VENDORS.update(_vendor_names(str(rule["id"]) for rule in rules.metadata()))
            _SCANNER.append(kingfisher_sdk.Scanner(rules, base64=False))
        return _SCANNER[0]


def load_community_in_background() -> None:
    """Start loading the community scanner on a daemon thread (for ``Engine.warm_up``).

    Startup does not wait; a scan that comes before the load ends waits for it.
    """
    if community_enabled() and not _SCANNER:
        threading.Thread(target=_load_politely, name="community-secrets", daemon=True).start()


def _load_politely() -> None:
    """Load at the lowest CPU priority (Linux threads have their own nice value), so that
    compiling the rule database never slows the traffic being served meanwhile."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    with contextlib.suppress(Exception):  # a failure surfaces again on first use, loudly
        load_community()


def _token_like(text: str) -> bool:
    """A run that could be a credential: 20+ token characters with letters and digits."""
    for match in _TOKEN_RUN_RE.finditer(text):
        run = match.group(0)
        if any(c.isdigit() for c in run) and any(c.isalpha() for c in run):
            return True
    return False


def _validated(rule: str, secret: str) -> str | None:
    """Our verdict on one community find: a confidence, or None to drop it."""
    if len(secret) < 8 or is_placeholder(secret) or is_wordlike_token(secret):
        return None
    if _identifier_like(secret):
        return None  # words and short numbers: a name, not key material
    tail = re.split(r"[_.-]", secret)[-1]
    if len(tail) >= 8 and (_is_repetitive(tail) or _is_sequential(tail)):
        return None
    lowered = rule.lower()
    if lowered.endswith(("-id", "client-id", "-username", "-user", "-email")):
        return None  # identifiers name an account; they grant nothing alone
    if "jwt" in lowered or secret.startswith("eyJ"):
        return "high" if _check_jwt(secret) else None
    if lowered.startswith(("betterleaks.github", "kingfisher.github", "betterleaks.npm")):
        return "high" if _check_github_crc32(secret) else "medium"
    if shannon_entropy(secret) < _MIN_ENTROPY:
        return None
    return "high"


def community_scan(text: str) -> list[SecretMatch]:
    """Credentials the community catalogue finds in ``text``, after our validators."""
    if len(text) < 16 or not community_enabled() or not _token_like(text):
        return []
    scanner = load_community()
    with _SCAN_LOCK:  # the SDK does not promise thread safety for one scanner
        findings = scanner.scan(text[:_MAX_CHARS])
    found: list[SecretMatch] = []
    for finding in findings:
        secret = str(finding.secret)
        confidence = _validated(str(finding.rule_id), secret)
        if confidence is None:
            continue
        start = text.find(secret)
        kind = _TYPE_PREFIX + str(finding.rule_id).split(".", 1)[-1]
        found.append(
            SecretMatch(kind, max(start, 0), max(start, 0) + len(secret), secret, confidence)
        )
    return found


# ``cloudsmith: "6fd0…"``, ``scraping_bee = '…'``, ``wandb 3f9a…``: a vendor's name, then a
# token. The name says which service the token opens as surely as ``api_key`` would.
_VENDOR_LABEL_RE: Final = re.compile(
    r"(?:^|[^A-Za-z0-9_.-])(?P<k>[A-Za-z][A-Za-z0-9_-]{2,40})[\"']?[ \t]{0,3}(?:[:=]|=>)?[ \t]{0,3}"
    r"[\"']?(?P<s>[A-Za-z0-9][A-Za-z0-9_+/=.-]{15,200})"
)
_HASH_OR_UUID_RE: Final = re.compile(
    r"(?:(?:sha|md|blake|sm|crc)[0-9]{1,3}[-:_][A-Za-z0-9+/=_-]+|[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}|[0-9A-F]{32}|[0-9A-F]{40}|[0-9A-F]{64}"
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
)


def vendor_labelled_scan(text: str) -> list[SecretMatch]:
    """Tokens written right after a vendor's name (from the community catalogue's rules).

    The value must look like key material (letters and digits, 16 characters or more,
    past our entropy, placeholder and identifier judgements); hashes and UUIDs are left
    out (``github 9fceb02…`` is a commit, ``kontent_env_id <uuid>`` an identifier).
    """
    if len(text) < 20 or not _token_like(text):
        return []
    vendors = vendor_names()
    if not vendors:
        return []
    found: list[SecretMatch] = []
    for match in _VENDOR_LABEL_RE.finditer(text[:_MAX_CHARS]):
        raw_label = match.group("k")
        label = raw_label.lower().replace("_", "").replace("-", "")
        known = label in vendors
        if not known and not _vendor_like(raw_label, text[match.start("k") : match.start("s")]):
            continue
        secret = match.group("s").rstrip(".")
        if not (any(c.isdigit() for c in secret) and any(c.isalpha() for c in secret)):
            continue
        if _HASH_OR_UUID_RE.fullmatch(secret) or is_wordlike_token(secret):
            continue
        entropy = shannon_entropy(secret)
        if not known and (
            len(secret) < _UNKNOWN_VENDOR_MIN
            or entropy < _UNKNOWN_VENDOR_ENTROPY
            or _capital_word_share(secret) >= 0.5
        ):
            continue
        confidence = _keyed_confidence(secret, "token")
        if confidence is not None and entropy >= _MIN_ENTROPY + 0.5:
            kind = "vendor-labelled-token"
            found.append(SecretMatch(kind, match.start("s"), match.end("s"), secret, confidence))
    return found


# A label the catalogue does not know must stand alone (``cloudsmith: "…"``), be one word
# that is not a bookkeeping name (ids, hashes, versions, paths …) and carry a long,
# high-entropy value: a service's name and its key, written the way people note keys down.
_UNKNOWN_VENDOR_MIN: Final = 24
_UNKNOWN_VENDOR_ENTROPY: Final = 4.0
_BOOKKEEPING_TAILS: Final = (
    "id", "ids", "uid", "uuid", "guid", "hash", "sha", "sha1", "sha256", "md5", "digest",
    "checksum", "etag", "ref", "rev", "revision", "commit", "version", "ver", "build",
    "name", "url", "uri", "link", "href", "path", "file", "dir", "image", "img", "tag",
    "trace", "span", "request", "nonce", "salt", "iv", "serial", "number", "no", "num",
    "code", "sku", "order", "tracking", "invoice", "ticket", "issue", "slug", "handle",
    "host", "domain", "email", "mail", "user", "username", "login", "account", "region",
    "zone", "bucket", "table", "index", "color", "colour", "font", "date", "time", "type",
    "kind", "mode", "format", "lang", "locale", "label", "title", "note", "notes", "msg",
    "message", "text", "body", "content", "data", "value", "result", "output", "input",
    "photo", "video", "audio", "track", "song", "album", "playlist", "channel", "room",
    "thread", "post", "comment", "doc", "sheet", "page", "item", "product", "cart",
    "pubkey", "publickey", "public", "cert", "certificate", "fingerprint", "thumbprint",
    "artifact", "package", "shipment", "parcel", "see", "from", "to", "via", "integrity",
    "signature", "sig", "mac", "hmac", "crc", "key", "keys", "token", "secret",
)  # fmt: skip
_LABEL_WORDS_RE: Final = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+")


_CAPITAL_WORD_RE: Final = re.compile(r"[A-Z][a-z]{3,}")


def _capital_word_share(value: str) -> float:
    """How much of ``value`` is capitalised words (``SponsoredProductsRemote…``,
    ``Ed25519.BlindKeySignatures``): code names, where random key material has few."""
    return sum(map(len, _CAPITAL_WORD_RE.findall(value))) / max(len(value), 1)


def _vendor_like(label: str, whole: str) -> bool:
    """An unknown label that may name a service: one word (``cloudsmith``, ``scraping_bee``),
    followed by ``:`` or ``=``, its last word not a bookkeeping name."""
    if not any(sep in whole[len(label) :] for sep in ":="):
        return False
    words = [w.lower() for w in _LABEL_WORDS_RE.findall(label)]
    if not words or len(words) > 3 or any(w.isdigit() for w in words):
        return False
    return not words[-1].endswith(_BOOKKEEPING_TAILS) and words[-1] not in _NOT_VENDORS
