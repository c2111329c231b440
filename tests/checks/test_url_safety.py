"""Tests for the URL-mode checks EG301-EG306: threat classes and benign look-alikes.

Live-looking tokens are assembled at test time so no committed line holds one whole."""

from __future__ import annotations

import random
import string
import time

import pytest

from elicitguard.checks.secrets import base62_crc32
from elicitguard.checks.url_safety import (
    binding_handle,
    credentials_in_url,
    insecure_scheme,
    invalid_url,
    pii_in_url,
    preauthenticated_url,
)
from elicitguard.checks.urls import parse_url

RNG = random.Random(7)
ALNUM = string.ascii_letters + string.digits
DEV = ["localhost", "127.0.0.0/8", "::1"]


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def ghp() -> str:
    body = rand(30)
    return "gh" + "p_" + body + base62_crc32(body)


HEX64 = rand(64, "0123456789abcdef")
AKID = "AK" + "IA" + rand(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")


# --------------------------------------------------------------------------- EG301


@pytest.mark.parametrize(
    ("url", "env", "kind"),
    [
        ("http://example.com/", "prod", "plain-http"),  # http outside dev
        ("http://localhost:3000/cb", "prod", "plain-http"),  # loopback is not enough in prod
        ("http://localhost.example.com/", "dev", "plain-http"),  # suffix trick
        ("http://127.0.0.1.nip.io/", "dev", "plain-http"),  # wildcard DNS trick
        ("http://0.0.0.0:8080/", "dev", "plain-http"),  # not loopback
        ("http://192.168.1.20/", "dev", "plain-http"),  # private range
        ("http://localhost@evil.example/", "dev", "plain-http"),  # userinfo trick
        ("http://[::ffff:c0a8:114]/", "dev", "plain-http"),  # mapped 192.168.1.20: private
        ("javascript:alert(document.cookie)", "dev", "dangerous-scheme"),
        ("JavaScript:alert(1)", "prod", "dangerous-scheme"),  # case-insensitive
        ("data:text/html,<script>alert(1)</script>", "prod", "dangerous-scheme"),
        ("file:///etc/passwd", "dev", "dangerous-scheme"),
        ("vbscript:msgbox(1)", "prod", "dangerous-scheme"),
        ("ftp://files.example.com/x", "prod", "dangerous-scheme"),
        ("ws://localhost:8080/", "dev", "dangerous-scheme"),
        ("wss://example.com/socket", "prod", "non-https-scheme"),
        ("myapp://callback", "prod", "non-https-scheme"),
    ],
)
def test_insecure_scheme_flags(url, env, kind):
    issues = insecure_scheme(parse_url(url), environment=env, dev_hosts=DEV)
    assert [i.kind for i in issues] == [kind]


@pytest.mark.parametrize(
    ("url", "env"),
    [
        ("https://example.com/", "prod"),
        ("HTTPS://EXAMPLE.COM/", "prod"),
        ("http://localhost:3000/cb", "dev"),
        ("http://127.0.0.1:8080/", "dev"),
        ("http://127.8.9.10/", "dev"),
        ("http://[::1]:8080/", "dev"),
        ("http://app.localhost/", "dev"),
    ],
)
def test_insecure_scheme_allows(url, env):
    assert insecure_scheme(parse_url(url), environment=env, dev_hosts=DEV) == []


def test_dev_hosts_extend_and_env_list_controls():
    parsed = parse_url("http://devbox.internal/")
    assert insecure_scheme(parsed, environment="dev", dev_hosts=["*.internal"]) == []
    assert insecure_scheme(parsed, environment="test", dev_hosts=["*.internal"]) != []
    assert (
        insecure_scheme(
            parsed, environment="test", dev_hosts=["*.internal"], allow_http_loopback_in=["test"]
        )
        == []
    )


def test_relative_url_has_no_scheme_issue():
    assert [
        i.kind for i in insecure_scheme(parse_url("/x"), environment="prod", dev_hosts=DEV)
    ] == ["no-scheme"]


# --------------------------------------------------------------------------- EG302


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("", "empty"),
        ("https://example.com/" + "a" * 9000, "too-long"),
        ("/relative", "not-absolute"),
        ("https:///x", "no-host"),
        ("https://exa mple.com", "control-or-space"),
        ("https://example.com/\x00", "control-or-space"),
        ("https://example.com:70000/", "bad-port"),
        ("https://a@b@c.example/", "ambiguous-userinfo"),
    ],
)
def test_invalid_url(url, kind):
    assert kind in [i.kind for i in invalid_url(url)]


