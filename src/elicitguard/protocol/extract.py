"""Finding the elicitation items in one message, for every protocol era.

``extract(envelope, state, default_era)`` returns the items of one message and updates the
session state that later messages need; :func:`ordinary_bookkeeping` is its cheap first
look, which does the bookkeeping of ids for provably ordinary traffic and builds nothing.
The engine calls neither directly: :func:`elicitguard.protocol.reading.read` runs them as
one pass.

Where elicitation travels, by era (PROTOCOL.md a.0):

* 2025-06-18 and 2025-11-25: a server-to-client ``elicitation/create`` request; the answer is
  the client's response with the same id (in the server's own id space). 2025-11-25 adds URL
  mode, ``notifications/elicitation/complete``, the ``-32042`` error, and task-augmented
  requests (``params.task``; the client answers with a ``CreateTaskResult`` and the real
  answer comes back through ``tasks/result``).
* 2026-07-28: entries of ``result.inputRequests`` in an ``InputRequiredResult`` (also in a
  ``tasks/get`` result whose status is ``input_required``); the answers come in a retry's
  ``params.inputResponses`` (or ``tasks/update``). Pre-release shapes (``IncompleteResult``
  without ``resultType``, answers wrapped in ``{"result": ...}``, ``tasks/input_response``)
  are extracted like the released ones and marked ``draft``.

The module is over 500 lines on purpose: it is the one extractor (every era's shapes read
by the same code, in the order above), so that no second reader can disagree with it.
"""

from __future__ import annotations

from typing import Any

from elicitguard.base.pointer import escape_pointer
from elicitguard.protocol.envelope import Direction, Envelope
from elicitguard.protocol.items import ABSENT, Item, ItemKind
from elicitguard.protocol.session import (
    ChainState,
    PendingClientRequest,
    PendingServerRequest,
    SessionState,
    chain_key_for_request,
    chain_key_for_state,
    elicitation_signature,
)
from elicitguard.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    MODERN_VERSIONS,
    is_modern,
    normalise_version,
)

__all__ = ["ELICITATION_METHODS", "extract", "ordinary_bookkeeping"]

ELICITATION_METHODS = frozenset({"elicitation/create"})
URL_ELICITATION_REQUIRED = -32042
#: ``resultType`` values 2026-07-28 defines; the tasks extension adds ``task`` (EG117).
KNOWN_RESULT_TYPES = frozenset({"complete", "input_required"})
#: 2026-07-28 codes in the reserved -32020..-32099 range that the spec defines (CP-05).
DEFINED_RESERVED_CODES = frozenset({-32020, -32021, -32022})
_REFUSALS = frozenset({"decline", "cancel"})
_RETRY_METHODS = frozenset({"tasks/update", "tasks/input_response"})
_DRAFT_METHODS = frozenset({"tasks/input_response"})


def extract(envelope: Envelope, state: SessionState, default_era: str | None = None) -> list[Item]:
    """Return the items of ``envelope.message`` and update ``state``.

    Elicitation travels in requests and their answers, so it must carry a JSON-RPC id: a
    string or an integer (MCP forbids ``null``). A frame that carries elicitation without
    one (an ``elicitation/create`` notification, an ``InputRequiredResult`` or an answer
    with no id) is still extracted, so that every rule judges what is inside, and its
    first item says so in ``facts["without_id"]`` (``missing``, ``null`` or ``invalid``):
    EG125 refuses it as malformed. A lenient peer may act on such a frame; a strict one
    drops it; nobody may see it unjudged.
    """
    msg = envelope.message
    method = msg.get("method")
    problem = _id_problem(msg)
    if isinstance(method, str):
        if problem != "missing":
            if envelope.direction is Direction.CLIENT_TO_SERVER:
                items = _client_request(envelope, msg, method, state, default_era)
            else:
                items = _server_request(envelope, msg, method, state, default_era)
            return _mark_without_id(items, problem)
        if method == "notifications/elicitation/complete":
            return [_completion(envelope, msg, state, default_era)]
        return _mark_without_id(
            _request_notification(envelope, msg, method, state, default_era), problem
        )
    if "result" not in msg and "error" not in msg:
        return []
    items = []
    if problem != "missing":
        if envelope.direction is Direction.CLIENT_TO_SERVER:
            items = _client_response(envelope, msg, state, default_era)
        else:
            items = _server_response(envelope, msg, state, default_era)
    if not items and problem is not None:
        items = _orphan_answer(envelope, msg, state, default_era)
    return _mark_without_id(items, problem)


