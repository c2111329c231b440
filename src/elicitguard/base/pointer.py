"""JSON pointers (RFC 6901): the one escaping every layer uses for findings' pointers.

A finding's pointer names where in a message the problem is (``/params/requestedSchema/
properties/a~1b``); the extractor, the checks, the redaction of answers and the reporters
must all spell a key the same way, or a redaction misses the key a finding named.
"""

from __future__ import annotations

__all__ = ["escape_pointer", "pointer_tokens", "unescape_pointer"]


def escape_pointer(key: object) -> str:
    """One reference token: ``~`` becomes ``~0`` first, then ``/`` becomes ``~1``."""
    return str(key).replace("~", "~0").replace("/", "~1")


def unescape_pointer(token: str) -> str:
    """The key a reference token names: ``~1`` becomes ``/`` first, then ``~0`` becomes ``~``."""
    return token.replace("~1", "/").replace("~0", "~")


def pointer_tokens(pointer: str) -> list[str]:
    """The keys of a pointer, unescaped (``""`` is the whole document: no keys)."""
    return [unescape_pointer(t) for t in pointer.split("/")[1:]]
