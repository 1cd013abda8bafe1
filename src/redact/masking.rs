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

/// Shannon entropy of `s` in bits per character (gitleaks' `ShannonEntropy`, over bytes).
pub(super) fn shannon_entropy(s: &str) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0_usize; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| c as f64 / n).map(|p| -p * p.log2()).sum()
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

/// Where the text between the masks of `current` (`spans`) stands in `original`, the text it was made from by
/// replacing those spans: `(original start, current start, length)` per run, in order. `None` when a run is not
/// found (not an edit of `original`).
fn unmasked_runs(original: &str, current: &str, spans: &[(usize, usize)]) -> Option<Vec<(usize, usize, usize)>> {
    let mut runs = Vec::with_capacity(spans.len() + 1);
    let (mut from, mut at) = (0, 0);
    for (i, &(mask_start, mask_end)) in spans.iter().chain([&(current.len(), current.len())]).enumerate() {
        let run = &current[at..mask_start];
        let found = if i == 0 {
            original.starts_with(run).then_some(0)?
        } else if i == spans.len() {
            (original.len() >= from + run.len() && original.ends_with(run)).then(|| original.len() - run.len())?
        } else {
            // A mask replaced at least one character.
            let next = original[from..].chars().next().map_or(from, |c| from + c.len_utf8());
            next + original[next..].find(run)?
        };
        runs.push((found, at, run.len()));
        from = found + run.len();
        at = mask_end;
    }
    Some(runs)
}

/// The masks that finish what earlier ones began: each of `secrets` (ranges of `original`) that `current` (made
/// from `original` by writing the masks `spans`) does not hold wholly masked is masked whole, together with the
/// masks inside it.
pub(super) fn unmasked_rest(
    original: &str,
    current: &str,
    spans: &[(usize, usize)],
    secrets: &[std::ops::Range<usize>],
) -> Vec<Edit> {
    if secrets.is_empty() {
        return Vec::new();
    }
    let Some(runs) = unmasked_runs(original, current, spans) else { return Vec::new() };
    // A position of `original` in `current`: within a run, moved with it; inside a mask, that mask's start (or
    // end, for the end of a range).
    let place = |p: usize, end: bool| -> usize {
        let mut mask_edge = 0;
        for &(o, c, len) in &runs {
            if (o <= p && p < o + len) || (end && p == o + len && len > 0) {
                return c + (p - o);
            }
            if p < o {
                return if end { c } else { mask_edge };
            }
            mask_edge = c + len;
        }
        current.len()
    };
    let mut edits: Vec<Edit> = Vec::new();
    for secret in secrets {
        let (start, end) = (place(secret.start, false), place(secret.end, true));
        if start >= end || edits.last().is_some_and(|e| e.end > start) || !key_text_left(current, spans, start, end) {
            continue;
        }
        edits.push(Edit { start, end, with: mask(&original[secret.clone()]) });
    }
    edits
}

/// Whether `current[start..end]` holds, outside the masks `spans`, a run that looks like key material (token
/// characters with a digit, or with upper and lower case): what a partly masked secret must not keep. A PEM block's
/// `-----BEGIN PRIVATE KEY-----` frame around OpenClaw's `…redacted…` is not.
fn key_text_left(current: &str, spans: &[(usize, usize)], start: usize, end: usize) -> bool {
    let mut at = start;
    let bounds = spans.iter().filter(|&&(a, b)| b > start && a < end).map(|&(a, b)| (a.max(start), b.min(end)));
    for (mask_start, mask_end) in bounds.chain([(end, end)]) {
        let piece = &current[at..mask_start.max(at)];
        let key_like = piece.split(|c: char| !(c.is_ascii_alphanumeric() || "+/=_.~-".contains(c))).any(|run| {
            let has = |f: fn(&u8) -> bool| run.as_bytes().iter().any(f);
            has(u8::is_ascii_digit) || (has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase))
        });
        if key_like {
            return true;
        }
        at = mask_end.max(at);
    }
    false
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

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // one secret's range, not the range's numbers
    fn a_partly_masked_secret_is_masked_whole() {
        // An earlier rule masked `hf_000…` inside a longer secret; the secret's rest is masked with it.
        let original = "coinbase=0000000000hf_00000000000000000000; ok";
        let current = "coinbase=0000000000hf_000…0000; ok";
        let spans = vec![(19, 32)];
        assert_eq!(unmasked_runs(original, current, &spans), Some(vec![(0, 0, 19), (42, 32, 4)]));
        let edits = unmasked_rest(original, current, &spans, &[9..42]);
        assert_eq!(apply(current, &edits), "coinbase=000000\u{2026}0000; ok");
        // A PEM frame around OpenClaw's mask is not key material: the mask stays as it is.
        let original = "-----BEGIN PRIVATE KEY-----\nABC\n-----END PRIVATE KEY-----";
        let current = "-----BEGIN PRIVATE KEY-----\n\u{2026}redacted\u{2026}\n-----END PRIVATE KEY-----";
        let spans = vec![(28, 42)];
        assert!(unmasked_rest(original, current, &spans, &[0..original.len()]).is_empty());
    }
}
