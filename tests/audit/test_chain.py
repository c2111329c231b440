"""The audit chain: `audit verify` catches every kind of tampering, and only keys can forge it."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import pytest

from elicitguard.audit.chain import Checkpoint, canonical, verify_chain
from elicitguard.audit.sink import open_sink
from elicitguard.base.keys import KeyRing, load_keyring
from elicitguard.cli import main
from elicitguard.engine.engine import Engine
from elicitguard.engine.policy import load_policy
from elicitguard.errors import KeyConfigError

TRAFFIC = Path(__file__).resolve().parents[2] / "examples" / "traffic"


def _keys_json(*ids: str, retired: tuple[str, ...] = ()) -> str:
    keys = [
        {"id": i, "secret": base64.b64encode(os.urandom(32)).decode(), "retired": i in retired}
        for i in ids
    ]
    return json.dumps({"keys": keys})


@pytest.fixture
def keyfile(tmp_path: Path) -> Path:
    path = tmp_path / "keys.json"
    path.write_text(_keys_json("k1"))
    return path


@pytest.fixture
def chained(tmp_path: Path, keyfile: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A chained audit log written by a lint run (the sink also writes its checkpoint)."""
    policy = tmp_path / "p.yaml"
    policy.write_text(
        f"extends: ['builtin:default']\naudit: {{chain: true}}\nkeys: {{file: {keyfile}}}\n"
    )
    log = tmp_path / "audit.jsonl"
    captures = [str(p) for p in sorted(TRAFFIC.glob("*.jsonl"))]
    main(["lint", "--policy", str(policy), "--audit-log", str(log), *captures])
    capsys.readouterr()
    return log


def verify(
    log: Path, keyfile: Path, capsys: pytest.CaptureFixture[str], ckpt: Path | None = None
) -> tuple[int, str]:
    args = ["audit", "verify", str(log), "--keys", str(keyfile)]
    if ckpt is not None:
        args += ["--checkpoint", str(ckpt)]
    code = main(args)
    return code, capsys.readouterr().out


def _lines(log: Path) -> list[str]:
    return log.read_text().splitlines()


def _write(log: Path, lines: list[str]) -> None:
    log.write_text("\n".join(lines) + "\n")


