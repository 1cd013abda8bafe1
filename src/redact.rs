//! Secret redaction for text shown to AI agents, following OpenClaw's `redactToolPayloadText` ("tools" mode).
//!
//! User patterns (`logging.redactPatterns`) run first, then the built-in rules. Every rule is compiled once with
//! the `regex` crate, which runs in time linear in the text whatever the pattern, so no pattern (built-in or user)
//! can hang on hostile input. An Aho-Corasick automaton over each rule's trigger literals (`sk-`, `authorization`,
//! `://`, …) finds which rules can match a text at all, so ordinary text costs one scan; a rule compiles on the
//! first text that triggers it. The crate has no look-around: boundaries ("not preceded by a word char") are
//! consumed by a leading group and only the secret's capture group is masked; conditions a regex cannot express
//! ("not a `$VAR` placeholder", "has lower and upper case") are checks in code on the capture.
//!
//! Only the secret value is masked (see [`mask`]); key names, flags, headers and vendor prefixes around it stay.
//! Redacting is idempotent on real text: a value that lies within a mask written earlier is left alone.

use std::cell::OnceCell;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use regex::{Captures, Regex, RegexBuilder};

/// OpenClaw's `DEFAULT_REDACT_MIN_LENGTH`: shorter values are masked completely.
pub const MIN_LENGTH: usize = 18;
const KEEP_START: usize = 6;
const KEEP_END: usize = 4;
const ELLIPSIS: char = '\u{2026}';
const PEM_BODY: &str = "\n\u{2026}redacted\u{2026}\n";
/// Compiled-program budget for one user pattern: absurd repetition counts are refused, not compiled for minutes.
const USER_SIZE_LIMIT: usize = 4 << 20;

/// Mask one secret value: `***` below 18 characters, else the first 6 and last 4 characters around `…`.
pub fn mask(secret: &str) -> String {
    let n = secret.chars().count();
    if n < MIN_LENGTH {
        return "***".to_owned();
    }
    let head: String = secret.chars().take(KEEP_START).collect();
    let tail: String = secret.chars().skip(n - KEEP_END).collect();
    format!("{head}{ELLIPSIS}{tail}")
}

/// Whether `text[start..end]` lies within a mask written by an earlier pass (`***`, or at most 6 characters +
/// `…` + 4), so redacting stays idempotent. Containment, not "an ellipsis nearby": a value that holds an earlier
/// mask *and* real secret text around it is still masked.
fn already_masked(text: &str, start: usize, end: usize) -> bool {
    let secret = &text[start..end];
    if secret == "***" {
        return true;
    }
    let len = secret.chars().count() as isize;
    if len > (KEEP_START + 1 + KEEP_END) as isize {
        return false;
    }
    // An ellipsis at char offset p (relative to start) covers [p - 6, p + 5): the value must fit inside.
    let reach = KEEP_END as isize + 1;
    let ahead = (0_isize..).zip(text[start..].chars().take(KEEP_START + 1));
    let behind = (1_isize..).map(|k| -k).zip(text[..start].chars().rev().take(KEEP_END + 1));
    ahead.chain(behind).any(|(p, c)| c == ELLIPSIS && len <= p + reach)
}

/// A condition checked in code on a candidate secret; a failed check leaves the match unchanged.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
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
    /// A flag value starting with `-`: only after `=`, or when it looks random (16+ characters with upper case,
    /// lower case and a digit), so `--token -v` stays.
    DashValue,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Regex,
    Pem,
    Authorization,
    FormBody,
}

struct Spec {
    name: &'static str,
    pattern: &'static str,
    /// Capture groups that may hold the secret, first participating non-empty one wins.
    groups: &'static [usize],
    /// The group holding an unquoted value (code checks apply to it only); 0 for none.
    unquoted: usize,
    checks: &'static [Check],
    kind: Kind,
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

static SPECS: LazyLock<Vec<Spec>> = LazyLock::new(|| {
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
        // URL user-info: scheme://user:PASSWORD@host. A password may hold "#", "/" and "@" (up to the last "@"
        // before the host: later "@" count while the part between them has no "/", "?" or "#").
        rule(
            "url-userinfo",
            r"(?i)(?-u:\b)[a-z][a-z0-9+.-]{1,20}://[^\s/?#@:]*:([^\s@]+(?:@[^\s@/?#]+)*)@",
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
                r"(?:^|[^A-Za-z0-9_])(?P<key>[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|_PASS|CARD_?NUMBER|CVC|CVV",
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
                r#"\\?"[ \t]*:[ \t]*\\?"((?:[^"\\\n]|\\[^"\\\n])+)"#
            ),
            &[1],
            &[],
        ),
        // Object and config fields with quoted values, any case: appSecret: '…', Access_Token: "…", token: '…'.
        valued(
            "quoted-field",
            concat!(
                r"(?:^|[\s,{(])[\x22']?(?:[a-z0-9_.-]*(?:api[_-]?key|api[_-]?secret|access[_-]?token|refresh[_-]?token",
                r"|id[_-]?token|auth[_-]?token|client[_-]?secret|app[_-]?secret|private[_-]?key|secret[_-]?key",
                r"|credential|secret[_-]?value|raw[_-]?secret|key[_-]?material|cookie|password|passphrase|passwd",
                r"|_pass|token|secret|jwt)|pass|[a-z][a-zA-Z0-9]*(?:ApiKey|Secret|Token|Password|Credential)|apiKey",
                r"|clientSecret|appSecret|authToken|accessToken|refreshToken|privateKey",
                // Mixed-case spellings of the compound names (Access_Token, Api_Key); not whole UPPER_CASE env
                // names with a generic suffix, which the assignment rules handle (and their `${VAR}` references).
                r"|(?i:access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|api[_-]?key|api[_-]?secret",
                r"|client[_-]?secret|app[_-]?secret|private[_-]?key|secret[_-]?key))[\x22']?[ \t]*[:=][ \t]*(?:",
                r#""([^"\n]+)"|'([^'\n]+)'|`([^`\n]+)`)()"#
            ),
            &[],
        ),
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
                r"(?:^|[\s,;({\[])(?i:access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|hook[_-]?token",
                r"|api[_-]?key|api[_-]?secret|client[_-]?secret|app[_-]?secret|private[_-]?key|secret[_-]?key",
                r"|authorization|jwt|token|secret|password|passphrase|pass|passwd|credential|card[_-]?number|cvc",
                r"|cvv|security[_-]?code|payment[_-]?credential|shared[_-]?payment[_-]?token)=",
                closed_value!(r#"[\x22'`]?[^\s&#"'`<>,]+(?:,[^\s&#"'`<>,]+)*"#)
            ),
            &[NotPlaceholder, CutAtSemicolon],
        ),
        // Config-file assignments with spaces or a colon: password = …, db_password: …, jdbc.password=…,
        // tls.passphrase: …, pass: …. Unquoted identifiers (`token = await`) are code and stay.
        valued(
            "config-assignment",
            concat!(
                r"(?:^|[\s,{(])(?:[a-z0-9][a-z0-9._-]*[._-])?(?:access[_-]?token|refresh[_-]?token|id[_-]?token",
                r"|auth[_-]?token|hook[_-]?token|api[_-]?key|api[_-]?secret|client[_-]?secret|app[_-]?secret",
                r"|private[_-]?key|secret[_-]?key|key[_-]?material|jwt|token|secret|password|passphrase|pass|passwd)",
                r"(?:[ \t]*:[ \t]*|[ \t]*=[ \t]*)",
                closed_value!(r#"[^\s&#"'`<>,]+(?:,[^\s&#"'`<>,]+)*"#)
            ),
            &[NotPlaceholder, NotIdentifier, CutAtSemicolon, TrimDelims],
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
            &[NotPlaceholder],
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
        rule("cli-sshpass", r#"(?-u:\b)sshpass[ \t]+-p[ \t]*["']?([^\s"']+)"#, &[1], &[NotPlaceholder]),
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
    ]
});

struct Rule {
    spec: &'static Spec,
    /// Compiled on the first text that triggers the rule: a process that redacts a few snippets compiles only the
    /// rules their words call for (compiling all of them took ~10 ms at start-up).
    compiled: OnceLock<(Regex, Option<usize>)>,
}

impl Rule {
    fn compiled(&self) -> &(Regex, Option<usize>) {
        self.compiled.get_or_init(|| {
            let regex = Regex::new(self.spec.pattern).unwrap_or_else(|e| panic!("redact rule {}: {e}", self.spec.name));
            let key = regex.capture_names().position(|n| n == Some("key"));
            (regex, key)
        })
    }

