"""Look-alikes of protected domains: skeleton matching and brands embedded in other hosts.

Why: per-label rules cannot know that ``gооgle.com`` (Cyrillic о) or ``rnicrosoft.com`` means
a specific site.  As Chromium does with its top-domain list, we compute UTS 39 skeletons of
the host, after removing diacritics from Latin/Greek/Cyrillic hosts and with extra mappings
for letters ICU's data does not map (several skeletons when one character resembles several
letters: þ -> b/p, œ -> ce/oe, ł -> l/t, ӏ -> i/l), and look up the registrable part (the last
two to four labels) in an index of the protected domains' skeletons.  The protected domain
itself and its subdomains are fine.  Unlike Chromium we also compare pure-ASCII hosts
(``rnicrosoft.com``, ``paypa1.com``): nothing is being displayed here, we are deciding whether
to warn, and those are the commonest phishing hosts.

The second check (``embedded_protected``) finds a protected domain written inside another
registrable domain as a run of labels or hyphen-separated tokens: ``paypal.com.evil.example``,
``paypal-com.evil.example``, ``login-microsoftonline.com``.  A protected brand under another
public suffix (``google.com.au``) is not flagged, nor is a bare brand label without its
suffix (``apple.stackexchange.com`` and ``microsoft.github.io`` are legitimate).
"""

from __future__ import annotations

import dataclasses
import itertools
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import idna

from elicitguard.checks.domains import _unicode as uc
from elicitguard.checks.domains._unicode import lgc_only

__all__ = [
    "BAIT_WORDS",
    "ProtectedIndex",
    "brand_with_bait",
    "build_index",
    "embedded_protected",
    "extra_skeleton",
    "find_lookalike",
    "host_skeletons",
    "normalise_domain",
]


def _groups(spec: dict[str, str]) -> dict[str, str]:
    return {ch: target for chars, target in spec.items() for ch in chars}


