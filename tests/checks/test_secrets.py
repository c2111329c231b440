"""Tests for the secret catalogue: every format compiles with RE2, finds its tokens, and
leaves benign look-alikes alone. Live-looking tokens are built at test time by
concatenation (never committed whole) and, where a format has a checksum, with a valid one."""

from __future__ import annotations

import random
import string

import pytest
import re2

from elicitguard.checks.secrets import (
    base62_crc32,
    catalogue,
    is_placeholder,
    is_secret_key_name,
    scan_text,
    scan_value,
)
from elicitguard.checks.secrets._catalogue import _compiled, _re2_options

RNG = random.Random(20240601)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def gh(prefix: str) -> str:
    body = rand(30)
    return prefix + "_" + body + base62_crc32(body)


def types(text: str) -> set[str]:
    return {m.type for m in scan_text(text)}


# --------------------------------------------------------------------------- catalogue


def test_catalogue_is_large_and_ids_unique():
    ids = [e.id for e in catalogue()]
    assert len(ids) >= 80
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("entry", catalogue(), ids=lambda e: e.id)
def test_every_pattern_compiles_with_re2(entry):
    re2.compile(entry.regex)
    re2.compile(entry.wrapped)


@pytest.mark.parametrize("entry", catalogue(), ids=lambda e: e.id)
def test_every_entry_is_documented(entry):
    assert entry.name
    assert entry.source
    assert all(k == k.lower() for k in entry.keywords)
    assert entry.keywords or entry.structure  # keyword-less formats must be validated


def test_all_patterns_compile_into_one_re2_set():
    combined = re2.Set.SearchSet(_re2_options())
    for entry in catalogue():
        combined.Add(entry.wrapped)
    combined.Compile()
    assert combined.Match("nothing to see here") in (None, [])


def test_keyword_prefilter_skips_ordinary_values():
    assert _compiled().candidates("ordinary-value-1234") == _compiled().always


# --------------------------------------------------------------------------- positives

