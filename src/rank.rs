//! Ranking primitives, matching OpenClaw's `hybrid.ts`, `mmr.ts` and
//! `temporal-decay.ts` (spec §3–§5), plus RRF and an embedding-based MMR.
//! All arithmetic is f64 so results equal a straightforward reference.

use std::sync::LazyLock;

use regex::Regex;
use rustc_hash::{FxHashMap, FxHashSet};
use unicode_normalization::UnicodeNormalization;

use crate::analyzer::{Analyzer, TokenBuf};
use crate::error::{invalid, Result};

/// OpenClaw's `bm25RankToScore` expressed for a positive BM25 score `s`
/// (FTS5's rank is `-s`): `s / (1 + s)`; non-finite → 0.001; `s <= 0` → 0.
pub fn bm25_score_to_unit(score: f64) -> f64 {
    if !score.is_finite() {
        1.0 / 1000.0
    } else if score <= 0.0 {
        0.0
    } else {
        score / (1.0 + score)
    }
}

/// Higher scores first, as a total order in which -0.0 equals 0.0 (as in Python and JavaScript sorts, which
/// then keep the input order), where `total_cmp` alone would put -0.0 after 0.0.
fn descending(a: f64, b: f64) -> std::cmp::Ordering {
    (b + 0.0).total_cmp(&(a + 0.0))
}

/// Clamp both weights to [0, 1] and normalize them to sum 1 (both 0 → 0.7 / 0.3).
pub fn normalize_weights(vector_weight: f64, text_weight: f64) -> Result<(f64, f64)> {
    if !vector_weight.is_finite() || !text_weight.is_finite() {
        return invalid!("weights must be finite, got vector_weight={vector_weight} text_weight={text_weight}");
    }
    let (v, t) = (vector_weight.clamp(0.0, 1.0), text_weight.clamp(0.0, 1.0));
    let sum = v + t;
    Ok(if sum == 0.0 { (0.7, 0.3) } else { (v / sum, t / sum) })
}

/// Sorted, de-duplicated token ids of a text (for fast Jaccard by merge).
fn token_set(analyzer: Analyzer, text: &str, vocab: &mut FxHashMap<String, u32>) -> Vec<u32> {
    let mut buf = TokenBuf::default();
    analyzer.analyze_into(text, &mut buf);
    let mut ids: Vec<u32> = buf
        .iter()
        .map(|t| {
            let next = vocab.len() as u32;
            *vocab.entry(t.to_owned()).or_insert(next)
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn jaccard_sorted(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut inter) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += 1;
                i += 1;
                j += 1;
            }
        }
    }
    inter as f64 / (a.len() + b.len() - inter) as f64
}

/// Jaccard similarity of the analyzer token sets of two texts (both empty → 1).
pub fn jaccard(analyzer: Analyzer, a: &str, b: &str) -> f64 {
    let mut vocab = FxHashMap::default();
    jaccard_sorted(&token_set(analyzer, a, &mut vocab), &token_set(analyzer, b, &mut vocab))
}

/// Greedy MMR over `scores` with a pairwise similarity; returns indices in pick order.
/// Mirrors OpenClaw's `mmrRerank`: min–max relevance, ties by higher original score.
/// The running max similarity starts at 0 as in OpenClaw, so negative similarity earns nothing.
#[allow(clippy::float_cmp)] // exact comparisons on purpose: they decide ties as OpenClaw does
fn mmr_by(scores: &[f64], lambda: f64, sim: impl Fn(usize, usize) -> f64) -> Result<Vec<usize>> {
    let n = scores.len();
    if !lambda.is_finite() {
        return invalid!("lambda must be finite, got {lambda}");
    }
    if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
        return invalid!("scores[{i}] is not finite");
    }
    if n <= 1 {
        return Ok((0..n).collect());
    }
    let lambda = lambda.clamp(0.0, 1.0);
    if lambda == 1.0 {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| descending(scores[a], scores[b]));
        return Ok(order);
    }
    let (min, max) = scores.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    let range = max - min;
    let relevance = |s: f64| if range == 0.0 { 1.0 } else { (s - min) / range };
    let mut remaining: Vec<usize> = (0..n).collect();
    let mut selected: Vec<usize> = Vec::with_capacity(n);
    // max similarity of each item to the selected set, updated incrementally.
    let mut max_sim = vec![0f64; n];
    while !remaining.is_empty() {
        let mut best: Option<(usize, f64)> = None; // (position in remaining, mmr)
        for (pos, &c) in remaining.iter().enumerate() {
            let sim = if selected.is_empty() { 0.0 } else { max_sim[c] };
            let m = lambda * relevance(scores[c]) - (1.0 - lambda) * sim;
            let better = match best {
                None => true,
                Some((bp, bm)) => m > bm || (m == bm && scores[c] > scores[remaining[bp]]),
            };
            if better {
                best = Some((pos, m));
            }
        }
        let (pos, _) = best.expect("remaining is not empty");
        let pick = remaining.remove(pos);
        selected.push(pick);
        for &c in &remaining {
            let s = sim(c, pick);
            if s > max_sim[c] {
                max_sim[c] = s;
            }
        }
    }
    Ok(selected)
}

/// MMR with Jaccard similarity of analyzer token sets (OpenClaw §4).
pub fn mmr(analyzer: Analyzer, scores: &[f64], texts: &[&str], lambda: f64) -> Result<Vec<usize>> {
    if scores.len() != texts.len() {
        return invalid!("scores has {} items but texts has {}", scores.len(), texts.len());
    }
    let mut vocab = FxHashMap::default();
    let sets: Vec<Vec<u32>> = texts.iter().map(|t| token_set(analyzer, t, &mut vocab)).collect();
    mmr_by(scores, lambda, |a, b| jaccard_sorted(&sets[a], &sets[b]))
}

/// `exp(-ln2 / half_life * max(0, age))`; a non-positive or non-finite half-life means no decay.
pub fn decay_multiplier(age_days: f64, half_life_days: f64) -> f64 {
    if !half_life_days.is_finite() || half_life_days <= 0.0 {
        return 1.0;
    }
    let age = age_days.max(0.0);
    // age 0 is exactly 1 even when a tiny half-life makes ln2 / half_life overflow.
    if !age.is_finite() || age == 0.0 {
        return 1.0;
    }
    (-(std::f64::consts::LN_2 / half_life_days) * age).exp()
}

fn normalize_path(path: &str) -> String {
    let p = path.replace('\\', "/");
    p.strip_prefix("./").map(str::to_owned).unwrap_or(p)
}

/// `(year, month, day)` of `memory/[dirs/]YYYY-MM-DD[-suffix].md`, if the date is a real one.
pub fn memory_date_from_path(path: &str) -> Option<(i32, u32, u32)> {
    let p = normalize_path(path);
    let (dir, name) = p.rsplit_once('/')?;
    // The file must sit below a `memory` folder, through non-empty folder names only.
    let below_memory = dir.rsplit('/').take_while(|c| !c.is_empty()).any(|c| c == "memory");
    if !below_memory {
        return None;
    }
    let stem = name.strip_suffix(".md")?;
    let b = stem.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    if b.len() > 10 && (b[10] != b'-' || b.len() == 11) {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        if b[r.clone()].iter().all(u8::is_ascii_digit) {
            stem[r].parse().ok()
        } else {
            None
        }
    };
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (year >= 1 && (1..=days_in_month).contains(&day)).then_some((year as i32, month, day))
}

/// `MEMORY.md`, `memory.md`, `USER.md` (OpenClaw 2.x's user model, curated like `MEMORY.md`) and undated files
/// under `memory/` never decay.
pub fn is_evergreen_path(path: &str) -> bool {
    let p = normalize_path(path);
    matches!(p.as_str(), "MEMORY.md" | "memory.md" | "USER.md")
        || (p.starts_with("memory/") && memory_date_from_path(&p).is_none())
}

/// OpenClaw 2.x's importance multiplier (`importance.ts`): `0.75 + 0.05 · clamp(floor(importance), 1, 10)`, from
/// 0.8 (importance 1) through 1 (5) to 1.25 (10), so a curated fact marked important outranks an equal match.
/// `None` (or a non-finite value) is neutral: 1.
pub fn importance_multiplier(importance: Option<f64>) -> f64 {
    match importance {
        Some(value) if value.is_finite() => 0.75 + 0.05 * value.floor().clamp(1.0, 10.0),
        _ => 1.0,
    }
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
pub fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// One result's decay input.
pub struct DecayItem<'a> {
    pub score: f64,
    pub path: &'a str,
    pub source: &'a str,
    /// File modification time, epoch seconds.
    pub mtime: Option<f64>,
}

