//! The scanner of `Kind::Regex` rules: the first participating capture group holds the secret, and the rule's
//! checks in code decide whether and how much of it to mask.

use std::cell::OnceCell;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::keys::sensitive_key;
use crate::redact::engine::Rule;
use crate::redact::masking::{already_masked, mask, masked_edit, shannon_entropy, Edit};
use crate::redact::rules::Check;

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

/// `$NAME`, `${NAME}`, `${NAME:-}` (an empty default) or `${NAME:?message}` (an error if unset), returning NAME.
fn shell_reference(v: &str) -> Option<&str> {
    let rest = v.strip_prefix('$')?;
    let name = if let Some(inner) = rest.strip_prefix('{') {
        let inner = inner.strip_suffix('}')?;
        let inner = inner.strip_suffix(":-").or_else(|| inner.strip_suffix('-')).unwrap_or(inner);
        inner.split_once(":?").map_or(inner, |(name, _)| name)
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

fn aws_bare(v: &str) -> bool {
    v.bytes().any(|b| b.is_ascii_uppercase())
        && v.bytes().any(|b| b.is_ascii_lowercase())
        && v.bytes().any(|b| b.is_ascii_digit() || matches!(b, b'/' | b'+' | b'='))
        && v.bytes().any(|b| matches!(b, b'G'..=b'Z' | b'g'..=b'z' | b'/' | b'+' | b'='))
}

/// A value that looks like a generated key rather than a name, path, version or date: 20+ characters with 3+ bits
/// of entropy per character; mixed case with a digit, or letters and digits each a fifth of it (hex and lower-case
/// keys); at most one `/`; no file extension, date or dotted name; and few letters in word-length runs
/// (`GatherLastToken_0_`, `claude-3-5-sonnet` are names).
fn random_token(v: &str) -> bool {
    let count = |f: fn(&u8) -> bool| v.bytes().filter(f).count();
    let (upper, lower, digits) =
        (count(u8::is_ascii_uppercase), count(u8::is_ascii_lowercase), count(u8::is_ascii_digit));
    let mixed = upper > 0 && lower > 0 && digits > 0;
    let balanced = digits * 5 >= v.len() && (upper + lower) * 5 >= v.len();
    v.len() >= 20
        && (mixed || balanced)
        && count(|&b| b == b'/') <= 1
        && !NOT_A_KEY.is_match(v)
        && letters_in_words(v) * 5 <= v.len() * 2
        && shannon_entropy(v) >= 3.0
}

/// How many letters of `v` stand in word-length runs: 5+ letters, a capital starting a new run (`camelCase`).
fn letters_in_words(v: &str) -> usize {
    let (mut total, mut run) = (0, 0);
    let mut previous = 0_u8;
    for &b in v.as_bytes().iter().chain(&[0]) {
        let continues = b.is_ascii_lowercase() && previous.is_ascii_alphabetic()
            || b.is_ascii_uppercase() && previous.is_ascii_uppercase();
        if continues {
            run += 1;
        } else {
            if run >= 5 {
                total += run;
            }
            run = usize::from(b.is_ascii_alphabetic());
        }
        previous = b;
    }
    total
}

/// A file name's extension, a date, a version, a dotted name (`ipaddress.IPv4Address`) or a UUID (a session's or a
/// record's id, which agents quote): what a path or a name holds.
static NOT_A_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\.[A-Za-z]{1,5}$|[0-9]{4}-[0-9]{2}-[0-9]{2}|^v?[0-9]+\.[0-9]+|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$",
        r"|^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"
    ))
    .expect("not a key")
});

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
            Check::NotEnvRef => shell_reference(value.trim_matches(['"', '\'', '`'])).is_none(),
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
            Check::RandomToken => random_token(value),
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

pub(super) fn regex_edits(rule: &Rule, text: &str) -> Vec<Edit> {
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
