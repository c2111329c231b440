"""RFC 9728 challenges and metadata, served by RequireAuth in front of a real uvicorn app."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.identity.asgi_server import serve_asgi
from tests.identity.jwt_support import AUDIENCE, ISSUER, Signer, write_jwks
from tests.integration_support import require_module

from elicitguard.audit.records import AuditLog
from elicitguard.audit.sink import AuditSink
from elicitguard.base.keys import KeyRing
from elicitguard.errors import KeyConfigError
from elicitguard.identity.http_auth import (
    BearerAuth,
    RequireAuth,
    ResourceMetadata,
    principal_from_scope,
    www_authenticate,
)
from elicitguard.identity.principal import current_principal
from elicitguard.identity.tokens import TokenConfig, TokenVerifier

SIGNER = Signer("k1")
METADATA_URL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"


async def whoami(scope: Any, receive: Any, send: Any) -> None:
    """The protected app: says who the middleware let in, from the scope and the context."""
    principal = principal_from_scope(scope)
    current = current_principal.get()
    body = json.dumps(
        {
            "sub": principal.subject if principal else None,
            "same": current is principal,
            "path": scope["path"],
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _auth(
    tmp_path: Path, *, require_auth: bool = True, out: io.StringIO | None = None
) -> BearerAuth:
    path = write_jwks(tmp_path / "jwks.json", SIGNER)
    keys = KeyRing.random()
    verifier = TokenVerifier(TokenConfig(AUDIENCE, (ISSUER,), jwks_file=str(path)), keys)
    metadata = ResourceMetadata(AUDIENCE, (ISSUER,), scopes_supported=("mcp:tools",))
    audit = AuditLog(AuditSink(out), keys) if out is not None else None
    return BearerAuth(verifier, metadata, require_auth=require_auth, audit=audit, server="demo")


@pytest.fixture
def base(tmp_path: Path) -> Any:
    """The protected app behind RequireAuth, on a real loopback server."""
    require_module("uvicorn")
    out = io.StringIO()
    auth = _auth(tmp_path, out=out)
    with serve_asgi(RequireAuth(whoami, auth)) as url:
        yield url, out


def test_missing_token_gets_a_401_challenge(base: Any) -> None:
    """No token: 401 with resource_metadata, and no error attribute (RFC 6750 3.1)."""
    url, _ = base
    response = httpx.post(url + "/mcp", json={})
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert f'Bearer resource_metadata="{METADATA_URL}"' == challenge


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"exp": 1}, "expired"),
        ({"aud": "https://other.example/mcp"}, "wrong_audience"),
        ({"iss": "https://evil.example"}, "wrong_issuer"),
    ],
)
def test_bad_tokens_get_invalid_token(base: Any, claims: dict[str, Any], reason: str) -> None:
    """Expired or wrong-audience tokens: 401 invalid_token, audited without the token."""
    url, out = base
    token = SIGNER.token(**claims)
    response = httpx.post(url + "/mcp", json={}, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert "resource_metadata=" in response.headers["www-authenticate"]
    event = json.loads(out.getvalue().strip().splitlines()[-1])
    assert ("elicitguard.auth", reason) == (event["event"], event["reason"])
    assert token not in out.getvalue()
    if reason != "expired":
        assert event["code"] == "EG602"


def test_valid_token_reaches_the_app_with_its_principal(base: Any) -> None:
    """The verified principal is in the scope and is the current principal."""
    url, _ = base
    response = httpx.post(
        url + "/mcp", json={}, headers={"Authorization": f"Bearer {SIGNER.token()}"}
    )
    assert response.status_code == 200
    assert response.json() == {"sub": "alice", "same": True, "path": "/mcp"}


def test_metadata_is_served_at_both_well_known_paths(base: Any) -> None:
    """RFC 9728 section 3.1 (path appended) and the bare well-known path, without a token."""
    url, _ = base
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ):
        response = httpx.get(url + path)
        assert response.status_code == 200
        document = response.json()
        assert document["resource"] == AUDIENCE
        assert document["authorization_servers"] == [ISSUER]
        assert document["bearer_methods_supported"] == ["header"]


def test_token_in_the_query_string_is_refused(base: Any) -> None:
    """AU-07: a token in the URL gets 400 invalid_request, even a valid one (EG604)."""
    url, out = base
    response = httpx.post(url + "/mcp", params={"access_token": SIGNER.token()}, json={})
    assert response.status_code == 400
    assert 'error="invalid_request"' in response.headers["www-authenticate"]
    assert json.loads(out.getvalue().strip().splitlines()[-1])["code"] == "EG604"


def test_two_authorization_headers_are_refused(base: Any) -> None:
    """Two tokens in one request are never guessed between."""
    url, _ = base
    token = SIGNER.token()
    response = httpx.post(
        url + "/mcp",
        json={},
        headers=[("Authorization", f"Bearer {token}"), ("Authorization", "Bearer other")],
    )
    assert response.status_code == 400


def test_optional_auth_lets_anonymous_requests_through(tmp_path: Path) -> None:
    """Without require_auth a missing token passes anonymously; a bad one is still 401."""
    require_module("uvicorn")
    with serve_asgi(RequireAuth(whoami, _auth(tmp_path, require_auth=False))) as url:
        assert httpx.post(url + "/mcp", json={}).json() == {
            "sub": None,
            "same": True,
            "path": "/mcp",
        }
        bad = httpx.post(url + "/mcp", json={}, headers={"Authorization": "Bearer x.y.z"})
        assert bad.status_code == 401


def test_metadata_passthrough_when_the_upstream_serves_its_own(tmp_path: Path) -> None:
    """serve_metadata off: the app answers the well-known path itself."""
    require_module("uvicorn")
    auth = _auth(tmp_path)
    auth.serve_metadata = False
    with serve_asgi(RequireAuth(whoami, auth)) as url:
        response = httpx.get(url + "/.well-known/oauth-protected-resource")
        assert response.json() == {
            "sub": None,
            "same": True,
            "path": "/.well-known/oauth-protected-resource",
        }


def test_www_authenticate_quoting() -> None:
    """Quotes and control characters never break out of a parameter."""
    value = www_authenticate('https://x/"evil', error="invalid_token", description='a"b\nc')
    assert value == (
        'Bearer resource_metadata="https://x/evil", error="invalid_token", error_description="abc"'
    )


def test_from_policy_needs_an_audience_and_a_verifier() -> None:
    """require_auth without audience or keys is a configuration error."""
    keys = KeyRing.random()
    assert BearerAuth.from_policy({}, keys) is None
    with pytest.raises(KeyConfigError):
        BearerAuth.from_policy({"require_auth": True}, keys)
    with pytest.raises(KeyConfigError):
        BearerAuth.from_policy({"require_auth": True, "audience": AUDIENCE}, keys)
    optional = BearerAuth.from_policy({"audience": AUDIENCE}, keys)
    assert optional is not None
    assert optional.verifier is None
    assert optional.metadata.metadata_url == METADATA_URL
