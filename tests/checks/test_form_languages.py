"""The form classifier in each of its 31 languages, through disguise, and in option labels.

Phrases per language live in ``benchmarks/data/forms_languages.yaml`` (written by hand, not
taken from the lexicons); each language must catch a password field and a one-time code field,
an ask for an API key in the message whatever the language of the field, and must let pass a
"never type your password" message and a field that only names a key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from elicitguard import Confidence
from elicitguard.checks.forms import (
    ALL_LANGUAGES,
    FULL_LANGUAGES,
    LABEL_LANGUAGES,
    classify_form,
    form_asks_for_secret,
    message_asks_for_secret,
    shipped_languages,
)
from elicitguard.checks.forms import disguised_readings as readings

PHRASES: dict[str, dict[str, str]] = yaml.safe_load(
    (
        Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "forms_languages.yaml"
    ).read_text(encoding="utf-8")
)
TEXT: dict[str, Any] = {"type": "string"}


def one(title: str, **extra: Any) -> dict[str, Any]:
    return {"properties": {"a": {**TEXT, "title": title, **extra}}}


def test_thirty_languages_ship_and_are_the_default() -> None:
    """At least 30 full languages, every one with a lexicon file, all enabled by default."""
    assert len(FULL_LANGUAGES) >= 30
    assert set(ALL_LANGUAGES) == set(shipped_languages())
    assert set(PHRASES) == set(FULL_LANGUAGES)
    assert ALL_LANGUAGES == FULL_LANGUAGES + LABEL_LANGUAGES


def _catalogue_password(lang: str) -> str:
    """The shortest catalogue-given password label of a label-only language."""
    data = yaml.safe_load(
        (
            Path(__file__).resolve().parents[2]
            / "src/elicitguard/checks/data/lexicon/generated"
            / f"{lang}.yaml"
        ).read_text(encoding="utf-8")
    )
    return min((t for t in data["classes"]["password"]["terms"] if "*" not in t), key=len)


@pytest.mark.parametrize("lang", LABEL_LANGUAGES)
def test_label_languages_catch_a_password_field(lang: str) -> None:
    """A field labelled with the catalogue's word for "Password" is caught, by default."""
    term = _catalogue_password(lang)
    (verdict,) = classify_form(one(term))
    assert (verdict.secret_class, verdict.confidence != "low") == ("password", True), term
    (checkbox,) = classify_form({"properties": {"a": {"type": "boolean", "title": term}}})
    assert checkbox.secret_class is None, term


@pytest.mark.parametrize("lang", sorted(PHRASES))
def test_password_and_code_fields(lang: str) -> None:
    phrases = PHRASES[lang]
    (pw,) = classify_form(one(phrases["password_title"]))
    assert (pw.secret_class, pw.confidence != "low") == ("password", True), pw.reasons
    (otp,) = classify_form(one(phrases["otp_title"]))
    assert (otp.secret_class, otp.confidence != "low") == ("otp", True), otp.reasons


@pytest.mark.parametrize("lang", sorted(PHRASES))
def test_message_ask_whatever_the_field(lang: str) -> None:
    ask = message_asks_for_secret(PHRASES[lang]["api_key_ask"])
    assert ask is not None
    assert ask.secret_class == "api_key"
    (verdict,) = classify_form(
        {"properties": {"value": {**TEXT, "title": "Value"}}}, message=PHRASES[lang]["api_key_ask"]
    )
    assert verdict.secret_class == "api_key", verdict.reasons
    assert verdict.confidence != "low", verdict.reasons


@pytest.mark.parametrize("lang", sorted(PHRASES))
def test_traps_pass(lang: str) -> None:
    assert message_asks_for_secret(PHRASES[lang]["deny_message"]) is None
    (verdict,) = classify_form(one(PHRASES[lang]["key_name_title"]))
    assert verdict.secret_class is None or verdict.confidence == "low", verdict.reasons


