"""Secrets in a form's values (EG205, EG204): in the request it sends, in the answer it gets.

Why: a form request can carry a live credential itself (a default, an option, a
description with a token pasted in: EG205), and a user can paste one into an answer where
the form asked for no secret, or into the field that asked (EG204). Both read the values
with the secret catalogue (:mod:`elicitguard.checks.secrets`) and, for answers, the
classifier's verdict for the field (:func:`~elicitguard.engine.builtin.form_fields.form_verdicts`).
No ``Hit.args`` entry holds a value; ``Hit.value`` carries it for the keyed fingerprint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, Final

import orjson

from elicitguard.base.decision import Hit
from elicitguard.base.pointer import escape_pointer, unescape_pointer
from elicitguard.checks.forms import (
    FieldVerdict,
)
from elicitguard.checks.pii import pii_context, scan_pii
from elicitguard.checks.secrets import (
    PUBLISHED_TEST_PANS,
    SecretMatch,
    catalogue,
    hidden_secret,
    is_placeholder,
    nested_secret,
    scan_text,
    scan_value,
    split_secret,
)
from elicitguard.engine.builtin.form_fields import (
    CACHED_FORM_BYTES,
    RANK,
    FormParams,
    FormSettings,
    field_label,
    fires,
    form_of,
    form_verdicts,
    settings_of,
)
from elicitguard.engine.context import CheckContext, check
from elicitguard.protocol.items import Item

__all__: list[str] = []

Params = Mapping[str, Any]
_MAX_DEPTH: Final = 12
_MAX_BLOB: Final = 1 << 20

#: The key name that gives the secret catalogue's key-name layer the same support as a
#: field the classifier recognised in any language ("API-Schlüssel" -> ``api_key``).
#: One-time codes expire within minutes and security answers are ordinary words: an answer
#: to those fields is not reported (EG201 reports the form that asked).
_KEY_HINT: Final[dict[str, str]] = {
    "password": "password",
    "api_key": "api_key",
    "private_key": "private_key",
}

_SEED_PHRASE: Final = re.compile(r"^\s*(?:[a-z]{3,8}\s+){11,23}[a-z]{3,8}\s*$")
_SEED_WORDS: Final = frozenset((12, 15, 18, 21, 24))
_CVV: Final = re.compile(r"^\s*[0-9]{3,4}\s*$")
#: A one-time code as people type it: 4-10 digits, perhaps grouped ("482 913", "4829-13").
_ONE_TIME_CODE: Final = re.compile(r"^\s*[0-9](?:[ -]?[0-9]){3,9}\s*$")


# --------------------------------------------------------------------------- EG205


def _entry_names() -> dict[str, str]:
    names = {entry.id: entry.name for entry in catalogue()}
    names["password-under-key"] = "a password (the field asks for one)"
    names["secret-under-key"] = "a credential-shaped value (the field asks for a key or token)"
    return names


_NAMES: dict[str, str] = {}


def _name(match_type: str) -> str:
    """A readable name for a catalogue format (never the value)."""
    if not _NAMES:
        _NAMES.update(_entry_names())
    if match_type in _ANSWER_NAMES:
        return _ANSWER_NAMES[match_type]
    if match_type.startswith("community:"):
        return f"a credential ({match_type.removeprefix('community:')[:40]}, community catalogue)"
    name = _NAMES.get(match_type, match_type)
    if name.startswith(("a ", "an ")):
        return name
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def _best(matches: Sequence[SecretMatch]) -> SecretMatch | None:
    """The most certain match that is at least of medium confidence."""
    kept = [m for m in matches if m.confidence in ("high", "medium")]
    return max(kept, key=lambda m: RANK[m.confidence]) if kept else None


_STRUCTURAL: Final = frozenset(("type", "format", "$schema", "required", "$id"))
_MIN_SCAN: Final = 8  # the catalogue's shortest credential


def _request_strings(value: Any, pointer: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    """Every string of a schema worth scanning, as (pointer, text); defaults excluded.

    Structural keywords (``type``, ``format``, ``required``) and strings shorter than the
    shortest credential are skipped; property defaults are scanned with their key name by
    the caller.
    """
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, str):
        if len(value) >= _MIN_SCAN:
            yield pointer, value
    elif isinstance(value, Mapping):
        for key, child in value.items():
            if not isinstance(key, str) or key in _STRUCTURAL:
                continue
            child_ptr = f"{pointer}/{escape_pointer(key)}"
            if key == "properties" and isinstance(child, Mapping):
                for name, prop in child.items():
                    prop_ptr = f"{child_ptr}/{escape_pointer(str(name))}"
                    if isinstance(prop, Mapping):
                        rest = {k: v for k, v in prop.items() if k != "default"}
                        yield from _request_strings(rest, prop_ptr, depth + 2)
            else:
                yield from _request_strings(child, child_ptr, depth + 1)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _request_strings(child, f"{pointer}/{index}", depth + 1)


def _defaults(schema: Any) -> Iterator[tuple[str, str]]:
    """(property key, string default) of each property."""
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if isinstance(props, Mapping):
        for name, prop in props.items():
            if isinstance(prop, Mapping) and isinstance(prop.get("default"), str):
                yield str(name), prop["default"]


def _blob_has_secret(data: Mapping[str, Any]) -> bool:
    """One catalogue pass over the whole request as JSON: the usual answer is "nothing".

    Only when it finds something (or the request is too big to judge at once) are the
    request's strings scanned one by one to say where. Repeated requests hit the cache.
    """
    try:
        blob = orjson.dumps(data)
    except (TypeError, orjson.JSONEncodeError):
        return True
    if len(blob) > _MAX_BLOB:
        return True
    return _blob_scan(blob) if len(blob) <= CACHED_FORM_BYTES else _blob_scan.__wrapped__(blob)


@lru_cache(maxsize=512)
def _blob_scan(blob: bytes) -> bool:
    return _best(scan_text(blob.decode())) is not None


def _where(pointer: str, base: str) -> str:
    """Where in the request a string sits, for the message."""
    rest = pointer.removeprefix(base)
    if rest == "/message":
        return "The message"
    parts = rest.split("/")
    if len(parts) >= 4 and parts[1:3] == ["requestedSchema", "properties"]:
        name = unescape_pointer(parts[3])
        what = parts[4] if len(parts) > 4 else "schema"
        noun = {"default": "The default", "enum": "An enum value", "title": "The title"}.get(
            what, f"The `{what[:20]}`"
        )
        return f"{noun} of field {field_label(name)}"
    return "The request"


@check("forms.secret_in_request", pure=True, params=FormParams)
def secret_in_request(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG205: a default, enum value or any text of a form request carries a credential."""
    data = item.data
    if not isinstance(data, Mapping):
        return
    settings = settings_of(params)
    hints: dict[str, str] = {}
    form = form_of(item)
    if form is not None:
        for verdict in form_verdicts(item, ctx, settings, *form):
            hint = _KEY_HINT.get(verdict.secret_class or "")
            if hint and fires(verdict, settings):
                hints[verdict.field] = hint
    schema = data.get("requestedSchema")
    base = f"{item.pointer}/requestedSchema/properties/"
    defaults = list(_defaults(schema))
    flagged: set[str] = set()
    for key, text in defaults:
        found = scan_value(text, key)
        if not found and key in hints:
            found = scan_value(text, hints[key])
        match = _best(found) or _hidden(text, hints.get(key, key))
        if match is not None:
            flagged.add(key)
            pointer = f"{base}{escape_pointer(key)}/default"
            yield _request_hit(item, pointer, match)
    # A credential split over adjacent defaults, read joined as answers are (EG204).
    split = split_secret([(key, text) for key, text in defaults if key not in flagged])
    if split is not None:
        pointer = f"{base}{escape_pointer(split[0])}/default"
        yield _request_hit(item, pointer, split[1].match)
    for pointer, text in _option_values(schema, base):
        match = _hidden(text, None)
        if match is not None:
            yield _request_hit(item, pointer, match)
    if not _blob_has_secret(data):
        return
    strings: list[tuple[str, str]] = []
    message = data.get("message")
    if isinstance(message, str):
        strings.append((item.pointer + "/message", message))
    if isinstance(schema, Mapping):
        strings.extend(_request_strings(schema, item.pointer + "/requestedSchema"))
    for pointer, text in strings:
        match = _best(scan_text(text))
        if match is not None:
            yield _request_hit(item, pointer, match)