POSITIVES = [
    # GitHub classic PAT with a valid CRC32 checksum
    (lambda: gh("gh" + "p"), "github-pat-classic"),
    # GitHub OAuth token
    (lambda: gh("gh" + "o"), "github-oauth-token"),
    # GitHub App installation token
    (lambda: gh("gh" + "s"), "github-server-to-server-token"),
    # fine-grained PAT
    (lambda: "github_" + "pat_" + rand(22) + "_" + rand(59), "github-fine-grained-pat"),
    # npm token (same CRC32 scheme)
    (lambda: gh("np" + "m"), "npm-access-token"),
    # GitLab PAT
    (lambda: "glp" + "at-" + rand(20), "gitlab-pat"),
    # AWS access key id
    (lambda: "AK" + "IA" + rand(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), "aws-access-key-id"),
    # AWS secret key with context
    (lambda: "aws_secret_access_key = " + rand(40, ALNUM + "/+"), "aws-secret-access-key"),
    # Google API key
    (lambda: "AI" + "za" + rand(35, ALNUM + "_-"), "gcp-api-key"),
    # Google OAuth client secret
    (lambda: "GOC" + "SPX-" + rand(28), "gcp-oauth-client-secret"),
    # Slack bot token
    (
        lambda: (
            "xo" + "xb-" + rand(11, string.digits) + "-" + rand(12, string.digits) + "-" + rand(24)
        ),
        "slack-token",
    ),
    # Slack webhook URL
    (
        lambda: (
            "https://hooks.slack"
            + ".com/services/T"
            + rand(8, string.ascii_uppercase)
            + "/B"
            + rand(8, string.ascii_uppercase)
            + "/"
            + rand(24)
        ),
        "slack-webhook-url",
    ),
    # Discord webhook URL
    (
        lambda: (
            "https://discord"
            + ".com/api/webhooks/"
            + rand(18, string.digits)
            + "/"
            + rand(68, ALNUM + "_-")
        ),
        "discord-webhook-url",
    ),
    # Stripe live secret key
    (lambda: "sk_" + "live_" + rand(24), "stripe-live-secret-key"),
    # Stripe test key (medium)
    (lambda: "sk_" + "test_" + rand(24), "stripe-test-secret-key"),
    # SendGrid
    (lambda: "S" + "G." + rand(22) + "." + rand(43), "sendgrid-api-key"),
    # Twilio API key
    (lambda: "S" + "K" + rand(32, HEX), "twilio-api-key"),
    # OpenAI legacy key with the T3BlbkFJ marker
    (lambda: "sk-" + rand(20) + "T3Blbk" + "FJ" + rand(20), "openai-api-key"),
    # Anthropic key
    (lambda: "sk-" + "ant-api03-" + rand(93, ALNUM + "_-") + "AA", "anthropic-api-key"),
    # Hugging Face
    (lambda: "h" + "f_" + rand(34, string.ascii_letters), "huggingface-token"),
    # PyPI token: macaroon v2 with location pypi.org
    (lambda: "py" + "pi-AgEIcHlwaS5vcmc" + rand(60, ALNUM + "_-"), "pypi-upload-token"),
    # JWT (structure checked)
    (
        lambda: (
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwiaWF0IjoxNTE2MjM5MDIyfQ."
            + rand(43, ALNUM + "_-")
        ),
        "jwt",
    ),
    # PEM private key
    (
        lambda: (
            "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEow" + rand(60, ALNUM + "+/") + "\n-----END"
        ),
        "private-key",
    ),
    # OpenSSH private key
    (
        lambda: (
            "-----BEGIN OPENSSH "
            + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"
            + rand(60, ALNUM + "+/")
        ),
        "private-key",
    ),
    # PuTTY key file: the private lines after the public ones
    (
        lambda: (
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 2\n"
            + rand(64, ALNUM + "+/")
            + "\nPrivate-Lines: 1\n"
            + rand(48, ALNUM + "+/")
            + "\nPrivate-MAC: "
            + rand(64, HEX)
        ),
        "putty-private-key",
    ),
    # Postgres URL with password
    (lambda: "postgres://app:" + rand(14) + "@db.internal:5432/prod", "database-url-password"),
    # MongoDB SRV URL with password
    (
        lambda: "mongodb+srv://admin:" + rand(12) + "@cluster0.mongodb.net/db",
        "database-url-password",
    ),
    # generic URL with basic auth
    (lambda: "https://deploy:" + rand(12) + "@git.example.com/repo.git", "url-basic-auth"),
    # Telegram bot token inside a Bot API URL path
    (
        lambda: (
            "https://api.telegram.org/bot"
            + rand(9, string.digits)
            + ":AA"
            + rand(33, ALNUM + "_-")
            + "/getMe"
        ),
        "telegram-bot-token",
    ),
    # Authorization header with a bearer token
    (lambda: "Authorization: Bearer " + rand(40, ALNUM + "._-"), "authorization-header"),
    # DigitalOcean
    (lambda: "do" + "p_v1_" + rand(64, HEX), "digitalocean-token"),
    # Shopify
    (lambda: "shp" + "at_" + rand(32, HEX), "shopify-token"),
    # Vault
    (lambda: "hv" + "s." + rand(90, ALNUM + "_-"), "hashicorp-vault-token"),
    # Mailchimp
    (lambda: rand(32, HEX) + "-us" + "12", "mailchimp-api-key"),
    # Azure storage connection string
    (
        lambda: (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
            + rand(86, ALNUM + "+/")
            + "=="
        ),
        "azure-storage-account-key",
    ),
    # age secret key (Bech32 alphabet)
    (
        lambda: "AGE-SECRET" + "-KEY-1" + rand(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
        "age-secret-key",
    ),
    # Docker Hub
    (lambda: "dckr" + "_pat_" + rand(27, ALNUM + "_-"), "dockerhub-token"),
    # Generic assignment with a secret-named key
    (lambda: 'client_secret: "' + rand(32) + '"', "generic-secret-assignment"),
    # Databricks
    (lambda: "da" + "pi" + rand(32, HEX), "databricks-token"),
    # Groq
    (lambda: "gs" + "k_" + rand(52), "groq-api-key"),
    # LaunchDarkly (a version-4 UUID's shape after the prefix)
    (
        lambda: (
            "sd"
            + "k-"
            + "-".join((rand(8, HEX), rand(4, HEX), "4" + rand(3, HEX)))
            + "-"
            + rand(4, HEX)
            + "-"
            + rand(12, HEX)
        ),
        "launchdarkly-key",
    ),
    # Langfuse secret key
    (
        lambda: (
            "sk"
            + "-lf-"
            + "-".join((rand(8, HEX), rand(4, HEX), rand(4, HEX), rand(4, HEX)))
            + "-"
            + rand(12, HEX)
        ),
        "langfuse-secret-key",
    ),
    # AWS AppSync
    (lambda: "da" + "2-" + rand(26, string.ascii_lowercase + string.digits), "aws-appsync-api-key"),
]


@pytest.mark.parametrize(
    ("make", "expected"), POSITIVES, ids=[p[1] + str(i) for i, p in enumerate(POSITIVES)]
)
def test_format_found_in_text(make, expected):
    token = make()
    assert expected in types("value: " + token + " end")


@pytest.mark.parametrize(("make", "expected"), POSITIVES[:20], ids=[p[1] for p in POSITIVES[:20]])
def test_format_found_in_long_text(make, expected):
    # the combined set must still answer on large inputs (no silent DFA give-up)
    filler = " ".join(rand(8, string.ascii_lowercase) for _ in range(4000))
    assert expected in types(filler + " " + make() + " " + filler)


def test_github_checksum_sets_confidence():
    good = gh("gh" + "p")
    bad = good[:-6] + ("AAAAAA" if not good.endswith("AAAAAA") else "BBBBBB")
    assert [m.confidence for m in scan_text(good)] == ["high"]
    assert [m.confidence for m in scan_text(bad)] == ["medium"]


def test_match_positions_and_repr_hide_value():
    token = gh("gh" + "p")
    text = "x=" + token + "&y=1"
    (match,) = scan_text(text)
    assert text[match.start : match.end] == token == match.value
    assert token not in repr(match)


# --------------------------------------------------------------------------- negatives

NEGATIVES = [
    "AKIAIOSFODNN7EXAMPLE",  # AWS documentation example key
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # AWS documentation example secret
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # same, with context
    "ghp_" + "x" * 36,  # filler after a real prefix
    "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789",  # alphabet filler
    "sk_live_" + "0" * 24,  # zeros
    "${GITHUB_TOKEN}",  # template
    "postgres://user:${DB_PASSWORD}@db:5432/app",  # templated password
    "postgres://user:<password>@db:5432/app",  # placeholder password
    "https://github.com/openai/openai-python/commit/9f2b6c1e0d3a4b5c6d7e8f90a1b2c3d4e5f60718",  # git SHA
    "550e8400-e29b-41d4-a716-446655440000",  # UUID
    "The quick brown fox jumps over the lazy dog",  # prose
    "max_tokens: 4096",  # benign key, number
    "page_token: CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0aHM2aTZwGgA",  # pagination token
    "public_key: MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE",  # public key
    "token_type: Bearer",  # token type
    "eyJub3QiOiJhIGp3dCJ9.eyJhIjoxfQ",  # two parts only, not a JWT
    "password: ********",  # mask
    "api_key: your_api_key_here",  # placeholder
    "secret_santa_opt_in: true",  # benign secret word
    "Use -----BEGIN PUBLIC KEY----- blocks",  # public key, not private
    "sha256:" + "a3f5" * 16,  # container digest
    "https://cdn.example.com/img/8f14e45fceea167a5a36dedd4bea2543.webp",  # CDN hash
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_benign_text_is_not_flagged(text):
    assert scan_text(text) == []


# --------------------------------------------------------------------------- scan_value

VALUES = [
    # (value, key, expected types) — context-aware judgement per component
    ("hunter22", "password", {"password-under-key"}),  # any real password under password
    ("hunter22", "db_password", {"password-under-key"}),  # suffix
    ("8f14e45fceea167a5a36dedd4bea2543", "token", {"secret-under-key"}),  # opaque token
    ("8f14e45fceea167a5a36dedd4bea2543", "access_token", {"secret-under-key"}),
    ("s%3A8f14e45fceea167a5a36dedd4bea2543.Zk9", "sid", {"secret-under-key"}),  # session id
    ("550e8400-e29b-41d4-a716-446655440000", "api_key", {"secret-under-key"}),  # UUID keys are keys
    ("af0ifjsldkj8Hq3", "state", set()),  # OAuth state
    ("n-0S6_WzA2Mj", "nonce", set()),  # OIDC nonce
    ("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge", set()),  # PKCE
    ("s6BhdRkqt3", "client_id", set()),  # client id
    ("newsletter", "utm_source", set()),  # tracking
    ("CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0aHM2aTZwGgA", "page_token", set()),  # pagination
    ("CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0aHM2aTZwGgA", "nextPageToken", set()),  # camelCase pagination
    ("550e8400-e29b-41d4-a716-446655440000", "elicitationId", set()),  # opaque elicitation id
    ("your-token-here", "token", set()),  # placeholder
    ("changeme", "password", set()),  # placeholder password
    ("1", "session", set()),  # flag, not a session
    ("expired", "session", set()),  # word
    ("bearer", "token_type", set()),  # token type
    ("/home/user", "pwd", set()),  # working directory
    ("uploads/2024/photo.jpg", "key", set()),  # object key
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdGF0ZSI6MX0.c2lnbmF0dXJlLXZhbHVlLTEyMzQ1",
        "state",
        set(),
    ),  # signed state JWT
]


@pytest.mark.parametrize(("value", "key", "expected"), VALUES)
def test_scan_value_with_key_context(value, key, expected):
    assert {m.type for m in scan_value(value, key)} == expected


def test_catalogue_secret_found_under_benign_key():
    token = gh("gh" + "p")
    assert {m.type for m in scan_value(token, "state")} == {"github-pat-classic"}


# --------------------------------------------------------------------------- key names


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("password", True),
        ("access_token", True),
        ("accessToken", True),
        ("X-Api-Key", True),
        ("github_token", True),
        ("stripeSecretKey", True),
        ("client_secret", True),
        ("jsessionid", True),
        ("PHPSESSID", True),
        ("refresh_token", True),
        ("state", False),
        ("nonce", False),
        ("client_id", False),
        ("redirect_uri", False),
        ("scope", False),
        ("utm_source", False),
        ("page_token", False),
        ("NextToken", False),
        ("csrf_token", False),
        ("max_tokens", False),
        ("token_count", False),
        ("public_key", False),
        ("key_id", False),
        ("password_policy", False),
        ("secret_santa_opt_in", False),
        ("keyboard", False),
        ("author", False),
        ("elicitationId", False),
        ("eg_bind", False),
        # a link word: the name is its head, the secret noun only what the head is for
        ("keyVaultToStoreSecrets", False),
        ("path_to_secret", False),
        ("urlForToken", False),
        ("token_for_github", True),
        ("passwordForAdmin", True),
        ("sign_in_password", True),
    ],
)
def test_is_secret_key_name(name, expected):
    assert is_secret_key_name(name) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("${API_KEY}", True),
        ("{{ token }}", True),
        ("%TOKEN%", True),
        ("$TOKEN", True),
        ("<your-token>", True),
        ("xxxxxxxxxxxx", True),
        ("********", True),
        ("AKIAIOSFODNN7EXAMPLE", True),
        ("your_api_key_here", True),
        ("REDACTED", True),
        ("aaaaaaaaaaaa", True),
        ("1234567890", True),
        ("hunter22", False),
        ("8f14e45fceea167a5a36dedd4bea2543", False),
        ("s3cr3t-Pa55", False),
    ],
)
def test_is_placeholder(value, expected):
    assert is_placeholder(value) is expected


