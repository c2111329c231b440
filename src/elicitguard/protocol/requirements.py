"""The numbered requirements of the MCP specification that rules cite.

Copied from the project's protocol notes (the spec's elicitation, MRTR, base-protocol and
authorization pages): the id, the keyword level, who it binds, and the requirement in
short. Rule files cite these ids in ``requirements:``; a test checks that every cited id
exists here, and the generated docs pages quote the text.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["REQUIREMENTS", "Requirement"]


class Requirement(NamedTuple):
    """One numbered requirement."""

    id: str
    level: str
    who: str
    text: str


REQUIREMENTS: dict[str, Requirement] = {
    "EL-01": Requirement(
        "EL-01",
        "MUST NOT",
        "server",
        "use form mode for sensitive information (passwords, API keys, access tokens, payment credentials). [2025-06-18: MUST NOT request sensitive info through elicitation at all.]",
    ),
    "EL-02": Requirement(
        "EL-02", "MUST", "server", "use URL mode for interactions involving such information"
    ),
    "EL-03": Requirement(
        "EL-03", "MUST", "client", "UI makes clear which server is asking ([2025-06-18]: SHOULD)"
    ),
    "EL-04": Requirement(
        "EL-04", "MUST", "client", "respect privacy; offer clear decline and cancel options"
    ),
    "EL-05": Requirement(
        "EL-05",
        "MUST",
        "client",
        "form mode: let the user review and modify answers before sending",
    ),
    "EL-06": Requirement(
        "EL-06",
        "MUST",
        "client",
        "URL mode: clearly show the target domain or host and get consent before navigating",
    ),
    "EL-07": Requirement(
        "EL-07",
        "MUST",
        "client",
        "declare `elicitation` (in initialize [≤25]; in `_meta…/clientCapabilities` on each request in 2026)",
    ),
    "EL-08": Requirement(
        "EL-08", "—", "both", "`elicitation: {}` ≡ `{form: {}}` (2025-11-25 onward)"
    ),
    "EL-09": Requirement(
        "EL-09", "MUST", "client", "support at least one mode if `elicitation` is declared"
    ),
    "EL-10": Requirement("EL-10", "MUST NOT", "server", "send a mode the client did not declare"),
    "EL-11": Requirement(
        "EL-11",
        "MUST",
        "server",
        "every request has `message`; `mode` may be omitted for form (MAY), and clients MUST treat a missing `mode` as form",
    ),
    "EL-12": Requirement(
        "EL-12",
        "MUST",
        "server",
        'form requests set `mode:"form"` or omit it, and include `requestedSchema`',
    ),
    "EL-13": Requirement(
        "EL-13",
        "MUST",
        "server",
        'URL requests set `mode:"url"`, `message`, `url` (plus `elicitationId` [2025-11-25]); `url` MUST be a valid URL',
    ),
    "EL-14": Requirement(
        "EL-14", "SHOULD", "client", "pre-populate `default` values when it supports defaults"
    ),
    "EL-15": Requirement(
        "EL-15",
        "SHOULD",
        "client",
        "offer manual retry and cancel of the original request after a URL-mode accept",
    ),
    "EL-16": Requirement(
        "EL-16",
        "SHOULD NOT / MUST",
        "server",
        "assume elicitation succeeds / handle decline, cancel and client failure",
    ),
    "EL-17": Requirement(
        "EL-17",
        "MUST",
        "server",
        "if state is stored: bind it securely to the individual user, protect the store, and for remote servers derive user identity from MCP-authorization credentials (e.g. `sub`) when possible. [≤25 adds: state MUST NOT be tied to session IDs alone.]",
    ),
    "EL-18": Requirement(
        "EL-18", "MUST NOT", "server", "rely on URL mode to authorize users to itself"
    ),
    "EL-19": Requirement(
        "EL-19",
        "MUST NOT",
        "server",
        "let third-party credentials transit the MCP client; use the client's credentials with a third party (token passthrough); transmit URL-obtained credentials to the client. MUST: the user authorizes the server directly",
    ),
    "EL-20": Requirement(
        "EL-20", "MUST", "server", "bind elicitation requests to the client and user identity"
    ),
    "EL-21": Requirement("EL-21", "MUST", "client", "clearly indicate which server is asking"),
    "EL-22": Requirement(
        "EL-22",
        "SHOULD",
        "client",
        "approval controls; let users decline at any time; show what is asked and why",
    ),
    "EL-23": Requirement(
        "EL-23", "SHOULD", "client", "rate limiting — **[≤25] only**, removed in 2026-07-28"
    ),
    "URL-01": Requirement(
        "URL-01", "MUST NOT", "server", "put sensitive end-user data (credentials, PII) in the URL"
    ),
    "URL-02": Requirement(
        "URL-02", "MUST NOT", "server", "give a pre-authenticated URL to a protected resource"
    ),
    "URL-03": Requirement(
        "URL-03", "SHOULD NOT", "server", "put clickable URLs in any field of a form request"
    ),
    "URL-04": Requirement("URL-04", "SHOULD", "server", "use HTTPS outside development"),
    "URL-05": Requirement("URL-05", "MUST NOT", "client", "prefetch the URL or its metadata"),
    "URL-06": Requirement("URL-06", "MUST NOT", "client", "open it without explicit consent"),
    "URL-07": Requirement("URL-07", "MUST", "client", "show the full URL before consent"),
    "URL-08": Requirement(
        "URL-08",
        "MUST",
        "client",
        "open it so that neither the client nor the LLM can see the page or the user's input (e.g. SFSafariViewController, not WKWebView)",
    ),
    "URL-09": Requirement(
        "URL-09",
        "SHOULD",
        "client",
        "highlight the domain; warn on ambiguous or suspicious URIs (Punycode)",
    ),
    "URL-10": Requirement(
        "URL-10",
        "SHOULD NOT",
        "client",
        "render URLs as clickable anywhere except the `url` field of a URL request",
    ),
    "ID-01": Requirement(
        "ID-01", "MUST NOT", "server", "trust client-supplied user identity without verifying it"
    ),
    "FM-01": Requirement("FM-01", "SHOULD", "client", "validate responses against the schema"),
    "FM-02": Requirement("FM-02", "SHOULD", "server", "validate received data against the schema"),
    "PH-01": Requirement(
        "PH-01",
        "MUST",
        "server",
        "verify who opens the URL; make sure the user who started the elicitation is the one who completes it; the check must resist an attacker editing the URL",
    ),
    "CX-01": Requirement(
        "CX-01",
        "MUST / MUST NOT / SHOULD",
        "server / client",
        "[2025-11-25 only] `notifications/elicitation/complete`: server sends it only to the initiating client and includes `elicitationId`; client ignores unknown or finished IDs and keeps manual controls",
    ),
    "CX-02": Requirement(
        "CX-02",
        "MAY / MUST NOT / MUST",
        "server",
        "[2025-11-25 only] `-32042`: MAY return it, MUST NOT except when URL mode is required; every listed elicitation MUST be URL mode with an `elicitationId`",
    ),
    "CX-03": Requirement(
        "CX-03", "MUST", "client", "[2025-11-25 only] answer `-32602` to a mode it did not declare"
    ),
    "JR-01": Requirement(
        "JR-01",
        "MUST",
        "both",
        "a request carries a string or integer `id` (never `null`) and its response the same `id`; a notification has no `id` and gets no answer (base protocol)",
    ),
    "MR-01": Requirement(
        "MR-01",
        "MUST",
        "server",
        "send all server→client requests via MRTR; standalone requests are no longer supported",
    ),
    "MR-02": Requirement(
        "MR-02",
        "MUST NOT",
        "server",
        "send `InputRequiredResult` except on `tools/call`, `prompts/get`, `resources/read`",
    ),
    "MR-03": Requirement(
        "MR-03",
        "MUST",
        "server",
        "keys are unique within the request; values are only ElicitRequest, CreateMessageRequest or ListRootsRequest",
    ),
    "MR-04": Requirement(
        "MR-04", "MUST", "server", "include `inputRequests` or `requestState` (at least one)"
    ),
    "MR-05": Requirement(
        "MR-05",
        "MUST NOT",
        "server",
        "include input requests for capabilities the client did not declare (e.g. no `elicitation/create` without `elicitation`)",
    ),
    "MR-06": Requirement(
        "MR-06",
        "MUST",
        "server",
        "treat `requestState` as attacker-controlled. If it affects authz, resource access or business logic, protect its integrity (HMAC/AEAD) and reject state that fails the check; protection MAY be skipped only when tampering can do nothing worse than fail the request",
    ),
    "MR-07": Requirement(
        "MR-07",
        "SHOULD / MUST",
        "server",
        "put the principal, a short TTL and the originating request (method plus a digest of its key params) inside the protected state, and check them; enforce single use server-side where it is needed (MUST)",
    ),
    "MR-08": Requirement(
        "MR-08",
        "MUST NOT / MAY",
        "server",
        "assume the client fulfils or retries; it MAY ask again on later attempts",
    ),
    "MR-09": Requirement(
        "MR-09",
        "MUST",
        "client",
        "build all requested inputs before retrying; MAY retry at once if there are no `inputRequests`",
    ),
    "MR-10": Requirement(
        "MR-10",
        "MUST / MUST NOT",
        "client",
        "echo `requestState` exactly; never inspect, parse or modify it; leave it out if none was given",
    ),
    "MR-11": Requirement("MR-11", "MUST", "client", "use a different JSON-RPC `id` for the retry"),
    "MR-12": Requirement(
        "MR-12",
        "MUST NOT",
        "client",
        "use `inputRequests` or `requestState` for any other (parallel) request",
    ),
    "MR-13": Requirement(
        "MR-13",
        "SHOULD",
        "server",
        "validate `InputResponses`; answer protocol errors with JSON-RPC errors; ignore extra keys; re-ask with a new `InputRequiredResult` when answers are missing (not an error)",
    ),
    "RT-01": Requirement(
        "RT-01",
        "MUST",
        "server / client",
        "results carry `resultType`; absent means `complete`; an unrecognised value is invalid",
    ),
    "CP-01": Requirement(
        "CP-01", "MUST", "server", "a request missing required `_meta` gets `-32602` (HTTP 400)"
    ),
    "CP-02": Requirement(
        "CP-02",
        "MUST NOT / MUST",
        "server",
        "not rely on undeclared capabilities; return `-32021` with `data.requiredCapabilities` (HTTP 400)",
    ),
    "CP-03": Requirement(
        "CP-03",
        "MUST NOT",
        "server",
        "infer capabilities from earlier requests (schema doc on `clientCapabilities`); rely on earlier requests for context (Statelessness)",
    ),
    "CP-04": Requirement(
        "CP-04",
        "SHOULD NOT",
        "server",
        "use `clientInfo` for behaviour or security decisions (it is self-reported)",
    ),
    "CP-05": Requirement(
        "CP-05",
        "MUST NOT",
        "both",
        "emit `-32042` or `-32002`, or any `-32020…-32099` code the spec does not define",
    ),
    "TR-01": Requirement(
        "TR-01",
        "MUST",
        "server",
        "on HTTP: header/body mismatch → 400 + `-32020`; unsupported version → 400 + `-32022`; unknown method → 404 + `-32601`",
    ),
    "TR-02": Requirement(
        "TR-02", "MUST", "intermediary", "forward unrecognised `Mcp-Param-*` headers"
    ),
    "AU-01": Requirement(
        "AU-01",
        "MUST",
        "",
        "Clients implement RFC 8707 `resource` in **both** authorization and token requests, set to the MCP server's canonical URI, **whether or not the AS supports it**",
    ),
    "AU-02": Requirement(
        "AU-02",
        "MUST",
        "",
        "Servers validate that the token was issued for them as audience (RFC 8707 §2); invalid or expired tokens get HTTP 401",
    ),
    "AU-03": Requirement(
        "AU-03",
        "MUST",
        "",
        "Servers accept only tokens valid for their own resources and MUST NOT accept or transit any other tokens; they reject tokens whose audience does not include them",
    ),
    "AU-04": Requirement(
        "AU-04",
        "MUST NOT",
        "",
        "A server calling upstream APIs must not pass through the client's token; the upstream token is a separate token from the upstream AS (token passthrough is forbidden)",
    ),
    "AU-05": Requirement(
        "AU-05", "MUST NOT", "", "Clients send MCP servers only tokens issued by that server's AS"
    ),
    "AU-06": Requirement(
        "AU-06",
        "MUST",
        "",
        "Confused deputy: MCP *proxy* servers that use static client IDs get user consent for each dynamically registered client before forwarding to a third-party AS. The security best-practices doc (`docs/docs/2026-07-28/tutorials/security/security_best_practices.mdx`) details the consent page and cookie rules",
    ),
    "AU-07": Requirement(
        "AU-07",
        "MUST",
        "",
        "`Authorization: Bearer` on every HTTP request; never put tokens in the query string",
    ),
    "SB-01": Requirement(
        "SB-01",
        "MUST / SHOULD",
        "",
        "(best practices) Clients accept only `http`/`https` authorization URLs (http only for loopback), reject `javascript:`, `data:`, `file:`, `vbscript:`, never open URLs through a shell; allow-lists are preferred (SHOULD)",
    ),
    "SB-02": Requirement(
        "SB-02",
        "MUST / SHOULD",
        "",
        "(best practices) Possession of a state handle is not authentication; bind handles to the verified user, keyed as `<user_id>:<handle>` (SHOULD)",
    ),
}
