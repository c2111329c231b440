"""The file formats: rule files, their cases, and policy files, as pydantic models.

Every model forbids unknown keys, so a typo is an error that names the key and the keys
that would have been accepted. The JSON Schemas in ``schema/`` are generated from these
models (``elicitguard policy schema``); a test fails when the committed copy is stale.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from elicitguard.base.decision import Action, Confidence, Severity
from elicitguard.protocol.envelope import Direction, Side
from elicitguard.protocol.items import ItemKind

__all__ = [
    "ERA_NAMES",
    "ORDINARY_ITEMS",
    "ActionOrOff",
    "AppliesTo",
    "AuditSpec",
    "CaseFile",
    "CaseSpec",
    "ClientSpec",
    "Docs",
    "Environment",
    "EnvironmentOverlay",
    "ExceptionSpec",
    "ExceptionWhere",
    "IdentitySpec",
    "InProcessSpec",
    "KeysSpec",
    "LimitsSpec",
    "MatchExpr",
    "OnBlockSpec",
    "OrdinaryNeed",
    "PolicySpec",
    "PrincipalSpec",
    "RuleOverride",
    "RuleSpec",
]

ActionOrOff = Literal["allow", "log", "warn", "redact", "block", "off"]
Environment = Literal["dev", "test", "prod"]
ERA_NAMES = ("all", "2025-06-18", "2025-11-25", "2026-07-28", "push", "modern")
EraName = Literal["all", "2025-06-18", "2025-11-25", "2026-07-28", "push", "modern"]

CODE_PATTERN = r"^[A-Z]{2,4}[0-9]{3}$"
RESERVED_ERROR_CODES = frozenset({-32042, -32002, -32700, -32600, -32601, -32602, -32603})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- declarative match --------------------------------------------------------------------

MATCH_FIELDS = (
    "url.scheme",
    "url.host",
    "url.registrable_domain",
    "url.query_keys",
    "url.raw",
    "form.fields[*].name",
    "form.fields[*].title",
    "form.fields[*].description",
    "form.fields[*].type",
    "message",
    "mode",
    "server",
    "method",
)


class MatchExpr(_Strict):
    """A declarative condition over item fields (user rules without Python).

    A leaf names one ``field`` and one operator; ``any``, ``all`` and ``not`` combine leaves.
    ``regex`` is RE2 syntax (linear time, no backtracking); ``in`` names a list of the policy.
    """

    field: str | None = None
    equals: str | int | bool | None = None
    in_: str | None = Field(default=None, alias="in")
    regex: str | None = None
    glob: str | None = None
    contains: str | None = None
    any: list[MatchExpr] | None = None
    all: list[MatchExpr] | None = None
    not_: MatchExpr | None = Field(default=None, alias="not")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _one_shape(self) -> MatchExpr:
        combinators = [x for x in (self.any, self.all, self.not_) if x is not None]
        operators = [
            x
            for x in (self.equals, self.in_, self.regex, self.glob, self.contains)
            if x is not None
        ]
        if combinators and (operators or self.field is not None):
            msg = "a match is either a combinator (any, all, not) or a field with one operator"
            raise ValueError(msg)
        if not combinators:
            if self.field is None:
                msg = "a match leaf needs `field:` (one of: " + ", ".join(MATCH_FIELDS) + ")"
                raise ValueError(msg)
            if self.field not in MATCH_FIELDS:
                msg = f"unknown match field {self.field!r}; use one of: " + ", ".join(MATCH_FIELDS)
                raise ValueError(msg)
            if len(operators) != 1:
                msg = "a match leaf takes exactly one of: equals, in, regex, glob, contains"
                raise ValueError(msg)
        if len(combinators) > 1:
            msg = "use one combinator per level (any, all or not); nest them for more"
            raise ValueError(msg)
        return self


# --- rules ------------------------------------------------------------------------------


#: What makes an ordinary message (no elicitation) an item for a rule, see ``ordinary:``.
OrdinaryNeed = Literal[
    "identity_meta",  # a client request's non-standard ``_meta`` key
    "identity_headers",  # an identity header (``x-user-*`` and the like)
    "named_arguments",  # a tool argument named by the param given as the value
    "query_string",  # a query string on the HTTP request target
    "authorization",  # an Authorization header, when the policy names the audience
    "vault_credentials",  # a server message while the credential vault holds something
    "every_message",  # every server message, when the param given as the value is true
]
#: Item kinds made from ordinary traffic: a rule on them must say what it needs.
ORDINARY_ITEMS = frozenset({ItemKind.CLIENT_REQUEST, ItemKind.SERVER_MESSAGE})


class AppliesTo(_Strict):
    """Which items, sides, eras and directions a rule looks at.

    ``ordinary`` is what a rule on ``client_request`` or ``server_message`` items needs from
    ordinary traffic (messages without elicitation take the fast path unless a rule needs
    them): each need maps to ``true``, or to the name of the rule's param that turns it on
    (``every_message: catalogue``) or lists the names (``named_arguments: arguments``).
    """

    items: list[ItemKind] = Field(default_factory=list)
    sides: list[Side | Literal["all"]] = ["all"]
    eras: list[EraName] = ["all"]
    directions: list[Direction | Literal["all"]] = ["all"]
    ordinary: dict[OrdinaryNeed, Literal[True] | str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _ordinary_declared(self) -> AppliesTo:
        wants = ORDINARY_ITEMS.intersection(self.items)
        if wants and not self.ordinary:
            kinds = ", ".join(sorted(k.value for k in wants))
            msg = (
                f"a rule on {kinds} items must say what it needs from ordinary traffic in "
                "applies_to.ordinary (e.g. {query_string: true}); without it no message "
                "would reach it"
            )
            raise ValueError(msg)
        if self.ordinary and not wants:
            msg = "applies_to.ordinary is for rules on client_request or server_message items"
            raise ValueError(msg)
        return self


class PrincipalSpec(_Strict):
    """A verified principal in a case, as a token verifier would have made it.

    ``token`` is the bearer token it was verified from; only its keyed fingerprint is kept
    (EG601 recognises it on an outbound call).
    """

    iss: str = "https://auth.example.com"
    sub: str
    aud: list[str] = Field(default_factory=list)
    scopes: list[str] = Field(default_factory=list)
    token: str | None = None


class InProcessSpec(_Strict):
    """An item a server builds in process instead of reading it from traffic.

    ``outbound_call``: ``data`` is ``{method, url, headers}`` of an egress HTTP call (the
    egress guard); ``url_binding``: ``data`` is ``{outcome}`` of a URL binding completion
    (``ok``, ``expired``, ``reused``, ``unknown``, ``other_user``; the URL binder).
    """

    kind: Literal["outbound_call", "url_binding"]
    data: dict[str, Any]


class CaseEnvelope(_Strict):
    """One envelope of a case's setup sequence."""

    direction: Direction
    message: dict[str, Any]
    protocol_version: str | None = None
    server: str | None = None
    transport: Literal["stdio", "http"] | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    principal: PrincipalSpec | None = None