def _hidden(text: str, key: str | None) -> SecretMatch | None:
    """A credential glued, encoded, nested as JSON or written as prose in ``text``."""
    found = hidden_secret(text, key)
    return found.match if found is not None else None


_OPTION_KEYS: Final = ("enum", "oneOf", "anyOf", "examples", "const")


def _option_values(schema: Any, base: str) -> Iterator[tuple[str, str]]:
    """(pointer, text) of each property's enum, ``oneOf``/``anyOf`` const and examples.

    Bounded: at most 64 options per property. Titles are the form side's business; the
    values are what the client submits when the user picks one.
    """
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return
    for name, prop in props.items():
        if not isinstance(prop, Mapping):
            continue
        where = f"{base}{escape_pointer(str(name))}"
        targets = [prop, prop.get("items")]
        for target in targets:
            if not isinstance(target, Mapping):
                continue
            for keyword in _OPTION_KEYS:
                options = target.get(keyword)
                if isinstance(options, str):
                    options = [options]
                if not isinstance(options, list):
                    continue
                for index, option in enumerate(options[:64]):
                    value = option.get("const") if isinstance(option, Mapping) else option
                    if isinstance(value, str) and len(value) >= 6:
                        yield f"{where}/{keyword}/{index}", value


def _request_hit(item: Item, pointer: str, match: SecretMatch) -> Hit:
    return Hit(
        pointer=pointer,
        args={"where": _where(pointer, item.pointer), "what": _name(match.type)},
        value=match.value,
    )


