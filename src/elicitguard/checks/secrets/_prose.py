"""Secrets written as prose: "my password is X", "pw: X", "the code is 123456", in many languages.

Why: a user answering a free-text field writes sentences, and a value with no format of
its own (a password, a PIN, a one-time code) is then recognisable only by the words in
front of it. The nouns and connectors live in ``data/secret_prose.yaml`` (one entry per
language). A phrase counts only when the value is the first token after the noun and a few
connectors, and that value has the shape of its class: "my password is required" and "the
zip code is 94107" stay quiet. One RE2 pass finds the nouns (linear time).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

import re2
import yaml

from elicitguard.checks.secrets._keynames import _keyed_confidence, is_secret_key_name
from elicitguard.checks.secrets._placeholders import is_placeholder
from elicitguard.checks.secrets._types import SecretMatch

__all__ = ["ProseSecret", "prose_languages", "scan_prose"]

_WINDOW: Final = 200
_MAX_TOKENS: Final = 7  # up to six connectors ("the password for the admin account is X")
_SEPARATORS: Final = frozenset(" \t\r\n:=：＝-–—>→|,(（[「『«“„‘\"'`*")
#: Characters that join the noun to the next word without a pause: ``+`` (a space in a
#: query string), ``&``, ``%``, ``?``, ``#``.
_JOINERS: Final = frozenset("+&%?#")
_QUOTES: Final = frozenset("\"'`«“„‘「『")
_TRAILING: Final = ".,;?)]}\"'`»”’」』。、）"
_SYMBOLS: Final = frozenset("!@#$%^&*+=?~")
_CLOSING: Final = {"«": "»", "“": "”", "„": "“", "‘": "’", "「": "」", "『": "』"}

_EMAIL_RE: Final = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_DATE_RE: Final = re.compile(r"^[0-9]{1,4}[-/.][0-9]{1,2}[-/.][0-9]{1,4}$")
_TIME_RE: Final = re.compile(r"^[0-9]{1,2}[:h][0-9]{2}")
_VERSION_RE: Final = re.compile(r"^[vV]?[0-9]+(?:\.[0-9]+){1,3}(?:-[A-Za-z0-9.]+)?$")
_UUID_RE: Final = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-")
_CODE_MIX_RE: Final = re.compile(r"^[A-Z0-9]{3,5}-?[A-Z0-9]{3,5}$")

_TYPES: Final = {
    "password": "password-in-prose",
    "pin": "pin-in-prose",
    "code": "code-in-prose",
    "key": "key-in-prose",
}


@dataclass(frozen=True, slots=True)
class ProseSecret:
    """One phrase that hands over a secret: the match and the noun's language."""

    match: SecretMatch
    language: str


@dataclass(frozen=True, slots=True)
class _Lexicon:
    nouns: Mapping[str, tuple[str, str]]  # noun -> (class, language)
    connectors: frozenset[str]
    code_qualifiers: frozenset[str]
    key_qualifiers: frozenset[str]
    regex: Any


@functools.cache
def _lexicon() -> _Lexicon:
    text = resources.files("elicitguard.checks").joinpath("data/secret_prose.yaml").read_text()
    data = yaml.safe_load(text)
    nouns: dict[str, tuple[str, str]] = {}
    connectors: set[str] = set()
    for language, groups in data["languages"].items():
        words = [w for key in (*_TYPES, "connectors") for w in groups.get(key, ())]
        if not all(isinstance(w, str) for w in words):
            msg = f"secret_prose.yaml: {language}: quote every word (YAML reads on/no as booleans)"
            raise ValueError(msg)
        for cls in _TYPES:
            for noun in groups.get(cls, ()):
                nouns.setdefault(str(noun).lower(), (cls, str(language)))
        for connector in groups.get("connectors", ()):
            connectors.update(str(connector).lower().split())
    qualifiers = frozenset(str(q).lower() for q in data.get("code_qualifiers", ()))
    key_qualifiers = frozenset(str(q).lower() for q in data.get("key_qualifiers", ()))
    ordered = sorted(nouns, key=len, reverse=True)
    options = re2.Options()
    options.max_mem = 64 << 20
    regex = re2.compile("|".join(re2.escape(n) for n in ordered), options)
    return _Lexicon(nouns, frozenset(connectors), qualifiers, key_qualifiers, regex)


