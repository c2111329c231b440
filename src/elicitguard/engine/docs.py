"""Generating ``docs/rules/<CODE>.md`` pages and their index from the rule files.

The rule file is the single source: what it does, why it matters, an example that is run
as a test, the fix, the requirements it cites (quoted from the spec notes) and its CWE.
``elicitguard rules docs --check`` fails when a committed page is stale.
"""

from __future__ import annotations

import json
from pathlib import Path

from elicitguard.engine.rules import LoadedRule
from elicitguard.protocol.requirements import REQUIREMENTS

__all__ = [
    "README_TABLE_END",
    "README_TABLE_START",
    "render_index",
    "render_readme_table",
    "render_rule_page",
    "update_readme",
    "write_docs",
]


def _example(rule: LoadedRule) -> str:
    example = rule.spec.docs.example
    lines: list[str] = []
    context: list[str] = []
    if example.protocol_version:
        context.append(f"protocol version {example.protocol_version}")
    if example.client_elicitation is not None:
        declared = (
            "no elicitation capability"
            if example.client_elicitation == "none"
            else f"elicitation capability `{json.dumps(example.client_elicitation)}`"
        )
        context.append(f"the client declared {declared}")
    if example.side.value != "capture":
        context.append(f"the {example.side.value} side")
    if example.transport is not None:
        context.append(f"{example.transport} transport")
    if example.principal is not None:
        context.append(f"the verified principal `{example.principal.sub}`")
    if example.in_process is None:
        context.append(f"direction {example.direction.value}")
    lines.append(f"With {', '.join(context)}:")
    lines.append("")
    if example.headers:
        lines.append("HTTP headers:")
        lines.append("")
        lines.append("```json")
        lines.append(json.dumps(example.headers, indent=2, ensure_ascii=False))
        lines.append("```")
        lines.append("")
    if example.in_process is not None:
        lines.append(f"an in-process `{example.in_process.kind}` item:")
        lines.append("")
        lines.append("```json")
        lines.append(json.dumps(example.in_process.data, indent=2, ensure_ascii=False))
        lines.append("```")
        return "\n".join(lines)
    for setup in example.setup:
        lines.append(f"after ({setup.direction.value}):")
        lines.append("")
        lines.append("```json")
        lines.append(json.dumps(setup.message, indent=2, ensure_ascii=False))
        lines.append("```")
        lines.append("")
    lines.append("```json")
    if example.message is not None:
        lines.append(json.dumps(example.message, indent=2, ensure_ascii=False))
    else:
        lines.append(example.raw or "")
    lines.append("```")
    return "\n".join(lines)


def render_rule_page(rule: LoadedRule) -> str:
    """The Markdown page of one rule."""
    spec = rule.spec
    sides = ", ".join(f"{side.value}: {action}" for side, action in spec.actions_by_side.items())
    eras = ", ".join(spec.applies_to.eras)
    items = ", ".join(i.value for i in spec.applies_to.items) or "(emitted by the engine)"
    parts = [
        f"# {spec.code} {spec.name}",
        "",
        f"> {spec.summary}",
        "",
        "| | |",
        "| --- | --- |",
        f"| Severity | {spec.severity.value} |",
        f"| Confidence | {spec.confidence.value} |",
        f"| Default action | {spec.action}{' (' + sides + ')' if sides else ''} |",
        f"| Applies to | {items} |",
        f"| Eras | {eras} |",
        f"| Requirements | {', '.join(spec.requirements) or '-'} |",
        f"| CWE | {', '.join(spec.cwe) or '-'} |",
        "",
        "## What it does",
        "",
        spec.summary + ".",
        "",
        "## Why is this bad?",
        "",
        spec.docs.why.strip(),
        "",
        "## Example",
        "",
        _example(rule),
        "",
        "## Fix",
        "",
        spec.docs.fix.strip(),
        "",
    ]
    if spec.docs.notes:
        parts += ["## Notes", "", spec.docs.notes.strip(), ""]
    if spec.requirements:
        parts += ["## Spec requirements", ""]
        for rid in spec.requirements:
            req = REQUIREMENTS.get(rid)
            if req is None:
                parts.append(f"- **{rid}**")
            else:
                who = f" ({req.who})" if req.who else ""
                parts.append(f"- **{rid}** {req.level}{who}: {req.text}")
        parts.append("")
    parts += [
        "## Configuration",
        "",
        "```yaml",
        "rules:",
        f"  {spec.code}: {{action: {spec.action}}}   # block | redact | warn | log | off",
        "```",
        "",
    ]
    return "\n".join(parts)


