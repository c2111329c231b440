"""Host analysis for EG4xx: IDN homographs, look-alikes, deceptive host forms, hidden characters.

This package is a pure library (no I/O beyond reading its bundled data, never the network):

* :func:`analyze_host` decodes and validates a host (UTS 46 / IDNA 2008), finds its registrable
  domain in the bundled Public Suffix List, recognises IP literals in every browser-accepted
  form, and reports issues per Chromium's IDN display policy (the anchor, see
  ``shared/DETECTION.md`` section 1) plus skeleton look-alikes of protected domains.
* :func:`find_invisible_or_deceptive_chars` scans a whole URL string for bidi controls,
  invisible characters and slash/dot/delimiter look-alikes (EG405).
* :func:`userinfo_looks_like_host` tells whether URL userinfo imitates a host (EG406).
* :func:`registrable_domain` is the eTLD+1 helper the consent view highlights.
* :func:`script_of` is a character's Unicode script code (the consent view names scripts).

Issue kinds map to rules: ``internationalised`` EG401, ``mixed_script`` EG402,
``whole_script_confusable`` EG403, ``lookalike`` EG404, ``deceptive_form`` EG406,
``invalid_idn`` EG407; EG405 comes from :func:`find_invisible_or_deceptive_chars`.
A legitimate IDN yields only ``internationalised``.
"""

from __future__ import annotations

from elicitguard.checks.domains._chars import CharIssue, find_invisible_or_deceptive_chars
from elicitguard.checks.domains._host import (
    HostAnalysis,
    HostIssue,
    HostIssueKind,
    analyze_host,
    bundled_protected_domains,
    registrable_domain,
)
from elicitguard.checks.domains._path import protected_in_path
from elicitguard.checks.domains._unicode import script as script_of
from elicitguard.checks.domains._userinfo import userinfo_looks_like_host

__all__ = [
    "CharIssue",
    "HostAnalysis",
    "HostIssue",
    "HostIssueKind",
    "analyze_host",
    "bundled_protected_domains",
    "find_invisible_or_deceptive_chars",
    "protected_in_path",
    "registrable_domain",
    "script_of",
    "userinfo_looks_like_host",
]
