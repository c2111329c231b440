"""Where a credential can hide in an answer or a default: each place found, each trap quiet.

Tokens are built at test time (never committed whole) from a seeded RNG; a GitHub-style
token carries a valid CRC32.
"""

from __future__ import annotations

import base64
import codecs
import json
import random
import string
import urllib.parse

import pytest

from elicitguard.checks.secrets import (
    base62_crc32,
    has_filler_run,
    hidden_secret,
    is_placeholder,
    json_inside,
    nested_secret,
    prose_languages,
    scan_glued,
    scan_prose,
    scan_text,
    split_secret,
)
from elicitguard.checks.secrets import decoded_readings as readings

RNG = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def github() -> str:
    body = rand(30)
    return "gh" + "p_" + body + base62_crc32(body)


def slack() -> str:
    digits = string.digits
    return "xo" + "xb-" + rand(11, digits) + "-" + rand(13, digits) + "-" + rand(24)


def aws() -> str:
    return "AK" + "IA" + rand(16, string.ascii_uppercase + "234567")


def password() -> str:
    return "Fichte-" + rand(4, string.digits) + "!Wolke"


# --------------------------------------------------------------------------- decoding


def _twice_percent(text: str) -> str:
    """Every byte percent-encoded, then the result percent-encoded again."""
    once = "".join(f"%{byte:02X}" for byte in text.encode())
    return urllib.parse.quote(once, safe="")


ENCODINGS = {
    "base64": lambda t: base64.b64encode(t.encode()).decode(),
    "base64url": lambda t: base64.urlsafe_b64encode(t.encode()).decode().rstrip("="),
    "hex": lambda t: t.encode().hex(),
    "percent twice": _twice_percent,
    "html entities": lambda t: "".join(f"&#{ord(c)};" for c in t),
    "unicode escapes": lambda t: "".join(f"\\u{ord(c):04x}" for c in t),
    "base64 of hex": lambda t: base64.b64encode(t.encode().hex().encode()).decode(),
    "base32": lambda t: base64.b32encode(t.encode()).decode(),
    "base32 without padding": lambda t: base64.b32encode(t.encode()).decode().rstrip("="),
    "two literals joined with +": lambda t: f'value = "{t[:10]}" + "{t[10:]}"',
    "literals joined with PHP's dot": lambda t: f"$t = '{t[:7]}' . '{t[7:20]}' . '{t[20:]}';",
    "adjacent C literals": lambda t: f'"{t[:12]}" "{t[12:]}"',
    "literals joined with SQL's ||": lambda t: f"SELECT '{t[:15]}' || '{t[15:]}'",
    "base64 of reversed": lambda t: base64.b64encode(t[::-1].encode()).decode(),
    "hex of ROT13": lambda t: codecs.encode(t, "rot13").encode().hex(),
    "base85": lambda t: base64.b85encode(t.encode()).decode(),
    "ascii85": lambda t: base64.a85encode(t.encode()).decode(),
    "ascii85 framed": lambda t: base64.a85encode(t.encode(), adobe=True).decode(),
    "octal escapes": lambda t: "".join(f"\\{ord(c):03o}" for c in t),
    "decimal codes": lambda t: " ".join(str(ord(c)) for c in t),
    "decimal codes with commas": lambda t: ",".join(str(ord(c)) for c in t),
    "binary codes": lambda t: " ".join(format(ord(c), "08b") for c in t),
    "shell line continuation": lambda t: t[:18] + "\\\n" + t[18:],
    "an accent on one letter": lambda t: t[:6] + "\u0301" + t[6:],
}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_encoded_token_is_found(encoding: str) -> None:
    token = github()
    encoded = ENCODINGS[encoding](token)
    assert scan_text(encoded) == []
    found = hidden_secret(encoded)
    assert found is not None
    assert found.how == "decoded"
    assert found.match.type.startswith("github")


def test_json_inside_a_string_is_walked_with_its_keys() -> None:
    text = json.dumps({"user": "ada", "password": password()})
    found = hidden_secret(text)
    assert found is not None
    assert found.match.type == "password-under-key"


def test_decoding_is_bounded() -> None:
    """A deep onion stops after a few layers; a huge value costs at most a bounded amount."""
    value = github()
    for _ in range(10):
        value = base64.b64encode(value.encode()).decode()
    assert hidden_secret(value) is None
    assert len(readings("A" * 100 + "%41" * 50_000)) <= 24


