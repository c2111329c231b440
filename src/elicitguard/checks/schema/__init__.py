"""Per-era knowledge of elicitation's restricted JSON Schema and of ``ElicitResult`` content.

Why the project carries its own validator: the SDKs validate laxly and cannot be relied on for
policy (PROTOCOL.md c.2 and e.5). The ``mcp`` wire models accept nested ``{"type": "object"}``
properties and ``pattern``, reuse the 2025-11-25 model for 2025-06-18 (so URL mode and
``mode`` pass there) and never gate features by version. A general JSON Schema validator is no
help either: elicitation's schema is a *subset* of JSON Schema, defined per protocol era, and
the question is "is this schema inside the subset", not "does a value match this schema".

Everything here is a pure function over plain JSON values (``dict``, ``list``, ``str``,
``int``, ``float``, ``bool``, ``None``). Any input, of any type or size, gives a list of
:class:`SchemaIssue` and never raises. An issue carries a JSON pointer relative to the object
passed in and a detail in plain words that may name keys and keywords but never repeats a
string value, a default or a content value (those can be secrets).

The four checks and the rules that call them:

- :func:`schema_subset_issues` (EG106): ``requestedSchema`` outside the restricted subset.
- :func:`era_feature_issues` (EG108): request features the negotiated era lacks.
- :func:`result_shape_issues` (EG109): a malformed ``ElicitResult``.
- :func:`content_issues` (EG110): accepted content that does not match ``requestedSchema``.

Shape checks that hold in every era live in :func:`schema_subset_issues`; whatever one era
lacks (titled and multi-select enums, non-boolean defaults, ``$schema`` on 2025-06-18) is
reported only by :func:`era_feature_issues`, so one defect gives one finding.
"""

from __future__ import annotations

from elicitguard.checks.schema._content import content_issues
from elicitguard.checks.schema._eras import era_feature_issues
from elicitguard.checks.schema._issues import KINDS, MAX_ISSUES, SchemaIssue
from elicitguard.checks.schema._keywords import STRING_FORMATS
from elicitguard.checks.schema._results import result_shape_issues
from elicitguard.checks.schema._subset import schema_subset_issues

__all__ = [
    "KINDS",
    "MAX_ISSUES",
    "STRING_FORMATS",
    "SchemaIssue",
    "content_issues",
    "era_feature_issues",
    "result_shape_issues",
    "schema_subset_issues",
]
