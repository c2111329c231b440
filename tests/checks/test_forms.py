"""Cases for the form classifier: secret and sensitive fields in seven languages, and traps.

Every row is one single-property form unless it says otherwise; about half are traps, fields
that mention a secret word but collect nothing secret. Rows are (language, key, property,
expected secret class, expected sensitive class); a comment says what the row is about; a
language ending in "?" is not checked because the field's only word is shared ("IBAN").
"""

from __future__ import annotations

from typing import Any

import pytest

from elicitguard.checks.forms import (
    ALL_LANGUAGES,
    FieldVerdict,
    MessageAsk,
    classify_form,
    message_asks_for_secret,
)

P = "password"
K = "api_key"
PK = "private_key"
OTP = "otp"
CARD = "card_number"
CVV = "cvv"
SA = "security_answer"
GOV = "government_id"
BANK = "bank_account"
HEALTH = "health"


def s(title: str | None = None, desc: str | None = None, **extra: Any) -> dict[str, Any]:
    """A string property."""
    prop: dict[str, Any] = {"type": "string", **extra}
    if title is not None:
        prop["title"] = title
    if desc is not None:
        prop["description"] = desc
    return prop


def n(title: str | None = None, desc: str | None = None, **extra: Any) -> dict[str, Any]:
    """An integer property."""
    return {**s(title, desc, **extra), "type": "integer"}


def b(title: str | None = None, desc: str | None = None, **extra: Any) -> dict[str, Any]:
    """A boolean property."""
    return {**s(title, desc, **extra), "type": "boolean"}


def e(options: list[str], title: str | None = None, **extra: Any) -> dict[str, Any]:
    """A single-select enum property."""
    return {**s(title, **extra), "enum": options}


def form(**props: dict[str, Any]) -> dict[str, Any]:
    """A requestedSchema with these properties."""
    return {"type": "object", "properties": props}


