"""Tests for the community credential catalogue as adopted: Kingfisher's own rule pack
loaded beside the SDK's built-ins, and our judgement of what its rules find (identifiers,
public keys, masked and made-up values are not secrets). Random bodies are built at test
time, never committed whole."""

from __future__ import annotations

import os
import random
import string
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from elicitguard.checks.secrets._community import (
    ENV_SWITCH,
    KINGFISHER_RULES,
    _names_no_secret,
    _validated,
    community_scan,
    load_community,
)
from elicitguard.checks.secrets._keynames import _keyed_confidence
from elicitguard.checks.secrets._placeholders import is_wordlike_token, shown_as_fake

RNG = random.Random(20261202)
ALNUM = string.ascii_letters + string.digits


def rand(n: int) -> str:
    return "".join(RNG.choice(ALNUM) for _ in range(n))


def _pack() -> dict[str, object]:
    loaded = yaml.safe_load(KINGFISHER_RULES.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_pack_names_its_source_and_licence() -> None:
    head = KINGFISHER_RULES.read_text(encoding="utf-8").splitlines()[:4]
    assert any("github.com/mongodb/kingfisher@" in line for line in head)
    licence = Path(KINGFISHER_RULES).with_name("LICENSE-KINGFISHER").read_text(encoding="utf-8")
    assert "Apache License" in licence


def test_pack_holds_no_network_parts() -> None:
    rules = _pack()["rules"]
    assert isinstance(rules, list)
    assert len(rules) >= 700
    for rule in rules:
        assert "validation" not in rule, rule["id"]
        assert "revocation" not in rule, rule["id"]


def test_every_pack_rule_is_loaded_beside_the_built_ins() -> None:
    import kingfisher_sdk

    load_community()  # the catalogue as the engine loads it
    catalogue = kingfisher_sdk.Rules([str(KINGFISHER_RULES)], confidence="medium")
    ids = {m["id"] for m in catalogue.metadata()}
    rules = _pack()["rules"]
    # ``confidence: low`` rules (generic ones) stay out: the catalogue loads ``medium`` up.
    wanted = {str(r["id"]) for r in rules if r.get("confidence") != "low"}  # type: ignore[union-attr]
    assert wanted <= ids
    assert len(wanted) >= 700
    assert any(i.startswith("betterleaks.") for i in ids)


def test_the_pack_finds_its_own_examples() -> None:
    """Nearly every example the Kingfisher maintainers wrote is found by the raw scanner
    (a few are written for a confidence level below ``medium``)."""
    scanner = load_community()
    found = total = 0
    for rule in _pack()["rules"]:  # type: ignore[union-attr]
        if rule.get("confidence") == "low":
            continue
        for example in rule.get("examples") or ():
            total += 1
            found += bool(scanner.scan(str(example)))
    assert total > 600
    assert found / total >= 0.9


def test_pack_only_format_reaches_the_engine_scan() -> None:
    token = "aio_" + rand(28)
    finds = community_scan(f'#define IO_KEY "{token}"')
    assert [f.value for f in finds] == [token]


@pytest.mark.parametrize(
    ("rule", "name", "expected"),
    [
        ("kingfisher.algolia.2", "Algolia Application ID", True),
        ("kingfisher.okta.2", "Okta Domain", True),
        ("kingfisher.mapbox.1", "Mapbox Public Access Token", True),
        ("kingfisher.age.1", "Age Recipient (X25519 public key)", True),
        ("kingfisher.gcp.3", "GCP Private Key ID", True),
        ("kingfisher.algolia.1", "Algolia Admin API Key", False),
        ("kingfisher.segment.1", "Segment Public API Token", False),
        ("kingfisher.airbrake.1", "Airbrake User Key", False),
        ("kingfisher.mongodb.3", "MongoDB URI Connection String", False),
        ("betterleaks.azure-client-id", "", True),
        ("betterleaks.flutterwave-public-key", "", True),
        ("betterleaks.slack-webhook-url", "", False),
        ("betterleaks.curl-auth-user", "", False),
        ("betterleaks.aws-secret-access-key", "", False),
    ],
)
def test_rules_that_find_identifiers_or_public_keys(rule: str, name: str, expected: bool) -> None:
    assert _names_no_secret(rule, name) is expected


def test_publishable_keys_are_not_secrets() -> None:
    assert _validated("kingfisher.stripe.1", "pk_live_" + rand(40), "Stripe API Key") is None
    assert _validated("kingfisher.stripe.1", "sk_live_" + rand(40), "Stripe API Key") == "high"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("xoxp-572370529330-573807301142-572331691188-####################", True),
        ("glsoat-PREfix_helloworld380_testin_pretty_long_token_long_", True),
        ("xoxp-572370529330-573807301142-572331691188-" + "aB3" * 8, False),
    ],
)
def test_a_find_cut_from_something_shown(text: str, expected: bool) -> None:
    end = 44 if text.startswith("xoxp") else 27
    assert shown_as_fake(text, 0, end) is expected


