//! gitleaks' default rule set as data: `gitleaks.toml` (gitleaks' own `config/gitleaks.toml`, MIT, © Zachary Rice,
//! copied unmodified; origin and sha256 in docs/redaction.md, licence in LICENSE-gitleaks) is compiled into the
//! binary and read once, when the redaction engine is first used. Nothing is downloaded at run time.
//!
//! Semantics follow gitleaks: a rule runs only when one of its keywords occurs in the text (ASCII
//! case-insensitive; the engine's one Aho-Corasick scan decides); its secret is the `secretGroup` capture, else the
//! first non-empty capture, else the whole match; a secret whose Shannon entropy is not above the rule's `entropy`,
//! that holds one of the rule's stopwords, or whose line (or secret) matches one of the rule's allowlist regexes is
//! left alone, and `generic-*` secrets need a digit. One departure, where OpenClaw's rules decide: a whole-match
//! token shape inside a longer alphanumeric run (a base64 blob) is left alone. Each regex compiles with the `regex` crate (linear time) on
//! the first text that triggers its rule. The global allowlist lists file paths only and does not apply to text.

use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::{Regex, RegexBuilder};

use super::masking::{already_masked, mask, shannon_entropy, Edit, ELLIPSIS};

/// The rule set, as named in every load error.
pub(super) const FILE: &str = "src/redact/gitleaks.toml";
pub(super) const SOURCE: &str = include_str!("gitleaks.toml");
/// The only `title` this loader reads: gitleaks v8's generated default config (`[rules.allowlist]` tables, not the
/// later `[[rules.allowlists]]`).
const TITLE: &str = "gitleaks config";

/// Rules whose upstream regex the `regex` crate cannot compile, with the replacement and the reason. The current
/// file needs none: Go's RE2 syntax (mid-pattern `(?i)`, `\x60`, `[\s|']`) is valid for the `regex` crate as is.
const REWRITES: &[(&str, &str, &str)] = &[];

/// Rules left out, with the reason.
const SKIPPED: &[(&str, &str)] = &[];

/// A rule-set file that cannot be used: the message names the file and the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

#[derive(Debug, Default, Clone)]
pub(super) struct RuleDef {
    pub(super) id: String,
    pub(super) regex: String,
    pub(super) secret_group: usize,
    pub(super) entropy: Option<f64>,
    pub(super) keywords: Vec<String>,
    pub(super) stopwords: Vec<String>,
    pub(super) allow_regexes: Vec<String>,
    /// The allowlist regexes test the secret's line, not the secret.
    pub(super) allow_line: bool,
}

struct Compiled {
    regex: Regex,
    allow: Vec<Regex>,
    stopwords: Option<AhoCorasick>,
}

pub(super) struct GitleaksRule {
    pub(super) def: RuleDef,
    compiled: OnceLock<Compiled>,
}

#[derive(Clone)]
enum Value {
    Str(String),
    Num(f64),
    List(Vec<String>),
}

/// A cursor over the file: the subset of TOML gitleaks' generator writes (comments, `[table]`, `[[array]]`,
/// `key = value` with basic or `'''` literal strings, numbers and string arrays that may span lines).
/// Read by hand rather than with a TOML crate and serde: every process that redacts (a CLI search too) parses
/// it, and this reads it in ~0.4 ms with no new dependency.
struct Cursor<'s> {
    src: &'s str,
    pos: usize,
    name: &'s str,
}

impl<'s> Cursor<'s> {
    fn line(&self) -> usize {
        self.src[..self.pos].matches('\n').count() + 1
    }

    fn err(&self, what: &str) -> LoadError {
        LoadError(format!("redaction rule set {}: line {}: {what}", self.name, self.line()))
    }