FIELD_ROWS: list[tuple[str, str, dict[str, Any], str | None, str | None]] = [
    # ---------------------------------------------------------------- English: secrets
    ("en", "password", s("Password"), P, None),  # the plain case
    ("en", "userPassword", s(), P, None),  # camelCase key only
    ("en", "db-pass", s("Database"), P, None),  # kebab key, abbreviation trusted in keys
    ("en", "pwd", s(format="password"), P, None),  # abbreviation plus non-standard format
    ("en?", "value", s(format="password"), P, None),  # format alone says it is a password
    ("en", "secret_value", s("Value", writeOnly=True), K, None),  # writeOnly secret
    ("en", "passphrase", s("Passphrase for the vault"), P, None),  # passphrase
    ("en", "atm_pin", n("ATM PIN", maximum=9999), P, None),  # a numeric PIN may be a number
    ("en", "apiKey", s("OpenAI API key"), K, None),  # API key in camelCase
    ("en", "github_token", s("GitHub personal access token"), K, None),  # PAT
    ("en", "client_secret", s("Client secret"), K, None),  # OAuth client secret
    ("en", "bearer", s("Bearer token", desc="Paste the Authorization header value"), K, None),
    ("en", "conn", s("Database connection string"), K, None),  # holds a password
    ("en", "seed", s("Wallet recovery phrase", desc="12 or 24 words"), PK, None),  # seed phrase
    ("en", "ssh_private_key", s("SSH private key"), PK, None),  # private key
    ("en", "mnemonic", s(), PK, None),  # key only
    ("en", "otp", s("One-time password", maxLength=6), OTP, None),  # OTP
    ("en", "code", s("Code", desc="Enter the 6-digit code we sent by SMS"), OTP, None),  # bare code
    ("en", "mfaCode", s("Authenticator code"), OTP, None),  # MFA
    ("en", "verification_code", n("Verification code", maximum=999999), OTP, None),  # numeric
    ("en", "card_number", s("Card number", maxLength=19), CARD, None),  # PAN
    ("en", "cc", s("Credit card"), CARD, None),  # credit card
    ("en", "cvc", s("CVC", maxLength=4), CVV, None),  # CVC
    (
        "en",
        "security_code",
        s("Security code", desc="3 digits on the back of your card"),
        CVV,
        None,
    ),
    ("en", "sec_answer", s("Answer to your security question"), SA, None),  # security answer
    ("en", "maiden", s("Mother's maiden name"), SA, None),  # classic question, "name" is no escape
    # ---------------------------------------------------------------- English: sensitive
    ("en", "ssn", s("Social Security number"), None, GOV),  # SSN
    ("en", "passport_number", s("Passport number"), None, GOV),  # passport
    ("en", "dl", s("Driver's license number"), None, GOV),  # driver licence
    ("en", "iban", s("IBAN"), None, BANK),  # bank account
    ("en", "routing", s("Routing number"), None, BANK),  # US routing number
    ("en", "diagnosis", s("Diagnosis", desc="As written by your doctor"), None, HEALTH),
    ("en", "meds", s("Current medications"), None, HEALTH),  # medication list
    # ---------------------------------------------------------------- English: traps
    ("en", "password_policy_accepted", b("I accept the password policy"), None, None),
    ("en", "remember_password", b("Remember my password"), None, None),  # boolean
    ("en", "min_password_length", n("Minimum password length"), None, None),  # a number about it
    ("en", "max_tokens", n("Max tokens"), None, None),  # LLM setting
    ("en", "token_budget", s("Token budget"), None, None),  # string trap
    ("en", "token_count", n(), None, None),  # number trap
    ("en", "credential_type", e(["password", "api_key", "oauth"]), None, None),  # enum of kinds
    ("en", "auth_method", e(["password", "sso"], "Sign-in method"), None, None),  # enum
    ("en", "public_key", s("SSH public key"), None, None),  # public, not private
    ("en", "api_key_name", s("Name for the new API key"), None, None),  # *_name
    ("en", "token_id", s("Token ID"), None, None),  # *_id
    ("en", "webhook_url", s("Webhook URL", format="uri"), None, None),  # *_url
    ("en", "verification_status", e(["pending", "verified"]), None, None),  # status
    ("en", "card_last4", s("Card last four digits", maxLength=4), None, None),  # not the number
    ("en", "card_brand", e(["visa", "mastercard"]), None, None),  # enum
    ("en", "pincode", s("PIN code", desc="6-digit postal code of your area"), None, None),  # India
    ("en", "secret_santa_opt_in", b("Join the Secret Santa?"), None, None),  # fun
    ("en", "key_date", s("Key date", format="date"), None, None),  # key date
    ("en", "keyboard_key", s("Which keyboard key triggers the macro?"), None, None),  # keyboard
    ("en", "primary_key", s("Primary key column"), None, None),  # databases
    ("en", "email", s("Email", format="email"), None, None),  # email
    ("en", "username", s("Username", desc="Not your password"), None, None),  # username
    ("en", "enable_2fa", b("Enable two-factor authentication"), None, None),  # boolean 2FA
    ("en", "two_fa_method", e(["sms", "totp"], "2FA method"), None, None),  # enum of methods
    ("en", "zip", s("ZIP code"), None, None),  # postal code
    ("en", "promo_code", s("Promo code"), None, None),  # promo
    ("en", "booking_ref", s("Booking confirmation code"), None, None),  # booking reference
    ("en", "library_card", s("Library card number"), None, None),  # not a payment card
    ("en", "boarding_pass", s("Boarding pass number"), None, None),  # pass
    ("en", "security_question", e(["First pet?", "Birth city?"], "Security question"), None, None),
    ("en", "diagnostics", b("Send diagnostic logs"), None, None),  # software diagnostics
    ("en", "has_passport", b("Do you have a valid passport?"), None, None),  # yes/no
    ("en", "account_type", e(["checking", "savings"], "Account type"), None, None),  # bank enum
    ("en", "dietary", s("Dietary preferences"), None, None),  # booking form
    ("en", "pin_message", b("Pin this message to the channel"), None, None),  # verb "pin"
    ("en", "password_hint", s("Password hint"), None, None),  # a hint is not the password
    # ---------------------------------------------------------------- zh-Hans: secrets
    ("zh-Hans", "mima", s("密码"), P, None),  # password
    ("zh-Hans", "login_pwd", s("登录密码", desc="请输入您的登录密码"), P, None),  # login password
    ("zh-Hans", "zhifu", n("支付密码", maximum=999999), P, None),  # 6-digit payment password
    ("zh-Hans", "key", s("API 密钥"), K, None),  # API key
    ("zh-Hans", "lingpai", s("访问令牌"), K, None),  # access token
    ("zh-Hans", "siyao", s("钱包私钥"), PK, None),  # private key
    ("zh-Hans", "zhujici", s("助记词", desc="12 个单词"), PK, None),  # mnemonic
    ("zh-Hans", "yzm", s("短信验证码", maxLength=6), OTP, None),  # SMS code
    ("zh-Hans", "card", s("信用卡号"), CARD, None),  # card number
    ("zh-Hans", "cvv", s("安全码", desc="卡背面三位数字", maxLength=3), CVV, None),  # CVV
    ("zh-Hans", "answer", s("密保问题答案"), SA, None),  # security answer
    ("zh-Hans", "sfz", s("身份证号码"), None, GOV),  # national id
    ("zh-Hans", "bank", s("银行账号"), None, BANK),  # bank account
    ("zh-Hans", "bingshi", s("既往病史"), None, HEALTH),  # medical history
    # ---------------------------------------------------------------- zh-Hans: traps
    ("zh-Hans", "pwd_policy", b("我已阅读并同意密码策略"), None, None),  # policy
    ("zh-Hans", "remember", b("记住密码"), None, None),  # remember
    ("zh-Hans", "pwd_len", n("密码长度"), None, None),  # length
    ("zh-Hans", "max_tokens", n("最大令牌数"), None, None),  # tokens
    ("zh-Hans", "tokens", s("token 数量"), None, None),  # token count as text
    ("zh-Hans", "pubkey", s("公钥"), None, None),  # public key
    ("zh-Hans", "youbian", s("邮政编码"), None, None),  # postal code
    ("zh-Hans", "yanzheng", e(["短信", "邮箱"], "验证方式"), None, None),  # enum of methods
    ("zh-Hans", "weihao", s("卡号后四位", maxLength=4), None, None),  # last four
    ("zh-Hans", "yonghuming", s("用户名", desc="不是您的密码"), None, None),  # username
    ("zh-Hans", "youhui", s("优惠码"), None, None),  # coupon
    ("zh-Hans", "guanjianci", s("关键词"), None, None),  # keyword
    ("zh-Hans", "zhenduan", b("发送诊断日志"), None, None),  # diagnostics
    ("zh-Hans", "key_type", e(["RSA", "Ed25519"], "密钥类型"), None, None),  # key type
    # ---------------------------------------------------------------- zh-Hant: secrets
    ("zh-Hant", "mima", s("密碼"), P, None),  # password
    ("zh-Hant", "new_pwd", s("新密碼", desc="至少 8 個字元"), P, None),  # new password
    ("zh-Hant", "zhifu", n("支付密碼", maximum=999999), P, None),  # 6-digit payment password
    ("zh-Hant", "key", s("API 金鑰"), K, None),  # API key
    ("zh-Hant", "token", s("存取權杖"), K, None),  # access token
    ("zh-Hant", "siyao", s("私鑰"), PK, None),  # private key
    ("zh-Hant", "zhuji", s("助記詞"), PK, None),  # mnemonic
    ("zh-Hant", "otp", s("簡訊驗證碼", maxLength=6), OTP, None),  # SMS code
    ("zh-Hant", "card", s("信用卡卡號"), CARD, None),  # card number
    ("zh-Hant", "cvv", s("背面末三碼", maxLength=3), CVV, None),  # CVV, Taiwan wording
    ("zh-Hant", "pin", n("提款密碼", maximum=999999), P, None),  # ATM PIN
    ("zh-Hant", "id", s("身分證字號"), None, GOV),  # Taiwan national id
    ("zh-Hant", "bank", s("銀行帳號"), None, BANK),  # bank account
    ("zh-Hant", "meds", s("目前用藥"), None, HEALTH),  # medication
    # ---------------------------------------------------------------- zh-Hant: traps
    ("zh-Hant", "policy", b("同意密碼政策"), None, None),  # policy
    ("zh-Hant", "remember", b("記住密碼"), None, None),  # remember
    ("zh-Hant", "len", n("密碼長度"), None, None),  # length
    ("zh-Hant", "pub", s("公開金鑰"), None, None),  # public key
    ("zh-Hant", "zip", s("郵遞區號"), None, None),  # postal code
    ("zh-Hant", "method", e(["簡訊", "App"], "驗證方式"), None, None),  # enum
    ("zh-Hant", "last4", s("卡號末四碼", maxLength=4), None, None),  # last four
    ("zh-Hant", "user", s("使用者名稱"), None, None),  # username
    ("zh-Hant", "coupon", s("優惠碼"), None, None),  # coupon
    ("zh-Hant", "status", e(["已驗證", "未驗證"], "驗證狀態"), None, None),  # status
    ("zh-Hant", "quota", n("權杖上限"), None, None),  # token limit
    ("zh-Hant", "forgot", b("忘記密碼？"), None, None),  # forgot password
    # ---------------------------------------------------------------- Japanese: secrets
    ("ja", "password", s("パスワード"), P, None),  # password
    ("ja", "pw_confirm", s("パスワード（確認用）"), P, None),  # confirmation
    ("ja", "pin", n("暗証番号", desc="4桁", maximum=9999), P, None),  # PIN
    ("ja", "api", s("APIキー"), K, None),  # API key
    ("ja", "token", s("アクセストークン"), K, None),  # access token
    ("ja", "secret", s("クライアントシークレット"), K, None),  # client secret
    ("ja", "privkey", s("秘密鍵"), PK, None),  # private key
    ("ja", "seed", s("リカバリーフレーズ"), PK, None),  # recovery phrase
    ("ja", "otp", s("ワンタイムパスワード", maxLength=6), OTP, None),  # OTP, not password
    ("ja", "code", s("認証コード", desc="SMSで送信されたコード"), OTP, None),  # code
    ("ja", "card", s("カード番号"), CARD, None),  # card number
    ("ja", "cvv", s("セキュリティコード", desc="カード裏面の3桁", maxLength=3), CVV, None),  # CVV
    ("ja", "answer", s("秘密の質問の答え"), SA, None),  # security answer
    ("ja", "mynumber", s("マイナンバー"), None, GOV),  # national id
    ("ja", "koza", s("口座番号"), None, BANK),  # bank account
    ("ja", "byoreki", s("既往歴"), None, HEALTH),  # medical history
    # ---------------------------------------------------------------- Japanese: traps
    ("ja", "policy", b("パスワードポリシーに同意する"), None, None),  # policy
    ("ja", "remember", b("パスワードを記憶する"), None, None),  # remember
    ("ja", "length", n("パスワードの長さ"), None, None),  # length
    ("ja", "max_tokens", n("最大トークン数"), None, None),  # tokens
    ("ja", "pub", s("公開鍵"), None, None),  # public key
    ("ja", "zip", s("郵便番号"), None, None),  # postal code
    ("ja", "method", e(["SMS", "メール"], "認証方法"), None, None),  # enum
    ("ja", "last4", s("カード番号下4桁", maxLength=4), None, None),  # last four
    ("ja", "user", s("ユーザー名", desc="パスワードではありません"), None, None),  # username
    ("ja", "booking", s("予約番号"), None, None),  # booking number
    ("ja", "question", e(["ペットの名前", "出身地"], "秘密の質問"), None, None),  # question
    ("ja", "keyword", s("キーワード"), None, None),  # keyword
    ("ja", "forgot", b("パスワードをお忘れですか"), None, None),  # forgot
    ("ja", "key_name", s("キー名"), None, None),  # key name
    # ---------------------------------------------------------------- Spanish: secrets
    ("es", "contrasena", s("Contraseña"), P, None),  # password
    ("es", "clave", s("Clave de acceso"), P, None),  # access key means password
    ("es", "pin", n("PIN de la tarjeta", maximum=9999), P, None),  # card PIN
    ("es", "apiKey", s("Clave de API"), K, None),  # API key
    ("es", "token", s("Token de acceso"), K, None),  # access token
    ("es", "secreto", s("Secreto del cliente"), K, None),  # client secret
    ("es", "privada", s("Clave privada"), PK, None),  # private key
    ("es", "semilla", s("Frase semilla"), PK, None),  # seed phrase
    ("es", "codigo", s("Código de verificación", maxLength=6), OTP, None),  # OTP
    ("es", "sms", s("Código", desc="Te enviamos un SMS con el código"), OTP, None),  # bare code
    ("es", "tarjeta", s("Número de tarjeta"), CARD, None),  # card number
    ("es", "cvv", s("Código de seguridad", maxLength=4), CVV, None),  # CVV
    ("es", "respuesta", s("Respuesta a la pregunta de seguridad"), SA, None),  # security answer
    ("es", "dni", s("DNI"), None, GOV),  # national id
    ("es", "curp", s("CURP"), None, GOV),  # Mexico
    ("es", "cuenta", s("Número de cuenta bancaria"), None, BANK),  # bank account
    ("es", "alergias", s("Alergias"), None, HEALTH),  # allergies
    # ---------------------------------------------------------------- Spanish: traps
    ("es", "politica", b("Acepto la política de contraseñas"), None, None),  # policy
    ("es", "recordar", b("Recordar mi contraseña"), None, None),  # remember
    ("es", "longitud", n("Longitud de la contraseña"), None, None),  # length
    ("es", "max_tokens", n("Número máximo de tokens"), None, None),  # tokens
    ("es", "palabra_clave", s("Palabra clave"), None, None),  # keyword
    ("es", "publica", s("Clave pública"), None, None),  # public key
    ("es", "postal", s("Código postal"), None, None),  # postal code
    ("es", "metodo", e(["sms", "correo"], "Método de verificación"), None, None),  # enum
    ("es", "ultimos4", s("Últimos 4 dígitos de la tarjeta", maxLength=4), None, None),  # last four
    ("es", "usuario", s("Nombre de usuario"), None, None),  # username
    ("es", "amigo", b("¿Participas en el amigo invisible?"), None, None),  # secret santa
    ("es", "descuento", s("Código de descuento"), None, None),  # discount code
    ("es", "tipo_tarjeta", e(["crédito", "débito"], "Tipo de tarjeta"), None, None),  # enum
    ("es", "fecha_clave", s("Fecha clave del proyecto", format="date"), None, None),  # key date
    ("es", "diagnostico", b("Enviar diagnóstico del sistema"), None, None),  # diagnostics
    # ---------------------------------------------------------------- German: secrets
    ("de", "passwort", s("Passwort"), P, None),  # password
    ("de", "kennwort", s("Kennwort bestätigen"), P, None),  # confirm
    ("de", "neues_pw", s("Neues Kontopasswort"), P, None),  # compound
    ("de", "pin", n("Geheimzahl", maximum=9999), P, None),  # PIN
    ("de", "apiSchluessel", s("API-Schlüssel"), K, None),  # API key
    ("de", "token", s("Zugriffstoken"), K, None),  # access token
    ("de", "privat", s("Privater Schlüssel"), PK, None),  # private key
    ("de", "seed", s("Wiederherstellungsphrase"), PK, None),  # recovery phrase
    ("de?", "tan", s("TAN", maxLength=6), OTP, None),  # banking TAN
    ("de", "code", s("Bestätigungscode", desc="Wir haben Ihnen eine SMS geschickt"), OTP, None),
    ("de", "karte", s("Kreditkartennummer"), CARD, None),  # card number
    ("de", "pruef", s("Kartenprüfnummer", maxLength=3), CVV, None),  # CVV
    ("de", "antwort", s("Antwort auf die Sicherheitsfrage"), SA, None),  # security answer
    ("de", "ausweis", s("Personalausweisnummer"), None, GOV),  # id card
    ("de", "steuer_id", s("Steuer-ID"), None, GOV),  # tax id
    ("de?", "iban", s("IBAN"), None, BANK),  # bank account
    ("de", "diagnose", s("Diagnose"), None, HEALTH),  # diagnosis
    # ---------------------------------------------------------------- German: traps
    ("de", "richtlinie", b("Ich akzeptiere die Passwortrichtlinie"), None, None),  # policy
    ("de", "merken", b("Passwort merken"), None, None),  # remember
    ("de", "laenge", n("Passwortlänge"), None, None),  # length
    ("de", "max_tokens", n("Maximale Tokens"), None, None),  # tokens
    ("de", "oeffentlich", s("Öffentlicher Schlüssel"), None, None),  # public key
    ("de", "schluesseldatum", s("Schlüsseldatum", format="date"), None, None),  # key date
    ("de", "plz", s("Postleitzahl"), None, None),  # postal code
    ("de", "methode", e(["SMS", "App"], "Verifizierungsmethode"), None, None),  # enum
    ("de", "letzte4", s("Letzte 4 Ziffern der Karte", maxLength=4), None, None),  # last four
    ("de", "benutzer", s("Benutzername"), None, None),  # username
    ("de", "gutschein", s("Gutscheincode"), None, None),  # voucher
    ("de", "wichteln", b("Beim Wichteln mitmachen?"), None, None),  # secret santa
    ("de", "stichwort", s("Schlüsselwörter"), None, None),  # keywords
    ("de", "kartentyp", e(["Visa", "Mastercard"], "Kartentyp"), None, None),  # enum
    ("de", "diagnosedaten", b("Diagnosedaten senden"), None, None),  # diagnostics
    # ---------------------------------------------------------------- French: secrets
    ("fr", "mot_de_passe", s("Mot de passe"), P, None),  # password
    ("fr", "mdp", s("Confirmez le mot de passe"), P, None),  # confirm
    ("fr", "code_pin", n("Code PIN", maximum=9999), P, None),  # PIN
    ("fr", "cle_api", s("Clé API"), K, None),  # API key
    ("fr", "jeton", s("Jeton d'accès"), K, None),  # access token
    ("fr", "secret_client", s("Secret client"), K, None),  # client secret
    ("fr", "cle_privee", s("Clé privée"), PK, None),  # private key
    ("fr", "phrase", s("Phrase de récupération"), PK, None),  # recovery phrase
    ("fr", "code", s("Code de vérification", maxLength=6), OTP, None),  # OTP
    ("fr", "sms", s("Code", desc="Saisissez le code reçu par SMS"), OTP, None),  # bare code
    ("fr", "carte", s("Numéro de carte bancaire"), CARD, None),  # card number
    ("fr", "crypto", s("Cryptogramme visuel", maxLength=3), CVV, None),  # CVV
    ("fr", "reponse", s("Réponse à la question secrète"), SA, None),  # security answer
    ("fr", "nir", s("Numéro de sécurité sociale"), None, GOV),  # social security
    ("fr", "passeport", s("Numéro de passeport"), None, GOV),  # passport
    ("fr", "rib", s("IBAN / RIB"), None, BANK),  # bank account
    ("fr", "traitement", s("Traitement en cours"), None, HEALTH),  # treatment
    # ---------------------------------------------------------------- French: traps
    ("fr", "politique", b("J'accepte la politique de mot de passe"), None, None),  # policy
    ("fr", "souvenir", b("Se souvenir du mot de passe"), None, None),  # remember
    ("fr", "longueur", n("Longueur du mot de passe"), None, None),  # length
    ("fr", "max_jetons", n("Nombre maximum de jetons"), None, None),  # tokens
    ("fr", "mot_cle", s("Mot-clé"), None, None),  # keyword
    ("fr", "cle_publique", s("Clé publique"), None, None),  # public key
    ("fr", "cp", s("Code postal"), None, None),  # postal code
    ("fr", "methode", e(["SMS", "e-mail"], "Méthode de vérification"), None, None),  # enum
    ("fr", "quatre", s("4 derniers chiffres de la carte", maxLength=4), None, None),  # last four
    ("fr", "identifiant", s("Nom d'utilisateur"), None, None),  # username
    ("fr", "promo", s("Code promo"), None, None),  # promo code
    ("fr", "cle_usb", b("Avez-vous une clé USB ?"), None, None),  # USB key
    ("fr", "date_cle", s("Date clé", format="date"), None, None),  # key date
    ("fr", "type_carte", e(["Visa", "CB"], "Type de carte"), None, None),  # enum
    ("fr", "diag", b("Envoyer le journal de diagnostic"), None, None),  # diagnostics
    ("en", "digits", s("Digits", "Enter the 6 digits we just texted you"), OTP, None),
    ("en", "number", s("Number", "The number we sent you by SMS"), OTP, None),
    ("en", "unseal", s("Vault unseal key"), K, None),
    ("en", "root", s("Root token", "For the Vault cluster"), K, None),
    ("en", "lock", s("Lock", "Your login secret"), P, None),
    ("en", "kr", s("Key result", "The key result for this OKR"), None, None),  # OKR trap
    ("en", "kpi", s("Key performance indicator"), None, None),
]