# --------------------------------------------------------------------------- community catalogue


def test_community_catalogue_finds_formats_ours_lacks() -> None:
    from elicitguard.checks.secrets._community import community_scan

    token = "xkeysib-" + rand(64, HEX) + "-" + rand(16)
    assert scan_text(token) == []
    found = community_scan("here: " + token)
    assert found
    assert found[0].type.startswith("community:")
    assert found[0].value == token


def test_community_finds_pass_our_validators() -> None:
    from elicitguard.checks.secrets._community import _validated

    assert _validated("betterleaks.generic-api-key", "abcdefghijklmnopqrstuvwxyz123456") is None
    assert _validated("betterleaks.jwt", "eyJ" + rand(30) + "." + rand(30) + "." + rand(20)) is None
    assert _validated("betterleaks.azure-client-id", rand(32)) is None
    assert _validated("betterleaks.github-pat", "ghp_" + rand(36)) == "medium"
    assert _validated("betterleaks.github-pat", gh("ghp")) == "high"


def test_community_catalogue_can_be_switched_off_explicitly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from elicitguard.checks.secrets._community import ENV_SWITCH, community_scan

    monkeypatch.setenv(ENV_SWITCH, "0")
    assert community_scan("here: xkeysib-" + rand(64, HEX) + "-" + rand(16)) == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("amadeus ey6U46qCx26dqzMVWAGiibt6m65mM5w9", True),  # a line: a word, then a token
        ("<id>{agora 3devtbiys8b282kidr9u78kjq8xdtlo1}</id>", True),
        ("bitfinex bdiODwPukXLKUjSLvfeTlKVEwm89zqOhQ2a9chacKcr\n", True),
        ("see ey6U46qCx26dqzMVWAGiibt6m65mM5w9", False),  # a word of no service
        ("Reference 8f7Gk2LqZ9xW3mN5vB1cR6tY4hJ0sD", False),  # a booking reference
        ("Folder 1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuV", False),  # a thing referred to by its id
        ("board: 5f1c9a8b7d6e5f4a3b2c1d0eAbCdEfGh", False),
        ("steam ey6U46qCx26dqzMVWAGiibt6m65mM5w9", True),  # a service, not "team"
        ("the report ey6U46qCx26dqzMVWAGiibt6m65mM5w9 was long", False),  # inside a sentence
        ("amadeus ey6U46qCx26dqz", False),  # too short for a service the catalogue lacks
        ("commit 9fceb02d0ae598e95dc970b74767f19372d61af8", False),  # a hash
        (
            "sumOfExposures = 3Kof2VffNQ0QgYIhXUPJosVlCaQKm2hfpWE6F1fT9YGY74blQBIPsrkCcf1TwKE5;",
            False,
        ),
    ],
)
def test_a_token_noted_down_after_a_service_name(text: str, found: bool) -> None:
    from elicitguard.checks.secrets._community import vendor_labelled_scan

    assert bool(vendor_labelled_scan(text)) is found


