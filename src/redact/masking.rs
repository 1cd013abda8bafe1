//! How a secret is masked, and the edits that write masks into a text.

/// OpenClaw's `DEFAULT_REDACT_MIN_LENGTH`: shorter values are masked completely.
pub const MIN_LENGTH: usize = 18;
const KEEP_START: usize = 6;
const KEEP_END: usize = 4;
pub(super) const ELLIPSIS: char = '\u{2026}';

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
pub(super) fn already_masked(text: &str, start: usize, end: usize) -> bool {
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

/// One replacement: `text[start..end]` becomes `with`.
pub(super) struct Edit {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) with: String,
}

pub(super) fn apply(text: &str, edits: &[Edit]) -> String {
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

pub(super) fn masked_edit(text: &str, start: usize, end: usize, all_stars: bool) -> Option<Edit> {
    if start >= end || already_masked(text, start, end) {
        return None;
    }
    let with = if all_stars { "***".to_owned() } else { mask(&text[start..end]) };
    Some(Edit { start, end, with })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_counts_characters() {
        assert_eq!(mask("hunter2"), "***");
        assert_eq!(mask("sk-proj-4f9aXb81QzLmN0pRt7Uv"), "sk-pro\u{2026}t7Uv");
        assert_eq!(mask("äöüäöüäöüäöüäöüäöüäöü"), "äöüäöü\u{2026}üäöü");
        assert_eq!(mask(&"é".repeat(17)), "***");
    }
}