@pytest.mark.parametrize(
    "url",
    ["https://example.com/", "https://example.com/a?b=c#d", "https://例え.jp/", "http://[::1]:1/"],
)
def test_valid_url(url):
    assert invalid_url(url) == []


def test_invalid_url_max_length_param():
    assert [i.kind for i in invalid_url("https://example.com/abc", max_length=10)] == ["too-long"]


# --------------------------------------------------------------------------- EG303


def cred_kinds(url: str) -> list[str]:
    return [i.kind for i in credentials_in_url(parse_url(url))]


CREDENTIAL_URLS = [
    # password in userinfo
    ("https://admin:Sup3rS3cret@example.com/", "userinfo-password"),
    # GitHub token as the username (x-access-token style)
    ("https://x-access-token:" + ghp() + "@github.com/org/repo", "userinfo-password"),
    # catalogue token in a neutral query parameter
    ("https://example.com/cb?data=" + ghp(), "known-secret-format"),
    # catalogue token in a path segment
    ("https://example.com/install/" + ghp() + "/done", "known-secret-format"),
    # catalogue token in the fragment
    ("https://example.com/#t=" + ghp(), "known-secret-format"),
    # Google API key under key=
    (
        "https://maps.example.com/api?key=" + "AI" + "za" + rand(35, ALNUM + "_-"),
        "known-secret-format",
    ),
    # Slack webhook URL as the target itself
    (
        "https://hooks.slack"
        + ".com/services/T"
        + rand(8, string.ascii_uppercase)
        + "/B"
        + rand(8, string.ascii_uppercase)
        + "/"
        + rand(24),
        "known-secret-format",
    ),
    # opaque value under access_token (implicit flow)
    (
        "https://app.example.com/cb#access_token=" + rand(40) + "&token_type=bearer",
        "secret-key-name",
    ),
    # api_key without a known format
    ("https://api.example.com/v1/data?api_key=" + rand(32), "secret-key-name"),
    # session id in the query
    ("https://shop.example.com/cart?sid=" + rand(26), "secret-key-name"),
    # JSESSIONID as a matrix parameter
    ("https://shop.example.com/cart;jsessionid=" + rand(32, "0123456789ABCDEF"), "secret-key-name"),
    # password in the query
    ("https://legacy.example.com/login?user=bob&password=hunter22", "secret-key-name"),
    # token nested in a redirect URL
    (
        "https://a.example/go?next=https%3A%2F%2Fb.example%2F%3Ftoken%3D" + rand(30),
        "secret-key-name",
    ),
    # JWT bearer token in a neutral parameter
    (
        "https://a.example/x?data=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyMSJ9."
        + rand(43, ALNUM + "_-"),
        "known-secret-format",
    ),
    # OAuth authorization code: a warning
    (
        "https://app.example.com/oauth/callback?code=" + rand(30) + "&state=" + rand(16),
        "oauth-code",
    ),
]


@pytest.mark.parametrize(("url", "kind"), CREDENTIAL_URLS)
def test_credentials_in_url(url, kind):
    issues = credentials_in_url(parse_url(url))
    assert kind in [i.kind for i in issues]
    for issue in issues:
        assert issue.value
        assert issue.value not in issue.detail
        assert issue.value not in repr(issue)


def test_oauth_code_is_medium_severity():
    (issue,) = credentials_in_url(parse_url("https://a.example/cb?code=" + rand(30) + "&state=abc"))
    assert (issue.kind, issue.severity) == ("oauth-code", "medium")


