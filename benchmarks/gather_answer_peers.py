"""Gather labelled secret / not-secret strings from public peers' test suites (with provenance).

Why: our own cases show what we built for; peers' fixtures show what other maintainers
consider a credential (or a trap) across hundreds of vendors. This script reads snapshots of
three public repositories (git directories, read with ``git show``, nothing built or run)
and writes one JSON line per sample to ``benchmarks/data/peers/answers.jsonl`` (not
committed: the samples belong to their projects; run this script to recreate it):

* gitleaks ``cmd/generate/config/rules/*.go``: the ``tps`` (true positive) and ``fps``
  (false positive) string literals each rule validates against;
* Kingfisher ``data/rules/*.yml``: each rule's ``examples`` (positives) and
  ``negative_examples`` where present;
* detect-secrets ``tests/plugins/*_test.py``: ``(payload, should_flag)`` parameters;
* trufflehog ``pkg/detectors/*/*_test.go`` (the pattern tests, not the integration ones):
  each case's ``input`` and ``want``. A positive is the input line that holds a wanted
  secret (a user pastes a line, not a file). Cases that want nothing are not kept as
  negatives: they are near misses of one detector's regex (a character too many, one
  out of its alphabet) that mostly still sit under ``API_KEY=`` or ``token:``, i.e. a
  credential to anyone but that detector. Trufflehog writes its own detectors and examples, so it is
  independent of the catalogues measured here (Kingfisher's examples test Kingfisher's
  rules, which the community catalogue bundles).

Each sample has ``text``, ``label`` (1 secret, 0 not), ``source`` (repository@commit:path),
``rule`` and ``half`` (``tuning`` or ``checking``, from a hash of source and text: stable
across runs). Usage: ``python benchmarks/gather_answer_peers.py --gitleaks DIR
--kingfisher DIR --detect-secrets DIR --trufflehog DIR`` (each a git directory).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import yaml

OUT = Path(__file__).parent / "data" / "peers" / "answers.jsonl"
_GO_STRING = re.compile(r'`([^`]*)`|"((?:[^"\\]|\\.)*)"')
_GO_BLOCK = re.compile(r"\b(tps|fps)\s*(?::=|=)\s*(?:append\()?")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def _head(repo: Path) -> str:
    return _git(repo, "rev-parse", "HEAD").strip()


def _files(repo: Path, prefix: str, suffix: str) -> list[str]:
    names = _git(repo, "ls-tree", "-r", "--name-only", "HEAD", prefix).splitlines()
    return [n for n in names if n.endswith(suffix)]


def half_of(source: str, text: str) -> str:
    """The deterministic half of a sample (even hash: tuning; odd: checking)."""
    digest = hashlib.sha256(f"{source}\x00{text}".encode()).digest()
    return "tuning" if digest[0] % 2 == 0 else "checking"


_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+/=.~-]{12,}")


def _has_token(text: str) -> bool:
    """A positive must hold a credential-shaped run (letters and digits) or a PEM block;
    rule names and identifiers caught by the literal extraction are dropped."""
    if "-----BEGIN" in text:
        return True
    return any(
        any(c.isdigit() for c in run) and any(c.isalpha() for c in run)
        for run in _TOKEN_RUN.findall(text)
    )


def _sample(text: str, label: int, source: str, rule: str) -> dict[str, Any]:
    return {
        "text": text,
        "label": label,
        "source": source,
        "rule": rule,
        "class": "catalogue" if label else "peer-negative",
        "half": half_of(source, text),
    }


def _go_blocks(code: str) -> Iterator[tuple[str, str]]:
    """(tps|fps, body) for each literal list assigned in a gitleaks rule file."""
    for match in _GO_BLOCK.finditer(code):
        start = code.find("{", match.end())
        if start == -1 or start - match.end() > 200:
            continue
        depth = 0
        for index in range(start, len(code)):
            if code[index] == "{":
                depth += 1
            elif code[index] == "}":
                depth -= 1
                if depth == 0:
                    yield match.group(1), code[start + 1 : index]
                    break


_GENERATED = re.compile(r'GenerateSampleSecrets\(\s*"([^"]*)"\s*,\s*(?:"([^"]*)"|`([^`]*)`)\s*\)')
_GENERATED_ANY = re.compile(
    r"GenerateSampleSecrets\([^()]*(?:\([^()]*(?:\([^()]*\)[^()]*)*\)[^()]*)*\)"
)


def gitleaks(repo: Path) -> Iterator[dict[str, Any]]:
    """Literal tps/fps; a ``GenerateSampleSecrets(id, "secret")`` call becomes one line of
    its YAML template (``{id}_token: {secret}``), as the secret alone has no context."""
    commit = _head(repo)
    for path in _files(repo, "cmd/generate/config/rules/", ".go"):
        code = _git(repo, "show", f"HEAD:{path}")
        rule = Path(path).stem
        source = f"gitleaks@{commit[:12]}:{path}"
        for call in _GENERATED.finditer(code):
            secret = call.group(2) if call.group(2) is not None else call.group(3)
            if secret and len(secret) >= 8:
                yield _sample(f"{call.group(1)}_token: {secret}", 1, source, rule)
        for kind, body in _go_blocks(code):
            body = _GENERATED_ANY.sub("", body)
            for raw in _GO_STRING.finditer(body):
                text = raw.group(1) if raw.group(1) is not None else raw.group(2)
                if text is None or len(text) < 8 or "%s" in text:
                    continue
                if raw.group(2) is not None:
                    try:
                        text = ast.literal_eval('"' + text + '"')
                    except (ValueError, SyntaxError):
                        continue
                yield _sample(text, int(kind == "tps"), source, rule)


def kingfisher(repo: Path) -> Iterator[dict[str, Any]]:
    commit = _head(repo)
    for path in _files(repo, "data/rules/", ".yml"):
        try:
            data = yaml.safe_load(_git(repo, "show", f"HEAD:{path}")) or {}
        except yaml.YAMLError:
            continue
        for rule in data.get("rules", []) or []:
            source = f"kingfisher@{commit[:12]}:{path}"
            for text in rule.get("examples", []) or []:
                if isinstance(text, str) and len(text) >= 8:
                    yield _sample(text.strip(), 1, source, str(rule.get("id")))
            for text in rule.get("negative_examples", []) or []:
                if isinstance(text, str) and len(text) >= 8:
                    yield _sample(text.strip(), 0, source, str(rule.get("id")))


def detect_secrets(repo: Path) -> Iterator[dict[str, Any]]:
    commit = _head(repo)
    for path in _files(repo, "tests/plugins/", "_test.py"):
        tree = ast.parse(_git(repo, "show", f"HEAD:{path}"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Tuple) or len(node.elts) != 2:
                continue
            text, flag = node.elts
            if not (isinstance(text, ast.Constant) and isinstance(text.value, str)):
                continue
            if not (isinstance(flag, ast.Constant) and isinstance(flag.value, bool)):
                continue
            if len(text.value) >= 8:
                source = f"detect-secrets@{commit[:12]}:{path}"
                yield _sample(text.value, int(flag.value), source, Path(path).stem)


_GO_LITERAL = r'`[^`]*`|"(?:[^"\\\n]|\\.)*"'
_TH_CONST = re.compile(
    r"(?m)^\s*(?:var\s+|const\s+)?([A-Za-z_]\w*)\s*(?:string\s*)?=\s*(" + _GO_LITERAL + ")"
)
_TH_CASE = re.compile(
    r"\binput:\s*(?P<input>" + _GO_LITERAL + r"|[A-Za-z_]\w*)\s*,[^{}]{0,400}?"
    r"\bwant:\s*(?P<want>nil|\[\]string\{[^{}]*\}|\[\]string\(nil\))",
    re.S,
)
_TH_WANT_ITEM = re.compile(_GO_LITERAL + r"|[A-Za-z_]\w*")
_TH_MAX_LINE = 400


def _go_literal(raw: str) -> str | None:
    if raw.startswith("`"):
        return raw[1:-1]
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def _go_value(raw: str, consts: dict[str, str]) -> str | None:
    if raw[0] in '`"':
        return _go_literal(raw)
    return consts.get(raw)


def trufflehog(repo: Path) -> Iterator[dict[str, Any]]:
    """Pattern-test cases of trufflehog's detectors, one input line per sample."""
    commit = _head(repo)
    for path in _files(repo, "pkg/detectors/", "_test.go"):
        if path.endswith("_integration_test.go"):
            continue
        code = _git(repo, "show", f"HEAD:{path}")
        if "input:" not in code:
            continue
        consts: dict[str, str] = {}
        for name, raw in _TH_CONST.findall(code):
            value = _go_literal(raw)
            if value is not None:
                consts[name] = value
        source = f"trufflehog@{commit[:12]}:{path}"
        rule = Path(path).parent.name
        for case in _TH_CASE.finditer(code):
            text = _go_value(case.group("input"), consts)
            if not text:
                continue
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
            lines = [ln for ln in lines if len(ln) <= _TH_MAX_LINE]
            want = case.group("want")
            wanted = []
            if want.startswith("[]string{"):
                for item in _TH_WANT_ITEM.findall(want[len("[]string{") : -1]):
                    value = _go_value(item, consts)
                    if value:
                        wanted.append(value)
            if wanted:
                for secret in wanted:
                    probe = secret.split(":")[-1][:24] if len(secret) > 24 else secret
                    hits = [ln for ln in lines if probe and probe in ln]
                    if hits and len(secret) >= 8:
                        yield _sample(hits[0], 1, source, rule)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gitleaks", type=Path)
    parser.add_argument("--kingfisher", type=Path)
    parser.add_argument("--detect-secrets", type=Path, dest="detect_secrets")
    parser.add_argument("--trufflehog", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    samples: list[dict[str, Any]] = []
    if args.gitleaks:
        samples.extend(gitleaks(args.gitleaks))
    if args.kingfisher:
        samples.extend(kingfisher(args.kingfisher))
    if args.detect_secrets:
        samples.extend(detect_secrets(args.detect_secrets))
    if args.trufflehog:
        samples.extend(trufflehog(args.trufflehog))
    # A peer's negative is often another rule's positive ("not a GitLab token" for a
    # GitHub token): a text that any source calls a secret is not kept as a negative.
    positives = {s["text"] for s in samples if s["label"]}
    samples = [s for s in samples if s["label"] or s["text"] not in positives]
    seen: set[tuple[str, int]] = set()
    unique = []
    for sample in samples:
        if sample["label"] and not _has_token(sample["text"]):
            continue
        key = (sample["text"], sample["label"])
        if key not in seen:
            seen.add(key)
            unique.append(sample)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(b"".join(orjson.dumps(s) + b"\n" for s in unique))
    positives = sum(s["label"] for s in unique)
    print(f"{len(unique)} samples ({positives} secrets) -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
