//! OpenClaw's Markdown chunker (`chunkMarkdown`): line-greedy packing under a
//! weighted character budget, overlap carried as whole segments. It reproduces
//! OpenClaw's output except where OpenClaw overruns its own budget (see the
//! overlap trim below): here no chunk ever exceeds `max(32, tokens * 4)`.
//!
//! OpenClaw measures and slices in UTF-16 code units (JavaScript strings). We do the
//! same, with one unavoidable difference: a cut that would split a surrogate pair
//! (which JavaScript allows, producing broken text) moves before the astral char
//! for the coarse cut and after it for the fine cut (as OpenClaw's fine cut does).
//!
//! OpenClaw 2.x adds, for its profile ([`chunk_memory`]): per-entry chunking of the root `MEMORY.md` and `USER.md`
//! with each entry's importance, and annotation comments stripped from the indexed text. Its packer rules (overlap,
//! CJK weights) changed too; memsift keeps the ones above for every profile.

use std::borrow::Cow;

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

/// The packer's budget in weighted chars, `(max_chars, overlap_chars)`, once the arguments are checked.
pub(crate) fn budget(tokens: usize, overlap: usize) -> Result<(usize, usize)> {
    if tokens == 0 {
        return invalid!("chunk_markdown: tokens must be >= 1, got 0");
    }
    if overlap >= tokens {
        return invalid!("chunk_markdown: overlap must be smaller than tokens, got overlap={overlap} tokens={tokens}");
    }
    Ok(((tokens * CHARS_PER_TOKEN).max(32), overlap * CHARS_PER_TOKEN))
}

/// OpenClaw's greedy line packer, fed line by line: both chunkers share it, the per-entry one closing the chunk
/// being filled at each entry so that no overlap crosses from one entry into the next.
struct Packer<'a> {
    tokens: usize,
    max_chars: usize,
    overlap_chars: usize,
    /// (segment, line number, cost) of the chunk being filled.
    current: Vec<(&'a str, usize, usize)>,
    current_chars: usize,
    /// Scratch space for the segments of one line.
    segments: Vec<&'a str>,
    chunks: Vec<Chunk>,
}

impl<'a> Packer<'a> {
    fn new(tokens: usize, overlap: usize) -> Result<Self> {
        let (max_chars, overlap_chars) = budget(tokens, overlap)?;
        Ok(Self {
            tokens,
            max_chars,
            overlap_chars,
            current: Vec::new(),
            current_chars: 0,
            segments: Vec::new(),
            chunks: Vec::new(),
        })
    }

    fn line(&mut self, line_no: usize, line: &'a str) {
        let mut segments = std::mem::take(&mut self.segments);
        segments.clear();
        line_segments(line, self.max_chars, self.tokens, &mut segments);
        for &segment in &segments {
            self.segment(segment, line_no);
        }
        self.segments = segments;
    }

    fn segment(&mut self, segment: &'a str, line_no: usize) {
        let cost = estimate_chars(segment) + 1;
        if self.current_chars + cost > self.max_chars && !self.current.is_empty() {
            push_chunk(&self.current, &mut self.chunks);
            self.carry_overlap(cost);
        }
        self.current.push((segment, line_no, cost));
        self.current_chars += cost;
    }

    /// Keep whole trailing segments of the chunk just pushed until the overlap budget is reached.
    fn carry_overlap(&mut self, incoming: usize) {
        let mut kept = 0;
        let mut acc = 0;
        if self.overlap_chars > 0 {
            for &(_, _, c) in self.current.iter().rev() {
                acc += c;
                kept += 1;
                if acc >= self.overlap_chars {
                    break;
                }
            }
        }
        self.current.drain(..self.current.len() - kept);
        // Departure from OpenClaw, which appends the next segment unconditionally and so can emit chunks up to ~2x
        // the budget after long lines: the carried overlap is trimmed from the front until the next segment fits.
        let max_chars = self.max_chars;
        let mut chars = acc;
        let drop = self
            .current
            .iter()
            .take_while(|&&(_, _, c)| {
                let over = chars + incoming > max_chars;
                if over {
                    chars -= c;
                }
                over
            })
            .count();
        self.current.drain(..drop);
        self.current_chars = chars;
    }

    /// Push the chunk being filled, carrying nothing over (the end of the text or of an entry).
    fn close(&mut self) {
        push_chunk(&self.current, &mut self.chunks);
        self.current.clear();
        self.current_chars = 0;
    }
}