def prose_languages() -> tuple[str, ...]:
    """The languages the prose lexicon covers."""
    return tuple(sorted({lang for _cls, lang in _lexicon().nouns.values()}))


def _unspaced(char: str) -> bool:
    """Scripts written without spaces between words (CJK, kana, Hangul, Thai)."""
    code = ord(char)
    return (
        0x0E00 <= code <= 0x0E7F
        or 0x2E80 <= code <= 0x9FFF
        or 0xAC00 <= code <= 0xD7AF
        or 0xFF00 <= code <= 0xFFEF
    )


def _latin(char: str) -> bool:
    """ASCII or a Latin letter with diacritics (``à``, ``ñ``, ``ş``): one word's script."""
    code = ord(char)
    return char.isascii() or (char.isalpha() and (code < 0x0250 or 0x1E00 <= code <= 0x1EFF))


_GLUE: Final = frozenset("_-.")


def _bounded(original: str, text: str, start: int, end: int, noun: str, cls: str) -> bool:
    """The noun stands as a word: not inside "passenger", "spinning" or "keyboard".

    A key-class noun may be glued to a vendor name (``weatherbitSECRET``, ``box_token``)
    unless the whole name is a harmless one (``public_key``, ``$PASSWORD``).
    """
    short = len(noun) <= 4 and noun.isascii()
    if short and end < len(text) and text[end].isalpha():
        return False
    if start == 0 or _unspaced(noun[0]):
        return True
    before = text[start - 1]
    if before == "$":
        return False
    if not (before.isalnum() or before in _GLUE):
        return True
    if cls != "key" or not noun.isascii():
        return False
    camel = original[start - 1].islower() and original[start].isupper()
    if before not in _GLUE and not camel:
        return False
    head = start - 1
    while head > 0 and (text[head - 1].isalnum() or text[head - 1] in _GLUE):
        head -= 1
    name = original[head:end]
    return not name.startswith("$") and is_secret_key_name(name)


def _qualified_code(lowered: str, start: int, qualifiers: frozenset[str]) -> bool:
    """``zip code``, ``error code``, ``public key``: a code or key that is no secret."""
    before = lowered[max(0, start - 40) : start].split()
    tail = before[-2:]
    return any(word.strip("-:,.") in qualifiers for word in tail) or (" ".join(tail) in qualifiers)


def _value_after(text: str, lowered: str, end: int, connectors: frozenset[str]) -> tuple[str, bool]:
    """The first token after the noun and its connectors, and whether it was quoted."""
    limit = min(len(text), end + _WINDOW)
    i = end
    # A suffix glued to the noun ("passwords", "şifrem", "비밀번호는", "密码是").
    if i > 0 and _latin(text[i - 1]):
        while i < limit and text[i].isalpha() and _latin(text[i]):
            i += 1
        if i < limit and text[i] in _JOINERS:
            return "", False  # a search or a compound ("q=password+reset&page=2"), not a phrase
    else:
        while i < limit and not text[i].isspace() and not _latin(text[i]):
            i += 1
    for _ in range(_MAX_TOKENS):
        while i < limit and text[i] in _SEPARATORS:
            i += 1
        if i >= limit:
            return "", False
        j = i
        while j < limit and not text[j].isspace():
            j += 1
        token = text[i:j]
        # Quoted: a quote right before the token and its closing twin right after it.
        opener = text[i - 1] if i > 0 else ""
        quoted = opener in _QUOTES and token.rstrip(".,;!?)").endswith(_CLOSING.get(opener, opener))
        if not _latin(token[0]):
            k = 0
            while k < len(token) and not _latin(token[k]):
                k += 1
            lead = token[:k].strip(_TRAILING + "：").lower()
            if k < len(token) and (lead in connectors or _unspaced(token[0])):
                i += k
                continue
            if lead in connectors:
                i = j
                continue
            return "", False
        cut = 0
        while cut < len(token) and _latin(token[cut]):
            cut += 1
        candidate = token[:cut].rstrip(_TRAILING)
        if candidate.lower().rstrip(":") in connectors and cut == len(token):
            i = j
            continue
        if token[0] in "$%{<[" or is_placeholder(token.strip(_TRAILING + "'\"")):
            return "", False  # a variable, template or placeholder, not a value
        return candidate, quoted
    return "", False


