"""Regenerate the catalogue-derived form lexicons (``checks/data/lexicon/generated/*.yaml``).

Why this script exists: a server that asks for a password in Korean or Persian must be caught
as surely as one that asks in English, and nobody on the team reads thirty languages. Well-kept
packages already ship reviewed translations of the very labels a secret-asking form uses
("Password", "New password", "Authenticator code", "Recovery codes", "secret key", "Forgot your
password?"), written by their translators for their own sign-in forms. This script reads those
gettext catalogues, maps each chosen ``msgid`` to a lexicon class or role, and writes one YAML
file per language that records every source (package, version, file, msgid, msgstr) next to the
words, as ``scripts/gen_unicode_tables.py`` does for Unicode. Words the catalogues cannot give
(ask verbs, negations, card security code, seed phrase, API key) come from
``scripts/lexicon_seed.yaml`` and are recorded as ``curated``.

Ask verbs are also *derived*: the word that the translations of "Enter your password:",
"Enter Sign-In Code", "Enter Device Code"... share, once the secret words are taken out, is the
language's "enter" (spaced scripts only).

Inflection: for languages that inflect or agglutinate, a one-word catalogue term of five letters
or more also matches its inflected forms (Russian "пароль" -> "парол*", Korean "비밀번호*").

Sources (dev-time only; nothing here runs in the product)::

    .venv/bin/pip install polib
    .venv/bin/pip download --no-deps -d /tmp/po 'django==5.2.19' 'django-allauth==65.22.1'
    .venv/bin/python scripts/gen_lexicons.py /tmp/po/*.whl
"""

from __future__ import annotations

import re
import sys
import unicodedata
import zipfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import polib
import yaml

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src/elicitguard/checks/data/lexicon/generated"
SEED = ROOT / "scripts/lexicon_seed.yaml"

#: Catalogue language -> lexicon code (pt_BR and pt_PT both feed "pt").
LANGS: dict[str, str] = {
    "ko": "ko", "ru": "ru", "uk": "uk", "pt_BR": "pt", "pt_PT": "pt", "pt": "pt", "it": "it",
    "ar": "ar", "he": "he", "fa": "fa", "hi": "hi", "bn": "bn", "tr": "tr", "vi": "vi",
    "th": "th", "id": "id", "pl": "pl", "cs": "cs", "nl": "nl", "sv": "sv", "el": "el",
    "ro": "ro", "da": "da", "fi": "fi", "hu": "hu", "nb": "nb",
    "de": "de", "fr": "fr", "es": "es", "ja": "ja", "zh_Hans": "zh-Hans", "zh_Hant": "zh-Hant",
    # catalogue-only languages: no curated seed, the catalogues' labels and derived ask verbs
    "af": "af", "az": "az", "be": "be", "bg": "bg", "bs": "bs", "ca": "ca", "cy": "cy",
    "et": "et", "eu": "eu", "ga": "ga", "gl": "gl", "hr": "hr", "hy": "hy", "is": "is",
    "ka": "ka", "kk": "kk", "km": "km", "kn": "kn", "ky": "ky", "lt": "lt", "lv": "lv",
    "mk": "mk", "ml": "ml", "mn": "mn", "mr": "mr", "ms": "ms", "my": "my", "ne": "ne",
    "pa": "pa", "sk": "sk", "sl": "sl", "sq": "sq", "sr": "sr", "sr_Latn": "sr-Latn",
    "sw": "sw", "ta": "ta", "te": "te", "tg": "tg", "tk": "tk", "ur": "ur", "uz": "uz",
}  # fmt: skip

#: Files read inside each wheel.
FILES = (
    "django/contrib/auth/locale/{lang}/LC_MESSAGES/django.po",
    "django/contrib/admin/locale/{lang}/LC_MESSAGES/django.po",
    "allauth/locale/{lang}/LC_MESSAGES/django.po",
)

