"""Bearer token verification: a good token gives a principal; each known attack is refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import ssl
import time
from pathlib import Path
from typing import Any

import pytest
from tests.identity.jwt_support import (
    AUDIENCE,
    ISSUER,
    Signer,
    jwks,
    self_signed,
    serve_json,
    write_jwks,
)

from elicitguard.base.keys import KeyRing
from elicitguard.errors import KeyConfigError, TokenError
from elicitguard.identity.tokens import (
    TokenConfig,
    TokenVerifier,
    bearer_token,
    token_fingerprint,
    unverified_claims,
)

RSA = Signer("rsa-1")
EC = Signer("ec-1", "EC")
ATTACKER = Signer("rsa-1")  # same kid, another key


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _forge(header: dict[str, Any], claims: dict[str, Any], key: bytes | None) -> str:
    """A token built by hand (pyjwt refuses to make most of these)."""
    head = _b64(json.dumps(header).encode())
    body = _b64(json.dumps(claims).encode())
    signing = f"{head}.{body}".encode()
    sig = _b64(hmac.new(key, signing, hashlib.sha256).digest()) if key is not None else ""
    return f"{head}.{body}.{sig}"


def _claims(**extra: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {"iss": ISSUER, "sub": "alice", "aud": AUDIENCE, "exp": now + 300}
    claims.update(extra)
    return claims


@pytest.fixture
def verifier(tmp_path: Path) -> TokenVerifier:
    """A verifier over a JWKS file with an RSA and an EC key."""
    path = write_jwks(tmp_path / "jwks.json", RSA, EC)
    config = TokenConfig(audience=AUDIENCE, issuers=(ISSUER,), jwks_file=str(path), leeway_s=5)
    return TokenVerifier(config, KeyRing.random())


def _refused(verifier: TokenVerifier, token: str | None) -> TokenError:
    with pytest.raises(TokenError) as info:
        verifier.verify(token)
    message = str(info.value)
    if token:
        assert token not in message
        assert token[-20:] not in message
    return info.value


def test_a_valid_token_gives_a_principal(verifier: TokenVerifier) -> None:
    """iss, sub, aud and scopes land in the principal; the token itself does not."""
    token = RSA.token(aud=[AUDIENCE, "https://other.example"], scope="mcp:tools mcp:read")
    principal = verifier.verify(token)
    assert (principal.issuer, principal.subject) == (ISSUER, "alice")
    assert AUDIENCE in principal.audience
    assert principal.scopes == ("mcp:tools", "mcp:read")
    assert principal.token_fingerprint == token_fingerprint(verifier.keys, token)
    assert token not in repr(principal)
    assert verifier.verify(EC.token()).subject == "alice"


def test_alg_none_is_refused(verifier: TokenVerifier) -> None:
    """An unsigned token never passes."""
    for alg in ("none", "None", "NONE"):
        token = _forge({"alg": alg, "kid": "rsa-1"}, _claims(), None)
        assert _refused(verifier, token).reason == "disallowed_alg"


def test_hs256_signed_with_the_rsa_public_key_is_refused(verifier: TokenVerifier) -> None:
    """The key-confusion attack: HMAC keyed with the public key PEM."""
    for key in (RSA.public_pem(), json.dumps(RSA.jwk).encode()):
        token = _forge({"alg": "HS256", "kid": "rsa-1"}, _claims(), key)
        assert _refused(verifier, token).reason == "disallowed_alg"


def test_hmac_algorithms_cannot_be_allowed() -> None:
    """The allowlist refuses none and HMAC at configuration time."""
    for algorithms in (("HS256",), ("RS256", "none"), ()):
        with pytest.raises(KeyConfigError):
            TokenConfig(audience=AUDIENCE, issuers=(ISSUER,), jwks_file="x", algorithms=algorithms)


def test_expired_and_not_yet_valid_tokens_are_refused(verifier: TokenVerifier) -> None:
    """exp and nbf are enforced, with the configured leeway."""
    now = int(time.time())
    assert _refused(verifier, RSA.token(exp=now - 60)).reason == "expired"
    assert _refused(verifier, RSA.token(nbf=now + 120)).reason == "not_yet_valid"
    assert verifier.verify(RSA.token(exp=now - 2)).subject == "alice"  # within 5 s leeway


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"iss": "https://evil.example"}, "wrong_issuer"),
        ({"aud": "https://other.example/mcp"}, "wrong_audience"),
        ({"aud": ["https://other.example/mcp"]}, "wrong_audience"),
        ({"aud": "https://mcp.example.com"}, "wrong_audience"),  # not the canonical URI
        ({"sub": None}, "missing_claim"),
        ({"exp": None}, "missing_claim"),
        ({"aud": None}, "missing_claim"),
        ({"sub": ""}, "missing_claim"),
    ],
)
def test_claim_checks(verifier: TokenVerifier, claims: dict[str, Any], reason: str) -> None:
    """Issuer, audience (RFC 8707) and required claims."""
    error = _refused(verifier, RSA.token(**claims))
    assert reason == error.reason
    if reason in ("wrong_issuer", "wrong_audience"):
        assert error.code == "EG602"


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ({"kid": "no-such-key"}, "unknown_key"),
        ({"kid": "../../../../etc/passwd"}, "unknown_key"),
        ({"kid": "rsa-1' OR '1'='1"}, "unknown_key"),
        ({"kid": 7}, "malformed"),  # pyjwt refuses to read such a header
        ({"kid": ""}, "bad_kid"),
        ({"kid": "k" * 500}, "bad_kid"),
        ({"kid": "ec-1"}, "unknown_key"),  # an RS256 token naming the EC key
    ],
)
def test_kid_tricks(verifier: TokenVerifier, header: dict[str, Any], reason: str) -> None:
    """kid is matched exactly against the JWKS and must fit the algorithm."""
    assert reason == _refused(verifier, RSA.token(headers=header)).reason


def test_missing_kid_with_several_keys_of_the_type(tmp_path: Path) -> None:
    """No kid is fine with one candidate key and refused when several could match."""
    one = TokenVerifier(
        TokenConfig(AUDIENCE, (ISSUER,), jwks_file=str(write_jwks(tmp_path / "a.json", RSA, EC)))
    )
    token = RSA.token(headers={"kid": None})
    assert one.verify(token).subject == "alice"
    other = Signer("rsa-2")
    two = TokenVerifier(
        TokenConfig(AUDIENCE, (ISSUER,), jwks_file=str(write_jwks(tmp_path / "b.json", RSA, other)))
    )
    assert _refused(two, token).reason == "bad_kid"


def test_jku_x5u_and_jwk_headers_are_ignored(verifier: TokenVerifier) -> None:
    """Keys named or embedded in the token are never fetched nor trusted."""
    with serve_json(jwks(ATTACKER)) as attacker:
        for header in (
            {"jku": attacker.url},
            {"x5u": attacker.url},
            {"jwk": ATTACKER.jwk},
            {"x5c": ["MIIBszCCAVmgAwIBAgIU"]},
        ):
            token = ATTACKER.token(headers=header)
            assert _refused(verifier, token).reason == "bad_signature"
        assert attacker.hits == 0


def test_oversized_and_malformed_tokens(verifier: TokenVerifier) -> None:
    """Size is checked before anything is decoded; junk is refused without a crash."""
    huge = RSA.token(pad="x" * 20_000)
    assert _refused(verifier, huge).reason == "oversized"
    for junk in ("abc", "a.b.c", "a.b.c.d", "é.é.é", "eyJhbGciOiJSUzI1NiJ9.!!!.x", "tok en"):
        _refused(verifier, junk)
    assert _refused(verifier, None).reason == "missing"
    assert _refused(verifier, None).error is None


def test_a_rotated_jwks_file_is_picked_up(tmp_path: Path) -> None:
    """A token with a new kid works once the operator adds the key to the file."""
    path = write_jwks(tmp_path / "jwks.json", RSA)
    verifier = TokenVerifier(TokenConfig(AUDIENCE, (ISSUER,), jwks_file=str(path)))
    new = Signer("rsa-2026")
    assert _refused(verifier, new.token()).reason == "unknown_key"
    write_jwks(path, new, RSA)
    os.utime(path, (time.time() + 5, time.time() + 5))
    assert verifier.verify(new.token()).subject == "alice"


def test_jwks_from_an_https_url_is_cached(tmp_path: Path) -> None:
    """The operator's HTTPS JWKS is fetched once and reused; http is refused."""
    cert, key = self_signed(tmp_path)
    context = ssl.create_default_context(cafile=str(cert))
    with serve_json(jwks(RSA), tls=(cert, key)) as server:
        config = TokenConfig(AUDIENCE, (ISSUER,), jwks_url=server.url, ssl_context=context)
        verifier = TokenVerifier(config)
        for _ in range(3):
            assert verifier.verify(RSA.token()).subject == "alice"
        assert server.hits == 1
        assert _refused(verifier, Signer("other").token()).reason == "unknown_key"
        assert server.hits <= 2  # one refresh at most for an unknown kid
    with pytest.raises(KeyConfigError, match="https"):
        TokenConfig(AUDIENCE, (ISSUER,), jwks_url="http://127.0.0.1/jwks.json")