# Letters that look like Latin letters or digits but that confusables.txt does not map
# (facts from Chromium's skeleton generator, applied before the UTS 39 skeleton).
_EXTRA = _groups(
    {
        "æӕ": "ae",
        "ϼҏ": "p",
        "ħнћңҥӈӊԋԧԩ": "h",
        "ĸκкқҝҟҡӄԟ": "k",
        "ŋпԥกח": "n",
        "ŧтҭԏ七丅丆丁": "t",
        "ƅьҍвß": "b",
        "ωшщพฟພຟ": "w",
        "мӎ": "m",
        "єҽҿၔ": "e",
        "ґ": "r",
        "ғӻ": "f",
        "ҫင": "c",
        "ұ丫": "y",
        "χҳӽӿ乂": "x",
        "ԃძ": "d",
        "ԍဌ": "g",
        "ടรຣຮ": "s",
        "၂": "j",
        "०০੦૦ଠ୦೦စ": "o",
        "৭੧૧": "q",
        "บບ": "u",
        "θ": "0",
        "२২੨૨೩೭շ": "2",
        "зҙӡउওਤ੩૩౩ဒვპੜკ": "3",
        "੫丩ㄐ": "4",
        "ճ": "6",
        "৪੪୫": "8",
        "૭୨౨": "9",
        "—一―⸺⸻": "-",
    }
)
_MULTI: dict[str, tuple[str, ...]] = {
    "þ": ("b", "p"),
    "œ": ("ce", "oe"),
    "ł": ("l", "t"),
    "1": ("i",),  # g1thub: a 1 for an i as well as for an l
}
_AFTER_MARK_REMOVAL = str.maketrans({"ł": "l", "ø": "o", "đ": "d"})
#: Digits typed for letters (``g00gle``, ``micr0s0ft``, ``5tripe``), read on the skeleton
#: (where UTS 39 has made ``0`` an ``O`` and ``1`` an ``l``), so that a digit and everything
#: that looks like it read alike: one reading each, no extra skeletons.
_DIGITS_AS_LETTERS = str.maketrans(
    {"O": "o", "0": "o", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b"}
)
_MAX_MULTI_CHARS = 5
_MAX_VARIANTS = 128
_LABELS_TO_CHECK = 4
_MIN_SEPARATOR_MATCH = 5
#: Brand labels shorter than this (``live``, ``x``, ``ing``) are too common inside other
#: names to flag a brand-plus-bait domain on.
_MIN_BRAND = 5
#: What phishing domains add to a brand (``paypal-secure.com``, ``microsoftlogin.com``,
#: ``secure-g00gle-accounts.com``): the words of sign-in, account recovery and payment
#: pages. A brand beside any other word (``google-analytics``, ``amazon-adsystem``,
#: ``apple-pie-recipes``) is not flagged: brands own such domains, and shops name
#: themselves after things.
BAIT_WORDS: frozenset[str] = frozenset(
    [
        "login",
        "logon",
        "signin",
        "signon",
        "sign",
        "log",
        "in",
        "on",
        "secure",
        "security",
        "verify",
        "verification",
        "verified",
        "validate",
        "validation",
        "confirm",
        "confirmation",
        "account",
        "accounts",
        "acct",
        "auth",
        "oauth",
        "authenticate",
        "authentication",
        "sso",
        "mfa",
        "2fa",
        "otp",
        "password",
        "passwords",
        "passwd",
        "pass",
        "recover",
        "recovery",
        "unlock",
        "unlocked",
        "reset",
        "restore",
        "wallet",
        "billing",
        "invoice",
        "payment",
        "payments",
        "pay",
        "refund",
        "update",
        "updates",
        "alert",
        "alerts",
        "notice",
        "locked",
        "suspended",
        "limited",
        "id",
        "identity",
        "access",
        "portal",
        "session",
        "token",
        "key",
        "keys",
        "credential",
        "credentials",
        # The words of support, account-care and giveaway pages (``apple-center-services``,
        # ``binancegiveaway``, ``icloud-support``, ``apple-findmyiphone``).
        "support",
        "suporte",
        "soporte",
        "service",
        "services",
        "servicio",
        "help",
        "helpline",
        "helpdesk",
        "care",
        "center",
        "centre",
        "customer",
        "client",
        "official",
        "team",
        "inc",
        "setup",
        "info",
        "mail",
        "email",
        "web",
        "webapp",
        "app",
        "apps",
        "appstore",
        "store",
        "my",
        "find",
        "findmy",
        "iphone",
        "locate",
        "location",
        "located",
        "giveaway",
        "promo",
        "gift",
        "reward",
        "rewards",
        "bonus",
        "claim",
        "claims",
        "airdrop",
        "sms",
        "check",
        "safe",
        "protect",
        "protection",
        "redirect",
        "manage",
        "manager",
        "management",
        "user",
        "users",
        "data",
        "status",
        "review",
    ]
)
_MAX_BAIT_WORDS = 6
#: Brand labels that are everyday words sites use beside bait words for their own pages
#: (``secure-checkout``, ``crypto-wallet``, ``square-payment``, ``login.gov``'s ``login``):
#: the skeleton check still covers their look-alikes, the brand-with-bait check does not.
_NOT_BRANDS = BAIT_WORDS | frozenset(
    [
        "checkout",
        "crypto",
        "discover",
        "force",
        "medium",
        "monday",
        "render",
        "segment",
        "square",
        "target",
        "threads",
        "linear",
        "signal",
        "python",
        "elastic",
        "booking",
        "railway",
    ]
)
#: The shortest bait word read glued to a brand (``paypalsso`` is not read; ``paypallogin`` is).
_MIN_GLUED = 4


def extra_skeleton(ch: str) -> str | None:
    """The Latin reading Chromium's skeleton generator gives ``ch`` beyond confusables.txt."""
    return _EXTRA.get(ch)


def remove_diacritics(host: str) -> str:
    """Drop non-spacing marks (and map ł ø đ) when the host is Latin/Greek/Cyrillic only."""
    if host.isascii() or not lgc_only(host):
        return host
    nfd = unicodedata.normalize("NFD", host)
    stripped = "".join(ch for ch in nfd if unicodedata.category(ch) != "Mn")
    return unicodedata.normalize("NFC", stripped).translate(_AFTER_MARK_REMOVAL)


def _variants(host: str) -> set[str]:
    """The host with each multi-skeleton character replaced by each of its readings."""
    positions = [i for i, ch in enumerate(host) if ch in _MULTI]
    if not positions or len(positions) > _MAX_MULTI_CHARS:
        return {host}
    choices = [(host[i], *_MULTI[host[i]]) for i in positions]
    out: set[str] = set()
    for combo in itertools.product(*choices):
        chars = list(host)
        for i, replacement in zip(positions, combo, strict=True):
            chars[i] = replacement
        out.add("".join(chars))
        if len(out) >= _MAX_VARIANTS:
            break
    return out


@lru_cache(maxsize=8192)
def host_skeletons(host: str) -> frozenset[str]:
    """All skeletons of a lower-case Unicode host (trailing dot removed)."""
    host = host.rstrip(".")
    candidates = _variants(remove_diacritics(host))
    if any(ch in host for ch in _MULTI) and remove_diacritics(host) != host:
        candidates |= _variants(host)
    out: set[str] = set()
    for variant in candidates:
        mapped = "".join([_EXTRA.get(ch, ch) for ch in variant])
        out.add(uc.skeleton(mapped).translate(_DIGITS_AS_LETTERS))
        if "ӏ" in mapped:
            out.add(uc.skeleton(mapped.replace("ӏ", "l")).translate(_DIGITS_AS_LETTERS))
    return frozenset(out)


def normalise_domain(domain: str) -> str | None:
    """Lower-case Unicode form of a domain written in Unicode or punycode, or ``None``."""
    text = domain.strip().rstrip(".").lower()
    if not text or "." not in text:
        return None
    try:
        return idna.decode(text, uts46=True)
    except (idna.IDNAError, UnicodeError):
        return text if text.isascii() else None


@dataclass(frozen=True, slots=True)
class ProtectedIndex:
    """Protected domains keyed for the two look-alike checks."""

    domains: frozenset[str]
    by_skeleton: dict[str, tuple[str, ...]]
    by_skeleton_no_hyphen: dict[str, tuple[str, ...]]
    runs_by_first_label: dict[str, tuple[tuple[str, ...], ...]]
    #: Skeleton of a protected domain's brand label (``paypal`` of ``paypal.com``, five
    #: letters or more) -> the domain it names (``.com`` first), for :func:`brand_with_bait`.
    brands: dict[str, str] = dataclasses.field(default_factory=dict)
    #: The same brand skeletons by their first five characters, to find one inside a label.
    brand_heads: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)