/// Split Markdown `text` into chunks of about `tokens` tokens with `overlap` tokens carried over.
pub fn chunk_markdown(text: &str, tokens: usize, overlap: usize) -> Result<Vec<Chunk>> {
    let mut packer = Packer::new(tokens, overlap)?;
    for (index, line) in text.split('\n').enumerate() {
        packer.line(index + 1, line);
    }
    packer.close();
    Ok(packer.chunks)
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

// ------------------------------------------------------------------ OpenClaw 2.x: annotations and entries

/// JavaScript's `\s`, which is also what `trimEnd` and `trim` strip: OpenClaw reads annotations with a JavaScript
/// regex, so a space is what that regex takes for one (U+FEFF yes, U+0085 no, unlike `char::is_whitespace`).
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// The annotation kinds of OpenClaw 2.x's curated memory (`<!-- importance: 7 -->` and the like).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AnnotationKind {
    Trigger,
    Importance,
    Project,
}

/// One annotation found: its byte span (from `<!--` to past `-->`), kind and trimmed value.
struct Annotation<'a> {
    start: usize,
    end: usize,
    kind: AnnotationKind,
    value: &'a str,
}

/// OpenClaw's marker `/<!--\s*(trigger|importance|project)\s*:/iu` tried at `at` (where `<!--` is): the kind and
/// the byte where the value starts.
fn marker_at(text: &str, at: usize) -> Option<(AnnotationKind, usize)> {
    const KINDS: [(&str, AnnotationKind); 3] = [
        ("trigger", AnnotationKind::Trigger),
        ("importance", AnnotationKind::Importance),
        ("project", AnnotationKind::Project),
    ];
    let rest = text[at + 4..].trim_start_matches(is_js_space);
    let (name, kind) = KINDS
        .into_iter()
        .find(|(name, _)| rest.get(..name.len()).is_some_and(|head| head.eq_ignore_ascii_case(name)))?;
    let value = rest[name.len()..].trim_start_matches(is_js_space).strip_prefix(':')?;
    Some((kind, text.len() - value.len()))
}

/// OpenClaw's `scanMemoryAnnotations`: each marker's value runs to the next `-->` (none: the scan stops there).
/// `line_scoped` (stripping) skips an annotation whose `-->` comes after a line break, and goes on looking right
/// after its marker, as the JavaScript regex does.
fn annotations(text: &str, line_scoped: bool) -> Vec<Annotation<'_>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find("<!--") {
        let start = from + offset;
        let Some((kind, value_start)) = marker_at(text, start) else {
            from = start + 1;
            continue;
        };
        let Some(closing) = text[value_start..].find("-->").map(|i| value_start + i) else { break };
        if line_scoped && text[value_start..closing].contains(['\r', '\n']) {
            from = value_start;
            continue;
        }
        let value = text[value_start..closing].trim_matches(is_js_space);
        found.push(Annotation { start, end: closing + 3, kind, value });
        from = closing + 3;
    }
    found
}

/// `text` without OpenClaw 2.x's annotations (`importance`, `trigger`, `project` comments), as 2.x indexes every
/// memory file (`stripMemoryAnnotationCarriers`): the annotations are for ranking, and words such as "importance"
/// would otherwise match queries. Only an annotation closed on its own line goes; then, if any went, every run of
/// spaces and tabs before a line break or the end is dropped. Lines are never removed, so line numbers hold.
pub fn strip_annotations(text: &str) -> Cow<'_, str> {
    let found = annotations(text, true);
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut joined = String::with_capacity(text.len());
    let mut cursor = 0;
    for annotation in &found {
        joined.push_str(&text[cursor..annotation.start]);
        cursor = annotation.end;
    }
    joined.push_str(&text[cursor..]);
    Cow::Owned(without_trailing_blanks(&joined))
}

/// `text` with each run of spaces and tabs that ends a line (or the text) removed.
fn without_trailing_blanks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run: Option<usize> = None;
    for (at, c) in text.char_indices() {
        if c == ' ' || c == '\t' {
            run.get_or_insert(at);
            continue;
        }
        if let Some(start) = run.take() {
            if !matches!(c, '\r' | '\n' | '\u{2028}' | '\u{2029}') {
                out.push_str(&text[start..at]);
            }
        }
        out.push(c);
    }
    out
}