class CaseSpec(_Strict):
    """One example of a rule: the message must (``ruleid``) or must not (``ok``) trigger it.

    ``client_elicitation`` declares the client's ``elicitation`` capability (``none`` for a
    client that declares none): in the push era the case runner puts an ``initialize``
    exchange first; in 2026-07-28 it puts the originating request (``origin_method``,
    ``tools/call`` by default) with that capability in ``_meta`` before a response.

    ``todoruleid`` and ``todook`` record a known miss or false alarm: reported, never
    failing, and a todo case that starts passing fails the suite so that it is promoted.

    ``transport``, ``headers`` (the HTTP request's, lower-cased; ``:path`` is the request
    target) and ``principal`` (a verified one) describe where the message was seen;
    ``in_process`` replaces the message with an item a server builds itself (an egress call,
    a URL binding completion); ``vault`` registers third-party tokens (EG603).
    """

    expect: Literal["ruleid", "ok", "todoruleid", "todook"]
    note: str
    message: dict[str, Any] | None = None
    raw: str | None = None
    direction: Direction = Direction.SERVER_TO_CLIENT
    side: Side = Side.CAPTURE
    env: Environment | None = None
    protocol_version: str | None = None
    server: str | None = None
    setup: list[CaseEnvelope] = Field(default_factory=list)
    client_elicitation: dict[str, Any] | Literal["none"] | None = None
    origin_method: str | None = None
    policy: dict[str, Any] | None = None
    pointer: str | None = None
    transport: Literal["stdio", "http"] | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    principal: PrincipalSpec | None = None
    in_process: InProcessSpec | None = None
    vault: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _message_or_raw(self) -> CaseSpec:
        given = [x for x in (self.message, self.raw, self.in_process) if x is not None]
        if len(given) != 1:
            msg = (
                "a case has exactly one of `message:` (a JSON-RPC object), `raw:` (frame "
                "text) or `in_process:` (an egress call or URL binding)"
            )
            raise ValueError(msg)
        return self


