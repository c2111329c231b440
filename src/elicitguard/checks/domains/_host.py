"""``analyze_host``: one pass over a host that gathers every EG4xx finding.

Why one function: the consent view, the rules and ``check-url`` all need the same facts about a
host (both forms, registrable domain, IP form, issues) and must agree on them, so they are
computed once, cached, and returned as an immutable value.  The steps follow a browser:
percent-decode, UTS 46 map (case fold, width fold, ideographic full stops to dots), WHATWG IP
literal rules, IDNA 2008 validation per label, then the spoof rules.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Literal

import idna

from elicitguard.checks.domains import _labels, _lookalike, _psl
from elicitguard.checks.ip_literals import EMBEDDING_WORDS, IpLiteral, ends_in_number, parse_ip

__all__ = [
    "HostAnalysis",
    "HostIssue",
    "HostIssueKind",
    "analyze_host",
    "bundled_protected_domains",
    "registrable_domain",
]

HostIssueKind = Literal[
    "invalid_idn",
    "mixed_script",
    "whole_script_confusable",
    "lookalike",
    "deceptive_form",
    "internationalised",
]


@dataclass(frozen=True, slots=True)
class HostIssue:
    """One finding about a host.

    ``label`` is the label concerned (Unicode) or the whole host for host-level findings;
    ``lookalike_of`` names the protected domain imitated, or for a whole-script confusable
    the Latin text the label reads as.
    """

    kind: HostIssueKind
    label: str
    detail: str
    lookalike_of: str | None = None


@dataclass(frozen=True, slots=True)
class HostAnalysis:
    """Everything EG4xx needs to know about one host."""

    input: str
    ascii_host: str
    unicode_host: str
    is_idn: bool
    registrable_domain: str | None
    registrable_domain_unicode: str | None
    public_suffix: str | None
    ip_literal: str | None
    ip_form: str | None
    issues: tuple[HostIssue, ...]

    @property
    def kinds(self) -> frozenset[str]:
        """The set of issue kinds, for quick tests."""
        return frozenset(issue.kind for issue in self.issues)


# WHATWG forbidden host code points plus everything DNS cannot carry in an ASCII label.
_ASCII_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


@cache
def bundled_protected_domains() -> frozenset[str]:
    """The bundled list of often-impersonated domains (normalised Unicode, lower case)."""
    ref = resources.files("elicitguard.checks").joinpath("data", "protected_domains.txt")
    out: set[str] = set()
    for line in ref.read_text(encoding="utf-8").splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            normalised = _lookalike.normalise_domain(entry)
            if normalised:
                out.add(normalised)
    return frozenset(out)


@lru_cache(maxsize=64)
def _index(extra: frozenset[str]) -> _lookalike.ProtectedIndex:
    domains = set(bundled_protected_domains())
    for entry in extra:
        normalised = _lookalike.normalise_domain(entry)
        if normalised:
            domains.add(normalised)
    return _lookalike.build_index(frozenset(domains))


def _invalid(text: str, host: str, detail: str) -> HostAnalysis:
    return HostAnalysis(
        input=text,
        ascii_host=host,
        unicode_host=host,
        is_idn=False,
        registrable_domain=None,
        registrable_domain_unicode=None,
        public_suffix=None,
        ip_literal=None,
        ip_form=None,
        issues=(HostIssue("invalid_idn", host, detail),),
    )


@lru_cache(maxsize=16384)
def analyze_host(host: str, *, protected: frozenset[str] = frozenset()) -> HostAnalysis:
    """Analyse one host (Unicode or punycode, any case, optional trailing dot or brackets).

    ``protected`` adds domains (for example the policy's ``lists.protected_domains`` and the
    connected servers' own domains) to the bundled list for the look-alike checks.
    """
    text = host
    work = host.strip()
    if "%" in work:
        work = urllib.parse.unquote(work, errors="replace")
    if not work:
        return _invalid(text, work, "empty host")

    if work.startswith("[") or ":" in work:
        ip6 = parse_ip(work.lower())
        if ip6 is None or not ip6.is_ipv6:
            return _invalid(text, work.lower(), "not a valid IPv6 literal")
        return _ip_analysis(text, ip6)

    try:
        mapped = idna.uts46_remap(work, std3_rules=False, transitional=False)
    except (idna.IDNAError, UnicodeError) as exc:
        return _invalid(text, work.lower(), f"fails UTS 46 mapping: {exc}")
    mapped = mapped.removesuffix(".")
    labels = mapped.split(".")

    if ends_in_number(mapped):
        ip4 = parse_ip(mapped)
        if ip4 is None:
            return _invalid(text, mapped, "ends in a number but is not a valid IPv4 address")
        return _ip_analysis(text, ip4, non_ascii_input=not work.isascii())

    ascii_labels: list[str] = []
    unicode_labels: list[str] = []
    from_punycode: list[bool] = []
    for label in labels:
        if not label:
            return _invalid(text, mapped, "empty label")
        try:
            if label.startswith("xn--"):
                ulabel = idna.ulabel(label)
                if idna.alabel(ulabel).decode("ascii") != label:
                    raise idna.IDNAError("punycode does not round-trip")
                ascii_labels.append(label)
                unicode_labels.append(ulabel)
                from_punycode.append(True)
            elif label.isascii():
                if not set(label) <= _ASCII_LABEL_CHARS or len(label) > 63:
                    raise idna.IDNAError("character or length not allowed in a host name")
                ascii_labels.append(label)
                unicode_labels.append(label)
                from_punycode.append(False)
            else:
                ascii_labels.append(idna.alabel(label).decode("ascii"))
                unicode_labels.append(label)
                from_punycode.append(False)
        except (idna.IDNAError, UnicodeError) as exc:
            return _invalid(text, mapped, f"label {label!r} fails IDNA 2008: {exc}")

    ascii_host = ".".join(ascii_labels)
    unicode_host = ".".join(unicode_labels)
    if len(ascii_host) > 253:
        return _invalid(text, ascii_host, "host longer than 253 characters")
    is_idn = any(lbl.startswith("xn--") for lbl in ascii_labels)

    registrable = _psl.registrable_ascii(ascii_host)
    registrable_unicode = _to_unicode(registrable)
    suffix = _psl.public_suffix(ascii_host)

    issues: list[HostIssue] = []
    if is_idn:
        issues.append(
            HostIssue(
                "internationalised",
                unicode_host,
                f"internationalised host {unicode_host} (ASCII form {ascii_host})",
            )
        )
    # As in browsers, a single-label host is its own TLD.
    tld = ascii_labels[-1]
    tld_unicode = unicode_labels[-1]
    for ulabel, punycode in zip(unicode_labels, from_punycode, strict=True):
        verdict = _labels.check_label(
            ulabel, tld=tld, tld_unicode=tld_unicode, from_punycode=punycode
        )
        if verdict is not None:
            reads_as = None
            if verdict.kind == "whole_script_confusable":
                # Prefer the reading with the most ASCII letters ("apple" over "appie").
                skel = max(_lookalike.host_skeletons(ulabel))
                reads_as = skel if skel.isascii() and skel != ulabel else None
            issues.append(HostIssue(verdict.kind, ulabel, verdict.detail, reads_as))

    index = _index(protected)
    target = _lookalike.find_lookalike(unicode_host, index)
    if target is not None:
        issues.append(
            HostIssue(
                "lookalike",
                registrable_unicode or unicode_host,
                f"{unicode_host} looks like the protected domain {target}",
                target,
            )
        )
    if target is None:
        combined = _lookalike.brand_with_bait(unicode_host, registrable_unicode, index)
        if combined is not None:
            issues.append(
                HostIssue(
                    "lookalike",
                    registrable_unicode or unicode_host,
                    f"{unicode_host} joins the name of the protected domain {combined} to "
                    "sign-in or account words",
                    combined,
                )
            )
    embedded = _lookalike.embedded_protected(unicode_host, registrable_unicode, index)
    if embedded is not None:
        issues.append(
            HostIssue(
                "deceptive_form",
                unicode_host,
                f"protected domain {embedded} is spelled inside the unrelated domain "
                f"{registrable_unicode or unicode_host}",
                embedded,
            )
        )
    return HostAnalysis(
        input=text,
        ascii_host=ascii_host,
        unicode_host=unicode_host,
        is_idn=is_idn,
        registrable_domain=registrable,
        registrable_domain_unicode=registrable_unicode,
        public_suffix=suffix,
        ip_literal=None,
        ip_form=None,
        issues=tuple(issues),
    )


def _to_unicode(ascii_domain: str | None) -> str | None:
    if ascii_domain is None:
        return None
    try:
        return ".".join(
            idna.ulabel(lbl) if lbl.startswith("xn--") else lbl for lbl in ascii_domain.split(".")
        )
    except (idna.IDNAError, UnicodeError):
        return ascii_domain


def _ip_analysis(text: str, parsed: IpLiteral, *, non_ascii_input: bool = False) -> HostAnalysis:
    address, form, ipv4 = parsed
    issues: list[HostIssue] = []
    if form in EMBEDDING_WORDS:
        issues.append(
            HostIssue(
                "deceptive_form",
                text,
                f"IPv4 address {ipv4} written as {EMBEDDING_WORDS[form]} ({address})",
            )
        )
    elif not parsed.canonical:
        issues.append(
            HostIssue(
                "deceptive_form",
                text,
                f"IP address {address} written in {form} form",
            )
        )
    elif non_ascii_input:
        issues.append(
            HostIssue("deceptive_form", text, f"IP address {address} written with non-ASCII digits")
        )
    host = f"[{address}]" if parsed.is_ipv6 else address
    return HostAnalysis(
        input=text,
        ascii_host=host,
        unicode_host=host,
        is_idn=False,
        registrable_domain=None,
        registrable_domain_unicode=None,
        public_suffix=None,
        ip_literal=address,
        ip_form=form,
        issues=tuple(issues),
    )


def registrable_domain(host: str) -> str | None:
    """Registrable domain (eTLD+1, ASCII) of ``host`` from the bundled PSL; ``None`` for IPs,
    single labels, public suffixes themselves and invalid hosts."""
    analysis = analyze_host(host)
    return analysis.registrable_domain