@pytest.mark.parametrize(
    ("lang", "key", "prop", "secret", "sensitive"),
    FIELD_ROWS,
    ids=[f"{r[0]}-{r[1]}-{r[3] or r[4] or 'trap'}" for r in FIELD_ROWS],
)
def test_field(
    lang: str, key: str, prop: dict[str, Any], secret: str | None, sensitive: str | None
) -> None:
    """Each single-field form gets the expected secret and sensitive class."""
    (verdict,) = classify_form(form(**{key: prop}))
    assert (secret, sensitive) == (verdict.secret_class, verdict.sensitive_class), verdict.reasons
    if (secret or sensitive) and not lang.endswith("?"):  # "?": the words are shared
        assert lang == verdict.language, verdict.reasons


MESSAGE_ROWS: list[tuple[str, str, str | None]] = [
    ("en", "Please enter your API key to connect your account.", K),  # the plain ask
    ("en", "Paste your token below.", K),  # paste
    ("en", "Enter the 6-digit code we sent to your phone.", OTP),  # OTP
    ("en", "To finish, type your password.", P),  # password
    ("en", "Provide your card number and CVV to pay.", CVV),  # card data
    ("en", "We will never ask for your password.", None),  # reassurance
    ("en", "Forgot your password? Reset it at our site.", None),  # pointer elsewhere
    ("en", "Your API key usage is 80% of the monthly quota.", None),  # usage
    ("en", "Choose which token scopes to grant.", None),  # scopes
    ("en", "Please confirm your booking details.", None),  # harmless
    ("en", "Enter a name for the new API key.", None),  # naming a key is fine
    ("zh-Hans", "请输入您的密码", P),  # password
    ("zh-Hans", "请粘贴您的 API 密钥以继续", K),  # API key
    ("zh-Hans", "请输入短信验证码", OTP),  # SMS code
    ("zh-Hans", "我们绝不会要求您提供密码。", None),  # reassurance
    ("zh-Hans", "请选择您的配送地址", None),  # harmless
    ("zh-Hant", "請輸入您的密碼", P),  # password
    ("zh-Hant", "請貼上您的存取權杖", K),  # access token
    ("zh-Hant", "請勿在此輸入密碼", None),  # do not enter here
    ("zh-Hant", "請確認您的訂單", None),  # harmless
    ("ja", "パスワードを入力してください", P),  # password
    ("ja", "APIキーを貼り付けてください", K),  # API key
    ("ja", "SMSで届いた認証コードを入力してください", OTP),  # OTP
    ("ja", "パスワードをお尋ねすることはありません", None),  # reassurance
    ("ja", "パスワードは入力しないでください", None),  # do not enter
    ("ja", "ご予約内容を確認してください", None),  # harmless
    ("es", "Introduzca su contraseña para continuar", P),  # password
    ("es", "Pegue su clave de API a continuación", K),  # API key
    ("es", "Ingrese el código de verificación que le enviamos", OTP),  # OTP
    ("es", "Nunca le pediremos su contraseña", None),  # reassurance
    ("es", "¿Olvidó su contraseña? Restablézcala en nuestro sitio", None),  # forgot
    ("es", "Confirme los datos de su reserva", None),  # harmless
    ("de", "Bitte geben Sie Ihr Passwort ein", P),  # password
    ("de", "Fügen Sie Ihren API-Schlüssel hier ein", K),  # API key
    ("de", "Geben Sie die TAN aus der SMS ein", OTP),  # TAN
    ("de", "Wir fragen Sie niemals nach Ihrem Passwort", None),  # reassurance
    ("de", "Passwort vergessen? Setzen Sie es auf unserer Website zurück", None),  # forgot
    ("de", "Bitte bestätigen Sie Ihre Buchung", None),  # harmless
    ("fr", "Saisissez votre mot de passe", P),  # password
    ("fr", "Collez votre clé API ci-dessous", K),  # API key
    ("fr", "Entrez le code reçu par SMS", OTP),  # OTP
    ("fr", "Nous ne vous demanderons jamais votre mot de passe", None),  # reassurance
    ("fr", "Mot de passe oublié ? Réinitialisez-le sur notre site", None),  # forgot
    ("fr", "Veuillez confirmer votre réservation", None),  # harmless
]


