"""elicitguard's conformance fixture: an ``mcp`` 2.3.0 server with what the suite's server
mode expects (``@modelcontextprotocol/conformance`` 0.2.0-alpha.12).

The suite calls fixed tool, resource and prompt names (``test_simple_text``,
``test_elicitation``, ``test_input_required_result_*``, ``test://static-text``, ...) and
checks the shapes and behaviour of the answers. This server provides them for both wires:
the handshake era (2025-11-25: pushed elicitation and sampling, SSE polling, subscriptions)
and 2026-07-28 (``InputRequiredResult`` rounds, sealed ``requestState``, stateless HTTP).

Run ``python fixture_server.py [--guard POLICY]``: it serves Streamable HTTP on 127.0.0.1 at a
free port and prints ``PORT <n>``. With ``--guard`` the app sits behind elicitguard's ASGI
middleware (``ServerGuard.http_app``) under that policy.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import itertools
import json
import socket
from typing import Annotated, Any

import anyio
import uvicorn
from mcp.server import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer, RequestStateSecurity
from mcp.server.mcpserver.prompts.base import Prompt, UserMessage
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp.shared.exceptions import MCPError
from mcp.types import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    AudioContent,
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    EmptyResult,
    ImageContent,
    InputRequest,
    InputRequiredResult,
    JSONRPCMessage,
    ListRootsRequest,
    ListRootsResult,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel, Field

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV_EMPTY = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

# requestState is sealed with this key so that a restarted fixture still opens its own state.
STATE_KEY = b"elicitguard-conformance-fixture-state-key-0001"

mcp = MCPServer(
    name="elicitguard-conformance-fixture",
    version="1.0.0",
    request_state_security=RequestStateSecurity(keys=[STATE_KEY]),
)


class MemoryEventStore(EventStore):
    """Every SSE event kept in order, so a client that reconnects can resume (SEP-1699)."""

    def __init__(self) -> None:
        self._events: list[tuple[str, str, JSONRPCMessage | None]] = []
        self._ids = itertools.count(1)

    async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
        event_id = str(next(self._ids))
        self._events.append((stream_id, event_id, message))
        return event_id

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        stream = next((s for s, e, _ in self._events if e == last_event_id), None)
        if stream is None:
            return None
        for stream_id, event_id, message in self._events:
            if stream_id == stream and int(event_id) > int(last_event_id) and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


# --- content tools ----------------------------------------------------------------------------


@mcp.tool()
def test_simple_text() -> str:
    """Returns one text block."""
    return "This is a simple text response for testing."


@mcp.tool()
def test_image_content() -> list[ImageContent]:
    """Returns one image block."""
    return [ImageContent(type="image", data=PNG_1PX, mime_type="image/png")]


@mcp.tool()
def test_audio_content() -> list[AudioContent]:
    """Returns one audio block."""
    return [AudioContent(type="audio", data=WAV_EMPTY, mime_type="audio/wav")]


def _embedded(uri: str, text: str) -> EmbeddedResource:
    return EmbeddedResource(
        type="resource", resource=TextResourceContents(uri=uri, mime_type="text/plain", text=text)
    )


@mcp.tool()
def test_embedded_resource() -> list[EmbeddedResource]:
    """Returns one embedded resource."""
    return [_embedded("test://embedded-resource", "This is an embedded resource content.")]


@mcp.tool()
def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
    """Returns text, an image and a resource together."""
    return [
        TextContent(type="text", text="Multiple content types test:"),
        ImageContent(type="image", data=PNG_1PX, mime_type="image/png"),
        _embedded("test://mixed-content-resource", '{"test": "data", "value": 123}'),
    ]


@mcp.tool()
def test_error_handling() -> str:
    """Always fails, so the result carries ``isError``."""
    raise RuntimeError("This tool intentionally returns an error for testing")


# --- notifications ------------------------------------------------------------------------------


@mcp.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three log messages while it runs."""
    for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.info(text)
        await asyncio.sleep(0.05)
    return "Tool with logging executed successfully"


@mcp.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100; returns the progress token."""
    for step in (0, 50, 100):
        await ctx.report_progress(progress=step, total=100, message=f"Completed step {step} of 100")
        await asyncio.sleep(0.05)
    meta = ctx.request_context.meta if ctx.request_context else None
    return str(meta.get("progress_token", 0) if meta else 0)


@mcp.tool()
async def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream mid-call; the client resumes it (SEP-1699 polling)."""
    await ctx.info("Before disconnect")
    await ctx.close_sse_stream()
    await asyncio.sleep(0.2)
    await ctx.info("After reconnect")
    return "Reconnection test completed"


