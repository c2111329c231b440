"""URLs in text (EG202): what a renderer might make clickable in a form's texts.

Why: a form title or option label that holds ``evil-login.com/reset`` is a link in many
clients, though the form asked for no URL. :func:`find_urls_in_text` finds scheme URLs,
``www.`` links and bare domains whose last label is a real top-level domain and not a
common file extension (``main.py``, ``README.md``, ``report.zip``); e-mail addresses are
not URLs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Final

from elicitguard.checks.domains._psl import is_known_tld

__all__ = ["find_urls_in_text"]

_TRAILING: Final = ".,;:!?'\"*_~>"
_SCHEME_URL_RE: Final = re.compile(
    r"(?i)(?<![A-Za-z0-9+.-])(?:[a-z][a-z0-9+.-]{1,30}://|www\.)[^\s<>\"'`\u3000]+"
)
_BARE_SCHEME_RE: Final = re.compile(
    r"(?i)(?<![A-Za-z0-9+.-])(?:javascript|vbscript|data|mailto|tel|sms|file|blob|intent):[^\s<>\"'`]+"
)
_BARE_DOMAIN_RE: Final = re.compile(
    r"(?<![A-Za-z0-9@._/-])((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([a-z]{2,24}))"
    r"(?::[0-9]{1,5})?(?:/[^\s<>\"'`]*)?(?![A-Za-z0-9@_-])"
)
# TLDs that are far more often file extensions or code in prose than links.
_FILE_LIKE_TLDS: Final = frozenset(
    [
        "md",
        "py",
        "sh",
        "rs",
        "pl",
        "zip",
        "mov",
        "so",
        "ps",
        "cc",
        "cs",
        "ai",
        "app",
        "dev",
        "mp",
        "js",
        "ts",
        "go",
        "rb",
        "pm",
        "pdf",
        "doc",
        "txt",
        "csv",
        "json",
        "yml",
        "yaml",
        "toml",
        "ini",
        "cfg",
        "log",
        "bak",
        "tmp",
        "jar",
        "exe",
        "dll",
        "bin",
        "img",
        "iso",
        "gz",
        "tar",
        "tgz",
        "xz",
        "bz2",
        "rar",
        "sql",
        "db",
        "lock",
        "html",
        "htm",
        "css",
        "scss",
        "xml",
        "svg",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "webp",
        "ico",
        "bmp",
        "tif",
        "tiff",
        "wav",
        "mp3",
        "mp4",
        "avi",
        "mkv",
        "swift",
        "kt",
        "java",
        "php",
        "lua",
        "vue",
        "jsx",
        "tsx",
        "ipynb",
        "nix",
        "sys",
        "ax",
        "az",
        "ms",
        "ml",
    ]
)


def _trim(candidate: str) -> str:
    text = candidate.rstrip(_TRAILING)
    for opener, closer in ("()", "[]", "{}"):
        while text.endswith(closer) and text.count(closer) > text.count(opener):
            text = text[:-1].rstrip(_TRAILING)
    return text


def _bare_domains(text: str, taken: list[tuple[int, int]]) -> Iterator[tuple[int, str]]:
    for match in _BARE_DOMAIN_RE.finditer(text):
        start = match.start()
        if any(a <= start < b for a, b in taken):
            continue
        tld = match.group(2)
        if tld in _FILE_LIKE_TLDS or not is_known_tld(tld):
            continue
        if match.group(1).count(".") == 1 and match.group(1)[0].isdigit():
            continue
        yield start, _trim(match.group(0))


def find_urls_in_text(text: str) -> list[str]:
    """URLs a renderer might make clickable in ``text``, in order of appearance.

    Finds ``scheme://`` URLs, ``www.`` links, bare ``javascript:``/``data:``/``mailto:``/
    ``tel:``-style URLs, and bare domains (``evil-login.com/reset``) whose top-level domain
    is real and not a common file extension. E-mail addresses are not reported.
    """
    # Every pattern needs a ``:`` (schemes) or a ``.`` (``www.``, bare domains): most form
    # titles and messages have neither, and skip three regex scans (issue 9, hot path).
    if ":" not in text and "." not in text:
        return []
    if len(text) <= 256:  # servers repeat their texts: titles, messages, descriptions
        return list(_cached_urls(text))
    return _find_urls(text)


@functools.lru_cache(maxsize=4096)
def _cached_urls(text: str) -> tuple[str, ...]:
    return tuple(_find_urls(text))


def _find_urls(text: str) -> list[str]:
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for regex in (_SCHEME_URL_RE, _BARE_SCHEME_RE):
        for match in regex.finditer(text):
            if any(a <= match.start() < b for a, b in taken):
                continue
            url = _trim(match.group(0))
            if len(url) > match.group(0).find(":") + 1:
                found.append((match.start(), url))
                taken.append((match.start(), match.end()))
    found.extend(_bare_domains(text, taken))
    return [url for _, url in sorted(found)]