@pytest.mark.parametrize(
    ("title", "disguise"),
    [
        ("P4ssw0rd", "digits"),
        ("Pa$$word", "symbols"),
        ("p a s s w o r d", "spaced"),
        ("Y o u r   p a s s w o r d", "spaced words"),
        ("P-A-S-S-W-O-R-D", "dashed"),
        ("p.a.s.s.w.o.r.d", "dotted"),
        ("Pаssword", "one Cyrillic letter"),
        ("Раѕѕword", "several look-alike letters"),
        ("&#80;assword", "decimal reference"),
        ("&#x50;assword", "hex reference"),
        ("&amp;#80;assword", "double-encoded reference"),
        ("Pass&shy;word", "soft hyphen reference"),
        ("Pass\u200bword", "zero-width space"),
        ("Pass\U000e0041word", "tag character"),
        ("ＰＡＳＳＷＯＲＤ", "full-width"),
        ("Pass-word", "one hyphen inside the word"),
        ("\u202edrowssaP\u202c", "right-to-left override"),
        ("p̶a̶s̶s̶w̶o̶r̶d̶", "combining strike-through"),
        ("pa ss wo rd", "cut into pieces"),
        ("Your pa-ss-wo-rd", "cut into dashed pieces"),
        ("Enter%20your%20password", "percent-encoded"),
        ("%2550%2561%2573%2573%2577%256F%2572%2564", "percent-encoded twice"),
        ("Пар0ль", "a digit in a Cyrillic word"),
        ("П@роль", "a symbol in a Cyrillic word"),
    ],
)
def test_disguised_password(title: str, disguise: str) -> None:
    (verdict,) = classify_form(one(title))
    assert verdict.secret_class == "password", (disguise, verdict.reasons)
    assert verdict.confidence != "low", (disguise, verdict.reasons)


def test_disguise_is_reported() -> None:
    """A word that needs folding says so; a plain one does not."""
    (folded,) = classify_form(one("P4ssw0rd"))
    (plain,) = classify_form(one("Password"))
    assert folded.disguised
    assert not plain.disguised
    assert any("disguised" in reason for reason in folded.reasons)
    ask = message_asks_for_secret("Please type your p4ssw0rd below")
    assert ask is not None
    assert ask.disguised


@pytest.mark.parametrize(
    "title",
    [
        "4 digit PIN",  # a standalone digit is never folded
        "Client v3.1 build 5",
        "S3 bucket name",
        "1Password vault name",
        "user@example.com",
        "E-mail",
        "Pass-through mode",
        "Is it ok to go on",  # short words are not read as pieces of one
        "Do you use it as a pin",
    ],
)
def test_folding_traps(title: str) -> None:
    (verdict,) = classify_form(one(title))
    assert not verdict.disguised, verdict.reasons


@pytest.mark.parametrize(
    ("title", "cls"),
    [
        ("s3cret k3y", "api_key"),
        ("4PI key", "api_key"),
        ("acc3ss key", "api_key"),
        ("secret k3y", "api_key"),
        ("ρrivάte key", "private_key"),  # an accented Greek stand-in
    ],
)
def test_disguised_strong_word_beside_a_weak_plain_one(title: str, cls: str) -> None:
    """The plain reading of "s3cret key" has only the weak "key"; the folded reading's strong
    "secret key" must still count, and say it needed the fold."""
    (verdict,) = classify_form(one(title))
    assert verdict.secret_class == cls, verdict.reasons
    assert verdict.confidence is not Confidence.LOW, verdict.reasons
    assert verdict.disguised


