"""Host analysis (EG401-EG407): legitimate IDNs pass, spoofs in every script are caught.

Rows are grouped by threat class, not by a list of brands: each class has positive and
negative rows so a rule that over-fires (blocking legitimate names) fails as surely as one
that misses spoofs.
"""

from __future__ import annotations

import random
import socket
import unicodedata

import pytest

from elicitguard.checks.domains import (
    _labels,
    _lookalike,
    _psl,
    analyze_host,
    bundled_protected_domains,
    find_invisible_or_deceptive_chars,
    registrable_domain,
    userinfo_looks_like_host,
)
from elicitguard.checks.domains import _unicode as uc


def _puny(label: str) -> str:
    return "xn--" + label.encode("punycode").decode("ascii")


# --- legitimate hosts: only `internationalised` (for IDNs) or nothing -----------------------

SAFE = [
    # ASCII
    ("github.com", "plain ASCII registrable domain"),
    ("docs.github.com", "subdomain of a protected domain"),
    ("api.stripe.com", "subdomain of a protected domain"),
    ("r3---sn-abc.googlevideo.com", "ASCII label with '---' (real CDN host names)"),
    ("_dmarc.example.com", "underscore label"),
    ("localhost", "single label"),
    ("example.co.uk", "multi-label public suffix"),
    ("WWW.GOOGLE.COM.", "upper case and trailing dot"),
    ("ｇｏｏｇｌｅ.com", "full-width letters map to google.com under UTS 46"),
    ("apple.stackexchange.com", "brand as a subdomain label without its suffix"),
    ("microsoft.github.io", "brand as a GitHub Pages site"),
    ("google.com.au", "brand under another public suffix"),
    ("amazon.co.uk", "protected domain itself"),
    ("t-mobile.com", "hyphenated brand, itself"),
    ("123.com", "digits-only ASCII label"),
    ("4you.com", "digits and letters"),
    ("evil.github.io", "unrelated site on a private suffix"),
    # Chinese
    ("中国.cn", "Chinese, Han only"),
    ("中文网.cn", "Chinese"),
    ("北京大学.cn", "Chinese university"),
    ("香港大學.hk", "Traditional Chinese"),
    ("台灣.tw", "Traditional Chinese"),
    ("公司.com", "Chinese under .com"),
    ("注音ㄅㄆ.tw", "Han + Bopomofo is one logical script"),
    # Japanese
    ("日本語.jp", "Japanese Han"),
    ("東京.jp", "Japanese Han"),
    ("テスト.jp", "Katakana"),
    ("ドメイン名例.jp", "Katakana + Han"),
    ("ひらがな.jp", "Hiragana"),
    ("例え.jp", "Han + Hiragana"),
    ("コーヒー.jp", "prolonged sound mark after Katakana"),
    ("ラーメン.com", "Katakana under .com"),
    ("vitaminb6-ビタミン.jp", "ASCII Latin + Katakana is highly restrictive"),
    ("・野.jp", "Katakana middle dot kept by Chromium"),
    ("へへへ.jp", "Hiragana he in an all-Hiragana label"),
    # Korean
    ("한국.kr", "Hangul"),
    ("도메인.한국", "Hangul under a Hangul TLD"),
    ("파이썬.kr", "Hangul"),
    ("한국中国.kr", "Hangul + Han is one logical script"),
    ("cafe카페.kr", "ASCII Latin + Hangul"),
    # Cyrillic
    ("пример.рф", "Cyrillic under .рф"),
    ("москва.рф", "Cyrillic under .рф"),
    ("яндекс.рф", "Cyrillic under .рф"),
    ("почта.ru", "Cyrillic under .ru"),
    ("торты-123.ru", "hyphenated Cyrillic with digits under .ru"),
    ("ѕсоре-рау.рф", "whole-script confusable under a Cyrillic TLD"),
    ("рау.ru", "whole-script confusable under .ru (allowed TLD)"),
    ("сосо.bg", "whole-script confusable under .bg"),
    ("київ.ua", "Ukrainian"),
    ("україна.укр", "Ukrainian under .укр"),
    ("беларусь.by", "Belarusian"),
    ("београд.срб", "Serbian under .срб"),
    ("скопје.mk", "Macedonian under .mk"),
    ("москва.com", "non-confusable Cyrillic under .com"),
    ("курс.com", "allow-listed Cyrillic word"),
    ("парк.com", "allow-listed Cyrillic word"),
    ("xn--e1afmkfd.xn--p1ai", "punycode input of пример.рф"),
    # Greek
    ("ελλάδα.gr", "Greek under .gr"),
    ("ουτοπία-123.gr", "hyphenated Greek with digits"),
    ("ροκ.gr", "whole-script confusable Greek under .gr"),
    ("ευρώπη.eu", "non-confusable Greek under .eu"),
    ("αβγ.com", "non-confusable Greek under .com"),
    ("παράδειγμα.ελ", "Greek under .ελ"),
    # Latin with diacritics
    ("bücher.de", "German umlaut"),
    ("münchen.de", "German umlaut"),
    ("straße.de", "typed ß (not from punycode)"),
    ("köln.de", "German"),
    ("zürich.ch", "Swiss German"),
    ("français.fr", "French cedilla"),
    ("crème-brûlée.fr", "French accents"),
    ("españa.es", "Spanish"),
    ("são-paulo.br", "Portuguese"),
    ("øl.dk", "Danish"),
    ("smörgåsbord.se", "Swedish"),
    ("ålesund.no", "Norwegian"),
    ("łódź.pl", "Polish"),
    ("čeština.cz", "Czech"),
    ("türkiye.com.tr", "Turkish"),
    ("ışık.com.tr", "Turkish dotless i"),
    ("tiếngviệt.vn", "Vietnamese"),
    ("BÜCHER.DE", "upper-case IDN"),
    ("bücher.de.", "IDN with trailing dot"),
    ("xn--bcher-kva.de", "punycode input of bücher.de"),
    ("bücher.github.io", "IDN under a private suffix"),
    ("col·legi.cat", "Catalan l·l under .cat"),
    ("þingvellir.is", "thorn under .is"),
    ("føroyar.fo", "Faroese"),
    ("ərəb.az", "schwa under .az"),
    # Right-to-left and other scripts
    ("שב״צ.il", "Hebrew with gershayim"),
    ("ישראל.il", "Hebrew"),
    ("דוגמה.com", "non-confusable Hebrew under .com"),
    ("וח.il", "whole-script confusable Hebrew under .il"),
    ("مصر.مصر", "Arabic under Arabic TLD"),
    ("مثال.شبكة", "Arabic"),
    ("ایران.ایران", "Persian"),
    ("ไทย.ไทย", "Thai under Thai TLD"),
    ("ตัวอย่าง.th", "Thai"),
    ("भारत.भारत", "Devanagari"),
    ("उदाहरण.भारत", "Devanagari"),
    ("இந்தியா.இந்தியா", "Tamil"),
    ("বাংলা.বাংলা", "Bengali"),
    ("საქართველო.გე", "Georgian"),
    ("հայաստան.հայ", "Armenian"),
    ("ලංකා.ලංකා", "Sinhala"),
    ("ኢትዮጵያ.et", "Ethiopic"),
]


