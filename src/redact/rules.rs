//! The rule table: every built-in rule's name, pattern, secret capture groups, checks in code and scanner kind.

use std::sync::LazyLock;

use super::scanners::FORM_KEY;

/// A condition checked in code on a candidate secret; a failed check leaves the match unchanged.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// Not a shell reference to the key itself (`TOKEN=${TOKEN}`, `KEY=$KEY`, `X=${X:-}`).
    SameNameRef,
    /// Not any pure shell reference (`$VAR`, `${VAR}`, `${VAR:-}`), template (`{name}`, `<value>`) or code
    /// (`os.environ[...]`, `get_token()`); applies to unquoted values only.
    NotPlaceholder,
    /// Like `NotPlaceholder` but shell references count as secrets (`SameNameRef` decides about them).
    NotTemplate,
    /// A value stops before `;key=` (connection strings: `password=x;encrypt=true`).
    CutAtSemicolon,
    /// Unquoted values must not be a bare identifier or keyword (`token = await`, `pass: see`): source code.
    NotIdentifier,
    /// `sk-…`: needs a digit, the `sk-ant-` prefix, or 24+ characters (so `sk-learning` stays).
    SkToken,
    /// A bare 40-character AWS secret: upper, lower, a digit or `/+=`, and a non-hex letter.
    AwsBare,
    /// Not inside a `data:…;base64,` payload.
    NotBase64Data,
    /// Not inside a URL (`scheme://` earlier in the same whitespace-free run).
    NotInUrl,
    /// URL user-info: not a port followed by a path (`host:8080/p@x`).
    NotPort,
    /// The `key` group, decoded and normalized, is a sensitive query / form key.
    SensitiveKey,
    /// CLI prose such as `--password or --password-file`.
    NotConjunction,
    /// An `=` header value stops before a following `&key=` form pair.
    CutAtPair,
    /// Always mask as `***` (structured values whose length says nothing useful).
    Stars,
    /// The quotes around the value are replaced too, the mask is made from the text inside them.
    DropQuotes,
    /// Always `***`, even over a value an earlier rule masked (OpenClaw masks these fields twice, and a second
    /// mask of a shortened `first6…last4` value is `***`).
    Remask,
    /// Trailing delimiters (`"'`,;)}]`) close the value rather than end the secret: `(pass: value)`.
    TrimDelims,
    /// YAML: the value line (group 2 indent) is indented deeper than the key line (group 1 indent).
    DeeperIndent,
    /// `sk_…` / `am_…`: a random token, not a code identifier (`sk_write_queue`): no `_` and 16+ characters after
    /// the prefix, or upper case, lower case and a digit.
    NotSnakeIdentifier,
    /// memsift's context rules: the value looks generated, not like a name, path, version or date
    /// (`scanners::regex_rules::random_token`).
    RandomToken,
    /// A flag value starting with `-`: only after `=`, or when it looks random (16+ characters with upper case,
    /// lower case and a digit), so `--token -v` stays.
    DashValue,
    /// Not a pure shell reference (`$VAR`, `${VAR}`, `${VAR:-}`, `${VAR:?message}`), quoted or not: a placeholder
    /// the shell fills in, not a secret (`{"DISCORD_BOT_TOKEN": "${DISCORD_BOT_TOKEN:-}"}`).
    NotEnvRef,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Regex,
    Pem,
    Authorization,
    FormBody,
}

pub(super) struct Spec {
    pub(super) name: &'static str,
    pub(super) pattern: &'static str,
    /// Capture groups that may hold the secret, first participating non-empty one wins.
    pub(super) groups: &'static [usize],
    /// The group holding an unquoted value (code checks apply to it only); 0 for none.
    pub(super) unquoted: usize,
    pub(super) checks: &'static [Check],
    pub(super) kind: Kind,
}

const fn rule(name: &'static str, pattern: &'static str, groups: &'static [usize], checks: &'static [Check]) -> Spec {
    Spec { name, pattern, groups, unquoted: 0, checks, kind: Kind::Regex }
}

