"""``ConsentGate``: an ``accept`` for a URL elicitation passes only after explicit consent.

Why a gate (EL-06, URL-06, URL-07): a client must show the full URL and its domain and get
the user's explicit yes before it navigates or answers ``accept``. A host callback that
answers ``accept`` without showing anything is exactly the bug this prevents: the client
integration asks the gate before it lets an ``accept`` for a URL-mode request through, and
the gate says yes only when a :class:`UrlView` of that very URL was shown through
:meth:`ConsentGate.show` (or recorded with :meth:`ConsentGate.record`) and the user chose
``accept``, the policy did not block the URL, and the consent is fresh.

Use::

    gate = ConsentGate(presenter=my_dialog)           # my_dialog(view) -> True/False/"cancel"
    view = gate.describe(url, server="crm", message=msg, key=ConsentGate.key_for(params))
    record = gate.show(view)                          # shows it, records the answer
    if record.accepted:
        open_url(view)                                # system browser, https only
    ...
    gate.allows_accept(key, url)                      # what the integration checks
    gate.enforce(key, "accept", url=url)              # -> "accept", or "decline" without consent

A presenter is any callable ``(UrlView) -> bool | "accept" | "decline" | "cancel"`` (or a
coroutine function, with :meth:`ConsentGate.ashow`). Hosts with an asynchronous UI call
:meth:`ConsentGate.record` once the user has answered.

With the ``mcp`` client integration (:class:`elicitguard.integrations.mcp_client.ClientGuard`,
``consent=gate``) the gate is driven by tickets: :meth:`ConsentGate.open` prepares the view
of each URL-mode request before the host's callback runs; inside the callback the host gets
it with ``gate.view_for(current_ticket())``, shows it (``gate.show(view)`` or its own dialog
and ``gate.record(view, answer)``); when the callback answers ``accept``,
:meth:`ConsentGate.admit` lets it through only with a matching recorded yes, and uses it up.
"""

from __future__ import annotations

import hashlib
import inspect
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from elicitguard.consent._evaluate import PolicyLike, resolve_policy
from elicitguard.consent.describe import describe_url
from elicitguard.consent.views import UrlView

__all__ = ["Choice", "ConsentGate", "ConsentRecord", "Presenter", "TicketLike"]

Choice = Literal["accept", "decline", "cancel"]
PresenterResult = bool | str
Presenter = Callable[[UrlView], PresenterResult | Awaitable[PresenterResult]]
_CHOICES: frozenset[str] = frozenset({"accept", "decline", "cancel"})


@dataclass(frozen=True, slots=True)
class ConsentRecord:
    """What the user answered to one URL view, and when (``at``: the gate's clock)."""

    key: str
    url: str
    choice: Choice
    server: str | None
    blocked: bool
    codes: tuple[str, ...]
    at: float

    @property
    def accepted(self) -> bool:
        """An explicit yes to a URL the policy does not block."""
        return self.choice == "accept" and not self.blocked


class TicketLike(Protocol):
    """What the gate reads from the client integration's ``ElicitationTicket``."""

    @property
    def id(self) -> str: ...

    @property
    def server(self) -> str | None: ...

    @property
    def mode(self) -> str: ...

    @property
    def params(self) -> Mapping[str, Any]: ...


def _choice(answer: object) -> Choice:
    if answer is True:
        return "accept"
    if answer is False or answer is None:
        return "decline"
    if isinstance(answer, str) and answer in _CHOICES:
        return answer  # type: ignore[return-value]
    return "cancel"


