"""Keys: from a file or the environment, with ids; random only when nothing is configured."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from elicitguard.errors import KeyConfigError
from elicitguard.identity.keys import KeyRing, load_keyring

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
