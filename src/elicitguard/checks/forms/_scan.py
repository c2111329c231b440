"""Find lexicon terms in one piece of text and drop those that only talk *about* a secret.

A class word next to a modifier ("password *policy*", "*max* tokens", "longueur du mot de
passe", "パスワードの長さ") names a property of the secret, not the secret; modifiers may be
joined by connector words ("of", "de", "の"). Some modifiers are also *state* words
("required", "remember", "reset", "sent"): they say something about the secret without
naming another value, so they silence the class only where the input cannot hold the secret
anyway (a checkbox, a choice). On a free-text field "Password (required)" still collects a
password: such hits are kept apart in ``Scan.state_hits`` and the classifier decides by the
field's kind (a request message keeps the plain reading). Each text is scanned as written and in each of
its disguised readings (:mod:`._reveal`); a class found only in a disguised reading is kept
and marked ``disguised``. Results are cached per text, since servers repeat the same forms.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from elicitguard.checks.forms._lexicon import Entry, Lexicon
from elicitguard.checks.forms._reveal import readings
from elicitguard.checks.forms._text import normalize
from elicitguard.checks.forms._types import SECRET_CLASSES

_SECRET_RAW = frozenset((*SECRET_CLASSES, "pin"))
_CLASS_EXEMPT_FROM_MODIFIERS = frozenset(("security_answer",))
COURTESY = frozenset(("please", "pls", "kindly"))
"""Words that leave a label a label ("Your card's CVV, please")."""
_LABEL_FILLER = COURTESY | {"s"}
"""... and ``s``, what "'s" leaves once normalised."""
_MODIFIERS = frozenset(("before", "before_secret", "after", "after_secret"))
_ASK_FILLER = frozenset(("here", "below", "now"))
"""Words that leave an asking label a label ("Paste your token here")."""


@dataclass(frozen=True, slots=True)
class ClassHit:
    """An unsuppressed class term found in a text."""

    cls: str
    lang: str
    term: str
    weak: bool
    key_only: bool
    start: int
    disguised: bool = False
    alone: bool = False
    """The term is the whole text, connector words aside ("Token", "Your secret")."""
    ends: bool = False
    """The term ends a short text, at most two words before it ("Your OpenAI API key:")."""


@dataclass(frozen=True, slots=True)
class Scan:
    """Everything the classifier needs to know about one text."""

    hits: tuple[ClassHit, ...]
    roles: tuple[tuple[str, int], ...]
    langs: tuple[str, ...]
    notes: tuple[str, ...]
    role_names: frozenset[str]
    suppressed: frozenset[str] = frozenset()
    """Classes whose word a modifier qualified ("password length")."""
    state_hits: tuple[ClassHit, ...] = ()
    """Class words qualified only by a state word ("password required"): secrets in text."""

    def has(self, role: str) -> bool:
        """Whether a word of ``role`` (``benign``, ``ask`` …) occurs in the text."""
        return role in self.role_names

    def first(self, role: str) -> int | None:
        """Position of the first word of ``role``, if any."""
        return next((pos for name, pos in self.roles if name == role), None)


_Match = tuple[int, int, str, tuple[Entry, ...]]


def _gap_words(text: str, end: int, start: int) -> list[str]:
    """The whole words between two matches. A match of an inflected term (``salasana*``
    in "salasanan") ends inside its word: the rest of that word belongs to the match, and so
    does the start of the next match's word (``*salasana``)."""
    gap = text[end:start]
    words = gap.split()
    if words and end > 0 and not gap[:1].isspace() and not text[end - 1].isspace():
        words = words[1:]
    if words and start < len(text) and not gap[-1:].isspace() and not text[start].isspace():
        words = words[:-1]
    return words


def _adjacent(lex: Lexicon, text: str, end: int, start: int) -> bool:
    """Whether only connector words separate two matches."""
    return all(word in lex.connectors for word in _gap_words(text, end, start))


def _possessive_gap(text: str, end: int, start: int) -> bool:
    """Whether two matches touch or only a possessive joins them ("API key's name")."""
    return all(word == "s" for word in _gap_words(text, end, start))