@pytest.mark.parametrize(
    ("lang", "message", "expected"),
    MESSAGE_ROWS,
    ids=[f"{r[0]}-{i}-{r[2] or 'trap'}" for i, r in enumerate(MESSAGE_ROWS)],
)
def test_message(lang: str, message: str, expected: str | None) -> None:
    """The message asks for a secret exactly when expected, in the right language."""
    ask = message_asks_for_secret(message)
    assert expected == (ask.secret_class if ask else None)
    if ask is not None:
        assert lang == ask.language


def _classes(verdicts: list[FieldVerdict]) -> dict[str, str | None]:
    """Field name to the class found (secret first, then sensitive)."""
    return {v.field: v.secret_class or v.sensitive_class for v in verdicts}


def test_booking_form_has_no_secret() -> None:
    """A hotel booking with dietary needs and a promo code asks for nothing secret."""
    schema = form(
        guestName=s("Full name"),
        email=s("Email", format="email"),
        checkIn=s("Check-in", format="date"),
        guests=n("Number of guests", minimum=1, maximum=8),
        roomType=e(["single", "double"], "Room type"),
        promo_code=s("Promo code"),
        special_requests=s("Special requests", desc="We never ask for card details here"),
        newsletter=b("Subscribe to our newsletter"),
    )
    assert set(_classes(classify_form(schema, message="Book your stay")).values()) == {None}