def _ordinary(value: str) -> bool:
    """Emails, dates, times, versions, UUIDs, links, name paths, labels: never a password."""
    return bool(
        _EMAIL_RE.match(value)
        or _DATE_RE.match(value)
        or _TIME_RE.match(value)
        or _VERSION_RE.match(value)
        or _UUID_RE.match(value)
        or "://" in value
        or value.lower().startswith("www.")
        or _NAME_PATH_RE.fullmatch(value)
        or (value.endswith((":", "=")) and _LABEL_RE.fullmatch(value[:-1]) is not None)
    )


#: The next label (``remoteRef:``, ``DYNATRACE_API_KEY=``), not a value.
_LABEL_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
#: ``secret/payments``, ``kv/team/db``: a vault or file path made of names.
_NAME_PATH_RE: Final = re.compile(r"[a-z][a-z._-]*(?:/[a-z][a-z._-]*)+/?")


def _password_shaped(value: str, quoted: bool) -> bool:
    if not 5 <= len(value) <= 128 or _ordinary(value) or is_placeholder(value):
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    if letters and digits:
        return True
    if letters and any(c in _SYMBOLS for c in value):
        return True
    if value.isdigit():
        return len(value) >= 6 and len(set(value)) > 1
    if quoted and len(value) >= 6:
        return True
    return (
        len(value) >= 8 and any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    )


def _digits_code(value: str, low: int, high: int) -> bool:
    core = value.replace("-", "").replace(" ", "")
    return core.isdigit() and low <= len(core) <= high and len(set(core)) > 1


def _code_shaped(value: str) -> bool:
    if _digits_code(value, 4, 10):
        return not _DATE_RE.match(value)
    if _CODE_MIX_RE.match(value):
        return sum(c.isdigit() for c in value) >= 2 and any(c.isalpha() for c in value)
    return False


def _judge(cls: str, value: str, quoted: bool) -> bool:
    if cls == "password":
        return _password_shaped(value, quoted)
    if cls == "pin":
        return _digits_code(value, 4, 8)
    if cls == "code":
        return _code_shaped(value)
    if _ordinary(value) or _NAMES_A_KEY_RE.search(value):
        return False  # a label (``refreshInterval:``) or a name for a key (``chain_Key``)
    return len(value) >= 16 and _keyed_confidence(value, "api_key") is not None


_NAMES_A_KEY_RE: Final = re.compile(r"[_.-](?:key|token|secret)s?$", re.IGNORECASE)


#: A lock combination written in groups with spaces between them ("36 24 36").
_SPACED_GROUPS_RE: Final = re.compile(r"[0-9]{1,2}(?:[ \t]+[0-9]{1,2}){2,3}")


def _spaced_groups(text: str, at: int) -> str:
    """The whole spaced combination that starts at ``at``, or ``""`` (also when a longer
    number follows its last group: "36 24 170" is no combination)."""
    match = _SPACED_GROUPS_RE.match(text, at) if at >= 0 else None
    if match is None or text[match.end() : match.end() + 1].isdigit():
        return ""
    return match.group(0)


#: Nouns for a card's security code, whose value is three or four digits.
_CARD_CODES: Final = frozenset({"cvv", "cvc", "cvv2"})