    fn regex(&self) -> &Regex {
        &self.compiled().0
    }

    /// The capture group of the key in key=value rules.
    fn key(&self) -> Option<usize> {
        self.compiled().1
    }
}

struct Defaults {
    rules: Vec<Rule>,
    /// Trigger literals of the rules that have some (ASCII case-insensitive); `trigger_rules[i]` is the rule of
    /// literal `i`.
    triggers: AhoCorasick,
    trigger_rules: Vec<usize>,
    /// Rules without a literal trigger, which always run.
    always: Vec<bool>,
}

/// Trigger words of the key=value rules (form bodies, query strings): sensitive key words, `%XX` and `+` encodings,
/// and the invisible characters that hide a key.
const KEY_VALUE_TRIGGERS: &[&str] = &[
    "token",
    "secret",
    "key",
    "pass",
    "pwd",
    "sig",
    "code",
    "auth",
    "jwt",
    "session",
    "credential",
    "cvc",
    "cvv",
    "card",
    "body",
    "%",
    "+",
    "\u{200b}",
    "\u{3164}",
    "\u{115f}",
    "\u{1160}",
    "\u{ffa0}",
    "\u{a0}",
    "\u{ad}",
    "\u{feff}",
];

/// Literals (ASCII case-insensitive) one of which a text must hold for a rule to match at all: a cheap scan for
/// them decides which rules run.
#[allow(clippy::too_many_lines)] // one table
fn triggers(spec: &Spec) -> &'static [&'static str] {
    let words: &[&str] = match spec.name {
        "pem-private-key" => &["PRIVATE KEY"],
        "url-userinfo" => &["://"],
        "authorization" => &["authorization"],
        "api-key-header" => &["api-key", "apikey", "-token", "cookie", "jwt-assertion"],
        "bearer-token" => &["bearer"],
        "env-assignment" => &["KEY", "TOKEN", "SECRET", "PASS", "CARD", "CVC", "CVV", "CODE", "CREDENTIAL"],
        "json-field"
        | "quoted-field"
        | "double-masked-field"
        | "standalone-assignment"
        | "yaml-next-line"
        | "config-assignment" => &[
            "key",
            "token",
            "secret",
            "pass",
            "credential",
            "jwt",
            "cookie",
            "card",
            "cvc",
            "cvv",
            "code",
            "authorization",
        ],
        "connection-string" => &["AccountKey", "SharedAccessKey", "Pwd=", "Password="],
        "cli-flag" => &["--"],
        "cli-user-password" => &["-u", "--user"],
        "cli-mysql-password" => &["mysql"],
        "cli-sshpass" => &["sshpass"],
        // Query strings and form bodies share the sensitive key words (and encoded or hidden key characters).
        "form-body" | "url-query" => KEY_VALUE_TRIGGERS,
        "aws-secret-access-key" => &["secretaccesskey", "secret_access_key", "secret-access-key"],
        "openai-anthropic" => &["sk-"],
        "generic-sk-am" => &["sk_", "am_"],
        "github" => &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        "github-pat" => &["github_pat_"],
        "gitlab-pat" => &["glpat-"],
        "gitlab-oauth" => &["gloas-"],
        "gitlab" => &[
            "gldt-",
            "glwt-",
            "glsoat-",
            "glffct-",
            "glrt",
            "glcbt-",
            "glptt-",
            "glft-",
            "glimt-",
            "glagent-",
            "GR1348941",
            "_gitlab_session=",
        ],
        "slack-token" => &["xox"],
        "slack-app-token" => &["xapp-"],
        "slack-webhook" => &["hooks.slack.com"],
        "discord-webhook" | "discord-context-token" => &["discord"],
        "jwt" => &["eyJ"],
        "telegram-bot-token" => &[":"],
        "discord-bot-token" | "aws-secret-bare" => &[],
        "groq" => &["gsk_"],
        "google-api-key" => &["AIza"],
        "google-oauth" => &["ya29.", "1//0"],
        "perplexity" => &["pplx-"],
        "stripe" => &["k_live_", "k_test_"],
        "stripe-webhook-secret" => &["whsec_"],
        "sendgrid" => &["SG."],
        "npm" => &["npm_"],
        "pypi" => &["pypi-"],
        "digitalocean" => &["_v1_"],
        "doppler" => &["dp."],
        "docker" => &["dckr_"],
        "vault" => &["hvs.", "hvb.", "hvr."],
        "shopify" => &["shpat_", "shpca_", "shppa_", "shpss_"],
        "replicate" => &["r8_"],
        "mailgun" => &["key-"],
        "twilio" => &["SK"],
        "misc-vendor" => &[
            "fal_",
            "bb_live_",
            "bkua_",
            "CCIPAT_",
            "sbp_",
            "ddp_",
            "ddw_",
            "glsa_",
            "glc_",
            "nfp_",
            "CFPAT-",
            "BBDC-",
            "HRKU-",
            "pat-",
            "apify_api_",
            "FlyV1",
            "fio-u-",
            "tvly-",
            "exa_",
            "syt_",
            "retaindb_",
            "hsk-",
            "mem0_",
            "brv_",
            "xai-",
            "api_org_",
            "hf_",
            "AKID",
            "LTAI",
        ],
        "firecrawl-fireworks" => &["fc-", "fw-", "fw_", "fpk_"],
        "base64-alphabet-tokens" => &["gAAAA", "ATCTT", "ATATT", "ATBB", "dapi", "AKIA", "ASIA"],
        other => panic!("redact rule {other} has no triggers"),
    };
    // No literal (empty): the rule always runs.
    words
}

