"""Hostile policy files: clear errors in bounded time and memory, never object construction.

tests/engine/test_policy_loading.py already covers alias bombs, Python tags, duplicate keys,
unknown keys, ``extends`` cycles, depth and paths outside the folder, and invalid regexes;
this adds huge files, deep nesting (flow and block), control characters, a symlink that
escapes the folder, a pack path outside the folder, and a pathological but valid RE2 regex.
"""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest

from elicitguard.engine.policy import load_policy
from elicitguard.errors import PolicyError


def _load(path: Path) -> PolicyError:
    started = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(PolicyError) as caught:
        load_policy(path, environ={})
    assert time.monotonic() - started < 10  # generous: CI machines are shared
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024
    assert str(caught.value)  # a message a person can act on
    return caught.value


def test_huge_file_is_refused_before_parsing(tmp_path: Path) -> None:
    """A 50 MB policy is refused by size, without being read into a parser."""
    path = tmp_path / "p.yaml"
    with path.open("wb") as out:
        out.write(b"name: big\n# " + b"x" * (50 << 20) + b"\n")
    assert "bytes" in str(_load(path))


@pytest.mark.parametrize(
    "text",
    [
        "name: deep\nrules: " + "[" * 20_000 + "]" * 20_000 + "\n",
        "name: deep\nrules: " + "{a: " * 20_000 + "1" + "}" * 20_000 + "\n",
        "name: deep\nrules:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 400)),
    ],
    ids=["flow-lists", "flow-maps", "block-maps"],
)
def test_deep_nesting_is_a_clear_error(tmp_path: Path, text: str) -> None:
    """Nesting far past any real policy is refused (no RecursionError, no traceback)."""
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    _load(path)


def test_control_characters_are_refused(tmp_path: Path) -> None:
    """NUL and other control characters in a policy give a PolicyError with the line."""
    path = tmp_path / "p.yaml"
    path.write_bytes(b"name: x\n\x00\n")
    assert _load(path).line == 2


def test_symlink_escaping_the_folder_is_refused(tmp_path: Path) -> None:
    """``extends`` through a symlink to a file outside the policy's folder is refused."""
    outside = tmp_path / "outside.yaml"
    outside.write_text("name: outside\n", encoding="utf-8")
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "link.yaml").symlink_to(outside)
    main = folder / "p.yaml"
    main.write_text("name: p\nextends: [./link.yaml]\n", encoding="utf-8")
    _load(main)


def test_pack_outside_the_folder_is_refused(tmp_path: Path) -> None:
    """A ``packs`` entry that climbs out of the policy's folder is refused."""
    folder = tmp_path / "policies"
    folder.mkdir()
    main = folder / "p.yaml"
    main.write_text("name: p\npacks: [../elsewhere]\n", encoding="utf-8")
    _load(main)
