"""Checks for form mode (EG2xx): secrets asked for, pasted into answers, or leaked in requests.

The detection lives in :mod:`elicitguard.checks.forms` (the multilingual field classifier),
:mod:`elicitguard.checks.secrets` (the credential catalogue) and :mod:`elicitguard.checks.pii`
(card numbers); this module adapts them to rules and owns two decisions:

* **Which confidence fires.** The classifier says ``high`` when key, title, format or length
  agree, ``medium`` for one strong signal (a title, a key) and ``low`` for a lone weak word or a
  description. Only ``medium`` and above fire by default (param ``min_confidence``): a guard
  that flags harmless fields gets switched off, and a ``low`` verdict is one weak word.
* **Policy knobs.** Every form rule takes the same params, so ``EG2*: {params: ...}`` sets
  them all: ``languages`` (lexicons in use), ``extra_words`` (``{lang: {class: [words]}}``),
  ``allowed_fields`` (property keys or ``/properties/...`` pointers the policy declares
  harmless) and ``min_confidence``. Params arrive as dicts; they are validated and turned
  into a hashable :class:`FormSettings` once per compiled rule, and the verdicts of one form
  are computed once per evaluation, however many rules read them.

No ``Hit.args`` entry ever holds a value from traffic: only property keys (truncated),
class descriptions, languages and catalogue format names. ``Hit.value`` carries the offending
value for the keyed fingerprint only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, Literal

import orjson
from pydantic import model_validator

from elicitguard.base.decision import Hit
from elicitguard.base.pointer import escape_pointer, unescape_pointer
from elicitguard.checks.forms import (
    ALL_LANGUAGES,
    FieldVerdict,
    can_hold,
    classify_form,
    form_asks_for_secret,
)
from elicitguard.checks.pii import pii_context, scan_pii
from elicitguard.checks.secrets import (
    SecretMatch,
    catalogue,
    hidden_secret,
    is_placeholder,
    nested_secret,
    scan_text,
    scan_value,
    split_secret,
)
from elicitguard.engine.context import CheckContext, CheckParams, check
from elicitguard.protocol.items import Item
from elicitguard.protocol.versions import V2025_06_18

__all__ = ["FormSettings", "settings_of"]

Params = Mapping[str, Any]

_RANK: Final = {"low": 0, "medium": 1, "high": 2}
_PARAM_KEYS: Final = frozenset(("languages", "extra_words", "allowed_fields", "min_confidence"))
_MAX_LABEL: Final = 64
_MAX_DEPTH: Final = 12
_MAX_BLOB: Final = 1 << 20
_CACHED_BLOB: Final = 16 << 10  # forms cached across evaluations are at most 16 KiB

WHAT: Final[dict[str, str]] = {
    "password": "a password or PIN",
    "api_key": "an API key or access token",
    "private_key": "a private key or recovery phrase",
    "otp": "a one-time or two-factor code",
    "card_number": "a payment card number",
    "cvv": "a card security code (CVV/CVC)",
    "security_answer": "a security-question answer",
    "government_id": "a government ID number",
    "bank_account": "a bank account number",
    "health": "health data",
}
"""How messages name each class of the classifier."""

#: The key name that gives the secret catalogue's key-name layer the same support as a
#: field the classifier recognised in any language ("API-Schlüssel" -> ``api_key``).
#: One-time codes expire within minutes and security answers are ordinary words: an answer
#: to those fields is not reported (EG201 reports the form that asked).
_KEY_HINT: Final[dict[str, str]] = {
    "password": "password",
    "api_key": "api_key",
    "private_key": "private_key",
}

#: Card numbers that payment processors publish for testing; never a live credential.
_TEST_PANS: Final = frozenset(
    (
        "4111111111111111",
        "4242424242424242",
        "4012888888881881",
        "4000056655665556",
        "5555555555554444",
        "5105105105105100",
        "5200828282828210",
        "378282246310005",
        "371449635398431",
        "6011111111111117",
        "3530111333300000",
    )
)
_SEED_PHRASE: Final = re.compile(r"^\s*(?:[a-z]{3,8}\s+){11,23}[a-z]{3,8}\s*$")
_SEED_WORDS: Final = frozenset((12, 15, 18, 21, 24))
_CVV: Final = re.compile(r"^\s*[0-9]{3,4}\s*$")


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True, slots=True)
class FormSettings:
    """The form rules' params, validated and hashable (a cache key for verdicts)."""

    languages: tuple[str, ...]
    extra: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...]
    allowed: frozenset[str]
    min_rank: int
    extra_words: Mapping[str, Mapping[str, Sequence[str]]] = field(
        default_factory=dict, compare=False, hash=False
    )