@pytest.mark.parametrize(("host", "why"), SAFE, ids=[h for h, _ in SAFE])
def test_legitimate_hosts_only_internationalised(host: str, why: str) -> None:
    analysis = analyze_host(host)
    expected = {"internationalised"} if analysis.is_idn else set()
    assert set(analysis.kinds) == expected, (why, analysis.issues)


# --- spoofs: the expected kind must be among the issues ---------------------------------------

M, W, L, D, X = (
    "mixed_script",
    "whole_script_confusable",
    "lookalike",
    "deceptive_form",
    "invalid_idn",
)

UNSAFE = [
    # whole-script confusables (single script, every letter looks Latin, TLD not of the script)
    ("аррӏе.com", {W, L}, "Cyrillic apple"),
    ("xn--80ak6aa92e.com", {W, L}, "punycode input of Cyrillic apple"),
    ("АРРӀЕ.COM", {W, L}, "upper-case Cyrillic apple"),
    ("аррӏе.com.", {W, L}, "trailing dot"),
    ("www.аррӏе.com", {W, L}, "subdomain of a spoof"),
    ("ѕсоре.com", {W}, "Cyrillic 'scope' under .com"),
    ("xn--e1awd7f.com", {W}, "Cyrillic 'epic'"),
    ("рау.com", {W}, "Cyrillic 'pay' under .com"),
    ("сосо.net", {W}, "Cyrillic 'coco' under .net"),
    ("уоу.org", {W}, "Cyrillic 'yoy'"),
    ("раураӏ.com", {W, L}, "Cyrillic paypal"),
    ("рау.de", {W}, "Cyrillic under a Latin ccTLD"),
    ("τοκ.com", {W}, "Greek 'tok'"),
    ("ροκ.com", {W}, "Greek 'pok' outside .gr"),
    ("νικ.net", {W}, "Greek 'vik'"),
    ("սօս.com", {W}, "Armenian 'sos'"),
    ("იოყ.com", {W}, "Georgian"),
    ("וח.com", {W}, "Hebrew look-alikes under .com"),
    ("ሀሠ.com", {W}, "Ethiopic"),
    ("ทนบ.com", {W}, "Thai"),
    ("ခဂ.com", {W}, "Myanmar"),
    ("ऽ०.com", {W}, "Devanagari"),
    ("౦౧.com", {W}, "Telugu"),
    ("০৭.com", {W}, "Bengali"),
    ("டப.com", {W}, "Tamil"),
    ("ടഠ.com", {W}, "Malayalam"),
    # digit look-alikes
    ("з12.com", {W}, "Cyrillic ze as 3"),
    ("θ12.com", {W}, "Greek theta as 0"),
    ("੨੩.com", {W}, "Gurmukhi digits as 2 3"),
    ("1२3.com", {M, W}, "two numbering systems"),
    ("12ㄐ.com", {W}, "Bopomofo as 4"),
    ("շ00.com", {W}, "Armenian sha as 2"),
    # mixed scripts (restriction level worse than highly restrictive)
    ("gооgle.com", {M, L}, "Latin + Cyrillic o"),
    ("xn--ggle-55da.com", {M, L}, "punycode of the same"),
    ("аpple.com", {M, L}, "Cyrillic a + Latin"),
    ("paypaӏ.com", {M, L}, "Latin + Cyrillic palochka"),
    ("facebооk.com", {M, L}, "Latin + Cyrillic"),
    ("gοοgle.com", {M, L}, "Latin + Greek omicron"),
    ("gօօgle.com", {M, L}, "Latin + Armenian oh"),
    ("githսb.com", {M, L}, "Latin + Armenian u"),
    ("wikipedіa.org", {M, L}, "Latin + Cyrillic i"),
    ("coinbasе.com", {M, L}, "Latin + Cyrillic e"),
    ("privеt.ru", {M, W}, "mixed even under a Cyrillic TLD"),
    ("テスト한국.com", {M}, "Katakana + Hangul"),
    ("ไทยabc.com", {M}, "Thai + Latin"),
    ("abcمصر.com", {M, X}, "Arabic + Latin (also a bidi violation)"),
    ("αbc.com", {M, W}, "Greek alpha + Latin"),
    ("ԁell.com", {M, W}, "Cyrillic komi de + Latin"),
    # characters outside the identifier profile (reported as mixed_script)
    ("ɡoogle.com", {M, L}, "Latin script g (IPA)"),
    ("ḃank.com", {M}, "Latin Extended Additional is removed"),
    ("ἀπό.com", {M}, "Greek Extended is removed"),
    ("aʻb.com", {M}, "modifier letter turned comma"),
    ("ʼn.com", {M}, "U+0149 maps to apostrophe + n"),
    ("a̸b.com", {M}, "combining long solidus overlay"),
    ("é́.com", {M}, "repeated combining mark"),
    ("i̇.com", {M}, "dot above on a dotted letter (hidden overlay)"),
    ("ǥithub.com", {M}, "g with stroke"),
    ("יִשְׂרָאֵל.il", {M}, "Hebrew points are not in the identifier profile"),
    # deviation characters that arrived as punycode
    ("xn--fu-hia.de", {W}, "fuß as punycode"),
    (_puny("σας") + ".gr", {W}, "final sigma as punycode"),
    (_puny("straße") + ".de", {W}, "straße as punycode"),
    # TLD-specific letters
    ("þorn.com", {W}, "thorn outside .is"),
    ("ðe.com", {W}, "eth outside .is"),
    ("əb.com", {W}, "schwa outside .az"),
    ("a·b.cat", {W, X}, "middle dot not between l's (also IDNA 2008 CONTEXTO)"),
    ("l·l.com", {W}, "middle dot outside .cat"),
    ("þaypal.com", {W, L}, "thorn as p"),
    # non-ASCII Latin mixed with another script
    ("café카페.kr", {W}, "é + Hangul"),
    ("naïveテスト.jp", {W}, "ï + Katakana"),
    ("ñ中国.cn", {W}, "ñ + Han"),
    # dangerous Kana / CJK / combining patterns
    ("aノb.com", {W}, "Katakana no as a slash"),
    ("aソb.com", {W}, "Katakana so as a slash"),
    ("a丶b.com", {W}, "ideograph dot"),
    ("abcー.com", {W}, "prolonged sound mark after Latin"),
    ("ーabc.jp", {W}, "prolonged sound mark first"),
    ("a・b.com", {W, X}, "Katakana middle dot between Latin (also CONTEXTO)"),
    ("ヽabc.jp", {W}, "iteration mark first"),
    ("一abc.com", {W}, "ideograph one as a dash"),
    ("abc丨.com", {W}, "ideograph line as l"),
    ("カへカ.jp", {W}, "Hiragana he inside Katakana"),
    ("かヘか.jp", {W}, "Katakana he inside Hiragana"),
    ("テ\u0301スト.jp", {W}, "combining acute after Katakana"),
    ("ı\u0300.com", {W, M}, "dotless i with grave"),
    # skeleton look-alikes of protected domains (with diacritics removed, extra mappings)
    ("góógle.com", {L}, "diacritics"),
    ("paypàl.com", {L}, "grave accent"),
    ("gîthub.com", {L}, "circumflex"),
    ("strípe.com", {L}, "acute"),
    ("ħotmail.com", {L}, "h with stroke"),
    ("yaħoo.com", {L}, "h with stroke"),
    ("łinkedin.com", {L}, "l with stroke"),
    ("ŧwitter.com", {L}, "t with stroke"),
    ("dropbøx.com", {L}, "o with stroke"),
    ("đropbox.com", {L}, "d with stroke"),
    ("ɑpple.com", {L}, "Latin alpha"),
    ("rnicrosoft.com", {L}, "ASCII rn as m"),
    ("arnazon.com", {L}, "ASCII rn as m"),
    ("paypa1.com", {L}, "ASCII 1 as l"),
    ("goo-gle.com", {L}, "hyphen inserted"),
    ("pay-pal.com", {L}, "hyphen inserted"),
    ("www.gооgle.com", {L}, "spoof with a subdomain"),
    ("login.paypaӏ.com", {L}, "spoof with a subdomain"),
    ("gооgle.co.uk.", {M, W}, "mixed script under .co.uk"),
    # a protected domain spelled inside an unrelated registrable domain
    ("paypal.com.evil.example", {D}, "protected domain as subdomain labels"),
    ("accounts.google.com.phish.io", {D}, "protected domain as subdomain labels"),
    ("paypal-com.evil.example", {D}, "protected domain with the dot as a hyphen"),
    ("login-microsoftonline.com", {D}, "login.microsoftonline.com with a hyphen"),
    ("www-paypal-com.secure-login.net", {D}, "hyphenated"),
    ("github.com-login.io", {D}, "protected domain before a hyphen"),
    ("secure.paypal.com-verify.net", {D}, "protected domain across the registrable boundary"),
    # IP literals in deceptive forms
    ("3232235777", {D}, "decimal 192.168.1.1"),
    ("0x7f.1", {D}, "hex + short form"),
    ("0177.0.0.1", {D}, "octal"),
    ("0x7f000001", {D}, "single hex number"),
    ("127.1", {D}, "short decimal form"),
    ("0x7f.0.0.01", {D}, "hex and octal parts"),
    ("１２７.０.０.１", {D}, "full-width digits"),
    # invalid IDNA
    ("xn--abc", {X}, "bad punycode"),
    ("xn--a.com", {X}, "bad punycode"),
    ("a..b", {X}, "empty label"),
    ("ü-.com", {X}, "trailing hyphen in an IDN label"),
    ("üb--c.com", {X}, "hyphens in positions 3-4 of an IDN label"),
    ("\u0301abc.com", {X}, "leading combining mark"),
    ("☃.com", {X}, "symbol not valid in IDNA 2008"),
    ("xn--ls8h.la", {X}, "emoji label"),
    ("a\u200db.com", {X}, "ZWJ outside its joining context"),
    ("aא.com", {X, M}, "bidi rule: Latin + Hebrew"),
    ("exa mple.com", {X}, "space"),
    ("ex@mple.com", {X}, "at sign in host"),
    ("1.2.3.4.5", {X}, "ends in a number, five parts"),
    ("256.1.1.1", {X}, "IPv4 part out of range"),
    ("0x100000000", {X}, "IPv4 number out of range"),
    ("[::g]", {X}, "bad IPv6"),
    ("", {X}, "empty"),
    ("xn--" + "a" * 70 + ".com", {X}, "label too long"),
]