#: Items that stand for a whole request or answer; the first of them carries
#: ``facts["without_id"]`` when the frame has no usable id.
_FRAME_ITEMS = frozenset(
    {
        ItemKind.FORM_REQUEST,
        ItemKind.URL_REQUEST,
        ItemKind.INPUT_REQUIRED,
        ItemKind.ELICIT_RESULT,
        ItemKind.RETRY,
        ItemKind.URL_REQUIRED_ERROR,
        ItemKind.TASK_CREATED,
    }
)


def _id_problem(msg: dict[str, Any]) -> str | None:
    """Why ``msg`` has no usable JSON-RPC id, or ``None`` when it has one."""
    if "id" not in msg:
        return "missing"
    value = msg["id"]
    if value is None:
        return "null"
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return "invalid"
    return None


def _mark_without_id(items: list[Item], problem: str | None) -> list[Item]:
    if problem is None:
        return items
    for item in items:
        if item.kind in _FRAME_ITEMS:
            item.facts["without_id"] = problem
            break
    return items


def _request_notification(
    envelope: Envelope, msg: dict[str, Any], method: str, state: SessionState, default: str | None
) -> list[Item]:
    """A request-shaped notification that carries elicitation: judged, never remembered.

    A server's ``elicitation/create`` without an id, or a client's retry (``inputResponses``,
    ``requestState``) without one. Nothing is put in the pending maps: no answer may come.
    """
    params = msg.get("params")
    if envelope.direction is Direction.SERVER_TO_CLIENT:
        if method not in ELICITATION_METHODS:
            return []
        era = _era(envelope, state, default)
        item = _elicitation_request(params, "/params", era, state.client_capabilities, method)
        item.facts["pushed"] = True
        return [item]
    if not isinstance(params, dict) or not (
        "inputResponses" in params or "requestState" in params or method in _RETRY_METHODS
    ):
        return []
    meta = params.get("_meta")
    meta_version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    era = normalise_version(meta_version) or _era(envelope, state, default)
    return _retry(method, params, era, state, None)


def _orphan_answer(
    envelope: Envelope, msg: dict[str, Any], state: SessionState, default: str | None
) -> list[Item]:
    """A result or error without a usable id that still carries elicitation.

    From the server: an ``InputRequiredResult`` (any of its shapes) or a -32042 error; from
    the client: an elicitation answer (``action``). Read as if no request were known.
    """
    era = _era(envelope, state, default)
    result = msg.get("result")
    if envelope.direction is Direction.CLIENT_TO_SERVER:
        if not _looks_like_elicit_result(result):
            return []
        value, _ = _unwrap_draft(result)
        pending = PendingServerRequest("elicitation/create", era)
        return [_elicit_result(value, "/result", era, pending, "elicitation/create")]
    if "error" in msg:
        return _error_items(msg["error"], era, state, None)
    if not isinstance(result, dict):
        return []
    where = _input_required_payload(result, None)
    if where is None:
        return []
    return _input_required(result, where, era, state, None, None, envelope.principal)


#: Keys of a result that may make it elicitation (InputRequiredResult, tasks, 2026-07-28
#: result types); a result without any of them is an ordinary answer.
_RESULT_MARKERS = frozenset({"resultType", "inputRequests", "status", "task"})
#: Keys of a request's params that make it more than ordinary (2026-07-28 rounds, ``_meta``).
_REQUEST_MARKERS = frozenset({"_meta", "inputResponses", "requestState"})
#: Requests whose answers :func:`extract` reads (the negotiated version, a task's status).
_ANSWER_READ = frozenset({"initialize", "tasks/get"})
#: Notifications that carry elicitation or a 2026-07-28 retry.
_NOT_ORDINARY_NOTIFICATIONS = frozenset(
    {"notifications/elicitation/complete", *ELICITATION_METHODS, *_RETRY_METHODS}
)
#: Client requests :func:`extract` reads (the handshake, the 2026-07-28 discovery, retries).
_NOT_ORDINARY_REQUESTS = frozenset({"initialize", "server/discover", *_RETRY_METHODS})
#: ``type(value).__name__`` of the usual id types, without the attribute look-up.
_TYPE_NAMES: dict[type, str] = {int: "int", str: "str", float: "float", bool: "bool"}
#: The same for an answer's id, whose usable types exclude ``bool`` (:func:`_id_problem`).
_ANSWER_ID_NAMES: dict[type, str] = {int: "int", str: "str", float: "float"}
_S2C = Direction.SERVER_TO_CLIENT
_C2S = Direction.CLIENT_TO_SERVER


