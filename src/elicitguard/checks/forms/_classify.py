"""Weigh the evidence about one form property and name what it collects.

Evidence is scored per class by what the user reads: the title weighs 2, the description 2
(0 when the field is plainly something else, such as a username, or the description says
"never"/"not"), the key 2 when there is no title (the client then shows the key) and 1 when
a title that says what the field is (the key is the weakest signal: the user never sees it), the request message or
an option label that asks for a secret 2 when the form has a single free-text field,
``format: password`` or ``writeOnly`` 2, a length that fits the class 1 (3-4 characters for a
CVV, 4-8 for a code), and 1 more when the word was disguised (look-alike letters, digits for
letters, spaced letters, HTML references): needing the disguise is itself a sign.
Type rules then veto what the input kind cannot carry (see ``_shape``), and the best class
wins: score 4 or more is ``high`` confidence, 2 or more ``medium``, anything else ``low``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from elicitguard.base.pointer import escape_pointer
from elicitguard.checks.forms._lexicon import Lexicon
from elicitguard.checks.forms._message import PRIORITY, language_of, reported
from elicitguard.checks.forms._scan import ClassHit, Scan, scan
from elicitguard.checks.forms._shape import Shape
from elicitguard.checks.forms._text import normalize
from elicitguard.checks.forms._types import Confidence, FieldVerdict, MessageAsk

_SECRET_RAW = frozenset(PRIORITY[:8])
_NUMERIC = frozenset(
    ("pin", "password", "otp", "cvv", "card_number", "government_id", "bank_account", "health")
)
_WEIGHT = {"key": 2.0, "title": 2.0, "description": 2.0}
_KEY_UNDER_TITLE = 1.0
_LANGUAGE_RANK = {"title": 0, "description": 1, "key": 2}  # prose tells the language best


@dataclass(frozen=True, slots=True)
class FormContext:
    """What the rest of the form says about each field."""

    ask: MessageAsk | None
    otp_hint: bool
    postal: bool
    titled: bool = False
    sign_in: bool = False
    """Another field of the form asks for a user name or an email (a sign-in form)."""
    password_topic: bool = False
    """The message is about the user's password ("Change your password"), without an ask."""


@dataclass(slots=True)
class _Evidence:
    """Per-class scores and the reasons behind them."""

    scores: dict[str, float] = field(default_factory=dict)
    best_hit: dict[str, tuple[int, ClassHit]] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    disguised: set[str] = field(default_factory=set)

    def add(self, cls: str, weight: float, reason: str) -> None:
        """Add ``weight`` to ``cls``."""
        self.scores[cls] = self.scores.get(cls, 0.0) + weight
        self.reasons.append(reason)

    def add_hits(self, source: str, hits: Iterable[ClassHit], weight: float | None = None) -> None:
        """Count each class at most once per source, at its strongest term."""
        strongest: dict[str, ClassHit] = {}
        for hit in hits:
            if hit.key_only and source != "key":
                continue
            held = strongest.get(hit.cls)
            if (
                held is None
                or (held.weak and not hit.weak)
                or (held.disguised and not hit.disguised)
            ):
                strongest[hit.cls] = hit
        for cls, hit in strongest.items():
            base = _WEIGHT[source] if weight is None else weight
            weak = hit.weak and not (hit.alone and source != "description" and _names_it(hit))
            if hit.disguised:
                self.disguised.add(cls)
                note = "; disguised: it reads so only once its disguise is undone"
                self.add(
                    cls,
                    base / (2 if weak else 1) + 1.0,
                    f"{source}: '{hit.term}' ({cls}, {hit.lang}){note}",
                )
            else:
                self.add(
                    cls,
                    base / (2 if weak else 1),
                    f"{source}: '{hit.term}' ({cls}, {hit.lang})",
                )
            rank = _LANGUAGE_RANK[source]
            if cls not in self.best_hit or rank < self.best_hit[cls][0]:
                self.best_hit[cls] = (rank, hit)

    def drop(self, classes: Iterable[str], reason: str) -> None:
        """Veto classes the field cannot carry."""
        gone = [c for c in classes if c in self.scores]
        for cls in gone:
            del self.scores[cls]
        if gone:
            self.reasons.append(reason)


# A weak word that is the whole label ("Token", "Secret", "2FA") names what the box collects;
# these few stay weak even alone, since "Key" / "Value" pairs and "Auth" menus are ordinary.
_WEAK_EVEN_ALONE = frozenset(
    ("key", "keys", "cle", "cles", "schlussel", "auth", "tokens", "jetons", "secrets")
)


def _names_it(hit: ClassHit) -> bool:
    """Whether a weak term, standing alone as a label, names the secret it collects."""
    return hit.term not in _WEAK_EVEN_ALONE


def _fits(cls: str, shape: Shape) -> bool:
    """Whether the declared bounds fit the usual length of the class."""
    hi = shape.max_len if shape.max_len is not None else shape.min_len
    top = shape.maximum
    if cls == "cvv":
        return (hi is not None and 3 <= hi <= 4) or (top is not None and 999 <= top <= 9999)
    if cls in ("otp", "pin"):
        return (hi is not None and 4 <= hi <= 8) or (top is not None and 999 <= top < 1e8)
    if cls == "card_number":
        return (hi is not None and 12 <= hi <= 19) or (top is not None and top >= 1e11)
    return False


