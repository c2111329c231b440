"""Placeholders: templates, masks, documented examples and fillers that are not secrets.

Why: a guard that blocks ``changeme``, ``<your key>`` or ``AKIAIOSFODNN7EXAMPLE`` gets
switched off; every finding, ours or a community catalogue's, passes through here.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Final

_TEMPLATE_RE: Final = re.compile(
    r"""^(?:
        \$\{[^}]*\}|\$\([^)]*\)|\{\{.*\}\}|\{%.*%\}|%[A-Za-z_][A-Za-z0-9_]*%|
        \$[A-Za-z_][A-Za-z0-9_]*|<[^<>]+>|\[[^\[\]]+\]|\{[A-Za-z_][A-Za-z0-9_.-]*\}|
        process\.env\.[A-Za-z0-9_]+|os\.environ.*|env\(.*\)|
        ENC\[.*|\$ANSIBLE_VAULT;.*|vault:v[0-9]+:.*
    )$""",
    re.VERBOSE | re.DOTALL,
)
# ``%VAR%`` counts only standing apart (``%APPDATA%\\key``): ``…0w%L3X%dq…`` inside a
# percent-bearing token is chance.
_TEMPLATE_INSIDE_RE: Final = re.compile(
    r"\$\{[^}]*\}|\{\{[^}]*\}\}|(?<![A-Za-z0-9])%[A-Z_][A-Z0-9_]*%(?![A-Za-z0-9])"
)
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


def has_filler_run(value: str, length: int = 16) -> bool:
    """True when ``value`` holds a long ascending run such as ``abcdefghijklmnop``.

    Such a run (half an alphabet) is filler typed by hand. Shorter runs are not enough:
    vendors document real-format keys such as ``1234567890abcdef1234567890abcdef``, and a
    user who pastes one into an answer pastes something shaped and keyed like a credential
    (a value that is nothing but a sequence is still rejected by :func:`is_placeholder`).
    """
    run = 1
    lowered = value.lower()
    for before, after in itertools.pairwise(lowered):
        if ord(after) == ord(before) + 1 and after.isalnum() and before.isalnum():
            run += 1
            if run >= length:
                return True
        else:
            run = 1
    return False


@functools.lru_cache(maxsize=8192)
def is_placeholder(value: str) -> bool:
    """True when ``value`` is a template, mask, documented example or filler, not a secret.

    Covers ``${VAR}``, ``{{ var }}``, ``%VAR%``, ``$VAR``, ``<token>``, values encrypted at
    rest (SOPS ``ENC[…]``, ``$ANSIBLE_VAULT;…``, ``vault:v1:…``), masks (``****``,
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


_LETTER_RUN_RE: Final = re.compile(r"[A-Za-z]+")
# Base32 alphabets (AWS key ids) are one case by design: 16 random characters of one hold
# no digit one time in thirty; 24 letters of one case and no digit are text.
_SINGLE_CASE_LETTERS: Final = 24
_TOKEN_PART_RE: Final = re.compile(r"[^A-Za-z0-9]+")
_CAMEL_SPLIT_RE: Final = re.compile(r"(?=[A-Z])")
#: Keys that are public by design: Stripe publishable keys, Mapbox public tokens, Nostr
#: public keys, age recipients.
PUBLISHABLE_PREFIXES: Final = ("pk_live_", "pk_test_", "pk.", "npub1", "age1")
_MASK_AFTER_RE: Final = re.compile(r"[#*•xX]{4,}")
# A find that ends where a static file's extension begins is a content hash in a file name
# (bundlers fingerprint assets: ``app.3f9a….js``, ``logo.ico-7a38….png``).
_ASSET_SUFFIX_RE: Final = re.compile(
    r"\.(?:png|jpe?g|gif|svg|webp|avif|ico|bmp|css|js|mjs|cjs|map|woff2?|ttf|otf|eot|"
    r"html?|txt|pdf|mp[34]|webm|wasm)(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_RUN_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def shown_as_fake(text: str, start: int, end: int) -> bool:
    """Whether the find ``text[start:end]`` is part of something shown, not given.

    ``xoxp-5723…-####################``: a token whose rest is masked; and
    ``glsoat-PREfix_helloworld380_testin_pretty_long_token_long_``: a find cut out of a
    longer run made of words, i.e. a made-up example. The find alone looks real; the run
    it was cut from says what it is.
    """
    if _MASK_AFTER_RE.match(text, end) or _MASK_AFTER_RE.match(text, end + 1):
        return True
    if start > 0 and text[start - 1] in "./" and _ASSET_SUFFIX_RE.match(text, end):
        return True  # ``…/video_box.ico-7a38…0aab0c.png``: a fingerprinted asset's file name
    left, right = start, end
    while left > 0 and text[left - 1] in _RUN_CHARS:
        left -= 1
    while right < len(text) and text[right] in _RUN_CHARS:
        right += 1
    if (left, right) == (start, end):
        return False
    return is_wordlike_token(text[left:right])


def is_wordlike_token(value: str, length: int = 16) -> bool:
    """True when a long token-shaped ``value`` is written text, not random key material.

    Key material drawn from letters and digits holds digits and mixes its cases: 24 random
    characters from ``[A-Z0-9]`` hold no digit once in two thousand draws, and from
    ``[A-Za-z0-9]`` are never a single case. A long value of letters in one case only
    (``API-VIRHEKAPSELOINTIMERKKIJONO``, a word in capitals after a vendor's prefix) or
    made of words (``gloas-checking_Length-Is-_exactly_64``) is text that happens to fit
    a format's alphabet. Short values are left to the other judgements.
    """
    if len(value) < length:
        return False
    parts = [p for p in _TOKEN_PART_RE.split(value) if p]
    words = [p for p in parts if p.isalpha() and 2 <= len(p) <= 12]
    if len(words) < 4:  # ``SlackAppConfigurationAccessTokenHere``: words in camel case
        humps = [w for p in parts if p.isalpha() for w in _CAMEL_SPLIT_RE.split(p) if w]
        words = [w for w in humps if w[:1].isupper() and w[1:].islower() and 3 <= len(w) <= 16]
        if len(words) >= 4 and sum(map(len, words)) >= 0.7 * sum(map(len, parts)):
            return True
        words = [p for p in parts if p.isalpha() and 2 <= len(p) <= 12]
    if len(words) >= 4 and sum(map(len, words)) >= 0.7 * sum(map(len, parts)):
        return True
    if any(c.isdigit() for c in value):
        return False
    letters = "".join(_LETTER_RUN_RE.findall(value))
    return len(letters) >= _SINGLE_CASE_LETTERS and (letters.isupper() or letters.islower())
