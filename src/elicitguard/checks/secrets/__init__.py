"""Secret detection: one catalogue of credential formats, scanned in linear time.

Why: URL mode exists so that credentials never pass through the MCP client; the URL checks
(EG303), the form-answer checks (EG2xx) and the identity checks all need to recognise a
credential in a string without sending it anywhere. This package is that one detector, split
by concept:

* ``_catalogue``: the formats of ``data/secrets.yaml``, compiled once for RE2;
* ``_validators``: entropy, JWT/PyPI/Discord structure, GitHub/npm CRC32 checksums;
* ``_placeholders``: templates, masks, documented examples and fillers;
* ``_keynames``: which key names carry credentials, and how sure a value under one is;
* ``_scan``: the scanner (keyword pass, candidate regexes, validators, dedupe);
* ``_decode``: bounded, repeated decoding of values that hide another value;
* ``_prose``: "my password is X" in many languages;
* ``_community``: the community-maintained catalogue, behind our validators;
* ``_answers``: everywhere a form answer or default can hide a credential.

Context-only secrets (a value whose only sign is its key name, e.g. ``password=hunter2``) are
judged by :func:`scan_value` with ``key_name``; entropy is used only where a key name or a
keyword supports it, never on free text alone. No message produced here ever contains a
secret value.
"""

from __future__ import annotations

from elicitguard.checks.secrets._answers import (
    HiddenSecret,
    hidden_secret,
    nested_secret,
    split_secret,
)
from elicitguard.checks.secrets._catalogue import catalogue, keywordless_min_length
from elicitguard.checks.secrets._community import (
    community_enabled,
    load_community,
    load_community_in_background,
    wait_for_community_load,
)
from elicitguard.checks.secrets._decode import json_inside
from elicitguard.checks.secrets._decode import readings as decoded_readings
from elicitguard.checks.secrets._keynames import is_secret_key_name, normalize_key_name
from elicitguard.checks.secrets._placeholders import has_filler_run, is_placeholder
from elicitguard.checks.secrets._prose import ProseSecret, prose_languages, scan_prose
from elicitguard.checks.secrets._scan import (
    could_match,
    keyword_prefilter,
    scan_glued,
    scan_text,
    scan_value,
    scan_whole_urls,
)
from elicitguard.checks.secrets._shapes import PUBLISHED_TEST_PANS, printed_card, seed_phrase
from elicitguard.checks.secrets._types import CatalogueEntry, SecretMatch
from elicitguard.checks.secrets._validators import base62_crc32, shannon_entropy

__all__ = [
    "PUBLISHED_TEST_PANS",
    "CatalogueEntry",
    "HiddenSecret",
    "ProseSecret",
    "SecretMatch",
    "base62_crc32",
    "catalogue",
    "community_enabled",
    "could_match",
    "decoded_readings",
    "has_filler_run",
    "hidden_secret",
    "is_placeholder",
    "is_secret_key_name",
    "json_inside",
    "keyword_prefilter",
    "keywordless_min_length",
    "load_community",
    "load_community_in_background",
    "nested_secret",
    "normalize_key_name",
    "printed_card",
    "prose_languages",
    "scan_glued",
    "scan_prose",
    "scan_text",
    "scan_value",
    "scan_whole_urls",
    "seed_phrase",
    "shannon_entropy",
    "split_secret",
    "wait_for_community_load",
]