class CaseFile(_Strict):
    """A rule's ``.cases.yaml`` file."""

    rule: str = Field(pattern=CODE_PATTERN)
    cases: list[CaseSpec]


class Docs(_Strict):
    """The rule's documentation page; ``example`` must trigger the rule (tested)."""

    why: str
    example: CaseSpec
    fix: str
    notes: str | None = None


class RuleSpec(_Strict):
    """A rule file."""

    code: str = Field(pattern=CODE_PATTERN)
    name: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    summary: str
    severity: Severity
    confidence: Confidence = Confidence.HIGH
    action: ActionOrOff
    actions_by_side: dict[Side, ActionOrOff] = Field(default_factory=dict)
    requirements: list[str] = Field(default_factory=list)
    cwe: list[str] = Field(default_factory=list)
    applies_to: AppliesTo
    check: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    match: MatchExpr | None = None
    message: str
    docs: Docs
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check_or_match(self) -> RuleSpec:
        if (self.check is None) == (self.match is None):
            msg = "a rule has exactly one of `check:` (a built-in check) or `match:` (declarative)"
            raise ValueError(msg)
        return self

    @field_validator("cwe")
    @classmethod
    def _cwe_form(cls, value: list[str]) -> list[str]:
        for entry in value:
            if not entry.startswith("CWE-") or not entry[4:].isdigit():
                msg = f"CWE ids are written CWE-<number>, not {entry!r}"
                raise ValueError(msg)
        return value


# --- policies -----------------------------------------------------------------------------


class RuleOverride(_Strict):
    """What a policy changes about one rule or a glob of rules (``EG2*``)."""

    action: ActionOrOff | None = None
    actions_by_side: dict[Side, ActionOrOff] | None = None
    severity: Severity | None = None
    params: dict[str, Any] | None = None
    final: bool | None = None


class ExceptionWhere(_Strict):
    """Where an exception applies: the operator's name for the server (a glob)."""

    server: str | None = None


class ExceptionSpec(_Strict):
    """Turns rules off for one server, with a reason and an expiry date."""

    rules: list[str] = Field(min_length=1)
    where: ExceptionWhere = Field(default_factory=ExceptionWhere)
    reason: str = Field(min_length=3)
    expires: dt.date | None = None


class LimitsSpec(_Strict):
    """Size and state limits."""

    max_message_bytes: Annotated[int, Field(gt=0, le=1 << 30)] | None = None
    max_depth: Annotated[int, Field(gt=0, le=10_000)] | None = None
    bad_frames: Literal["drop", "close"] | None = None
    state_ttl_s: Annotated[float, Field(gt=0)] | None = None
    state_max_sessions: Annotated[int, Field(gt=0)] | None = None
    elicitations_per_minute: Annotated[int, Field(gt=0)] | None = None
    #: An HTTP body that parses as JSON-RPC under a label other than JSON or SSE (text/plain,
    #: none, ...): ``judge`` it like a labelled one, or ``refuse`` it (the default).
    unlabelled_jsonrpc: Literal["judge", "refuse"] | None = None


class OnBlockSpec(_Strict):
    """How a block looks on the wire."""

    client: Literal["decline", "cancel"] | None = None
    push_error_code: int | None = None

    @field_validator("push_error_code")
    @classmethod
    def _not_reserved(cls, value: int | None) -> int | None:
        if value is None:
            return value
        if value in RESERVED_ERROR_CODES or -32099 <= value <= -32000:
            msg = (
                f"error code {value} is reserved by JSON-RPC or MCP; use a code outside "
                "-32768..-32000, such as the default -31001"
            )
            raise ValueError(msg)
        return value