@pytest.mark.parametrize(("host", "expected", "why"), UNSAFE, ids=[h for h, _, _ in UNSAFE])
def test_spoofs_are_caught(host: str, expected: set[str], why: str) -> None:
    analysis = analyze_host(host)
    assert expected & analysis.kinds, (why, analysis.issues)
    assert analysis.kinds - {"internationalised"}, why


def test_spoof_issue_names_target_and_reading() -> None:
    analysis = analyze_host("аррӏе.com")
    assert analysis.is_idn
    assert analysis.ascii_host == "xn--80ak6aa92e.com"
    assert analysis.unicode_host == "аррӏе.com"
    lookalike = next(i for i in analysis.issues if i.kind == "lookalike")
    assert lookalike.lookalike_of == "apple.com"
    wsc = next(i for i in analysis.issues if i.kind == "whole_script_confusable")
    assert wsc.label == "аррӏе"
    assert wsc.lookalike_of == "apple"


def test_idn_fields() -> None:
    analysis = analyze_host("WWW.Bücher.DE.")
    assert analysis.ascii_host == "www.xn--bcher-kva.de"
    assert analysis.unicode_host == "www.bücher.de"
    assert analysis.registrable_domain == "xn--bcher-kva.de"
    assert analysis.registrable_domain_unicode == "bücher.de"
    assert analysis.public_suffix == "de"
    assert analysis.ip_literal is None
    assert [i.kind for i in analysis.issues] == ["internationalised"]