static DEFAULTS: LazyLock<Defaults> = LazyLock::new(|| {
    let specs: &'static [Spec] = SPECS.as_slice();
    let rules: Vec<Rule> = specs.iter().map(|spec| Rule { spec, compiled: OnceLock::new() }).collect();
    let always = specs.iter().map(|spec| triggers(spec).is_empty()).collect();
    let (words, trigger_rules): (Vec<&str>, Vec<usize>) =
        specs.iter().enumerate().flat_map(|(i, spec)| triggers(spec).iter().map(move |&w| (w, i))).unzip();
    let triggers = AhoCorasick::builder().ascii_case_insensitive(true).build(words).expect("redact triggers");
    Defaults { rules, triggers, trigger_rules, always }
});

/// Per-text facts computed at most once, on demand.
struct Ctx<'t> {
    text: &'t str,
    base64_runs: OnceCell<Vec<(usize, usize)>>,
}

impl<'t> Ctx<'t> {
    fn new(text: &'t str) -> Self {
        Self { text, base64_runs: OnceCell::new() }
    }

    /// Byte spans of `data:…;base64,` payloads.
    fn in_base64_data(&self, pos: usize) -> bool {
        let runs = self.base64_runs.get_or_init(|| {
            let mut runs = Vec::new();
            let mut from = 0;
            while let Some(i) = self.text[from..].find(";base64,") {
                let start = from + i + ";base64,".len();
                let len = self.text[start..]
                    .bytes()
                    .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
                    .count();
                runs.push((start, start + len));
                from = start + len.max(1).min(self.text.len() - start);
                if from >= self.text.len() {
                    break;
                }
            }
            runs
        });
        runs.iter().any(|&(s, e)| s <= pos && pos < e)
    }
}

fn is_identifier(v: &str) -> bool {
    let mut chars = v.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphabetic() || c == '_' || c == '.')
}

/// `$NAME`, `${NAME}` or `${NAME:-}` (an empty default), returning NAME.
fn shell_reference(v: &str) -> Option<&str> {
    let rest = v.strip_prefix('$')?;
    let name = if let Some(inner) = rest.strip_prefix('{') {
        let inner = inner.strip_suffix('}')?;
        inner.strip_suffix(":-").or_else(|| inner.strip_suffix(":?")).unwrap_or(inner)
    } else {
        rest
    };
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(name)
}

fn is_placeholder(v: &str, refs: bool) -> bool {
    if refs && shell_reference(v).is_some() {
        return true;
    }
    let wrapped = |open: char, close: char| {
        v.len() > 2
            && v.starts_with(open)
            && v.ends_with(close)
            && v[1..v.len() - 1].chars().all(|c| c.is_alphanumeric() || "_-. ".contains(c))
    };
    if wrapped('<', '>') || wrapped('{', '}') || v.starts_with("{{") || v.starts_with("${{") {
        return true;
    }
    // Code: os.environ[...], process.env.X, get_token(), config["x"].
    let head = v.find(['(', '[']).map_or(v, |i| &v[..i]);
    (head.len() < v.len() && is_identifier(head)) || v.starts_with("process.env.") || v.starts_with("os.environ")
}

fn normalize_key(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&raw[i + 1..i + 3], 16) {
                decoded.push(b);
                i += 3;
                continue;
            }
        }
        decoded.push(bytes[i]);
        i += 1;
    }
    let mut out = String::with_capacity(decoded.len());
    let mut lower_before = false;
    for c in String::from_utf8_lossy(&decoded).chars() {
        if c.is_whitespace() || c.is_control() || c == '+' || is_invisible(c) || is_format(c) {
            continue;
        }
        // camelCase words: clientSecret -> client_secret.
        if c.is_ascii_uppercase() && lower_before {
            out.push('_');
        }
        lower_before = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(if c == '-' { '_' } else { c.to_ascii_lowercase() });
    }
    out
}

fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}'
        | '\u{00AD}' | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{00A0}' | '\u{2000}'..='\u{200A}'
        | '\u{205F}' | '\u{3000}' | '\u{1680}')
}

const SENSITIVE_KEYS: &[&str] = &[
    "access_token",
    "auth_token",
    "awssecretaccesskey",
    "aws_secret_access_key",
    "hook_token",
    "refresh_token",
    "id_token",
    "token",
    "api_key",
    "apikey",
    "client_secret",
    "app_secret",
    "password",
    "pass",
    "passwd",
    "pwd",
    "auth",
    "jwt",
    "session",
    "code",
    "signature",
    "sig",
    "x_amz_signature",
    "x_amz_security_token",
    "x_amz_credential",
    "x_goog_signature",
    "x_goog_credential",
    "secret",
    "secretaccesskey",
    "credential",
    "private_key",
    "private_token",
    "authorization",
    "key",
    "card_number",
    "card_cvc",
    "card_cvv",
    "cvc",
    "cvv",
    "security_code",
    "payment_credential",
    "shared_payment_token",
    "x_api_key",
    "x_access_token",
    "x_auth_token",
    "x_goog_api_key",
    "secret_key",
    "api_secret",
    "client_assertion",
    "session_token",
    "accountkey",
    "secret_access_key",
    "account_key",
];