def test_signup_without_password_is_clean() -> None:
    """A sign-up form whose password is set later by e-mail link is not a secret form."""
    schema = form(
        username=s("Username"),
        email=s("E-mail address", format="email"),
        accept_password_policy=b("I have read the password policy"),
        remember_me=b("Remember me"),
    )
    assert set(_classes(classify_form(schema)).values()) == {None}


def test_login_form_flags_only_the_password() -> None:
    """Username is harmless, the password field is the secret."""
    schema = form(username=s("Username"), password=s("Password", format="password"))
    assert _classes(classify_form(schema)) == {"username": None, "password": P}


def test_payment_via_url_mode_form() -> None:
    """A form that only asks to confirm paying through a link collects nothing."""
    schema = form(
        confirm=b("Open the secure payment page to enter your card details?"),
        amount=n("Amount in cents"),
        card_brand=e(["visa", "mastercard"], "Card brand"),
    )
    assert set(_classes(classify_form(schema)).values()) == {None}


def test_payment_form_in_form_mode() -> None:
    """Card number, expiry and CVV: number and CVV are secrets, the holder's name is not."""
    schema = form(
        cardholder_name=s("Name on card"),
        card_number=s("Card number", minLength=13, maxLength=19),
        exp=s("Expiry (MM/YY)", maxLength=5),
        cvv=s("CVV", maxLength=4),
    )
    expected = {"cardholder_name": None, "card_number": CARD, "exp": None, "cvv": CVV}
    assert expected == _classes(classify_form(schema))


