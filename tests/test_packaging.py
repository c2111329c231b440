"""The wheel carries the data folders inside the package and the CLI runs from it."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = Path(__file__).resolve().parent.parent
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(root),
        ],
        check=True,
        capture_output=True,
    )
    [path] = list(out.glob("elicitguard-*.whl"))
    return path


def test_wheel_contents(wheel: Path) -> None:
    """Only the elicitguard package at the top level, with rules, presets and py.typed inside."""
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert {"elicitguard"} == {t for t in top if not t.endswith(".dist-info")}
    assert "elicitguard/py.typed" in names
    assert any(n.startswith("elicitguard/_data/rules/conformance/EG101-") for n in names)
    assert "elicitguard/_data/policy/default.yaml" in names
    assert not any(n.startswith(("rules/", "policy/", "tests/")) for n in names)


def test_installed_wheel_finds_its_data_and_runs(wheel: Path, tmp_path: Path) -> None:
    """Installed from the wheel (not the checkout), the CLI lists and tests the built-in rules."""
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    code = "import elicitguard._resources as r; print(r.data_dir('rules'))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(target) in out.stdout
    listing = subprocess.run(
        [sys.executable, "-m", "elicitguard", "rules", "list"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "EG101" in listing.stdout


def test_editable_checkout_finds_the_top_level_folders() -> None:
    """In a checkout the data folders are found at the top of the tree."""
    from elicitguard._resources import data_dir

    assert (data_dir("rules") / "conformance").is_dir()
    assert (data_dir("policy") / "default.yaml").is_file()