fn sensitive_key(raw: &str) -> bool {
    let key = normalize_key(raw);
    SENSITIVE_KEYS.contains(&key.as_str())
        || key.contains("_token_")
        || ["_token", "_secret", "_password", "_passwd", "_api_key", "_apikey"].iter().any(|s| key.ends_with(s))
}

fn aws_bare(v: &str) -> bool {
    v.bytes().any(|b| b.is_ascii_uppercase())
        && v.bytes().any(|b| b.is_ascii_lowercase())
        && v.bytes().any(|b| b.is_ascii_digit() || matches!(b, b'/' | b'+' | b'='))
        && v.bytes().any(|b| matches!(b, b'G'..=b'Z' | b'g'..=b'z' | b'/' | b'+' | b'='))
}

/// Where a rule's match puts the secret, after the checks; `None` leaves the match alone.
fn secret_span(rule: &Rule, caps: &Captures<'_>, ctx: &Ctx<'_>) -> Option<(usize, usize)> {
    let spec = rule.spec;
    let (group, m) = spec.groups.iter().find_map(|&g| caps.get(g).filter(|m| !m.is_empty()).map(|m| (g, m)))?;
    let (start, mut end) = (m.start(), m.end());
    let value = m.as_str();
    let unquoted = spec.unquoted == 0 || group == spec.unquoted;
    for check in spec.checks {
        let ok = match check {
            Check::SameNameRef => {
                let key = rule.key().and_then(|k| caps.get(k)).map_or("", |k| k.as_str());
                shell_reference(value).is_none_or(|name| name != key)
            }
            Check::NotPlaceholder => !(unquoted && is_placeholder(value.trim_start_matches(['"', '\'', '`']), true)),
            Check::NotTemplate => !(unquoted && is_placeholder(value, false)),
            Check::CutAtSemicolon => {
                if let Some(cut) = SEMICOLON_PAIR.find(&ctx.text[start..end]) {
                    end = start + cut.start();
                }
                end > start
            }
            Check::NotIdentifier => {
                !(unquoted
                    && (is_identifier(value)
                        || matches!(value, "None" | "null" | "true" | "false" | "undefined" | "nil")))
            }
            Check::SkToken => {
                value.bytes().any(|b| b.is_ascii_digit()) || value.starts_with("sk-ant-") || value.len() >= 24
            }
            Check::AwsBare => aws_bare(value),
            Check::NotBase64Data => !ctx.in_base64_data(start),
            Check::NotInUrl => {
                let mut from = start.saturating_sub(2048);
                while !ctx.text.is_char_boundary(from) {
                    from += 1;
                }
                let run = ctx.text[from..start].rsplit(char::is_whitespace).next().unwrap_or("");
                !run.contains("://")
            }
            Check::NotPort => {
                let digits = value.bytes().take_while(u8::is_ascii_digit).count();
                !(digits > 0 && (digits == value.len() || value.as_bytes()[digits] == b'/'))
            }
            Check::SensitiveKey => rule.key().and_then(|k| caps.get(k)).is_some_and(|k| sensitive_key(k.as_str())),
            Check::NotConjunction => !matches!(value.to_ascii_lowercase().as_str(), "or" | "and"),
            Check::CutAtPair => {
                if let Some(cut) = PAIR.find(value) {
                    end = start + cut.start();
                }
                end > start
            }
            Check::Stars | Check::DropQuotes => true,
            Check::Remask => value != "***",
            Check::TrimDelims => {
                let trimmed = ctx.text[start..end].trim_end_matches(['"', '\'', '`', ',', ';', ')', '}', ']']);
                if unquoted && !trimmed.is_empty() {
                    end = start + trimmed.len();
                }
                true
            }
            Check::DeeperIndent => {
                let indent = |g: usize| caps.get(g).map_or(0, |m| m.as_str().len());
                indent(2) > indent(1)
            }
            Check::DashValue => {
                let has = |f: fn(&u8) -> bool| value.as_bytes().iter().any(f);
                !value.starts_with('-')
                    || ctx.text[..start].ends_with('=')
                    || (value.len() >= 16
                        && has(u8::is_ascii_uppercase)
                        && has(u8::is_ascii_lowercase)
                        && has(u8::is_ascii_digit))
            }
            Check::NotSnakeIdentifier => {
                let body = &value[3..];
                let has = |f: fn(&u8) -> bool| body.as_bytes().iter().any(f);
                (body.len() >= 16 && !body.contains(['_', '-']))
                    || (body.len() >= 16
                        && has(u8::is_ascii_uppercase)
                        && has(u8::is_ascii_lowercase)
                        && has(u8::is_ascii_digit))
            }
        };
        if !ok {
            return None;
        }
    }
    Some((start, end))
}

static SEMICOLON_PAIR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r";[A-Za-z][A-Za-z0-9_ ]*=").expect("semicolon pair"));
static PAIR: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"&[A-Za-z_][A-Za-z0-9_.-]*=").expect("pair"));

/// One replacement: `text[start..end]` becomes `with`.
struct Edit {
    start: usize,
    end: usize,
    with: String,
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for e in edits {
        out.push_str(&text[last..e.start]);
        out.push_str(&e.with);
        last = e.end;
    }
    out.push_str(&text[last..]);
    out
}

fn masked_edit(text: &str, start: usize, end: usize, all_stars: bool) -> Option<Edit> {
    if start >= end || already_masked(text, start, end) {
        return None;
    }
    let with = if all_stars { "***".to_owned() } else { mask(&text[start..end]) };
    Some(Edit { start, end, with })
}

fn regex_edits(rule: &Rule, text: &str) -> Vec<Edit> {
    let ctx = Ctx::new(text);
    let stars = rule.spec.checks.contains(&Check::Stars);
    let unquote = rule.spec.checks.contains(&Check::DropQuotes);
    let remask = rule.spec.checks.contains(&Check::Remask);
    rule.regex()
        .captures_iter(text)
        .filter_map(|caps| secret_span(rule, &caps, &ctx))
        .filter_map(|(s, e)| {
            if remask {
                return Some(Edit { start: s, end: e, with: "***".to_owned() });
            }
            if unquote {
                let (inner_start, inner_end) = unquoted_span(text, s, e);
                if already_masked(text, inner_start, inner_end) {
                    return None;
                }
                let with = if stars { "***".to_owned() } else { mask(&text[inner_start..inner_end]) };
                return Some(Edit { start: s, end: e, with });
            }
            masked_edit(text, s, e, stars)
        })
        .collect()
}