def ordinary_bookkeeping(
    msg: dict[str, Any], direction: Direction, state: SessionState, default_era: str | None
) -> bool:
    """Handle ``msg`` as ordinary traffic if it provably is; ``False`` leaves ``state`` as it was.

    The classification step of :func:`elicitguard.protocol.reading.read`: the same answer
    :func:`extract` gives, for the messages most traffic is made of, without building
    anything: for an envelope without headers or an explicit protocol version, a
    ``True`` here means :func:`extract` would have found no item and made exactly these
    changes to ``state`` (a client request remembered by id, a server answer's request
    forgotten). Anything that might matter (initialize, ``_meta``, retries, elicitation
    methods, tasks, errors, results with a ``resultType``, an answer to an open server
    request, the 2026-07-28 era) returns ``False`` for :func:`extract` to judge, with
    ``state`` as it was except that an answered request's entry may have moved to the
    newest place of its map (:func:`extract` removes it right after).

    It runs on every message, so it is written flat: module constants instead of enum
    attribute look-ups, one dictionary look-up per key.
    """
    method = msg.get("method")
    if isinstance(method, str):
        params = msg.get("params")
        if "id" not in msg:
            if method in _NOT_ORDINARY_NOTIFICATIONS:
                return False
            return not (
                isinstance(params, dict)
                and ("inputResponses" in params or "requestState" in params)
            )
        if direction is _S2C:
            return method != "elicitation/create" and method != "tasks/result"
        if method in _NOT_ORDINARY_REQUESTS:
            return False
        if isinstance(params, dict):
            if not _REQUEST_MARKERS.isdisjoint(params):
                return False
        else:
            params = None
        era = state.era or default_era
        if era in MODERN_VERSIONS:
            return False
        value = msg["id"]
        kind = value.__class__
        name = _TYPE_NAMES.get(kind)
        if name is None and not isinstance(value, (dict, list)):
            name = kind.__name__
        if name is not None:
            state.pending_client.put((name, value), PendingClientRequest(method, era, None, params))
        return True
    if "result" not in msg:
        if "error" not in msg:
            return True
        if direction is _S2C:
            return False
    value = msg.get("id")
    kind = value.__class__
    name = _ANSWER_ID_NAMES.get(kind)
    if name is None:
        if value is None or isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return False  # no usable id (as _id_problem says): extract() looks inside
        name = kind.__name__
    key = (name, value)
    if direction is _C2S:
        return key not in state.pending_server
    if "error" in msg:
        return False
    result = msg["result"]
    if isinstance(result, dict) and not _RESULT_MARKERS.isdisjoint(result):
        return False
    pending = state.pending_client.pop(key)
    if pending is not None and pending.method in _ANSWER_READ:
        # extract reads this answer; it will pop the request again, so put it back.
        state.pending_client.put(key, pending)
        return False
    return True


def _era(envelope: Envelope, state: SessionState, default_era: str | None) -> str | None:
    return normalise_version(envelope.protocol_version) or state.era or default_era


def _id_key(value: Any) -> Any:
    """Ids are str or number; keep them apart (``1`` and ``"1"`` are different ids)."""
    return (type(value).__name__, value) if not isinstance(value, (dict, list)) else None


# --- client to server -------------------------------------------------------------------