# --- IP literals ------------------------------------------------------------------------------

IPS = [
    ("127.0.0.1", "127.0.0.1", "dotted"),
    ("127.0.0.1.", "127.0.0.1", "dotted"),
    ("3232235777", "192.168.1.1", "decimal"),
    ("127.1", "127.0.0.1", "decimal"),
    ("0177.0.0.1", "127.0.0.1", "octal"),
    ("0x7f.1", "127.0.0.1", "hex"),
    ("0X7F.0.0.1", "127.0.0.1", "hex"),
    ("0x7f.0.0.01", "127.0.0.1", "mixed"),
    ("0x.0x.0x.0x", "0.0.0.0", "hex"),
    ("[::1]", "::1", "ipv6"),
    ("[0:0:0:0:0:0:0:1]", "::1", "ipv6"),
    ("[::ffff:127.0.0.1]", "::ffff:7f00:1", "mapped"),
]


@pytest.mark.parametrize(("host", "address", "form"), IPS)
def test_ip_literal_forms(host: str, address: str, form: str) -> None:
    analysis = analyze_host(host)
    assert analysis.ip_literal == address
    assert analysis.ip_form == form
    assert analysis.registrable_domain is None
    deceptive = "deceptive_form" in analysis.kinds
    assert deceptive == (form not in ("dotted", "ipv6"))


