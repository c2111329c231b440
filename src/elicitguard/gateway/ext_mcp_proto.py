"""agentgateway's ExtMcp messages and gRPC method paths, made from the shipped descriptor set.

``proto/ext_mcp.proto`` is compiled with grpcio-tools into ``proto/ext_mcp.binpb`` (see
scripts/generate_protos.py); the message classes are built from it here with protobuf's
message factory, so no generated ``_pb2`` module ties the package to one protobuf runtime.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf import struct_pb2 as _struct_pb2  # registers struct.proto in the pool

__all__ = [
    "CHECK_REQUEST",
    "CHECK_RESPONSE",
    "PACKAGE",
    "SERVICE",
    "AuthorizationError",
    "HeaderMutation",
    "McpHeader",
    "McpRequest",
    "McpRequestResult",
    "McpResponse",
    "McpResponseResult",
    "Pass",
]

PACKAGE = "agentgateway.dev.ext_mcp"
SERVICE = f"{PACKAGE}.ExtMcp"
CHECK_REQUEST = f"/{SERVICE}/CheckRequest"
CHECK_RESPONSE = f"/{SERVICE}/CheckResponse"
_ = _struct_pb2


def _load() -> dict[str, Any]:
    blob = (resources.files("elicitguard.gateway") / "proto" / "ext_mcp.binpb").read_bytes()
    files = descriptor_pb2.FileDescriptorSet.FromString(blob)
    pool = descriptor_pool.Default()
    for proto in files.file:
        if proto.name == "google/protobuf/struct.proto":
            continue
        try:
            pool.FindFileByName(proto.name)
        except KeyError:
            pool.Add(proto)
    names = [
        "McpRequest",
        "McpResponse",
        "McpRequestResult",
        "McpResponseResult",
        "Pass",
        "AuthorizationError",
        "McpHeader",
        "HeaderMutation",
    ]
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))
        for name in names
    }


_CLASSES = _load()
McpRequest: Any = _CLASSES["McpRequest"]
McpResponse: Any = _CLASSES["McpResponse"]
McpRequestResult: Any = _CLASSES["McpRequestResult"]
McpResponseResult: Any = _CLASSES["McpResponseResult"]
Pass: Any = _CLASSES["Pass"]
AuthorizationError: Any = _CLASSES["AuthorizationError"]
McpHeader: Any = _CLASSES["McpHeader"]
HeaderMutation: Any = _CLASSES["HeaderMutation"]