BENIGN_URLS = [
    # full OAuth authorization request
    "https://accounts.example.com/o/oauth2/v2/auth?response_type=code&client_id=1234-abc.apps.example.com"
    "&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb&scope=openid%20email%20profile&state=af0ifjsldkj8Hq3Zk"
    "&nonce=n-0S6_WzA2Mj&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256",
    # marketing parameters
    "https://example.com/landing?utm_source=newsletter&utm_medium=email&utm_campaign=spring_2024&gclid=Cj0KCQjw",
    # pagination cursors
    "https://api.example.com/items?page_token=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0aHM2aTZwGgA&cursor=eyJpZCI6MTIzfQ",
    # elicitation id and UUIDs
    "https://app.example.com/elicit/550e8400-e29b-41d4-a716-446655440000?elicitationId=7c9e6679-7425-40de-944b-e07fc1f90ae7",
    # git SHA in a path
    "https://github.com/org/repo/commit/9f2b6c1e0d3a4b5c6d7e8f90a1b2c3d4e5f60718",
    # image CDN hash and imgix signature
    "https://images.example.net/photo.jpg?w=800&h=600&fit=crop&auto=format&s=4f3c2b1a9e8d7c6b5a4f3c2b1a9e8d7c",
    # content hash in a path
    "https://cdn.example.com/assets/app.8f14e45fceea167a.js",
    # binding handle
    "https://app.example.com/connect?eg_bind=" + rand(43, ALNUM + "_-"),
    # placeholders in docs-like URLs
    "https://api.example.com/v1?api_key=YOUR_API_KEY&token=${TOKEN}",
    # csrf token and captcha
    "https://app.example.com/form?csrf_token=" + rand(32) + "&g-recaptcha-response=" + rand(40),
    # max_tokens / token_count
    "https://api.example.com/complete?max_tokens=4096&token_count=12",
    # username only in userinfo
    "https://git@example.com/repo",
    # ordinary search
    "https://www.example.com/search?q=how+to+reset+my+password&lang=en",
    # key id and public key
    "https://example.com/.well-known/jwks?kid=2024-01-key&public_key=MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE",
]


@pytest.mark.parametrize("url", BENIGN_URLS)
def test_benign_urls_have_no_credentials(url):
    assert credentials_in_url(parse_url(url)) == []


def test_signature_params_left_to_eg305():
    url = (
        "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential="
        + AKID
        + "%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature="
        + HEX64
    )
    assert credentials_in_url(parse_url(url)) == []
    assert [i.kind for i in preauthenticated_url(parse_url(url))] == ["signed-url"]


# --------------------------------------------------------------------------- EG304


PII_URLS = [
    ("https://app.example.com/welcome?email=jane.doe%40gmail.com", "email"),  # encoded @
    ("https://app.example.com/u/jane.doe@gmail.com/profile", "email"),  # email in path
    ("https://idp.example.com/authorize?login_hint=jane%40corp.io&client_id=x", "email"),
    ("https://app.example.com/verify?phone=%2B14155552671", "phone"),
    ("https://app.example.com/verify?mobile=4155552671", "phone"),  # context, no +
    ("https://pay.example.com/c?card=4111111111111111", "card_number"),
    ("https://pay.example.com/c?n=4111-1111-1111-1111", "card_number"),
    ("https://bank.example.com/t?iban=DE89370400440532013000", "iban"),
    ("https://gov.example.com/f?ssn=536-90-4399", "us_ssn"),
    ("https://app.example.com/f?dob=1984-07-12", "date_of_birth"),
    ("https://app.example.com/f?first_name=Jane&last_name=Doe", "person_name"),
    (
        "https://app.example.com/s?state=eyJlbWFpbCI6ICJqYW5lQGNvcnAuaW8ifQ",
        "email",
    ),  # in base64 JSON state
    ("https://app.example.com/x?cf=RSSMRA85T10A562S", "it_codice_fiscale"),
]


@pytest.mark.parametrize(("url", "kind"), PII_URLS)
def test_pii_in_url(url, kind):
    issues = pii_in_url(parse_url(url))
    assert kind in [i.kind for i in issues]
    assert all(i.value and i.value not in i.detail for i in issues)


PII_BENIGN = [
    "https://app.example.com/order?order_id=4111111111111111",  # id-like key
    "https://app.example.com/c?channel_id=123456789012345678",  # snowflake
    "https://app.example.com/e?ts=1700000000000",  # timestamp
    "https://app.example.com/i/550e8400-e29b-41d4-a716-446655440000",  # uuid
    "https://cdn.example.com/logo@2x.png",  # retina suffix
    "https://registry.example.com/pkg@1.2.3",  # version
    "https://app.example.com/?ssn=078-05-1120",  # famous invalid sample SSN
    "https://app.example.com/?card=4111111111111112",  # Luhn fails
    "https://app.example.com/?iban=DE89370400440532013001",  # mod-97 fails
    "https://app.example.com/?n=123456789",  # bare 9 digits, no context
    "https://app.example.com/?date=2024-01-15",  # a date, not a birth date
]


