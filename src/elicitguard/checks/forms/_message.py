"""Decide whether a request message tells the user to type or paste a secret (EG206).

A secret word alone is not enough ("your API key usage is 80%", "forgot your password?"):
the same sentence must hold an ask verb ("enter", "请输入", "入力", "introduzca", "geben Sie
… ein", "saisissez") and no deny word ("never", "do not", "请勿", "しないで", "nunca"). Deny
words count anywhere in the sentence because Japanese puts negation after the verb;
parentheses end a sentence so that "(we never store it)" does not cancel the ask before it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from elicitguard.checks.forms._lexicon import Lexicon
from elicitguard.checks.forms._scan import COURTESY, ClassHit, Scan, scan
from elicitguard.checks.forms._text import normalize
from elicitguard.checks.forms._types import MessageAsk

# A full stop followed by a lower-case letter or a digit is inside a word: a path or a file
# name ("~/.ssh/id_rsa", "config.json"), part of what is asked for, not a sentence end.
_SENTENCE_END = re.compile(
    r"(?:\.(?![a-z0-9_])|[!?;\n\r()\[\]。！？；（）「」『』\u2026\u0964\u0965\u104a\u104b\u17d4\u17d5])+"
)
_CHARACTER_REFERENCE = re.compile(
    r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
)
"""An HTML character reference ("&#119;", "&quot;"): its semicolon ends no sentence."""


_SENTENCE_CUT = re.compile(rf"{_CHARACTER_REFERENCE.pattern}|({_SENTENCE_END.pattern})")
"""A character reference (stepped over) or a sentence end (group 1, cut at)."""


def sentences(message: str) -> list[str]:
    """``message`` cut at sentence ends, HTML character references kept whole so that
    "pass&#119;ord" stays one word for the disguise reading to undo."""
    if "&" not in message:
        return _SENTENCE_END.split(message)
    out: list[str] = []
    start = 0
    for match in _SENTENCE_CUT.finditer(message):
        if match.group(1) is not None:
            out.append(message[start : match.start()])
            start = match.end()
    out.append(message[start:])
    return out


PRIORITY: tuple[str, ...] = (
    "private_key",
    "api_key",
    "cvv",
    "card_number",
    "otp",
    "pin",
    "password",
    "security_answer",
    "government_id",
    "bank_account",
    "health",
)
_SECRET_RAW = frozenset(PRIORITY[:8])


def reported(cls: str) -> str:
    """The public class name of a lexicon class (``pin`` is a kind of password)."""
    return "password" if cls == "pin" else cls


def pick(hits: list[ClassHit] | tuple[ClassHit, ...]) -> ClassHit:
    """The hit of the most specific class (private key beats a generic token)."""
    return min(hits, key=lambda h: (PRIORITY.index(h.cls), h.weak, h.start))


def language_of(hit: ClassHit, scans: tuple[Scan, ...]) -> str:
    """The hit's language, preferring the one its text is unambiguously written in."""
    langs = [lang for s in scans for lang in s.langs]
    candidates = list(dict.fromkeys(h.lang for s in scans for h in s.hits if h.term == hit.term))
    if len(candidates) > 1:
        return max(candidates, key=lambda lang: (langs.count(lang), -candidates.index(lang)))
    return hit.lang


_LABEL_OPENERS = frozenset(("your", "my", "the"))


def _reads_as_label(sentence: str) -> bool:
    """Whether a verbless sentence reads as a field label ("Your API key:", "CVV please").

    A colon at its end, a courtesy word, or a possessive opening it; "Name the new API key"
    (a verb first) is not a label.
    """
    words = sentence.casefold().split()
    return sentence.rstrip().endswith((":", "：")) or bool(
        words and (words[0] in _LABEL_OPENERS or COURTESY & set(words))
    )


