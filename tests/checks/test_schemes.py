"""The one scheme table: each set the URL checks read is pinned here, so that moving a
scheme between sets is a visible change."""

from __future__ import annotations

from elicitguard.checks import schemes


def test_script_and_never_allowed_sets() -> None:
    assert set(schemes.SCRIPT_SCHEMES) == {"javascript", "vbscript", "livescript", "mocha"}
    assert set(schemes.NEVER_ALLOWED_SCHEMES) == {
        "javascript", "data", "file", "vbscript", "ftp", "ftps", "ws", "blob",
        "filesystem", "about", "view-source", "jar", "livescript", "mocha",
    }  # fmt: skip
    assert schemes.SCRIPT_SCHEMES <= schemes.NEVER_ALLOWED_SCHEMES


def test_link_sets() -> None:
    assert set(schemes.DANGEROUS_LINK_SCHEMES) == {"javascript", "vbscript", "data", "file", "blob"}
    assert set(schemes.AUTOLINKED_SCHEMES) == {"http", "https", "ftp", "ftps", "mailto", "xmpp"}


def test_named_and_authority_sets() -> None:
    assert set(schemes.NAMED_SCHEMES) == {
        "http", "javascript", "data", "file", "vbscript", "ftp", "ftps", "ws", "wss", "blob",
        "filesystem", "about", "view-source", "jar", "mailto", "tel", "sms", "intent", "ssh",
        "git", "sftp",
    }  # fmt: skip
    assert "https" not in schemes.NAMED_SCHEMES  # https is never a finding
    assert set(schemes.AUTHORITY_SCHEMES) == {
        "http", "https", "ws", "wss", "ftp", "ftps", "sftp", "ssh", "git", "file",
    }  # fmt: skip
    assert set(schemes.WEB_SCHEMES) == {"http", "https"}
