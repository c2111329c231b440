"""The shipped ExtMcp descriptor set is what grpcio-tools makes of the shipped .proto."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from tests.integration_support import require_module

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "src" / "elicitguard" / "gateway" / "proto" / "ext_mcp.binpb"


def test_descriptor_set_is_regenerated_identically(tmp_path: Path) -> None:
    require_module("grpc_tools")
    spec = importlib.util.spec_from_file_location(
        "generate_protos", ROOT / "scripts" / "generate_protos.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "ext_mcp.binpb"
    module.generate(out)
    assert out.read_bytes() == SHIPPED.read_bytes(), (
        "run `python scripts/generate_protos.py` after editing ext_mcp.proto"
    )


def test_contract_matches_agentgateway() -> None:
    """Package, service, messages, field names and numbers of the upstream contract."""
    pytest.importorskip("google.protobuf")
    from elicitguard.gateway import ext_mcp_proto as wire

    def fields(message: object) -> dict[str, int]:
        descriptor = message.DESCRIPTOR  # type: ignore[attr-defined]
        return {f.name: f.number for f in descriptor.fields}

    assert wire.SERVICE == "agentgateway.dev.ext_mcp.ExtMcp"
    request = {
        "service_names": 1,
        "method": 2,
        "metadata_context": 3,
        "mcp_request": 4,
        "headers": 5,
    }
    assert fields(wire.McpRequest) == request
    assert fields(wire.McpResponse) == {
        "service_names": 1,
        "method": 2,
        "metadata_context": 3,
        "mcp_response": 4,
    }
    assert fields(wire.McpRequestResult) == {
        "pass": 1,
        "mutated": 2,
        "error": 3,
        "header_mutation": 4,
        "metadata": 5,
    }
    assert fields(wire.McpResponseResult) == {"pass": 1, "mutated": 2, "error": 3}
    assert fields(wire.AuthorizationError) == {"code": 1, "reason": 2, "mcp_error": 3}
    codes = wire.AuthorizationError.DESCRIPTOR.enum_types_by_name["Code"].values_by_name
    assert {name: value.number for name, value in codes.items()} == {
        "UNKNOWN": 0,
        "PERMISSION_DENIED": 1,
        "RESOURCE_EXHAUSTED": 2,
        "INVALID": 3,
    }