    fn rest(&self) -> &'s str {
        &self.src[self.pos..]
    }

    /// Skip spaces, newlines and comments (`newlines` false: spaces only).
    fn skip(&mut self, newlines: bool) {
        loop {
            let rest = self.rest();
            let trimmed = if newlines { rest.trim_start() } else { rest.trim_start_matches([' ', '\t']) };
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with('#') {
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else {
                return;
            }
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        let ok = self.rest().starts_with(s);
        if ok {
            self.pos += s.len();
        }
        ok
    }

    fn end_of_line(&mut self) -> Result<(), LoadError> {
        self.skip(false);
        if self.rest().is_empty() || self.eat("\n") || self.eat("\r\n") {
            Ok(())
        } else {
            Err(self.err("expected the end of the line"))
        }
    }

    fn string(&mut self) -> Result<String, LoadError> {
        if self.eat("'''") {
            let end = self.rest().find("'''").ok_or_else(|| self.err("unterminated ''' string"))?;
            let s = self.rest()[..end].to_owned();
            self.pos += end + 3;
            return Ok(s);
        }
        if self.eat("'") {
            let end = self.rest().find(['\'', '\n']).ok_or_else(|| self.err("unterminated ' string"))?;
            let s = self.rest()[..end].to_owned();
            self.pos += end;
            return if self.eat("'") { Ok(s) } else { Err(self.err("unterminated ' string")) };
        }
        if !self.eat("\"") {
            return Err(self.err("expected a string"));
        }
        let mut out = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next().map(|(_, e)| e) {
                    Some('"') => out.push('"'),
                    Some('\\') => out.push('\\'),
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    _ => return Err(self.err("unsupported escape in a string")),
                },
                '\n' => break,
                c => out.push(c),
            }
        }
        Err(self.err("unterminated \" string"))
    }

    fn value(&mut self) -> Result<Value, LoadError> {
        if self.eat("[") {
            let mut items = Vec::new();
            loop {
                self.skip(true);
                if self.eat("]") {
                    return Ok(Value::List(items));
                }
                items.push(self.string()?);
                self.skip(true);
                if !self.eat(",") {
                    self.skip(true);
                    return if self.eat("]") { Ok(Value::List(items)) } else { Err(self.err("expected , or ]")) };
                }
            }
        }
        if self.rest().starts_with(['"', '\'']) {
            return self.string().map(Value::Str);
        }
        let len =
            self.rest().find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-')).unwrap_or(self.rest().len());
        let number = self.rest()[..len].parse::<f64>().map_err(|_| self.err("expected a value"))?;
        self.pos += len;
        Ok(Value::Num(number))
    }
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Table {
    Top,
    Allowlist,
    Rule,
    RuleAllowlist,
}

fn as_str(cur: &Cursor<'_>, key: &str, v: Value) -> Result<String, LoadError> {
    match v {
        Value::Str(s) => Ok(s),
        _ => Err(cur.err(&format!("{key} must be a string"))),
    }
}

fn as_list(cur: &Cursor<'_>, key: &str, v: Value) -> Result<Vec<String>, LoadError> {
    match v {
        Value::List(l) => Ok(l),
        _ => Err(cur.err(&format!("{key} must be a list of strings"))),
    }
}

