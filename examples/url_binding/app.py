"""URL-mode binding, end to end: the page a URL elicitation opens, checking who opened it.

The flow (PH-01: the user who completes a URL flow must be the one who started it):

1. The MCP server handles a tool call from a verified principal (its bearer token was
   checked, e.g. by ``RequireAuth``) and needs the user to connect an account. It calls
   :func:`elicit_connect`, which issues a single-use handle for that principal and puts it
   in the URL as ``eg_bind``; the URL goes to the client in a URL-mode elicitation.
2. The user's browser opens the URL. This app, the browser-facing side of the server,
   authenticates the browser user with its own login (a session cookie; here a demo login
   form, in production your OAuth login against the same authorization server). Nothing in
   the URL ever logs anyone in (EL-18).
3. On confirmation the app calls ``UrlBinder.complete(handle, user)``. It succeeds only for
   the user the handle was issued to, once, before it expires; a link opened by someone
   else, reused, edited or expired is refused and reported as EG505 in the audit log.

Run it: ``python examples/url_binding/app.py`` prints a URL issued to ``alice`` and serves
on http://127.0.0.1:8765 (log in as alice to complete it; as anyone else to see it refused).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import secrets
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from elicitguard import Engine, load_policy
from elicitguard.base.keys import KeyRing
from elicitguard.errors import BindingError
from elicitguard.identity.binding import BIND_PARAM, UrlBinder
from elicitguard.identity.principal import Principal
from elicitguard.identity.stores import MemoryStore

#: The authorization server both the MCP tokens and the site's login come from.
ISSUER = "https://auth.example.com"
COOKIE = "site_session"


@dataclass
class Site:
    """The browser-facing server: its binder, its session key, and what users connected."""

    binder: UrlBinder
    base_url: str
    session_key: bytes
    connected: dict[str, str]


def elicit_connect(site: Site, principal: Principal, service: str) -> dict[str, Any]:
    """What the MCP tool sends: URL-mode elicitation params bound to ``principal``."""
    url, _handle = site.binder.issue_url(
        principal, f"{site.base_url}/connect", data={"service": service}
    )
    return {"mode": "url", "message": f"Connect your {service} account", "url": url}


# --- the site's own login (a stand-in: use your real login here) ---------------------------


def _sign(site: Site, user: str) -> str:
    tag = hmac.new(site.session_key, user.encode(), hashlib.sha256).hexdigest()
    return f"{user}|{tag}"


def _session_user(site: Site, request: Request) -> str | None:
    value = request.cookies.get(COOKIE, "")
    user, _, tag = value.rpartition("|")
    if not user:
        return None
    good = hmac.new(site.session_key, user.encode(), hashlib.sha256).hexdigest()
    return user if hmac.compare_digest(tag, good) else None


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        "<meta name='referrer' content='no-referrer'></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}</body></html>",
        status_code=status,
        headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY"},
    )


def build_app(site: Site) -> Starlette:
    """The Starlette app: login, the connect page, and its confirmation."""

    async def login_form(request: Request) -> Response:
        nxt = html.escape(request.query_params.get("next", "/"), quote=True)
        return _page(
            "Sign in",
            f"<form method='post' action='/login'><input type='hidden' name='next' value='{nxt}'>"
            "<label>User <input name='user'></label> <button>Sign in</button></form>",
        )

    async def login(request: Request) -> Response:
        form = await request.form()
        user = str(form.get("user", "")).strip()
        nxt = str(form.get("next", "/"))
        if not user or not nxt.startswith("/") or nxt.startswith("//"):
            return _page("Sign in", "<p>Try again.</p>", 400)
        response = RedirectResponse(nxt, status_code=303)
        response.set_cookie(COOKIE, _sign(site, user), httponly=True, samesite="lax", path="/")
        return response

    async def connect_page(request: Request) -> Response:
        handle = request.query_params.get(BIND_PARAM, "")
        user = _session_user(site, request)
        if user is None:
            here = f"/connect?{BIND_PARAM}={quote(handle, safe='')}"
            return RedirectResponse(f"/login?next={quote(here, safe='')}", status_code=303)
        return _page(
            "Connect your account",
            f"<p>Signed in as <b>{html.escape(user)}</b>.</p>"
            "<form method='post' action='/connect'>"
            f"<input type='hidden' name='{BIND_PARAM}' value='{html.escape(handle, quote=True)}'>"
            "<button>Connect</button></form>",
        )

    async def connect(request: Request) -> Response:
        user = _session_user(site, request)
        if user is None:
            return _page("Sign in first", "<p>Your session has ended.</p>", 401)
        form = await request.form()
        handle = str(form.get(BIND_PARAM, ""))
        try:
            binding = site.binder.complete(handle, Principal(ISSUER, user))
        except BindingError as exc:
            status = 409 if exc.reason == "reused" else 403
            return _page("This link cannot be used", f"<p>{html.escape(str(exc))}.</p>", status)
        service = str(binding.data.get("service", "the service"))
        site.connected[user] = service
        return _page(
            "Connected", f"<p>{html.escape(service)} is now connected for {html.escape(user)}.</p>"
        )

    return Starlette(
        routes=[
            Route("/login", login_form, methods=["GET"]),
            Route("/login", login, methods=["POST"]),
            Route("/connect", connect_page, methods=["GET"]),
            Route("/connect", connect, methods=["POST"]),
        ]
    )


def make_site(base_url: str, engine: Engine | None = None, keys: KeyRing | None = None) -> Site:
    """A site with an in-memory binder (use SQLite or Redis across processes)."""
    ring = keys if keys is not None else (engine.keys if engine is not None else KeyRing.random())
    binder = UrlBinder(MemoryStore(ring), ring, engine=engine, server="url-binding-demo")
    return Site(binder, base_url.rstrip("/"), secrets.token_bytes(32), {})


def main() -> int:
    """Serve the demo on 127.0.0.1:8765 and print a connect URL issued to alice."""
    import uvicorn

    engine = Engine(load_policy("builtin:default"))
    site = make_site("http://127.0.0.1:8765", engine)
    params = elicit_connect(site, Principal(ISSUER, "alice"), "GitHub")
    print(f"URL elicitation for alice: {params['url']}", file=sys.stderr)
    uvicorn.run(build_app(site), host="127.0.0.1", port=8765, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
