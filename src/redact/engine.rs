//! The engine over the built-in rules: each rule compiled on first use, one Aho-Corasick scan of the trigger
//! literals to pick the rules a text can match, then each picked rule's scanner in table order.

use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::Regex;

use super::gitleaks::{self, GitleaksRule};
use super::masking::{apply_tracked, unmasked_rest, Edit, Spans};
use super::rules::{Spec, SPECS};
use super::scanners::rule_edits;
use super::triggers::triggers;

pub(super) struct Rule {
    pub(super) spec: &'static Spec,
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

    pub(super) fn regex(&self) -> &Regex {
        &self.compiled().0
    }

    /// The capture group of the key in key=value rules.
    pub(super) fn key(&self) -> Option<usize> {
        self.compiled().1
    }
}

pub(super) struct Defaults {
    rules: Vec<Rule>,
    /// gitleaks' default rules (`gitleaks.rs`), run after the built-in ones.
    pub(super) gitleaks: Vec<GitleaksRule>,
    /// Trigger literals of the rules that have some (ASCII case-insensitive), the built-in rules' then gitleaks'
    /// keywords: one scan picks both. `trigger_rules[i]` is the rule of literal `i`: `rules[i]`, or
    /// `gitleaks[i - rules.len()]` past the built-in ones.
    triggers: AhoCorasick,
    trigger_rules: Vec<usize>,
    /// Rules without a literal trigger, which always run (same numbering).
    always: Vec<bool>,
}

pub(super) static DEFAULTS: LazyLock<Defaults> = LazyLock::new(|| {
    let specs: &'static [Spec] = SPECS.as_slice();
    let rules: Vec<Rule> = specs.iter().map(|spec| Rule { spec, compiled: OnceLock::new() }).collect();
    // A rule-set file that does not load stops here, with a message naming it (a test loads it on every build).
    let gitleaks = gitleaks::load().unwrap_or_else(|e| panic!("{e}"));
    let n = rules.len();
    let always = specs
        .iter()
        .map(|spec| triggers(spec).is_empty())
        .chain(gitleaks.iter().map(|rule| rule.def.keywords.is_empty()))
        .collect();
    let (words, trigger_rules): (Vec<&str>, Vec<usize>) = specs
        .iter()
        .enumerate()
        .flat_map(|(i, spec)| triggers(spec).iter().map(move |&w| (w, i)))
        .chain(
            gitleaks
                .iter()
                .enumerate()
                .flat_map(|(i, rule)| rule.def.keywords.iter().map(move |w| (w.as_str(), n + i))),
        )
        .unzip();
    // A DFA: ~1 ms more to build than the default NFA (once per process), three times faster to scan with gitleaks'
    // short keywords (`api`, `key`, `ey`) among the literals.
    let triggers = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .kind(Some(AhoCorasickKind::DFA))
        .build(words)
        .expect("redact triggers");
    Defaults { rules, gitleaks, triggers, trigger_rules, always }
});

/// Redact with the built-in rules only.
pub(super) fn redact_defaults(text: &str) -> String {
    run(text, None).0
}

/// [`redact_defaults`], also moving `spans` (masks already written into `text`) and adding the masks written here.
pub(super) fn redact_defaults_tracked(text: &str, spans: Spans) -> (String, Spans) {
    let (out, spans) = run(text, Some(spans));
    (out, spans.unwrap_or_default())
}

fn run(text: &str, spans: Option<Spans>) -> (String, Option<Spans>) {
    let defaults = &*DEFAULTS;
    let mut run = defaults.always.clone();
    for hit in defaults.triggers.find_overlapping_iter(text) {
        run[defaults.trigger_rules[hit.pattern().as_usize()]] = true;
    }
    let tracked = spans.is_some();
    let mut spans = spans.unwrap_or_default();
    let mut current = text.to_owned();
    let n = defaults.rules.len();
    let write = |current: &mut String, spans: &mut Spans, edits: Vec<Edit>| {
        if !edits.is_empty() {
            let (out, after) = apply_tracked(current, &edits, spans);
            *current = out;
            *spans = after;
        }
    };
    for index in (0..run.len()).filter(|&i| run[i]) {
        // The built-in rules first (OpenClaw's, then memsift's context rules), then gitleaks': where two match the
        // same secret, the earlier mask stands.
        let edits = if index < n {
            rule_edits(&defaults.rules[index], &current)
        } else {
            defaults.gitleaks[index - n].edits(&current)
        };
        write(&mut current, &mut spans, edits);
    }
    // An earlier mask inside or next to a gitleaks secret can stop gitleaks' regex from matching in what is left
    // while part of the secret stays: each secret gitleaks finds in the original text that is not all masked now
    // becomes one mask.
    if current != text {
        for rule in (n..run.len()).filter(|&i| run[i]).map(|i| &defaults.gitleaks[i - n]) {
            let edits = unmasked_rest(text, &current, &spans, &rule.secrets(text));
            write(&mut current, &mut spans, edits);
        }
    }
    (current, tracked.then_some(spans))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::redact;

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