def test_untrusted_https_certificate_fails_closed(tmp_path: Path) -> None:
    """A JWKS server whose certificate is not trusted yields no keys and no principal."""
    cert, key = self_signed(tmp_path)
    with serve_json(jwks(RSA), tls=(cert, key)) as server:
        verifier = TokenVerifier(TokenConfig(AUDIENCE, (ISSUER,), jwks_url=server.url))
        assert _refused(verifier, RSA.token()).reason == "jwks_unavailable"


def test_introspection_hook_for_opaque_tokens() -> None:
    """Opaque tokens go to the hook; its answer is checked like a JWT's claims."""
    now = time.time()
    answers: dict[str, dict[str, Any]] = {
        "opaque-good": {
            "active": True,
            "sub": "bob",
            "iss": ISSUER,
            "aud": AUDIENCE,
            "exp": now + 60,
        },
        "opaque-inactive": {"active": False},
        "opaque-other-aud": {
            "active": True,
            "sub": "bob",
            "iss": ISSUER,
            "aud": "x",
            "exp": now + 60,
        },
        "opaque-expired": {
            "active": True,
            "sub": "bob",
            "iss": ISSUER,
            "aud": AUDIENCE,
            "exp": now - 600,
        },
        "opaque-no-sub": {"active": True, "iss": ISSUER, "aud": [AUDIENCE], "exp": now + 60},
    }
    config = TokenConfig(AUDIENCE, (ISSUER,), introspect=answers.get)
    verifier = TokenVerifier(config)
    assert verifier.verify("opaque-good").subject == "bob"
    assert _refused(verifier, "opaque-inactive").reason == "inactive"
    assert _refused(verifier, "opaque-unknown").reason == "inactive"
    assert _refused(verifier, "opaque-other-aud").reason == "wrong_audience"
    assert _refused(verifier, "opaque-expired").reason == "expired"
    assert _refused(verifier, "opaque-no-sub").reason == "missing_claim"