def test_readings_only_when_different() -> None:
    assert readings("plain text") == ()
    assert readings("p4ssw0rd") == (" password ",)
    assert " credentials " in readings("cr3dentia1s")


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        (
            {"m": {**TEXT, "enum": ["sms"], "enumNames": ["Type the code we texted you below"]}},
            "/properties/m/enumNames/0",
        ),
        (
            {"c": {**TEXT, "oneOf": [{"const": "x", "title": "Paste your recovery phrase below"}]}},
            "/properties/c/oneOf/0/title",
        ),
        (
            {"ok": {"type": "boolean", "description": "Type your password in the field below"}},
            "/properties/ok/description",
        ),
    ],
)
def test_ask_in_labels_and_descriptions(schema: dict[str, Any], where: str) -> None:
    form = {"properties": {**schema, "value": TEXT}}
    ask = form_asks_for_secret(form, "Continue")
    assert ask is not None
    assert ask.source == where
    verdicts = {v.field: v for v in classify_form(form, message="Continue")}
    assert verdicts["value"].secret_class is not None, verdicts["value"].reasons


def test_description_alone_fires() -> None:
    (verdict,) = classify_form(
        {"properties": {"x": {**TEXT, "description": "Your account password"}}}
    )
    assert verdict.secret_class == "password"
    assert verdict.confidence == "medium"


@pytest.mark.parametrize(
    "props",
    [
        {"c": {**TEXT, "title": "Comment", "description": "Never enter your password here"}},
        {"s": {**TEXT, "title": "Preferred password strength"}},
        {"b": {**TEXT, "title": "Token budget"}},
        {"k": {**TEXT, "title": "Musical key", "description": "The key of the song, e.g. C minor"}},
        {"k": {**TEXT, "title": "Keyboard shortcut key"}},
        {"c": {**TEXT, "title": "Please enter the verification code hidden in the image"}},
        {"n": {**TEXT, "title": "Summary length", "description": "Approximate number of tokens"}},
        {"e": {**TEXT, "title": "Email", "description": "We send password reset links here"}},
    ],
)
def test_more_traps(props: dict[str, Any]) -> None:
    for verdict in classify_form({"properties": props}):
        assert verdict.secret_class is None or verdict.confidence == "low", verdict.reasons


def test_key_weighs_less_under_a_title_that_speaks() -> None:
    """The user reads the title, not the key: a title naming something else outweighs it."""
    (neutral,) = classify_form({"properties": {"cc_number": {**TEXT, "title": "Number"}}})
    (speaking,) = classify_form(
        {"properties": {"cc_number": {**TEXT, "title": "Expiration month"}}}
    )
    assert neutral.secret_class == "card_number"
    assert neutral.confidence != "low"
    assert speaking.confidence == "low"


@pytest.mark.parametrize(
    ("title", "cls"),
    [
        ("Password (required)", "password"),
        ("Reset password", "password"),
        ("Kennwort (erforderlich)", "password"),
        ("Token", "api_key"),
        ("Your login credentials", "api_key"),
        ("Pasword", "password"),
        ("Credentails", "api_key"),
        ("Pass Word", "password"),
        ("PWD", "password"),
    ],
)
def test_state_words_whole_labels_and_slips(title: str, cls: str) -> None:
    """A state word beside the class, a weak word as the whole label, a one-letter slip."""
    (verdict,) = classify_form(one(title))
    assert (verdict.secret_class, verdict.confidence != "low") == (cls, True), verdict.reasons


@pytest.mark.parametrize(
    "props",
    [
        {"a": {"type": "boolean", "title": "Password (required)"}},
        {"a": {"type": "string", "title": "Password hint (required)"}},
        {"a": {"type": "string", "title": "Passport number"}},
        {"a": {"type": "string", "title": "Key"}, "b": {"type": "string", "title": "Value"}},
        {"a": {"type": "string", "title": "Secret value"}},
        {"a": {"type": "string", "title": "1Password vault name"}},
    ],
)
def test_state_and_slip_traps(props: dict[str, Any]) -> None:
    for verdict in classify_form({"properties": props}):
        assert verdict.secret_class is None or verdict.confidence == "low", verdict.reasons
