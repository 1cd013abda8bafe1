//! User patterns (`logging.redactPatterns`): compiled with a size budget, refused with a message that says how to
//! rewrite them, and applied before the built-in rules.

use regex::{Regex, RegexBuilder};

use super::masking::{masked_edit, Edit};

/// Compiled-program budget for one user pattern: absurd repetition counts are refused, not compiled for minutes.
const USER_SIZE_LIMIT: usize = 4 << 20;

/// A user pattern (`logging.redactPatterns` entry), compiled.
pub(super) struct UserPattern {
    regex: Regex,
}

impl UserPattern {
    pub(super) fn edits(&self, text: &str) -> Vec<Edit> {
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

pub(super) fn compile_user(raw: &str, index: usize) -> Result<Option<UserPattern>, PatternError> {
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

#[cfg(test)]
mod tests {
    use crate::redact::Redactor;

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
}