# --- protected domains -----------------------------------------------------------------------


def test_bundled_list_is_large_and_normalised() -> None:
    domains = bundled_protected_domains()
    assert len(domains) >= 300
    assert {"github.com", "paypal.com", "microsoftonline.com", "stripe.com"} <= domains
    assert all(d == d.lower() and "." in d for d in domains)


def test_policy_protected_domains_extend_the_bundled_list() -> None:
    extra = frozenset({"Example.ORG."})
    assert "lookalike" not in analyze_host("exarnple.org").kinds
    assert "lookalike" in analyze_host("exarnple.org", protected=extra).kinds
    assert "lookalike" in analyze_host("еxample.org", protected=extra).kinds
    assert analyze_host("example.org", protected=extra).kinds == frozenset()
    assert analyze_host("login.example.org", protected=extra).kinds == frozenset()
    assert "deceptive_form" in analyze_host("example.org.evil.io", protected=extra).kinds
    # The bundled list still applies.
    assert "lookalike" in analyze_host("раураӏ.com", protected=extra).kinds


def test_unicode_protected_domain() -> None:
    extra = frozenset({"fóó.com"})
    assert analyze_host("fóó.com", protected=extra).kinds == {"internationalised"}
    assert "lookalike" in analyze_host("foo.com", protected=extra).kinds


