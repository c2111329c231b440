"""Items: the pieces of elicitation the extractor finds in a message.

One message can hold several (an ``InputRequiredResult`` with three ``inputRequests``
entries is one ``input_required`` item plus three request items). Each item carries a JSON
pointer into the message, the era it was judged in, and what the extractor could learn from
earlier messages (the schema an answer should match, the capability the client declared).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

__all__ = ["ABSENT", "ELICITATION_KINDS", "Item", "ItemKind"]


class ItemKind(StrEnum):
    """What an item is; rules name these in ``applies_to.items``."""

    CAPABILITIES = "capabilities"
    FORM_REQUEST = "form_request"
    URL_REQUEST = "url_request"
    ELICIT_RESULT = "elicit_result"
    COMPLETION = "completion"
    URL_REQUIRED_ERROR = "url_required_error"
    INPUT_REQUIRED = "input_required"
    RETRY = "retry"
    TASK_CREATED = "task_created"
    ERROR = "error"
    #: A 2026-07-28 result whose ``resultType`` the era does not define (only those are
    #: items: ordinary results stay on the fast path).
    RESULT = "result"
    #: An ordinary client request (headers, ``_meta``, arguments): extracted only when an
    #: enabled rule needs one and a cheap look finds something to judge (EG502, EG602, EG604).
    CLIENT_REQUEST = "client_request"
    #: A server-to-client message outside elicitation (results, errors, notifications):
    #: extracted only when the credential vault is non-empty or a rule asks (EG603).
    SERVER_MESSAGE = "server_message"
    #: A server's own outbound HTTP call, built in process by the egress guard (EG601, EG604);
    #: proxies never see these.
    OUTBOUND_CALL = "outbound_call"
    #: The completion of a URL-mode binding handle, built in process by the URL binder (EG505).
    URL_BINDING = "url_binding"


#: Items that carry elicitation itself; a message with only other items (a capability
#: declaration, an error) is recorded only when a rule finds something in it.
ELICITATION_KINDS = frozenset(
    {
        ItemKind.FORM_REQUEST,
        ItemKind.URL_REQUEST,
        ItemKind.ELICIT_RESULT,
        ItemKind.COMPLETION,
        ItemKind.URL_REQUIRED_ERROR,
        ItemKind.INPUT_REQUIRED,
        ItemKind.RETRY,
        ItemKind.TASK_CREATED,
    }
)


class _Absent:
    """Marks a value that was looked for and not there (unlike ``None``: not known)."""

    _instance: ClassVar[_Absent | None] = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()


@dataclass(slots=True, eq=False)
class Item:
    """One piece of elicitation found in a message.

    ``data`` is the JSON object at ``pointer`` (request params, an answer, a result).
    ``capabilities`` is the client's declared ``elicitation`` capability value that applies
    (``ABSENT`` when the client declared none, ``None`` when nobody knows). ``schema`` is the
    ``requestedSchema`` an answer should match, when known. ``method`` is the JSON-RPC
    method of the message or, for a response, of the request it answers.
    """

    kind: ItemKind
    pointer: str
    era: str | None
    data: Any
    method: str | None = None
    mode: str | None = None
    input_key: str | None = None
    schema: Any = None
    request_mode: str | None = None
    capabilities: Any = None
    draft: bool = False
    task: bool = False
    facts: dict[str, Any] = field(default_factory=dict)
    #: A digest of everything a pure check may read of this item, as the engine's verdict
    #: cache keys it (``None`` until the engine computes one, or when it cannot): equal
    #: digests mean items no check, and no audit record, could tell apart.
    digest: bytes | None = None

    @property
    def is_elicitation(self) -> bool:
        """True for items that carry elicitation itself (not bookkeeping)."""
        return self.kind in ELICITATION_KINDS
