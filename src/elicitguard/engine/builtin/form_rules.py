"""Checks for form mode (EG2xx): secrets asked for, pasted into answers, or leaked in requests.

The detection lives in :mod:`elicitguard.checks.forms` (the multilingual field classifier),
:mod:`elicitguard.checks.secrets` (the credential catalogue) and :mod:`elicitguard.checks.pii`
(card numbers); this module holds the rules on what a form asks for (EG201, EG203, EG206);
:mod:`~elicitguard.engine.builtin.form_value_rules` those on the values a form carries
(EG205, EG204), and :mod:`~elicitguard.engine.builtin.form_fields` the settings and
verdicts they share. Two decisions:

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

from collections.abc import Iterator, Mapping
from typing import Any, Final

from elicitguard.base.decision import Hit
from elicitguard.base.pointer import escape_pointer
from elicitguard.checks.forms import (
    FieldVerdict,
    can_hold,
    form_asks_for_secret,
)
from elicitguard.engine.builtin.form_fields import (
    FormParams,
    FormSettings,
    field_label,
    fires,
    form_of,
    form_verdicts,
    properties_of,
    settings_of,
)
from elicitguard.engine.builtin.form_value_rules import secret_in_answer, secret_in_request
from elicitguard.engine.context import CheckContext, check
from elicitguard.protocol.items import Item
from elicitguard.protocol.versions import V2025_06_18

__all__ = [
    "WHAT",
    "FormParams",
    "FormSettings",
    "secret_in_answer",
    "secret_in_request",
    "settings_of",
]

Params = Mapping[str, Any]

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
    form = form_of(item)
    if form is None:
        return
    settings = settings_of(params)
    for verdict in form_verdicts(item, ctx, settings, *form):
        if verdict.secret_class is not None and fires(verdict, settings):
            yield Hit(
                pointer=_schema_pointer(item, verdict),
                field=_redactable(verdict),
                args={
                    "field": field_label(verdict.field),
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
    form = form_of(item)
    if form is None:
        return
    settings = settings_of(params)
    for verdict in form_verdicts(item, ctx, settings, *form):
        if verdict.sensitive_class is None or not fires(verdict, settings):
            continue
        if verdict.secret_class is not None:
            continue  # EG201 reports this field
        yield Hit(
            pointer=_schema_pointer(item, verdict),
            field=_redactable(verdict),
            args={
                "field": field_label(verdict.field),
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
    form = form_of(item)
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
        for key, prop in properties_of(schema).items()
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