/// OpenClaw's temporal decay: dated memory paths decay from their date, evergreen
/// memory files never decay, anything else decays from its mtime (if known).
pub fn apply_temporal_decay(items: &[DecayItem<'_>], now: f64, half_life_days: f64) -> Vec<f64> {
    items.iter().map(|item| item.score * decay_factor(item, now, half_life_days).0).collect()
}

/// The decay multiplier of one item and where its date came from: `path` (a dated memory path), `evergreen`
/// (never decays), `mtime` (the file's modification time) or `none` (no date known: no decay).
fn decay_factor(item: &DecayItem<'_>, now: f64, half_life_days: f64) -> (f64, &'static str) {
    let (timestamp, source) = if let Some((y, m, d)) = memory_date_from_path(item.path) {
        (Some(days_from_civil(y, m, d) as f64 * 86_400.0), "path")
    } else if item.source == "memory" && is_evergreen_path(item.path) {
        (None, "evergreen")
    } else {
        let mtime = item.mtime.filter(|t| t.is_finite());
        (mtime, if mtime.is_some() { "mtime" } else { "none" })
    };
    match timestamp {
        Some(ts) => (decay_multiplier((now - ts).max(0.0) / 86_400.0, half_life_days), source),
        None => (1.0, source),
    }
}

/// How a query is scored: both legs, the embedding leg alone, or keywords alone (no provider).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Hybrid,
    VectorOnly,
    FtsOnly,
}

impl Mode {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "hybrid" => Ok(Self::Hybrid),
            "vector-only" => Ok(Self::VectorOnly),
            "fts-only" => Ok(Self::FtsOnly),
            other => invalid!("mode must be 'hybrid', 'vector-only' or 'fts-only', got {other:?}"),
        }
    }
}

/// One chunk found by some leg, with what the ranking stages read of it.
pub struct Candidate<'a> {
    /// The chunk id (the last tie-break of the order).
    pub id: u64,
    /// Cosine similarity from the vector leg (0 when it did not find the chunk).
    pub vector: f64,
    /// Raw BM25 score from the keyword leg (0 when it did not find the chunk).
    pub keyword: f64,
    /// Partial path match, already in [0, 1) (0: none).
    pub path_score: f64,
    /// Exact path tier: 3 full path, 2 basename, 1 stem, 0 none.
    pub tier: u8,
    pub path: &'a str,
    pub source: &'a str,
    /// File modification time, epoch seconds (decay falls back to it).
    pub mtime: Option<f64>,
    /// The chunk's length in characters (FTS-only mode boosts longer chunks a little).
    pub chars: usize,
    /// The chunk's text: read by MMR and by [`RankParams::lexical`] scoring (may be empty when both are off).
    pub text: &'a str,
    /// The query's time factor for this chunk (1: no time words, or the chunk lies in the window they name; less:
    /// outside it), multiplying the merged score before temporal decay.
    pub when: f64,
    /// The chunk's importance (OpenClaw 2.x annotations), `None` when it has none: see [`importance_multiplier`].
    pub importance: Option<f64>,
}

/// The settings of one query's ranking.
pub struct RankParams<'a> {
    pub mode: Mode,
    pub vector_weight: f64,
    pub text_weight: f64,
    /// The best raw BM25 score of the keyword leg (hybrid mode scales by it), 0 when it found nothing.
    pub keyword_best: f64,
    /// The query text (FTS-only mode boosts chunks whose path holds its keywords).
    pub query: &'a str,
    /// `(now, half_life_days)` when temporal decay is on.
    pub decay: Option<(f64, f64)>,
    /// `(lambda, pool_size)` when MMR is on (hybrid mode only).
    pub mmr: Option<(f64, usize)>,
    pub min_score: f64,
    pub limit: usize,
    /// Also report how every candidate was scored ([`Ranked::explained`]).
    pub explain: bool,
    /// OpenClaw 2.x's keyword scoring ([`LexicalQuery`]): the keyword leg's score is `r / (1 + r)` boosted by
    /// the query's overlap with the chunk (hybrid and FTS-only alike), and partial keyword matches give way to
    /// better ones as OpenClaw's keyword query leaves them out (all terms first, then exact terms before stems).
    /// Off: memsift's 1.x scoring, unchanged.
    pub lexical: bool,
}

/// How one candidate was scored, stage by stage (`search(explain=True)`).
#[derive(Debug, PartialEq)]
pub struct Explained {
    /// The keyword leg's score as merged: BM25 over the query's best match (hybrid) or `r / (1 + r)` (FTS-only);
    /// with [`RankParams::lexical`], the boosted [`LexicalQuery::score`] in both modes (0: no keyword hit).
    pub keyword: f64,
    /// The score after the merge, before decay.
    pub merged: f64,
    /// The temporal decay multiplier (1 without decay) and where the date came from (`off` without decay).
    pub decay: f64,
    pub date_source: &'static str,
    /// The importance multiplier applied after decay (1: no importance, or an exact path hit).
    pub importance: f64,
    /// Position in the order before MMR and in the final order (0-based), `None` where the candidate was cut.
    pub before_mmr: usize,
    pub position: Option<usize>,
    /// The score reported (exact path hits: 1), before the cap at 1.
    pub score: f64,
    /// Why it is not among the results: `minScore` (below the floor), `limit` (past `maxResults`) or
    /// `partialMatch` (with [`RankParams::lexical`]: a partial keyword match that gave way to better ones, as
    /// OpenClaw's keyword query leaves it out: see [`LexicalQuery`]).
    pub cut: Option<&'static str>,
}

/// What the ranking kept: candidate indices best first, with the scores reported for them (capped at 1).
#[derive(Debug, PartialEq)]
pub struct Ranked {
    pub order: Vec<usize>,
    pub scores: Vec<f64>,
    /// Nothing reached `min_score`, and the relaxed pass found keyword or path hits that did.
    pub relaxed: bool,
    /// With [`RankParams::explain`], one entry per candidate, in candidate order; else empty.
    pub explained: Vec<Explained>,
}

/// English function words left out of the FTS-only path boost, so a question's wording does not dilute it.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "had", "has", "have", "how",
    "i", "in", "is", "it", "its", "me", "my", "of", "on", "or", "our", "so", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "why",
    "will", "with", "you", "your",
];

/// Snippet bound: OpenClaw compares at most this many UTF-16 units of a chunk for MMR.
const MMR_TEXT_UNITS: usize = 700;

/// The longest prefix of `text` of at most `units` UTF-16 units (never splitting a character).
fn utf16_prefix(text: &str, units: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += c.len_utf16();
        if used > units {
            return &text[..at];
        }
    }
    text
}

/// OpenClaw 2.x's query token: a run of letters, digits and `_` (`FTS_QUERY_TOKEN_RE`, `/[\p{L}\p{N}_]+/gu`).
static LEXICAL_TOKEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[\p{L}\p{N}_]+").expect("a valid token pattern"));

/// OpenClaw 2.x's keyword tokens of a text (`normalizeSearchTokens`): the `[\p{L}\p{N}_]+` runs of its NFC form,
/// each lower-cased. Unlike memsift's analyzer: no stemming, no diacritic folding, `_` joins words, and a CJK run
/// is one token.
pub fn lexical_tokens(text: &str) -> Vec<String> {
    LexicalTokens::of(text).iter().map(str::to_owned).collect()
}

/// [`lexical_tokens`] in one arena string: a chunk's couple of hundred tokens without an allocation each.
#[derive(Default)]
struct LexicalTokens {
    arena: String,
    ends: Vec<usize>,
}

