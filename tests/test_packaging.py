"""The wheel and the sdist carry what they should, and the wheel installs and runs on its own.

The wheel holds only the ``elicitguard`` package (rules and presets inside it, ``py.typed``,
the Unicode licence of the bundled tables); the sdist holds the sources, tests, docs and
examples and builds the same wheel; the wheel installs into a fresh virtual environment with
its dependencies from the index and the CLI works there; the extras resolve; the version
comes from ``src/elicitguard/_version.py`` only.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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
    assert "elicitguard/_data/schema/policy.schema.json" in names  # for editors and init
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


# --- sdist ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sdist")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    [path] = list(out.glob("elicitguard-*.tar.gz"))
    return path


def _sdist_names(sdist: Path) -> list[str]:
    with tarfile.open(sdist) as archive:
        return [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]


def test_sdist_contents(sdist: Path) -> None:
    """Sources, rules, presets, tests, docs, examples, licences; no caches, no local secrets."""
    names = _sdist_names(sdist)
    top = {n.split("/")[0] for n in names}
    assert top <= {
        "src",
        "rules",
        "policy",
        "tests",
        "docs",
        "examples",
        "benchmarks",
        "schema",
        "scripts",
        "fuzz",
        "deploy",
        "README.md",
        "CHANGELOG.md",
        "SECURITY.md",
        "LICENSE",
        "pyproject.toml",
        "PKG-INFO",
        ".gitignore",
    }, top
    for required in (
        "pyproject.toml",
        "LICENSE",
        "README.md",
        "CHANGELOG.md",
        "src/elicitguard/py.typed",
        "src/elicitguard/_version.py",
        "src/elicitguard/checks/data/unicode/LICENSE-UNICODE.txt",
        "policy/default.yaml",
        "docs/rules/index.md",
        "tests/data/README.md",  # provenance and licence of the SARIF schema beside it
        "examples/custom_pack/rules/ACME001-url-outside-acme.yaml",
    ):
        assert required in names, required
    assert any(n.startswith("rules/conformance/EG101-") for n in names)
    banned = re.compile(r"(__pycache__|\.pyc$|node_modules|/keys\.json$|\.pem$|\.venv/)")
    assert not [n for n in names if banned.search(n)]


def test_sdist_builds_the_same_wheel(sdist: Path, wheel: Path, tmp_path: Path) -> None:
    """A wheel built from the unpacked sdist has exactly the files of the checkout's wheel."""
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path, filter="data")
    [unpacked] = [p for p in tmp_path.iterdir() if p.is_dir()]
    out = tmp_path / "out"
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
            str(unpacked),
        ],
        check=True,
        capture_output=True,
    )
    [rebuilt] = list(out.glob("elicitguard-*.whl"))
    assert sorted(zipfile.ZipFile(rebuilt).namelist()) == sorted(zipfile.ZipFile(wheel).namelist())


# --- licences of bundled data ---------------------------------------------------------------------

#: Data files we wrote ourselves (each says where its facts come from in its header); any
#: other data file must sit in a folder with a LICENSE-*.txt of its origin.
OWN_DATA = re.compile(
    r"^elicitguard/(checks/data/(protected_domains\.txt|secrets\.yaml|secret_prose\.yaml|lexicon/[\w-]+\.yaml)"
    r"|_data/(rules|policy|schema)/.*|py\.typed)$"
)


def test_wheel_carries_the_licences_of_bundled_data(wheel: Path) -> None:
    """Third-party derived data ships with its licence, inside the package and in dist-info."""
    names = zipfile.ZipFile(wheel).namelist()
    assert "elicitguard/checks/data/unicode/LICENSE-UNICODE.txt" in names
    licences = [n for n in names if ".dist-info/licenses/" in n]
    assert any(n.endswith("/LICENSE") for n in licences), licences
    assert any(n.endswith("LICENSE-UNICODE.txt") for n in licences), licences
    data = [
        n
        for n in names
        if n.startswith("elicitguard/") and not n.endswith((".py", "/")) and "LICENSE" not in n
    ]
    for name in data:
        if OWN_DATA.match(name):
            continue
        folder = name.rsplit("/", 1)[0]
        assert any(n.startswith(folder + "/LICENSE-") for n in names), (
            f"{name}: bundled data without a licence file beside it"
        )
    for own in ("checks/data/protected_domains.txt", "checks/data/secrets.yaml"):
        header = zipfile.ZipFile(wheel).read(f"elicitguard/{own}").decode()[:2000]
        assert re.search(r"(?i)sources?|learnt from|public", header), own