/// `text[start..end]` less a leading quote and the same quote closing it.
fn unquoted_span(text: &str, start: usize, end: usize) -> (usize, usize) {
    let v = &text.as_bytes()[start..end];
    match v.first() {
        Some(&q @ (b'"' | b'\'' | b'`')) if v.len() >= 2 => {
            let close = usize::from(v[v.len() - 1] == q);
            (start + 1, end - close)
        }
        _ => (start, end),
    }
}

/// A form-body key: letters, digits, `_.-`, `%XX` escapes, `+` and invisible characters (never `=`, `&`).
const FORM_KEY: &str = concat!(
    r"[+\p{C}\u{A0}\u{1680}\u{2000}-\u{200A}\u{202F}\u{205F}\u{3000}\u{115F}\u{1160}\u{3164}\u{FFA0}]*",
    r"(?:[A-Za-z_]|%[0-9A-Fa-f]{2})(?:[A-Za-z0-9_.\-]|%[0-9A-Fa-f]{2}",
    r"|[+\p{C}\u{A0}\u{1680}\u{2000}-\u{200A}\u{202F}\u{205F}\u{3000}\u{115F}\u{1160}\u{3164}\u{FFA0}])*"
);

struct FormRegexes {
    /// A pair whose key holds an escape or an invisible character, after a delimiter.
    encoded: Regex,
    /// `body: key=value`, `form_body=key=value`.
    context: Regex,
    /// Two or more `key=value` pairs joined by `&`.
    body: Regex,
}