@lru_cache(maxsize=64)
def build_index(domains: frozenset[str]) -> ProtectedIndex:
    """Index normalised protected domains (Unicode, lower case) by skeleton and labels."""
    by_skel: dict[str, list[str]] = {}
    by_nohyphen: dict[str, list[str]] = {}
    runs: dict[str, list[tuple[str, ...]]] = {}
    for domain in sorted(domains):
        for skel in host_skeletons(domain):
            by_skel.setdefault(skel, []).append(domain)
            if len(skel.partition(".")[0].replace("-", "")) >= _MIN_SEPARATOR_MATCH:
                by_nohyphen.setdefault(skel.replace("-", ""), []).append(domain)
        labels = tuple(domain.split("."))
        runs.setdefault(labels[0], []).append(labels)
    brands: dict[str, str] = {}
    for domain in sorted(domains, key=lambda d: (not d.endswith(".com"), d)):
        brand = domain.split(".")[0]
        if len(brand) >= _MIN_BRAND and "-" not in brand and brand not in _NOT_BRANDS:
            for skel in host_skeletons(brand):
                brands.setdefault(skel, domain)
    return ProtectedIndex(
        domains=domains,
        by_skeleton={k: tuple(v) for k, v in by_skel.items()},
        by_skeleton_no_hyphen={k: tuple(v) for k, v in by_nohyphen.items()},
        runs_by_first_label={k: tuple(v) for k, v in runs.items()},
        brands=brands,
        brand_heads=_heads(brands),
    )


def _heads(brands: dict[str, str]) -> dict[str, tuple[str, ...]]:
    heads: dict[str, list[str]] = {}
    for brand in sorted(brands, key=lambda b: (-len(b), b)):
        heads.setdefault(brand[:_MIN_BRAND], []).append(brand)
    return {k: tuple(v) for k, v in heads.items()}


def is_same_or_subdomain(host: str, domain: str) -> bool:
    """``host`` is ``domain`` or one of its subdomains."""
    return host == domain or host.endswith("." + domain)