def test_metadata_declares_licences_and_extras(wheel: Path) -> None:
    """METADATA: MIT, both licence files, the version of _version.py, the extras."""
    with zipfile.ZipFile(wheel) as archive:
        [meta_name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        meta = Parser().parsestr(archive.read(meta_name).decode())
    assert meta["License-Expression"] == "MIT"
    assert set(meta.get_all("License-File") or []) >= {
        "LICENSE",
        "src/elicitguard/checks/data/unicode/LICENSE-UNICODE.txt",
    }
    assert meta["Version"] == _source_version()
    assert set(meta.get_all("Provides-Extra") or []) >= {"mcp", "fastmcp", "http", "redis", "test"}


# --- one version -----------------------------------------------------------------------------


def _source_version() -> str:
    text = (ROOT / "src" / "elicitguard" / "_version.py").read_text()
    match = re.search(r'^__version__ = "([^"]+)"$', text, flags=re.MULTILINE)
    assert match is not None
    return match.group(1)


def test_version_comes_from_one_place() -> None:
    """pyproject reads _version.py; no other file spells the version; CHANGELOG knows it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == "src/elicitguard/_version.py"
    import elicitguard

    assert elicitguard.__version__ == _source_version()
    spelled = re.compile(r"__version__\s*=|^version\s*=", flags=re.MULTILINE)
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "src").rglob("*.py")
        if p.name != "_version.py" and spelled.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_changelog_follows_keep_a_changelog() -> None:
    """An Unreleased section first, grouped under Keep a Changelog's headings only."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "keepachangelog.com" in text
    releases = re.findall(r"^## \[([^\]]+)\]", text, flags=re.MULTILINE)
    assert releases
    assert releases[0] == "Unreleased"
    groups = set(re.findall(r"^### (.+)$", text, flags=re.MULTILINE))
    assert groups <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, groups


# --- a fresh virtual environment ----------------------------------------------------------------


@pytest.mark.slow
def test_wheel_in_a_fresh_virtual_environment(wheel: Path, tmp_path: Path) -> None:
    """``python -m venv`` + ``pip install <wheel>`` (dependencies from the index): the CLI
    lints the example traffic, finds the planted violations, and the extras resolve.
    About 30 s with a warm pip cache."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    installed = subprocess.run(
        [*pip, "install", "-q", str(wheel)], capture_output=True, text=True, timeout=600
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    cli = str(venv / "bin" / "elicitguard")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ELICITGUARD_", "PYTHONPATH"))}
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, env=env)
    assert _source_version() in version.stdout + version.stderr
    lint = subprocess.run(
        [cli, "lint", str(ROOT / "examples" / "traffic"), "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert lint.returncode == 1, lint.stderr
    report = json.loads(lint.stdout)
    assert report["findings"]
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import elicitguard; print(elicitguard.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    assert where.stdout.startswith(str(venv)), "imported the checkout instead of the wheel"
    report_path = tmp_path / "extras.json"
    extras = subprocess.run(
        [
            *pip,
            "install",
            "-q",
            "--dry-run",
            "--report",
            str(report_path),
            f"{wheel}[mcp,fastmcp,http,redis]",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert extras.returncode == 0, extras.stderr[-2000:]
    resolved = {
        item["metadata"]["name"].lower(): item["metadata"]["version"]
        for item in json.loads(report_path.read_text())["install"]
    }
    assert resolved.get("mcp") == "2.3.0"
    assert resolved.get("fastmcp") == "4.2.3"
    for name in ("httpx", "starlette", "uvicorn", "redis"):
        assert name in resolved, name