/// Parse and validate a gitleaks rule set; `name` is the file named in errors.
pub(super) fn parse(src: &str, name: &str) -> Result<Vec<RuleDef>, LoadError> {
    let mut cur = Cursor { src, pos: 0, name };
    let mut table = Table::Top;
    let mut title = None;
    let mut rules: Vec<RuleDef> = Vec::new();
    loop {
        cur.skip(true);
        if cur.rest().is_empty() {
            break;
        }
        if cur.eat("[") {
            let header = cur.rest().split('\n').next().unwrap_or("").trim_end();
            table = match header {
                "[rules]]" => {
                    rules.push(RuleDef::default());
                    Table::Rule
                }
                "allowlist]" if table == Table::Top => Table::Allowlist,
                "rules.allowlist]" if table == Table::Rule => Table::RuleAllowlist,
                other => {
                    return Err(cur.err(&format!(
                        "unknown table [{other} (an unknown gitleaks config version? this loader reads gitleaks v8's \
                         generated default config)"
                    )))
                }
            };
            cur.pos += header.len();
            cur.end_of_line()?;
            continue;
        }
        let key_len = cur.rest().find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(0);
        if key_len == 0 {
            return Err(cur.err("expected a key"));
        }
        let key = &cur.rest()[..key_len];
        cur.pos += key_len;
        cur.skip(false);
        if !cur.eat("=") {
            return Err(cur.err(&format!("expected = after {key}")));
        }
        cur.skip(false);
        let value = cur.value()?;
        match (table, key) {
            (Table::Top, "title") => title = Some(as_str(&cur, key, value)?),
            (Table::Allowlist, "description" | "paths") => {}
            (Table::Rule | Table::RuleAllowlist, _) => {
                let rule = rules.last_mut().expect("a rule table");
                match (table, key) {
                    (Table::Rule, "id") => rule.id = as_str(&cur, key, value)?,
                    (Table::Rule | Table::RuleAllowlist, "description") => {}
                    (Table::Rule, "regex") => rule.regex = as_str(&cur, key, value)?,
                    (Table::Rule, "keywords") => rule.keywords = as_list(&cur, key, value)?,
                    (Table::Rule, "entropy") => match value {
                        Value::Num(n) if n >= 0.0 => rule.entropy = Some(n),
                        _ => return Err(cur.err("entropy must be a non-negative number")),
                    },
                    (Table::Rule, "secretGroup") => match value {
                        Value::Num(n) if n >= 0.0 && n.fract() == 0.0 => rule.secret_group = n as usize,
                        _ => return Err(cur.err("secretGroup must be a non-negative integer")),
                    },
                    (Table::RuleAllowlist, "stopwords") => rule.stopwords = as_list(&cur, key, value)?,
                    (Table::RuleAllowlist, "regexes") => rule.allow_regexes = as_list(&cur, key, value)?,
                    (Table::RuleAllowlist, "regexTarget") => match as_str(&cur, key, value)?.as_str() {
                        "line" => rule.allow_line = true,
                        "secret" => rule.allow_line = false,
                        other => return Err(cur.err(&format!("unknown regexTarget {other:?}"))),
                    },
                    _ => return Err(cur.err(&format!("unknown key {key} (an unknown gitleaks config version?)"))),
                }
            }
            _ => return Err(cur.err(&format!("unknown key {key} (an unknown gitleaks config version?)"))),
        }
        cur.end_of_line()?;
    }
    match title.as_deref() {
        Some(TITLE) => {}
        Some(other) => {
            return Err(LoadError(format!(
                "redaction rule set {name}: unknown version: title {other:?}, expected {TITLE:?}"
            )))
        }
        None => return Err(LoadError(format!("redaction rule set {name}: no title: not a gitleaks config"))),
    }
    if rules.is_empty() {
        return Err(LoadError(format!("redaction rule set {name}: no [[rules]]")));
    }
    let mut seen = std::collections::HashSet::new();
    for rule in &rules {
        if rule.id.is_empty() || rule.regex.is_empty() {
            return Err(LoadError(format!("redaction rule set {name}: a rule without id or regex ({:?})", rule.id)));
        }
        if !seen.insert(rule.id.as_str()) {
            return Err(LoadError(format!("redaction rule set {name}: rule {} appears twice", rule.id)));
        }
    }
    Ok(rules)
}

/// The embedded rule set, rewrites applied and skipped rules left out.
pub(super) fn load() -> Result<Vec<GitleaksRule>, LoadError> {
    let mut defs = parse(SOURCE, FILE)?;
    defs.retain(|d| !SKIPPED.iter().any(|(id, _)| *id == d.id));
    for def in &mut defs {
        if let Some((_, regex, _)) = REWRITES.iter().find(|(id, _, _)| *id == def.id) {
            def.regex = (*regex).to_owned();
        }
    }
    Ok(defs.into_iter().map(|def| GitleaksRule { def, compiled: OnceLock::new() }).collect())
}

