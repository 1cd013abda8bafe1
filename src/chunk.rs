//! OpenClaw's Markdown chunker (`chunkMarkdown`): line-greedy packing under a
//! weighted character budget, overlap carried as whole segments. It reproduces
//! OpenClaw's output except where OpenClaw overruns its own budget (see the
//! overlap trim below): here no chunk ever exceeds `max(32, tokens * 4)`.
//!
//! OpenClaw measures and slices in UTF-16 code units (JavaScript strings). We do the
//! same, with one unavoidable difference: a cut that would split a surrogate pair
//! (which JavaScript allows, producing broken text) moves before the astral char
//! for the coarse cut and after it for the fine cut (as OpenClaw's fine cut does).

use sha2::{Digest, Sha256};

use crate::error::{invalid, Result};

/// OpenClaw's `CHARS_PER_TOKEN_ESTIMATE`.
pub const CHARS_PER_TOKEN: usize = 4;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// 1-based line of the first segment.
    pub start_line: usize,
    /// 1-based line of the last segment (inclusive).
    pub end_line: usize,
    pub text: String,
    /// Lower-case hex sha256 of `text` (UTF-8).
    pub hash: String,
}

/// Characters counted as one token each (OpenClaw's `NON_LATIN_RE`).
fn is_non_latin(c: char) -> bool {
    matches!(c,
        '\u{2E80}'..='\u{9FFF}' | '\u{A000}'..='\u{A4FF}' | '\u{AC00}'..='\u{D7AF}' | '\u{F900}'..='\u{FAFF}'
        | '\u{FF01}'..='\u{FF60}' | '\u{FFE0}'..='\u{FFE6}' | '\u{20000}'..='\u{2FA1F}')
}

/// OpenClaw's `estimateStringChars`: UTF-16 length, CJK astral chars counted once,
/// and every non-Latin char weighted x4 so that `chars / 4` estimates tokens.
pub fn estimate_chars(text: &str) -> usize {
    text.chars()
        .map(|c| {
            let units = if ('\u{20000}'..='\u{2FA1F}').contains(&c) { 1 } else { c.len_utf16() };
            units + if is_non_latin(c) { CHARS_PER_TOKEN - 1 } else { 0 }
        })
        .sum()
}

pub fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
        hex.push(char::from_digit(u32::from(byte & 0xF), 16).unwrap_or('0'));
    }
    hex
}

/// A line seen as UTF-16 units: `byte_at[u]` is the byte offset of unit `u`, or
/// `None` when `u` is the second unit of a surrogate pair.
struct Utf16Line<'a> {
    line: &'a str,
    byte_at: Vec<Option<usize>>,
}

impl<'a> Utf16Line<'a> {
    fn new(line: &'a str) -> Self {
        let mut byte_at = Vec::with_capacity(line.len() + 1);
        for (i, c) in line.char_indices() {
            byte_at.push(Some(i));
            if c.len_utf16() == 2 {
                byte_at.push(None);
            }
        }
        byte_at.push(Some(line.len()));
        Self { line, byte_at }
    }
    fn len(&self) -> usize {
        self.byte_at.len() - 1
    }
    fn splits_pair(&self, unit: usize) -> bool {
        self.byte_at[unit].is_none()
    }
    fn slice(&self, from: usize, to: usize) -> &'a str {
        let (Some(a), Some(b)) = (self.byte_at[from], self.byte_at[to]) else {
            unreachable!("cuts never split a surrogate pair");
        };
        &self.line[a..b]
    }
}

/// Cut one line into segments of at most `max_chars` weighted chars (OpenClaw's two passes).
fn line_segments<'a>(line: &'a str, max_chars: usize, tokens: usize, out: &mut Vec<&'a str>) {
    if line.is_empty() {
        out.push("");
        return;
    }
    let units = Utf16Line::new(line);
    let len = units.len();
    let mut start = 0;
    while start < len {
        let mut end = (start + max_chars).min(len);
        if units.splits_pair(end) {
            end -= 1;
        }
        let coarse = units.slice(start, end);
        if estimate_chars(coarse) > max_chars {
            let step = tokens.max(1);
            let mut j = start;
            while j < end {
                let mut piece_end = (j + step).min(end);
                if units.splits_pair(piece_end) {
                    piece_end += 1;
                }
                out.push(units.slice(j, piece_end));
                j = piece_end;
            }
        } else {
            out.push(coarse);
        }
        start = end;
    }
}