static FORM: LazyLock<FormRegexes> = LazyLock::new(|| FormRegexes {
    encoded: Regex::new(&format!(r#"(?:^|[\s:(\{{\[,="'`&])(?P<key>{FORM_KEY})=(?P<value>[^&\s<>]*)"#))
        .expect("form encoded"),
    context: Regex::new(&format!(
        r#"(?i)(?-u:\b)(?:body|form(?:[-_\s]?body)?)\s*[:=]\s*["'`]?(?P<key>{FORM_KEY})=(?P<value>[^&\s<>]*)"#
    ))
    .expect("form context"),
    body: Regex::new(&format!(r#"(?:^|[\s:(\{{\[,="'`])(?P<body>{FORM_KEY}=[^&\s<>]*(?:&{FORM_KEY}=[^&\s<>]*)+)"#))
        .expect("form body"),
});

/// The part of a form value to replace: quotes around it and trailing `,;)}]` delimiters stay outside.
fn form_value_span(text: &str, start: usize, end: usize) -> (usize, usize) {
    let v = &text.as_bytes()[start..end];
    let delim = |b: &u8| matches!(b, b'"' | b'\'' | b'`' | b',' | b';' | b')' | b'}' | b']');
    if let Some(&q @ (b'"' | b'\'' | b'`')) = v.first() {
        if let Some(close) = v.iter().rposition(|&b| b == q).filter(|&c| c > 0) {
            if v[close + 1..].iter().all(delim) {
                return (start, start + close + 1);
            }
        }
        let trail = v[1..].iter().rev().take_while(|b| delim(b)).count();
        let trail = if trail < v.len() - 1 { trail } else { 0 };
        return (start, end - trail);
    }
    let trail = v.iter().rev().take_while(|b| delim(b)).count();
    let trail = if trail < v.len() { trail } else { 0 };
    (start, end - trail)
}

fn has_encoded_or_invisible(key: &str) -> bool {
    key.contains('%') || key.chars().any(|c| c == '+' || c.is_control() || is_invisible(c) || is_format(c))
}

fn is_format(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{0600}'..='\u{0605}' | '\u{061C}' | '\u{06DD}' | '\u{070F}' | '\u{180E}'
        | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}'
        | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

/// Form-body pairs per line: encoded keys, `body:` context pairs, then `&`-joined pair runs.
fn form_body_edits(text: &str) -> Vec<Edit> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut push = |s: usize, e: usize, key: &str| {
        if sensitive_key(key) {
            let (s, e) = form_value_span(text, s, e);
            spans.push((s, e));
        }
    };
    let mut line_start = 0;
    while line_start <= text.len() {
        let line_end = text[line_start..].find(['\r', '\n']).map_or(text.len(), |i| line_start + i);
        let line = &text[line_start..line_end];
        if line.contains('=') {
            for caps in FORM.encoded.captures_iter(line) {
                let (k, v) = (&caps["key"], caps.name("value").expect("value"));
                if has_encoded_or_invisible(k) {
                    push(line_start + v.start(), line_start + v.end(), k);
                }
            }
            for caps in FORM.context.captures_iter(line) {
                let v = caps.name("value").expect("value");
                push(line_start + v.start(), line_start + v.end(), &caps["key"]);
            }
            if line.contains('&') {
                for caps in FORM.body.captures_iter(line) {
                    let body = caps.name("body").expect("body");
                    let mut at = line_start + body.start();
                    for pair in body.as_str().split('&') {
                        if let Some(eq) = pair.find('=') {
                            push(at + eq + 1, at + pair.len(), &pair[..eq]);
                        }
                        at += pair.len() + 1;
                    }
                }
            }
        }
        line_start = line_end + 1;
    }
    spans.sort_unstable();
    let mut edits: Vec<Edit> = Vec::new();
    for (s, e) in spans {
        if edits.last().is_some_and(|last| s < last.end || s == last.start) || &text[s..e] == "***" {
            continue;
        }
        if e > s && already_masked(text, s, e) {
            continue;
        }
        edits.push(Edit { start: s, end: e, with: "***".to_owned() });
    }
    edits
}

fn pem_edits(rule: &Rule, text: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut pos = 0;
    while let Some(m) = rule.regex().find_at(text, pos) {
        let body_start = m.end();
        let body_end = text[body_start..].find("-----").map_or(text.len(), |i| body_start + i);
        let body = &text[body_start..body_end];
        if !body.trim().is_empty() && !body.trim_start().starts_with(ELLIPSIS) {
            edits.push(Edit { start: body_start, end: body_end, with: PEM_BODY.to_owned() });
        }
        pos = body_end.max(m.end());
        if pos >= text.len() {
            break;
        }
    }
    edits
}

fn is_auth_token_char(c: char, quote: Option<char>) -> bool {
    Some(c) != quote && (c.is_ascii_alphanumeric() || "._~+/=-!$%*^|".contains(c) || c == ELLIPSIS)
}

/// Length of whitespace at the start of `s`: blanks, line breaks only when `folded_only` is false or they are
/// followed by a blank (header folding), and JSON-escaped `\t`, `\n`, `\r`.
fn auth_space(s: &str, allow_newline: bool) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        match b.get(i) {
            Some(b' ' | b'\t') => i += 1,
            Some(b'\r' | b'\n') => {
                let mut j = i;
                while matches!(b.get(j), Some(b'\r' | b'\n')) {
                    j += 1;
                }
                if allow_newline || matches!(b.get(j), Some(b' ' | b'\t')) {
                    i = j;
                } else {
                    return i;
                }
            }
            Some(b'\\') => {
                let mut j = i;
                while b.get(j) == Some(&b'\\') {
                    j += 1;
                }
                match b.get(j) {
                    Some(b't') => i = j + 1,
                    Some(b'n' | b'r') => {
                        // An escaped line break continues the value only if blank (or escaped tab) follows.
                        let mut k = j + 1;
                        while k + 1 < b.len() && b[k] == b'\\' && matches!(b[k + 1], b'r' | b'n') {
                            k += 2;
                        }
                        let rest = &b[k..];
                        if allow_newline
                            || rest.first().is_some_and(|c| *c == b' ' || *c == b'\t')
                            || rest.starts_with(b"\\t")
                            || rest.starts_with(b"\\\\t")
                        {
                            i = k;
                        } else {
                            return i;
                        }
                    }
                    _ => return i,
                }
            }
            _ => return i,
        }
    }
}

/// Whether a quote after `run` backslashes closes a value opened by a quote escaped `depth` times: the run is the
/// quote's own escape plus escaped backslashes (a literal backslash at that nesting level costs `2 * (depth + 1)`).
fn closes_quote(run: usize, depth: usize) -> bool {
    run >= depth && (run - depth).is_multiple_of(2 * (depth + 1))
}

/// Whether the text after an auth-param word continues a parameter list damaged by empty items
/// (`Digest damaged,,response="…"`): commas, then `name=`.
fn damaged_params_follow(rest: &str) -> bool {
    // An empty item (`,,`) marks the damage: `Token abc, status=401` is a token68 and prose.
    let Some(rest) = rest.strip_prefix(',') else { return false };
    let rest = rest.trim_start_matches([' ', '\t']);
    let Some(rest) = rest.strip_prefix(',') else { return false };
    let rest = rest.trim_start_matches([',', ' ', '\t']);
    let name = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')).count();
    name > 0 && rest[name..].trim_start_matches([' ', '\t']).starts_with('=')
}

/// Whether a `;` followed by `rest` lies inside an auth-param value (AWS4 `SignedHeaders=:authority;x_custom`)
/// rather than ending the list: a non-blank follows, and not a `name=` pair (`;status=403`).
fn semicolon_continues(rest: &[u8]) -> bool {
    let name = rest.iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')).count();
    rest.first().is_some_and(|n| !n.is_ascii_whitespace()) && rest.get(name) != Some(&b'=')
}

/// The end of a structured auth-param list starting at `from` (`Digest username="x", response="…"`).
fn auth_params_end(text: &str, from: usize, header_quote: Option<(char, usize)>) -> usize {
    let b = text.as_bytes();
    let mut i = from;
    let mut inner: Option<(u8, usize)> = None;
    let mut last_sig = b'='; // last significant byte outside quotes
    while i < b.len() {
        let c = b[i];
        if c == b'\\' {
            let mut j = i;
            while j < b.len() && b[j] == b'\\' {
                j += 1;
            }
            let depth = j - i;
            match b.get(j) {
                Some(&q @ (b'"' | b'\'')) => {
                    if let Some((iq, id)) = inner {
                        if iq == q && closes_quote(depth, id) {
                            inner = None;
                        }
                    } else if header_quote == Some((q as char, depth)) {
                        return i;
                    } else if last_sig == b'=' {
                        inner = Some((q, depth));
                    } else if q == b'"' {
                        return i;
                    }
                    i = j + 1;
                    last_sig = q;
                    continue;
                }
                Some(b'n' | b'r') if inner.is_none() => {
                    let n = auth_space(&text[i..], false);
                    if n == 0 {
                        return i;
                    }
                    i += n;
                    continue;
                }
                _ => {
                    i = j;
                    continue;
                }
            }
        }
        if let Some((q, depth)) = inner {
            if c == q && depth == 0 {
                inner = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' | b'\'' => {
                if header_quote == Some((c as char, 0)) {
                    return i;
                }
                if last_sig == b'=' {
                    inner = Some((c, 0));
                } else if c == b'"' {
                    return i;
                }
            }
            // `;` inside a value (AWS4 `SignedHeaders=:authority;x_custom`) continues; `; next` ends the list.
            b';' if semicolon_continues(&b[i + 1..]) && last_sig != b',' => {}
            b';' | b')' | b'}' | b']' => return i,
            b'\r' | b'\n' => {
                let n = auth_space(&text[i..], false);
                if n == 0 {
                    return i;
                }
                i += n;
                continue;
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            last_sig = c;
        }
        i += 1;
    }
    b.len()
}

fn authorization_edits(rule: &Rule, text: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut pos = 0;
    while let Some(m) = rule.regex().find_at(text, pos) {
        let mut i = m.end();
        i += auth_space(&text[i..], true);
        // An optional (serialized) quote opens the value: "…", \"…\", '…'.
        let mut header_quote = None;
        let backslashes = text[i..].bytes().take_while(|&b| b == b'\\').count();
        if let Some(q @ ('"' | '\'')) = text[i + backslashes..].chars().next() {
            header_quote = Some((q, backslashes));
            i += backslashes + 1;
        }
        if header_quote.is_none() {
            // A quote right before the header name (curl -H 'Authorization: …') closes the value too.
            if let Some(q @ ('"' | '\'')) = text[m.start()..].chars().next() {
                let depth = text[..m.start()].bytes().rev().take_while(|&b| b == b'\\').count();
                header_quote = Some((q, depth));
            }
        }
        let quote = header_quote.map(|(q, _)| q);
        let word_end = |from: usize| {
            text[from..]
                .char_indices()
                .find(|&(_, c)| !is_auth_token_char(c, quote))
                .map_or(text.len(), |(k, _)| from + k)
        };
        let w1_end = word_end(i);
        let mut next = w1_end.max(m.end());
        if w1_end > i {
            let gap = auth_space(&text[w1_end..], false);
            let w2 = w1_end + gap;
            let w2_end = if gap > 0 { word_end(w2) } else { w2 };
            if gap > 0 && w2_end > w2 {
                // word 1 is a scheme; auth-params (name=value, value not "=" padding) or one token68.
                let name_len = text[w2..w2_end].find('=').unwrap_or(w2_end - w2);
                let after = text[w2 + name_len..].trim_start_matches([' ', '\t']);
                let params = damaged_params_follow(&text[w2_end..])
                    || name_len > 0
                        && after.starts_with('=')
                        && after[1..]
                            .chars()
                            .next()
                            .is_some_and(|c| c != '=' && c != ',' && c != ';' && !c.is_whitespace());
                if params {
                    let end = auth_params_end(text, w2, header_quote);
                    let end = w2 + text[w2..end].trim_end().len();
                    if end > w2 && &text[w2..end] != "***" {
                        edits.push(Edit { start: w2, end, with: "***".to_owned() });
                    }
                    next = end.max(next);
                } else {
                    edits.extend(masked_edit(text, w2, w2_end, false));
                    next = w2_end;
                }
            } else {
                edits.extend(masked_edit(text, i, w1_end, false));
            }
        }
        pos = next.max(m.end());
        if pos >= text.len() {
            break;
        }
    }
    edits
}

fn rule_edits(rule: &Rule, text: &str) -> Vec<Edit> {
    match rule.spec.kind {
        Kind::Regex => regex_edits(rule, text),
        Kind::Pem => pem_edits(rule, text),
        Kind::Authorization => authorization_edits(rule, text),
        Kind::FormBody => form_body_edits(text),
    }
}

/// Redact with the built-in rules only.
fn redact_defaults(text: &str) -> String {
    let defaults = &*DEFAULTS;
    let mut run = defaults.always.clone();
    for hit in defaults.triggers.find_overlapping_iter(text) {
        run[defaults.trigger_rules[hit.pattern().as_usize()]] = true;
    }
    let mut current = text.to_owned();
    for index in (0..run.len()).filter(|&i| run[i]) {
        let edits = rule_edits(&defaults.rules[index], &current);
        if !edits.is_empty() {
            current = apply(&current, &edits);
        }
    }
    current
}

/// A user pattern (`logging.redactPatterns` entry), compiled.
struct UserPattern {
    regex: Regex,
}

impl UserPattern {
    fn edits(&self, text: &str) -> Vec<Edit> {
        self.regex
            .captures_iter(text)
            .filter_map(|caps| {
                let whole = caps.get(0)?;
                let m = caps.get(1).filter(|g| !g.is_empty()).unwrap_or(whole);
                masked_edit(text, m.start(), m.end(), false)
            })
            .collect()
    }
}

/// An error compiling a user pattern: its index in `logging.redactPatterns` and a message saying why and how to
/// rewrite it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    pub index: usize,
    pub message: String,
}

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PatternError {}

fn preview(raw: &str) -> String {
    let short: String = raw.chars().take(80).collect();
    let ell = if short.len() < raw.len() { "\u{2026}" } else { "" };
    format!("'{}{ell}'", short.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn compile_user(raw: &str, index: usize) -> Result<Option<UserPattern>, PatternError> {
    if raw.trim().is_empty() {
        return Ok(None); // OpenClaw skips blank entries too
    }
    let mut builder;
    let (body, flags) = match raw.strip_prefix('/').and_then(|r| r.rfind('/').map(|i| (&r[..i], &r[i + 1..]))) {
        Some((body, flags)) if !body.is_empty() && flags.chars().all(|c| "gimsuy".contains(c)) => (body, flags),
        _ => (raw, "i"),
    };
    builder = RegexBuilder::new(body);
    builder
        .case_insensitive(flags.contains('i'))
        .multi_line(flags.contains('m'))
        .dot_matches_new_line(flags.contains('s'))
        .size_limit(USER_SIZE_LIMIT)
        .dfa_size_limit(USER_SIZE_LIMIT);
    match builder.build() {
        Ok(_) if matches_empty(body, flags) => Err(PatternError {
            index,
            message: format!(
                "logging.redactPatterns[{index}]: {} can match the empty string, which hides nothing (and, matched at \
                 every position of a long text, makes redaction slow): require at least one character, e.g. 'a+' \
                 instead of 'a*'",
                preview(raw)
            ),
        }),
        Ok(regex) => Ok(Some(UserPattern { regex })),
        Err(err) => {
            let why = match &err {
                regex::Error::CompiledTooBig(_) => "it is too big once compiled".to_owned(),
                other => other.to_string().lines().last().unwrap_or("").trim().trim_start_matches("error: ").to_owned(),
            };
            let hint = if ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|s| body.contains(s)) {
                "look-around ((?=...), (?!...), (?<=...), (?<!...)) is not supported: match the context and put \
                 the part to hide in a capture group instead, e.g. 'token=(\\w+)' masks only the value"
            } else if body.contains("\\k<") || (1..=9).any(|d| body.contains(&format!("\\{d}"))) {
                "back-references (\\1, \\k<name>) are not supported: match the repeated text with its own pattern, \
                 e.g. '([a-z]+)-[a-z]+' instead of '([a-z]+)-\\1'"
            } else if matches!(err, regex::Error::CompiledTooBig(_)) {
                "use a smaller repetition count, or + and * instead of huge {n,m} counts"
            } else {
                "escape literal ( ) [ ] . * + ? | with a backslash (e.g. \"\\(\")"
            };
            Err(PatternError {
                index,
                message: format!(
                    "logging.redactPatterns[{index}]: {} is not a valid regular expression ({why}). Patterns use \
                     Rust regex syntax (linear time, no look-around or back-references): {hint}; fix the pattern \
                     or remove it from logging.redactPatterns",
                    preview(raw)
                ),
            })
        }
    }
}

/// Whether a pattern that compiled can match the empty string (its shortest match is 0 characters).
fn matches_empty(body: &str, flags: &str) -> bool {
    regex_syntax::ParserBuilder::new()
        .case_insensitive(flags.contains('i'))
        .multi_line(flags.contains('m'))
        .dot_matches_new_line(flags.contains('s'))
        .build()
        .parse(body)
        .is_ok_and(|hir| hir.properties().minimum_len() == Some(0))
}

/// Masks secrets in text: the user patterns first, then the built-in rules.
pub struct Redactor {
    user: Vec<UserPattern>,
}

impl Redactor {
    /// Compile the user patterns (OpenClaw's `logging.redactPatterns`): a plain string is case-insensitive, a
    /// `/body/flags` literal takes its own flags (`i`, `m`, `s`; `g`, `u`, `y` change nothing here).
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Self, PatternError> {
        let mut user = Vec::new();
        for (index, raw) in patterns.iter().enumerate() {
            if let Some(p) = compile_user(raw.as_ref(), index)? {
                user.push(p);
            }
        }
        LazyLock::force(&DEFAULTS);
        Ok(Self { user })
    }

    /// `text` with every secret masked; text without secrets comes back unchanged.
    pub fn redact(&self, text: &str) -> String {
        let mut current: Option<String> = None;
        for pattern in &self.user {
            let source = current.as_deref().unwrap_or(text);
            let edits = pattern.edits(source);
            if !edits.is_empty() {
                current = Some(apply(source, &edits));
            }
        }
        redact_defaults(current.as_deref().unwrap_or(text))
    }
}

/// The built-in rules only.
pub fn redact(text: &str) -> String {
    redact_defaults(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> String {
        redact(text)
    }

    #[test]
    fn every_rule_compiles() {
        // Rules compile on first use; this compiles each one, so a broken pattern fails here and not in a user's
        // process.
        for rule in &DEFAULTS.rules {
            assert!(rule.regex().captures_len() > 0, "{}", rule.spec.name);
        }
    }

    #[test]
    fn mask_counts_characters() {
        assert_eq!(mask("hunter2"), "***");
        assert_eq!(mask("sk-proj-4f9aXb81QzLmN0pRt7Uv"), "sk-pro\u{2026}t7Uv");
        assert_eq!(mask("äöüäöüäöüäöüäöüäöüäöü"), "äöüäöü\u{2026}üäöü");
        assert_eq!(mask(&"é".repeat(17)), "***");
    }

    #[test]
    fn families() {
        let cases = [
            ("OPENAI_API_KEY=sk-1234567890abcdef", "OPENAI_API_KEY=sk-123\u{2026}cdef"),
            ("failed [token=fixture-secret]; retry", "failed [token=*** retry"),
            ("password = db-password-fixture-1234567890", "password = db-pas\u{2026}7890"),
            (
                "Authorization: Digest username=\"u\", response=\"r-1234567890abcdef\"; status=401",
                "Authorization: Digest ***; status=401",
            ),
            ("manual callback code=oauth-code-123&state=visible", "manual callback code=***&state=visible"),
            ("prefix-ghp_aaaaaaaaaaaaaaaaaaaaaaaa x", "prefix-ghp_aa\u{2026}aaaa x"),
            ("https://u:p@ss@host.example/x", "https://u:***@host.example/x"),
            (
                "-----BEGIN PRIVATE KEY-----\nABC\n-----END PRIVATE KEY-----",
                "-----BEGIN PRIVATE KEY-----\n\u{2026}redacted\u{2026}\n-----END PRIVATE KEY-----",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(r(input), expected, "{input}");
            assert_eq!(r(expected), expected, "idempotent: {expected}");
        }
    }

    #[test]
    fn ordinary_text_is_unchanged() {
        for text in [
            "DISCORD_BOT_TOKEN=\"${DISCORD_BOT_TOKEN:-}\"",
            "{\"MONKEY\":\"banana\"}",
            "Use either --password or --password-file.",
            "the password is in the vault",
            "password_hash(x)",
            "const token = await getToken();",
            "请不要把密码和令牌写进日志。",
        ] {
            assert_eq!(r(text), text);
        }
    }

    #[test]
    fn already_masked_values_stay() {
        let text = "token=abcdef\u{2026}ghij and TOKEN=***";
        assert_eq!(r(text), text);
        // A raw value holding an ellipsis is still a secret.
        assert_eq!(r("password=abcdef\u{2026}1234567890"), "password=***");
    }

    #[test]
    fn user_patterns_run_first_and_mask_group_one() {
        let red = Redactor::new(&["codename (\\w+)", "/acme-[0-9]+/"]).unwrap();
        assert_eq!(red.redact("codename nightingale ACME-1 acme-2"), "codename *** ACME-1 ***");
        let red = Redactor::new(&["(?:emp=(\\d+))|EMP-\\w+"]).unwrap();
        assert_eq!(red.redact("emp=4242 and EMP-X77"), "emp=*** and ***");
        assert_eq!(Redactor::new(&["", "  "]).unwrap().redact("plain"), "plain");
    }

    #[test]
    fn bad_user_patterns_name_their_index() {
        for (pattern, needle) in [
            ("(unclosed", "backslash"),
            ("(?<=token=)\\w+", "look-around"),
            ("(\\w+)-\\1", "back-references"),
            ("a{100000}{100000}", "too big"),
            ("z*", "empty string"),
        ] {
            let err = Redactor::new(&["ok", pattern]).err().expect(pattern);
            assert_eq!(err.index, 1);
            assert!(err.message.starts_with("logging.redactPatterns[1]: "), "{}", err.message);
            assert!(err.message.contains(needle), "{}", err.message);
        }
    }

    #[test]
    fn hostile_megabyte_through_a_nested_repetition_pattern() {
        // (a+)+$ backtracks exponentially elsewhere; the regex crate is linear by construction (no timing here).
        let red = Redactor::new(&["(a+)+$"]).unwrap();
        let text = format!("{}!", "a".repeat(1 << 20));
        assert_eq!(red.redact(&text), text);
        let text = "a".repeat(1 << 20);
        assert_eq!(red.redact(&text).chars().count(), 11);
    }

    #[test]
    fn hostile_inputs_for_the_defaults_complete() {
        for text in [
            "a=".repeat(200_000),
            "Authorization: ".repeat(50_000),
            "?token=".repeat(50_000),
            "https://a:".repeat(50_000),
            "\"token\":\"".to_owned() + &"a\\".repeat(200_000),
        ] {
            assert!(!r(&text).is_empty());
        }
    }
}
