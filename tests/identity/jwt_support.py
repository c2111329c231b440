"""Test support: signing keys, JWKS documents, tokens, and an HTTPS server on loopback."""

from __future__ import annotations

import datetime as dt
import http.server
import ipaddress
import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

ISSUER = "https://auth.example.com"
AUDIENCE = "https://mcp.example.com/mcp"


class Signer:
    """An RSA or EC key with a kid, its public JWK, and a token factory."""

    def __init__(self, kid: str, kind: str = "RSA") -> None:
        self.kid = kid
        if kind == "RSA":
            self.private: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            self.alg = "RS256"
            self.jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.private.public_key()))
        else:
            self.private = ec.generate_private_key(ec.SECP256R1())
            self.alg = "ES256"
            self.jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.private.public_key()))
        self.jwk.update(kid=kid, use="sig", alg=self.alg)

    def public_pem(self) -> bytes:
        return bytes(
            self.private.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    def token(self, headers: dict[str, Any] | None = None, **claims: Any) -> str:
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": ISSUER,
            "sub": "alice",
            "aud": AUDIENCE,
            "exp": now + 300,
            "iat": now,
            "scope": "mcp:tools",
        }
        for key, value in claims.items():
            if value is None:
                body.pop(key, None)
            else:
                body[key] = value
        head: dict[str, Any] = {"kid": self.kid}
        head.update(headers or {})
        head = {k: v for k, v in head.items() if v is not None}
        if not isinstance(head.get("kid", ""), str):
            return self.forge(head, body)
        return jwt.encode(body, self.private, algorithm=self.alg, headers=head)

    def forge(self, header: dict[str, Any], body: dict[str, Any]) -> str:
        """Sign a header pyjwt would refuse to write (a kid that is not a string)."""
        from jwt.utils import base64url_encode

        head = dict(header, alg=self.alg, typ="JWT")
        signing = (
            base64url_encode(json.dumps(head).encode())
            + b"."
            + base64url_encode(json.dumps(body).encode())
        )
        algorithm = jwt.get_algorithm_by_name(self.alg)
        signature = algorithm.sign(signing, self.private)
        return (signing + b"." + base64url_encode(signature)).decode()


def jwks(*signers: Signer) -> dict[str, Any]:
    """A JWKS document of the signers' public keys."""
    return {"keys": [s.jwk for s in signers]}


def write_jwks(path: Path, *signers: Signer) -> Path:
    path.write_text(json.dumps(jwks(*signers)))
    return path


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = folder / "cert.pem"
    key_path = folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


class JsonServer:
    """Serves a JSON document over HTTP(S) on 127.0.0.1; counts requests."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.hits = 0
        self.url = ""


@contextmanager
def serve_json(
    document: dict[str, Any], *, tls: tuple[Path, Path] | None = None
) -> Iterator[JsonServer]:
    """Run a JSON server in a thread for the duration of the block."""
    state = JsonServer(document)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.hits += 1
            body = json.dumps(state.document).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    scheme = "http"
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(tls[0]), str(tls[1]))
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    state.url = f"{scheme}://127.0.0.1:{server.server_address[1]}/jwks.json"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