/// Split Markdown `text` into chunks of about `tokens` tokens with `overlap` tokens carried over.
pub fn chunk_markdown(text: &str, tokens: usize, overlap: usize) -> Result<Vec<Chunk>> {
    if tokens == 0 {
        return invalid!("chunk_markdown: tokens must be >= 1, got 0");
    }
    if overlap >= tokens {
        return invalid!("chunk_markdown: overlap must be smaller than tokens, got overlap={overlap} tokens={tokens}");
    }
    let max_chars = (tokens * CHARS_PER_TOKEN).max(32);
    let overlap_chars = overlap * CHARS_PER_TOKEN;

    let mut chunks = Vec::new();
    // (segment, line number, cost) of the chunk being filled.
    let mut current: Vec<(&str, usize, usize)> = Vec::new();
    let mut current_chars = 0usize;
    let mut segments = Vec::new();

    for (index, line) in text.split('\n').enumerate() {
        segments.clear();
        line_segments(line, max_chars, tokens, &mut segments);
        for &segment in &segments {
            let cost = estimate_chars(segment) + 1;
            if current_chars + cost > max_chars && !current.is_empty() {
                push_chunk(&current, &mut chunks);
                // Keep whole trailing segments until the overlap budget is reached.
                let mut kept = 0;
                let mut acc = 0;
                if overlap_chars > 0 {
                    for &(_, _, c) in current.iter().rev() {
                        acc += c;
                        kept += 1;
                        if acc >= overlap_chars {
                            break;
                        }
                    }
                }
                current.drain(..current.len() - kept);
                current_chars = acc;
                // Departure from OpenClaw, which appends the next segment unconditionally and so
                // can emit chunks up to ~2x the budget after long lines: the carried overlap is
                // trimmed from the front until the next segment fits.
                let excess = current.iter().take_while(|&&(_, _, c)| {
                    let over = current_chars + cost > max_chars;
                    if over {
                        current_chars -= c;
                    }
                    over
                });
                let drop = excess.count();
                current.drain(..drop);
            }
            current.push((segment, index + 1, cost));
            current_chars += cost;
        }
    }
    push_chunk(&current, &mut chunks);
    Ok(chunks)
}

fn push_chunk(current: &[(&str, usize, usize)], chunks: &mut Vec<Chunk>) {
    let (Some(first), Some(last)) = (current.first(), current.last()) else {
        return;
    };
    let text = current.iter().map(|s| s.0).collect::<Vec<_>>().join("\n");
    if text.chars().all(char::is_whitespace) {
        return;
    }
    let hash = sha256_hex(&text);
    chunks.push(Chunk { start_line: first.1, end_line: last.1, text, hash });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_length_counts_cjk_four_times() {
        assert_eq!(estimate_chars("abc"), 3);
        assert_eq!(estimate_chars("视频"), 8);
        assert_eq!(estimate_chars("😀"), 2);
        assert_eq!(estimate_chars("\u{20000}"), 4);
    }

    #[test]
    fn small_doc_is_one_chunk() {
        let chunks = chunk_markdown("# T\n\nbody\n", 400, 80).unwrap();
        assert_eq!(chunks.len(), 1);
        assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 4));
        assert_eq!(chunks[0].hash, sha256_hex("# T\n\nbody\n"));
    }

    #[test]
    fn overlap_carries_whole_lines() {
        let text = (1..=20).map(|i| format!("line number {i:02}")).collect::<Vec<_>>().join("\n");
        // max_chars 40, each line costs 15 → two lines per chunk, one carried.
        let chunks = chunk_markdown(&text, 10, 3).unwrap();
        assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 2));
        assert_eq!((chunks[1].start_line, chunks[1].end_line), (2, 3));
        for c in &chunks {
            assert!(estimate_chars(&c.text) <= 40);
        }
    }

    #[test]
    fn carried_overlap_never_pushes_a_chunk_over_budget() {
        let text = ["x".repeat(1500), "y".repeat(1500), "z".repeat(1500)].join("\n");
        let chunks = chunk_markdown(&text, 400, 80).unwrap();
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().all(|c| estimate_chars(&c.text) <= 1600));
        let cjk = chunk_markdown(&"视频".repeat(300), 400, 80).unwrap();
        assert!(cjk.iter().all(|c| estimate_chars(&c.text) <= 1600));
    }

    #[test]
    fn cjk_line_is_recut_by_tokens() {
        let line = "视".repeat(100);
        let chunks = chunk_markdown(&line, 10, 0).unwrap();
        assert!(chunks.iter().all(|c| estimate_chars(&c.text) <= 40));
        assert_eq!(chunks.iter().map(|c| c.text.chars().count()).sum::<usize>(), 100);
    }

    #[test]
    fn whitespace_chunks_are_dropped_and_bad_args_rejected() {
        assert!(chunk_markdown("  \n\t\n", 10, 0).unwrap().is_empty());
        assert!(chunk_markdown("x", 0, 0).is_err());
        assert!(chunk_markdown("x", 5, 5).is_err());
    }
}