@pytest.mark.parametrize("url", PII_BENIGN)
def test_no_pii(url):
    assert pii_in_url(parse_url(url)) == []


# --------------------------------------------------------------------------- EG305

SIGNED = [
    # AWS SigV4 presigned S3 URL
    (
        "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential="
        + AKID
        + "%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20240101T000000Z&X-Amz-Expires=900"
        "&X-Amz-SignedHeaders=host&X-Amz-Signature=" + HEX64,
        "aws-sigv4",
    ),
    # AWS SigV2 legacy
    (
        "https://b.s3.amazonaws.com/k?AWSAccessKeyId="
        + AKID
        + "&Expires=1700000000&Signature="
        + rand(27)
        + "%3D",
        "aws-sigv2",
    ),
    # RDS IAM auth token wrapped as a URL
    (
        "https://db.abc.us-east-1.rds.amazonaws.com:5432/?Action=connect&DBUser=app&X-Amz-Algorithm=AWS4-HMAC-SHA256"
        "&X-Amz-Credential="
        + AKID
        + "%2F20240101%2Fus-east-1%2Frds-db%2Faws4_request&X-Amz-Signature="
        + HEX64,
        "aws-rds-iam-token",
    ),
    # Aurora DSQL
    (
        "https://x.dsql.us-east-1.on.aws/?Action=DbConnectAdmin&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature="
        + HEX64,
        "aws-rds-iam-token",
    ),
    # GCS V4
    (
        "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=sa%40p.iam.gserviceaccount.com"
        "%2F20240101%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20240101T000000Z&X-Goog-Expires=900&X-Goog-Signature="
        + HEX64,
        "gcs-v4",
    ),
    # GCS legacy V2
    (
        "https://storage.googleapis.com/b/o?GoogleAccessId=sa%40p.iam.gserviceaccount.com&Expires=1700000000&Signature="
        + rand(40)
        + "%3D",
        "gcs-legacy",
    ),
    # Azure SAS
    (
        "https://acct.blob.core.windows.net/c/f.pdf?sv=2022-11-02&ss=b&srt=o&sp=r&se=2024-12-31T00%3A00%3A00Z&sig="
        + rand(43)
        + "%3D",
        "azure-sas",
    ),
    # CloudFront canned policy
    (
        "https://d111111abcdef8.cloudfront.net/img.jpg?Expires=1700000000&Signature="
        + rand(60)
        + "__&Key-Pair-Id=K2JCJMDEHXQW5F",
        "cloudfront",
    ),
    # Google Cloud CDN
    (
        "https://cdn.example.com/v.mp4?Expires=1700000000&KeyName=my-key&Signature="
        + rand(27)
        + "=",
        "google-cloud-cdn",
    ),
    # Firebase Storage download token
    (
        "https://firebasestorage.googleapis.com/v0/b/app.appspot.com/o/a.pdf?alt=media&token=7c9e6679-7425-40de-944b-e07fc1f90ae7",
        "firebase-storage",
    ),
    # generic expiring signature (Laravel signed route)
    (
        "https://app.example.com/unsubscribe/42?expires=1700000000&signature=" + HEX64,
        "expiring-signature",
    ),
]


@pytest.mark.parametrize(("url", "family"), SIGNED)
def test_signed_urls(url, family):
    (issue,) = preauthenticated_url(parse_url(url))
    assert issue.kind == "signed-url"
    assert family in issue.detail
    assert issue.value
    assert issue.value not in issue.detail