def _url_key(url: str) -> str:
    return "url:" + hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class ConsentGate:
    """Records explicit consent per elicitation and answers whether ``accept`` may pass.

    ``policy`` and ``env`` are used by :meth:`describe`; ``ttl_s`` is how long a consent
    stays valid (default ten minutes); ``clock`` is injectable for tests.
    """

    def __init__(
        self,
        presenter: Presenter | None = None,
        *,
        policy: PolicyLike = None,
        env: str | None = None,
        ttl_s: float = 600.0,
        max_records: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.presenter = presenter
        self.policy = resolve_policy(policy, env)
        self.ttl_s = ttl_s
        self.max_records = max_records
        self._clock = clock
        self._records: OrderedDict[str, ConsentRecord] = OrderedDict()
        self._views: OrderedDict[str, UrlView] = OrderedDict()
        self._lock = threading.Lock()

    # --- keys and views ------------------------------------------------------------------

    @staticmethod
    def key_for(
        params: Mapping[str, Any],
        *,
        request_id: object = None,
        input_key: str | None = None,
    ) -> str:
        """A stable key for one URL elicitation: its ``elicitationId`` (2025-11-25), else
        its ``inputRequests`` key (2026-07-28), else the JSON-RPC id, else the URL."""
        eid = params.get("elicitationId")
        if isinstance(eid, str) and eid:
            return f"eid:{eid}"
        if input_key is not None:
            return f"input:{input_key}"
        if request_id is not None and not isinstance(request_id, bool):
            return f"id:{request_id}"
        url = params.get("url")
        return _url_key(url if isinstance(url, str) else "")

    def describe(
        self,
        url: str,
        *,
        server: str | None = None,
        message: str | None = None,
        key: str | None = None,
    ) -> UrlView:
        """:func:`~elicitguard.consent.describe_url` under the gate's policy."""
        return describe_url(url, self.policy, server=server, message=message, key=key)

    # --- recording ---------------------------------------------------------------------

    def record(self, view: UrlView, choice: Choice | bool) -> ConsentRecord:
        """Record the user's answer to ``view`` (for hosts whose UI answers later)."""
        if not isinstance(view, UrlView):
            msg = "consent is recorded for a UrlView (from describe_url or gate.describe)"
            raise TypeError(msg)
        record = ConsentRecord(
            key=view.key or _url_key(view.url),
            url=view.url,
            choice=_choice(choice),
            server=view.server,
            blocked=view.blocked,
            codes=view.codes,
            at=self._clock(),
        )
        with self._lock:
            self._records.pop(record.key, None)
            self._records[record.key] = record
            while len(self._records) > self.max_records:
                self._records.popitem(last=False)
        return record

    def _presenter(self) -> Presenter:
        if self.presenter is None:
            msg = "this gate has no presenter: pass one, or call record() after your UI answers"
            raise RuntimeError(msg)
        return self.presenter

    def show(self, view: UrlView) -> ConsentRecord:
        """Show ``view`` through the presenter and record the answer.

        A presenter that raises counts as ``cancel`` (recorded, then the error propagates).
        """
        presenter = self._presenter()
        try:
            answer = presenter(view)
            if inspect.isawaitable(answer):
                close = getattr(answer, "close", None)
                if callable(close):
                    close()
                msg = "the presenter is asynchronous: use `await gate.ashow(view)`"
                raise TypeError(msg)
        except BaseException:
            self.record(view, "cancel")
            raise
        return self.record(view, _choice(answer))

    async def ashow(self, view: UrlView) -> ConsentRecord:
        """:meth:`show` for presenters that are coroutine functions (or plain functions)."""
        presenter = self._presenter()
        try:
            answer = presenter(view)
            if inspect.isawaitable(answer):
                answer = await answer
        except BaseException:
            self.record(view, "cancel")
            raise
        return self.record(view, _choice(answer))

    # --- deciding ----------------------------------------------------------------------

    def consent_for(self, key: str) -> ConsentRecord | None:
        """The live record for ``key`` (``None`` when missing or expired)."""
        with self._lock:
            record = self._records.get(key)
            if record is None:
                return None
            if self._clock() - record.at > self.ttl_s:
                del self._records[key]
                return None
            return record

    def allows_accept(self, key: str, url: str | None = None) -> bool:
        """True only when the user explicitly accepted a shown view of this elicitation (and
        of ``url``, when given), the policy did not block it, and the consent is fresh."""
        record = self.consent_for(key)
        if record is None or not record.accepted:
            return False
        return url is None or url == record.url

    def enforce(self, key: str, action: str, *, url: str | None = None) -> str:
        """The action to send: ``accept`` passes only with consent, else ``decline``."""
        if action != "accept":
            return action
        return "accept" if self.allows_accept(key, url) else "decline"

    def forget(self, key: str) -> None:
        """Drop the record and the prepared view for ``key``."""
        with self._lock:
            self._records.pop(key, None)
            self._views.pop(key, None)

    # --- the client integration's ticket protocol ----------------------------------------

    def open(self, ticket: TicketLike) -> UrlView | None:
        """Prepare the view of a URL-mode request before the host's callback runs."""
        if ticket.mode != "url":
            return None
        url = ticket.params.get("url")
        message = ticket.params.get("message")
        view = self.describe(
            url if isinstance(url, str) else "",
            server=ticket.server,
            message=message if isinstance(message, str) else None,
            key=ticket.id,
        )
        with self._lock:
            self._views.pop(ticket.id, None)
            self._views[ticket.id] = view
            while len(self._views) > self.max_records:
                self._views.popitem(last=False)
        return view

    def view_for(self, ticket: TicketLike | str | None) -> UrlView | None:
        """The view :meth:`open` prepared for ``ticket`` (or its id)."""
        if ticket is None:
            return None
        key = ticket if isinstance(ticket, str) else ticket.id
        with self._lock:
            return self._views.get(key)

    def admit(self, ticket: TicketLike, answer: Mapping[str, Any]) -> bool:
        """Whether the host's ``accept`` for ``ticket`` may go to the server; uses the
        consent up (one yes admits one answer)."""
        if ticket.mode != "url" or answer.get("action") != "accept":
            return True
        url = ticket.params.get("url")
        allowed = self.allows_accept(ticket.id, url if isinstance(url, str) else "")
        self.forget(ticket.id)
        return allowed