def test_words_in_camel_case_are_text() -> None:
    assert is_wordlike_token("xoxp-1-SlackAppConfigurationAccessTokenHere")
    assert not is_wordlike_token("xoxp-1-" + rand(36))


@pytest.mark.parametrize(
    ("value", "key", "expected"),
    [
        ("q8#Lm!2zP@r5^Tw", "client_secret", "medium"),
        ("u@D7GXt)t>8d(LtH^(lvZ<g=", "d7network_secret", "medium"),
        ("sys.argv[1]", "client_secret", None),
        ('"Normal">#FFBAE4FF</Color>', "api_key", None),
        ("var.db_password", "password", None),
        ("\\$_POST[", "pwd", None),
        ("(char", "pwd", None),
        ("$REACT_APP_BASE_URL/forgot", "password", None),
        ("settings.SECRET_KEY", "secret_key", None),
        ("Kx9!mQ2#vL7p-tide", "password", "medium"),
    ],
)
def test_keyed_values(value: str, key: str, expected: str | None) -> None:
    assert _keyed_confidence(value, key) == expected


def test_a_process_that_exits_mid_load_waits_for_the_background_load(tmp_path: Path) -> None:
    """A short command reaching exit while the catalogue compiles on its thread waits for
    it: the native load is never cut off by interpreter shutdown (a crash risk, and a
    compile that never reaches the disk cache)."""
    script = tmp_path / "exit_mid_load.py"
    script.write_text(
        "import atexit, sys\n"
        "def check():\n"  # registered first, so it runs after elicitguard's own handlers
        "    from elicitguard.checks.secrets import _community\n"
        "    print('loaded' if _community._SCANNER else 'not loaded')\n"
        "    sys.stdout.flush()\n"
        "atexit.register(check)\n"
        "from elicitguard.checks.secrets._community import _SCANNER, load_community_in_background\n"
        "load_community_in_background()\n"
        "print('started' if not _SCANNER else 'already')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != ENV_SWITCH}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["started", "loaded"]


def test_a_serving_process_told_to_stop_does_not_wait_for_a_starved_load(
    tmp_path: Path,
) -> None:
    """A proxy loads the catalogue at the lowest priority, which a busy machine starves for
    a minute. The console entry point waits a second for it, then writes the audit records
    still held and leaves with the command's own code, without the teardown."""
    audit = tmp_path / "audit.jsonl"
    script = tmp_path / "serve_then_stop.py"
    script.write_text(
        "import sys, time\n"
        "from elicitguard.checks.secrets import _community\n"
        "_community._load_politely = lambda: time.sleep(60)  # a load starved by the machine\n"
        "from elicitguard import cli\n"
        "def serve(argv=None):\n"
        "    from elicitguard.audit.sink import open_sink\n"
        f"    sink = open_sink('file', {str(audit)!r}, queue=64)\n"
        "    sink.write({'event': 'served'})\n"
        "    _community.load_community_in_background(polite=True)\n"
        "    return 130\n"
        "cli.main = serve\n"
        "cli.entry()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != ENV_SWITCH}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 130, done.stderr
    assert time.monotonic() - started < 30  # the starved load would hold it for 60 s
    assert "served" in audit.read_text()
