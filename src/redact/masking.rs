//! How a secret is masked, and the edits that write masks into a text.

/// OpenClaw's `DEFAULT_REDACT_MIN_LENGTH`: shorter values are masked completely.
pub const MIN_LENGTH: usize = 18;
const KEEP_START: usize = 6;
const KEEP_END: usize = 4;
pub(super) const ELLIPSIS: char = '\u{2026}';
/// What stands for every mask in the text search indexes (see [`super::Redactor::redact_for_search`]): one constant,
/// so no fragment of a secret (a long value's first 6 and last 4 characters) is searchable.
pub const SEARCH_MASK: &str = "***";

/// Where masks stand in a text: sorted, disjoint byte ranges.
pub(super) type Spans = Vec<(usize, usize)>;

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

/// [`apply`], also moving `spans` (the masks already in `text`) to where they stand in the result and adding each
/// edit's replacement: a mask an edit overlaps merges with it (an edit may mask a value that holds an earlier mask).
pub(super) fn apply_tracked(text: &str, edits: &[Edit], spans: &[(usize, usize)]) -> (String, Spans) {
    let out = apply(text, edits);
    let mut placed = Vec::with_capacity(edits.len()); // each edit's replacement in `out`
    let mut shift = 0_isize;
    for e in edits {
        let start = e.start.saturating_add_signed(shift);
        placed.push((start, start + e.with.len()));
        shift += e.with.len() as isize - (e.end - e.start) as isize;
    }
    // A position of `text` in `out`: inside an edit, the edge of its replacement on the span's side.
    let moved = |p: usize, end: bool| -> usize {
        let mut shift = 0_isize;
        for (e, &(start, stop)) in edits.iter().zip(&placed) {
            if !end && e.start <= p && p < e.end {
                return start;
            }
            if end && e.start < p && p <= e.end {
                return stop;
            }
            if e.end > p || (end && e.start >= p) {
                break;
            }
            shift += e.with.len() as isize - (e.end - e.start) as isize;
        }
        p.saturating_add_signed(shift)
    };
    let mut all: Spans = spans.iter().map(|&(a, b)| (moved(a, false), moved(b, true))).collect();
    all.extend(placed);
    all.sort_unstable();
    let mut merged: Spans = Vec::with_capacity(all.len());
    for (a, b) in all {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    (out, merged)
}

/// `text` with each span replaced by [`SEARCH_MASK`].
pub(super) fn flatten(text: &str, spans: &[(usize, usize)]) -> String {
    let edits: Vec<Edit> =
        spans.iter().map(|&(start, end)| Edit { start, end, with: SEARCH_MASK.to_owned() }).collect();
    apply(text, &edits)
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

    #[test]
    fn tracked_edits_move_and_merge_spans() {
        let edit = |start, end, with: &str| Edit { start, end, with: with.to_owned() };
        // "aa XXXX bb YY cc": two masks; an edit before the first, one over the second and its surroundings.
        let text = "aa XXXX bb YY cc";
        let (out, spans) = apply_tracked(text, &[edit(0, 2, "a"), edit(10, 14, "##")], &[(3, 7), (11, 13)]);
        assert_eq!(out, "a XXXX bb##cc");
        assert_eq!(spans, vec![(0, 1), (2, 6), (9, 11)]);
        assert_eq!(flatten(&out, &spans), "*** *** bb***cc");
        // An edit inside an earlier span keeps it one span.
        let (out, spans) = apply_tracked("xx[abcdef]yy", &[edit(4, 6, "-")], &[(2, 10)]);
        assert_eq!((out.as_str(), spans), ("xx[a-def]yy", vec![(2, 9)]));
    }
}