impl GitleaksRule {
    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            // ASCII classes and case folding first, as Go's RE2 reads `\s`, `\b` and `(?i)` (and a smaller, faster
            // automaton); a pattern that needs Unicode mode to stay on UTF-8 boundaries gets it.
            let build = |pattern: &str| {
                RegexBuilder::new(pattern)
                    .unicode(false)
                    .size_limit(64 << 20)
                    .build()
                    .or_else(|_| RegexBuilder::new(pattern).size_limit(64 << 20).build())
                    .unwrap_or_else(|e| panic!("redaction rule set {FILE}: rule {}: {e}", self.def.id))
            };
            let stopwords = (!self.def.stopwords.is_empty()).then(|| {
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .build(&self.def.stopwords)
                    .expect("gitleaks stopwords")
            });
            Compiled {
                regex: build(&self.def.regex),
                allow: self.def.allow_regexes.iter().map(|p| build(p)).collect(),
                stopwords,
            }
        })
    }

    #[cfg(test)]
    pub(super) fn regex(&self) -> &Regex {
        &self.compiled().regex
    }

    /// Where this rule finds a secret gitleaks would report in `text` (its filters passed): the ranges to mask.
    pub(super) fn secrets(&self, text: &str) -> Vec<Range<usize>> {
        let compiled = self.compiled();
        let mut found = Vec::new();
        for caps in compiled.regex.captures_iter(text) {
            let whole = caps.get(0).expect("group 0");
            let secret = if self.def.secret_group > 0 {
                caps.get(self.def.secret_group)
            } else {
                (1..caps.len()).find_map(|g| caps.get(g).filter(|m| !m.is_empty())).or(Some(whole))
            };
            let Some(secret) = secret.filter(|m| !m.is_empty()) else { continue };
            let value = secret.as_str();
            // Without a `secretGroup`, gitleaks reports the first non-empty group; where token text follows that
            // group inside the match, the group is a piece of the token (slack-webhook-url's `https://`, doppler's
            // `dp.pt.`), so the whole match is masked. gitleaks' filters still judge the group it reports.
            let token_follows = self.def.secret_group == 0
                && text[secret.end()..whole.end()].bytes().any(|b| b.is_ascii_alphanumeric());
            let masked = if token_follows { whole.range() } else { secret.range() };
            // A bare token shape inside a longer run of letters and digits (a base64 blob holding `AKIA…`) is part
            // of that run, not a token: OpenClaw leaves such blobs alone, and where the rule sets overlap its
            // behaviour stays.
            let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
            if masked == whole.range()
                && (alnum(text[..whole.start()].chars().next_back()) || alnum(text[whole.end()..].chars().next()))
            {
                continue;
            }
            if self.def.entropy.is_some_and(|min| shannon_entropy(value) <= min)
                || (self.def.id.starts_with("generic") && !value.bytes().any(|b| b.is_ascii_digit()))
                || compiled.stopwords.as_ref().is_some_and(|s| s.is_match(value))
                || value.contains(ELLIPSIS)
                || value.contains("***")
            {
                continue;
            }
            if !compiled.allow.is_empty() {
                let target = if self.def.allow_line {
                    let start = text[..whole.start()].rfind('\n').map_or(0, |i| i + 1);
                    let end = text[whole.end()..].find('\n').map_or(text.len(), |i| whole.end() + i);
                    &text[start..end]
                } else {
                    value
                };
                if compiled.allow.iter().any(|r| r.is_match(target)) {
                    continue;
                }
            }
            found.push(masked);
        }
        found
    }

    /// The masks this rule writes into `text`; spans within or across an earlier mask are left alone.
    pub(super) fn edits(&self, text: &str) -> Vec<Edit> {
        let mut edits: Vec<Edit> = Vec::new();
        for secret in self.secrets(text) {
            if already_masked(text, secret.start, secret.end) || edits.last().is_some_and(|e| e.end > secret.start) {
                continue;
            }
            edits.push(Edit { start: secret.start, end: secret.end, with: mask(&text[secret.clone()]) });
        }
        edits
    }
}

