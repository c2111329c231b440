"""What users of ruff, gitleaks and pre-commit expect of a linter's command line.

Unknown selectors exit 2; colour follows ``--color``, ``NO_COLOR`` and ``FORCE_COLOR`` for
every command; ``--help`` has no Sphinx markup; ``rules explain`` renders Markdown on a
terminal and writes Markdown elsewhere; bare ``elicitguard`` gives an overview; ``-V``,
``-q``, ``-v`` and shell completion; configuration found upward from the working
directory; baselines.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from elicitguard.cli import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parents[2]
TRAFFIC = ROOT / "examples" / "traffic"
VIOLATIONS = TRAFFIC / "2025-11-25-violations.jsonl"
BENIGN = TRAFFIC / "2025-11-25-benign.jsonl"
ANSI = "\x1b["
ELICITGUARD = str(Path(sys.executable).with_name("elicitguard"))


@pytest.fixture(autouse=True)
def _no_colour_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each test starts without colour variables, in a folder with no configuration."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("ELICITGUARD_ENV", raising=False)
    monkeypatch.chdir(tmp_path)


# --- selectors ------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--select", "--ignore"])
@pytest.mark.parametrize("selector", ["EG3X", "eg999", "EG1*,ZZ*"])
def test_a_selector_matching_no_rule_is_a_usage_error(
    option: str, selector: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ruff: a typo in a CI gate fails it (exit 2) and names the selector."""
    assert main(["lint", str(VIOLATIONS), option, selector]) == 2
    err = capsys.readouterr().err
    bad = next(s for s in selector.split(",") if not s.startswith("EG1"))
    assert f"{option} {bad.upper()} matches no rule" in err


def test_a_family_typo_suggests_the_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(VIOLATIONS), "--select", "EG3X"]) == 2
    assert "did you mean EG3*?" in capsys.readouterr().err


def test_valid_selectors_still_work(capsys: pytest.CaptureFixture[str]) -> None:
    """Globs, exact codes and lower case select as before."""
    assert main(["lint", str(VIOLATIONS), "--select", "eg1*", "--format", "json"]) == 1
    codes = {f["code"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert codes
    assert all(c.startswith("EG1") for c in codes)


# --- colour -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "env", "coloured"),
    [
        (["--color", "always"], {}, True),
        (["--color", "never"], {"FORCE_COLOR": "1"}, False),
        ([], {"FORCE_COLOR": "1"}, True),
        ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        (["--color", "always"], {"NO_COLOR": "1"}, True),
        ([], {}, False),  # not a terminal
        (["--no-color"], {"FORCE_COLOR": "1"}, False),
    ],
)
@pytest.mark.parametrize(
    "command",
    [
        ["lint", str(VIOLATIONS)],
        ["check-url", "https://аррӏе.com/signin"],
        ["rules", "explain", "EG306"],
    ],
    ids=["lint", "check-url", "rules-explain"],
)
def test_one_color_flag_and_the_colour_variables_for_every_command(
    command: list[str], args: list[str], env: dict[str, str], coloured: bool
) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    done = subprocess.run(
        [ELICITGUARD, *command, *args],
        capture_output=True,
        text=True,
        env=base | env,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    assert (ANSI in done.stdout) is coloured


def test_the_shared_options_also_go_before_the_command() -> None:
    done = subprocess.run(
        [ELICITGUARD, "--color", "always", "lint", str(VIOLATIONS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ANSI in done.stdout


# --- help and overview --------------------------------------------------------------------


def _all_parsers() -> list[tuple[str, object]]:
    parser = build_parser()
    found = [("elicitguard", parser)]
    pending = [("elicitguard", parser)]
    while pending:
        name, current = pending.pop()
        for action in current._actions:  # type: ignore[attr-defined]
            choices = getattr(action, "choices", None)
            if not isinstance(choices, dict):
                continue
            for sub_name, sub in choices.items():
                if hasattr(sub, "format_help"):
                    found.append((f"{name} {sub_name}", sub))
                    pending.append((f"{name} {sub_name}", sub))
    return found


@pytest.mark.parametrize("name_parser", _all_parsers(), ids=lambda p: p[0])
def test_help_has_no_sphinx_markup(name_parser: tuple[str, object]) -> None:
    """No ``literals``, :roles:, or `::` literal-block openers in any --help."""
    text = name_parser[1].format_help()  # type: ignore[attr-defined]
    assert "``" not in text
    assert not re.search(r":[a-z]+:`", text)
    assert not re.search(r"\S::$", text, flags=re.MULTILINE)


def test_bare_elicitguard_prints_commands_and_first_steps(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 2
    out = capsys.readouterr().out
    for command in ("lint", "check-url", "rules", "policy", "proxy", "init", "completion"):
        assert re.search(rf"^\s+{command}\s", out, flags=re.MULTILINE), command
    assert "first steps" in out
    assert "elicitguard init" in out
    assert "the following arguments are required" not in out


def test_every_command_module_in_the_table_registers() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(getattr(a, "choices", None), dict))
    assert len(sub.choices) == len(COMMANDS)


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    from elicitguard import __version__

    with pytest.raises(SystemExit) as exit_:
        main([flag])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"elicitguard {__version__}"


def test_quiet_and_verbose(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """-q keeps lint to findings and summary; -v names the configuration in use."""
    main(["lint", str(VIOLATIONS)])
    normal = capsys.readouterr().out
    main(["lint", str(VIOLATIONS), "-q"])
    quiet = capsys.readouterr().out
    assert "next:" in normal
    assert "next:" not in quiet
    assert len(quiet) < len(normal)
    (tmp_path / ".elicitguard.toml").write_text('fail-on = "never"\n')
    assert main(["lint", str(VIOLATIONS), "-v"]) == 0
    assert ".elicitguard.toml" in capsys.readouterr().err
    assert main(["-q", "policy", "validate", "builtin:default"]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_scripts_name_the_commands_and_options(
    shell: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    assert "check-url" in script
    assert "--fail-on" in script
    if shell == "bash":
        syntax = subprocess.run(["bash", "-n"], input=script, text=True, check=False)
        assert syntax.returncode == 0


# --- rules explain ----------------------------------------------------------------------


def test_rules_explain_writes_markdown_when_not_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rules", "explain", "EG306"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# EG306")
    assert ANSI not in out


def test_rules_explain_renders_markdown_for_a_terminal() -> None:
    done = subprocess.run(
        [ELICITGUARD, "rules", "explain", "EG306"],
        capture_output=True,
        text=True,
        env=os.environ | {"FORCE_COLOR": "1"},
        check=False,
    )
    assert done.returncode == 0
    plain = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)
    assert "EG306" in plain
    assert not re.search(r"^#+ ", plain, flags=re.MULTILINE), "headings are rendered"
    assert "```" not in plain


@pytest.mark.parametrize(
    ("group", "sub"), [("rules", "explain"), ("policy", "validate"), ("proxy", "stdio")]
)
def test_a_group_alone_prints_its_subcommands(
    group: str, sub: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([group])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert sub in err
    assert "name a command" in err


def test_every_command_module_is_in_the_table() -> None:
    """A module added under elicitguard/commands must be listed, or it would never run."""
    import pkgutil

    from elicitguard import commands
    from elicitguard.cli import SUBCOMMANDS

    public = {m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")}
    assert public == set(COMMANDS) | {name for _, name in SUBCOMMANDS}