def _dynamic() -> str:
    """Registered and removed again by the change triggers."""
    return "dynamic"


@mcp.tool()
async def test_trigger_tool_change(ctx: Context) -> str:
    """Changes the tool list and says so (SEP-2575)."""
    mcp.add_tool(_dynamic, name="test_dynamic_tool")
    mcp.remove_tool("test_dynamic_tool")
    await ctx.notify_tools_changed()
    return "tool list changed"


@mcp.tool()
async def test_trigger_prompt_change(ctx: Context) -> str:
    """Changes the prompt list and says so (SEP-2575)."""
    mcp.add_prompt(
        Prompt.from_function(_dynamic, name="test_dynamic_prompt", description="dynamic")
    )
    mcp.remove_prompt("test_dynamic_prompt")
    await ctx.notify_prompts_changed()
    return "prompt list changed"


# --- pushed requests (handshake era) ------------------------------------------------------------


@mcp.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model through a pushed ``sampling/createMessage``."""
    try:
        result = await ctx.session.create_message(
            messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
            max_tokens=100,
            related_request_id=ctx.request_id,
        )
    except MCPError as exc:
        return f"Sampling not supported or error: {exc}"
    text = result.content.text if result.content.type == "text" else "No response"
    return f"LLM response: {text}"


class Reply(BaseModel):
    response: str = Field(description="User's response")


class Defaults(BaseModel):
    """SEP-1034: a default for every primitive type."""

    name: str = Field(default="John Doe", description="User name")
    age: int = Field(default=30, description="User age")
    score: float = Field(default=95.5, description="User score")
    status: str = Field(
        default="active",
        description="User status",
        json_schema_extra={"enum": ["active", "inactive", "pending"]},
    )
    verified: bool = Field(default=True, description="Verification status")


def _options(values: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in values]


class Enums(BaseModel):
    """SEP-1330: every enum variant."""

    untitledSingle: str = Field(
        description="Simple enum without titles",
        json_schema_extra={"enum": ["active", "inactive", "pending"]},
    )
    titledSingle: str = Field(
        description="Enum with titled options (oneOf)",
        json_schema_extra={
            "oneOf": _options(
                [("low", "Low Priority"), ("medium", "Medium Priority"), ("high", "High Priority")]
            )
        },
    )
    untitledMulti: list[str] = Field(
        description="Multi-select without titles",
        json_schema_extra={"items": {"type": "string", "enum": ["read", "write", "execute"]}},
    )
    titledMulti: list[str] = Field(
        description="Multi-select with titled options",
        json_schema_extra={
            "items": {
                "anyOf": _options(
                    [("feature", "New Feature"), ("bug", "Bug Fix"), ("docs", "Documentation")]
                )
            }
        },
    )
    legacyEnum: str = Field(
        description="Legacy enum with enumNames",
        json_schema_extra={
            "enum": ["small", "medium", "large"],
            "enumNames": ["Small Size", "Medium Size", "Large Size"],
        },
    )


async def _push_form(ctx: Context, label: str, message: str, schema: type[BaseModel]) -> str:
    try:
        result = await ctx.elicit(message=message, schema=schema)
    except MCPError as exc:
        return f"Elicitation not supported or error: {exc}"
    content = result.data.model_dump_json() if result.action == "accept" else "{}"
    return f"{label}: action={result.action}, content={content}"


@mcp.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Pushes a one-field form with the given message."""
    return await _push_form(ctx, "User response", message, Reply)


@mcp.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Pushes a form whose every field has a default (SEP-1034)."""
    return await _push_form(ctx, "Elicitation result", "Please provide user information", Defaults)


@mcp.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Pushes a form with every enum variant (SEP-1330)."""
    message = "Please select values using different enum schema types"
    return await _push_form(ctx, "Elicitation completed", message, Enums)