def _asks_here(text: str, start: int, entries: tuple[Entry, ...]) -> bool:
    """Whether an ask word asks where it stands.

    A word that one language's lexicon reads as an ask and another's as a state word
    (Danish and Norwegian "send" is the imperative; English "send" says a code goes *to*
    the user) asks only where an imperative stands: first in its sentence, courtesy words
    aside ("Send koden", "Please send"). "We will send you a code by SMS" tells, not asks.
    """
    if not any(e.tag in _NOT_ASKING for e in entries):
        return True
    return all(word in _BEFORE_IMPERATIVE for word in text[:start].split())


_NOT_ASKING = frozenset(("state", "before"))
_BEFORE_IMPERATIVE = COURTESY | {"venligst", "vennligst"}  # da, nb "please"


def _modified(lex: Lexicon, text: str, matches: list[_Match], index: int, cls: str) -> str | None:
    """How the class term at ``index`` is qualified: ``property``, ``state`` or not (None).

    ``property``: a modifier names another value ("password *length*", "*name of* the key");
    ``state``: every modifier next to it is also a state word ("password *required*",
    "*reset* password").
    """
    if cls in _CLASS_EXEMPT_FROM_MODIFIERS:
        return None
    secret = cls in _SECRET_RAW
    after = {"after", "after_secret"} if secret else {"after"}
    before = {"before", "before_secret"} if secret else {"before"}
    start, end = matches[index][0], matches[index][1]
    state = False
    # Walk over adjacent modifier words: "密码 最小 长度", "password minimum length".
    pos = index + 1
    while pos < len(matches) and _adjacent(lex, text, end, matches[pos][0]):
        tags = {e.tag for e in matches[pos][3]}
        if tags & after == {"after_secret"} and not _possessive_gap(text, end, matches[pos][0]):
            break  # "the password *for your* account" is the password, not the account
        if tags & after:
            if "state" not in tags:
                return "property"
            if text[end : matches[pos][0]].split() == ["to"]:
                break  # "the key *to set* this up": a purpose, the key is still asked for
            state = True
        elif not tags & _MODIFIERS:
            break
        end = matches[pos][1]
        pos += 1
    if index > 0:
        prev = matches[index - 1]
        tags = {e.tag for e in prev[3]}
        if tags & before and _adjacent(lex, text, prev[1], start):
            if "ask" in tags and _gap_words(text, prev[1], start):
                return None  # "Input *the* security code": the verb asks ("input tokens" counts)
            if "state" not in tags:
                return "property"
            state = True
    return "state" if state else None


def _scan_normalized(lex: Lexicon, text: str) -> Scan:
    """Scan already normalised text."""
    matches: list[_Match] = [
        (start, end, term, lex.entries.get(term, ())) for start, end, term in lex.find(text)
    ]
    hits: list[ClassHit] = []
    roles: list[tuple[str, int]] = []
    langs: list[str] = []
    notes: list[str] = []
    suppressed: list[str] = []
    state_hits: list[ClassHit] = []
    words = [w for w in text.split() if w not in lex.connectors and w not in _LABEL_FILLER]
    stated = {
        w
        for _s, _e, term, entries in matches
        if any(e.tag == "state" for e in entries)
        for w in term.split()
    }
    asked = {
        w
        for _s, _e, term, entries in matches
        if any(e.tag == "ask" for e in entries)
        for w in term.split()
    }
    if asked:  # "Enter your secret here": the label is the secret, asked for
        stated |= asked | _ASK_FILLER
    for index, (start, _end, term, entries) in enumerate(matches):
        label = " ".join(term.split())
        if len({e.lang for e in entries}) == 1:
            langs.append(entries[0].lang)
        for entry in entries:
            if entry.tag == "ask" and not _asks_here(text, start, entries):
                continue
            if entry.tag not in _CLASSES_AND_PIN:
                roles.append((entry.tag, start))
                if entry.tag == "negative":
                    notes.append(f"negative '{label}'")
            else:
                how = _modified(lex, text, matches, index, entry.tag)
                # Compared on the words that count, as ``words`` is: "numbers on the back of
                # your card" ends "The 3 numbers on the back of your card".
                own = [
                    w for w in label.split() if w not in lex.connectors and w not in _LABEL_FILLER
                ] or label.split()
                hit = ClassHit(
                    entry.tag,
                    entry.lang,
                    label,
                    entry.weak,
                    entry.key_only,
                    start,
                    alone=[w for w in words if w not in stated] == own,
                    ends=how is None and words[-len(own) :] == own and len(words) <= len(own) + 2,
                )
                if how is None:
                    hits.append(hit)
                    continue
                word = "a state word" if how == "state" else "a modifier"
                notes.append(f"'{label}' qualified by {word}")
                suppressed.append(entry.tag)
                if how == "state":
                    state_hits.append(hit)
    return Scan(
        tuple(hits),
        tuple(roles),
        tuple(langs),
        tuple(dict.fromkeys(notes)),
        frozenset(name for name, _ in roles),
        frozenset(suppressed),
        tuple(state_hits),
    )