#: msgid -> (class or role, weak). Labels only: a label names the thing the field collects.
MSGIDS: dict[str, tuple[str, bool]] = {
    "Password": ("password", False),
    "password": ("password", False),
    "Current Password": ("password", False),
    "New Password": ("password", False),
    "New password": ("password", False),
    "Old password": ("password", False),
    "Password (again)": ("password", False),
    "New Password (again)": ("password", False),
    "Password confirmation": ("password", False),
    "New password confirmation": ("password", False),
    "New password:": ("password", False),
    "Confirm password:": ("password", False),
    "Authenticator code": ("otp", False),
    "Sign-In Code": ("otp", False),
    "Password Reset Code": ("otp", False),
    "Recovery codes": ("otp", False),
    "Recovery Codes": ("otp", False),
    "secret key": ("api_key", False),
    "token secret": ("api_key", False),
    "Refresh token": ("api_key", False),
    "Token": ("api_key", True),
    "token": ("api_key", True),
    # harmless phrases that contain a secret word: the longest match wins, so they hide it
    "Forgot Password?": ("negative", False),
    "Forgot your password?": ("negative", False),
    "Forgotten your password or username?": ("negative", False),
    "Change Password": ("negative", False),
    "Change password": ("negative", False),
    "change password": ("negative", False),
    "Change my password": ("negative", False),
    "Password Reset": ("negative", False),
    "Password reset": ("negative", False),
    "Reset password": ("negative", False),
    "Reset My Password": ("negative", False),
    "Set Password": ("negative", False),
    "Set password": ("negative", False),
    "Password Changed": ("negative", False),
    "Password change": ("negative", False),
    "Password Set": ("negative", False),
    "Passwordless": ("negative", False),
    "Password-based authentication": ("negative", False),
    "No password set.": ("negative", False),
    "Incorrect password.": ("negative", False),
    "Incorrect code.": ("negative", False),
    "Invalid token.": ("negative", False),
    "Security key": ("negative", False),
    "Security Keys": ("negative", False),
    "Passkey": ("negative", False),
    "Generate new codes": ("negative", False),
    "Download codes": ("negative", False),
    "Request new code": ("negative", False),
    "Remember Me": ("negative", False),
}

#: msgids that name a sign-in form's other field: the ``sign_in`` list (whole titles).
SIGN_IN_MSGIDS = frozenset(
    (
        "Username", "username", "Email", "Email address", "Email Address", "email address",
        "Login", "Username or email", "Username or phone", "Username, email or phone",
        "Email or phone",
    )
)  # fmt: skip

#: Generic labels: a secret term whose translation equals one of these is too vague to keep.
GENERIC = frozenset(
    ("Code", "code", "Key", "key", "Email", "Username", "Security key", "Passkey", "Name", "name")
)

#: Sentences that start with the language's "enter": their shared word is an ask verb.
ASK_SENTENCES = (
    "Enter your password:",
    "Enter a username and password.",
    "Enter Device Code",
    "Enter Email Verification Code",
    "Enter Password Reset Code",
    "Enter Phone Verification Code",
    "Enter Sign-In Code",
    "Enter an authenticator code:",
    "Enter the code displayed on your device.",
)
HAND_WRITTEN = frozenset(("en", "de", "fr", "es", "ja", "zh-Hans", "zh-Hant"))

INFLECTING = frozenset(
    ("ru", "uk", "pl", "cs", "ro", "el", "tr", "fi", "hu", "ko", "it", "pt", "id", "nl")
)  # label-only languages stay exact: "token*" would match "tokenizer", "parol*" "parole"
NORDIC = frozenset(("da", "sv", "nb", "fi", "hu", "el", "bg"))
UNSPACED = frozenset(("th", "ja", "zh-Hans", "zh-Hant"))
_ENDINGS = re.compile(r"[аяоеьыийуюіїєэaeiouyąęěαεηιουωάέήίόύώ]{1,2}$")
_PLACEHOLDER = re.compile(r"%\(\w+\)s|%s|\{\w*\}")


def _clean(text: str) -> str:
    """A msgstr without placeholders, parentheticals, trailing punctuation or accelerators."""
    text = _PLACEHOLDER.sub("", text)
    text = re.sub(r"\s*[(（].*?[)）]\s*", " ", text)
    text = text.replace("&", "")
    return text.strip().strip(":：.。?？!！ ").strip()


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return [w for w in re.split(r"[^\w\u0900-\u0dff\u0e00-\u0e7f]+", folded) if w]


def _inflect(lang: str, term: str) -> list[str]:
    """The term, plus a wildcard stem that matches its inflections."""
    out = [term]
    words = term.split()
    if lang == "ko":
        return [term + "*"]
    if lang in INFLECTING and len(words) == 1 and len(term) >= 5:
        stem = _ENDINGS.sub("", term)
        if len(stem) >= 4:
            out.append(stem + "*")
    return out


def _seed_forms(lang: str, term: str) -> list[str]:
    """A curated class term, plus a prefix form of its last word in inflecting languages."""
    words = term.split()
    if lang in INFLECTING | NORDIC and "*" not in term and len(words[-1]) >= 4:
        return [term, term + "*"]
    return [term]


def _catalogues(wheels: list[Path]) -> dict[str, list[tuple[str, str, str, polib.POFile]]]:
    """Per lexicon language, the catalogues found: (package, version, file, parsed)."""
    found: dict[str, list[tuple[str, str, str, polib.POFile]]] = defaultdict(list)
    for wheel in wheels:
        package, version = wheel.name.split("-")[:2]
        with zipfile.ZipFile(wheel) as archive:
            names = set(archive.namelist())
            for cat_lang, lang in LANGS.items():
                for pattern in FILES:
                    name = pattern.format(lang=cat_lang)
                    if name in names:
                        text = archive.read(name).decode("utf-8")
                        found[lang].append((package, version, name, polib.pofile(text)))
    return found


