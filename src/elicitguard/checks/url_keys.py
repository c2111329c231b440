"""What a URL parameter's name says, decided once per name for every URL check.

Why: parameter names repeat across URLs (``state``, ``client_id``, ``eg_bind``) while values
do not, so EG303-EG306 look a name up here (:func:`key_profile`) instead of normalising it
per check. The name tables each check consults live here too, beside the profile that
reads them.
"""

from __future__ import annotations

import functools
from typing import Final, NamedTuple

from elicitguard.checks.pii import pii_context
from elicitguard.checks.secrets import is_secret_key_name, normalize_key_name

__all__ = ["BIND_PARAM", "OAUTH_CODE_KEYS", "KeyProfile", "key_profile"]

#: The parameter that carries elicitguard's own binding handle (never a finding).
BIND_PARAM: Final = "eg_bind"
OAUTH_CODE_KEYS: Final = frozenset({"code", "authorization_code", "auth_code"})

_PII_SKIP_KEYS: Final = frozenset(
    {BIND_PARAM, "state", "nonce", "code_challenge", "code", "client_id"}
)

_HANDLE_KEYS: Final = frozenset(
    {
        "state",
        "handle",
        "flow",
        "flow_id",
        "session",
        "session_id",
        "sid",
        "txn",
        "transaction",
        "transaction_id",
        "ticket",
        "nonce",
        "request_id",
        "req",
        "elicitation",
        "elicitation_id",
        "bind",
        "binding",
        "correlation_id",
        "challenge",
        "token",
        "id",
        "uuid",
        "ref",
        "reference",
        "continue",
        "attempt",
        "login_challenge",
        "consent_challenge",
    }
)

_ONE_TIME_KEYS: Final = frozenset(
    {
        "reset_password_token",
        "password_reset_token",
        "reset_token",
        "confirmation_token",
        "unlock_token",
        "invitation_token",
        "invite_token",
        "magic_token",
        "magic_link_token",
        "login_token",
        "sign_in_token",
        "signin_token",
        "email_token",
        "verification_token",
        "passwordless_token",
        "one_time_token",
        "ott",
        "otp_token",
        "login_ticket",
        "clerk_ticket",
        "auth_ticket",
        "activation_token",
        "activation_key",
    }
)
_LINK_TOKEN_KEYS: Final = frozenset(
    {
        "token",
        "t",
        "key",
        "k",
        "hash",
        "h",
        "sig",
        "signature",
        "ticket",
        "otp",
        "auth",
        "secret",
        "login",
        "link",
        "magic",
        "uid_token",
        "token_hash",
    }
)


class KeyProfile(NamedTuple):
    """What each check needs to know about one parameter name, decided once per name.

    Parameter names repeat across URLs (``state``, ``client_id``, ``eg_bind``) while values
    do not, so the loops above look a name up here instead of normalising it per check.
    """

    telling: bool  # EG303 may report its value without a catalogue format
    bind: bool  # the eg_bind handle
    pii_skip: bool  # EG304 never looks at it (OAuth state and handles)
    pii_context: bool  # the name announces personal data (``email``, ``phone`` …)
    handle: bool  # EG306: a state- or handle-like name
    one_time: bool  # EG305: a one-time login or reset token name
    link_token: bool  # EG305: a token name in a magic link


@functools.lru_cache(maxsize=4096)
def key_profile(name: str) -> KeyProfile:
    lower = name.lower()
    normal = normalize_key_name(name)
    return KeyProfile(
        telling=is_secret_key_name(name) or normal in OAUTH_CODE_KEYS,
        bind=lower == BIND_PARAM,
        pii_skip=lower in _PII_SKIP_KEYS,
        pii_context=pii_context(name) is not None,
        handle=normal in _HANDLE_KEYS,
        one_time=normal.lstrip("_") in _ONE_TIME_KEYS,
        link_token=lower in _LINK_TOKEN_KEYS,
    )