def _phrases(text: str) -> Iterator[ProseSecret]:
    lexicon = _lexicon()
    lowered = text.lower()
    if len(lowered) != len(text):
        text = lowered  # case folding changed lengths: read the folded text
    original = text
    position = 0
    seen: set[tuple[int, str]] = set()
    while position < len(lowered):
        match = lexicon.regex.search(lowered, position)
        if match is None:
            break
        start, end = match.start(), match.end()
        position = start + 1
        noun = match.group(0)
        cls, language = lexicon.nouns[noun]
        if not _bounded(original, lowered, start, end, noun, cls):
            continue
        if cls == "code" and _qualified_code(lowered, start, lexicon.code_qualifiers):
            continue
        if cls == "key" and _qualified_code(lowered, start, lexicon.key_qualifiers):
            continue
        value, quoted = _value_after(text, lowered, end, lexicon.connectors)
        if cls == "pin" and value.isdigit() and len(value) <= 2:
            value = _spaced_groups(text, text.find(value, end)) or value  # "36 24 36"
        card_code = noun in _CARD_CODES and _digits_code(value, 3, 4)  # "cvv 123"
        if card_code or (value and _judge(cls, value, quoted)):
            at = text.find(value, end)
            if (at, value) in seen:
                continue  # "safe combination" and "combination": one value, said once
            seen.add((at, value))
            secret = SecretMatch(_TYPES[cls], at, at + len(value), value, "medium")
            yield ProseSecret(secret, language)


#: ``curl -u user:pass``, ``--user 'api:pass'``, ``sshpass -p pass``, ``mysql -pPASS``:
#: a pasted command line that carries its own password.
_COMMAND_RE: Final = re.compile(
    r"""(?:^|\s)(?:-u|--user|--password|--pass|-p)(?:\s+|=)?['"]?\{?([^\s'":}]{1,64})\}?['"]?"""
    r"""(?::['"]?\{?([^\s'"}]{4,128})\}?['"]?)?"""
)


def _command_secrets(text: str) -> Iterator[ProseSecret]:
    if "-u" not in text and "--user" not in text and "-p" not in text and "--pass" not in text:
        return
    for match in _COMMAND_RE.finditer(text):
        flag = match.group(0).strip().split("=")[0].split()[0].lstrip("'\"")
        user, secret = match.group(1), match.group(2)
        value = secret if flag in ("-u", "--user") else (secret or user)
        if not value or (flag in ("-u", "--user") and secret is None):
            continue
        if value.startswith(("$", "%", "<")) or not _password_shaped(value, quoted=False):
            continue
        at = text.find(value, match.start())
        yield ProseSecret(
            SecretMatch("password-in-prose", at, at + len(value), value, "medium"), ""
        )


#: The value first, the noun after: "hunter2 is my password", "Gat0Negro#2024 (my PIN)",
#: "X, that's my password", "X es mi contraseña", "X ist mein Passwort". RE2: linear time.
_POSTPOSED_RE: Final = re2.compile(
    r"(?i)(?:^|[\s\"'(])([^\s\"'()]{4,128})[\"')]?\s*,?\s*"
    r"(?:(?:is|was|=|:|-|–|—|es|est|ist|é|è|era)\s+)?"
    r"(?:that's\s+|that\s+is\s+|it's\s+|\()?"
    r"(?:my|the|our|mi|la|el|mon|ma|le|mein|meine|das|die|a\s+minha|minha|a\s+mia|la\s+mia|il\s+mio)\s+"
    r"(password|passcode|passphrase|pass\s+phrase|pin|pin\s+code|pin\s+number|contraseña|clave|"
    r"mot\s+de\s+passe|code\s+pin|passwort|kennwort|senha|codice\s+pin)"
    r"\s*(?:[.!?,;)\]]|$|(?:for|para|pour|für|per|de|do|da)\s)"
)
_POSTPOSED_CLASS: Final = {"pin": "pin", "pin code": "pin", "pin number": "pin", "code pin": "pin"}