def is_covered(host: str, domains: frozenset[str]) -> bool:
    """``host`` is one of ``domains`` or a subdomain of one (a set lookup per label suffix)."""
    labels = host.split(".")
    return any(".".join(labels[i:]) in domains for i in range(len(labels)))


def _lookup(host: str, skeletons: Iterable[str], table: dict[str, tuple[str, ...]]) -> str | None:
    for skel in sorted(skeletons):
        labels = skel.split(".")[-_LABELS_TO_CHECK:]
        while len(labels) >= 2:
            hits = table.get(".".join(labels))
            if hits:
                if any(is_same_or_subdomain(host, d) for d in hits):
                    return None
                return hits[0]
            labels = labels[1:]
    return None


def find_lookalike(host: str, index: ProtectedIndex) -> str | None:
    """The protected domain ``host`` imitates by skeleton, or ``None``."""
    if is_covered(host, index.domains):
        return None
    skeletons = host_skeletons(host)
    hit = _lookup(host, skeletons, index.by_skeleton)
    if hit is not None:
        return hit
    if "-" in host:
        no_hyphen = [skel.replace("-", "") for skel in skeletons]
        return _lookup(host, no_hyphen, index.by_skeleton_no_hyphen)
    return None


def embedded_protected(host: str, registrable: str | None, index: ProtectedIndex) -> str | None:
    """A protected domain spelled inside an unrelated host's labels or hyphenated tokens."""
    if is_covered(host, index.domains):
        return None
    labels = host.split(".")
    registrable_start = len(labels) - len(registrable.split(".")) if registrable else 0
    tokens: list[str] = []
    token_label: list[int] = []
    for li, label in enumerate(labels):
        for token in label.split("-"):
            tokens.append(token)
            token_label.append(li)
    for i, token in enumerate(tokens):
        for run in index.runs_by_first_label.get(token, ()):
            if tuple(tokens[i : i + len(run)]) != run:
                continue
            li = token_label[i]
            # The brand's own name under another public suffix (google.com.au, paypal.com.br).
            if li == registrable_start and labels[li] == run[0]:
                continue
            return ".".join(run)
    return None


def brand_with_bait(host: str, registrable: str | None, index: ProtectedIndex) -> str | None:
    """The protected domain whose brand a label of the host joins to bait words
    (``microsoft-login.com``, ``paypa1-secure.com``, ``my-account-paypal.example.net``).

    Why: after look-alikes, a brand joined to a word such as *login*, *secure* or
    *support* is the commonest phishing host ("combosquatting"); read in skeletons, so a
    digit or look-alike letter in the brand (``g00gle-accounts``) changes nothing. Only
    brands of five letters or more, and only when every other part of the label is a bait
    word, a number or campaign id, or another brand (at least one bait word). A brand label
    alone as a subdomain counts only under a domain named in nothing but bait words
    (``paypal.secure-login.com``); under a domain with a name of its own
    (``paypal.evil.example``, ``gitlab.company.com``) it is how self-hosted instances and
    tenants are named.
    """
    if not registrable or not index.brands or is_covered(host, index.domains):
        return None
    depth = registrable.count(".") + 1
    bait, glued = _bait_skeletons()
    written = host.split(".")
    for skel in host_skeletons(host):  # cached: the look-alike check computed them
        if not _names_a_brand(skel, index.brand_heads):
            continue
        labels = skel.split(".")
        if len(labels) < depth or len(labels) != len(written):
            continue
        parts = [_tokens(label, raw) for label, raw in zip(labels, written, strict=True)]
        own = parts[-depth]
        # A brand as a subdomain of a domain named only in bait words: paypal.secure-login.com.
        if depth < len(labels) and (
            _bait_only(own, bait) or (len(own) == 1 and _glued_words(own[0], glued) <= 2)
        ):
            for sub in labels[:-depth]:
                hit = index.brands.get(sub)
                if hit is not None:
                    return hit
        # The registrable label, or a subdomain label, joining a brand to bait words:
        # microsoft-login.com, my-account-paypal.example.net.
        for tokens in parts[: len(parts) - depth + 1]:
            hit = _brand_among(tokens, index, bait, glued)
            if hit is not None:
                return hit
    return None


def _names_a_brand(skel: str, heads: dict[str, tuple[str, ...]]) -> bool:
    """Whether a brand's first five letters occur anywhere: most hosts name none."""
    return any(skel[at : at + _MIN_BRAND] in heads for at in range(len(skel) - _MIN_BRAND + 1))


