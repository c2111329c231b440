"""The deployment configs under examples/gateway and deploy/ are real configs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.integration_support import require_module

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "gateway"


@pytest.mark.parametrize("name", ["envoy.yaml", "envoy-jwt.yaml"])
def test_envoy_bootstrap_parses_with_the_xds_protos(name: str) -> None:
    """Every field name is real: ParseDict refuses unknown fields and unknown @types."""
    require_module("envoy.config.bootstrap.v3.bootstrap_pb2")
    # Register the typed_config messages the file names.
    import envoy.extensions.filters.http.ext_proc.v3.ext_proc_pb2
    import envoy.extensions.filters.http.jwt_authn.v3.config_pb2
    import envoy.extensions.filters.http.router.v3.router_pb2
    import envoy.extensions.filters.network.http_connection_manager.v3.http_connection_manager_pb2
    import envoy.extensions.transport_sockets.tls.v3.tls_pb2
    import envoy.extensions.upstreams.http.v3.http_protocol_options_pb2  # noqa: F401
    from envoy.config.bootstrap.v3.bootstrap_pb2 import Bootstrap
    from envoy.extensions.filters.http.ext_proc.v3.ext_proc_pb2 import ExternalProcessor
    from google.protobuf import json_format

    document = yaml.safe_load((EXAMPLES / name).read_text())
    bootstrap = json_format.ParseDict(document, Bootstrap())
    manager_any = bootstrap.static_resources.listeners[0].filter_chains[0].filters[0]
    from envoy.extensions.filters.network.http_connection_manager.v3.http_connection_manager_pb2 import (
        HttpConnectionManager,
    )

    manager = HttpConnectionManager()
    manager_any.typed_config.Unpack(manager)
    filters = {f.name: f for f in manager.http_filters}
    processor = ExternalProcessor()
    filters["envoy.filters.http.ext_proc"].typed_config.Unpack(processor)
    assert processor.grpc_service.envoy_grpc.cluster_name == "elicitguard"
    assert not processor.failure_mode_allow  # fail closed
    assert processor.allow_mode_override  # JSON buffered, SSE streamed
    assert processor.processing_mode.request_body_mode == processor.processing_mode.BUFFERED
    assert list(filters)[-1] == "envoy.filters.http.router"
    clusters = {c.name for c in bootstrap.static_resources.clusters}
    assert {"elicitguard", "mcp_server"} <= clusters


def test_envoy_bootstrap_with_a_wrong_field_is_refused() -> None:
    require_module("envoy.config.bootstrap.v3.bootstrap_pb2")
    from envoy.config.bootstrap.v3.bootstrap_pb2 import Bootstrap
    from google.protobuf import json_format

    document = yaml.safe_load((EXAMPLES / "envoy.yaml").read_text())
    document["static_resources"]["clusters"][0]["conect_timeout"] = "1s"
    with pytest.raises(json_format.ParseError):
        json_format.ParseDict(document, Bootstrap())


def test_agentgateway_config_names_the_ext_mcp_service() -> None:
    document = yaml.safe_load((EXAMPLES / "agentgateway.yaml").read_text())
    processors = document["mcp"]["policies"]["mcpGuardrails"]["processors"]
    assert processors[0]["kind"] == "remote"
    assert processors[0]["failureMode"] == "failClosed"
    assert processors[0]["host"].endswith(":9003")
    assert set(processors[0]["methods"].values()) <= {"request", "response", "full", "off"}
    assert {"iss", "sub"} <= set(processors[0]["metadata"])


def _manifests() -> list[dict[str, Any]]:
    text = (ROOT / "deploy" / "kubernetes" / "elicitguard.yaml").read_text()
    return [d for d in yaml.safe_load_all(text) if d]


def test_kubernetes_manifests_two_replicas_sharing_redis() -> None:
    documents = _manifests()
    for document in documents:
        assert {"apiVersion", "kind", "metadata"} <= set(document)
    deployments = {d["metadata"]["name"]: d for d in documents if d["kind"] == "Deployment"}
    services = {d["metadata"]["name"]: d for d in documents if d["kind"] == "Service"}
    for name in ("elicitguard-ext-proc", "elicitguard-ext-mcp"):
        deployment = deployments[name]
        assert deployment["spec"]["replicas"] == 2
        selector = deployment["spec"]["selector"]["matchLabels"]
        assert deployment["spec"]["template"]["metadata"]["labels"] == selector
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        args = container["args"]
        assert args[:2] == ["serve", name.removeprefix("elicitguard-")]
        assert "--state-store=redis://elicitguard-redis:6379/0" in args
        assert "--replicas=2" in args
        assert any(a.startswith("--keys=") for a in args)
        port = container["ports"][0]
        service = services[name]
        assert service["spec"]["selector"] == selector
        assert service["spec"]["ports"][0]["targetPort"] == port["name"]
        listen = next(a for a in args if a.startswith("--listen="))
        assert listen.endswith(f":{port['containerPort']}")
    assert "elicitguard-redis" in deployments
    assert "elicitguard-redis" in services


def test_kubernetes_policy_loads(tmp_path: Path) -> None:
    from elicitguard.engine.policy import load_policy

    config = next(d for d in _manifests() if d["kind"] == "ConfigMap")
    path = tmp_path / "policy.yaml"
    path.write_text(config["data"]["policy.yaml"])
    assert load_policy(str(path)).name == "gateway"