def _postposed(text: str) -> Iterator[ProseSecret]:
    """A value its writer names afterwards; the class still judges its shape, so "this is
    my password" and "Bitwarden1 is the password manager I use" stay quiet."""
    for match in _POSTPOSED_RE.finditer(text):
        value = match.group(1).rstrip(_TRAILING)
        noun = " ".join(match.group(2).lower().split())
        cls = _POSTPOSED_CLASS.get(noun, "password")
        if value.startswith(("$", "%", "{", "<")) or not _judge(cls, value, quoted=False):
            continue
        at = match.start(1)
        yield ProseSecret(SecretMatch(_TYPES[cls], at, at + len(value), value, "medium"), "")


#: "use X to log in", "try X for the admin account", "X as the password": the value named
#: by what it does. RE2: linear time. Group 1 the value; group 2 set when the phrase names
#: the password itself (then any password shape counts), else the value must look made up.
_USE_RE: Final = re2.compile(
    r"(?i)(?:^|[\s(])(?:use|using|try|enter|type|it's|it\s+is)\s+[\"'`]?([^\s\"'`]{4,128}?)"
    r"[\"'`]?[.,]?\s+(?:(as\s+(?:the|my|your|a|our)\s+(?:new\s+|current\s+|temporary\s+)?"
    r"(?:password|passcode|passphrase|pass\s+phrase|pin|pin\s+code))|"
    r"to\s+(?:log\s*in|login|sign\s*in|signin|sign\s+on|unlock|get\s+in|authenticate)|"
    r"for\s+(?:the\s+|my\s+|your\s+)?(?:login|log\s*in|sign\s*in|admin|root|wi-?fi)\b)"
)
#: A product or service named with a number ("Office365", "Windows11", "OAuth2"): what one
#: uses to log in, not a password, unless the phrase calls it the password.
_PRODUCT_RE: Final = re.compile(r"[A-Z][A-Za-z]*[0-9]{1,4}")


def _used_values(text: str) -> Iterator[ProseSecret]:
    for match in _USE_RE.finditer(text):
        value = match.group(1).rstrip(_TRAILING)
        named = match.group(2) is not None
        cls = "pin" if named and "pin" in match.group(2).lower().split() else "password"
        if value.startswith(("$", "%", "{", "<")) or not _judge(cls, value, quoted=False):
            continue
        if not named and (_PRODUCT_RE.fullmatch(value) or "." in value or "@" in value):
            continue
        at = match.start(1)
        yield ProseSecret(SecretMatch(_TYPES[cls], at, at + len(value), value, "medium"), "")


#: A PostgreSQL password file line, ``host:port:database:user:password`` (``*`` for any).
_PGPASS_RE: Final = re.compile(
    r"^[ \t]*([A-Za-z0-9_.\[\]*-]+):([0-9]{1,5}|\*):([^:\s]+):([^:\s]+):([^\s]{3,128})[ \t]*$",
    re.MULTILINE,
)


def _pgpass_lines(text: str) -> Iterator[ProseSecret]:
    if text.count(":") < 4:
        return
    for match in _PGPASS_RE.finditer(text):
        value = match.group(5)
        if value == "*" or value.startswith(("$", "%", "{", "<")) or is_placeholder(value):
            continue
        at = match.start(5)
        yield ProseSecret(SecretMatch("password-in-prose", at, match.end(5), value, "medium"), "")


def scan_prose(text: str) -> list[ProseSecret]:
    """Every phrase in ``text`` that hands over a password, PIN, code or key.

    Also a pasted command line that carries its own password (``curl -u user:pass``), the
    value written before its noun ("hunter2 is my password"), a value named by its use
    ("use X to log in", "X as the password") and a PostgreSQL password file line.
    """
    if len(text) < 6 or len(text) > 1 << 16:
        return []
    return [
        *_phrases(text),
        *_command_secrets(text),
        *_postposed(text),
        *_used_values(text),
        *_pgpass_lines(text),
    ]