impl LexicalTokens {
    fn of(text: &str) -> Self {
        let mut out = Self { arena: String::with_capacity(text.len()), ends: Vec::new() };
        if text.is_ascii() {
            // On ASCII the pattern is `[A-Za-z0-9_]+`, found by a plain scan: 200 chunks of 1,600 characters rank in
            // 1.9 ms with it, 5.2 ms with the Unicode regex (0.07 ms without lexical scoring).
            for token in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|t| !t.is_empty()) {
                out.push(token);
            }
        } else {
            let nfc: String = text.nfc().collect();
            for token in LEXICAL_TOKEN.find_iter(&nfc) {
                out.push(token.as_str());
            }
        }
        out
    }

    fn push(&mut self, token: &str) {
        let start = self.arena.len();
        if token.is_ascii() {
            self.arena.push_str(token);
            self.arena[start..].make_ascii_lowercase();
        } else {
            self.arena.push_str(&token.to_lowercase()); // whole-token lower-casing, as JavaScript's (final sigma)
        }
        self.ends.push(self.arena.len());
    }

    fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(start, &end)| &self.arena[start..end])
    }
}

/// The stop words of OpenClaw's `extractKeywords` (`query-expansion.ts`: `STOP_WORDS_EN`, `_ES`, `_PT` and `_AR`,
/// separated by spaces; a word two lists share is in the first only, and the Arabic two-word "من فضلك" is left out,
/// as no single segment can equal it). Its Chinese, Korean and Japanese lists only apply inside CJK text, which
/// [`all_terms_only`] settles without them.
const KEYWORD_STOP_WORDS: [&str; 4] = [
    "a an the this that these those i me my we our you your he she it they them is are was were be been being \
     have has had do does did will would could should can may might in on at to for of with by from about into \
     through during before after above below between under over and or but if then because as while when where \
     what which who how why yesterday today tomorrow earlier later recently ago just now thing things stuff \
     something anything everything nothing please help find show get tell give",
    "el la los las un una unos unas este esta ese esa yo mi nosotros nosotras tu tus usted ustedes ellos ellas de \
     del en con por para sobre entre y o pero si porque como es son fue fueron ser estar haber tener hacer ayer \
     hoy mañana antes despues después ahora recientemente que qué cómo cuando cuándo donde dónde porqué favor \
     ayuda",
    "os um uma uns umas esse essa eu meu minha nos nós você vocês ele ela eles elas da em com e ou mas se é \
     são foi foram ter fazer ontem hoje amanhã depois agora recentemente quê quando onde porquê ajuda",
    "ال و أو لكن ثم بل أنا نحن هو هي هم هذا هذه ذلك تلك هنا هناك من إلى الى في على عن مع بين ل ب ك كان كانت يكون \
     تكون صار أصبح يمكن ممكن بالأمس امس اليوم غدا الآن قبل بعد مؤخرا لماذا كيف ماذا متى أين هل فضلا ساعد",
];

/// At most this many keywords are searched one by one (`KEYWORD_FALLBACK_SEARCH_TERM_LIMIT`).
const KEYWORD_FALLBACK_TERMS: usize = 6;

/// The keywords OpenClaw 2.x searches one by one when its all-terms query falls short
/// (`resolveKeywordFallbackTerms`): `extractKeywords` of the query (lower-cased; split at white space and
/// punctuation; stop words, Latin words under 3 letters, numbers and repeats dropped), less the whole query, at
/// most 6. `None` where the query holds kana, Han or Hangul, whose keywords (characters, bigrams, particle-stripped
/// stems) memsift does not model: there no keyword hit is left out.
pub fn fallback_terms(query: &str) -> Option<Vec<String>> {
    static SEGMENT_SPLIT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[\s\p{P}]+").expect("a valid split pattern"));
    static SYMBOLS_ONLY: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[\p{P}\p{S}]+$").expect("a valid symbols pattern"));
    let cjk = |c: char| matches!(c, '\u{3040}'..='\u{30FF}' | '\u{4E00}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}' | '\u{3131}'..='\u{3163}');
    let normalized = query.trim().to_lowercase();
    let mut terms: Vec<String> = Vec::new();
    for segment in SEGMENT_SPLIT.split(&normalized).filter(|s| !s.is_empty()) {
        if segment.chars().any(cjk) {
            return None;
        }
        let stop_word = KEYWORD_STOP_WORDS.iter().any(|list| list.split(' ').any(|word| word == segment));
        let short_latin = segment.len() < 3 && segment.bytes().all(|b| b.is_ascii_alphabetic());
        let number = segment.bytes().all(|b| b.is_ascii_digit());
        if stop_word || short_latin || number || SYMBOLS_ONLY.is_match(segment) {
            continue;
        }
        if !terms.iter().any(|term| term == segment) {
            terms.push(segment.to_owned());
        }
    }
    terms.retain(|term| *term != normalized);
    terms.truncate(KEYWORD_FALLBACK_TERMS);
    Some(terms)
}

/// Whether OpenClaw 2.x answers `query` from its all-terms FTS query alone whenever that finds something, i.e.
/// runs no per-keyword fallback (`searchKeywordWithFallback`): its [`fallback_terms`] are none (a lone word, a
/// date) or exactly the query's own tokens. A query that loses a stop word, a short or numeric token or a repeat on
/// the way to its keywords, or whose `_` splits a token, or that holds CJK, gets partial matches back.
pub fn all_terms_only(query: &str) -> bool {
    fallback_terms(query)
        .is_some_and(|terms| terms.is_empty() || lexical_tokens(&terms.join(" ")) == lexical_tokens(query))
}

/// OpenClaw 2.x's keyword scoring of one query (`scoreFallbackKeywordResult`, and which chunks its keyword query
/// returns), with memsift's stemmed matching kept where OpenClaw's exact matching finds nothing.
///
/// The boosted score of a keyword hit ([`LexicalQuery::score`]) is
/// `min(1, r / (1 + r) + 0.45 · share + 0.2 · density + 0.18 · in_path + min(chars / 160, 0.18))`: `share` is the
/// fraction of the query's distinct tokens ([`lexical_tokens`]) that are whole tokens of the chunk, `density` that
/// count over the chunk's distinct tokens, `in_path` the number of query tokens found in the path (case-insensitive
/// substrings). Whole tokens, as OpenClaw counts them: a stemmed match adds nothing to `share`.
///
/// Which keyword hits count. OpenClaw's FTS query ANDs every query token (unstemmed); only when that finds nothing,
/// or the query lost tokens on the way to its keywords (a stop word, a short or numeric token: [`all_terms_only`]),
/// does it also search each of its [`fallback_terms`] alone. memsift's keyword leg matches any word, stemmed, so it
/// returns chunks OpenClaw never sees: partial matches where every term is held elsewhere, and chunks matching
/// through a stem only ("Deploy target" for "deploys"). memsift's rule, in order (a chunk *holds* a query token
/// when one of its tokens is that token or shares its analyzer form: stem, folded diacritics):
///
/// 1. all terms: if [`all_terms_only`] and some keyword hit holds every query token, only those are keyword hits;
/// 2. else, if some keyword hit has a fallback term as whole tokens (OpenClaw's per-term search finds it), only
///    those and the hits holding every query token are keyword hits: a match through a stem alone gives way;
/// 3. else every keyword hit counts: where OpenClaw's exact matching finds nothing, memsift's stemming answers
///    ("where do backups go" finds the note saying "backup", which OpenClaw misses).
///
/// A keyword hit that does not count scores 0 for keywords; with nothing else (no cosine, no path match) it is no
/// candidate at all. A query with kana, Han or Hangul skips steps 1 and 2.
pub struct LexicalQuery {
    /// The query's distinct tokens, first seen first (OpenClaw's `queryMatchers`).
    tokens: Vec<String>,
    /// Each token's analyzer tokens (its stem): what a chunk's analyzer tokens must contain to hold it.
    stems: Vec<Vec<String>>,
    /// [`all_terms_only`] of the query.
    all_terms: bool,
    /// The [`fallback_terms`], each as its [`lexical_tokens`] (`None`: a CJK query).
    terms: Option<Vec<Vec<String>>>,
}

/// How a chunk's text meets a [`LexicalQuery`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LexicalMatch {
    /// The query tokens that are whole tokens of the text.
    pub overlap: usize,
    /// The text's distinct tokens.
    pub distinct: usize,
    /// Every query token is a token of the text or shares its analyzer form with one.
    pub holds_all: bool,
    /// Some fallback term's tokens are all whole tokens of the text (OpenClaw's per-term search finds it).
    pub holds_term: bool,
}