def test_an_untouched_log_verifies_with_its_checkpoint(
    chained: Path, keyfile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every record has seq, chain_key and chain; the sink's checkpoint matches the end."""
    records = [json.loads(line) for line in _lines(chained)]
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    assert {"k1"} == {r["chain_key"] for r in records}
    ckpt = Path(str(chained) + ".checkpoint")
    assert ckpt.stat().st_mode & 0o777 == 0o600
    code, out = verify(chained, keyfile, capsys, ckpt)
    assert code == 0, out
    assert f"{len(records)} records" in out


def test_an_edited_record_fails_even_with_a_recomputed_unkeyed_chain(
    chained: Path, keyfile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An attacker without the key edits a record and rebuilds every later chain value with a
    plain hash (what an unkeyed chain would allow): verification still fails at the edit."""
    lines = _lines(chained)
    records = [json.loads(line) for line in lines]
    records[3]["action"] = "allow"
    previous = records[2]["chain"]
    for record in records[3:]:
        record["chain"] = hashlib.sha256(previous.encode() + canonical(record)).hexdigest()
        previous = record["chain"]
    _write(chained, [json.dumps(r) for r in records])
    code, out = verify(chained, keyfile, capsys)
    assert code == 1
    assert "line 4: record 4 does not verify" in out


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        # a record removed from the middle
        (lambda ls: ls[:5] + ls[6:], "records are missing"),
        # two records swapped
        (lambda ls: [*ls[:5], ls[6], ls[5], *ls[7:]], "records are missing"),
        # a copy of an earlier record inserted (a replay)
        (lambda ls: [*ls[:5], ls[2], *ls[5:]], "reordered or repeated"),
        # a forged record with the next seq, chained with a made-up value
        (
            lambda ls: (
                ls[:5]
                + [json.dumps({**json.loads(ls[4]), "seq": 6, "chain": "0" * 64})]
                + [json.dumps({**json.loads(x), "seq": json.loads(x)["seq"] + 1}) for x in ls[5:]]
            ),
            "line 6: record 6 does not verify",
        ),
        # the first record dropped
        (lambda ls: ls[1:], "records are missing"),
        # a line that is not JSON
        (lambda ls: [*ls[:2], "garbage", *ls[2:]], "line 3: not a JSON record"),
    ],
    ids=["dropped", "reordered", "replayed", "inserted", "first-dropped", "garbage"],
)
def test_tampering_is_detected(
    chained: Path, keyfile: Path, capsys: pytest.CaptureFixture[str], tamper, expected: str
) -> None:  # type: ignore[no-untyped-def]
    """Dropping, reordering, repeating, inserting records: each breaks the chain."""
    _write(chained, tamper(_lines(chained)))
    code, out = verify(chained, keyfile, capsys)
    assert code == 1
    assert expected in out


def test_truncation_at_the_end_is_caught_by_the_checkpoint(
    chained: Path, keyfile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log cut short is a valid shorter chain: only the checkpoint tells."""
    ckpt = Path(str(chained) + ".checkpoint")
    _write(chained, _lines(chained)[:-3])
    assert verify(chained, keyfile, capsys)[0] == 0
    code, out = verify(chained, keyfile, capsys, ckpt)
    assert code == 1
    assert "records were cut off the end" in out


def test_a_forged_checkpoint_is_refused(
    chained: Path, keyfile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Lowering the checkpoint's seq to hide a truncation breaks its MAC."""
    ckpt = Path(str(chained) + ".checkpoint")
    data = json.loads(ckpt.read_text())
    data["seq"] -= 3
    ckpt.write_text(json.dumps(data))
    code = main(
        ["audit", "verify", str(chained), "--keys", str(keyfile), "--checkpoint", str(ckpt)]
    )
    assert code == 2
    assert "checkpoint's MAC does not verify" in capsys.readouterr().err


def test_checkpoint_command_and_a_growing_log(
    chained: Path, keyfile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`audit checkpoint` records the end; records appended later keep the old checkpoint valid,
    and a reopened sink continues the chain where the file ends."""
    ckpt = tmp_path / "mine.ckpt"
    assert (
        main(["audit", "checkpoint", str(chained), "--output", str(ckpt), "--keys", str(keyfile)])
        == 0
    )
    keys = load_keyring(keyfile)
    sink = open_sink("file", str(chained))
    sink.enable_chain(keys)
    sink.write({"event": "elicitguard.policy_warning", "code": "EG902", "message": "m"})
    sink.close()
    code, out = verify(chained, keyfile, capsys, ckpt)
    assert code == 0, out
    assert (
        Checkpoint.load(Path(str(chained) + ".checkpoint"), keys).seq
        == json.loads(_lines(chained)[-1])["seq"]
    )


def test_rotated_keys_still_verify(tmp_path: Path) -> None:
    """Records keep their key id: after a rotation old records verify with the retired key."""
    old = json.loads(_keys_json("old"))
    log = tmp_path / "a.jsonl"
    sink = open_sink("file", str(log))
    sink.enable_chain(
        KeyRing(load_keyring(environ={"K": json.dumps(old)}, env="K").keys, True, "old")
    )
    sink.write({"event": "e", "n": 1})
    sink.close()
    new = json.loads(_keys_json("new"))
    rotated = {"keys": new["keys"] + [{**old["keys"][0], "retired": True}]}
    keys = load_keyring(environ={"K": json.dumps(rotated)}, env="K")
    sink = open_sink("file", str(log))
    sink.enable_chain(keys)
    sink.write({"event": "e", "n": 2})
    sink.close()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["chain_key"] for r in records] == ["old", "new"]
    assert verify_chain(log.read_bytes().splitlines(), keys).ok


def test_a_chain_needs_configured_keys(tmp_path: Path) -> None:
    """A random per-process key would make the chain unverifiable: refused at start."""
    policy = load_policy(None, extra_layers=[{"audit": {"chain": True}}], environ={})
    with pytest.raises(KeyConfigError, match="configured keys"):
        Engine(policy, audit=open_sink("file", str(tmp_path / "a.jsonl")), keys=KeyRing.random())


def test_verify_without_keys_is_a_usage_error(
    chained: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No keys: exit 2 with a hint, never a silent pass."""
    assert main(["audit", "verify", str(chained)]) == 2
    assert "no keys configured" in capsys.readouterr().err


def test_chain_values_never_include_secrets(chained: Path) -> None:
    """The chain fields are hex MACs and a key id; the secret is never written."""
    text = chained.read_text()
    for line in text.splitlines():
        record = json.loads(line)
        assert len(record["chain"]) == 64
        int(record["chain"], 16)