@pytest.mark.parametrize(
    "text",
    [
        base64.b64encode(b"hello there, this is an ordinary note").decode(),
        b"ordinary label".hex(),
        _twice_percent("a b/c & d"),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        json.dumps({"theme": "dark", "lang": "en"}),
        base64.b32encode(b"invoice 2024-118 paid in full").decode(),
        "JBSWY3DPEHPK3PXP",  # a TOTP seed from the RFC's examples: binary once decoded
        'greeting = "Hello, " + "world"',
        "Gur cnffjbeq vf va gur inhyg",  # ROT13 of a sentence about a password
        " ".join(str(ord(c)) for c in "meeting at five"),
        "10 20 30 40 50 60 70 80 90",
        base64.b85encode(b"just an ordinary note").decode(),
        "Café crème, s'il vous plaît",
    ],
)
def test_ordinary_encoded_text_is_quiet(text: str) -> None:
    assert hidden_secret(text, "notes") is None


def test_json_inside_only_for_objects_and_arrays() -> None:
    assert json_inside('{"a": 1}') == {"a": 1}
    assert json_inside("[1, 2]") == [1, 2]
    assert json_inside('"just a string"') is None
    assert json_inside("{not json") is None


# --------------------------------------------------------------------------- glued


def test_glued_tokens_are_found_but_not_inside_blobs_or_urls() -> None:
    assert scan_glued("mytoken" + github() + "thanks")
    assert scan_glued("keyis" + aws() + "ok")
    blob = base64.b64encode(bytes(RNG.randrange(256) for _ in range(90))).decode()
    assert scan_glued(blob[:40] + "+/" + aws() + blob[40:]) == []
    assert scan_glued("https://notes.example/API-" + rand(26, "ABCDEF0123456789")) == []


# --------------------------------------------------------------------------- nested, split


def test_nested_objects_and_lists_are_judged() -> None:
    assert nested_secret({"extra": [{"v": github()}]}) is not None
    found = nested_secret({"user": "ada", "password": password()})
    assert found is not None
    assert found.match.type == "password-under-key"
    assert nested_secret({"street": "1 Main St", "zip": "94107"}) is None


def test_a_token_split_over_fields_in_pieces_of_its_own_is_found() -> None:
    """Halves each encoded on their own, halves in swapped order, one space or a tab."""
    token = github()
    cut = len(token) // 2
    b64 = [base64.b64encode(part.encode()).decode() for part in (token[:cut], token[cut:])]
    assert split_secret([("a", b64[0]), ("b", b64[1])]) is not None
    assert split_secret([("a", token[cut:]), ("b", token[:cut])]) is not None
    assert hidden_secret(token[:cut] + " " + token[cut:], "notes") is not None
    assert hidden_secret(token[:cut] + "\t" + token[cut:], "notes") is not None
    assert split_secret([("first", "Ada"), ("last", "Lovelace")]) is None


def test_a_token_cut_into_list_items_or_values_is_found() -> None:
    token = github()
    assert nested_secret(list(token)) is not None
    assert nested_secret([token[i : i + 10] for i in range(0, len(token), 10)]) is not None
    assert nested_secret({"p1": token[:20], "p2": token[20:]}) is not None
    assert nested_secret(["red", "green", "blue"]) is None


def test_a_token_split_over_adjacent_fields_is_found() -> None:
    token = slack()
    cut = len(token) // 2
    found = split_secret([("a", token[:cut]), ("b", token[cut:])])
    assert found is not None
    assert found[0] == "a"
    assert split_secret([("first", "Ada"), ("last", "Lovelace")]) is None
    assert split_secret([("only", token)]) is None  # one field alone is the plain scan's


# --------------------------------------------------------------------------- prose

PROSE_POSITIVES = [
    ("en", "my password is {pw}"),
    ("en", "pw: {pw}"),
    ("en", "the code is 482913"),
    ("en", "PIN: 4821"),
    ("en", "the password for my wifi is {pw}"),
    ("de", "Mein Passwort lautet {pw}"),
    ("fr", "mot de passe : {pw}"),
    ("es", "mi contraseña es {pw}"),
    ("ru", "пароль: {pw}"),
    ("tr", "şifrem {pw}"),
    ("fi", "salasanani on {pw}"),
    ("vi", "mật khẩu của tôi là {pw}"),
    ("th", "รหัสผ่านคือ {pw}"),
    ("ko", "비밀번호는 {pw}입니다"),
    ("ja", "パスワードは{pw}です"),
    ("zh-Hans", "我的密码是{pw}"),
    ("ar", "كلمة المرور هي {pw}"),
    ("he", "הסיסמה שלי היא {pw}"),
    ("hi", "मेरा पासवर्ड {pw} है"),
]


@pytest.mark.parametrize(
    "template",
    [
        "La contraseña de mi correo es {pw}",
        "Hasło do konta: {pw}",
        "Пароль від пошти {pw}",
        "Das Passwort für mein Konto ist {pw}",
        "Le mot de passe de mon compte est {pw}",
        "A senha do meu email é {pw}",
        "La password del mio account è {pw}",
        "Пароль от почты {pw}",
        "Banka şifrem {pw}",
    ],
)
def test_prose_names_what_the_password_is_for(template: str) -> None:
    """The noun, then what the password is for (mail, account, bank), then the value."""
    text = template.format(pw=password())
    assert scan_prose(text), text


