"""Linear time: every regex catalogue is RE2, and adversarial inputs stay cheap.

tests/checks/test_secrets.py compiles the secrets catalogue with google-re2; this adds the
forms lexicon, user ``match: regex`` (RE2 by construction, backtracking syntax refused), an
inventory of the package's remaining Python ``re`` patterns (each reviewed: fixed-width
lookarounds, bounded repeats, or only used with ``fullmatch`` on capped input), and the
adversarial table of benchmarks/bench_adversarial.py at 128 KiB with a time bound.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
import time
from pathlib import Path

import pytest
import re2

import elicitguard
from elicitguard.checks.forms import compile_lexicon
from elicitguard.engine.match import _operator
from elicitguard.engine.models import MatchExpr
from elicitguard.errors import RuleSpecError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_adversarial

#: Python ``re`` patterns RE2 cannot express, reviewed for linear behaviour where they are used.
REVIEWED_NON_RE2 = frozenset(
    {
        "elicitguard.checks.redirect_params._WEB_TARGET",  # anchored match, one lookahead char
        "elicitguard.commands._help._EMPHASIS",  # our own help strings only, never peer input
        "elicitguard.protocol.surrogates._SURROGATE",  # one character class: linear
        "elicitguard.audit.processors._SENSITIVE_KEY",
        "elicitguard.checks.forms._message._SENTENCE_END",
        # a bounded character reference or the reviewed sentence end above
        "elicitguard.checks.forms._message._SENTENCE_CUT",
        "elicitguard.checks.forms._reveal._SPACED",  # each repeat consumes two fixed characters
        "elicitguard.checks.forms._reveal._SPACED_PAIR",
        "elicitguard.checks.forms._reveal._INNER_MARK",  # one character between two lookarounds
        "elicitguard.checks.forms._reveal._LEET_POSSESSIVE",  # two fixed characters after a lookbehind
        "elicitguard.checks.forms._reveal._LONG_WORD",  # one letter class between two lookarounds
        # pieces of at most three letters between separators: a run matches whole or fails
        # within three pieces, and the scan resumes after it
        "elicitguard.checks.forms._reveal._CHUNKED",
        "elicitguard.checks.forms._text._CAMEL",
        "elicitguard.checks.forms._text._LETTER_DIGIT",
        "elicitguard.checks.pii._EMAIL_RE",
        "elicitguard.checks.pii._CARD_RE",
        "elicitguard.checks.pii._IBAN_RE",
        "elicitguard.checks.pii._SSN_DASHED_RE",
        "elicitguard.checks.pii._SSN_BARE_RE",
        "elicitguard.checks.pii._UUID_RE",
        "elicitguard.checks.pii._LETTER_SHAPE_RE",  # a one-character lookbehind, fixed lengths
        "elicitguard.checks.secrets._keynames._CAMEL_RE",
        "elicitguard.checks.secrets._decode._WRAPPED_RE",  # fixed lookbehind, one run ahead
        # one-char lookarounds, a quote and its back-reference, possessive runs of spaces
        "elicitguard.checks.secrets._decode._CONCAT_RE",
        "elicitguard.checks.forms._reveal._TAG_INSIDE",  # one-char lookarounds, bounded tag
        "elicitguard.checks.forms._reveal._MARKDOWN_INSIDE",  # one-char lookarounds, {1,3}
        "elicitguard.checks.forms._reveal._NUMBER_SIGN",  # one-char lookarounds
        "elicitguard.checks.forms._reveal._MARKED_LATIN",  # a letter and a run of marks (\u ranges)
        "elicitguard.checks.secrets._placeholders._CAMEL_SPLIT_RE",  # a lookahead of one class
        "elicitguard.checks.secrets._placeholders._TEMPLATE_INSIDE_RE",  # one-char lookarounds
        "elicitguard.checks.secrets._placeholders._ASSET_SUFFIX_RE",  # anchored alternation, one-char lookahead
        "elicitguard.checks.secrets._scan._PAIR_VALUE_RE",  # anchored, bounded repeats, on 40 characters
        "elicitguard.checks.urls._CONTROL_OR_SPACE_RE",
        "elicitguard.checks.urls._BAD_PERCENT_RE",
        "elicitguard.checks.url_text._SCHEME_URL_RE",
        "elicitguard.checks.url_text._BARE_SCHEME_RE",
        "elicitguard.checks.url_text._BARE_DOMAIN_RE",
        "elicitguard.engine.policy._LABEL",
        "elicitguard.integrations.outcomes._ID",
    }
)


def _non_re2_patterns() -> set[str]:
    names = set()
    for info in pkgutil.walk_packages(elicitguard.__path__, "elicitguard."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                try:
                    re2.compile(value.pattern)
                except (re2.error, UnicodeEncodeError):  # RE2 cannot hold lone surrogates
                    names.add(f"{info.name}.{name}")
    return names


def test_every_non_re2_pattern_was_reviewed() -> None:
    """A new backtracking-engine pattern fails here until it is reviewed (or written in RE2)."""
    assert _non_re2_patterns() <= REVIEWED_NON_RE2


@pytest.mark.parametrize("lang", ["en", "de", "fr", "es", "ja", "zh-Hans", "zh-Hant"])
def test_every_lexicon_compiles_to_one_re2_pattern(lang: str) -> None:
    """Each language's form lexicon is one RE2 alternation (linear in the text)."""
    assert isinstance(compile_lexicon((lang,)).pattern, re2._Regexp)


@pytest.mark.parametrize("regex", [r"(a)\1", r"(?=a)a", r"(?<!x)a", r"a++"])
def test_user_regex_with_backtracking_syntax_is_refused(regex: str) -> None:
    """Backreferences, lookaround and possessive repeats are refused with a clear error."""
    with pytest.raises(RuleSpecError, match="RE2"):
        _operator(MatchExpr(field="message", regex=regex), "message", "p.yaml")


def test_adversarial_inputs_stay_cheap() -> None:
    """Every catalogue scan and user regex handles each 128 KiB adversarial input in < 2 s."""
    slow = [
        (scanner, name, round(seconds, 2))
        for scanner, name, seconds in bench_adversarial.measure(128 * 1024)
        if seconds > 2.0
    ]
    assert not slow


def test_user_regex_time_is_linear() -> None:
    """A classic catastrophic regex takes about twice as long on twice the input, not 2^n."""
    test = _operator(MatchExpr(field="message", regex=r"(a+)+$"), "message", None)
    started = time.perf_counter()
    test("a" * 200_000 + "!", None)  # type: ignore[arg-type]
    assert time.perf_counter() - started < 1.0
