//! The scanner of PEM private keys: the BEGIN line stays, the body up to the next `-----` becomes `…redacted…`.

use crate::redact::engine::Rule;
use crate::redact::masking::{Edit, ELLIPSIS};

const PEM_BODY: &str = "\n\u{2026}redacted\u{2026}\n";

pub(super) fn pem_edits(rule: &Rule, text: &str) -> Vec<Edit> {
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