def _strings(value: object, where: str) -> tuple[str, ...]:
    """A list of strings from a param, or a clear error."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        msg = f"form rule param {where} must be a list of strings"
        raise ValueError(msg)
    return tuple(value)


def _parse(params: Params) -> FormSettings:
    """Validate params (names, types, languages) and freeze them."""
    unknown = sorted(set(params) - _PARAM_KEYS)
    if unknown:
        msg = f"unknown form rule param(s) {', '.join(unknown)}; use: {', '.join(sorted(_PARAM_KEYS))}"
        raise ValueError(msg)
    languages = _strings(params.get("languages", list(ALL_LANGUAGES)), "`languages`")
    if not languages:
        msg = "form rule param `languages` is empty; name at least one language"
        raise ValueError(msg)
    raw_extra = params.get("extra_words") or {}
    if not isinstance(raw_extra, Mapping) or not all(
        isinstance(groups, Mapping) for groups in raw_extra.values()
    ):
        msg = "form rule param `extra_words` must map languages to {class: [words]}"
        raise ValueError(msg)
    extra_words = {
        str(lang): {
            str(cls): _strings(words, f"`extra_words.{lang}.{cls}`")
            for cls, words in groups.items()
        }
        for lang, groups in raw_extra.items()
    }
    frozen = tuple(
        (lang, tuple(sorted(groups.items()))) for lang, groups in sorted(extra_words.items())
    )
    allowed = frozenset(_strings(params.get("allowed_fields", []), "`allowed_fields`"))
    level = params.get("min_confidence", "medium")
    if level not in _RANK:
        msg = f"form rule param `min_confidence` is {level!r}; use low, medium or high"
        raise ValueError(msg)
    settings = FormSettings(languages, frozen, allowed, _RANK[level], extra_words)
    # Compile the lexicons now: an unknown language or class fails here, named.
    classify_form({}, languages=settings.languages, extra_words=settings.extra_words)
    return settings


class FormParams(CheckParams):
    """The params every form rule takes (``EG2*: {params: ...}`` sets them all)."""

    languages: list[str] | None = None
    extra_words: dict[str, dict[str, list[str]]] | None = None
    allowed_fields: list[str] | None = None
    min_confidence: Literal["low", "medium", "high"] | None = None

    @model_validator(mode="after")
    def _compiles(self) -> FormParams:
        """The lexicons compile: an unknown language or word class is named now."""
        _parse(self.model_dump(exclude_none=True))
        return self


_SETTINGS: dict[int, tuple[Params, FormSettings]] = {}
_SETTINGS_MAX: Final = 256


def settings_of(params: Params) -> FormSettings:
    """The settings of one compiled rule's params (parsed once per params object).

    The cache keeps a reference to the params object it was keyed on, so an ``id`` is never
    reused while its entry lives.
    """
    held = _SETTINGS.get(id(params))
    if held is not None and held[0] is params:
        return held[1]
    settings = _parse(params)
    if len(_SETTINGS) >= _SETTINGS_MAX:
        _SETTINGS.pop(next(iter(_SETTINGS)), None)
    _SETTINGS[id(params)] = (params, settings)
    return settings


# --------------------------------------------------------------------------- helpers


def _label(key: str) -> str:
    """A property key fit for a message: quoted, truncated, no control characters."""
    clean = "".join(c if c.isprintable() else "?" for c in key[:_MAX_LABEL])
    return repr(clean + ("…" if len(key) > _MAX_LABEL else ""))


def _form(item: Item) -> tuple[Mapping[str, Any], str] | None:
    """The request's ``requestedSchema`` and ``message``, when it has a schema."""
    data = item.data
    if not isinstance(data, Mapping):
        return None
    schema = data.get("requestedSchema")
    if not isinstance(schema, Mapping):
        return None
    message = data.get("message")
    return schema, message if isinstance(message, str) else ""