@mcp.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Refuses with -32021 and ``requiredCapabilities`` when the client lacks sampling."""
    caps = ctx.client_capabilities
    if caps is None or caps.sampling is None:
        raise MCPError(
            code=MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="This tool requires the client 'sampling' capability",
            data={"requiredCapabilities": {"sampling": {}}},
        )
    return "Client declared sampling capability; proceeding."


@mcp.tool()
def test_x_mcp_header(
    region: Annotated[
        str,
        Field(
            description="Sent as the Mcp-Param-Region header",
            json_schema_extra={"x-mcp-header": "Region"},
        ),
    ] = "<none>",  # noqa: PT028 - a tool, not a test; the suite expects this name
) -> str:
    """A parameter mirrored into an ``Mcp-Param-*`` header (SEP-2243)."""
    return f"region={region}"


# --- InputRequiredResult rounds (2026-07-28, SEP-2322) ------------------------------------------


def _form(message: str, field: str, kind: str = "string") -> ElicitRequest:
    schema = {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


def _sampling(text: str, max_tokens: int) -> CreateMessageRequest:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=text))
    return CreateMessageRequest(
        params=CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    )


def _content(answer: Any, key: str) -> Any:
    if isinstance(answer, ElicitResult) and answer.content:
        return answer.content.get(key)
    return None


@mcp.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str | InputRequiredResult:
    """One form entry; greets the name it gets back."""
    answer = (ctx.input_responses or {}).get("user_name")
    if answer is not None:
        return f"Hello, {_content(answer, 'name') or 'stranger'}!"
    return InputRequiredResult(input_requests={"user_name": _form("What is your name?", "name")})


@mcp.tool()
async def test_input_required_result_sampling(ctx: Context) -> str | InputRequiredResult:
    """One sampling entry."""
    answer = (ctx.input_responses or {}).get("capital_question")
    if answer is not None:
        ok = isinstance(answer, CreateMessageResult) and answer.content.type == "text"
        return f"Model said: {answer.content.text if ok else '?'}"  # type: ignore[union-attr]
    return InputRequiredResult(
        input_requests={"capital_question": _sampling("What is the capital of France?", 100)}
    )


@mcp.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str | InputRequiredResult:
    """One roots entry."""
    answer = (ctx.input_responses or {}).get("client_roots")
    if answer is not None:
        count = len(answer.roots) if isinstance(answer, ListRootsResult) else 0
        return f"Client exposed {count} root(s)."
    return InputRequiredResult(input_requests={"client_roots": ListRootsRequest()})


@mcp.tool()
async def test_input_required_result_request_state(ctx: Context) -> str | InputRequiredResult:
    """Completes only when the retry echoes the state it was given."""
    if "confirm" in (ctx.input_responses or {}) and ctx.request_state == "request-state-nonce":
        return "state-ok: confirmation received"
    return InputRequiredResult(
        input_requests={"confirm": _form("Please confirm", "ok", "boolean")},
        request_state="request-state-nonce",
    )


@mcp.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str | InputRequiredResult:
    """Elicitation, sampling and roots in one round."""
    if {"user_name", "greeting", "client_roots"} <= (ctx.input_responses or {}).keys():
        return "All inputs received."
    return InputRequiredResult(
        input_requests={
            "user_name": _form("What is your name?", "name"),
            "greeting": _sampling("Generate a greeting", 50),
            "client_roots": ListRootsRequest(),
        },
        request_state="multiple-inputs",
    )


@mcp.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str | InputRequiredResult:
    """Three rounds; the state carries the round number and the first answer."""
    state = json.loads(ctx.request_state) if ctx.request_state else {"round": 0}
    answers = ctx.input_responses or {}
    if state["round"] == 1 and "step1" in answers:
        return InputRequiredResult(
            input_requests={"step2": _form("Step 2: What is your favorite color?", "color")},
            request_state=json.dumps({"round": 2, "name": _content(answers["step1"], "name")}),
        )
    if state["round"] == 2 and "step2" in answers:
        return f"{state.get('name')} likes {_content(answers['step2'], 'color')}."
    # The first round, or an answer missing: ask (again) from the start.
    return InputRequiredResult(
        input_requests={"step1": _form("Step 1: What is your name?", "name")},
        request_state=json.dumps({"round": 1}),
    )


@mcp.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str | InputRequiredResult:
    """Issues state once; a tampered echo never reaches here (the SDK refuses it)."""
    if ctx.request_state is None:
        return InputRequiredResult(
            input_requests={"confirm": _form("Please confirm", "ok", "boolean")},
            request_state="round-1",
        )
    return f"state-ok: {ctx.request_state}"


@mcp.tool()
async def test_input_required_result_capabilities(ctx: Context) -> InputRequiredResult:
    """Asks only for what this request's client declared."""
    caps = ctx.client_capabilities
    requests: dict[str, InputRequest] = {}
    if caps is None or caps.sampling is not None:
        requests["sample"] = _sampling("Say hello", 50)
    if caps is None or caps.elicitation is not None:
        requests["ask"] = _form("What is your name?", "name")
    return InputRequiredResult(input_requests=requests, request_state="capability-gated")


# --- JSON Schema 2020-12 (SEP-1613, SEP-2106) ----------------------------------------------------

SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@mcp.tool(name="json_schema_2020_12_tool")
def json_schema_2020_12_tool() -> str:
    """Its inputSchema is replaced by the 2020-12 schema in tools/list (see the middleware)."""
    return "json_schema_2020_12_tool"


