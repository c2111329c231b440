"""What a consent screen shows: the URL view, the form view and their warnings.

Why values and not widgets: every client has its own UI toolkit. elicitguard decides *what*
the user must see (who is asking, where the link really goes, what is wrong with it, which
choices exist) and hands it over as immutable data; :mod:`elicitguard.consent.render` turns
it into text or HTML for clients that want a ready-made screen.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

__all__ = ["FormField", "FormView", "Level", "UrlView", "ViewWarning"]

#: ``danger``: the policy blocks it; ``warning``: the user should think twice;
#: ``notice``: worth knowing (an internationalised address).
Level = Literal["danger", "warning", "notice"]


@dataclass(frozen=True, slots=True)
class ViewWarning:
    """One finding in plain words for the person deciding."""

    code: str
    name: str
    level: Level
    title: str
    text: str
    severity: str
    action: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class UrlView:
    """Everything a URL-mode consent screen shows (EL-03, EL-06, URL-07, URL-09).

    ``url`` is the URL exactly as the server sent it. ``display_url`` is the same URL made
    safe to show: invisible and bidi characters appear as ``[U+202E]``, the host appears in
    its ASCII form when it is a spoof (as Chromium does) and in Unicode otherwise, and a
    password in the userinfo is masked. ``display_parts`` splits ``display_url`` into the
    text before the highlighted part, the highlight (the registrable domain, or the IP
    address), and the rest. ``can_open`` is true only for ``https`` URLs (and ``http`` to a
    loopback host in the dev environment) that the policy does not block. ``disguised`` is
    true when the Unicode form of the host imitates another name: show it only as such.
    """

    server: str | None
    message: str | None
    url: str
    display_url: str
    display_parts: tuple[str, str, str]
    scheme: str
    ascii_host: str | None
    unicode_host: str | None
    display_host: str | None
    registrable_domain: str | None
    registrable_domain_unicode: str | None
    highlight: str | None
    is_idn: bool
    disguised: bool
    reads_as: str | None
    warnings: tuple[ViewWarning, ...]
    blocked: bool
    action: str
    can_open: bool
    environment: str
    policy_name: str
    key: str | None = None
    kind: Literal["url"] = "url"

    @property
    def levels(self) -> frozenset[str]:
        """The warning levels present."""
        return frozenset(w.level for w in self.warnings)

    @property
    def codes(self) -> tuple[str, ...]:
        """The rule codes behind the warnings, in order."""
        return tuple(dict.fromkeys(w.code for w in self.warnings))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (``check-url --format json``)."""
        out = asdict(self)
        out["display_parts"] = list(self.display_parts)
        out["warnings"] = [w.to_dict() for w in self.warnings]
        return out


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of a form request, with its default pre-filled (EL-14).

    ``type`` is ``string``, ``number``, ``integer``, ``boolean``, ``enum`` or
    ``multi_enum``; ``options`` holds ``(value, label)`` pairs for the two enum types.
    ``warnings`` are the codes of findings about this very field.
    """

    name: str
    title: str
    type: str
    description: str | None = None
    format: str | None = None
    required: bool = False
    default: Any = None
    options: tuple[tuple[str, str], ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["options"] = [list(o) for o in self.options]
        out["warnings"] = list(self.warnings)
        return out


@dataclass(frozen=True, slots=True)
class FormView:
    """Everything a form-mode consent screen shows (EL-03, EL-04, EL-05, EL-14, EL-22).

    ``choices`` are always ``accept``, ``decline`` and ``cancel``: declining and cancelling
    are first-class answers, never hidden behind the submit button. ``can_accept`` is false
    when the policy blocks the request.
    """

    server: str | None
    message: str | None
    fields: tuple[FormField, ...]
    warnings: tuple[ViewWarning, ...]
    blocked: bool
    action: str
    environment: str
    policy_name: str
    key: str | None = None
    choices: tuple[str, ...] = ("accept", "decline", "cancel")
    kind: Literal["form"] = "form"

    @property
    def can_accept(self) -> bool:
        """Whether the form may be submitted at all."""
        return not self.blocked

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(w.code for w in self.warnings))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["fields"] = [f.to_dict() for f in self.fields]
        out["warnings"] = [w.to_dict() for w in self.warnings]
        out["choices"] = list(self.choices)
        out["can_accept"] = self.can_accept
        return out
