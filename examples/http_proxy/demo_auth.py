"""A stand-in for your authorization server: a signing key, its JWKS, and a token.

In production the JWKS comes from your authorization server (`jwks_url:` in the policy) and
clients get tokens from it through OAuth. For the example this writes `jwks.json` and
`demo-signing-key.pem` into FOLDER (default: this example's folder) and prints a token for
user `alice` with the policy's issuer and audience, valid for an hour.

    python examples/http_proxy/demo_auth.py [FOLDER]          # prints the token
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

ISSUER = "https://auth.example.com"
AUDIENCE = "https://mcp.example.com/mcp"
KID = "demo-1"


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    pem = folder / "demo-signing-key.pem"
    if pem.exists():
        key = serialization.load_pem_private_key(pem.read_bytes(), password=None)
    else:
        key = ec.generate_private_key(ec.SECP256R1())
        pem.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        pem.chmod(0o600)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    public.update(kid=KID, use="sig", alg="ES256")
    (folder / "jwks.json").write_text(json.dumps({"keys": [public]}, indent=2) + "\n")
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "iat": now, "exp": now + 3600}
    print(jwt.encode(claims, key, algorithm="ES256", headers={"kid": KID}))


if __name__ == "__main__":
    main()