def _properties(schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return {}
    return {str(k): v for k, v in props.items() if isinstance(v, Mapping)}


def _verdicts(
    item: Item, ctx: CheckContext, settings: FormSettings, schema: Mapping[str, Any], message: str
) -> tuple[FieldVerdict, ...]:
    """The classifier's verdicts for one form: once per evaluation, and cached across them.

    Servers send the same forms again and again; keyed on the serialised schema, a repeated
    form costs one ``orjson.dumps`` instead of a walk over every property.
    """
    key = (id(item), id(schema), settings)
    memo: dict[Any, tuple[FieldVerdict, ...]] = ctx.cache.setdefault("forms.verdicts", {})
    cached = memo.get(key)
    if cached is None:
        try:
            blob = orjson.dumps(schema)
        except (TypeError, orjson.JSONEncodeError):
            cached = _classify(schema, message, settings)
        else:
            cached = (
                _classify_blob(blob, message, settings)
                if len(blob) + len(message) <= _CACHED_BLOB
                else _classify(schema, message, settings)
            )
        memo[key] = cached
    return cached


@lru_cache(maxsize=512)
def _classify_blob(blob: bytes, message: str, settings: FormSettings) -> tuple[FieldVerdict, ...]:
    return _classify(orjson.loads(blob), message, settings)


def _classify(
    schema: Mapping[str, Any], message: str, settings: FormSettings
) -> tuple[FieldVerdict, ...]:
    return tuple(
        classify_form(
            schema,
            message=message or None,
            languages=settings.languages,
            extra_words=settings.extra_words,
            allowed_fields=settings.allowed,
        )
    )


def _fires(verdict: FieldVerdict, settings: FormSettings) -> bool:
    return _RANK[verdict.confidence] >= settings.min_rank


def _fix(era: str | None) -> str:
    """What to do instead, in the words of the era."""
    if era == V2025_06_18:
        return (
            "2025-06-18 forbids asking for it through elicitation at all; collect it out of "
            "band, or move to 2025-11-25 or later and use URL mode"
        )
    return "collect it through URL mode, on your own page, where the client never sees it"


_DISGUISE: Final = (
    "; its words are disguised (look-alike letters, digits for letters, spaced letters or "
    "HTML references), itself a sign of evasion"
)


def _ask_place(source: str) -> str:
    """How a message names the place of an ask."""
    if source == "message":
        return "The message"
    if source.endswith("/description"):
        return "A field description"
    return "An option label"


def _schema_pointer(item: Item, verdict: FieldVerdict) -> str:
    return f"{item.pointer}/requestedSchema{verdict.pointer}"


def _redactable(verdict: FieldVerdict) -> str | None:
    """The property a ``redact`` action may remove: a top-level one (forms are flat)."""
    if verdict.pointer == f"/properties/{escape_pointer(verdict.field)}":
        return verdict.field
    return None


# --------------------------------------------------------------------------- EG201 / EG203


@check("forms.secret_fields", pure=True, params=FormParams)
def secret_fields(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG201: a form property asks for a password, key, token, code or card credential."""
    form = _form(item)
    if form is None:
        return
    settings = settings_of(params)
    for verdict in _verdicts(item, ctx, settings, *form):
        if verdict.secret_class is not None and _fires(verdict, settings):
            yield Hit(
                pointer=_schema_pointer(item, verdict),
                field=_redactable(verdict),
                args={
                    "field": _label(verdict.field),
                    "what": WHAT.get(verdict.secret_class, "a secret"),
                    "language": verdict.language or "format",
                    "confidence": verdict.confidence,
                    "disguise": _DISGUISE if verdict.disguised else "",
                    "fix": _fix(item.era),
                },
            )


@check("forms.sensitive_fields", pure=True, params=FormParams)
def sensitive_fields(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG203: a form property collects a government id, bank account or health data."""
    form = _form(item)
    if form is None:
        return
    settings = settings_of(params)
    for verdict in _verdicts(item, ctx, settings, *form):
        if verdict.sensitive_class is None or not _fires(verdict, settings):
            continue
        if verdict.secret_class is not None:
            continue  # EG201 reports this field
        yield Hit(
            pointer=_schema_pointer(item, verdict),
            field=_redactable(verdict),
            args={
                "field": _label(verdict.field),
                "what": WHAT.get(verdict.sensitive_class, "sensitive personal data"),
                "language": verdict.language or "format",
            },
        )


# --------------------------------------------------------------------------- EG206


@check("forms.secret_asked_in_message", pure=True, params=FormParams)
def secret_asked_in_message(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG206: a form-mode message tells the user to type or paste a secret.

    Only when the form has a field that could carry it: "enter your API key on the page we
    opened, then tick the box" asks for the key somewhere else.
    """
    form = _form(item)
    if form is None:
        return
    schema, message = form
    settings = settings_of(params)
    ask = form_asks_for_secret(
        schema, message, languages=settings.languages, extra_words=settings.extra_words
    )
    if ask is None:
        return
    carriers = [
        key
        for key, prop in _properties(schema).items()
        if can_hold(prop, ask.secret_class)
        and key not in settings.allowed
        and "/properties/" + escape_pointer(key) not in settings.allowed
    ]
    if not carriers:
        return
    pointer = (
        item.pointer + "/message"
        if ask.source == "message"
        else f"{item.pointer}/requestedSchema{ask.source}"
    )
    yield Hit(
        pointer=pointer,
        args={
            "where": _ask_place(ask.source),
            "what": WHAT.get(ask.secret_class, "a secret"),
            "language": ask.language or "?",
            "disguise": _DISGUISE if ask.disguised else "",
            "fix": _fix(item.era),
        },
    )


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
    return max(kept, key=lambda m: _RANK[m.confidence]) if kept else None


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
    return _blob_scan(blob) if len(blob) <= _CACHED_BLOB else _blob_scan.__wrapped__(blob)


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
        return f"{noun} of field {_label(name)}"
    return "The request"


@check("forms.secret_in_request", pure=True, params=FormParams)
def secret_in_request(item: Item, ctx: CheckContext, params: Params) -> Iterator[Hit]:
    """EG205: a default, enum value or any text of a form request carries a credential."""
    data = item.data
    if not isinstance(data, Mapping):
        return
    settings = settings_of(params)
    hints: dict[str, str] = {}
    form = _form(item)
    if form is not None:
        for verdict in _verdicts(item, ctx, settings, *form):
            hint = _KEY_HINT.get(verdict.secret_class or "")
            if hint and _fires(verdict, settings):
                hints[verdict.field] = hint
    schema = data.get("requestedSchema")
    base = f"{item.pointer}/requestedSchema/properties/"
    for key, text in _defaults(schema):
        found = scan_value(text, key)
        if not found and key in hints:
            found = scan_value(text, hints[key])
        match = _best(found) or _hidden(text, hints.get(key, key))
        if match is not None:
            pointer = f"{base}{escape_pointer(key)}/default"
            yield _request_hit(item, pointer, match)
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
        if match.type == "card_number" and digits not in _TEST_PANS:
            return SecretMatch("payment-card-number", 0, len(text), match.value, "high")
    return None


def _class_specific(text: str, kind: str | None) -> SecretMatch | None:
    """Shapes only the field's class makes meaningful: a seed phrase, a CVV."""
    phrase = kind == "private_key" and _SEED_PHRASE.match(text) is not None
    if phrase and len(text.split()) in _SEED_WORDS and not is_placeholder(text):
        return SecretMatch("recovery-phrase", 0, len(text), text, "high")
    if kind == "cvv" and _CVV.match(text) and len(set(text.strip())) > 1:
        return SecretMatch("card-security-code", 0, len(text), text, "high")
    return None


_ANSWER_NAMES: Final = {
    "payment-card-number": "a payment card number",
    "recovery-phrase": "a wallet recovery phrase",
    "card-security-code": "a card security code",
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
    fired = verdict is not None and _fires(verdict, settings)
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
    verdicts = {v.field: v for v in _verdicts(item, ctx, settings, schema, "")}
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
        args={"field": _label(name), "what": _ANSWER_NAMES.get(match.type) or _name(match.type)},
        value=match.value,
        field=name,
    )