def _client_request(
    envelope: Envelope, msg: dict[str, Any], method: str, state: SessionState, default: str | None
) -> list[Item]:
    params = msg.get("params")
    params_d = params if isinstance(params, dict) else None
    items: list[Item] = []
    if envelope.headers:
        state.authorization = bool(state.authorization) or "authorization" in envelope.headers
    if method == "initialize":
        return _initialize(envelope, msg, params_d, state, default)
    if method == "server/discover":
        state.from_start = True  # the 2026-07-28 client's first request
    meta = params_d.get("_meta") if params_d is not None else None
    meta_version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    era = normalise_version(meta_version) or _era(envelope, state, default)
    capabilities: Any = None
    if is_modern(era):
        capabilities, cap_item = _meta_capabilities(meta, era, method)
        items.append(cap_item)
    key = _id_key(msg.get("id"))
    if key is not None:
        state.pending_client.put(key, PendingClientRequest(method, era, capabilities, params_d))
    if params_d is not None and (
        "inputResponses" in params_d or "requestState" in params_d or method in _RETRY_METHODS
    ):
        items.extend(_retry(method, params_d, era, state, key))
    return items


def _initialize(
    envelope: Envelope,
    msg: dict[str, Any],
    params: dict[str, Any] | None,
    state: SessionState,
    default: str | None,
) -> list[Item]:
    state.initialize_seen = True
    state.from_start = True
    caps = params.get("capabilities") if params is not None else None
    elicitation = caps.get("elicitation", ABSENT) if isinstance(caps, dict) else ABSENT
    state.client_capabilities = elicitation
    offered = params.get("protocolVersion") if params is not None else None
    state.offered_version = offered if isinstance(offered, str) else None
    era = normalise_version(offered) or _era(envelope, state, default)
    key = _id_key(msg.get("id"))
    if key is not None:
        state.pending_client.put(key, PendingClientRequest("initialize", era, elicitation, None))
    return [
        Item(
            ItemKind.CAPABILITIES,
            "/params/capabilities/elicitation",
            era,
            elicitation,
            method="initialize",
            capabilities=elicitation,
            facts={"source": "initialize"},
        )
    ]


def _meta_capabilities(meta: Any, era: str | None, method: str) -> tuple[Any, Item]:
    missing: list[str] = []
    capabilities: Any = ABSENT
    if not isinstance(meta, dict):
        missing = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES]
    else:
        if META_PROTOCOL_VERSION not in meta:
            missing.append(META_PROTOCOL_VERSION)
        client_caps = meta.get(META_CLIENT_CAPABILITIES, ABSENT)
        if client_caps is ABSENT:
            missing.append(META_CLIENT_CAPABILITIES)
            capabilities = None
        elif isinstance(client_caps, dict):
            capabilities = client_caps.get("elicitation", ABSENT)
    item = Item(
        ItemKind.CAPABILITIES,
        "/params/_meta/" + escape_pointer(META_CLIENT_CAPABILITIES) + "/elicitation",
        era,
        capabilities,
        method=method,
        capabilities=capabilities,
        facts={"source": "meta", "missing_meta": missing},
    )
    return capabilities, item


def _retry(
    method: str, params: dict[str, Any], era: str | None, state: SessionState, id_key: Any
) -> list[Item]:
    request_state = params.get("requestState", ABSENT)
    request_key = chain_key_for_request(method, params)
    if isinstance(request_state, str):
        chain_key = chain_key_for_state(request_state)
    else:
        chain_key = request_key
    chain = state.chains.get(chain_key)
    echo: str | None = "exact" if chain is not None and isinstance(request_state, str) else None
    if echo is None:
        # No round issued this state (or none was sent): what did this request's round issue?
        by_request = state.chains.get(request_key)
        if by_request is not None:
            issued = by_request.request_state_digest is not None
            if request_state is ABSENT:
                echo = "dropped" if issued else "none"
            else:
                echo = "modified" if issued else "invented"
            chain = by_request
        elif isinstance(request_state, str):
            # No round of this history issued it, for this request or any other: from
            # another connection, from before this history began, or made up (EG504).
            echo = "unissued"
    responses = params.get("inputResponses")
    draft = method in _DRAFT_METHODS
    facts: dict[str, Any] = {"chain": chain, "chain_key": chain_key, "state_echo": echo}
    facts["request_key"] = request_key
    facts["history_from_start"] = state.from_start
    if echo == "exact" and chain is not None:
        facts["prior_uses"] = chain.uses  # > 0: this state was already presented (EG504)
        chain.uses += 1
    if chain is not None and chain.origin_id is not None:
        facts["reused_id"] = id_key == chain.origin_id
    items = [Item(ItemKind.RETRY, "/params", era, params, method=method, draft=draft, facts=facts)]
    if not isinstance(responses, dict):
        return items
    for key, answer in responses.items():
        asked = chain.requests.get(key) if chain is not None else None
        if asked is None and not _looks_like_elicit_result(answer):
            continue
        if asked is not None and asked[0] is None:
            continue  # answered a sampling or roots request: not elicitation
        value, wrapped = _unwrap_draft(answer)
        items.append(
            Item(
                ItemKind.ELICIT_RESULT,
                "/params/inputResponses/"
                + escape_pointer(str(key))
                + ("/result" if wrapped else ""),
                era,
                value,
                method=method,
                input_key=str(key),
                schema=asked[1] if asked is not None else None,
                request_mode=_request_mode_of(asked),
                draft=draft or wrapped,
            )
        )
    return items


