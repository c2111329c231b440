"""Our own labelled answers for ``eval_answers.py``: every class of hiding place and of trap.

Why: peers' fixtures are single strings in config-file syntax; a form answer also hides a
credential encoded, glued, nested, split over fields or written as a sentence in the user's
language, and must leave UUIDs, hashes, dates, phone numbers, emails, URLs, base64 of
ordinary text, placeholders and version strings alone. Values are built from a seeded RNG
at run time (live-looking tokens are never committed whole); each case gets a half
(``tuning`` or ``checking``) from a hash of its class and text.

A case is ``{"content": {...}, "fields": {key: title}, "label": 0|1, "class": str,
"language": str | None, "source": "elicitguard"}``.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import hashlib
import json
import random
import string
import urllib.parse
import uuid
from typing import Any

ALNUM = string.ascii_letters + string.digits
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _crc62(text: str) -> str:
    number = binascii.crc32(text.encode())
    digits = ""
    while number:
        number, rest = divmod(number, 62)
        digits = _BASE62[rest] + digits
    return digits.rjust(6, "0")


class _Tokens:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def r(self, n: int, alphabet: str = ALNUM) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def github(self) -> str:
        body = self.r(30)
        return "gh" + "p_" + body + _crc62(body)

    def aws(self) -> str:
        return "AK" + "IA" + self.r(16, string.ascii_uppercase + "234567")

    def slack(self) -> str:
        digits = string.digits
        return "xo" + "xb-" + self.r(11, digits) + "-" + self.r(13, digits) + "-" + self.r(24)

    def stripe(self) -> str:
        return "sk" + "_live_" + self.r(24)

    def gitlab(self) -> str:
        return "gl" + "pat-" + self.r(20, ALNUM + "_-")

    def google(self) -> str:
        return "AI" + "za" + self.r(35, ALNUM + "_-")

    def openai(self) -> str:
        return (
            "sk-" + "proj-" + self.r(58, ALNUM + "_-") + "T3Blbk" + "FJ" + self.r(58, ALNUM + "_-")
        )

    def anthropic(self) -> str:
        return "sk-" + "ant-api03-" + self.r(93, ALNUM + "_-") + "AA"

    def jwt(self) -> str:
        def b64(obj: dict[str, Any]) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

        sub = {"sub": "user-" + self.r(6), "scope": "repo admin", "iat": 1760000000}
        return b64({"alg": "HS256", "typ": "JWT"}) + "." + b64(sub) + "." + self.r(43, ALNUM + "_-")

    def npm(self) -> str:
        body = self.r(30)
        return "np" + "m_" + body + _crc62(body)

    def random_key(self) -> str:
        return self.r(40)

    def password(self) -> str:
        words = ["Fichte", "Wolke", "Sakura", "Kaze", "River", "Stone", "Lumen", "Orca"]
        return (
            self.rng.choice(words)
            + "-"
            + self.r(4, string.digits)
            + self.rng.choice("!#%&")
            + self.rng.choice(words)
        )

    def all(self) -> list[tuple[str, str]]:
        return [
            ("github", self.github()),
            ("aws", self.aws()),
            ("slack", self.slack()),
            ("stripe", self.stripe()),
            ("gitlab", self.gitlab()),
            ("google", self.google()),
            ("openai", self.openai()),
            ("anthropic", self.anthropic()),
            ("jwt", self.jwt()),
            ("npm", self.npm()),
        ]


#: "my password is X" per language: (positive templates, negative sentences).
PROSE: dict[str, tuple[list[str], list[str]]] = {
    "en": (
        [
            "my password is {pw}",
            "pw: {pw}",
            "the code is {code}",
            "PIN: {pin}",
            "here is my api key {key}",
            "{pw} is my password",
            "{pin} (my PIN)",
            "the CVV is {pin}",
        ],
        [
            "my password is required",
            "Bitwarden1 is the password manager I use",
            "I forgot what my password is",
            "the CVV is on the back of the card",
            "I forgot my password yesterday",
            "the zip code is 94107",
            "the code is in the repo",
        ],
    ),
    "de": (
        ["mein Passwort ist {pw}", "Kennwort: {pw}", "der Code lautet {code}"],
        ["Ich habe mein Passwort vergessen", "Die Postleitzahl ist 10115"],
    ),
    "fr": (
        ["mon mot de passe est {pw}", "mdp : {pw}", "le code est {code}"],
        ["J'ai oublié mon mot de passe", "Le code postal est 75001"],
    ),
    "es": (
        ["mi contraseña es {pw}", "el código es {code}"],
        ["Olvidé mi contraseña otra vez", "El código postal es 28013"],
    ),
    "pt": (
        ["minha senha é {pw}", "o código é {code}"],
        ["Esqueci a minha senha", "A senha precisa de 8 caracteres"],
    ),
    "it": (
        ["la mia password è {pw}", "il codice è {code}"],
        ["Ho dimenticato la password", "Il codice postale è 00184"],
    ),
    "nl": (
        ["mijn wachtwoord is {pw}", "de code is {code}"],
        ["Ik ben mijn wachtwoord vergeten", "Het wachtwoord moet lang zijn"],
    ),
    "sv": (
        ["mitt lösenord är {pw}", "koden är {code}"],
        ["Jag har glömt mitt lösenord", "Lösenordet måste vara långt"],
    ),
    "da": (["min adgangskode er {pw}"], ["Jeg har glemt min adgangskode"]),
    "nb": (["passordet mitt er {pw}"], ["Jeg har glemt passordet"]),
    "fi": (["salasanani on {pw}"], ["Unohdin salasanani eilen"]),
    "pl": (
        ["moje hasło to {pw}", "kod to {code}"],
        ["Zapomniałem hasła do konta", "Kod pocztowy to 00-950"],
    ),
    "cs": (["moje heslo je {pw}"], ["Zapomněl jsem heslo"]),
    "sk": (["moje heslo je {pw}"], ["Zabudol som heslo"]),
    "ro": (["parola mea este {pw}"], ["Am uitat parola contului"]),
    "hu": (["a jelszavam: {pw}"], ["Elfelejtettem a jelszavam"]),
    "tr": (
        ["şifrem {pw}", "doğrulama kodu {code}"],
        ["Şifremi unuttum", "Şifre en az 8 karakter olmalı"],
    ),
    "el": (["ο κωδικός μου είναι {pw}"], ["Ξέχασα τον κωδικό μου"]),
    "ru": (
        ["мой пароль {pw}", "пароль: {pw}", "код подтверждения {code}"],
        ["Я забыл пароль от почты", "Пароль должен быть длинным"],
    ),
    "uk": (["мій пароль {pw}", "код: {code}"], ["Я забув пароль", "Пароль має бути довгим"]),
    "bg": (["паролата ми е {pw}"], ["Забравих паролата си"]),
    "ar": (["كلمة المرور هي {pw}", "الرمز هو {code}"], ["نسيت كلمة المرور الخاصة بي"]),
    "he": (["הסיסמה שלי היא {pw}"], ["שכחתי את הסיסמה שלי"]),
    "fa": (["رمز عبور من {pw} است"], ["رمز عبورم را فراموش کردم"]),
    "hi": (["मेरा पासवर्ड {pw} है"], ["मैं अपना पासवर्ड भूल गया"]),
    "bn": (["আমার পাসওয়ার্ড {pw}"], ["আমি পাসওয়ার্ড ভুলে গেছি"]),
    "th": (["รหัสผ่านคือ {pw}"], ["ฉันลืมรหัสผ่าน"]),
    "vi": (["mật khẩu của tôi là {pw}", "mã xác nhận là {code}"], ["Tôi quên mật khẩu rồi"]),
    "id": (["kata sandi saya adalah {pw}", "kode verifikasi {code}"], ["Saya lupa kata sandi"]),
    "ms": (["kata laluan saya ialah {pw}"], ["Saya terlupa kata laluan"]),
    "ja": (["パスワードは{pw}です", "認証コードは{code}です"], ["パスワードを忘れました"]),
    "ko": (["비밀번호는 {pw}입니다", "인증번호 {code}"], ["비밀번호를 잊어버렸어요"]),
    "zh-Hans": (["我的密码是{pw}", "验证码：{code}"], ["我忘记密码了"]),
    "zh-Hant": (["我的密碼是{pw}"], ["我忘記密碼了"]),
}


#: Ordinary answers that look a little like secrets: each must stay quiet.
#: A YAML manifest whose lines end in token characters (never a token wrapped over lines).
_MANIFEST = (
    "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata:\n"
    "  name: example\nspec:\n  secretStoreRef:\n    name: vault-backend\n    kind: SecretStore\n"
)


def _traps(t: _Tokens) -> list[tuple[str, dict[str, str], dict[str, str]]]:
    sha = hashlib.sha256(t.r(12).encode()).hexdigest()
    cases: list[tuple[str, dict[str, str], dict[str, str]]] = [
        (
            "uuid",
            {"request_id": str(uuid.UUID(int=t.rng.getrandbits(128)))},
            {"request_id": "Request id"},
        ),
        ("hash", {"notes": f"fixed in commit {sha[:12]}, see sha256 {sha}"}, {"notes": "Notes"}),
        ("hash", {"checksum": sha}, {"checksum": "SHA-256 of the file"}),
        (
            "word",
            {"comment": "Please rotate the keys every quarter and keep the token policy"},
            {"comment": "Comment"},
        ),
        ("id", {"order": f"ORD-{t.r(8, string.digits)}"}, {"order": "Order number"}),
        ("id", {"user": f"user_{t.r(6, string.digits)}"}, {"user": "Username"}),
        ("date", {"when": "2026-07-28T10:30:00Z"}, {"when": "Date"}),
        ("phone", {"phone": "+1 415 555 2671"}, {"phone": "Phone"}),
        ("email", {"email": f"ada.{t.r(5).lower()}@example.org"}, {"email": "Email"}),
        ("url", {"site": "https://docs.example.com/guide?page=2&lang=en"}, {"site": "Website"}),
        (
            "base64-text",
            {"note": base64.b64encode(b"hello there, this is an ordinary note").decode()},
            {"note": "Note"},
        ),
        ("placeholder", {"api_key": "changeme"}, {"api_key": "API key"}),
        ("placeholder", {"token": "xxxxxxxxxxxxxxxx"}, {"token": "Token"}),
        ("placeholder", {"api_key": "<your key>"}, {"api_key": "API key"}),
        ("placeholder", {"api_key": "${OPENAI_API_KEY}"}, {"api_key": "API key"}),
        ("version", {"version": "v2.14.3-rc.1"}, {"version": "Version"}),
        (
            "percent-text",
            {"q": urllib.parse.quote(urllib.parse.quote("a b/c & d"))},
            {"q": "Search"},
        ),
        ("hex-text", {"tag": b"ordinary label".hex()}, {"tag": "Tag"}),
        (
            "json-text",
            {"prefs": json.dumps({"theme": "dark", "lang": "en"})},
            {"prefs": "Preferences"},
        ),
        (
            "split-words",
            {"first": "Ada", "last": "Lovelace"},
            {"first": "First name", "last": "Last name"},
        ),
        (
            "nested-plain",
            {"address": {"street": "1 Main St", "zip": "94107"}},
            {"address": "Address"},
        ),
        ("tracking", {"tracking": "1Z999AA10123456784"}, {"tracking": "Tracking number"}),
        ("path", {"path": "/var/lib/app/exports/2026-07.csv"}, {"path": "Path"}),
        (
            "wrapped-text",
            {"manifest": _MANIFEST},
            {"manifest": "Manifest"},
        ),
        (
            "grouped-text",
            {"licence": f"{t.r(5).upper()}-{t.r(5).upper()}-{t.r(5).upper()}-{t.r(5).upper()}"},
            {"licence": "Product licence key (printed on the box)"},
        ),
        ("grouped-text", {"isbn": "978-0-306-40615-7"}, {"isbn": "ISBN"}),
        ("grouped-text", {"ip": "10.20.30.40"}, {"ip": "Server address"}),
        *[("public-identifier", {"notes": text}, {"notes": "Notes"}) for text in _IDENTIFIERS],
    ]
    return cases


#: Identifiers, public keys and addresses users paste that grant nothing.
_IDENTIFIERS = (
    "customer cus_NffrFeUfNV2Hib ordered price_1MoBy5LkdIwHu7ixZhnattbh",
    "arn:aws:iam::123456789012:role/deploy-role",
    "send it to bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
    "my wallet 0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7VJTUt9Us8cKjMzEfYyjiWA4R4 ada@host",
    "GPG fingerprint 4AEE 18F8 3AFD EB23 EB8A  2D5E 1F51 2B2D 0E2C 6C81",
    "https://docs.google.com/spreadsheets/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit",
    "channel C024BE91L, user U2147483697",
    "pod web-7d4b9c8f6d-x2x8k crashed",
    "integrity sha512-NNcCmg9dO3uYMBTJxXhGJNEg6TvaFsqNc6eUx0OdjhHUmcqWDYQvW7bbpZaDuRNS0NUpGcEHakqr6YeZ6XvdAA==",
    "ipfs://QmXoypizjW3WknFiJnKLwHCnL72vedxjQkDDP1mXWo6uco",
    "trace id 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7",
    "publishable key pk_live_51H8xYzAbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEDEjIqU4fdhSN3yDpJ0Ob6H6rZ8Bq4Z2OQ2Mq4pYy9d4Yyq1V0w2h9mJp3b3Xn8gk5q3fE1xJ1jw8ZzR0n4gQ5A==",
)


def _case(
    content: dict[str, Any], fields: dict[str, str], label: int, cls: str, lang: str | None
) -> dict[str, Any]:
    blob = json.dumps(content, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(f"{cls}\x00{blob}".encode()).digest()
    return {
        "content": content,
        "fields": fields,
        "label": label,
        "class": cls,
        "language": lang,
        "source": "elicitguard",
        "half": "tuning" if digest[0] % 2 == 0 else "checking",
    }


def _disguises(
    kind: str, token: str, t: _Tokens
) -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    cut = len(token) // 2
    return [
        ("catalogue", {"notes": token}, {"notes": "Notes"}),
        ("glued", {"notes": "mytoken" + token + "thanks"}, {"notes": "Notes"}),
        (
            "encoded-base64",
            {"notes": base64.b64encode(token.encode()).decode()},
            {"notes": "Notes"},
        ),
        (
            "encoded-base64url",
            {"notes": base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")},
            {"notes": "Notes"},
        ),
        ("encoded-hex", {"notes": token.encode().hex()}, {"notes": "Notes"}),
        (
            "encoded-percent2",
            {"notes": urllib.parse.quote(urllib.parse.quote(token, safe=""), safe="")},
            {"notes": "Notes"},
        ),
        ("encoded-json", {"notes": json.dumps({"auth": {"value": token}})}, {"notes": "Notes"}),
        ("nested", {"profile": {"extra": [{"v": token}]}}, {"profile": "Profile"}),
        (
            "split",
            {"part_a": token[:cut], "part_b": token[cut:]},
            {"part_a": "Reference", "part_b": "Reference (continued)"},
        ),
        (
            "spaced",
            {"notes": " ".join(token[i : i + 6] for i in range(0, len(token), 6))},
            {"notes": "Notes"},
        ),
        ("lookalike", {"notes": _lookalike(token)}, {"notes": "Notes"}),
        ("reversed", {"notes": "backwards: " + token[::-1]}, {"notes": "Notes"}),
        ("wrapped", {"notes": token[:cut] + "\n" + token[cut:]}, {"notes": "Notes"}),
        (
            "grouped",
            {"notes": "-".join(token[i : i + 4] for i in range(0, len(token), 4))},
            {"notes": "Notes"},
        ),
        (
            "invisible",
            {"notes": token[:5] + "\u200b" + token[5:cut] + "\u00ad" + token[cut:]},
            {"notes": "Notes"},
        ),
    ]


#: Latin letters and the Cyrillic or Greek letter that looks the same.
_LOOKALIKES = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "i": "і", "A": "А",
               "E": "Е", "O": "О", "P": "Р", "C": "С", "K": "К", "M": "М", "T": "Т", "H": "Н"}  # fmt: skip


def _lookalike(token: str) -> str:
    """``token`` with its first letter that has a look-alike replaced by it."""
    for index, char in enumerate(token):
        if char in _LOOKALIKES:
            return token[:index] + _LOOKALIKES[char] + token[index + 1 :]
    return token


def build(seed: int = 20261201) -> list[dict[str, Any]]:
    """Every own case, deterministic for a seed."""
    t = _Tokens(seed)
    cases: list[dict[str, Any]] = []
    for _round in range(3):
        for kind, token in t.all():
            for cls, content, fields in _disguises(kind, token, t):
                cases.append(_case(content, fields, 1, cls, None))
        cases.append(_case({"api_key": t.random_key()}, {"api_key": "API key"}, 1, "keyed", None))
        cases.append(_case({"password": t.password()}, {"password": "Password"}, 1, "keyed", None))
        cases.append(
            _case({"creds": {"password": t.password()}}, {"creds": "Account"}, 1, "nested", None)
        )
        for cls, content, fields in _traps(t):
            cases.append(_case(content, fields, 0, cls, None))
    for lang, (positives, negatives) in PROSE.items():
        for _round in range(2):
            for template in positives:
                text = template.format(
                    pw=t.password(),
                    code=t.r(6, string.digits),
                    pin=t.r(4, "123456789"),
                    key=t.random_key(),
                )
                cases.append(_case({"comment": text}, {"comment": "Comment"}, 1, "prose", lang))
        for sentence in negatives:
            cases.append(_case({"comment": sentence}, {"comment": "Comment"}, 0, "prose", lang))
    cases.extend(_code_cases(_Tokens(seed + 1)))
    cases.extend(_cipher_cases(_Tokens(seed + 2)))
    cases.extend(_stacked_cases(_Tokens(seed + 3)))
    return cases


def _stacked_cases(t: _Tokens) -> list[dict[str, Any]]:
    """Disguises stacked (base64 of reversed text, hex of ROT13), character codes, base85,
    one space or tab inside a token, a token cut into list items or an object's values, and
    fields split with each half encoded or in swapped order; beside ordinary text treated the
    same way. Their own generator; written after the readings that catch them."""
    notes = {"notes": "Notes"}
    halves = {"part_a": "Reference", "part_b": "Reference (continued)"}
    cases: list[dict[str, Any]] = []

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    for _round in range(2):
        for _kind, token in t.all():
            cut = len(token) // 2
            for cls, text in (
                ("stacked", b64(token[::-1])),
                ("stacked", codecs.encode(token, "rot13").encode().hex()),
                ("char-codes", " ".join(str(ord(c)) for c in token)),
                ("char-codes", " ".join(format(ord(c), "08b") for c in token)),
                ("char-codes", "".join(f"\\{ord(c):03o}" for c in token)),
                ("encoded-base85", base64.b85encode(token.encode()).decode()),
                ("cut-once", token[:cut] + " " + token[cut:]),
                ("cut-once", token[:cut] + "\t" + token[cut:]),
            ):
                cases.append(_case({"notes": text}, notes, 1, cls, None))
            cases.append(
                _case({"profile": list(token)}, {"profile": "Profile"}, 1, "nested-split", None)
            )
            cases.append(
                _case(
                    {"profile": {"a": token[:cut], "b": token[cut:]}},
                    {"profile": "Profile"},
                    1,
                    "nested-split",
                    None,
                )
            )
            cases.append(
                _case(
                    {"part_a": b64(token[:cut]), "part_b": b64(token[cut:])},
                    halves,
                    1,
                    "split-encoded",
                    None,
                )
            )
            cases.append(
                _case(
                    {"part_a": token[cut:], "part_b": token[:cut]}, halves, 1, "split-swapped", None
                )
            )
    for text in ("meeting at five", "invoice 2024-118 paid", "Lovelace"):
        for cls, shown in (
            ("stacked", b64(text[::-1])),
            ("char-codes", " ".join(str(ord(c)) for c in text)),
            ("encoded-base85", base64.b85encode(text.encode()).decode()),
        ):
            cases.append(_case({"notes": shown}, notes, 0, cls, None))
    for numbers in ("10 20 30 40 50 60 70 80 90", "192 168 0 1 255 255 255 0"):
        cases.append(_case({"notes": numbers}, notes, 0, "char-codes", None))
    for cls, content, fields in (
        ("nested-split", {"profile": ["red", "green", "blue"]}, {"profile": "Profile"}),
        ("nested-split", {"profile": {"city": "Lyon", "zip": "69001"}}, {"profile": "Profile"}),
        ("split-swapped", {"part_a": "Lovelace", "part_b": "Ada"}, halves),
        (
            "split-swapped",
            {"part_a": "deploy-key-2026", "part_b": t.r(40, "0123456789abcdef")},
            {"part_a": "Key name", "part_b": "Commit"},
        ),
        ("split-encoded", {"part_a": b64("first half"), "part_b": b64("second half")}, halves),
    ):
        cases.append(_case(content, fields, 0, cls, None))
    return cases


def _cipher_cases(t: _Tokens) -> list[dict[str, Any]]:
    """Tokens under ROT13, in base32, and cut into string literals joined again in code
    (``"ghp_…" + "…"``, PHP's ``.``, C's adjacent literals), beside the same treatment of
    ordinary text. Their own generator, so that adding them leaves every earlier case as it
    was; they were written after the readings that catch them."""
    notes = {"notes": "Notes"}
    cases: list[dict[str, Any]] = []
    for _round in range(2):
        for _kind, token in t.all():
            cut = len(token) // 3
            for cls, text in (
                ("rot13", codecs.encode(token, "rot13")),
                ("encoded-base32", base64.b32encode(token.encode()).decode()),
                ("concatenated", f'key = "{token[:cut]}" + "{token[cut:]}"'),
                ("concatenated", f"$k = '{token[:cut]}' . '{token[cut:]}';"),
                ("concatenated", f'"{token[:cut]}" "{token[cut : 2 * cut]}" "{token[2 * cut :]}"'),
            ):
                cases.append(_case({"notes": text}, notes, 1, cls, None))
    for text in (
        "Meet me at the north gate at 7pm",
        "invoice 2024-118 paid in full",
        "uryyb jbeyq, guvf vf n grfg zrffntr 123456789",
        "Gur cnffjbeq vf va gur inhyg",
    ):
        for cls, shown in (
            ("rot13", codecs.encode(text, "rot13")),
            ("encoded-base32", base64.b32encode(text.encode()).decode()),
        ):
            cases.append(_case({"notes": shown}, notes, 0, cls, None))
    for text in (
        'greeting = "Hello, " + "world"',
        "name = 'John' . ' ' . 'Smith';",
        "SELECT 'order_' || 'archive_2024' FROM t",
        '"release-" "2024.06" "-final"',
    ):
        cases.append(_case({"notes": text}, notes, 0, "concatenated", None))
    return cases


HEX_LOWER = string.digits + "abcdef"


def _code_cases(t: _Tokens) -> list[dict[str, Any]]:
    """Keys written the way code and configuration carry them, and their look-alikes: an SDK
    call named for a service with the key as its literal argument, an XML element whose text
    has stray punctuation around it, ``wandb KEY``. Their own generator, so that adding
    them leaves every earlier case as it was."""
    hex40 = HEX_LOWER
    b64 = ALNUM + "+/"
    notes = {"notes": "Notes"}
    cases: list[dict[str, Any]] = []
    for _round in range(3):
        for cls, text in (
            ("vendor-call", f'client = smartsheet.Smartsheet("{t.r(37)}")'),
            ("vendor-call", f'sheets := getsmartsheet("{t.r(37)}")'),
            ("xml-punctuated", f"<secret>{{AQAAABAAA .{t.r(40, b64)};}}</secret>"),
            ("xml-punctuated", f"<token>{t.r(32)},</token>"),
            ("wandb", f"wandb {t.r(40, hex40)}"),
            ("wandb", f"WANDB_API_KEY: {t.r(40, hex40)}"),
        ):
            cases.append(_case({"notes": text}, notes, 1, cls, None))
        for cls, text in (
            ("vendor-call", f'sheet = smartsheet.Sheets.get_sheet("{t.r(16, string.digits)}")'),
            ("vendor-call", f'stripe.PaymentIntent.retrieve("pi_{t.r(24)}")'),
            ("vendor-call", 'report = getsmartsheet("Quarterly_Sales_Report_Final")'),
            (
                "vendor-call",
                f'oauth.google("{t.r(12, string.digits)}-{t.r(32, HEX_LOWER)}'
                '.apps.googleusercontent.com")',
            ),
            ("xml-punctuated", "<password>.env.production</password>"),
            ("xml-punctuated", "<secretFile>./secrets/prod.txt</secretFile>"),
            ("wandb", f"pip install git+https://github.com/wandb/wandb@{t.r(40, hex40)}"),
            ("wandb", f"https://github.com/wandb/wandb/commit/{t.r(40, hex40)}"),
        ):
            cases.append(_case({"notes": text}, notes, 0, cls, None))
    return cases