impl LexicalQuery {
    pub fn new(analyzer: Analyzer, query: &str) -> Self {
        let mut tokens: Vec<String> = Vec::new();
        for token in lexical_tokens(query) {
            if !tokens.contains(&token) {
                tokens.push(token);
            }
        }
        let stems = tokens.iter().map(|t| analyzer.tokenize(t)).collect();
        let terms = fallback_terms(query).map(|terms| terms.iter().map(|t| lexical_tokens(t)).collect());
        Self { tokens, stems, all_terms: all_terms_only(query), terms }
    }

    /// How `text` meets the query.
    pub fn matches(&self, analyzer: Analyzer, text: &str) -> LexicalMatch {
        let own = LexicalTokens::of(text);
        let own: FxHashSet<&str> = own.iter().collect();
        let whole: Vec<bool> = self.tokens.iter().map(|t| own.contains(t.as_str())).collect();
        let overlap = whole.iter().filter(|&&w| w).count();
        let holds_all = overlap == self.tokens.len() || {
            let mut buf = TokenBuf::default();
            analyzer.analyze_into(text, &mut buf);
            let forms: FxHashSet<&str> = buf.iter().collect();
            whole
                .iter()
                .zip(&self.stems)
                .all(|(&w, stems)| w || (!stems.is_empty() && stems.iter().all(|t| forms.contains(t.as_str()))))
        };
        let holds_term =
            self.terms.iter().flatten().any(|term| !term.is_empty() && term.iter().all(|t| own.contains(t.as_str())));
        LexicalMatch { overlap, distinct: own.len(), holds_all, holds_term }
    }

    /// The boosted score of a keyword hit whose BM25 score is `text_score` (`r / (1 + r)`); `chars` is the chunk's
    /// length. A query without tokens scores `text_score` alone.
    pub fn score(&self, text_score: f64, matched: &LexicalMatch, path: &str, chars: usize) -> f64 {
        if self.tokens.is_empty() {
            return text_score;
        }
        let path = path.nfc().collect::<String>().to_lowercase();
        let in_path = self.tokens.iter().filter(|t| path.contains(t.as_str())).count();
        let share = matched.overlap as f64 / self.tokens.len() as f64;
        let density = matched.overlap as f64 / matched.distinct.max(1) as f64;
        let boost = 0.45 * share + 0.2 * density + 0.18 * in_path as f64 + (chars as f64 / 160.0).min(0.18);
        (text_score + boost).min(1.0)
    }

    /// Which of the keyword hits `matches` count, by the rule of [`LexicalQuery`] (`None`: not a keyword hit).
    pub fn counted(&self, matches: &[Option<LexicalMatch>]) -> Vec<bool> {
        let any = |f: fn(&LexicalMatch) -> bool| matches.iter().flatten().any(f);
        let all_terms = self.all_terms && any(|m| m.holds_all);
        let per_term = !all_terms && self.terms.is_some() && any(|m| m.holds_term);
        matches
            .iter()
            .map(|m| {
                m.is_some_and(|m| {
                    if all_terms {
                        m.holds_all
                    } else if per_term {
                        m.holds_all || m.holds_term
                    } else {
                        true
                    }
                })
            })
            .collect()
    }
}

