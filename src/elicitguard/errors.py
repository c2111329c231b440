"""The exception tree of elicitguard.

One base class, so that a caller can catch everything this package raises on purpose::

    ElicitguardError
    ├── PolicyError            a policy, rule pack or rule file cannot be used
    │   ├── PackLoadError      a file cannot be read or parsed (YAML syntax, aliases, size)
    │   ├── RuleSpecError      a rule or policy key is wrong (unknown key, bad value, bad regex)
    │   └── UnknownRuleError   a policy names a rule code that no loaded pack defines
    ├── FrameError             one message cannot be parsed or is over a limit
    ├── KeyConfigError         keys are missing or malformed where the setup requires them
    └── IdentityError          an identity check refused something (never a traffic value)
        ├── TokenError         a bearer token is missing, invalid, expired or not for us
        ├── StateError         a sealed requestState is tampered, expired, replayed or misused
        ├── BindingError       a URL-mode binding handle is unknown, expired, reused or not yours
        └── PassthroughBlocked an outbound call would forward a token it must not (EG601, EG604)

Every message names the file and line where there is one, and says what to write instead.
Messages never contain a value that came from traffic.
"""

from __future__ import annotations

__all__ = [
    "BindingError",
    "ElicitguardError",
    "FrameError",
    "IdentityError",
    "KeyConfigError",
    "PackLoadError",
    "PassthroughBlocked",
    "PolicyError",
    "RuleSpecError",
    "StateError",
    "TokenError",
    "UnknownRuleError",
]


class ElicitguardError(Exception):
    """Base of every error elicitguard raises on purpose."""


class PolicyError(ElicitguardError):
    """A policy or rule pack cannot be loaded; the message names file, line and the fix.

    ``more`` holds further errors found in the same pass (``policy validate`` reports every
    error of a file, not just the first); the text lists each on its own line.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        more: tuple[PolicyError, ...] = (),
    ) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.more = more
        where = ""
        if file is not None:
            where = f"{file}:{line}: " if line is not None else f"{file}: "
            if line is not None and column is not None:
                where = f"{file}:{line}:{column}: "
        super().__init__(f"{where}{message}" + "".join(f"\n{e}" for e in more))
        self.bare_message = message

    @property
    def all(self) -> tuple[PolicyError, ...]:
        """This error and the ones found with it, in file order."""
        return (self, *self.more)


class PackLoadError(PolicyError):
    """A rule or policy file cannot be read or parsed."""


class RuleSpecError(PolicyError):
    """A key or value in a rule or policy file is not valid."""


class UnknownRuleError(RuleSpecError):
    """A policy names a rule code that no loaded pack defines."""


class FrameError(ElicitguardError):
    """One message cannot be used: not JSON, too large, too deep, a batch, duplicate keys.

    ``kind`` is a stable slug (``too_large``, ``not_json``, ``too_deep``, ``not_object``,
    ``batch``, ``binary``, ``duplicate_keys``, ``bad_envelope``) that integrations and the
    linter map onto EG903-EG905.
    """

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(message)


class KeyConfigError(ElicitguardError):
    """Keys are missing, malformed, or random where a shared setup needs configured ones."""


class IdentityError(ElicitguardError):
    """An identity check refused something.

    ``reason`` is a stable slug (``expired``, ``wrong_audience``, ``replayed`` ...) for audit
    records and tests; ``code`` is the rule code it corresponds to, when there is one. The
    message is written for people and never holds a token, a handle or state.
    """

    def __init__(self, reason: str, message: str, *, code: str | None = None) -> None:
        self.reason = reason
        self.code = code
        super().__init__(message)


class TokenError(IdentityError):
    """A bearer token cannot be accepted; HTTP integrations answer 401 (or 400, 403).

    ``error`` is the RFC 6750 error code for ``WWW-Authenticate``: ``invalid_request``,
    ``invalid_token`` or ``insufficient_scope``; ``None`` when no token was sent at all.
    """

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        error: str | None = "invalid_token",
        code: str | None = None,
    ) -> None:
        self.error = error
        super().__init__(reason, message, code=code)


class StateError(IdentityError):
    """A sealed ``requestState`` failed verification; integrations answer -32602."""


class BindingError(IdentityError):
    """A URL-mode binding handle cannot be completed by this user (EG505)."""


class PassthroughBlocked(IdentityError):
    """An outbound call was refused: it would pass a token through or put one in a URL."""