class ClientSpec(_Strict):
    """What a client integration offers the servers it talks to.

    ``elicitation_modes`` are the modes the host can show. The client integrations remove
    every other mode from the capabilities they declare (``initialize`` and each 2026-07-28
    request's ``_meta``), so a request in a removed mode is undeclared and EG102 blocks it.
    """

    elicitation_modes: list[Literal["form", "url"]] | None = None


class IdentitySpec(_Strict):
    """Verified identity, sealing and the state store (the identity features).

    ``audience`` is this server's canonical URI (RFC 8707): tokens must carry it in ``aud``
    (it is configured, never taken from ``--upstream``). ``jwks`` is a file, ``jwks_url`` an
    HTTPS URL. ``store`` is ``memory``, ``sqlite:///PATH`` or ``redis://HOST:PORT/DB``;
    ``replicas`` above 1 needs a shared store and configured keys.
    """

    require_auth: bool | None = None
    audience: str | None = None
    issuers: list[str] | None = None
    jwks: str | None = None
    jwks_url: str | None = None
    algorithms: list[str] | None = None
    leeway_s: Annotated[float, Field(ge=0)] | None = None
    required_scopes: list[str] | None = None
    authorization_servers: list[str] | None = None
    scopes_supported: list[str] | None = None
    serve_metadata: bool | None = None
    max_token_bytes: Annotated[int, Field(gt=0, le=65536)] | None = None
    jwks_cache_s: Annotated[float, Field(ge=0)] | None = None
    store: str | None = None
    replicas: Annotated[int, Field(ge=1)] | None = None
    seal_request_state: bool | None = None
    request_state_ttl_s: Annotated[float, Field(gt=0)] | None = None
    binding_ttl_s: Annotated[float, Field(gt=0)] | None = None


class KeysSpec(_Strict):
    """Where key material comes from; it never sits in the policy itself."""

    file: str | None = None
    env: str | None = None


class AuditSpec(_Strict):
    """Where decision records go and what they hold."""

    sink: Literal["stderr", "file", "none"] | None = None
    file: str | None = None
    chain: bool | None = None
    sample_allow: Annotated[float, Field(ge=0, le=1)] | None = None
    #: Records held for the background writer; 0 writes each record on the request path.
    queue: Annotated[int, Field(ge=0, le=1_000_000)] | None = None
    #: A full queue: ``block`` waits for room (no record lost), ``count`` drops the record,
    #: counts it and writes an ``elicitguard.audit.dropped`` event saying how many.
    when_full: Literal["block", "count"] | None = None


class EnvironmentOverlay(_Strict):
    """What changes in one environment."""

    rules: dict[str, RuleOverride] | None = None
    lists: dict[str, list[str]] | None = None
    limits: LimitsSpec | None = None
    mode: Literal["enforce", "monitor"] | None = None
    on_error: Literal["block", "warn"] | None = None
    exceptions: list[ExceptionSpec] | None = None


class PolicySpec(_Strict):
    """A policy file. Every key is optional; presets and ``extends`` fill the rest."""

    name: str | None = None
    description: str | None = None
    extends: list[str] | None = None
    packs: list[str] | None = None
    environment: Environment | None = None
    mode: Literal["enforce", "monitor"] | None = None
    on_error: Literal["block", "warn"] | None = None
    on_block: OnBlockSpec | None = None
    client: ClientSpec | None = None
    rules: dict[str, RuleOverride] | None = None
    lists: dict[str, list[str]] | None = None
    exceptions: list[ExceptionSpec] | None = None
    limits: LimitsSpec | None = None
    identity: IdentitySpec | None = None
    keys: KeysSpec | None = None
    audit: AuditSpec | None = None
    environments: dict[Environment, EnvironmentOverlay] | None = None


def action_of(value: ActionOrOff) -> Action | None:
    """The :class:`Action` for a file's action string; ``None`` for ``off``."""
    return None if value == "off" else Action(value)