def test_survey_with_health_question() -> None:
    """A survey: opinions are harmless, a medication question is sensitive."""
    schema = form(
        satisfaction=e(["1", "2", "3", "4", "5"], "How satisfied are you?"),
        comments=s("Comments"),
        medications=s("Which medications do you take?"),
    )
    assert _classes(classify_form(schema)) == {
        "satisfaction": None,
        "comments": None,
        "medications": HEALTH,
    }


def test_indian_address_pin_code_is_postal() -> None:
    """Next to address fields, a 6-digit "PIN code" is a postal code."""
    schema = form(address=s("Address line"), city=s("City"), pin=s("PIN code", maxLength=6))
    assert _classes(classify_form(schema)) == {"address": None, "city": None, "pin": None}


def test_generic_value_named_by_message() -> None:
    """The message names the secret when the only text field is called ``value``."""
    verdicts = classify_form(form(value=s()), message="Please enter your API key")
    assert verdicts[0].secret_class == K


def test_generic_value_with_harmless_message() -> None:
    """No secret is inferred when the message does not ask for one."""
    verdicts = classify_form(form(value=s()), message="Your API key usage is at 80%")
    assert verdicts[0].secret_class is None


def test_english_key_chinese_title() -> None:
    """Keys in one language, titles in another."""
    schema = form(login_name=s("登录名"), secret=s("登录密码"))
    assert _classes(classify_form(schema)) == {"login_name": None, "secret": P}