def _skel(*hosts: str) -> set[str]:
    return {s for host in hosts for s in _lookalike.host_skeletons(host)}


def test_multiple_skeletons() -> None:
    assert _skel("b.com", "p.com") <= _lookalike.host_skeletons("þ.com")
    assert _skel("ce.com", "oe.com") <= _lookalike.host_skeletons("œ.com")
    assert _skel("l.com", "t.com") <= _lookalike.host_skeletons("ł.com")
    assert _skel("apple.com", "appie.com") <= _lookalike.host_skeletons("аррӏе.com")
    assert _lookalike.host_skeletons("rnicrosoft.com") == _lookalike.host_skeletons("microsoft.com")


# --- EG405: characters anywhere in the URL ----------------------------------------------------

CHARS = [
    ("https://evil.example/\u202egnp.exe", "U+202E", "bidi_control"),
    ("https://a\u2066b.example/", "U+2066", "bidi_control"),
    ("https://example.com/\u200fx", "U+200F", "bidi_control"),
    ("https://example.com/\u061cx", "U+061C", "bidi_control"),
    ("https://pay\u200bpal.com/", "U+200B", "invisible"),
    ("https://pay\u00adpal.com/", "U+00AD", "invisible"),
    ("https://example.com/\ufeff", "U+FEFF", "invisible"),
    ("https://example.com/a\u2060b", "U+2060", "invisible"),
    ("https://example.com/\U000e0041", "U+E0041", "invisible"),
    ("https://evil.example\u2044paypal.com/", "U+2044", "slash_lookalike"),
    ("https://evil.example\u2215paypal.com/", "U+2215", "slash_lookalike"),
    ("https://evil.example\uff0fpaypal.com/", "U+FF0F", "slash_lookalike"),
    ("https://paypal\u3002com/", "U+3002", "dot_lookalike"),
    ("https://paypal\uff0ecom/", "U+FF0E", "dot_lookalike"),
    ("https://paypal\uff61com/", "U+FF61", "dot_lookalike"),
    ("https://paypal\u2024com/", "U+2024", "dot_lookalike"),
    ("https://paypal.com\uff20evil.example/", "U+FF20", "delimiter_lookalike"),
    ("https://example.com\uff1a443/", "U+FF1A", "delimiter_lookalike"),
    ("https://example.com/\u3000x", "U+3000", "whitespace"),
    ("https://example.com/\x07", "U+0007", "control"),
]


