//! The scanner of form bodies (`code=…&state=…`, `body: key=value`, encoded or obfuscated keys): parsed per line,
//! sensitive values become `***`.

use std::sync::LazyLock;

use regex::Regex;

use super::keys::{is_format, is_invisible, sensitive_key};
use crate::redact::masking::{already_masked, Edit};

/// A form-body key: letters, digits, `_.-`, `%XX` escapes, `+` and invisible characters (never `=`, `&`).
pub(in crate::redact) const FORM_KEY: &str = concat!(
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

/// Form-body pairs per line: encoded keys, `body:` context pairs, then `&`-joined pair runs.
pub(super) fn form_body_edits(text: &str) -> Vec<Edit> {
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