@pytest.mark.parametrize(("language", "template"), PROSE_POSITIVES)
def test_prose_hands_over_a_secret(language: str, template: str) -> None:
    text = template.format(pw=password())
    found = scan_prose(text)
    assert found, text
    assert found[0].language == language


@pytest.mark.parametrize(
    "text",
    [
        "my password is required",
        "I forgot my password yesterday",
        "the zip code is 94107",
        "error code 500500",
        "the code expires in 10 minutes",
        "my password is changeme",
        "passenger 12345678",
        "password reset link sent to ada@example.org",
        'password = "${aws_db_instance.default.password}"',
        'public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
        "my password is v2.14.3",
        "Ich habe mein Passwort vergessen",
        "비밀번호를 잊어버렸어요",
        "https://example.com/search?q=password+reset&page=2",
        "La contraseña de mi correo es segura",
        "the password for my bank account was reset yesterday",
        "Hasło do konta zostało zmienione",
    ],
)
def test_prose_without_a_secret_is_quiet(text: str) -> None:
    assert scan_prose(text) == []


def test_prose_lexicon_covers_thirty_languages() -> None:
    assert len(prose_languages()) >= 30


def test_vendor_glued_key_nouns_count_in_prose() -> None:
    assert scan_prose("weatherbitSECRET " + rand(32, "0123456789abcdef"))
    assert scan_prose("newsapi KEY " + rand(32, "0123456789abcdef"))


# --------------------------------------------------------------------------- fillers


def test_fillers_and_identifiers_are_not_credentials() -> None:
    assert has_filler_run("sk_abcdefghijklmnopqrstuvwxyz123")
    # a short digit run is how vendors document real-format keys: not filler by itself
    assert not has_filler_run("1234567890abcdef1234567890abcdef")
    assert is_placeholder("12345678901234567890123456789012")
    assert not has_filler_run(rand(40))
    assert scan_text("token3: xo" + "xp-1234-1234-1234-" + rand(32, "0123456789abcdef")) == []
    assert is_placeholder("<your key>")
    assert is_placeholder("changeme")


# --------------------------------------------------------------------------- disguised letters


def _rot13(text: str) -> str:
    return codecs.encode(text, "rot13")


@pytest.mark.parametrize(
    ("disguise", "how"),
    [
        (lambda t: " ".join(t[i : i + 8] for i in range(0, len(t), 8)), "spaced"),
        (lambda t: " ".join(t), "spaced"),
        (lambda t: "my token: " + " ".join(t[i : i + 5] for i in range(0, len(t), 5)), "spaced"),
        (lambda t: t.replace("h", "\u04bb", 1), "decoded"),  # Cyrillic shha
        (lambda t: t.replace("p", "\u0440", 1), "decoded"),  # Cyrillic er
        (lambda t: t[::-1], "decoded"),
        (lambda t: "here, backwards: " + t[::-1], "decoded"),
        (lambda t: _rot13(t), "decoded"),
        (lambda t: "rot13: " + _rot13(t), "decoded"),
    ],
)
def test_disguised_tokens_are_read_as_they_look(disguise, how) -> None:
    found = hidden_secret(disguise(github()), "notes")
    assert found is not None
    assert found.how in {how, "community"}  # the community catalogue may see the rest first


@pytest.mark.parametrize(
    "text",
    [
        "please ship the parcel to the side door, ask for Ada at the desk",
        'curl -H "Authorization: Bearer $API_KEY" http://localhost:8000/v1/models',
        "Москва, улица Тверская 12, квартира 4",
        "the order ref is A B C 1 2 3 and the box is blue",
    ],
)
def test_spaced_and_foreign_text_stays_quiet(text: str) -> None:
    assert hidden_secret(text, "notes") is None


def test_private_keys_in_base64_der_without_pem_lines() -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    from elicitguard.checks.secrets._shapes import der_private_key

    keys = [ec.generate_private_key(ec.SECP256R1()), rsa.generate_private_key(65537, 2048)]
    for key in keys:
        for form in (
            serialization.PrivateFormat.PKCS8,
            serialization.PrivateFormat.TraditionalOpenSSL,
        ):
            der = key.private_bytes(serialization.Encoding.DER, form, serialization.NoEncryption())
            text = base64.b64encode(der).decode()
            assert der_private_key(text) is not None
            wrapped = "\n".join(text[i : i + 64] for i in range(0, len(text), 64))
            found = hidden_secret(wrapped, "notes")
            assert found is not None
            assert found.how == "shape"
        public = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        assert der_private_key(base64.b64encode(public).decode()) is None