def _request_mode_of(asked: tuple[str | None, Any] | None) -> str | None:
    return asked[0] if asked is not None else None


def _looks_like_elicit_result(answer: Any) -> bool:
    if isinstance(answer, dict) and "result" in answer and isinstance(answer["result"], dict):
        answer = answer["result"]
    return isinstance(answer, dict) and "action" in answer


def _unwrap_draft(answer: Any) -> tuple[Any, bool]:
    """The WG draft wrapped each answer as ``{"result": {...}}``; the spec does not."""
    if (
        isinstance(answer, dict)
        and len(answer) == 1
        and "result" in answer
        and isinstance(answer["result"], dict)
    ):
        return answer["result"], True
    return answer, False


def _client_response(
    envelope: Envelope, msg: dict[str, Any], state: SessionState, default: str | None
) -> list[Item]:
    key = _id_key(msg.get("id"))
    pending = state.pending_server.pop(key) if key is not None else None
    if pending is None or "result" not in msg:
        return []
    result = msg["result"]
    era = pending.era or _era(envelope, state, default)
    if pending.method == "elicitation/create":
        if pending.task and isinstance(result, dict) and isinstance(result.get("task"), dict):
            task_id = result["task"].get("taskId")
            if _id_key(task_id) is not None:
                state.tasks.put(_id_key(task_id), pending)
            return [
                Item(
                    ItemKind.TASK_CREATED,
                    "/result",
                    era,
                    result,
                    method="elicitation/create",
                    request_mode=pending.mode,
                    task=True,
                )
            ]
        _remember_refusal(result, pending, state)
        return [_elicit_result(result, "/result", era, pending, "elicitation/create")]
    if pending.method == "tasks/result":
        task = state.tasks.get(_id_key(pending.task_id)) if pending.task_id is not None else None
        if task is None and not _looks_like_elicit_result(result):
            return []
        source = task or PendingServerRequest("elicitation/create", era)
        item = _elicit_result(result, "/result", era, source, "tasks/result")
        item.task = True
        return [item]
    return []


def _remember_refusal(result: Any, pending: PendingServerRequest, state: SessionState) -> None:
    """A declined or cancelled push elicitation: finished for CX-01, remembered for EG122."""
    action = result.get("action") if isinstance(result, dict) else None
    if not isinstance(action, str) or action not in _REFUSALS:
        return
    if pending.signature is not None:
        state.last_refused = (pending.signature, action)
    eid = pending.elicitation_id
    if isinstance(eid, str) and state.elicitations.get(eid) == "open":
        state.elicitations.put(eid, action)


def _elicit_result(
    result: Any, pointer: str, era: str | None, pending: PendingServerRequest, method: str
) -> Item:
    return Item(
        ItemKind.ELICIT_RESULT,
        pointer,
        era,
        result,
        method=method,
        schema=pending.schema,
        request_mode=pending.mode,
        task=pending.task,
    )


# --- server to client -------------------------------------------------------------------


