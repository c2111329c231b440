"""Classify the fields of an elicitation form: does it ask for a secret or sensitive data?

The spec's first MUST for form mode (EL-01, EL-02) is that servers never collect passwords,
API keys, access tokens or payment credentials through it. Keyword lists alone catch few of
those forms outside English and flag many harmless ones (DETECTION.md section 5), so this
module combines a lexicon per language (``checks/data/lexicon/*.yaml``) with the shape of
each property: its key split into words, title, description, ``format``, ``writeOnly``,
length bounds, default and type. Everything here is pure and cached; rules EG201, EG203 and
EG206 call it and decide what to do with the verdicts.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from elicitguard.base.pointer import escape_pointer
from elicitguard.checks.forms._classify import FormContext, classify_field
from elicitguard.checks.forms._lexicon import (
    Lexicon,
    compile_lexicon,
    freeze_extra,
    shipped_languages,
    whole_text,
)
from elicitguard.checks.forms._message import (
    find_ask,
    is_about_password,
    mentions_otp_context,
)
from elicitguard.checks.forms._reveal import readings as disguised_readings
from elicitguard.checks.forms._scan import scan
from elicitguard.checks.forms._shape import Shape, labels_of, shape_of, texts_of
from elicitguard.checks.forms._text import normalize
from elicitguard.checks.forms._types import (
    ALL_LANGUAGES,
    FULL_LANGUAGES,
    LABEL_LANGUAGES,
    SECRET_CLASSES,
    SENSITIVE_CLASSES,
    FieldVerdict,
    MessageAsk,
)

__all__ = [
    "ALL_LANGUAGES",
    "FULL_LANGUAGES",
    "LABEL_LANGUAGES",
    "SECRET_CLASSES",
    "SENSITIVE_CLASSES",
    "FieldVerdict",
    "MessageAsk",
    "can_hold",
    "classify_form",
    "compile_lexicon",
    "disguised_readings",
    "form_asks_for_secret",
    "message_asks_for_secret",
    "shipped_languages",
    "warm_up",
]

ExtraWords = Mapping[str, Mapping[str, Sequence[str]]]


def _lexicon(languages: Sequence[str], extra_words: ExtraWords | None) -> Lexicon:
    """The compiled lexicon for these settings (built once, then cached)."""
    return compile_lexicon(tuple(languages), freeze_extra(extra_words))


def message_asks_for_secret(
    message: str,
    *,
    languages: Sequence[str] = ALL_LANGUAGES,
    extra_words: ExtraWords | None = None,
) -> MessageAsk | None:
    """Whether ``message`` tells the user to type or paste a secret (for EG206, form mode).

    Args:
        message: the ``message`` of a form-mode elicitation request.
        languages: lexicons to use; codes as in ``ALL_LANGUAGES``.
        extra_words: ``{lang: {class_or_list: [words]}}`` added to the lexicons.
    """
    return find_ask(_lexicon(languages, extra_words), message)


def form_asks_for_secret(
    requested_schema: Mapping[str, object],
    message: str | None,
    *,
    languages: Sequence[str] = ALL_LANGUAGES,
    extra_words: ExtraWords | None = None,
) -> MessageAsk | None:
    """Whether the text a user reads tells them to type a secret (for EG206, form mode).

    The message first, then each property's description, option labels (``enumNames``,
    ``oneOf``/``anyOf`` titles, enum values) and text default: a client shows them all (a
    default as the field's prefilled text), so an ask placed in a label or a default is an ask. ``source`` of the result names where (``message`` or a pointer suffix).
    """
    lex = _lexicon(languages, extra_words)
    return _form_ask(lex, requested_schema, message)


def _form_ask(
    lex: Lexicon, requested_schema: Mapping[str, object], message: str | None
) -> MessageAsk | None:
    ask = find_ask(lex, message) if message else None
    if ask is not None and not (ask.verbless and _names_attributes_only(lex, requested_schema)):
        return ask
    for key, prop in _properties(requested_schema):
        pointer = "/properties/" + escape_pointer(key)
        _, desc = texts_of(prop)
        texts = ([("/description", desc)] if desc else []) + list(labels_of(prop))
        default = prop.get("default")
        if isinstance(default, str) and default.strip():
            texts.append(("/default", default))
        for suffix, text in texts:
            found = find_ask(lex, text, pointer + suffix)
            if found is not None:
                return found
    return None


def _names_attributes_only(lex: Lexicon, requested_schema: Mapping[str, object]) -> bool:
    """Whether every field's visible label names an attribute of a secret, never the secret
    ("Key name", "Nombre de la clave", "Token label"): then a verbless message naming the
    secret ("New API key") is the form's heading, not an ask."""
    props = _properties(requested_schema)
    if not props:
        return False
    for key, prop in props:
        title, _ = texts_of(prop)
        found = scan(lex, title or key)
        if found.hits or not found.suppressed:
            return False
    return True


def warm_up(languages: Sequence[str] = ALL_LANGUAGES) -> None:
    """Compile the lexicons and load the look-alike table now, not on the first form."""
    from elicitguard.checks.forms._reveal import warm_up as _reveal_warm_up

    _lexicon(languages, None)
    _reveal_warm_up()


def _properties(requested_schema: Mapping[str, object]) -> list[tuple[str, Mapping[str, object]]]:
    """The properties of the schema that are objects (others cannot be classified)."""
    props = requested_schema.get("properties")
    if not isinstance(props, Mapping):
        return []
    return [(str(k), v) for k, v in props.items() if isinstance(v, Mapping)]


def _is_postal(lex: Lexicon, items: list[tuple[str, str, str, Shape]]) -> bool:
    """Whether the form collects an address (then a "PIN code" is a postal code)."""
    return any(
        scan(lex, key, True).has("postal_context") or scan(lex, title).has("postal_context")
        for key, title, _, _ in items
    )


def classify_form(
    requested_schema: Mapping[str, object],
    *,
    message: str | None = None,
    languages: Sequence[str] = ALL_LANGUAGES,
    extra_words: ExtraWords | None = None,
    allowed_fields: Collection[str] = (),
) -> list[FieldVerdict]:
    """Return one verdict per property of ``requested_schema``, in schema order.

    Args:
        requested_schema: the form's ``requestedSchema`` (an object schema of primitives).
        message: the request's ``message``; it names the secret when the only text field is
            called something generic like ``value``.
        languages: lexicons to use; codes as in ``ALL_LANGUAGES``.
        extra_words: ``{lang: {class_or_list: [words]}}`` added to the lexicons, for example
            ``{"de": {"password": ["Losung"]}, "en": {"negative": ["token ring"]}}``.
        allowed_fields: property keys (or pointers) the policy declares harmless.
    """
    lex = _lexicon(languages, extra_words)
    items = [(key, *texts_of(prop), shape_of(prop)) for key, prop in _properties(requested_schema)]
    ask = _form_ask(lex, requested_schema, message)
    free_text = [key for key, _, _, shape in items if shape.kind == "text"]
    otp_hint = bool(message) and mentions_otp_context(lex, message or "")
    password_topic = ask is None and bool(message) and is_about_password(lex, message or "")
    postal = _is_postal(lex, items)
    user_fields = {
        key
        for key, title, _, shape in items
        if shape.fmt == "email"
        or whole_text(title) in lex.sign_in
        or " ".join(normalize(key, identifier=True).split()) in lex.sign_in
    }
    verdicts = []
    for key, title, desc, shape in items:
        titled = bool(title.strip())
        with_ask = ask is not None and free_text == [key]
        sign_in = bool(user_fields - {key})
        ctx = FormContext(
            ask if with_ask else None, otp_hint, postal, titled, sign_in, password_topic
        )
        verdict = classify_field(lex, key, title, desc, shape, ctx)
        if key in allowed_fields or verdict.pointer in allowed_fields:
            verdict = _allowed(verdict)
        verdicts.append(verdict)
    return verdicts


_NUMERIC_SECRETS = frozenset(("password", "otp", "cvv", "card_number"))


def can_hold(prop: Mapping[str, object], secret_class: str) -> bool:
    """Whether a user can type a value of ``secret_class`` into the property ``prop``.

    A message that asks for an API key cannot be answered through a checkbox or a choice
    among fixed options; a number field can carry only numeric secrets (PIN, code, CVV,
    card number); an ``email``/``date``/``uri`` string cannot carry any.
    """
    kind = shape_of(prop).kind
    if kind == "text":
        return True
    return kind == "number" and secret_class in _NUMERIC_SECRETS


def _allowed(verdict: FieldVerdict) -> FieldVerdict:
    """The verdict for a field the policy allows by name."""
    return FieldVerdict(
        verdict.field, verdict.pointer, None, None, verdict.language, "low", ("allowed by policy",)
    )