def test_required_scopes() -> None:
    """A token without a required scope is insufficient_scope (403 in HTTP)."""
    answer = {"active": True, "iss": ISSUER, "sub": "a", "aud": AUDIENCE, "scope": "read"}
    config = TokenConfig(
        AUDIENCE,
        (ISSUER,),
        introspect=lambda t: {**answer, "exp": time.time() + 60},
        required_scopes=("write",),
    )
    error = _refused(TokenVerifier(config), "opaque")
    assert (error.reason, error.error) == ("insufficient_scope", "insufficient_scope")


def test_bearer_token_and_unverified_claims() -> None:
    """Header parsing is case-insensitive; unverified claims are for detection only."""
    assert bearer_token({"authorization": "Bearer abc"}) == "abc"
    assert bearer_token({"Authorization": "bearer  abc "}) == "abc"
    assert bearer_token({"authorization": "Basic dXNlcjpwYXNz"}) is None
    assert bearer_token({}) is None
    claims = unverified_claims(RSA.token())
    assert claims is not None
    assert claims["sub"] == "alice"
    assert unverified_claims("not-a-jwt") is None


def test_a_failed_jwks_refresh_keeps_the_cached_keys(tmp_path: Path) -> None:
    """When the JWKS URL goes away, keys already fetched keep verifying."""
    cert, key = self_signed(tmp_path)
    context = ssl.create_default_context(cafile=str(cert))
    with serve_json(jwks(RSA), tls=(cert, key)) as server:
        config = TokenConfig(
            AUDIENCE, (ISSUER,), jwks_url=server.url, ssl_context=context, jwks_cache_s=0
        )
        verifier = TokenVerifier(config)
        assert verifier.verify(RSA.token()).subject == "alice"
    assert verifier.verify(RSA.token()).subject == "alice"