def _code_is_otp(scans: tuple[Scan, ...], shape: Shape, ctx: FormContext) -> bool:
    """A bare "code" field is a one-time code when sent to the user or shaped like one."""
    if not any(s.has("code") for s in scans[:2]):
        # "The code from the e-mail we just sent" said only in the description; a number
        # whose description counts or qualifies the code ("How many digits the generated
        # code should have", "Maximum code length") is a setting, not the code.
        desc = scans[2]
        if shape.kind == "number" and desc.has("before"):
            return False
        return desc.has("code") and desc.has("otp_context")
    return any(s.has("otp_context") for s in scans) or ctx.otp_hint or _fits("otp", shape)


#: Words that name one version of a secret the message talks about: "Old one", "Current",
#: "New (again)", "Ancien", "Aktuell", "Текущий", "旧". In the matching form (see ``_text``).
_VERSION_WORDS = frozenset(
    (
        "old", "current", "existing", "previous", "present", "new", "again", "repeat",
        "confirm", "confirmation", "retype", "original", "alt", "alte", "altes", "aktuell",
        "aktuelle", "aktuelles", "bisherige", "bisheriges", "neu", "neue", "neues",
        "wiederholen", "bestatigen", "ancien", "ancienne", "actuel", "actuelle", "nouveau",
        "nouvelle", "confirmer", "anterior", "actual", "nuevo", "nueva", "repetir",
        "confirmar", "vecchia", "vecchio", "attuale", "nuova", "nuovo", "ripeti", "conferma",
        "antiga", "antigo", "atual", "nova", "novo", "oud", "oude", "huidig", "huidige",
        "nieuw", "nieuwe", "herhaal", "bevestig", "stare", "stary", "aktualne", "obecne",
        "nowe", "nowy", "powtorz", "potwierdz", "старыи", "старый", "текущии", "текущий",
        "новыи", "новый", "повторите", "подтвердите", "eski", "mevcut", "yeni", "tekrar",
    )
)  # fmt: skip
_VERSION_MARKS = ("旧", "現在", "新しい", "当前", "新的", "确认", "確認", "현재", "새 ", "이전")


def _names_a_version(title: str, desc: str) -> bool:
    """Whether the field's label names the old, current or new one of something."""
    text = normalize(f"{title} {desc}")
    return bool(_VERSION_WORDS.intersection(text.split())) or any(
        mark in text for mark in _VERSION_MARKS
    )


def _title_explains_key(title: Scan, hits: tuple[ClassHit, ...]) -> bool:
    """A title that only talks *about* a secret ("Name of the API key") overrides the key."""
    return bool(title.notes) and not hits


def _title_speaks(title: Scan, ctx: FormContext) -> bool:
    """Whether the title says what the field is (then the hidden key weighs less).

    A neutral title ("Number", "Value") says nothing either way, and the key keeps its weight;
    a title with any lexicon word (a class, "Email", "Expiration", a harmless phrase) outweighs it.
    """
    return ctx.titled and bool(title.hits or title.notes or title.role_names & _SPEAKING)


_SPEAKING = frozenset(
    ("benign", "negative", "after", "before", "after_secret", "before_secret", "postal_context")
)


def _gather(
    scans: tuple[Scan, ...], shape: Shape, ctx: FormContext, names_version: bool = False
) -> _Evidence:
    """Collect evidence from texts, the message, format, length and default.

    ``names_version``: the message is about the user's password and the field's label
    names the old, current or new one of something.
    """
    key, title, desc = scans
    ev = _Evidence()
    # A free-text box labelled "Password (required)" still collects a password: state words
    # silence a class only where the input cannot hold it (the type rules veto those anyway).
    labels = (key.hits + key.state_hits, title.hits + title.state_hits)
    key_hits, title_hits = labels if shape.kind == "text" else (key.hits, title.hits)
    if not _title_explains_key(title, title_hits):
        ev.add_hits("key", key_hits, _KEY_UNDER_TITLE if _title_speaks(title, ctx) else None)
    ev.add_hits("title", title_hits)
    benign = not ev.scores and (key.has("benign") or title.has("benign"))
    if not ev.scores and ctx.sign_in and shape.kind == "text":
        # "Pass" or "PW" as the whole title, beside a user name: the sign-in form's password.
        for hit in title.hits:
            if hit.key_only and hit.alone and hit.cls == "password":
                ev.add(hit.cls, 2.0, f"title: '{hit.term}' beside a user name or email field")
                if hit.disguised:
                    ev.disguised.add(hit.cls)
                break
    if not benign and not desc.has("deny"):
        ev.add_hits("description", desc.hits)
    if names_version and not ev.scores and shape.kind == "text" and not benign:
        ev.add("password", 2.0, "the message is about a password; this field is its old or new one")
    if not ev.scores and _code_is_otp(scans, shape, ctx):
        ev.add("otp", 2.0, "a code field sent to the user or sized like one")
    # A title that says the field is something else ("Token name") outweighs the message.
    if not ev.scores and ctx.ask is not None and not benign and not title.notes:
        where = "the message" if ctx.ask.source == "message" else "an option label or description"
        ev.add(ctx.ask.secret_class, 2.0, f"{where} asks for it; this is the only text field")
        if ctx.ask.disguised:
            ev.disguised.add(ctx.ask.secret_class)
    _format_signals(ev, shape)
    return ev


