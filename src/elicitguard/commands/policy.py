"""``elicitguard policy validate|show|schema``: check, inspect and describe policy files.

``schema`` writes the JSON Schemas of the policy, rule and case files (schema/ in the
checkout; a wheel ships them too). Each has ``$schema`` and ``$id``, so editors validate
and complete a file that starts with
``# yaml-language-server: $schema=schema/policy.schema.json`` (the path to the schema).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from elicitguard.commands._terminal import report_generated, verbosity

__all__ = ["JSON_SCHEMA_DIALECT", "register", "schema_documents", "schema_id"]

EXIT_OK = 0
EXIT_STALE = 1
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def register(subparsers: Any) -> Any:
    """Add ``policy`` and its subcommands; return its subparsers for modules that add more."""
    policy = subparsers.add_parser(
        "policy", help="validate, show and describe policies", description=__doc__
    )
    policy_sub = policy.add_subparsers(dest="policy_command", required=True, metavar="COMMAND")
    pv = policy_sub.add_parser("validate", help="load a policy and report what is wrong")
    pv.add_argument("file")
    pv.add_argument("--env", choices=("dev", "test", "prod"))
    pv.set_defaults(handler=_validate)
    ps = policy_sub.add_parser("show", help="show the resolved policy")
    ps.add_argument("file", nargs="?", default="builtin:default")
    ps.add_argument("--env", choices=("dev", "test", "prod"))
    ps.set_defaults(handler=_show)
    psc = policy_sub.add_parser("schema", help="write the JSON Schemas of rule and policy files")
    psc.add_argument("--output", type=Path, default=Path("schema"))
    psc.add_argument("--check", action="store_true", help="fail when a schema is stale")
    psc.set_defaults(handler=_schema)
    return policy_sub


def _validate(args: argparse.Namespace) -> int:
    from elicitguard.engine.policy import load_policy

    policy = load_policy(args.file, env=args.env)
    if verbosity(args) >= 0:
        print(
            f"ok: {policy.name} (revision {policy.revision}, {len(policy.rules)} rules, env {policy.environment})"
        )
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from elicitguard.engine.policy import load_policy

    policy = load_policy(args.file, env=args.env)
    print(yaml.safe_dump(_policy_view(policy), sort_keys=False, allow_unicode=True), end="")
    return EXIT_OK


def _policy_view(policy: Any) -> dict[str, Any]:
    return {
        "name": policy.name,
        "revision": policy.revision,
        "environment": policy.environment,
        "mode": policy.mode,
        "on_error": policy.on_error,
        "on_block": {"client": policy.on_block_client, "push_error_code": policy.push_error_code},
        "limits": {k: getattr(policy.limits, k) for k in policy.limits.__dataclass_fields__},
        "lists": {k: list(v) for k, v in policy.lists.items()},
        "exceptions": [
            {
                "rules": e.spec.rules,
                "where": e.spec.where.model_dump(exclude_none=True),
                "reason": e.spec.reason,
                "expires": str(e.spec.expires) if e.spec.expires else None,
            }
            for e in policy.exceptions
        ],
        "rules": {
            code: {
                "severity": rule.severity.value,
                "actions": {
                    side.value: (a.value if a else "off") for side, a in rule.actions.items()
                },
                **({"params": rule.params} if rule.params else {}),
            }
            for code, rule in policy.rules.items()
        },
        "sources": [layer.file for layer in policy.layers],
    }


def schema_id(name: str) -> str:
    """The ``$id`` of a schema file: a stable name, not a place to fetch it from."""
    return f"urn:elicitguard:schema:{name.removesuffix('.schema.json')}"


def schema_documents() -> dict[str, dict[str, Any]]:
    """The JSON Schemas of the file formats, generated from the models."""
    from pydantic import BaseModel

    from elicitguard.engine.models import CaseFile, PolicySpec, RuleSpec

    models: dict[str, type[BaseModel]] = {
        "policy.schema.json": PolicySpec,
        "rule.schema.json": RuleSpec,
        "cases.schema.json": CaseFile,
    }
    return {
        name: {
            "$schema": JSON_SCHEMA_DIALECT,
            "$id": schema_id(name),
            **model.model_json_schema(by_alias=True),
        }
        for name, model in models.items()
    }


def _schema(args: argparse.Namespace) -> int:
    folder: Path = args.output
    stale: list[Path] = []
    for name, document in schema_documents().items():
        path = folder / name
        text = json.dumps(document, indent=2, sort_keys=True) + "\n"
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            stale.append(path)
            if not args.check:
                folder.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    return report_generated(args, stale, "elicitguard policy schema")
