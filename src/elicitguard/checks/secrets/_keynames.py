"""Key names: which field or parameter names carry a credential, and how sure a value is.

Why: a context-only secret (``password=hunter2``) has no format; its only sign is the name
it stands under. ``password_policy``, ``page_token`` and ``public_key`` do not count.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Final

from elicitguard.checks.secrets._placeholders import has_filler_run, is_placeholder
from elicitguard.checks.secrets._validators import shannon_entropy

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
    linked = next((i for i, word in enumerate(words[:-1]) if i and word in _LINK_WORDS), None)
    if linked is not None:
        # ``key_vault_to_store_secrets``, ``path_to_secret``: the name is its head (the words
        # before the link), the secret noun only what the head is for.
        return is_secret_key_name("_".join(words[:linked]))
    if words[-1] in _BENIGN_TAILS:
        return False
    if words[-1] not in _SECRET_TAILS and not normal.endswith(("apikey", "secret", "password")):
        return False
    return not any(word in _BENIGN_QUALIFIERS for word in words[:-1])


#: Words that link a name's head to what it is for or about (``…_to_…``, ``…_for_…``).
_LINK_WORDS: Final = frozenset({"to", "for", "of", "from"})

_PASSWORD_HEADS: Final = frozenset(
    {"password", "passwd", "pwd", "pass", "passphrase", "passcode", "pin"}
)
_TOKEN_ALPHABET_RE: Final = re.compile(r"^[A-Za-z0-9._~+/=:$!@*%-]+$")
_PLAIN_WORD_RE: Final = re.compile(r"^[A-Za-z]+(?:[ _-][A-Za-z]+)*$")
_NUMBER_RE: Final = re.compile(r"^[0-9]{1,6}$")
_PATH_OR_URL_RE: Final = re.compile(r"^(?:[~/.]|[a-z][a-z0-9+.-]*://)", re.IGNORECASE)


_FILE_OR_PATH_RE: Final = re.compile(r"(?:^|/)[\w-]+\.(?P<ext>[A-Za-z][A-Za-z0-9]{1,11})$")
_COLOR_RE: Final = re.compile(r"^#(?:[0-9A-Fa-f]{3,4}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$")
_PART_SPLIT_RE: Final = re.compile(r"[-_.]+")


def _wordish(part: str) -> bool:
    """A word (``jetbrains``, ``Results``, ``SalesResults``), not random letters."""
    if not part.isalpha() or len(part) > 16:
        return False
    changes = sum(1 for a, b in itertools.pairwise(part) if a.islower() and b.isupper())
    return changes <= 2


def _identifier_like(text: str) -> bool:
    """``SalesResults-1.2``, ``DOC_Vector_5_32``, ``NormalBrushGradient1``: words and short
    numbers joined by separators or camel case, a name rather than key material."""
    parts = [p for p in _PART_SPLIT_RE.split(text) if p]
    if len(parts) >= 2:
        return all(_wordish(p) or (p.isdigit() and len(p) <= 4) or len(p) <= 3 for p in parts)
    words = [w for w in _CAMEL_RE.sub(" ", text).split() if w]
    if len(words) < 3:
        return False
    tail = words[-1].rstrip("0123456789")
    words[-1] = tail or words[-1]
    return all(w.isalpha() and len(w) >= 3 for w in words[:-1]) and (
        words[-1].isalpha() or words[-1].isdigit()
    )


def _file_name(text: str) -> bool:
    """``cert.p12``, ``app-k8s.yml``, ``s_rsa1024_priv.pem``: a name and an extension. An
    extension is one case and holds a digit or two at most (``mp4``, ``h264``); a dotted
    token such as ``4N4VTAX5….KH83JBNN7F3`` is not a file name."""
    match = _FILE_OR_PATH_RE.search(text)
    if match is None:
        return False
    ext = match.group("ext")
    return sum(c.isdigit() for c in ext) <= 2 and (ext.islower() or ext.isupper())


_WORD_PATH_PART_RE: Final = re.compile(r"[a-z0-9._-]*")


_WORD_RE: Final = re.compile(r"[a-z][a-z._-]*")


def _word_path(text: str) -> bool:
    """``team/app/db`` or ``secret/mysecret``: a path of names (a vault path), not a key."""
    parts = text.split("/")
    if len(parts) == 2:
        return all(_WORD_RE.fullmatch(p) for p in parts)
    return len(parts) >= 3 and all(_WORD_PATH_PART_RE.fullmatch(p) for p in parts)


def _password_like(normal: str) -> bool:
    words = normal.split("_")
    return words[-1] in _PASSWORD_HEADS or normal in _PASSWORD_HEADS


# A value that is code: a variable (``$X``, ``\\$_POST[``, ``@{x}``), a cast or call
# (``(char``, ``getenv(``), or a dotted name that ends in a secret's name (``var.db_password``,
# ``settings.SECRET_KEY``).
_CODE_REFERENCE_RE: Final = re.compile(
    r"^(?:\\?\$[A-Za-z_{(]|@\{|\(|[A-Za-z_][A-Za-z0-9_]*\($|"
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\.[A-Za-z0-9_]*"
    r"(?i:password|passwd|pwd|secret|token|key|credentials?)[A-Za-z0-9_]*$)"
)
_PRINTABLE_RE: Final = re.compile(r"^[!-~]{8,128}$")
_MARKUP: Final = ('"', "'", "`", "</", "/>", "\\")


def _generated_password(text: str) -> bool:
    """``q8#Lm!2zP@r5^Tw`` under ``client_secret``: what a password generator writes.

    A value outside the token alphabet (``#^&()<>``…) is still a secret when it holds all
    four kinds of character (lower case, upper case, digit, symbol): code such as
    ``sys.argv[1]`` or ``$_POST[`` never does, and neither do words or paths.
    """
    if not _PRINTABLE_RE.match(text) or any(q in text for q in _MARKUP):
        return False  # quotes and tags: the value ran on into markup or code
    kinds = (str.islower, str.isupper, str.isdigit)
    if not all(any(test(c) for c in text) for test in kinds):
        return False
    return any(not c.isalnum() for c in text) and shannon_entropy(text) >= 3.0


def _keyed_confidence(value: str, key_name: str) -> str | None:
    """Confidence that ``value`` under a secret-bearing ``key_name`` is a live credential."""
    text = value.strip().lstrip("=")
    if not text or is_placeholder(text) or _PATH_OR_URL_RE.match(text):
        return None
    if text.lower() in {"true", "false", "null", "none", "yes", "no", "on", "off"}:
        return None
    if _CODE_REFERENCE_RE.match(text):
        return None  # ``$_POST[``, ``(char``, ``var.db_password``: code that names a value
    normal = normalize_key_name(key_name)
    if _password_like(normal):
        if len(text) < 4 or (normal.endswith("pin") and not text.isdigit()):
            return None
        return "medium"
    if len(text) < 8 or _NUMBER_RE.match(text):
        return None
    if not _TOKEN_ALPHABET_RE.match(text):
        return "medium" if _generated_password(text) else None
    if _PLAIN_WORD_RE.match(text) and len(text) < 24:
        return None
    if _file_name(text) or _word_path(text) or _COLOR_RE.match(text):
        return None
    if _identifier_like(text) or has_filler_run(text):
        return None
    entropy = shannon_entropy(text)
    if entropy < 2.5:
        return None
    return "high" if len(text) >= 20 and entropy >= 3.5 else "medium"


# A label such as ``walkscore SECRET``, ``codequiry-PRIVATE`` or ``boxTOKEN``: its last word
# (or the end of it, when the vendor name is glued on) names a secret.
_LABEL_TAILS: Final = ("secret", "token", "key", "access", "private")
_LABEL_WORDS: Final = frozenset(
    {*_LABEL_TAILS, "secretkey", "accesskey", "privatekey", "apikey", "accesstoken", "tkn"}
)
# Words that end in a label tail but name no secret, and qualifiers of a public or
# bookkeeping key (``public key``, ``primary key``, ``site key`` …).
_NOT_LABELS: Final = frozenset(
    {"monkey", "turkey", "hockey", "jockey", "donkey", "whiskey", "hotkey", "turnkey"}
)
_PUBLIC_QUALIFIERS: Final = frozenset(
    {
        "public",
        "publishable",
        "pub",
        "site",
        "sitekey",
        "primary",
        "foreign",
        "sort",
        "partition",
        "composite",
        "unique",
        "idempotency",
        "cache",
        "row",
        "ssh",
        "host",
        "gpg",
        "pgp",
    }
)
_LABEL_SPLIT_RE: Final = re.compile(r"[^a-z0-9]+")
_VERSION_RE: Final = re.compile(r"^v?[0-9]+\.[0-9]+(?:\.[0-9]+)?(?:[-+.][A-Za-z0-9.]+)*$")


def _names_secret(label: str) -> bool:
    words = [w for w in _LABEL_SPLIT_RE.split(_CAMEL_RE.sub(" ", label).lower()) if w]
    if not words or words[-1] in _NOT_LABELS:
        return False
    tail = words[-1]
    if tail not in _LABEL_WORDS and not (
        tail.endswith(_LABEL_TAILS) and len(tail) >= 7 and tail not in _NOT_LABELS
    ):
        return False
    return not any(w in _PUBLIC_QUALIFIERS or w in _BENIGN_QUALIFIERS for w in words)


def labelled_confidence(label: str, value: str) -> str | None:
    """Confidence for ``value`` written after a label that names a secret, or None.

    Vendors document their keys as ``walkscore TOKEN 3f9a…``, ``codequiry-PRIVATE-…`` or
    ``boxSECRET …``: a vendor word, a secret word and a token-shaped value with no ``=``.
    The value must look like key material (letters and digits, 16 characters or more, not
    a version, path, word or filler); the label must not qualify a public key.
    """
    if len(value) < 16 or not _names_secret(label):
        return None
    if not any(c.isdigit() for c in value) or not any(c.isalpha() for c in value):
        return None
    if _VERSION_RE.match(value) or value.endswith(".."):
        return None  # a version, or a value shown cut short (``ops_eyJz..[Redacted]``)
    return _keyed_confidence(value, "token")