/// The importance of a span of raw lines, as OpenClaw 2.x's `extractCuratedEntryRecallMetadata` reads it: on each
/// line that ends with an annotation (`-->` last, trailing spaces aside), every `importance` whose value is all
/// digits and in 1..=10; the highest wins. `None` without one: neutral in ranking.
pub fn importance_of<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<u8> {
    lines
        .into_iter()
        .filter(|line| line.trim_end_matches(is_js_space).ends_with("-->"))
        .flat_map(|line| annotations(line, false))
        .filter(|annotation| annotation.kind == AnnotationKind::Importance)
        .filter_map(|annotation| importance_value(annotation.value))
        .max()
}

/// `1..=10` written in ASCII digits (leading zeros allowed, as `parseInt` reads them); anything else is ignored.
fn importance_value(value: &str) -> Option<u8> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = value.trim_start_matches('0');
    let number = if digits.len() > 2 { None } else { digits.parse::<u8>().ok() };
    number.filter(|n| (1..=10).contains(n))
}

/// A chunk of a memory file, with the importance of its entry (`None`: none given, or not a per-entry file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryChunk {
    pub chunk: Chunk,
    pub importance: Option<u8>,
}

/// Where a curated entry starts (OpenClaw 2.x's `curatedMarkdownEntryKind`): `Some(true)` at a list item (`- ` at
/// column 0), `Some(false)` at a heading (`#` to `######`, then a space or the end).
fn entry_start(line: &str) -> Option<bool> {
    if line.starts_with("- ") {
        return Some(true);
    }
    let hashes = line.len() - line.trim_start_matches('#').len();
    let heading = (1..=6).contains(&hashes) && line[hashes..].chars().next().is_none_or(is_js_space);
    heading.then_some(false)
}

/// The entry being chunked: its first line, and whether it is a list item (its importance is the whole item's) or
/// a section (each chunk's importance is its own lines').
#[derive(Clone, Copy)]
struct Entry {
    start: usize,
    item: bool,
}

/// Close `entry` (which ends at line `end`) and move its chunks to `out` with their importance, read on `raw`.
fn finish_entry(packer: &mut Packer<'_>, entry: Entry, end: usize, raw: &[&str], out: &mut Vec<MemoryChunk>) {
    let lines = |from: usize, to: usize| raw[from - 1..to.min(raw.len())].iter().copied();
    packer.close();
    let whole = entry.item.then(|| importance_of(lines(entry.start, end)));
    for chunk in packer.chunks.drain(..) {
        let importance = whole.unwrap_or_else(|| importance_of(lines(chunk.start_line, chunk.end_line)));
        out.push(MemoryChunk { chunk, importance });
    }
}

/// OpenClaw 2.x's chunking of a root `MEMORY.md` / `USER.md` (`chunkMarkdown` with `perEntry`): each entry (a list
/// item, or a heading with what follows, or the text before either) is packed on its own, so a search hit is one
/// remembered fact with its own importance rather than a window over several. Importance is read on the raw
/// lines, `body` (the text chunked, annotations stripped or not) has the same lines.
fn chunk_entries(raw: &str, body: &str, tokens: usize, overlap: usize) -> Result<Vec<MemoryChunk>> {
    let raw: Vec<&str> = raw.split('\n').collect();
    let mut packer = Packer::new(tokens, overlap)?;
    let mut out = Vec::new();
    let mut entry = Entry { start: 1, item: false };
    for (index, line) in body.split('\n').enumerate() {
        let line_no = index + 1;
        if let Some(item) = entry_start(line).or((index == 0).then_some(false)) {
            if index > 0 {
                finish_entry(&mut packer, entry, line_no - 1, &raw, &mut out);
            }
            entry = Entry { start: line_no, item };
        }
        packer.line(line_no, line);
    }
    finish_entry(&mut packer, entry, raw.len(), &raw, &mut out);
    Ok(out)
}