MAGIC = [
    # Supabase magic link
    "https://proj.supabase.co/auth/v1/verify?token="
    + rand(40, "0123456789abcdef")
    + "&type=magiclink&redirect_to=https://app.example.com",
    # Supabase recovery with token_hash
    "https://proj.supabase.co/auth/v1/verify?token_hash=pkce_"
    + rand(40, "0123456789abcdef")
    + "&type=recovery",
    # Firebase email sign-in
    "https://app.firebaseapp.com/__/auth/action?mode=signIn&oobCode=" + rand(40) + "&apiKey=x",
    # Firebase password reset
    "https://app.firebaseapp.com/__/auth/action?mode=resetPassword&oobCode=" + rand(40),
    # WordPress reset
    "https://blog.example.com/wp-login.php?action=rp&key=" + rand(20) + "&login=admin",
    # Django reset
    "https://app.example.com/accounts/reset/MQ/c3z5n1-" + rand(32, "0123456789abcdef") + "/",
    # Devise reset token
    "https://app.example.com/users/password/edit?reset_password_token=" + rand(20),
    # generic magic link with a path token
    "https://app.example.com/auth/magic/" + rand(32),
    # generic login link with a query token
    "https://app.example.com/login?token=" + rand(32),
    # Stytch
    "https://app.example.com/authenticate?stytch_token_type=magic_links&token=" + rand(44),
    # invitation link
    "https://app.example.com/invite/" + rand(24),
]


@pytest.mark.parametrize("url", MAGIC)
def test_magic_and_reset_links(url):
    (issue,) = preauthenticated_url(parse_url(url))
    assert issue.kind in {"magic-link", "reset-link", "one-time-link"}


NOT_PREAUTH = [
    "https://app.example.com/login",  # plain login page
    "https://app.example.com/login?next=%2Fdashboard",  # redirect target only
    "https://app.example.com/reset-password",  # form, no token
    "https://images.example.net/p.jpg?w=400&s=4f3c2b1a9e8d7c6b5a4f3c2b1a9e8d7c",  # imgix signature, no expiry
    "https://res.cloudinary.com/demo/image/upload/s--Ai4Znfl3--/c_scale,w_300/sample.jpg",
    "https://accounts.example.com/authorize?response_type=code&client_id=abc&state=" + rand(20),
    "https://app.example.com/verify?email=pending",  # no token
    "https://docs.example.com/auth/login-flows/overview",  # docs about login
    "https://app.example.com/connect?eg_bind=" + rand(43),
]


@pytest.mark.parametrize("url", NOT_PREAUTH)
def test_not_preauthenticated(url):
    assert preauthenticated_url(parse_url(url)) == []


# --------------------------------------------------------------------------- EG306


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://app.example.com/connect?eg_bind=" + rand(43, ALNUM + "_-"), True),
        ("https://app.example.com/connect?EG_BIND=" + rand(43), True),  # case-insensitive key
        (
            "https://app.example.com/flows/7c9e6679-7425-40de-944b-e07fc1f90ae7",
            True,
        ),  # UUIDv4 segment
        ("https://app.example.com/authorize?state=" + rand(24), True),  # random state
        ("https://app.example.com/c/" + rand(32), True),  # opaque path handle
        ("https://app.example.com/connect", False),  # nothing
        ("https://app.example.com/connect?user=42", False),  # guessable id
        ("https://app.example.com/flows/12345", False),  # counter
        ("https://app.example.com/connect-your-account-now", False),  # words
        ("https://app.example.com/connect?eg_bind=", False),  # empty handle
        ("https://app.example.com/connect?eg_bind=${BIND}", False),  # template
        (
            "https://app.example.com/connect?utm_source=" + rand(24),
            False,
        ),  # random but not a handle key
    ],
)
def test_binding_handle(url, expected):
    assert binding_handle(parse_url(url)) is expected


def test_eg_bind_never_flagged_as_credential():
    url = "https://app.example.com/connect?eg_bind=" + ghp()
    assert credentials_in_url(parse_url(url)) == []


# --------------------------------------------------------------------------- performance


def test_throughput_well_over_20k_checks_per_second():
    urls = [url for url, _ in CREDENTIAL_URLS] + BENIGN_URLS + [u for u, _ in SIGNED]

    def run_all(u: str) -> None:
        p = parse_url(u)
        insecure_scheme(p, environment="prod", dev_hosts=DEV)
        invalid_url(u)
        credentials_in_url(p)
        pii_in_url(p)
        preauthenticated_url(p)
        binding_handle(p)

    for u in urls:
        run_all(u)
    rounds = 200
    start = time.perf_counter()
    for _ in range(rounds):
        for u in urls:
            run_all(u)
    rate = rounds * len(urls) / (time.perf_counter() - start)
    assert rate > 20_000