def _server_request(
    envelope: Envelope, msg: dict[str, Any], method: str, state: SessionState, default: str | None
) -> list[Item]:
    key = _id_key(msg.get("id"))
    params = msg.get("params")
    era = _era(envelope, state, default)
    if method == "elicitation/create":
        item = _elicitation_request(params, "/params", era, state.client_capabilities, method)
        item.facts["pushed"] = True
        signature = elicitation_signature(params)
        if state.last_refused is not None and state.last_refused[0] == signature:
            item.facts["asked_again_after"] = state.last_refused[1]
        state.last_refused = None
        if key is not None:
            state.pending_server.put(
                key,
                PendingServerRequest(
                    method,
                    era,
                    mode=item.mode,
                    schema=item.schema,
                    elicitation_id=item.facts.get("elicitation_id"),
                    task=item.task,
                    signature=signature,
                ),
            )
        eid = item.facts.get("elicitation_id")
        if item.kind is ItemKind.URL_REQUEST and isinstance(eid, str):
            state.elicitations.put(eid, "open")
        return [item]
    if method == "tasks/result" and key is not None:
        task_id = params.get("taskId") if isinstance(params, dict) else None
        state.pending_server.put(key, PendingServerRequest(method, era, task_id=task_id))
    return []


def _elicitation_request(
    params: Any, pointer: str, era: str | None, capabilities: Any, method: str | None
) -> Item:
    """One ``elicitation/create`` params object, pushed or embedded."""
    mode: str | None = "form"
    schema: Any = None
    task = False
    facts: dict[str, Any] = {}
    if isinstance(params, dict):
        raw_mode = params.get("mode", ABSENT)
        facts["mode_present"] = raw_mode is not ABSENT
        mode = raw_mode if isinstance(raw_mode, str) else ("form" if raw_mode is ABSENT else None)
        schema = params.get("requestedSchema")
        task = "task" in params
        if "elicitationId" in params:
            facts["elicitation_id"] = params["elicitationId"]
    kind = ItemKind.URL_REQUEST if mode == "url" else ItemKind.FORM_REQUEST
    return Item(
        kind,
        pointer,
        era,
        params,
        method=method,
        mode=mode,
        schema=schema,
        request_mode=mode,
        capabilities=capabilities,
        task=task,
        facts=facts,
    )


def _completion(
    envelope: Envelope, msg: dict[str, Any], state: SessionState, default: str | None
) -> Item:
    params = msg.get("params")
    eid = params.get("elicitationId") if isinstance(params, dict) else None
    known = state.elicitations.get(eid) if isinstance(eid, str) else None
    if isinstance(eid, str) and known == "open":
        state.elicitations.put(eid, "completed")
    return Item(
        ItemKind.COMPLETION,
        "/params",
        _era(envelope, state, default),
        params,
        method="notifications/elicitation/complete",
        facts={"elicitation_status": known, "session_observed": state.initialize_seen},
    )


def _server_response(
    envelope: Envelope, msg: dict[str, Any], state: SessionState, default: str | None
) -> list[Item]:
    key = _id_key(msg.get("id"))
    pending = state.pending_client.pop(key) if key is not None else None
    era = (pending.era if pending is not None else None) or _era(envelope, state, default)
    method = pending.method if pending is not None else None
    if "error" in msg:
        return _error_items(msg["error"], era, state, method)
    result = msg.get("result")
    if not isinstance(result, dict):
        return []
    if method == "initialize":
        negotiated = normalise_version(result.get("protocolVersion"))
        if negotiated is not None:
            state.era = negotiated
        return []
    input_requests = _input_required_payload(result, method)
    if input_requests is None:
        result_type = result.get("resultType", "complete")
        if (isinstance(result_type, str) and result_type in KNOWN_RESULT_TYPES) or not is_modern(
            era
        ):
            return []
        return [_unknown_result_type(result, era, method)]
    return _input_required(result, input_requests, era, state, pending, key, envelope.principal)


def _unknown_result_type(result: dict[str, Any], era: str | None, method: str | None) -> Item:
    """A 2026-07-28 result whose ``resultType`` is not ``complete`` or ``input_required``."""
    tasks = isinstance(result.get("task"), dict) or (method or "").startswith("tasks/")
    return Item(
        ItemKind.RESULT,
        "/result/resultType",
        era,
        result.get("resultType"),
        method=method,
        facts={"tasks_in_use": tasks},
    )