# --------------------------------------------------------------------------- EG204


def _answer_strings(value: Any) -> list[str]:
    """The text a content value carries (multi-select arrays included; numbers as digits)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, int) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)][:64]
    return []


def _answer_schema(item: Item, content: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema the answer fills; without one, its keys alone are classified."""
    if isinstance(item.schema, Mapping) and isinstance(item.schema.get("properties"), Mapping):
        return item.schema
    return {"type": "object", "properties": {str(k): {"type": "string"} for k in content}}


def _card(text: str, key: str, kind: str | None) -> SecretMatch | None:
    """A Luhn-valid card number where the field is about cards (published test cards skipped)."""
    if kind != "card_number" and pii_context(key) != "card":
        return None
    for match in scan_pii(text, "card_number"):
        digits = re.sub(r"[ -]", "", match.value)
        if match.type == "card_number" and digits not in PUBLISHED_TEST_PANS:
            return SecretMatch("payment-card-number", 0, len(text), match.value, "high")
    return None


def _class_specific(text: str, kind: str | None) -> SecretMatch | None:
    """Shapes only the field's class makes meaningful: a seed phrase, a CVV, a one-time
    code (what a real-time phishing relay asks for: the code is live while it is typed)."""
    phrase = kind == "private_key" and _SEED_PHRASE.match(text) is not None
    if phrase and len(text.split()) in _SEED_WORDS and not is_placeholder(text):
        return SecretMatch("recovery-phrase", 0, len(text), text, "high")
    if kind == "cvv" and _CVV.match(text) and len(set(text.strip())) > 1:
        return SecretMatch("card-security-code", 0, len(text), text, "high")
    if kind == "otp" and _ONE_TIME_CODE.match(text):
        digits = re.sub(r"[ -]", "", text.strip())
        if len(set(digits)) > 1:
            return SecretMatch("one-time-code", 0, len(text), text, "high")
    return None


_ANSWER_NAMES: Final = {
    "payment-card-number": "a payment card number",
    "recovery-phrase": "a wallet recovery phrase",
    "card-security-code": "a card security code",
    "one-time-code": "a one-time code",
    "password-in-prose": "a password written out in a sentence",
    "pin-in-prose": "a PIN written out in a sentence",
    "code-in-prose": "a one-time or security code written out in a sentence",
    "key-in-prose": "a key or token written out in a sentence",
}


def _answer_match(
    text: str, key: str, verdict: FieldVerdict | None, settings: FormSettings
) -> SecretMatch | None:
    """The credential in one answer value: catalogue formats, then what the field supports.

    A field the policy allows keeps only the catalogue (a GitHub token is a token under any
    name); elsewhere the key name, or the class the classifier saw in the field's title in
    any language, lets a credential-shaped value count.
    """
    if key in settings.allowed or "/properties/" + escape_pointer(key) in settings.allowed:
        return _best(scan_value(text))
    fired = verdict is not None and fires(verdict, settings)
    secret_class = verdict.secret_class if verdict is not None and fired else None
    found = scan_value(text, key)
    hint = _KEY_HINT.get(secret_class or "")
    if not found and hint is not None:
        found = scan_value(text, hint)
    match = _best(found)
    if match is not None:
        return match
    return (
        _class_specific(text, secret_class)
        or _card(text, key, secret_class)
        or _hidden(text, hint or key)
    )


@check("forms.secret_in_answer", pure=True, params=FormParams)
def secret_in_answer(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG204: the content of an answer carries a credential (whatever the ``action``)."""
    data = item.data
    if not isinstance(data, Mapping):
        return
    content = data.get("content")
    if not isinstance(content, Mapping) or not content:
        return
    settings = settings_of(params)
    schema = _answer_schema(item, content)
    verdicts = {v.field: v for v in form_verdicts(item, ctx, settings, schema, "")}
    flagged: set[str] = set()
    for key, value in content.items():
        name = str(key)
        match = None
        for text in _answer_strings(value):
            match = _answer_match(text, name, verdicts.get(name), settings)
            if match is not None:
                break
        if match is None and isinstance(value, Mapping | list):
            nested = nested_secret(value, name)
            match = nested.match if nested is not None else None
        if match is not None:
            flagged.add(name)
            yield _answer_hit(item, name, match)
    split = split_secret(
        [(str(k), v) for k, v in content.items() if isinstance(v, str) and str(k) not in flagged]
    )
    if split is not None:
        yield _answer_hit(item, split[0], split[1].match)


def _answer_hit(item: Item, name: str, match: SecretMatch) -> Hit:
    return Hit(
        pointer=f"{item.pointer}/content/{escape_pointer(name)}",
        args={
            "field": field_label(name),
            "what": _ANSWER_NAMES.get(match.type) or _name(match.type),
        },
        value=match.value,
        field=name,
    )
