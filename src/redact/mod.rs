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
//!
//! Layout: [`Redactor`] and [`redact`] here; `rules` (the rule table), `triggers` (the trigger table), `engine`
//! (lazy compilation, trigger scan, rules in order), `scanners` (one per rule kind: regex with checks in code, PEM
//! blocks, authorization headers, form bodies), `masking` (the mask and the text edits) and `user_patterns`.

mod engine;
mod gitleaks;
mod masking;
mod rules;
mod scanners;
mod triggers;
mod user_patterns;

use std::sync::LazyLock;

use engine::{redact_defaults, redact_defaults_tracked, DEFAULTS};
use masking::{apply, apply_tracked, flatten};
pub use masking::{mask, MIN_LENGTH, SEARCH_MASK};
pub use user_patterns::PatternError;
use user_patterns::{compile_user, UserPattern};

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

    /// `text` as a search indexes it: [`Redactor::redact`]'s text with every mask written replaced by
    /// [`SEARCH_MASK`]. A long secret's mask keeps its first 6 and last 4 characters (what agents are shown); were
    /// those searchable, a search for a guessed secret (redacted as the rows were) would find the message only when
    /// the guess was right. Here a right guess and a wrong one of the same shape read alike.
    pub fn redact_for_search(&self, text: &str) -> String {
        let mut current: Option<String> = None;
        let mut spans = Vec::new();
        for pattern in &self.user {
            let source = current.as_deref().unwrap_or(text);
            let edits = pattern.edits(source);
            if !edits.is_empty() {
                let (out, after) = apply_tracked(source, &edits, &spans);
                current = Some(out);
                spans = after;
            }
        }
        let (shown, spans) = redact_defaults_tracked(current.as_deref().unwrap_or(text), spans);
        if spans.is_empty() {
            shown
        } else {
            flatten(&shown, &spans)
        }
    }
}

/// The built-in rules only.
pub fn redact(text: &str) -> String {
    redact_defaults(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_patterns_run_first_and_mask_group_one() {
        let red = Redactor::new(&["codename (\\w+)", "/acme-[0-9]+/"]).unwrap();
        assert_eq!(red.redact("codename nightingale ACME-1 acme-2"), "codename *** ACME-1 ***");
        let red = Redactor::new(&["(?:emp=(\\d+))|EMP-\\w+"]).unwrap();
        assert_eq!(red.redact("emp=4242 and EMP-X77"), "emp=*** and ***");
        assert_eq!(Redactor::new(&["", "  "]).unwrap().redact("plain"), "plain");
    }

    #[test]
    fn the_search_form_is_the_shown_text_with_one_constant_per_mask() {
        let red = Redactor::new(&["codename (\\w+)"]).unwrap();
        for (text, search) in [
            ("OPENAI_API_KEY=sk-proj-4f9aXb81QzLmN0pRt7Uv ok", "OPENAI_API_KEY=*** ok"),
            ("codename nightingale, password=hunter2", "codename ***, password=***"),
            ("https://u:p@ss-long-secret-value-1234@host.example/x", "https://u:***@host.example/x"),
            ("plain text, no secret", "plain text, no secret"),
            ("already sk-pro\u{2026}t7Uv shown", "already sk-pro\u{2026}t7Uv shown"),
        ] {
            assert_eq!(red.redact_for_search(text), search, "{text}");
            assert_eq!(red.redact_for_search(search), search, "idempotent: {search}");
        }
        let right = red.redact_for_search("key ghp_abcdefghijklmnopqrstuvwxyz0123 end");
        let wrong = red.redact_for_search("key ghp_zyxwvutsrqponmlkjihgfedcba9876 end");
        assert_eq!(right, wrong);
    }
}