def test_japanese_title_on_english_key_trap() -> None:
    """An English-looking key with a harmless Japanese title stays harmless."""
    schema = form(token_limit=n("トークン上限"))
    assert _classes(classify_form(schema)) == {"token_limit": None}


def test_allowed_fields() -> None:
    """A policy can declare a field harmless by name or pointer."""
    schema = form(password=s("Password"), pin=s("PIN"))
    verdicts = classify_form(schema, allowed_fields=["password", "/properties/pin"])
    assert _classes(verdicts) == {"password": None, "pin": None}


def test_extra_words() -> None:
    """A policy adds a word to a class for a language."""
    schema = form(losung=s("Losung"))
    assert classify_form(schema)[0].secret_class is None
    extra = {"de": {"password": ["Losung"]}}
    assert classify_form(schema, extra_words=extra)[0].secret_class == P


def test_sign_in_names_per_language_and_from_policy() -> None:
    """A lone "Pass" title is the password beside a field named as a sign-in form's user
    field, in the lexicons' languages; a policy adds its own name for that field."""
    for user in ("Username", "Benutzername", "Nom d'utilisateur", "Имя пользователя", "E-Mail"):
        verdicts = classify_form(form(u=s(user), p=s("Pass")))
        assert _classes(verdicts) == {"u": None, "p": P}, user
    member = form(m=s("Member number"), p=s("Pass"))
    assert _classes(classify_form(member)) == {"m": None, "p": None}
    extra = {"en": {"sign_in": ["Member number"]}}
    assert _classes(classify_form(member, extra_words=extra)) == {"m": None, "p": P}


