"""Keys: from a file or the environment, with ids; random only when nothing is configured."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from elicitguard.base.keys import KeyRing, load_keyring
from elicitguard.errors import KeyConfigError

SECRET = base64.b64encode(bytes(range(32))).decode()


def test_random_keyring_emits_no_value_fingerprints() -> None:
    """Without configured keys a low-entropy value must never get a fingerprint."""
    ring = load_keyring(environ={})
    assert not ring.configured
    assert ring.value_fingerprint("1234") is None
    assert ring.id_hash("session").startswith("ephemeral:")


def test_environment_keys_fingerprint_stably() -> None:
    """Configured keys give stable, keyed fingerprints with the key id."""
    env = {"ELICITGUARD_KEYS": json.dumps({"keys": [{"id": "k1", "secret": SECRET}]})}
    one = load_keyring(environ=env)
    two = load_keyring(environ=env)
    assert one.value_fingerprint("1234") == two.value_fingerprint("1234")
    assert (one.value_fingerprint("1234") or "").startswith("hmac:k1:")
    assert "1234" not in (one.value_fingerprint("1234") or "")


def test_rotation_signs_with_the_first_active_key(tmp_path: Path) -> None:
    """A retired key still verifies, the new one signs."""
    path = tmp_path / "keys.json"
    path.write_text(
        json.dumps(
            {
                "keys": [
                    {"id": "old", "secret": SECRET, "retired": True},
                    {"id": "new", "secret": base64.b64encode(bytes(range(1, 40))).decode()},
                ]
            }
        )
    )
    ring = load_keyring(path)
    assert ring.signing_key("fingerprint").id == "new"
    assert {"old", "new"} == {k.id for k in ring.verifying_keys("fingerprint")}


@pytest.mark.parametrize(
    "text",
    [
        "not json",  # not JSON
        '{"keys": []}',  # no keys
        '{"keys": [{"id": "k", "secret": "c2hvcnQ="}]}',  # too short
        '{"keys": [{"id": "", "secret": "' + SECRET + '"}]}',  # empty id
        '{"keys": [{"id": "a", "secret": "'
        + SECRET
        + '"}, {"id": "a", "secret": "'
        + SECRET
        + '"}]}',  # duplicate id
    ],
)
def test_malformed_keys_are_refused_without_echoing_secrets(text: str) -> None:
    """Errors say what is wrong and never print the secret."""
    with pytest.raises(KeyConfigError) as info:
        load_keyring(environ={"ELICITGUARD_KEYS": text})
    assert SECRET not in str(info.value)


def test_random_is_not_configured() -> None:
    """The random ring says so."""
    assert not KeyRing.random().configured


def test_require_configured_names_the_fix() -> None:
    """A shared setup refuses a random key, saying how to configure one."""
    with pytest.raises(KeyConfigError) as info:
        KeyRing.random().require_configured("the redis state store")
    message = str(info.value)
    assert "the redis state store needs configured keys" in message
    assert "ELICITGUARD_KEYS" in message
    assert "keys generate" in message
    with pytest.raises(KeyConfigError):
        load_keyring(environ={}, require="2 replicas")
    env = {"ELICITGUARD_KEYS": json.dumps({"keys": [{"id": "k1", "secret": SECRET}]})}
    assert load_keyring(environ=env, require="2 replicas").configured


def test_derived_subkeys_differ_per_purpose() -> None:
    """One secret gives unrelated subkeys for sealing, state and binding."""
    key = load_keyring(
        environ={"ELICITGUARD_KEYS": json.dumps({"keys": [{"id": "k1", "secret": SECRET}]})}
    ).keys[0]
    subkeys = {key.derive(label) for label in ("seal", "state", "bind", "state-index")}
    assert len(subkeys) == 4
    assert all(len(k) == 32 for k in subkeys)
    assert key.derive("seal") == key.derive("seal")


def test_keys_generate_and_rotate(tmp_path: Path) -> None:
    """`keys generate` writes a 0600 file; `--rotate` puts a new key first and keeps the old."""
    from elicitguard.cli import main

    first = tmp_path / "keys.json"
    assert main(["keys", "generate", "--id", "k1", "--output", str(first)]) == 0
    assert first.stat().st_mode & 0o777 == 0o600
    assert load_keyring(first).signing_key("seal").id == "k1"
    second = tmp_path / "keys2.json"
    assert main(["keys", "generate", "--rotate", str(first), "--output", str(second)]) == 0
    ring = load_keyring(second)
    assert ring.signing_key("seal").id != "k1"
    assert [k.id for k in ring.keys][1] == "k1"
    assert main(["keys", "generate", "--id", "k1", "--rotate", str(first)]) == 2