def _input_required_payload(result: dict[str, Any], method: str | None) -> tuple[str, bool] | None:
    """Where the input requests sit, and whether the shape is a pre-release draft."""
    result_type = result.get("resultType")
    if result_type == "input_required":
        return ("/result", False)
    if method == "tasks/get" or "status" in result or isinstance(result.get("task"), dict):
        task = result.get("task")
        holder = task if isinstance(task, dict) else result
        if holder.get("status") == "input_required":
            base = "/result/task" if holder is task else "/result"
            return (base, False)
    if result_type is None and "inputRequests" in result:
        return ("/result", True)  # the WG draft's IncompleteResult
    return None


def _input_required(
    result: dict[str, Any],
    where: tuple[str, bool],
    era: str | None,
    state: SessionState,
    pending: PendingClientRequest | None,
    origin_id: Any = None,
    principal: Any = None,
) -> list[Item]:
    base, draft = where
    holder: Any = result
    if base == "/result/task":
        holder = result.get("task")
    method = pending.method if pending is not None else None
    capabilities = pending.capabilities if pending is not None else None
    requests = holder.get("inputRequests") if isinstance(holder, dict) else None
    request_state = holder.get("requestState") if isinstance(holder, dict) else None
    facts: dict[str, Any] = {"origin_known": pending is not None}
    if base == "/result/task" or (isinstance(holder, dict) and "status" in holder):
        facts["task_status"] = holder.get("status") if isinstance(holder, dict) else None
    items = [
        Item(
            ItemKind.INPUT_REQUIRED,
            base,
            era,
            holder,
            method=method,
            capabilities=capabilities,
            draft=draft,
            facts=facts,
        )
    ]
    request_key = (
        chain_key_for_request("tasks/update" if method == "tasks/get" else method, pending.params)
        if pending is not None
        else None
    )
    chain = ChainState(method, era, origin_id=origin_id)
    chain.origin_key, chain.principal = request_key, principal
    chain_key: str | None
    if isinstance(request_state, str):
        chain_key = chain_key_for_state(request_state)
        chain.request_state_digest = chain_key
        if request_key is not None:  # to tell a modified or dropped echo (MR-10)
            state.chains.put(request_key, chain)
    else:
        chain_key = request_key
    items[0].facts["chain_key"] = chain_key  # integrations remember removed entries there
    if not isinstance(requests, dict):
        if chain_key is not None:
            state.chains.put(chain_key, chain)
        return items
    for key, request in requests.items():
        pointer = base + "/inputRequests/" + escape_pointer(str(key))
        r_method = request.get("method") if isinstance(request, dict) else None
        if r_method != "elicitation/create":
            chain.requests[str(key)] = (None, None)
            continue
        item = _elicitation_request(
            request.get("params"), pointer + "/params", era, capabilities, method
        )
        item.input_key = str(key)
        item.draft = draft
        item.facts["embedded"] = True
        items.append(item)
        chain.requests[str(key)] = (item.mode, item.schema)
    if chain_key is not None:
        state.chains.put(chain_key, chain)
    return items


def _error_items(
    error: Any, era: str | None, state: SessionState, method: str | None
) -> list[Item]:
    if not isinstance(error, dict):
        return []
    code = error.get("code")
    if code != URL_ELICITATION_REQUIRED and not (is_modern(era) and _retired_code(code)):
        return []
    items = [Item(ItemKind.URL_REQUIRED_ERROR, "/error", era, error, method=method)]
    if code != URL_ELICITATION_REQUIRED:
        items[0].kind = ItemKind.ERROR
        return items
    data = error.get("data")
    elicitations = data.get("elicitations") if isinstance(data, dict) else None
    if isinstance(elicitations, list):
        for index, entry in enumerate(elicitations):
            item = _elicitation_request(
                entry, f"/error/data/elicitations/{index}", era, state.client_capabilities, method
            )
            item.facts["in_error"] = True
            items.append(item)
    return items


def _retired_code(code: Any) -> bool:
    """-32002, or a -32020..-32099 code 2026-07-28 does not define (CP-05)."""
    if not isinstance(code, int) or isinstance(code, bool):
        return False
    return code == -32002 or (-32099 <= code <= -32020 and code not in DEFINED_RESERVED_CODES)