def _tokens(label: str, written: str) -> list[str]:
    """The hyphen-separated parts of a skeleton label, with numbers and digit-laden noise
    (``2024``, ``id27945``) as written: the skeleton reads their digits as letters."""
    tokens = [t for t in label.split("-") if t]
    raw = [t for t in written.split("-") if t]
    if len(tokens) != len(raw):
        return tokens
    return [_NOISE if _noise(r) else t for r, t in zip(raw, tokens, strict=True)]


_NOISE = "0"


def _noise(token: str) -> bool:
    """A number, or letters and digits mixed as campaign ids are (``id27945``, ``9e11e``)."""
    digits = sum(c.isdigit() for c in token)
    return digits == len(token) or (digits >= 3 and digits * 2 >= len(token))


def _brand_among(
    tokens: list[str], index: ProtectedIndex, bait: frozenset[str], glued: frozenset[str]
) -> str | None:
    """The brand among ``tokens`` whose every other token is bait, noise or another brand."""
    for i, token in enumerate(tokens):
        hit = index.brands.get(token)
        rest = [t for t in tokens[:i] + tokens[i + 1 :] if t not in index.brands]
        if hit is not None and _bait_only(rest, bait):
            return hit
        glued_here = hit is None and len(token) >= _MIN_BRAND + _MIN_GLUED
        if glued_here and (not rest or _bait_only(rest, bait)):
            found = _glued_brand(token, index, glued)
            if found is not None:
                return found
    return None


#: Bait words too short or too common to strip from a glued label (``applepay``,
#: ``googlepass`` and ``amazonkey`` are names, not bait).
_NOT_GLUED = frozenset(
    [
        "sign",
        "log",
        "in",
        "on",
        "id",
        "pay",
        "pass",
        "key",
        "keys",
        "token",
        "access",
        "portal",
        "update",
        "updates",
        "app",
        "apps",
        "web",
        "my",
        "inc",
        "sms",
        "mail",
        "email",
        "store",
        "care",
        "team",
        "help",
        "find",
        "info",
        "data",
        "user",
        "users",
        "check",
        "safe",
    ]
)


@lru_cache(maxsize=1)
def _bait_skeletons() -> tuple[frozenset[str], frozenset[str]]:
    """The bait words as skeletons (``confirm`` reads ``confirrn``), and those that may be
    glued to a brand."""
    bait = frozenset(uc.skeleton(w) for w in BAIT_WORDS)
    glued = {uc.skeleton(w) for w in BAIT_WORDS - _NOT_GLUED}
    return bait, frozenset(w for w in glued if len(w) >= _MIN_GLUED)


def _bait_only(parts: list[str], bait: frozenset[str]) -> bool:
    """One to six parts, every one a bait word or noise, at least one a word."""
    return (
        0 < len(parts) <= _MAX_BAIT_WORDS
        and all(p in bait or p == _NOISE for p in parts)
        and any(p != _NOISE for p in parts)
    )


def _glued_brand(token: str, index: ProtectedIndex, glued: frozenset[str]) -> str | None:
    """A brand written with bait words glued before or after it, at most three in all
    (``paypalsecure``, ``securepaypallogin``, ``rnicrosoftaccountlogin``)."""
    heads = index.brand_heads
    for at in range(len(token) - _MIN_BRAND + 1):
        for brand in heads.get(token[at : at + _MIN_BRAND], ()):
            if not token.startswith(brand, at):
                continue
            before, after = token[:at], token[at + len(brand) :]
            if (before or after) and _glued_words(before, glued) + _glued_words(after, glued) <= 3:
                return index.brands[brand]
    return None


def _glued_words(text: str, glued: frozenset[str], most: int = 3) -> int:
    """How many glued bait words ``text`` is (0 when empty; ``most + 1`` when it is not
    made of at most ``most`` of them)."""
    if not text:
        return 0
    if text in glued:
        return 1
    if most > 1:
        for cut in range(_MIN_GLUED, len(text) - _MIN_GLUED + 1):
            if text[:cut] in glued:
                rest = _glued_words(text[cut:], glued, most - 1)
                if rest < most:
                    return 1 + rest
    return most + 1