/// Each candidate's keyword score under [`RankParams::lexical`] (0: not a keyword hit), and whether the rule of
/// [`LexicalQuery`] left it no candidate at all.
fn lexical_scores(analyzer: Analyzer, candidates: &[Candidate<'_>], query: &str) -> (Vec<f64>, Vec<bool>) {
    let lexical = LexicalQuery::new(analyzer, query);
    let matches: Vec<Option<LexicalMatch>> =
        candidates.iter().map(|c| (c.keyword > 0.0).then(|| lexical.matches(analyzer, c.text))).collect();
    let counted = lexical.counted(&matches);
    let mut scores = Vec::with_capacity(candidates.len());
    let mut dropped = Vec::with_capacity(candidates.len());
    for ((c, matched), &counts) in candidates.iter().zip(&matches).zip(&counted) {
        let hit = matched.filter(|_| counts);
        scores.push(hit.map_or(0.0, |m| lexical.score(bm25_score_to_unit(c.keyword), &m, c.path, c.chars)));
        dropped.push(matched.is_some() && !counts && c.vector <= 0.0 && c.tier == 0 && c.path_score <= 0.0);
    }
    (scores, dropped)
}

/// Each candidate's keyword score without [`RankParams::lexical`] (0: not a keyword hit).
fn bm25_scores(candidates: &[Candidate<'_>], params: &RankParams<'_>) -> Vec<f64> {
    candidates
        .iter()
        .map(|c| match (c.keyword > 0.0, params.mode) {
            (false, _) => 0.0,
            (true, Mode::FtsOnly) => bm25_score_to_unit(c.keyword),
            // BM25 relative to the query's best match: r / (1 + r) would squeeze every good match into 0.9-0.97,
            // leaving the keyword leg no say against cosine (SciFact hybrid 0.677 vs 0.730).
            (true, _) => c.keyword / params.keyword_best,
        })
        .collect()
}

/// Merge → temporal decay → path tiers → MMR → floor, for one query: memsift's `memory_search` ranking.
///
/// - merge: hybrid scores `vector_weight · cosine + text_weight · keyword`, the keyword leg scaled by the
///   query's best BM25 match (or the partial path score when the keyword leg did not find the chunk);
///   vector-only scores the cosine; FTS-only scores `r / (1 + r)` plus OpenClaw's path-keyword (+0.18 per query
///   keyword in the path) and length (≤ 0.18) boosts, or the path score alone; with [`RankParams::lexical`]
///   (OpenClaw 2.x) the keyword leg's score in both hybrid and FTS-only modes is [`LexicalQuery::score`], and
///   partial or stem-only keyword matches may give way to better ones as in OpenClaw ([`LexicalQuery`]);
/// - decay: OpenClaw's temporal decay (exact path hits decay from `(1 + score) / 2`);
/// - importance: OpenClaw 2.x's multiplier ([`importance_multiplier`]), except on exact path hits (2.x reports
///   those with its project multiplier only);
/// - order: exact path hits first (by tier, then those another leg found too), then by score, then by chunk id;
/// - MMR (hybrid, when on) over the first `pool_size` of the rest; exact path hits are reported with score 1;
/// - floor: scores below `min_score` go; if none is left, a relaxed pass keeps keyword/path hits whose own score
///   reaches it (hybrid; any match in FTS-only mode), as keyword-only hits can never exceed `text_weight`.
#[allow(clippy::float_cmp)] // a 0 score means "this leg did not find the chunk": exact on purpose
pub fn rank(
    analyzer: Analyzer,
    candidates: &[Candidate<'_>],
    params: &RankParams<'_>,
    path_tokens: &mut PathTokens,
) -> Result<Ranked> {
    let (vw, tw) = normalize_weights(params.vector_weight, params.text_weight)?;
    let lexical = params.lexical && params.mode != Mode::VectorOnly;
    let (text_scores, dropped) = if lexical {
        lexical_scores(analyzer, candidates, params.query)
    } else {
        (bm25_scores(candidates, params), vec![false; candidates.len()])
    };
    let keywords = if lexical { Vec::new() } else { query_keywords(analyzer, params.query) };
    let mut scores: Vec<f64> = candidates
        .iter()
        .zip(&text_scores)
        .map(|(c, &text)| match params.mode {
            Mode::VectorOnly => c.vector,
            Mode::Hybrid => vw * c.vector + tw * if text == 0.0 { c.path_score } else { text },
            Mode::FtsOnly if text == 0.0 => c.path_score,
            Mode::FtsOnly if lexical => text, // already boosted
            Mode::FtsOnly => {
                let tokens = path_tokens.get(analyzer, c.path);
                let in_path = keywords.iter().filter(|k| tokens.contains(k.as_str())).count();
                text + 0.18 * in_path as f64 + (c.chars as f64 / 160.0).min(0.18)
            }
        })
        .collect();
    let merged = if params.explain { scores.clone() } else { Vec::new() };
    for (score, c) in scores.iter_mut().zip(candidates) {
        *score *= c.when;
    }
    let mut factors: Vec<(f64, &'static str)> = Vec::new();
    if let Some((now, half_life)) = params.decay {
        let items: Vec<DecayItem<'_>> = candidates
            .iter()
            .zip(&scores)
            .map(|(c, &score)| DecayItem {
                score: if c.tier > 0 { f64::midpoint(1.0, score.clamp(0.0, 1.0)) } else { score },
                path: c.path,
                source: c.source,
                mtime: c.mtime,
            })
            .collect();
        scores = apply_temporal_decay(&items, now, half_life);
        if params.explain {
            factors = items.iter().map(|item| decay_factor(item, now, half_life)).collect();
        }
    }
    let boosts = weigh_importance(candidates, &mut scores);
    let found_by_leg = |i: usize| text_scores[i] > 0.0 || candidates[i].vector > 0.0;
    let mut order: Vec<usize> = (0..candidates.len()).filter(|&i| !dropped[i]).collect();
    order.sort_by(|&a, &b| {
        let (ta, tb) = (candidates[a].tier, candidates[b].tier);
        tb.cmp(&ta)
            .then_with(|| if ta > 0 { found_by_leg(b).cmp(&found_by_leg(a)) } else { std::cmp::Ordering::Equal })
            .then_with(|| descending(scores[a], scores[b]))
            .then_with(|| candidates[a].id.cmp(&candidates[b].id))
    });
    // For `explain`; the partial keyword matches left out come last, in candidate order.
    let before_mmr: Vec<usize> = order.iter().copied().chain((0..candidates.len()).filter(|&i| dropped[i])).collect();
    let split = order.iter().position(|&i| candidates[i].tier == 0).unwrap_or(order.len());
    let (exact, rest) = order.split_at_mut(split);
    let mut rest = rest.to_vec();
    if let (Mode::Hybrid, Some((lambda, pool_size))) = (params.mode, params.mmr) {
        if rest.len() > 1 {
            let head = pool_size.clamp(1, rest.len());
            let head_scores: Vec<f64> = rest[..head].iter().map(|&i| scores[i]).collect();
            let head_texts: Vec<&str> =
                rest[..head].iter().map(|&i| utf16_prefix(candidates[i].text, MMR_TEXT_UNITS)).collect();
            let picked = mmr(analyzer, &head_scores, &head_texts, lambda)?;
            let reordered: Vec<usize> = picked.iter().map(|&p| rest[p]).collect();
            rest.splice(..head, reordered);
        }
    }
    for &i in exact.iter() {
        scores[i] = 1.0; // exact path hits are reported with score 1
    }
    let ranked: Vec<usize> = exact.iter().copied().chain(rest).collect();
    let mut kept: Vec<usize> = ranked.iter().copied().filter(|&i| scores[i].min(1.0) >= params.min_score).collect();
    let mut relaxed = false;
    if kept.is_empty() && params.mode != Mode::VectorOnly {
        let floor = if params.mode == Mode::Hybrid { params.min_score } else { 0.0 };
        kept = ranked
            .iter()
            .copied()
            .filter(|&i| {
                let own = text_scores[i].max(candidates[i].path_score);
                own > 0.0 && own >= floor
            })
            .collect();
        relaxed = !kept.is_empty();
    }
    let passing = if params.explain { kept.clone() } else { Vec::new() };
    kept.truncate(params.limit);
    let reported = kept.iter().map(|&i| scores[i].min(1.0)).collect();
    let explained = if params.explain {
        let stages =
            Stages { keyword: &text_scores, merged: &merged, decay: &factors, importance: &boosts, scores: &scores };
        explain(&stages, &before_mmr, &passing, &kept, &dropped)
    } else {
        Vec::new()
    };
    Ok(Ranked { order: kept, scores: reported, relaxed, explained })
}

/// One transcript message found by either leg of ranked `sessions_search`.
pub struct MessageCandidate {
    pub id: u64,
    /// Its session, as any number that is equal for messages of one session.
    pub session: usize,
    /// The keyword leg's score (BM25 with coverage and session context), `None` where that leg did not find it.
    pub keyword: Option<f64>,
    /// Cosine similarity to the question, `None` where the vector leg did not find it.
    pub vector: Option<f64>,
}

/// The share of the best other message of its session that [`fuse_messages`] adds to each message. Small, now
/// that the keyword leg scores sessions itself: a larger pull fills the first results with one session, and when
/// it is the wrong one nothing is found. LoCoMo-dev turn / session recall@5 (legs half and half) with 0.25, 0.1 and
/// 0: bge-small 0.736 / 0.901, 0.743 / 0.917, 0.738 / 0.917; MiniLM 0.728 / 0.892, 0.720 / 0.896, 0.715 / 0.907;
/// multilingual-e5-small 0.729 / 0.904, 0.718 / 0.907, 0.707 / 0.912. SciFact sessions with MiniLM, 0.25 and 0.1:
/// 0.737 / 0.895, 0.729 / 0.903.
pub const SESSION_PULL: f64 = 0.1;

/// Ranked `sessions_search`'s merge of its keyword and vector legs: `(id, score)` best first, ties by id.
///
/// Each leg is scaled to [0, 1] over its own candidates before the weighted sum: keyword scores by the best one,
/// cosines from the weakest candidate's to the best one's. A retrieval model's cosines sit in a narrow band
/// (bge-small: 0.55-0.85 for everything near a question), so unscaled they moved the order by a few points while
/// the keyword leg spanned all of it. Then each message gains [`SESSION_PULL`] of the best other message of its
/// session: the conversation a question is about lifts its answer over a lone lookalike elsewhere. A message
/// neither leg scores above zero is left out.
pub fn fuse_messages(candidates: &[MessageCandidate], vector_weight: f64, text_weight: f64) -> Vec<(u64, f64)> {
    let keyword_best = candidates.iter().filter_map(|c| c.keyword).fold(0.0, f64::max);
    let cosines = || candidates.iter().filter_map(|c| c.vector);
    let (top, floor) = (cosines().fold(f64::MIN, f64::max), cosines().fold(f64::MAX, f64::min));
    let spread = if top > floor { top - floor } else { 1.0 };
    let fused: Vec<f64> = candidates
        .iter()
        .map(|c| {
            let keyword = c.keyword.map_or(0.0, |k| if keyword_best > 0.0 { k / keyword_best } else { 0.0 });
            let vector = c.vector.map_or(0.0, |v| (v - floor) / spread);
            vector_weight * vector + text_weight * keyword
        })
        .collect();
    // The best two scores of each session: a message's best other is the first, or the second for the best one.
    let mut best: FxHashMap<usize, (f64, f64)> = FxHashMap::default();
    for (c, &score) in candidates.iter().zip(&fused) {
        let entry = best.entry(c.session).or_insert((0.0, 0.0));
        if score > entry.0 {
            *entry = (score, entry.0);
        } else if score > entry.1 {
            entry.1 = score;
        }
    }
    let mut out: Vec<(u64, f64)> = candidates
        .iter()
        .zip(&fused)
        .map(|(c, &score)| {
            let (first, second) = best[&c.session];
            let other = if score >= first { second } else { first };
            (c.id, score + SESSION_PULL * other)
        })
        .filter(|&(_, score)| score > 0.0)
        .collect();
    out.sort_by(|a, b| descending(a.1, b.1).then(a.0.cmp(&b.0)));
    out
}

/// Each candidate's score after each stage of [`rank`], for [`explain`].
struct Stages<'a> {
    keyword: &'a [f64],
    merged: &'a [f64],
    /// Decay multipliers and date sources (empty without decay).
    decay: &'a [(f64, &'static str)],
    importance: &'a [f64],
    scores: &'a [f64],
}

/// Multiply each score by its candidate's importance multiplier (exact path hits aside: their score is fixed);
/// returns the multipliers.
fn weigh_importance(candidates: &[Candidate<'_>], scores: &mut [f64]) -> Vec<f64> {
    let boosts: Vec<f64> =
        candidates.iter().map(|c| if c.tier > 0 { 1.0 } else { importance_multiplier(c.importance) }).collect();
    for (score, boost) in scores.iter_mut().zip(&boosts) {
        *score *= boost;
    }
    boosts
}

/// How each candidate was scored and placed: `before_mmr` is the order before MMR, `passing` what the floor let
/// through, `kept` the results.
fn explain(
    stages: &Stages<'_>,
    before_mmr: &[usize],
    passing: &[usize],
    kept: &[usize],
    dropped: &[bool],
) -> Vec<Explained> {
    let n = stages.scores.len();
    // Not kept: below the floor (or outside the relaxed pass), unless it passed and only the limit cut it, or the
    // lexical rule left it out.
    let mut position = vec![None; n];
    let mut cut: Vec<Option<&'static str>> =
        dropped.iter().map(|&d| Some(if d { "partialMatch" } else { "minScore" })).collect();
    for &i in passing {
        cut[i] = Some("limit");
    }
    for (at, &i) in kept.iter().enumerate() {
        (position[i], cut[i]) = (Some(at), None);
    }
    let mut before = vec![0; n];
    for (at, &i) in before_mmr.iter().enumerate() {
        before[i] = at;
    }
    (0..n)
        .map(|i| {
            let (decay, date_source) = stages.decay.get(i).copied().unwrap_or((1.0, "off"));
            Explained {
                keyword: stages.keyword[i],
                merged: stages.merged[i],
                decay,
                date_source,
                importance: stages.importance[i],
                before_mmr: before[i],
                position: position[i],
                score: stages.scores[i],
                cut: cut[i],
            }
        })
        .collect()
}

/// Analyzer tokens of file paths, kept across queries: the same paths come back query after query, and analyzing
/// a couple of hundred of them would otherwise be a good part of an FTS-only search.
#[derive(Default)]
pub struct PathTokens(FxHashMap<Box<str>, FxHashSet<Box<str>>>);

impl PathTokens {
    /// Paths remembered at most; the cache restarts empty when it is full.
    const LIMIT: usize = 1 << 16;

    fn get(&mut self, analyzer: Analyzer, path: &str) -> &FxHashSet<Box<str>> {
        if self.0.len() >= Self::LIMIT && !self.0.contains_key(path) {
            self.0.clear();
        }
        self.0.entry(path.into()).or_insert_with(|| {
            let mut buf = TokenBuf::default();
            analyzer.analyze_into(path, &mut buf);
            buf.iter().map(Into::into).collect()
        })
    }
}

/// The query's analyzer tokens without English function words (all of them if nothing else is left).
fn query_keywords(analyzer: Analyzer, query: &str) -> Vec<String> {
    let mut buf = TokenBuf::default();
    analyzer.analyze_into(query, &mut buf);
    let tokens: FxHashSet<&str> = buf.iter().collect();
    let keywords: Vec<String> = tokens.iter().filter(|t| !STOP_WORDS.contains(t)).map(|t| (*t).to_owned()).collect();
    if keywords.is_empty() {
        tokens.iter().map(|t| (*t).to_owned()).collect()
    } else {
        keywords
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: u64, session: usize, keyword: Option<f64>, vector: Option<f64>) -> MessageCandidate {
        MessageCandidate { id, session, keyword, vector }
    }

    #[test]
    fn fused_messages_scale_each_leg_and_pull_up_their_session() {
        // Cosines in a narrow band still decide: 2 is the vector leg's best, 1 the keyword leg's best.
        let fused = fuse_messages(
            &[
                message(1, 0, Some(10.0), Some(0.60)),
                message(2, 1, Some(2.0), Some(0.80)),
                message(3, 2, None, Some(0.70)),
            ],
            0.7,
            0.3,
        );
        let scores: FxHashMap<u64, f64> = fused.iter().copied().collect();
        assert!((scores[&1] - 0.3).abs() < 1e-12); // the weakest cosine scales to 0
        assert!((scores[&2] - (0.7 + 0.3 * 0.2)).abs() < 1e-12);
        assert!((scores[&3] - 0.35).abs() < 1e-12);
        assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), [2, 3, 1]);
        // Two middling messages of one session outrank a slightly better lone one; the best of the session is
        // pulled by the second best.
        let fused = fuse_messages(
            &[message(1, 0, Some(5.6), None), message(2, 0, Some(5.6), None), message(3, 1, Some(6.0), None)],
            0.7,
            0.3,
        );
        assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 2, 3]);
        assert!((fused[0].1 - 0.3 * 5.6 / 6.0 * (1.0 + SESSION_PULL)).abs() < 1e-12);
        // Nothing above zero: left out; no candidates: nothing.
        assert!(fuse_messages(&[message(9, 0, None, Some(0.5))], 0.7, 0.3).is_empty());
        assert!(fuse_messages(&[], 0.7, 0.3).is_empty());
    }

    #[test]
    fn weights_are_normalized() {
        assert_eq!(normalize_weights(2.0, 2.0).unwrap(), (0.5, 0.5));
        assert_eq!(normalize_weights(0.0, 0.0).unwrap(), (0.7, 0.3));
    }

    #[test]
    fn mmr_demotes_near_duplicates() {
        let a = Analyzer::default();
        let texts = ["rust tantivy index", "rust tantivy index", "python sqlite store"];
        let order = mmr(a, &[1.0, 0.99, 0.8], &texts, 0.5).unwrap();
        assert_eq!(order, [0, 2, 1]);
        assert_eq!(mmr(a, &[0.1, 0.5], &["a", "b"], 1.0).unwrap(), [1, 0]);
    }

    fn cand<'a>(id: u64, vector: f64, keyword: f64, tier: u8, path: &'a str, text: &'a str) -> Candidate<'a> {
        let chars = text.chars().count();
        Candidate {
            id,
            vector,
            keyword,
            path_score: 0.0,
            tier,
            path,
            source: "memory",
            mtime: None,
            chars,
            text,
            when: 1.0,
            importance: None,
        }
    }

    fn params(mode: Mode, best: f64) -> RankParams<'static> {
        RankParams {
            mode,
            vector_weight: 0.7,
            text_weight: 0.3,
            keyword_best: best,
            query: "deploy key",
            decay: None,
            mmr: None,
            min_score: 0.0,
            limit: 10,
            explain: false,
            lexical: false,
        }
    }

    #[test]
    fn hybrid_scales_keywords_by_the_best_match_and_keeps_keyword_only_hits() {
        let c =
            [cand(1, 0.9, 0.0, 0, "a.md", "x"), cand(2, 0.0, 4.0, 0, "b.md", "y"), cand(3, 0.5, 2.0, 0, "c.md", "z")];
        let ranked = rank(Analyzer::default(), &c, &params(Mode::Hybrid, 4.0), &mut PathTokens::default()).unwrap();
        assert_eq!(ranked.order, [0, 2, 1]);
        for (got, want) in ranked.scores.iter().zip([0.7 * 0.9, 0.7 * 0.5 + 0.3 * 0.5, 0.3 * 1.0]) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }

    #[test]
    fn explain_reports_each_stage_and_why_a_candidate_was_cut() {
        let c = [
            cand(1, 0.9, 0.0, 0, "memory/2026-01-01.md", "x"),
            cand(2, 0.0, 4.0, 0, "MEMORY.md", "y"),
            cand(3, 0.1, 0.0, 0, "notes/c.md", "z"),
            cand(4, 0.5, 2.0, 0, "notes/d.md", "w"),
        ];
        let mut p = params(Mode::Hybrid, 4.0);
        let now = days_from_civil(2026, 1, 31) as f64 * 86_400.0;
        (p.explain, p.min_score, p.limit, p.decay) = (true, 0.2, 2, Some((now, 30.0)));
        let ranked = rank(Analyzer::default(), &c, &p, &mut PathTokens::default()).unwrap();
        let e = &ranked.explained;
        // 0.63 halved by 30 days at a 30-day half-life; 0.3 from keywords alone, never decayed; 0.07 under the
        // floor; 0.35 + 0.15 with no date to decay from.
        assert_eq!(ranked.order, [3, 0]);
        assert_eq!((e[0].date_source, e[1].date_source, e[2].date_source), ("path", "evergreen", "none"));
        assert!((e[0].merged - 0.63).abs() < 1e-12 && (e[0].decay - 0.5).abs() < 1e-9);
        assert!((e[1].keyword - 1.0).abs() < 1e-12 && (e[3].keyword - 0.5).abs() < 1e-12);
        assert_eq!((e[3].position, e[0].position, e[1].position), (Some(0), Some(1), None));
        assert_eq!((e[3].cut, e[0].cut, e[1].cut, e[2].cut), (None, None, Some("limit"), Some("minScore")));
        assert_eq!((e[3].before_mmr, e[0].before_mmr, e[1].before_mmr, e[2].before_mmr), (0, 1, 2, 3));
        assert!(rank(Analyzer::default(), &c, &params(Mode::Hybrid, 4.0), &mut PathTokens::default())
            .unwrap()
            .explained
            .is_empty());
    }

    #[test]
    fn exact_path_hits_come_first_with_score_1_and_the_floor_relaxes_for_keyword_hits() {
        let c = [cand(1, 0.0, 1.0, 0, "notes/deploy.md", "deploy notes"), cand(2, 0.0, 0.0, 2, "b.md", "b")];
        let ranked = rank(Analyzer::default(), &c, &params(Mode::FtsOnly, 1.0), &mut PathTokens::default()).unwrap();
        assert_eq!((ranked.order.as_slice(), ranked.scores[0]), ([1, 0].as_slice(), 1.0));
        // FTS-only: r / (1 + r) + 0.18 per query keyword in the path + min(len / 160, 0.18)
        assert!((ranked.scores[1] - (0.5 + 0.18 + 12.0 / 160.0)).abs() < 1e-12);
        let mut strict = params(Mode::Hybrid, 3.0);
        strict.min_score = 0.35;
        let keyword_only = [cand(1, 0.0, 3.0, 0, "a.md", "a")];
        let relaxed = rank(Analyzer::default(), &keyword_only, &strict, &mut PathTokens::default()).unwrap();
        assert!(relaxed.relaxed && relaxed.order == [0] && (relaxed.scores[0] - 0.3).abs() < 1e-12);
    }

    #[test]
    #[allow(clippy::float_cmp)] // a neutral multiplier is exactly 1, not about 1
    fn importance_multiplies_after_decay_as_openclaw_2x_does() {
        assert_eq!(importance_multiplier(None), 1.0);
        for (importance, want) in
            [(1.0, 0.8), (5.0, 1.0), (9.0, 1.2), (10.0, 1.25), (0.0, 0.8), (11.0, 1.25), (9.7, 1.2)]
        {
            assert!((importance_multiplier(Some(importance)) - want).abs() < 1e-12, "{importance}");
        }
        assert_eq!(importance_multiplier(Some(f64::NAN)), 1.0);
        // The notes' hybrid checks (§3.4): `gateway loopback` on MEMORY.md#L3 (importance 9) and a vector-only hit
        // on #L5-6 (importance 3); then an unannotated chunk, and an exact path hit whose importance is ignored.
        let mut c = [
            cand(1, 0.632_455, 4.0, 0, "MEMORY.md", "gateway"),
            cand(2, 0.234_888, 0.0, 0, "MEMORY.md", "deploy"),
            cand(3, 0.7, 0.0, 0, "memory/x.md", "x"),
            cand(4, 0.0, 0.0, 1, "memory/gateway.md", "y"),
        ];
        (c[0].importance, c[1].importance, c[3].importance) = (Some(9.0), Some(3.0), Some(1.0));
        let mut p = params(Mode::Hybrid, 4.0);
        p.explain = true;
        let ranked = rank(Analyzer::default(), &c, &p, &mut PathTokens::default()).unwrap();
        assert_eq!(ranked.order, [3, 0, 2, 1]);
        let e = &ranked.explained;
        assert!((e[0].score - 0.891_263).abs() < 1e-6 && (e[1].score - 0.147_979).abs() < 1e-6);
        assert!((e[0].importance - 1.2).abs() < 1e-12 && (e[1].importance - 0.9).abs() < 1e-12);
        assert_eq!((e[2].importance, e[3].importance, e[3].score), (1.0, 1.0, 1.0));
        // FTS-only mode applies it too (a score over 1 is still reported as 1).
        let mut fts = params(Mode::FtsOnly, 4.0);
        fts.explain = true;
        let ranked = rank(Analyzer::default(), &c[..1], &fts, &mut PathTokens::default()).unwrap();
        assert!((ranked.explained[0].score - ranked.explained[0].merged * 1.2).abs() < 1e-12);
    }

    #[test]
    fn lexical_tokens_are_openclaws_nfc_lowercase_runs() {
        assert_eq!(
            lexical_tokens("- The router VLAN, db-gamma.internal!"),
            ["the", "router", "vlan", "db", "gamma", "internal"]
        );
        // `_` joins, digits count, NFC first (a decomposed é is one letter), no stemming or folding.
        assert_eq!(lexical_tokens("ERR_CONN 42 Cafe\u{301} backups"), ["err_conn", "42", "café", "backups"]);
        assert_eq!(lexical_tokens("数据库迁移计划：周五"), ["数据库迁移计划", "周五"]);
        assert!(lexical_tokens(" -- ").is_empty());
        // The ASCII scan agrees with the Unicode pattern (which a non-ASCII text takes).
        let ascii = "Foo_bar-BAZ 42x, (q)a__b\t~z9";
        let mut unicode = lexical_tokens(&format!("{ascii} é"));
        assert_eq!(unicode.pop().as_deref(), Some("é"));
        assert_eq!(lexical_tokens(ascii), unicode);
        assert_eq!(unicode, ["foo_bar", "baz", "42x", "q", "a__b", "z9"]);
    }

    #[test]
    fn all_terms_only_where_openclaw_runs_no_per_keyword_fallback() {
        // Every token is a keyword: the all-terms query stands alone.
        for query in ["production database host", "VPN gateway", "deploy target", "gateway", "2026-08-12", "db"] {
            assert!(all_terms_only(query), "{query}");
        }
        // A stop word, a short or numeric token, a repeat, `_`, CJK, or more than six keywords: per-keyword probes.
        for query in [
            "when do deploys happen",
            "the production database host",
            "Wi-Fi password",
            "INC-4821",
            "host host",
            "err_conn reset",
            "数据库迁移",
            "ayer base datos",
            "alpha beta gamma delta epsilon zeta theta",
        ] {
            assert!(!all_terms_only(query), "{query}");
        }
        // OpenClaw's 255 EN/ES/PT/AR stop words less the two-word one, each a single word.
        let words: Vec<&str> = KEYWORD_STOP_WORDS.iter().flat_map(|list| list.split(' ')).collect();
        assert!(words.len() == 254 && words.iter().all(|w| !w.is_empty() && !w.contains(char::is_whitespace)));
    }

    fn lexical_params(mode: Mode, query: &'static str) -> RankParams<'static> {
        RankParams { query, lexical: true, ..params(mode, 1.0) }
    }

    #[test]
    fn lexical_scoring_boosts_by_query_overlap_as_openclaw_2x_does() {
        // The notes' verified example (§3.2): r / (1 + r) = 0.7374, + 0.45 (both terms) + 0.2 · 2/8 + 0.18 → 1.
        let text = "- The router VLAN for lab hosts is 42.";
        let c = [cand(1, 0.0, 0.7374 / 0.2626, 0, "MEMORY.md", text)];
        let ranked =
            rank(Analyzer::default(), &c, &lexical_params(Mode::FtsOnly, "router VLAN"), &mut PathTokens::default())
                .unwrap();
        assert_eq!(ranked.scores, [1.0]);
        // Uncapped: 0.2 (r = 0.25) + 0.45 · 1/2 + 0.2 · 1/4 + 0.18 ("zeta" in the path) + 22/160 = 0.7925.
        let c = [cand(1, 0.5, 0.25, 0, "notes/zeta.md", "alpha beta gamma delta")];
        let fts =
            rank(Analyzer::default(), &c, &lexical_params(Mode::FtsOnly, "alpha zeta"), &mut PathTokens::default())
                .unwrap();
        assert!((fts.scores[0] - 0.7925).abs() < 1e-12, "{}", fts.scores[0]);
        // Hybrid: the same boosted score is the text term: 0.7 · 0.5 + 0.3 · 0.7925.
        let mut p = lexical_params(Mode::Hybrid, "alpha zeta");
        p.explain = true;
        let hybrid = rank(Analyzer::default(), &c, &p, &mut PathTokens::default()).unwrap();
        assert!((hybrid.scores[0] - 0.587_75).abs() < 1e-12, "{}", hybrid.scores[0]);
        assert!((hybrid.explained[0].keyword - 0.7925).abs() < 1e-12);
        // Off, hybrid still scales by the best BM25 score: 0.7 · 0.5 + 0.3 · 0.25 / 1.
        let off = rank(Analyzer::default(), &c, &params(Mode::Hybrid, 1.0), &mut PathTokens::default()).unwrap();
        assert!((off.scores[0] - 0.425).abs() < 1e-12);
    }

    #[test]
    fn lexical_all_terms_rule_leaves_partial_keyword_matches_out() {
        let c = [
            cand(1, 0.0, 3.0, 0, "memory/2026-01-01.md", "Production database host is db-gamma.internal."),
            cand(2, 0.0, 1.0, 0, "MEMORY.md", "The production VPN gateway is vpn-b.example."),
            Candidate { path_score: 0.4, ..cand(3, 0.0, 0.0, 0, "memory/hosts.md", "x") },
        ];
        let mut p = lexical_params(Mode::FtsOnly, "production database host");
        p.explain = true;
        let ranked = rank(Analyzer::default(), &c, &p, &mut PathTokens::default()).unwrap();
        // 0.75 + 0.45 + 0.2 · 3/7 + 0.18 → 1; the path-only hit stays; the one-term match is no candidate.
        assert_eq!((ranked.order.as_slice(), ranked.scores.as_slice()), ([0, 2].as_slice(), [1.0, 0.4].as_slice()));
        let e = &ranked.explained;
        assert_eq!((e[1].cut, e[1].position, e[1].keyword, e[1].before_mmr), (Some("partialMatch"), None, 0.0, 2));
        // Hybrid: a partial match the vector leg found stays, by its cosine alone.
        let hybrid =
            [cand(1, 0.0, 3.0, 0, "memory/2026-01-01.md", c[0].text), cand(2, 0.6, 1.0, 0, "MEMORY.md", c[1].text)];
        let ranked = rank(
            Analyzer::default(),
            &hybrid,
            &lexical_params(Mode::Hybrid, "production database host"),
            &mut PathTokens::default(),
        )
        .unwrap();
        assert_eq!(ranked.order, [1, 0]);
        assert!((ranked.scores[0] - 0.42).abs() < 1e-12 && (ranked.scores[1] - 0.3).abs() < 1e-12);
        // A stop word in the query: OpenClaw probes each keyword too, so the partial match stays, boosted:
        // 0.5 + 0.45 · 2/4 + 0.2 · 2/7 + 0.18 ("the", "production" of "the production database host").
        let ranked = rank(
            Analyzer::default(),
            &c,
            &lexical_params(Mode::FtsOnly, "the production database host"),
            &mut PathTokens::default(),
        )
        .unwrap();
        assert_eq!(ranked.order, [0, 1, 2]);
        assert!((ranked.scores[1] - (0.5 + 0.225 + 0.2 * 2.0 / 7.0 + 0.18)).abs() < 1e-12);
        // Without lexical scoring nothing is left out.
        assert_eq!(
            rank(Analyzer::default(), &c, &params(Mode::FtsOnly, 1.0), &mut PathTokens::default()).unwrap().order.len(),
            3
        );
    }

    #[test]
    fn fallback_terms_are_openclaws_keywords_less_the_whole_query() {
        let terms = |q: &str| fallback_terms(q).map(|t| t.join(" "));
        assert_eq!(terms("when do deploys happen").as_deref(), Some("deploys happen"));
        assert_eq!(terms("Wi-Fi password, password").as_deref(), Some("password"));
        assert_eq!(terms("INC-4821").as_deref(), Some("inc"));
        assert_eq!(terms("Gateway").as_deref(), Some("")); // the whole query is no fallback term
        assert_eq!(terms("recently rotated keys ayer").as_deref(), Some("rotated keys"));
        assert_eq!(terms("数据库 migration"), None);
    }

    #[test]
    fn lexical_stem_only_matches_give_way_to_exact_ones_unless_nothing_matches_exactly() {
        // "deploys" reaches MEMORY.md's "Deploy" through its stem only: the notes holding "deploys" (a fallback
        // term of a query OpenClaw searches term by term) are keyword hits, it is not.
        let c = [
            cand(1, 0.0, 3.0, 0, "memory/2026-01-01.md", "From now on deploys happen on Thursdays."),
            cand(2, 0.0, 4.0, 0, "MEMORY.md", "- Deploy target is hetzner-fsn1."),
        ];
        let mut p = lexical_params(Mode::FtsOnly, "when do deploys happen");
        p.explain = true;
        let ranked = rank(Analyzer::default(), &c, &p, &mut PathTokens::default()).unwrap();
        assert_eq!((ranked.order.as_slice(), ranked.explained[1].cut), ([0].as_slice(), Some("partialMatch")));
        // No chunk says "backups": the stemmed matches stand (OpenClaw finds nothing here).
        let c = [
            cand(1, 0.0, 2.0, 0, "memory/2026-01-01.md", "Nightly backup of the wiki now goes to the NAS."),
            cand(2, 0.0, 1.0, 0, "memory/rota.md", "Backup rota: weekly."),
        ];
        let ranked = rank(
            Analyzer::default(),
            &c,
            &lexical_params(Mode::FtsOnly, "where do backups go"),
            &mut PathTokens::default(),
        )
        .unwrap();
        assert_eq!(ranked.order, [0, 1]);
    }

    #[test]
    fn lexical_all_terms_rule_counts_a_stem_as_holding_its_term() {
        // "backups" is held by "backup" (memsift's stemmed leg found it; OpenClaw misses it), so the note holds
        // both terms and the one-term match goes; the stem adds nothing to the share: 0.2 + 0.45 · 1/2 + 0.2 · 1/9
        // + 0.18.
        let c = [
            cand(1, 0.0, 0.25, 0, "memory/2026-01-01.md", "Nightly backup of the wiki now goes to the NAS."),
            cand(2, 0.0, 1.0, 0, "memory/rack.md", "The NAS sits in the rack."),
        ];
        let ranked =
            rank(Analyzer::default(), &c, &lexical_params(Mode::FtsOnly, "backups NAS"), &mut PathTokens::default())
                .unwrap();
        assert_eq!(ranked.order, [0]);
        assert!((ranked.scores[0] - (0.2 + 0.225 + 0.2 / 9.0 + 0.18)).abs() < 1e-12, "{}", ranked.scores[0]);
        let lexical = LexicalQuery::new(Analyzer::default(), "backups NAS");
        assert_eq!(
            lexical.matches(Analyzer::default(), c[0].text),
            LexicalMatch { overlap: 1, distinct: 9, holds_all: true, holds_term: true }
        );
        assert!(!lexical.matches(Analyzer::default(), c[1].text).holds_all);
    }

    #[test]
    fn mmr_reorders_near_duplicates_after_decay() {
        let c = [
            cand(1, 0.9, 0.0, 0, "memory/2026-01-01.md", "rust tantivy index"),
            cand(2, 0.89, 0.0, 0, "a.md", "rust tantivy index"),
            cand(3, 0.8, 0.0, 0, "b.md", "python sqlite store"),
        ];
        let mut p = params(Mode::Hybrid, 0.0);
        p.mmr = Some((0.5, 10));
        assert_eq!(rank(Analyzer::default(), &c, &p, &mut PathTokens::default()).unwrap().order, [0, 2, 1]);
        p.decay = Some((days_from_civil(2026, 3, 2) as f64 * 86_400.0, 30.0)); // the dated note is two half-lives old
        assert_eq!(rank(Analyzer::default(), &c, &p, &mut PathTokens::default()).unwrap().order[0], 1);
    }

    #[test]
    fn decay_and_dates() {
        assert!((decay_multiplier(30.0, 30.0) - 0.5).abs() < 1e-12);
        assert_eq!(memory_date_from_path("memory/2026-01-15.md"), Some((2026, 1, 15)));
        assert_eq!(memory_date_from_path("ws/memory/2026/notes/2026-01-15-standup.md"), Some((2026, 1, 15)));
        assert_eq!(memory_date_from_path("memory/2026-02-30.md"), None);
        assert_eq!(memory_date_from_path("notes/2026-01-15.md"), None);
        assert_eq!(memory_date_from_path("memory//2026-01-15.md"), None);
        assert_eq!(memory_date_from_path("a//memory/x/2026-01-15.md"), Some((2026, 1, 15)));
        assert_eq!(memory_date_from_path("memory/0000-01-01.md"), None);
        assert_eq!(memory_date_from_path("2026-01-15.md"), None);
        assert!(is_evergreen_path("memory/topics/rust.md"));
        assert!(is_evergreen_path("MEMORY.md"));
        assert!(
            is_evergreen_path("./USER.md") && !is_evergreen_path("users/a/USER.md") && !is_evergreen_path("user.md")
        );
        assert!(!is_evergreen_path("memory/2026-01-15.md"));
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }
}