#: State words that demand the secret: a message that is only "<secret> required" asks.
_DEMANDS = frozenset(
    (
        "required", "needed", "necessary", "requis", "requise", "obligatoire", "nécessaire",
        "erforderlich", "benötigt", "notwendig", "requerido", "requerida", "obligatorio",
        "obligatoria", "necesario", "necesaria", "richiesto", "richiesta", "obbligatorio",
        "obbligatoria", "necessario", "necessaria", "obrigatório", "obrigatória",
        "necessário", "necessária", "vereist", "nodig", "wymagane", "wymagany", "wymagana",
        "требуется", "необходим", "обязательно", "потрібен", "обов'язково", "gerekli",
    )
)  # fmt: skip
_DEMAND_WORDS = frozenset(w for d in _DEMANDS for w in normalize(d).split())


def _demanded(lex: Lexicon, sentence: str, found: Scan) -> list[ClassHit]:
    """The secret of a sentence that is only its name and a demand ("Password required",
    "Kennwort erforderlich"): on a checkbox the same words are a setting, in the message
    above a text box they ask for what goes in it."""
    words = [
        w for w in normalize(sentence).split() if w not in lex.connectors or w in _DEMAND_WORDS
    ]
    for hit in (*found.hits, *found.state_hits):
        if hit.cls not in _SECRET_RAW or hit.key_only or hit.weak:
            continue
        rest = [w for w in words if w not in hit.term.split()]
        if rest and all(w in _DEMAND_WORDS for w in rest):
            return [hit]
    return []


def _sentence_ask(lex: Lexicon, sentence: str, verbless: bool = True) -> MessageAsk | None:
    """The ask of one sentence, if it has one."""
    found = scan(lex, sentence)
    if found.has("deny"):
        return None
    hits = [h for h in found.hits if h.cls in _SECRET_RAW and not h.key_only]
    if found.has("postal_context"):  # "your address and PIN code": the postal PIN
        hits = [h for h in hits if h.cls != "pin"]
    asked = found.has("ask")
    if not asked:
        if not verbless:
            return None
        # A sentence that is only a secret's name ("Password:", "Your card's CVV please",
        # "Your OpenAI API key:") is a label for the box below it: an ask without a verb.
        labelled = _reads_as_label(sentence)
        hits = [h for h in hits if (h.alone or (h.ends and labelled)) and not h.weak]
        if not hits:
            hits = _demanded(lex, sentence, found)
        if not hits:
            return None
    if not hits and found.has("code") and found.has("otp_context"):
        return MessageAsk("otp", found.langs[0] if found.langs else None, ("code sent to user",))
    if not hits:
        return None
    best = pick(hits)
    disguise = "; disguised: it reads so only once its disguise is undone" if best.disguised else ""
    return MessageAsk(
        reported(best.cls),
        language_of(best, (found,)),
        (f"asks for '{best.term}' ({best.cls}, {best.lang}){disguise}",),
        disguised=best.disguised,
        verbless=not asked,
    )


def find_ask(lex: Lexicon, message: str, source: str = "message") -> MessageAsk | None:
    """The first sentence of ``message`` that asks the user for a secret."""
    for sentence in sentences(message):
        if sentence.strip():
            # An option label naming a secret ("SMS code") is a choice, not a box to type in.
            ask = _sentence_ask(lex, sentence, verbless=source == "message")
            if ask is not None:
                if source != "message":
                    return replace(ask, source=source)
                return ask
    return None


def mentions_otp_context(lex: Lexicon, message: str) -> bool:
    """Whether the message says a code was sent (SMS, e-mail, authenticator app)."""
    return scan(lex, message).has("otp_context")


def is_about_password(lex: Lexicon, message: str) -> bool:
    """Whether a sentence of the message names the user's password without denying it
    ("Change your password", "Passwort ändern"), though it asks for nothing."""
    for sentence in sentences(message):
        found = scan(lex, sentence)
        if found.has("deny") or found.has("benign"):
            continue
        if any(
            h.cls in ("password", "pin") and not h.key_only
            for h in (*found.hits, *found.state_hits)
        ):
            return True
    return False
