"""The URL binding example, driven like a browser against uvicorn on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path
from types import ModuleType
from urllib.parse import urlsplit

import httpx
import pytest
from tests.identity.asgi_server import serve_asgi
from tests.integration_support import require_module

from elicitguard import Engine, load_policy
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.identity.principal import Principal

ROOT = Path(__file__).resolve().parents[2]


def _example() -> ModuleType:
    path = ROOT / "examples" / "url_binding" / "app.py"
    spec = importlib.util.spec_from_file_location("url_binding_example", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _browser(base: str) -> httpx.Client:
    return httpx.Client(base_url=base, follow_redirects=True, timeout=10)


def _login(browser: httpx.Client, user: str, next_path: str) -> httpx.Response:
    return browser.post("/login", data={"user": user, "next": next_path})


def test_the_whole_flow(tmp_path: Path) -> None:
    """Issue for alice; mallory is refused, alice completes once, a reuse and an edit fail."""
    require_module("starlette")
    require_module("uvicorn")
    example = _example()
    out = io.StringIO()
    engine = Engine(load_policy("builtin:default"), audit=AuditSink(out), keys=KeyRing.random())
    with serve_asgi(
        example.build_app(site := example.make_site("http://placeholder", engine))
    ) as base:
        site.base_url = base
        alice = Principal(example.ISSUER, "alice")
        params = example.elicit_connect(site, alice, "GitHub")
        assert params["mode"] == "url"
        parts = urlsplit(params["url"])
        path = f"{parts.path}?{parts.query}"
        assert "eg_bind=" in parts.query
        handle = parts.query.split("eg_bind=")[1]

        # Nobody signed in: the page sends the browser to the site's login first.
        with _browser(base) as anonymous:
            first = anonymous.get(path)
            assert "Sign in" in first.text
            assert "/login" in str(first.url)

        # Mallory got hold of the link: she signs in as herself and is refused.
        with _browser(base) as mallory:
            page = _login(mallory, "mallory", path)
            assert page.status_code == 200
            assert "Signed in as <b>mallory</b>" in page.text
            refused = mallory.post("/connect", data={"eg_bind": handle})
            assert refused.status_code == 403
            assert "another user" in refused.text
        assert "mallory" not in site.connected

        # Alice completes her own flow.
        with _browser(base) as browser:
            page = _login(browser, "alice", path)
            assert "Signed in as <b>alice</b>" in page.text
            done = browser.post("/connect", data={"eg_bind": handle})
            assert done.status_code == 200
            assert "GitHub is now connected for alice" in done.text
            assert site.connected == {"alice": "GitHub"}
            again = browser.post("/connect", data={"eg_bind": handle})
            assert again.status_code == 409
            assert "already used" in again.text
            edited = browser.post("/connect", data={"eg_bind": handle[:-2] + "xx"})
            assert edited.status_code == 403
            assert "not valid" in edited.text

    codes = [
        f["code"]
        for line in out.getvalue().splitlines()
        for f in json.loads(line).get("findings", [])
    ]
    assert codes == ["EG505", "EG505", "EG505"]  # other user, reused, edited
    assert handle not in out.getvalue()


def test_the_example_refuses_open_redirects() -> None:
    """The login's next parameter stays on the site."""
    require_module("starlette")
    require_module("uvicorn")
    example = _example()
    site = example.make_site("http://127.0.0.1")
    with serve_asgi(example.build_app(site)) as base, _browser(base) as browser:
        response = browser.post("/login", data={"user": "alice", "next": "//evil.example/"})
        assert response.status_code == 400


@pytest.mark.parametrize("user", ["<script>alert(1)</script>"])
def test_the_example_escapes_what_it_shows(user: str) -> None:
    """User names are escaped in the page."""
    require_module("starlette")
    require_module("uvicorn")
    example = _example()
    site = example.make_site("http://127.0.0.1")
    with serve_asgi(example.build_app(site)) as base, _browser(base) as browser:
        page = _login(browser, user, "/connect?eg_bind=x")
        assert "<script>" not in page.text