_CLASSES_AND_PIN = frozenset(
    (*SECRET_CLASSES, "pin", "government_id", "bank_account", "health"),
)


_UNNAMING_ROLES = frozenset(("negative", "benign", "postal_context"))
"""Roles that say a text is not about a secret (kept from a disguised reading only when
the plain reading names none)."""


def _without_roles(found: Scan, names: frozenset[str]) -> Scan:
    """``found`` without the words of the roles ``names``."""
    if not found.role_names & names:
        return found
    roles = tuple(r for r in found.roles if r[0] not in names)
    return Scan(
        found.hits,
        roles,
        found.langs,
        tuple(n for n in found.notes if not n.startswith("negative ")),
        frozenset(name for name, _ in roles),
        found.suppressed,
        found.state_hits,
    )


def _merge(plain: Scan, other: Scan) -> Scan:
    """Add what a disguised reading found that the plain reading did not."""
    named = {h.cls for h in plain.hits if not h.key_only and not h.weak} | plain.suppressed
    hinted = {h.cls for h in plain.hits if not h.key_only and h.weak}
    if any(not h.weak and not h.key_only for h in plain.hits):
        # A reading cannot un-name what the text plainly names: "PIN-Code" read joined is
        # the postal "pincode", but the user reads a PIN code.
        other = _without_roles(other, _UNNAMING_ROLES)
    new = tuple(
        ClassHit(h.cls, h.lang, h.term, h.weak, h.key_only, h.start, True, h.alone, h.ends)
        for h in other.hits
        # A weak plain word ("key" in "s3cret key") leaves room for the strong one the
        # disguise hides.
        if h.cls not in named and (h.cls not in hinted or not h.weak)
    )
    stated = {h.cls for h in plain.state_hits}
    if (
        not new
        and other.role_names <= plain.role_names
        and {h.cls for h in other.state_hits} <= stated
    ):
        return plain
    return Scan(
        plain.hits + new,
        plain.roles + tuple(r for r in other.roles if r[0] not in plain.role_names),
        plain.langs + tuple(lang for lang in other.langs if lang not in plain.langs),
        tuple(dict.fromkeys(plain.notes + other.notes)),
        plain.role_names | other.role_names,
        plain.suppressed | other.suppressed,
        plain.state_hits
        + tuple(
            ClassHit(h.cls, h.lang, h.term, h.weak, h.key_only, h.start, disguised=True)
            for h in other.state_hits
            if h.cls not in stated
        ),
    )


@lru_cache(maxsize=32768)
def scan(lex: Lexicon, text: str, identifier: bool = False) -> Scan:
    """Scan ``text`` (an identifier when ``identifier``: camelCase is split)."""
    found = _scan_normalized(lex, normalize(text, identifier=identifier))
    for reading in readings(text, identifier):
        found = _merge(found, _scan_normalized(lex, reading))
    return found
