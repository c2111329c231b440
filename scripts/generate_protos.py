"""Compile elicitguard's own .proto files into the descriptor set the package ships.

``python scripts/generate_protos.py [OUT_FILE]`` runs grpcio-tools' protoc on
``src/elicitguard/gateway/proto/*.proto`` and writes one ``FileDescriptorSet``
(``ext_mcp.binpb``, default next to the .proto). At run time the message classes and the
gRPC method handlers are made from it (:mod:`elicitguard.gateway.ext_mcp_proto`), which
works with any protobuf runtime: generated ``_pb2`` modules refuse a runtime older than
the compiler that wrote them. tests/gateway/test_protos.py regenerates it and compares.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROTO_DIR = ROOT / "src" / "elicitguard" / "gateway" / "proto"
OUT = PROTO_DIR / "ext_mcp.binpb"


def generate(out: Path) -> None:
    from grpc_tools import protoc

    include = str(resources.files("grpc_tools") / "_proto")
    protos = sorted(str(p.name) for p in PROTO_DIR.glob("*.proto"))
    code = protoc.main(
        [
            "grpc_tools.protoc",
            f"-I{PROTO_DIR}",
            f"-I{include}",
            f"--descriptor_set_out={out}",
            *protos,
        ]
    )
    if code != 0:
        raise SystemExit("protoc failed")


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