def _derive_ask(lang: str, translations: dict[str, str], secret_words: set[str]) -> list[str]:
    """The "enter" of a language: a word of both password asks and of a code ask.

    Only for spaced scripts, and only where no hand-written lexicon already lists the verbs;
    words of three letters or fewer (articles, pronouns) and secret words are left out.
    """
    if lang in UNSPACED or lang in HAND_WRITTEN:
        return []
    need = [translations.get(m) for m in ASK_SENTENCES[:2]]
    if not all(need):
        return []
    common = set(_words(need[0] or "")) & set(_words(need[1] or ""))
    code_words = {
        w for m in ASK_SENTENCES[2:] if m in translations for w in _words(translations[m])
    }
    return sorted(w for w in common & code_words if w not in secret_words and len(w) > 3)


def build(wheels: list[Path]) -> dict[str, dict[str, Any]]:
    """The generated lexicon of every language."""
    seed = yaml.safe_load(SEED.read_text(encoding="utf-8"))
    result: dict[str, dict[str, Any]] = {}
    found = _catalogues(wheels)
    # A curated language no catalogue carries (Gujarati, Sinhala, Lao, Amharic) has the seed only.
    for lang in seed:
        found.setdefault(lang, [])
    for lang, catalogues in sorted(found.items()):
        classes: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        roles: dict[str, list[str]] = defaultdict(list)
        sources: list[dict[str, str]] = []
        translations: dict[str, str] = {}
        generic = {
            _clean(e.msgstr).casefold()
            for _, _, _, po in catalogues
            for e in po
            if e.msgid in GENERIC and e.msgstr
        }
        for package, version, name, po in catalogues:
            for entry in po:
                if not entry.msgstr or "fuzzy" in entry.flags:
                    continue
                translations.setdefault(entry.msgid, entry.msgstr)
                spec = MSGIDS.get(entry.msgid)
                term = _clean(entry.msgstr)
                if entry.msgid in SIGN_IN_MSGIDS and term.casefold() not in roles["sign_in"]:
                    roles["sign_in"].append(term.casefold())
                    sources.append(
                        {"package": package, "version": version, "file": name,
                         "msgid": entry.msgid, "msgstr": entry.msgstr, "as": "sign_in"}
                    )  # fmt: skip
                if spec is None or not term:
                    continue
                if spec[0] != "negative" and term.casefold() in generic:
                    continue  # a translator used a generic word ("Token" as "Código")
                tag, weak = spec
                terms = _inflect(lang, term.casefold()) if tag != "negative" else [term]
                for item in terms:
                    bucket = (
                        roles[tag]
                        if tag == "negative"
                        else classes[tag]["weak" if weak else "terms"]
                    )
                    if item not in bucket:
                        bucket.append(item)
                sources.append(
                    {"package": package, "version": version, "file": name,
                     "msgid": entry.msgid, "msgstr": entry.msgstr, "as": tag}
                )  # fmt: skip
        secret_words = {w for spec in classes.values() for t in spec["terms"] for w in _words(t)}
        secret_words |= {
            w
            for m in ("Code", "Password", "code")
            if m in translations
            for w in _words(translations[m])
        }
        for verb in _derive_ask(lang, translations, secret_words):
            roles["ask"].append(verb)
            sources.append(
                {
                    "derived": "shared word of the 'Enter ...' translations",
                    "as": "ask",
                    "word": verb,
                }
            )
        for tag, words in (seed.get(lang) or {}).items():
            bucket = roles[tag] if tag not in _CLASSES else classes[tag]["terms"]
            for word in words:
                for item in _seed_forms(lang, word) if tag in _CLASSES else [word]:
                    if item not in bucket:
                        bucket.append(item)
            sources.append(
                {"curated": "scripts/lexicon_seed.yaml", "as": tag, "count": str(len(words))}
            )
        result[lang] = {
            "language": lang,
            "generator": "scripts/gen_lexicons.py",
            "classes": {
                k: {kk: vv for kk, vv in v.items() if vv} for k, v in sorted(classes.items())
            },
            **dict(sorted(roles.items())),
            "sources": sources,
        }
    return result


_CLASSES = frozenset(
    ("password", "pin", "api_key", "private_key", "otp", "card_number", "cvv", "security_answer")
)


def main(argv: list[str]) -> int:
    wheels = [Path(a) for a in argv[1:]]
    if not wheels:
        print(__doc__)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    for lang, data in build(wheels).items():
        header = (
            f"# Generated by scripts/gen_lexicons.py from translation catalogues and\n"
            f"# scripts/lexicon_seed.yaml; do not edit (edit the seed, or {lang}.yaml beside\n"
            f"# this folder, or give a policy `extra_words`). `sources` says where each word came from.\n"
        )
        body = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)
        (OUT / f"{lang}.yaml").write_text(header + body, encoding="utf-8")
        print(
            f"{lang}: {sum(len(v.get('terms', [])) for v in data['classes'].values())} class terms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
