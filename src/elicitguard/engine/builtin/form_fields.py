"""How the form rules (EG2xx) read a form: their shared settings, and each form's verdicts.

Why: every form rule takes the same params (``EG2*: {params: ...}`` sets them all) and reads
the same classifier verdicts; both are worked out here once, the settings once per compiled
rule (:func:`settings_of`) and the verdicts once per form and evaluation
(:func:`form_verdicts`, cached across evaluations for repeated forms), however many rules
read them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, Literal

import orjson
from pydantic import model_validator

from elicitguard.checks.forms import (
    ALL_LANGUAGES,
    FieldVerdict,
    classify_form,
)
from elicitguard.engine.context import CheckContext, CheckParams
from elicitguard.protocol.items import Item

__all__ = [
    "CACHED_FORM_BYTES",
    "RANK",
    "FormParams",
    "FormSettings",
    "field_label",
    "fires",
    "form_of",
    "form_verdicts",
    "properties_of",
    "settings_of",
]

Params = Mapping[str, Any]

#: The order of the classifier's confidences (``min_confidence`` compares by it).
RANK: Final = {"low": 0, "medium": 1, "high": 2}
_PARAM_KEYS: Final = frozenset(("languages", "extra_words", "allowed_fields", "min_confidence"))
_MAX_LABEL: Final = 64
CACHED_FORM_BYTES: Final = 16 << 10  # forms cached across evaluations are at most 16 KiB


@dataclass(frozen=True, slots=True)
class FormSettings:
    """The form rules' params, validated and hashable (a cache key for verdicts)."""

    languages: tuple[str, ...]
    extra: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...]
    allowed: frozenset[str]
    min_rank: int
    extra_words: Mapping[str, Mapping[str, Sequence[str]]] = field(
        default_factory=dict, compare=False, hash=False
    )


def _strings(value: object, where: str) -> tuple[str, ...]:
    """A list of strings from a param, or a clear error."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        msg = f"form rule param {where} must be a list of strings"
        raise ValueError(msg)
    return tuple(value)


def _parse(params: Params) -> FormSettings:
    """Validate params (names, types, languages) and freeze them."""
    unknown = sorted(set(params) - _PARAM_KEYS)
    if unknown:
        msg = f"unknown form rule param(s) {', '.join(unknown)}; use: {', '.join(sorted(_PARAM_KEYS))}"
        raise ValueError(msg)
    languages = _strings(params.get("languages", list(ALL_LANGUAGES)), "`languages`")
    if not languages:
        msg = "form rule param `languages` is empty; name at least one language"
        raise ValueError(msg)
    raw_extra = params.get("extra_words") or {}
    if not isinstance(raw_extra, Mapping) or not all(
        isinstance(groups, Mapping) for groups in raw_extra.values()
    ):
        msg = "form rule param `extra_words` must map languages to {class: [words]}"
        raise ValueError(msg)
    extra_words = {
        str(lang): {
            str(cls): _strings(words, f"`extra_words.{lang}.{cls}`")
            for cls, words in groups.items()
        }
        for lang, groups in raw_extra.items()
    }
    frozen = tuple(
        (lang, tuple(sorted(groups.items()))) for lang, groups in sorted(extra_words.items())
    )
    allowed = frozenset(_strings(params.get("allowed_fields", []), "`allowed_fields`"))
    level = params.get("min_confidence", "medium")
    if level not in RANK:
        msg = f"form rule param `min_confidence` is {level!r}; use low, medium or high"
        raise ValueError(msg)
    settings = FormSettings(languages, frozen, allowed, RANK[level], extra_words)
    # Compile the lexicons now: an unknown language or class fails here, named.
    classify_form({}, languages=settings.languages, extra_words=settings.extra_words)
    return settings


class FormParams(CheckParams):
    """The params every form rule takes (``EG2*: {params: ...}`` sets them all)."""

    languages: list[str] | None = None
    extra_words: dict[str, dict[str, list[str]]] | None = None
    allowed_fields: list[str] | None = None
    min_confidence: Literal["low", "medium", "high"] | None = None

    @model_validator(mode="after")
    def _compiles(self) -> FormParams:
        """The lexicons compile: an unknown language or word class is named now."""
        _parse(self.model_dump(exclude_none=True))
        return self


_SETTINGS: dict[int, tuple[Params, FormSettings]] = {}
_SETTINGS_MAX: Final = 256


def settings_of(params: Params) -> FormSettings:
    """The settings of one compiled rule's params (parsed once per params object).

    The cache keeps a reference to the params object it was keyed on, so an ``id`` is never
    reused while its entry lives.
    """
    held = _SETTINGS.get(id(params))
    if held is not None and held[0] is params:
        return held[1]
    settings = _parse(params)
    if len(_SETTINGS) >= _SETTINGS_MAX:
        _SETTINGS.pop(next(iter(_SETTINGS)), None)
    _SETTINGS[id(params)] = (params, settings)
    return settings


def field_label(key: str) -> str:
    """A property key fit for a message: quoted, truncated, no control characters."""
    clean = "".join(c if c.isprintable() else "?" for c in key[:_MAX_LABEL])
    return repr(clean + ("…" if len(key) > _MAX_LABEL else ""))


def form_of(item: Item) -> tuple[Mapping[str, Any], str] | None:
    """The request's ``requestedSchema`` and ``message``, when it has a schema."""
    data = item.data
    if not isinstance(data, Mapping):
        return None
    schema = data.get("requestedSchema")
    if not isinstance(schema, Mapping):
        return None
    message = data.get("message")
    return schema, message if isinstance(message, str) else ""


def properties_of(schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return {}
    return {str(k): v for k, v in props.items() if isinstance(v, Mapping)}


def form_verdicts(
    item: Item, ctx: CheckContext, settings: FormSettings, schema: Mapping[str, Any], message: str
) -> tuple[FieldVerdict, ...]:
    """The classifier's verdicts for one form: once per evaluation, and cached across them.

    Servers send the same forms again and again; keyed on the serialised schema, a repeated
    form costs one ``orjson.dumps`` instead of a walk over every property.
    """
    key = (id(item), id(schema), settings)
    memo: dict[Any, tuple[FieldVerdict, ...]] = ctx.cache.setdefault("forms.verdicts", {})
    cached = memo.get(key)
    if cached is None:
        try:
            blob = orjson.dumps(schema)
        except (TypeError, orjson.JSONEncodeError):
            cached = _classify(schema, message, settings)
        else:
            cached = (
                _classify_blob(blob, message, settings)
                if len(blob) + len(message) <= CACHED_FORM_BYTES
                else _classify(schema, message, settings)
            )
        memo[key] = cached
    return cached


@lru_cache(maxsize=512)
def _classify_blob(blob: bytes, message: str, settings: FormSettings) -> tuple[FieldVerdict, ...]:
    return _classify(orjson.loads(blob), message, settings)


def _classify(
    schema: Mapping[str, Any], message: str, settings: FormSettings
) -> tuple[FieldVerdict, ...]:
    return tuple(
        classify_form(
            schema,
            message=message or None,
            languages=settings.languages,
            extra_words=settings.extra_words,
            allowed_fields=settings.allowed,
        )
    )


def fires(verdict: FieldVerdict, settings: FormSettings) -> bool:
    return RANK[verdict.confidence] >= settings.min_rank
