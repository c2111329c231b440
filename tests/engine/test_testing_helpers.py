"""elicitguard.testing: a quiet engine, captured audit records, a pack's cases."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from elicitguard.protocol.envelope import Direction, Envelope, Side
from elicitguard.testing import capture_records, quiet_engine, run_cases

URL_REQUEST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "m", "url": "http://x.example/?token=s3cr3t-value"},
}


def _evaluate(engine: object) -> None:
    envelope = Envelope(URL_REQUEST, Direction.SERVER_TO_CLIENT, side=Side.CLIENT, server="s")
    engine.evaluate(envelope)  # type: ignore[attr-defined]


def test_quiet_engine_ignores_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """ELICITGUARD_ENV does not reach it; env= does."""
    monkeypatch.setenv("ELICITGUARD_ENV", "dev")
    assert quiet_engine().policy.environment == "prod"
    assert quiet_engine(env="test").policy.environment == "test"


def test_quiet_engine_takes_layers_and_writes_where_asked() -> None:
    """Layers merge on the default preset; records go to the given stream only."""
    stream = io.StringIO()
    engine = quiet_engine(layers=[{"rules": {"EG301": {"action": "off"}}}], audit=stream)
    _evaluate(engine)
    assert stream.getvalue().count("\n") == 1
    assert '"EG301"' not in stream.getvalue()


def test_capture_records_sees_the_redacted_records_of_the_block() -> None:
    """Records of the block only, parsed, with no secret value in them."""
    engine = quiet_engine()
    _evaluate(engine)  # before the block: not captured
    with capture_records(engine) as records:
        _evaluate(engine)
    _evaluate(engine)  # after: not captured
    assert len(records) == 1
    assert records[0]["event"] == "elicitguard.decision"
    assert "EG301" in [f["code"] for f in records[0]["findings"]]
    assert "s3cr3t-value" not in repr(records)


def test_run_cases_runs_a_pack(tmp_path: Path) -> None:
    """A user pack's cases run as `rules test PATH` runs them."""
    from elicitguard.commands.rules_new import scaffold

    scaffold("ACME001", "internal-word", "form", root=tmp_path, pack=tmp_path / "pack")
    results = run_cases(tmp_path / "pack")
    assert [r.passed for r in results] == [True, True, True]