# --------------------------------------------------------------------------- documented formats

DOCUMENTED = [
    (lambda: "walkscore SECRET " + rand(32, HEX), "labelled-token"),
    (lambda: "acmecrm-PRIVATE-" + rand(40), "labelled-token"),
    (lambda: "boxTOKEN " + rand(32), "labelled-token"),
    (lambda: "PDFLAYER_SECRET=0123456789abcdef" + rand(16, HEX), "generic-secret-assignment"),
    (lambda: "$2y$12$" + rand(53, ALNUM + "./"), "password-hash"),
    (lambda: "$6$" + rand(8) + "$" + rand(86, ALNUM + "./"), "password-hash"),
    (lambda: "$1$" + rand(8) + "$" + rand(22, ALNUM + "./"), "password-hash"),
    (
        lambda: "kind: Secret\ndata:\n  password: " + rand(24) + "=\n",
        "kubernetes-secret-data",
    ),
    (
        lambda: "data:\n  token: " + rand(24) + "=\nmetadata:\n  name: x\nkind: Secret\n",
        "kubernetes-secret-data",
    ),
    (lambda: "tkn" + ".v1_" + rand(60) + "=", "teamwork-token"),
    (lambda: "od" + "t_" + rand(32), "dependency-track-key"),
    (lambda: "mdb_sa" + "_sk_" + rand(40), "mongodb-atlas-service-account-secret"),
    (lambda: "NF" + "-" + rand(32), "nightfall-key"),
    (lambda: "BB" + "FF-" + rand(30), "ubidots-token"),
    (lambda: "1000." + rand(32, HEX) + "." + rand(32, HEX), "zoho-oauth-token"),
    (lambda: "00D" + rand(15) + "!" + rand(90), "salesforce-access-token"),
    (lambda: "sl" + "k_" + rand(64, HEX), "sourcegraph-license-key"),
    (lambda: "KEY" + rand(32, HEX.upper()) + "_" + rand(22), "telnyx-api-key"),
    (lambda: "Authorization: SSWS 00" + rand(40), "authorization-header"),
    (lambda: '<add key="ClearTextPassword" value="' + rand(14) + '" />', "config-add-key-value"),
]


@pytest.mark.parametrize(
    ("make", "expected"), DOCUMENTED, ids=[p[1] + str(i) for i, p in enumerate(DOCUMENTED)]
)
def test_documented_format_found(make, expected):
    assert expected in types("value: " + make() + " end")


@pytest.mark.parametrize(
    "text",
    [
        "public key " + "3f9a7c21d8e04b6a9c5f1e2d7b8a0c4e",  # a public key is no secret
        "primary key order_2026_07_28",
        "spotify_secret = abcdefghijklmnopqrstuvwxyz123456",  # half an alphabet: filler
        "password: ENC[AES256_GCM,data:W3PiZ6lD6bpfAdI=,type:str]",  # SOPS ciphertext
        "key: secret/payments",  # a vault path
        '"https://build.internal:8000";@ops',  # a port, then an unrelated @
        "access v1.22.3-beta.1+build.2026",  # a version
        "kind: ExternalSecret\nspec:\n  data:\n    - secretKey: password\n",
        '<add key="Environment" value="Production-2026" />',
    ],
)
def test_documented_format_traps_not_flagged(text):
    assert scan_text(text) == []