#: Families in index order (the rule file's folder), with the heading and what they cover.
FAMILIES: dict[str, tuple[str, str]] = {
    "conformance": ("Protocol conformance (EG1xx)", "Elicitation as each protocol era defines it."),
    "form": ("Form mode (EG2xx)", "What a form may ask for, and what answers may carry."),
    "url": ("URL mode (EG3xx)", "Where a URL-mode elicitation may send the user."),
    "domain": ("Domains and look-alikes (EG4xx)", "Hosts a user could mistake for another."),
    "identity": ("Identity and requestState (EG5xx)", "Who is asked, and state bound to them."),
    "token": ("Tokens and egress (EG6xx)", "Credentials that must not travel."),
    "engine": ("Engine (EG9xx)", "What the engine itself reports."),
}


def _family(rule: LoadedRule) -> str:
    return rule.path.parent.name


def render_index(rules: list[LoadedRule]) -> str:
    """The index page of every rule, grouped by family (the rule file's folder)."""
    lines = [
        "# Rules",
        "",
        "Generated from the rule files by `elicitguard rules docs`; do not edit by hand.",
        "",
    ]
    families = sorted(
        {_family(r) for r in rules},
        key=lambda f: (list(FAMILIES).index(f) if f in FAMILIES else len(FAMILIES), f),
    )
    for family in families:
        title, about = FAMILIES.get(family, (family, ""))
        lines += [f"## {title}", ""]
        if about:
            lines += [about, ""]
        lines += [
            "| Code | Name | Severity | Default action | Summary |",
            "| --- | --- | --- | --- | --- |",
        ]
        for rule in sorted((r for r in rules if _family(r) == family), key=lambda r: r.spec.code):
            spec = rule.spec
            lines.append(
                f"| [{spec.code}]({spec.code}.md) | {spec.name} | {spec.severity.value} | "
                f"{spec.action} | {spec.summary} |"
            )
        lines.append("")
    return "\n".join(lines)


README_TABLE_START = "<!-- rules table: generated by scripts/gen_readme_rules.py -->"
README_TABLE_END = "<!-- end of rules table -->"


def _default_action(rule: LoadedRule) -> str:
    spec = rule.spec
    if spec.actions_by_side:
        text = ", ".join(f"{side}: {action}" for side, action in spec.actions_by_side.items())
    else:
        text = str(spec.action)
    if spec.severity.value in ("info", "low"):
        text += f" ({spec.severity.value})"
    return text


def render_readme_table(rules: list[LoadedRule]) -> str:
    """The README's table of every rule: code, name, summary and cited requirements, default."""
    lines = ["| code | name | default |", "| --- | --- | --- |"]
    for rule in sorted(rules, key=lambda r: r.spec.code):
        spec = rule.spec
        cited = f" ({', '.join(spec.requirements)})" if spec.requirements else ""
        summary = spec.summary.replace("|", "\\|")
        lines.append(
            f"| [{spec.code}](docs/rules/{spec.code}.md) | {spec.name}: {summary}{cited} "
            f"| {_default_action(rule)} |"
        )
    return "\n".join(lines)


def update_readme(text: str, rules: list[LoadedRule]) -> str:
    """``text`` with the part between the rules-table markers regenerated."""
    start = text.index(README_TABLE_START) + len(README_TABLE_START)
    end = text.index(README_TABLE_END)
    return text[:start] + "\n" + render_readme_table(rules) + "\n" + text[end:]


def write_docs(rules: list[LoadedRule], folder: Path, *, check: bool = False) -> list[Path]:
    """Write (or with ``check`` compare) every page; return the stale or written paths."""
    pages = {folder / f"{r.spec.code}.md": render_rule_page(r) for r in rules}
    pages[folder / "index.md"] = render_index(rules)
    changed: list[Path] = []
    for path, text in pages.items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            changed.append(path)
            if not check:
                folder.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    expected = set(pages)
    if folder.is_dir():
        for path in folder.glob("*.md"):
            if path not in expected:
                changed.append(path)
                if not check:
                    path.unlink()
    return changed