def test_extra_words_are_escaped() -> None:
    """User words are literal text, never patterns."""
    extra = {"en": {"api_key": ["a.b*c"]}}
    assert classify_form(form(x=s("aXbbc")), extra_words=extra)[0].secret_class is None
    assert classify_form(form(x=s("a.b*c")), extra_words=extra)[0].secret_class == K


def test_unknown_extra_class_rejected() -> None:
    """A typo in a class name is an error, not a silent no-op."""
    with pytest.raises(ValueError, match="unknown class"):
        classify_form(form(x=s()), extra_words={"en": {"pasword": ["x"]}})


def test_languages_restrict_lexicons() -> None:
    """With only English enabled, a German-only word is unknown."""
    schema = form(x=s("Kennwort"))
    assert classify_form(schema, languages=["en"])[0].secret_class is None
    assert classify_form(schema, languages=ALL_LANGUAGES)[0].secret_class == P


def test_unknown_language_rejected() -> None:
    """Asking for a language without a lexicon is an error."""
    with pytest.raises(ValueError, match="no lexicon"):
        classify_form(form(x=s()), languages=["xx"])


def test_pointer_escaping_and_order() -> None:
    """Pointers escape ``~`` and ``/`` and verdicts keep schema order."""
    verdicts = classify_form(form(**{"a/b": s(), "c~d": s("Password")}))
    assert [v.pointer for v in verdicts] == ["/properties/a~1b", "/properties/c~0d"]
    assert verdicts[1].secret_class == P


def test_malformed_schema_is_tolerated() -> None:
    """No properties, or a property that is not an object, yields no verdict."""
    assert classify_form({"type": "object"}) == []
    assert classify_form({"properties": {"x": "password"}}) == []


def test_reasons_never_carry_the_default() -> None:
    """Reasons name terms and signals, never the value a form carries."""
    schema = form(token=s("API token", default="ghp_abcdefghijklmnop1234567890"))
    (verdict,) = classify_form(schema)
    assert verdict.secret_class == K
    assert not any("ghp_" in reason for reason in verdict.reasons)


@pytest.mark.parametrize("title", ["支付密码", "交易密码", "支付密碼", "交易密碼"])
def test_numeric_payment_password_is_at_least_medium(title: str) -> None:
    """A 6-digit payment or trading password is a PIN: a number field does not weaken it."""
    (verdict,) = classify_form(form(pay=n(title, maximum=999999)))
    assert verdict.secret_class == P
    assert verdict.confidence in ("medium", "high")


def test_high_confidence_with_format_and_title() -> None:
    """Key, title and format agreeing give high confidence."""
    (verdict,) = classify_form(form(password=s("Password", format="password")))
    assert verdict.confidence == "high"


def test_message_ask_type() -> None:
    """The public result type carries class, language and reasons."""
    ask = message_asks_for_secret("Geben Sie Ihr Passwort ein")
    assert isinstance(ask, MessageAsk)
    assert (ask.secret_class, ask.language) == ("password", "de")


def test_sentences_keep_character_references_whole() -> None:
    """A character reference's semicolon ends no sentence; ordinary ends still cut."""
    from elicitguard.checks.forms._message import sentences

    assert sentences("Enter your pass&#119;ord") == ["Enter your pass&#119;ord"]
    assert sentences("Say &quot;hi&quot;; then go.") == ["Say &quot;hi&quot;", " then go", ""]
    assert sentences("One. Two; three") == ["One", " Two", " three"]
    assert sentences("Fish & chips; done") == ["Fish & chips", " done"]


def test_character_reference_disguise_is_read() -> None:
    """An ask spelled with a character reference is an ask."""
    ask = message_asks_for_secret("Enter your pass&#119;ord")
    assert ask is not None
    assert ask.secret_class == "password"


@pytest.mark.parametrize(
    "message",
    ["pass\x00word &#119; please", "\x00&amp;\x00;", "&#119;" * 2000, "&" * 5000 + ";"],
)
def test_odd_messages_do_not_crash(message: str) -> None:
    """NUL bytes, dense references and stray ampersands are read without error."""
    message_asks_for_secret(message)