/// The counts a test and the docs report: rules in the file, rewritten, skipped.
#[cfg(test)]
pub(super) fn counts() -> (usize, usize, usize) {
    (parse(SOURCE, FILE).map_or(0, |r| r.len()), REWRITES.len(), SKIPPED.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use std::time::Instant;

    #[test]
    fn the_pinned_file_loads_and_every_rule_compiles() {
        let digest = Sha256::digest(SOURCE.as_bytes());
        let hex: String = digest.iter().fold(String::new(), |mut s, b| {
            use std::fmt::Write;
            let _ = write!(s, "{b:02x}");
            s
        });
        assert_eq!(hex, "676825ad59cbd40c7721a6b249afbced54ac7fea1f91d1389ec55e86f1a605fc", "{FILE} changed");
        assert_eq!(counts(), (168, 0, 0));
        let rules = load().unwrap();
        assert_eq!(rules.len(), 168);
        assert_eq!(rules.iter().filter(|r| r.def.keywords.is_empty()).count(), 1); // facebook-access-token
        for rule in &rules {
            assert!(rule.regex().captures_len() > 0, "{}", rule.def.id);
        }
        let generic = rules.iter().find(|r| r.def.id == "generic-api-key").unwrap();
        assert!(generic.def.stopwords.len() > 1000);
        assert_eq!(generic.def.entropy, Some(3.5));
        let sumo = rules.iter().find(|r| r.def.id == "sumologic-access-id").unwrap();
        assert!(sumo.def.allow_line && sumo.def.allow_regexes == ["sumOf"]);
    }

    #[test]
    fn bad_files_fail_with_a_message_naming_them() {
        let cases = [
            ("", "no title"),
            ("title = \"gitleaks config\"\n", "no [[rules]]"),
            ("title = \"gitleaks config v9\"\n[[rules]]\nid = \"a\"\nregex = '''a'''\n", "unknown version"),
            ("title = \"gitleaks config\"\n[[rules]]\nid = \"a\"\nregex = '''a\n", "unterminated"),
            ("title = \"gitleaks config\"\n[[rules]]\nid = \"a\"\n[[rules.allowlists]]\n", "unknown table"),
            ("title = \"gitleaks config\"\n[[rules]]\nid = \"a\"\nregex = 'a'\ntags = []\n", "unknown key tags"),
            ("title = \"gitleaks config\"\n[[rules]]\nid = \"a\"\nentropy = \"x\"\n", "entropy must be"),
            ("title = \"gitleaks config\"\n[[rules]]\nid = \"a\"\n", "without id or regex"),
            ("\u{0}\u{1}garbage", "expected a key"),
        ];
        for (src, what) in cases {
            let err = parse(src, "rules/x.toml").unwrap_err().to_string();
            assert!(err.contains("rules/x.toml") && err.contains(what), "{err}");
        }
    }

    #[test]
    fn entropy_matches_gitleaks() {
        assert!(shannon_entropy("aaaa").abs() < 1e-12);
        assert!((shannon_entropy("abcd") - 2.0).abs() < 1e-12);
    }

    #[test]
    fn hostile_inputs_stay_linear() {
        // `(a+)+$`-style inputs against every rule: the `regex` crate never backtracks, so time grows linearly.
        let rules = load().unwrap();
        let shapes = |n: usize| {
            vec![
                "a".repeat(n) + "!",
                "key=".to_owned() + &"a".repeat(n) + "!",
                "api_key = \"".to_owned() + &"-a1".repeat(n / 3) + "\u{1}",
                "token".repeat(n / 5),
                "xoxb-".repeat(n / 5),
            ]
        };
        let time = |n: usize| {
            let start = Instant::now();
            for text in shapes(n) {
                for rule in &rules {
                    rule.edits(&text);
                }
            }
            start.elapsed().as_secs_f64()
        };
        time(1_000);
        let (small, large) = (time(10_000), time(40_000));
        assert!(large < small * 12.0 + 0.05, "{small} s for 10k, {large} s for 40k");
    }
}