@pytest.mark.parametrize(("url", "codepoint", "category"), CHARS)
def test_invisible_and_deceptive_chars(url: str, codepoint: str, category: str) -> None:
    issues = find_invisible_or_deceptive_chars(url)
    assert [(i.codepoint, i.category) for i in issues] == [(codepoint, category)]
    issue = issues[0]
    assert f"U+{ord(url[issue.index]):04X}" == codepoint
    assert issue.name


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/org/repo?x=1#top",
        "https://bücher.de/straße",
        "https://例え.jp/ドメイン・名",  # Katakana middle dot is ordinary Japanese
        "https://пример.рф/путь",
        "https://שב״צ.il/",
        "https://col·legi.cat/",
    ],
)
def test_clean_urls_have_no_char_issues(url: str) -> None:
    assert find_invisible_or_deceptive_chars(url) == []


# --- EG406: userinfo ---------------------------------------------------------------------------

USERINFO = [
    ("paypal.com", True),
    ("paypal.com:443", True),
    ("www.paypal.com", True),
    ("accounts.google.co.uk", True),
    ("paypal%2Ecom", True),
    ("аррӏе.com", True),
    ("192.168.0.1", True),
    ("3232235777.", False),
    ("0x7f.1", True),
    ("alice", False),
    ("alice.smith", False),
    ("git", False),
    ("john.doe:secret", False),
    ("oauth2:ghp_token", False),
    ("", False),
    ("good.example", True),  # special-use name
    ("bank.test:pw", True),
    ("evil.example%2F", True),  # encoded delimiter: reads as host and path
    ("evil%23", True),
    ("jane.doe", False),
]


@pytest.mark.parametrize(("userinfo", "expected"), USERINFO)
def test_userinfo_looks_like_host(userinfo: str, expected: bool) -> None:
    assert userinfo_looks_like_host(userinfo) is expected


# --- registrable domain, offline ---------------------------------------------------------------

REGISTRABLE = [
    ("www.example.co.uk", "example.co.uk"),
    ("WWW.Example.COM.", "example.com"),
    ("evil.github.io", "evil.github.io"),
    ("a.b.c.appspot.com", "c.appspot.com"),
    ("пример.рф", "xn--e1afmkfd.xn--p1ai"),
    ("evil.example", "evil.example"),
    ("127.0.0.1", None),
    ("localhost", None),
    ("co.uk", None),
    ("a..b", None),
]


@pytest.mark.parametrize(("host", "expected"), REGISTRABLE)
def test_registrable_domain(host: str, expected: str | None) -> None:
    assert registrable_domain(host) == expected


def test_no_socket_is_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    for cached in (
        analyze_host,
        _psl._psl,
        _psl.registrable_ascii,
        _psl.public_suffix,
        userinfo_looks_like_host,
    ):
        cached.cache_clear()
    assert registrable_domain("www.example.co.uk") == "example.co.uk"
    assert analyze_host("аррӏе.com").kinds >= {"lookalike"}
    assert userinfo_looks_like_host("paypal.com")


# --- the ICU-equivalent layer agrees with ICU itself (when PyICU is installed) -----------------