async def schema_2020_12(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
    """Middleware: list ``json_schema_2020_12_tool`` with the full 2020-12 input schema."""
    result = await call_next(ctx)
    if ctx.method == "tools/list":
        tools = result.get("tools") if isinstance(result, dict) else getattr(result, "tools", None)
        for tool in tools or ():
            if isinstance(tool, dict) and tool.get("name") == "json_schema_2020_12_tool":
                tool["inputSchema"] = SCHEMA_2020_12
            elif getattr(tool, "name", None) == "json_schema_2020_12_tool":
                tool.input_schema = SCHEMA_2020_12
    return result


mcp.middleware.append(schema_2020_12)


# --- resources ----------------------------------------------------------------------------------


@mcp.resource("test://static-text")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@mcp.resource("test://static-binary")
def static_binary() -> bytes:
    """A static binary resource (a PNG)."""
    return base64.b64decode(PNG_1PX)


@mcp.resource("test://template/{id}/data")
def template_data(id: str) -> str:
    """A resource template with one variable."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@mcp.resource("test://watched-resource")
def watched() -> str:
    """A resource clients subscribe to."""
    return "Watched resource content"


subscriptions: set[str] = set()


async def set_level(
    ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams
) -> EmptyResult:
    return EmptyResult()


async def subscribe(
    ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams
) -> EmptyResult:
    subscriptions.add(str(params.uri))
    return EmptyResult()


async def unsubscribe(
    ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams
) -> EmptyResult:
    subscriptions.discard(str(params.uri))
    return EmptyResult()


# The SDK has no public MCPServer API for these three handlers yet.
_lowlevel = mcp._lowlevel_server
_lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
_lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
_lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)


# --- prompts ------------------------------------------------------------------------------------


@mcp.prompt()
def test_simple_prompt() -> list[UserMessage]:
    """A prompt without arguments."""
    return [
        UserMessage(
            role="user",
            content=TextContent(type="text", text="This is a simple prompt for testing."),
        )
    ]


@mcp.prompt()
def test_prompt_with_arguments(arg1: str, arg2: str) -> list[UserMessage]:
    """A prompt with two required arguments."""
    text = f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
    return [UserMessage(role="user", content=TextContent(type="text", text=text))]


@mcp.prompt()
def test_prompt_with_embedded_resource(resourceUri: str) -> list[UserMessage]:
    """A prompt that embeds a resource."""
    return [
        UserMessage(
            role="user", content=_embedded(resourceUri, "Embedded resource content for testing.")
        ),
        UserMessage(
            role="user",
            content=TextContent(type="text", text="Please process the embedded resource above."),
        ),
    ]


@mcp.prompt()
def test_prompt_with_image() -> list[UserMessage]:
    """A prompt with an image."""
    return [
        UserMessage(
            role="user", content=ImageContent(type="image", data=PNG_1PX, mime_type="image/png")
        ),
        UserMessage(
            role="user", content=TextContent(type="text", text="Please analyze the image above.")
        ),
    ]


@mcp.prompt()
async def test_input_required_result_prompt(
    ctx: Context,
) -> list[UserMessage] | InputRequiredResult:
    """A prompt that asks for input first (SEP-2322 outside tools/call)."""
    answer = (ctx.input_responses or {}).get("user_context")
    if answer is not None:
        text = f"Use the following context: {_content(answer, 'context') or '?'}"
        return [UserMessage(role="user", content=TextContent(type="text", text=text))]
    return InputRequiredResult(
        input_requests={"user_context": _form("What context should the prompt use?", "context")}
    )


@mcp.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: CompletionContext | None,
) -> Completion:
    """Completion support with no suggestions."""
    return Completion(values=[], total=0, has_more=False)


# --- serving ------------------------------------------------------------------------------------


def app(guard_policy: str | None) -> Any:
    """The Streamable HTTP app, behind elicitguard's ASGI middleware when a policy is given."""
    inner = mcp.streamable_http_app(
        event_store=MemoryEventStore(), retry_interval=100, host="127.0.0.1"
    )
    if guard_policy is None:
        return inner
    from elicitguard.integrations.mcp_server import ServerGuard

    return ServerGuard(policy=guard_policy, server="conformance-fixture").http_app(inner)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--guard", metavar="POLICY", help="serve behind the ASGI middleware")
    args = parser.parse_args()
    # h11 whatever else is installed: uvicorn's httptools parser keeps a header value's
    # trailing whitespace, and the SDK then refuses `Mcp-Name: "  name  "` (conformance's
    # sep-2243-server-accepts-whitespace-header-value); the fixture must not depend on it.
    config = uvicorn.Config(app(args.guard), log_level="warning", lifespan="on", http="h11")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue from now on, before uvicorn serves them
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