const fn valued(name: &'static str, pattern: &'static str, checks: &'static [Check]) -> Spec {
    // Patterns built with `V!`: groups 1..=3 are "…", '…', `…` quoted values, group 4 the unquoted one.
    Spec { name, pattern, groups: &[1, 2, 3, 4], unquoted: 4, checks, kind: Kind::Regex }
}

const fn token(name: &'static str, pattern: &'static str) -> Spec {
    Spec { name, pattern, groups: &[1], unquoted: 0, checks: &[], kind: Kind::Regex }
}

/// An assignment value: double-, single- or back-quoted (an unterminated quote runs to the end of the line), or
/// unquoted. Double-quoted values stop at `\"` and `\\`, so JSON-in-JSON (`\"KEY\": \"v\"`) masks only `v`.
macro_rules! value {
    ($unquoted:literal) => {
        concat!(r#"(?:"((?:[^"\\\n]|\\[^"\\\n])+)"?|'([^'\n]+)'?|`([^`\n]+)`?|("#, $unquoted, "))")
    };
}

/// Like `value!`, but a quote must close on the line: an unterminated one is part of an unquoted value that ends
/// at whitespace (`token="abc rest` masks `"abc`).
macro_rules! closed_value {
    ($unquoted:literal) => {
        concat!(r#"(?:"((?:[^"\\\n]|\\[^"\\\n])+)"|'([^'\n]+)'|`([^`\n]+)`|("#, $unquoted, "))")
    };
}

pub(super) static SPECS: LazyLock<Vec<Spec>> = LazyLock::new(|| {
    #[allow(clippy::enum_glob_use)]
    use Check::*;
    vec![
        // PEM private keys: the BEGIN line stays, the body up to the next "-----" becomes "…redacted…".
        Spec {
            name: "pem-private-key",
            pattern: r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----",
            groups: &[],
            unquoted: 0,
            checks: &[],
            kind: Kind::Pem,
        },
        // URL user-info: scheme://user:PASSWORD@host. A password may hold "#", "?", "/" and "@" (up to the last "@"
        // before the host: later "@" count while the part between them has no "/", so `p@ss#1@host` is one
        // password and `u:p@host/a@b` a path).
        rule(
            "url-userinfo",
            r"(?i)(?-u:\b)[a-z][a-z0-9+.-]{1,20}://[^\s/?#@:]*:([^\s@]+(?:@[^\s@/]+)*)@",
            &[1],
            &[NotPort],
        ),
        // Authorization / Proxy-Authorization / X-Authorization values: parsed in code (schemes, auth-params,
        // folded and escaped whitespace, serialized quotes).
        Spec {
            name: "authorization",
            pattern: r#"(?i)(?:^|[^A-Za-z0-9_?&-]|\\[nrt])(?:(?:proxy|x)-)?authorization(?:\\*["'])?[ \t]*[:=]"#,
            groups: &[],
            unquoted: 0,
            checks: &[],
            kind: Kind::Authorization,
        },
        // API-key style headers: x-api-key: …, X-<Product>-Token: …, PRIVATE-TOKEN: …, cookie: ….
        rule(
            "api-key-header",
            concat!(
                r#"(?i)(?:^|[^A-Za-z0-9_?&-])(?:x-api-key|api-key|apikey|x-goog-api-key|x-api-token|x-access-token"#,
                r"|x-auth-token|private-token|x-[a-z0-9]+(?:-[a-z0-9]+)?-token|x-pomerium-jwt-assertion|set-cookie",
                r#"|cookie)(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?([^\s"',;\\]+)"#
            ),
            &[1],
            &[CutAtPair],
        ),
        // A bare "Bearer <token>" of 18+ characters.
        rule("bearer-token", r"(?i)(?:^|[^A-Za-z0-9_-])bearer[ \t]+([A-Za-z0-9._~+/=-]{18,})", &[1], &[]),
        // UPPER_CASE env assignments: NAME ending in KEY/TOKEN/SECRET/PASSWORD/PASSWD (or _PASS, payment
        // fields, SECRET_KEY_BASE); upper case only, so prose and code stay. Also JSON-escaped quotes.
        Spec {
            name: "env-assignment",
            groups: &[2, 3, 4, 5],
            unquoted: 5,
            kind: Kind::Regex,
            pattern: concat!(
                // Not a name inside a shell reference (`${DISCORD_BOT_TOKEN:-}` is no `TOKEN: -}` assignment).
                r"(?:^|[^A-Za-z0-9_{]|(?:^|[^$])\{)(?P<key>[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|_PASS|CARD_?NUMBER|CVC|CVV",
                r"|SECURITY_?CODE|PAYMENT_?CREDENTIAL)(?:_BASE)?)(?-u:\b)[ \t]*[=:][ \t]*\\*",
                value!(r#"[^\s"'\\`]+"#)
            ),
            checks: &[SameNameRef, NotTemplate],
        },
        // JSON fields (also JSON put in a JSON string): "apiKey": "…", \"client_secret\": \"…\".
        rule(
            "json-field",
            concat!(
                r#"(?i)\\?"(?:[a-z0-9_-]*(?:api[_-]?key|api[_-]?token|api[_-]?secret|access[_-]?key|token|secret|"#,
                r"password|passwd|passphrase|credential|private[_-]?key|secret[_-]?access[_-]?key|key[_-]?material",
                r"|card[_-]?number|card[_-]?cvc|card[_-]?cvv|security[_-]?code|cookie)|cvc|cvv|pass|pwd|jwt)",
                r#"\\?"[ \t]*:[ \t]*(?:\\?"((?:[^"\\\n]|\\[^"\\\n])+)|([0-9]{3,})(?:$|[^0-9A-Za-z_.]))"#
            ),
            &[1, 2],
            &[NotEnvRef],
        ),
        // Object and config fields with quoted values, any case: appSecret: '…', Access_Token: "…", token: '…'.
        Spec {
            name: "quoted-field",
            groups: &[1, 2, 3, 4],
            unquoted: 0,
            kind: Kind::Regex,
            checks: &[NotEnvRef],
            pattern: concat!(
                // After a space or `,{([;|>` and a markdown backtick (`` `api_secret = "…"` ``).
                r"(?:^|[\s,{(\[;|>`])[\x22']?(?:[a-z0-9_.-]*(?:api[_-]?key|api[_-]?secret|access[_-]?token|refresh[_-]?token",
                r"|id[_-]?token|auth[_-]?token|client[_-]?secret|app[_-]?secret|private[_-]?key|secret[_-]?key",
                r"|credential|secret[_-]?value|raw[_-]?secret|key[_-]?material|cookie|password|passphrase|passwd",
                r"|_pass|token|secret|jwt)|pass|[a-z][a-zA-Z0-9]*(?:ApiKey|Secret|Token|Password|Credential)|apiKey",
                r"|clientSecret|appSecret|authToken|accessToken|refreshToken|privateKey",
                // Mixed-case spellings of the compound names (Access_Token, Api_Key); not whole UPPER_CASE env
                // names with a generic suffix, which the assignment rules handle (and their `${VAR}` references).
                r"|(?i:access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|api[_-]?key|api[_-]?secret",
                r"|client[_-]?secret|app[_-]?secret|private[_-]?key|secret[_-]?key))[\x22']?[ \t]*[:=][ \t]*(?:",
                // JSON-escaped quotes (a command inside a JSON string), then plain ones.
                r#"\\+"((?:[^"\\\n]|\\[^"\\\n])+)\\+"|"([^"\n]+)"|'([^'\n]+)'|`([^`\n]+)`)"#
            ),
        },
        // Quoted fields that two of OpenClaw's patterns mask (a structured JSON field and an ambiguous quoted
        // field, or a quoted field and a config assignment / auth header): the second mask of the shortened value
        // is `***`, so these are always `***`: {"credential":"…"}, {"apiKey":"…"}, authorization: '…'.
        rule(
            "double-masked-field",
            concat!(
                r#"(?i)(?:^|[\s,{])(?:"(?:access_token|api[_-]?key|auth_?token|authorization|client_?secret|cookie"#,
                r"|credential|id_token|key_material|private_key|proxy-authorization|raw_secret|refresh_token",
                r#"|secret_input|secret_value|set-cookie|x-api-key|x-auth-token)"[ \t]*:[ \t]*"([^"'\r\n]+)""#,
                r"|(?:(?-i:access[_-]token|api[_-]key|auth[_-]token|id[_-]token|key[_-]material|refresh[_-]token",
                r#"|apikey|APIKEY)|authorization|'(?:api-key|authorization)')[ \t]*[:=][ \t]*(?:"([^"'\r\n]+)"|'([^"'\r\n]+)'))"#
            ),
            &[1, 2, 3],
            &[Remask],
        ),
        // Form bodies (code=…&state=…), `body: key=value` pairs and pairs with encoded or obfuscated keys
        // (client%5Fsecret=…): parsed per line in code, sensitive values become `***`.
        Spec { name: "form-body", pattern: FORM_KEY, groups: &[], unquoted: 0, checks: &[], kind: Kind::FormBody },
        // Standalone lower-case assignments in diagnostics: (password=…), [token=…], access_token=…, pass=….
        valued(
            "standalone-assignment",
            concat!(
                r"(?:^|[\s,;({\[|>`])(?i:access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|hook[_-]?token",
                r"|api[_-]?key|api[_-]?secret|client[_-]?secret|app[_-]?secret|private[_-]?key|secret[_-]?key",
                r"|authorization|jwt|token|secret|password|passphrase|pass|passwd|credential|card[_-]?number|cvc",
                r"|cvv|security[_-]?code|payment[_-]?credential|shared[_-]?payment[_-]?token)=\\*",
                closed_value!(r#"[\x22'`]?[^\s&#"'`<>,]+(?:,[^\s&#"'`<>,]+)*"#)
            ),
            &[NotPlaceholder, NotEnvRef, CutAtSemicolon],
        ),
        // Config-file assignments with spaces or a colon: password = …, db_password: …, jdbc.password=…,
        // tls.passphrase: …, pass: …. Unquoted identifiers (`token = await`) are code and stay.
        valued(
            "config-assignment",
            concat!(
                r"(?:^|[\s,{(\[;|>`])(?:[a-z0-9][a-z0-9._-]*[._-])?(?:access[_-]?token|refresh[_-]?token|id[_-]?token",
                r"|auth[_-]?token|hook[_-]?token|api[_-]?key|api[_-]?secret|client[_-]?secret|app[_-]?secret",
                r"|private[_-]?key|secret[_-]?key|key[_-]?material|jwt|token|secret|password|passphrase|pass|passwd)",
                r"(?:[ \t]*:[ \t]*|[ \t]*=[ \t]*)\\*",
                closed_value!(r#"[^\s&#"'`<>,]+(?:,[^\s&#"'`<>,]+)*"#)
            ),
            &[NotPlaceholder, NotEnvRef, NotIdentifier, CutAtSemicolon, TrimDelims],
        ),
        // YAML with the value on the next, deeper-indented line: `pass:\n    value`.
        rule(
            "yaml-next-line",
            concat!(
                r"(?m)^([ \t]*)(?:[a-z0-9][a-z0-9._-]*[._-])?(?:access[_-]?token|refresh[_-]?token|id[_-]?token",
                r"|auth[_-]?token|hook[_-]?token|api[_-]?key|api[_-]?secret|client[_-]?secret|app[_-]?secret",
                r"|private[_-]?key|secret[_-]?key|key[_-]?material|jwt|token|secret|password|passphrase|pass|passwd)",
                r#"[ \t]*:[ \t]*\r?\n([ \t]+)([^\s#"'`<>]+)[ \t]*\r?$"#
            ),
            &[3],
            &[DeeperIndent, NotPlaceholder, NotIdentifier],
        ),
        // Connection strings: AccountKey=… (Azure), Pwd=… (ODBC), Password=…; up to ";".
        rule(
            "connection-string",
            r#"(?i)(?:^|[;\s"'])(?:AccountKey|SharedAccessKey|Pwd|Password)=([^;\s"']+)"#,
            &[1],
            // A `&key=` after the value is a form body's next pair (`password=value&safe=1`), not the password.
            &[NotPlaceholder, CutAtPair],
        ),
        // CLI flags: --api-key X, --token=X, --aws-secret-access-key=X (not --token-file, --password-stdin).
        valued(
            "cli-flag",
            concat!(
                r"(?i)(?:^|[^A-Za-z0-9_-])--(?:aws[_-]?secret[_-]?access[_-]?key|awsSecretAccessKey|api[_-]?key",
                r"|hook[_-]?token|access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|client[_-]?secret",
                r"|private[_-]?key|card[_-]?number|card[_-]?cvc|card[_-]?cvv|cvc|cvv|security[_-]?code",
                r"|payment[_-]?credential|shared[_-]?payment[_-]?token|credential|token|secret|password|passwd)",
                r"(?:=|[ \t]+)",
                value!(r#"-*[^\s"'\-=:$<][^\s"']*"#)
            ),
            &[NotPlaceholder, NotConjunction, DashValue],
        ),
        // CLI passwords: curl -u user:pw, mysql -pPW, sshpass -p PW.
        rule("cli-user-password", r#"(?:^|\s)(?:-u|--user)[ \t]+["']?[^\s:"']+:([^\s"']+)"#, &[1], &[NotPlaceholder]),
        rule(
            "cli-mysql-password",
            r#"(?-u:\b)mysql(?:dump|admin|sh)?(?-u:\b)[^\n|;&]*?[ \t]-p([^\s"'-][^\s"']*)"#,
            &[1],
            &[NotPlaceholder],
        ),
        // sshpass -p PW, -p 'two words', -p "…" (also JSON-escaped, inside a serialized command), after other flags.
        Spec {
            name: "cli-sshpass",
            pattern: concat!(
                r#"(?-u:\b)sshpass(?:[ \t]+-[A-Za-oq-z][^\s]*)*[ \t]+-p[ \t]*(?:\\+"((?:[^"\\\n]|\\[^"\\\n])+)\\+""#,
                r#"|"([^"\n]+)"|'([^'\n]+)'|([^\s"'\\]+))"#
            ),
            groups: &[1, 2, 3, 4],
            unquoted: 4,
            checks: &[NotPlaceholder],
            kind: Kind::Regex,
        },
        // Sensitive URL query keys (?token=, &client%5Fsecret=, ?Access-Token=, &…_token_<id>=); the key is
        // decoded and checked in code.
        rule(
            "url-query",
            r#"[?&](?P<key>[^\s=&?#"'<>]+)=("[^"&\s#<>\\]+"|'[^'&\s#<>\\]+'|["']?[^&\s#"'`<>\\]+)"#,
            &[2],
            &[SensitiveKey, NotPlaceholder, DropQuotes],
        ),
        // AWS secret access keys: labeled (also --aws-secret-access-key=, awsSecretAccessKey, URL-encoded) …
        rule(
            "aws-secret-access-key",
            concat!(
                r#"(?i)(?:aws[_-]?secret[_-]?access[_-]?key|secretaccesskey)["']?[ \t]*[=:][ \t]*["']?"#,
                r"([A-Za-z0-9/+=%]{20,})"
            ),
            &[1],
            &[],
        ),
        // Vendor token shapes.
        Spec {
            name: "openai-anthropic",
            pattern: r"(?:^|[^A-Za-z0-9_])(sk-[A-Za-z0-9_-]{8,})",
            groups: &[1],
            unquoted: 0,
            checks: &[SkToken],
            kind: Kind::Regex,
        },
        Spec {
            name: "generic-sk-am",
            pattern: r"(?:^|[^A-Za-z0-9_])(sk_[A-Za-z0-9_]{10,}|am_[A-Za-z0-9_-]{10,})",
            groups: &[1],
            unquoted: 0,
            checks: &[NotSnakeIdentifier],
            kind: Kind::Regex,
        },
        token("github", r"(gh[pousr]_[A-Za-z0-9]{10,})"),
        token("github-pat", r"(github_pat_[A-Za-z0-9_]{10,})"),
        token("gitlab-pat", r"(glpat-[A-Za-z0-9._=-]{20,})"),
        token("gitlab-oauth", r"(gloas-(?:[A-Fa-f0-9]{65,}|[A-Za-z0-9_-]{64}|[A-Fa-f0-9]{32,}))"),
        token(
            "gitlab",
            concat!(
                r"((?:gldt|glwt|glsoat|glffct|glrt)-[A-Za-z0-9._-]{20,}|glcbt-[A-Za-z0-9]{1,5}_[A-Za-z0-9_-]{20,}",
                r"|glptt-[A-Za-z0-9_-]{40,}|glft-(?:[A-Za-z0-9_-]{20,}|[a-h0-9]+-[0-9]+_)|glimt-[A-Za-z0-9_-]{25,}",
                r"|glagent-[A-Za-z0-9_-]{50,}|glrtr?-[A-Za-z0-9_-]{27,300}\.[0-9a-z]{2}\.[0-9a-z]{9}",
                r"|GR1348941[A-Za-z0-9_-]{20,}|_gitlab_session=[A-Za-z0-9%._-]{20,})"
            ),
        ),
        token("slack-token", r"(xox[baprs]-[A-Za-z0-9-]{10,})"),
        token("slack-app-token", r"(xapp-[A-Za-z0-9-]{10,})"),
        token("slack-webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{8,})"),
        token("discord-webhook", r"discord(?:app)?\.com/api/webhooks/([0-9]+/[A-Za-z0-9_-]{20,})"),
        token(
            "discord-bot-token",
            r"(?:^|[^A-Za-z0-9_.-])([MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,})",
        ),
        token(
            "discord-context-token",
            r"(?is)discord.{0,40}?(?:^|[^A-Za-z0-9_-])([A-Za-z0-9_-]{24}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27})",
        ),
        token("groq", r"(gsk_[A-Za-z0-9_-]{10,})"),
        token("google-api-key", r"(AIza[0-9A-Za-z_-]{20,})"),
        token("google-oauth", r"(ya29\.[0-9A-Za-z_./+=-]{10,}|1//0[0-9A-Za-z_./+=-]{10,})"),
        token(
            "jwt",
            r"(eyJ[A-Za-z0-9_-]{5,}\.(?:eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*|[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}))",
        ),
        token("perplexity", r"(pplx-[A-Za-z0-9_-]{10,})"),
        token("stripe", r"((?:[srp]k|rk)_(?:live|test)_[A-Za-z0-9]{10,})"),
        token("stripe-webhook-secret", r"(whsec_[A-Za-z0-9+/=]{20,})"),
        token("sendgrid", r"(SG\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"),
        token("npm", r"(npm_[A-Za-z0-9]{10,})"),
        token("pypi", r"(pypi-[A-Za-z0-9_-]{10,})"),
        token("digitalocean", r"(do[opr]_v1_[A-Za-z0-9]{10,})"),
        token("doppler", r"(dp\.(?:ct|pt|sa|scim|audit|st)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44})"),
        token("docker", r"(dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,32})"),
        token("vault", r"(?:^|[^A-Za-z0-9_])(hv[sbr]\.[A-Za-z0-9_-]{24,})"),
        token("shopify", r"(shp(?:at|ca|pa|ss)_[A-Fa-f0-9]{32})"),
        token("replicate", r"(r8_[A-Za-z0-9]{10,})"),
        token("mailgun", r"(?:^|[^A-Za-z0-9_-])(key-[0-9a-zA-Z]{32})"),
        token("twilio", r"(?:^|[^A-Za-z0-9_])(SK[0-9a-fA-F]{32})(?:$|[^A-Za-z0-9_])"),
        token(
            "misc-vendor",
            concat!(
                r"(fal_[A-Za-z0-9_-]{10,}|bb_live_[A-Za-z0-9_-]{10,}|bkua_[a-z0-9]{40}|CCIPAT_[A-Za-z0-9]{22}_",
                r"[A-Fa-f0-9]{40}|sbp_[a-z0-9]{40}|dd[pw]_[A-Za-z0-9]{36}|glsa_[A-Za-z0-9_]{32,}",
                r"|glc_eyJ[A-Za-z0-9+/=]{60,160}|nfp_[A-Za-z0-9_]{36}|CFPAT-[A-Za-z0-9_-]{40,}",
                r"|BBDC-[A-Za-z0-9+/@_-]{40,50}|HRKU-AA[A-Za-z0-9_-]{20,}",
                r"|pat-(?:eu|na)1-[A-Za-z0-9]{8}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{12}",
                r"|apify_api_[A-Za-z0-9-]{20,}|FlyV1 fm\d+_[A-Za-z0-9+/=,_-]{100,}|fio-u-[A-Za-z0-9_-]{40,}",
                r"|tvly-[A-Za-z0-9]{10,}|exa_[A-Za-z0-9]{10,}|syt_[A-Za-z0-9_-]{10,}|retaindb_[A-Za-z0-9]{10,}",
                r"|hsk-[A-Za-z0-9]{10,}|mem0_[A-Za-z0-9]{10,}|brv_[A-Za-z0-9]{10,}|xai-[A-Za-z0-9]{30,}",
                r"|api_org_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{10,}|AKID[A-Za-z0-9]{10,}|LTAI[A-Za-z0-9]{10,})"
            ),
        ),
        token(
            "firecrawl-fireworks",
            r"(?:^|[^A-Za-z0-9_])(fc-[A-Za-z0-9]{10,}|fw[-_][A-Za-z0-9]{24,}|fpk_[A-Za-z0-9]{30,})",
        ),
        Spec {
            name: "base64-alphabet-tokens",
            pattern: concat!(
                r"(?:^|[^A-Za-z0-9])(gAAAA[A-Za-z0-9_=-]{20,}|ATCTT3xFfG[A-Za-z0-9+/=_-]+=[A-Za-z0-9]{8}",
                r"|ATATT[A-Za-z0-9+/=_-]+=[A-Za-z0-9]{8}|ATBB[A-Za-z0-9_=.-]{16,}|dapi[0-9a-f]{32}(?:-\d)?",
                r"|A[KS]IA[A-Z0-9]{16})(?:$|[^A-Za-z0-9])"
            ),
            groups: &[1],
            unquoted: 0,
            checks: &[NotBase64Data],
            kind: Kind::Regex,
        },
        // Telegram bot tokens: 123456789:AA… (also in api.telegram.org/bot123…:AA… URLs).
        token("telegram-bot-token", r"(?:^|[^0-9:])([0-9]{6,}:[A-Za-z0-9_-]{20,})"),
        // … and bare: exactly 40 base64 characters with mixed case and a non-hex letter.
        Spec {
            name: "aws-secret-bare",
            pattern: r"(?:^|[^A-Za-z0-9/+=_])([A-Za-z0-9/+=]{40})(?:$|[^A-Za-z0-9/+=_])",
            groups: &[1],
            unquoted: 0,
            checks: &[AwsBare, NotBase64Data, NotInUrl],
            kind: Kind::Regex,
        },
        // memsift's context rules, beyond OpenClaw's list: a key without a fixed prefix is known by where it
        // stands, and masked when it looks random (`RandomToken`).
        // A short or bare key flag: `-k KEY`, `-a KEY` (redis-cli), `--key KEY`, `--auth KEY`, `--pw KEY`.
        rule(
            "context-cli-key-flag",
            r#"(?:^|\s)(?:-[ka]|--(?:key|auth|pw|pass|apikey|api))(?:=|[ \t]+)["']?([A-Za-z0-9_\-+/.~]{20,}=*)"#,
            &[1],
            &[RandomToken],
        ),
        // A client constructor's quoted argument: `OpenAI("…")`, `new Stripe('…')`, `Twilio("AC…", "…")`.
        rule(
            "context-constructor-argument",
            concat!(
                r#"(?:^|[^A-Za-z0-9_.])[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*[ \t]*\([ \t]*"#,
                r#"(?:[^()\n]{0,120}?,[ \t]*)?(?:"([A-Za-z0-9_\-+/.~]{20,}=*)"|'([A-Za-z0-9_\-+/.~]{20,}=*)')"#
            ),
            &[1, 2],
            &[RandomToken],
        ),
        // A credential word, then the key within four words: `my api key is …`, `token …`, `sessionid: …`.
        rule(
            "context-credential-word",
            concat!(
                r"(?i)(?:^|[^A-Za-z0-9])(?:api[ _-]?key|access[ _-]?key|secret[ _-]?key|auth[ _-]?key|client[ _-]?secret",
                r"|session[ _-]?(?:id|key|token)|sessionid|token|secret|password|passwd|passphrase|credentials?)s?",
                r#"(?:[ \t]+[A-Za-z']{1,12}){0,4}"#,
                r#"(?:[ \t]*(?:[:=]|=>|->)[ \t]*|[ \t]+)["'`]?([A-Za-z0-9_\-+/.~]{20,}=*)"#
            ),
            &[1],
            &[RandomToken],
        ),
        // Cloud OAuth client secrets with their own prefix or alphabet: Google's `GOCSPX-…`, Microsoft Entra's
        // `abc8Q~…`.
        token("google-oauth-client-secret", r"(GOCSPX-[A-Za-z0-9_-]{20,})"),
        token(
            "entra-client-secret",
            r"(?:^|[^A-Za-z0-9_~.-])([A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])",
        ),
        // Mailchimp API keys: 32 hex digits and the data centre (`…-us14`), masked with the suffix.
        token("mailchimp-api-key", r"(?:^|[^A-Za-z0-9_])([0-9a-f]{32}-us[0-9]{1,2})(?:$|[^A-Za-z0-9_])"),
        // NuGet API keys: `oy2` and 43 lower-case letters and digits (`dotnet nuget push … -k oy2…`).
        token("nuget-api-key", r"(?:^|[^A-Za-z0-9_])(oy2[a-z0-9]{43})(?:$|[^A-Za-z0-9_])"),
        // App-specific passwords (`abcd-efgh-ijkl-mnop`) after the word password: `app password abcd-…`.
        rule(
            "app-password",
            r#"(?i:password)["']?[ \t]*(?:[:=][ \t]*)?["']?([a-z]{4}-[a-z]{4}-[a-z]{4}-[a-z]{4})(?:$|[^A-Za-z0-9_-])"#,
            &[1],
            &[],
        ),
        // An OAuth authorization code in a JSON object named for OAuth, a provider or auth:
        // `"oauth":{"code":"…"}`, `"providerAuth":{"state":"x","code":"…"}`; an error's `{"code":"ERR_…"}` stays.
        rule(
            "oauth-code-field",
            concat!(
                r#"(?i)"[a-z0-9_-]*(?:oauth|provider|auth)[a-z0-9_-]*"[ \t]*:[ \t]*\{[ \t]*"#,
                r#"(?:"[a-z0-9_-]+"[ \t]*:[ \t]*(?:"[^"\\\n]*"|[0-9.]+|true|false|null)[ \t]*,[ \t]*){0,8}"#,
                r#""code"[ \t]*:[ \t]*"([^"\\\n]+)""#
            ),
            &[1],
            &[],
        ),
    ]
});