def _format_signals(ev: _Evidence, shape: Shape) -> None:
    """``format: password``, ``writeOnly``, fitting length and the default's shape."""
    secret = [c for c in ev.scores if c in _SECRET_RAW]
    for flag, name in (
        (shape.fmt == "password", "format: password"),
        (shape.write_only, "writeOnly"),
    ):
        if flag:
            ev.add(secret[0] if secret else "password", 2.0, name)
    for cls in list(ev.scores):
        if _fits(cls, shape):
            ev.add(cls, 1.0, f"length bounds fit {cls}")
    if shape.default == "mask":
        ev.add(secret[0] if secret else "password", 1.0, "default is a masked value")
    elif shape.default == "private_key":
        ev.add("private_key", 2.0, "default looks like a private key")
    elif shape.default == "token" and secret:
        ev.add(secret[0], 1.0, "default looks like a token")


def _apply_type_rules(
    ev: _Evidence, shape: Shape, scans: tuple[Scan, ...], ctx: FormContext
) -> None:
    """Veto classes that the input kind cannot carry."""
    if shape.kind in ("boolean", "choice"):
        ev.drop(
            [c for c in ev.scores if c != "health"],
            f"a {shape.kind} field cannot hold a typed secret",
        )
    elif shape.kind == "number":
        ev.drop(
            [c for c in ev.scores if c not in _NUMERIC], "a number field holds only numeric secrets"
        )
        if "password" in ev.scores:
            ev.add("password", -1.0, "a numeric password is less likely")
    elif shape.kind == "formatted":
        ev.drop(list(ev.scores), f"format {shape.fmt} is not a secret")
    if ctx.postal and "pin" in ev.scores and not _explicit_pin(scans, shape):
        ev.drop(["pin"], "PIN next to address fields: a postal PIN code")


def _explicit_pin(scans: tuple[Scan, ...], shape: Shape) -> bool:
    """A PIN that is clearly a secret even among address fields."""
    return (
        shape.fmt == "password"
        or shape.write_only
        or any(h.cls == "password" for s in scans for h in s.hits)
    )


def _confidence(score: float) -> Confidence:
    """Map a score to a confidence level."""
    if score >= 4:
        return "high"
    return "medium" if score >= 2 else "low"


def _best(ev: _Evidence, classes: frozenset[str]) -> str | None:
    """The highest-scoring class of a family; ties go to the more specific class."""
    found = [c for c in ev.scores if c in classes]
    if not found:
        return None
    return max(found, key=lambda c: (ev.scores[c], -PRIORITY.index(c)))


def _is_one_word(title: str) -> bool:
    """Whether a title is one word, read as an identifier: a server that writes its key as the
    title ("userPassword", "AccountPassword") shows the user that word, so its camelCase is
    split as a key's is. A title of several words is prose and keeps its own capitals."""
    return bool(title) and not any(ch.isspace() for ch in title)


@lru_cache(maxsize=8192)
def classify_field(
    lex: Lexicon, key: str, title: str, desc: str, shape: Shape, ctx: FormContext
) -> FieldVerdict:
    """Classify one property (cached: servers repeat their forms)."""
    scans = (scan(lex, key, True), scan(lex, title, _is_one_word(title)), scan(lex, desc))
    ev = _gather(scans, shape, ctx, ctx.password_topic and _names_a_version(title, desc))
    _apply_type_rules(ev, shape, scans, ctx)
    secret = _best(ev, _SECRET_RAW)
    sensitive = _best(ev, frozenset(PRIORITY[8:]))
    top = secret or sensitive
    score = ev.scores[top] if top else 0.0
    if sensitive == "health" and shape.kind in ("boolean", "choice", "number"):
        score = min(score, 1.0)
    notes = [f"{src}: {n}" for src, s in zip(_WEIGHT, scans, strict=True) for n in s.notes]
    return FieldVerdict(
        field=key,
        pointer="/properties/" + escape_pointer(key),
        secret_class=reported(secret) if secret else None,
        sensitive_class=sensitive,
        language=_language(ev, top, scans, ctx),
        confidence=_confidence(score),
        reasons=tuple(ev.reasons + notes),
        disguised=top in ev.disguised,
    )


def _language(
    ev: _Evidence, top: str | None, scans: tuple[Scan, ...], ctx: FormContext
) -> str | None:
    """The language of the evidence for the winning class."""
    if top is None:
        return None
    ranked = ev.best_hit.get(top)
    if ranked is not None:
        return language_of(ranked[1], scans)
    if ctx.ask is not None and ctx.ask.secret_class == reported(top):
        return ctx.ask.language
    langs = [lang for s in scans for lang in s.langs]
    return max(set(langs), key=langs.count) if langs else None