def test_label_checks_match_icu_spoof_checker() -> None:
    icu = pytest.importorskip("icu")
    checker = icu.SpoofChecker()
    checker.setRestrictionLevel(icu.URestrictionLevel.HIGHLY_RESTRICTIVE)
    allowed = icu.UnicodeSet()
    allowed.addAll(icu.SpoofChecker.getRecommendedUnicodeSet())
    allowed.addAll(icu.SpoofChecker.getInclusionUnicodeSet())
    for cp in (0x338, 0x58A, 0x2010, 0x2019, 0x2027, 0x30A0, 0x2BB, 0x2BC, 0x2EC, 0x138):
        allowed.remove(chr(cp))
    for lo, hi in (
        (0x1CD, 0x1DC),
        (0x1C80, 0x1C8F),
        (0x1E00, 0x1E9B),
        (0x1F00, 0x1FFF),
        (0xA640, 0xA69F),
        (0xA720, 0xA7FF),
    ):
        allowed.remove(chr(lo), chr(hi))
    checker.setAllowedUnicodeSet(allowed)
    by_script: dict[str, list[str]] = {}
    for cp in range(0x20, 0x30000):
        if uc.is_allowed(chr(cp)):
            by_script.setdefault(uc.script(chr(cp)), []).append(chr(cp))
    scripts = sorted(by_script)
    rng = random.Random(7)
    for _ in range(3000):
        chosen = rng.sample(scripts, rng.choice([1, 2, 3])) + rng.choice([[], ["Latn"], ["Zyyy"]])
        label = "".join(rng.choice(by_script[rng.choice(chosen)]) for _ in range(rng.randint(1, 6)))
        label = unicodedata.normalize("NFC", label)
        icu_unsafe = bool(checker.check(label) & icu.USpoofChecks.ALL_CHECKS)
        assert icu_unsafe == (_labels._icu_checks(label) is not None), repr(label)


def test_tables_are_loaded_once_and_versioned() -> None:
    assert uc.unicode_version().startswith("16.")
    assert uc.script_extensions("ー") == frozenset({"Hira", "Kana"})
    assert uc.skeleton("paypaӏ") == "paypai"


@pytest.mark.parametrize(
    ("host", "target"),
    [
        ("g00gle.com", "google.com"),
        ("micr0s0ft.com", "microsoft.com"),
        ("g1thub.com", "github.com"),
        ("5tripe.com", "stripe.com"),
        ("microsoft-login.com", "microsoft.com"),
        ("login.microsoft-account-verify.com", "microsoft.com"),
        ("paypa1-secure.com", "paypal.com"),
        ("secure-paypal-2024.net", "paypal.com"),
        ("securepaypallogin.com", "paypal.com"),
        ("githublogin.net", "github.com"),
        ("g00gle-accounts.co.uk", "google.com"),
        ("rnicrosoft-signin.com", "microsoft.com"),
        ("paypal.secure-login.com", "paypal.com"),
        ("www.microsoft.accountverify.net", "microsoft.com"),
        ("github.login.io", "github.com"),
        ("my-account-paypal.ngineers.com", "paypal.com"),  # brand and bait in a subdomain
        ("apple-center-services.com", "apple.com"),
        ("icloud-support.work", "icloud.com"),
        ("binancegiveaway.com", "binance.com"),
        ("apple-id-9217618412148e11e-appstore.com", "apple.com"),  # a campaign id is noise
        ("icloud-apple-id-security-restore.example.net", "icloud.com"),  # two brands, bait
    ],
)
def test_digits_for_letters_and_brand_with_bait_are_lookalikes(host: str, target: str) -> None:
    """A digit typed for a letter reads as that letter, and a protected brand joined to
    sign-in or account words in the registrable label reads as the brand's domain."""
    (issue,) = [i for i in analyze_host(host).issues if i.kind == "lookalike"]
    assert issue.lookalike_of == target


@pytest.mark.parametrize(
    "host",
    [
        "google-analytics.com",  # a brand beside a word that is not bait
        "amazon-adsystem.com",
        "apple-pie-recipes.com",
        "paypal.evil.example",  # a brand label as someone else's subdomain
        "applepay.com",  # a short word glued to a brand names a product
        "paypalsso.com",  # bait words under four letters are not read glued
        "paypal-2024.com",  # a number alone is no bait
        "login.microsoftonline.com",  # the protected domain itself
        "360.cn",
        "1und1.de",
        "hotmail-login.example.github.io",
        "github.auth0.com",  # a brand as a subdomain of a domain with a name of its own
        "google.okta.com",
        "gitlab.company.com",  # self-hosted instances are named after the product
        "github.corp.example.com",
        "slack-bridge.mycompany.com",
        "santanderbank.com",  # "bank" is not bait: banks own such names  # the registrable label is the user's, under a private suffix
    ],
)
def test_brand_beside_other_words_is_not_a_lookalike(host: str) -> None:
    assert "lookalike" not in analyze_host(host).kinds, analyze_host(host).issues