/// Chunk a memory file as OpenClaw 2.x's indexing does: `per_entry` (root `MEMORY.md` and `USER.md`) packs each
/// entry on its own and reads its importance; `annotations` strips the annotations from the chunks' text (2.x does
/// so in every memory file). Without either, the chunks of [`chunk_markdown`] with no importance.
pub fn chunk_memory(
    text: &str,
    tokens: usize,
    overlap: usize,
    per_entry: bool,
    annotations: bool,
) -> Result<Vec<MemoryChunk>> {
    let body = if annotations { strip_annotations(text) } else { Cow::Borrowed(text) };
    if per_entry {
        return chunk_entries(text, &body, tokens, overlap);
    }
    let chunks = chunk_markdown(&body, tokens, overlap)?;
    Ok(chunks.into_iter().map(|chunk| MemoryChunk { chunk, importance: None }).collect())
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

    /// `(start, end, text, importance)` of each chunk, for comparing with OpenClaw's tables.
    fn spans(chunks: &[MemoryChunk]) -> Vec<(usize, usize, &str, Option<u8>)> {
        chunks.iter().map(|c| (c.chunk.start_line, c.chunk.end_line, c.chunk.text.as_str(), c.importance)).collect()
    }

    #[test]
    fn annotations_closed_on_their_line_are_stripped_and_lines_kept() {
        // The test vector of OpenClaw 2026.9.6's curated-annotations (research notes §2.5).
        let text =
            "- Keep it. <!-- trigger: a, b; c --> <!-- importance: 9 -->   \n- x <!-- importance: 11 -->\n- y <!-- \
                    importance:\n 5 -->\n- z <!-- note: keep --> <!-- project: github.com/Foo/bar -->";
        let want = "- Keep it.\n- x\n- y <!-- importance:\n 5 -->\n- z <!-- note: keep -->";
        assert_eq!(strip_annotations(text), want);
        // Markers are case-insensitive and spaced; nothing stripped leaves trailing blanks (and the text) alone.
        assert_eq!(strip_annotations("a <!--IMPORTANCE :7-->\t\r\nb"), "a\r\nb");
        assert!(matches!(strip_annotations("a  \n<!-- note: x -->"), Cow::Borrowed("a  \n<!-- note: x -->")));
        // An unclosed marker stops the scan; one closed on a later line is skipped, and the scan goes on after it.
        assert_eq!(strip_annotations("a <!-- trigger: x"), "a <!-- trigger: x");
        assert_eq!(strip_annotations("<!-- project: a\n<!-- project: b --> c"), "<!-- project: a\n c");
    }

    #[test]
    fn importance_is_the_highest_valid_one_on_lines_ending_with_an_annotation() {
        // OpenClaw's extractCuratedEntryRecallMetadata vectors (research notes §2.5).
        let lines = ["- Keep it. <!-- trigger: a, b; c --> <!-- importance: 9 -->", "  more <!-- importance: 4 -->"];
        assert_eq!(importance_of(lines), Some(9));
        assert_eq!(importance_of(["- x <!-- importance: 9 --> trailing text"]), None);
        assert_eq!(importance_of(["- x <!-- importance: 0 --> <!-- importance: 12 -->"]), None);
        assert_eq!(
            importance_of(["- x <!-- IMPORTANCE : 7 --> <!-- project: GitHub.com/Foo/Bar; path:/x -->"]),
            Some(7)
        );
        assert_eq!(importance_of(["<!-- importance: 010 -->\r", "<!-- importance: -3 -->", "x"]), Some(10));
        assert_eq!(importance_of(["<!-- importance: 99999999999999999999 -->", "<!-- importance: 2 5 -->"]), None);
        assert_eq!(importance_of(Vec::<&str>::new()), None);
    }

    #[test]
    fn curated_files_chunk_per_entry_with_the_entry_importance() {
        // OpenClaw 2026.9.6's chunk table for the research workspace (notes §2.3): MEMORY.md, then USER.md.
        let memory = "# Long-term memory\n\n- Keep the gateway on loopback. <!-- trigger: gateway setup, network \
                      safety --> <!-- importance: 9 -->\n- The router VLAN for lab hosts is 42.\n- Deploy target is \
                      hetzner-fsn1. <!-- importance: 3 -->\n\n## Decisions\n\nWe decided to use PostgreSQL for the \
                      billing service.\nIt replaced the old MySQL cluster.\n\n- Prefer TypeScript for new tooling.\n";
        let chunks = chunk_memory(memory, 400, 80, true, true).unwrap();
        let decisions = "## Decisions\n\nWe decided to use PostgreSQL for the billing service.\nIt replaced the old \
                         MySQL cluster.\n";
        assert_eq!(
            spans(&chunks),
            [
                (1, 2, "# Long-term memory\n", None),
                (3, 3, "- Keep the gateway on loopback.", Some(9)),
                (4, 4, "- The router VLAN for lab hosts is 42.", None),
                (5, 6, "- Deploy target is hetzner-fsn1.\n", Some(3)),
                (7, 11, decisions, None),
                (12, 13, "- Prefer TypeScript for new tooling.\n", None),
            ]
        );
        assert_eq!(chunks[1].chunk.hash, sha256_hex("- Keep the gateway on loopback."));
        let user = "<!-- observed: 2026-07-27 | status: active -->\n\n- Prefer concise progress updates during \
                    implementation work.\n\n<!-- observed: 2026-05-10 | status: superseded -->\n\n- Prefer detailed \
                    explanations for every code change.\n";
        let concise = "- Prefer concise progress updates during implementation work.\n\n\
                       <!-- observed: 2026-05-10 | status: superseded -->\n";
        assert_eq!(
            spans(&chunk_memory(user, 400, 80, true, true).unwrap()),
            [
                (1, 2, "<!-- observed: 2026-07-27 | status: active -->\n", None),
                (3, 6, concise, None),
                (7, 8, "- Prefer detailed explanations for every code change.\n", None),
            ]
        );
    }

    #[test]
    fn a_long_entry_is_packed_alone_and_every_chunk_has_its_importance() {
        // OpenClaw's perEntry vector (notes §2.3), with an importance on the long entry's last line. OpenClaw 2.x
        // starts the second chunk of the long entry at line 19: its new overlap rule drops the line that crosses
        // the 320-char window, where memsift's packer (1.x's rule, kept for every profile) keeps it: line 18.
        let body =
            (1..=25).map(|i| format!("  Line {i:02}: {}", ["lorem ipsum dolor sit amet consectetur"; 2].join(" ")));
        let mut lines = vec!["# Title".to_owned(), String::new(), "- short entry".into(), "- long entry start".into()];
        lines.extend(body);
        lines[28].push_str(" <!-- importance: 8 -->");
        lines.extend(
            ["", "## Section", "para", "* star item", "  - indented dash", "-no space", "- last"].map(String::from),
        );
        let chunks = chunk_memory(&lines.join("\n"), 400, 80, true, false).unwrap();
        let got: Vec<_> = chunks.iter().map(|c| (c.chunk.start_line, c.chunk.end_line, c.importance)).collect();
        let eight = Some(8);
        assert_eq!(got, [(1, 2, None), (3, 3, None), (4, 21, eight), (18, 30, eight), (31, 35, None), (36, 36, None)]);
        assert_eq!(chunks[2].chunk.text.len(), 1531);
        assert!(chunks[3].chunk.text.ends_with("<!-- importance: 8 -->\n"), "annotations=false keeps them");
    }

    #[test]
    fn sections_read_their_own_lines_and_plain_files_only_strip() {
        // A section's chunks each read their own span; a list item's whole span counts, even its trailing lines.
        let text =
            "intro <!-- importance: 2 -->\n- item\n  detail <!-- importance: 7 -->\n# Head\nx <!-- importance: 5 -->";
        let chunks = chunk_memory(text, 400, 80, true, true).unwrap();
        assert_eq!(
            spans(&chunks),
            [(1, 1, "intro", Some(2)), (2, 3, "- item\n  detail", Some(7)), (4, 5, "# Head\nx", Some(5))]
        );
        // Not per entry: chunk_markdown's chunks of the stripped text, no importance.
        let plain = chunk_memory(text, 400, 80, false, true).unwrap();
        assert_eq!(spans(&plain), [(1, 5, "intro\n- item\n  detail\n# Head\nx", None)]);
        let raw = chunk_memory(text, 400, 80, false, false).unwrap();
        assert_eq!(raw.iter().map(|c| c.chunk.clone()).collect::<Vec<_>>(), chunk_markdown(text, 400, 80).unwrap());
        // A first line that is a list item starts an item; headings need a space or nothing after 1-6 '#'.
        assert_eq!(entry_start("- a"), Some(true));
        assert_eq!(
            (entry_start("###"), entry_start("#\tx"), entry_start("####### x"), entry_start("#x")),
            (Some(false), Some(false), None, None)
        );
        assert_eq!((entry_start("-x"), entry_start("* x"), entry_start("  - x")), (None, None, None));
        assert!(chunk_memory("  \n\n\t<!-- importance: 3 -->\n", 400, 80, true, true).unwrap().is_empty());
        assert!(chunk_memory("x", 5, 5, true, false).is_err());
    }

    #[test]
    fn whitespace_chunks_are_dropped_and_bad_args_rejected() {
        assert!(chunk_markdown("  \n\t\n", 10, 0).unwrap().is_empty());
        assert!(chunk_markdown("x", 0, 0).is_err());
        assert!(chunk_markdown("x", 5, 5).is_err());
    }
}
