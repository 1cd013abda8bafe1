//! The first look of "one hit per fact" (`memsift.search.dedupe.collapse`): which better-ranked results each
//! result may repeat, judged by the words they share, so that only those pairs are fingerprinted.
//!
//! A result's words are its text casefolded with ASCII punctuation read as space, split at whitespace (Python's
//! `frozenset(text.casefold().translate(punctuation -> space).split())`). Two results are looked at closely when
//! their [`SKETCH`]-word sketches (each one's alphabetically first words) share at least half of the later one's,
//! and their word sets have a Jaccard similarity of at least `coarse`.

use rustc_hash::{FxHashMap, FxHashSet};

/// The words of a result through which it finds the results it may repeat.
pub const SKETCH: usize = 8;

/// Python's `str.casefold` of one character where it differs from the character's lowercase (the rest of the full
/// case folds, ligatures and a few scripts' letters, are left to lowercase: a near copy keeps its own spelling).
fn fold(c: char, out: &mut String) {
    match c {
        'ß' | 'ẞ' => out.push_str("ss"),
        'ς' => out.push('σ'),
        'ſ' => out.push('s'),
        _ => out.extend(c.to_lowercase()),
    }
}

/// Whitespace as Python's `str.split()` sees it: Rust's, plus the four ASCII separators `\x1c`-`\x1f`.
fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `text` casefolded, with ASCII punctuation and every whitespace as one space.
fn folded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(if c.is_ascii_punctuation() || is_space(c) { ' ' } else { c.to_ascii_lowercase() });
        } else if is_space(c) {
            out.push(' ');
        } else {
            fold(c, &mut out);
        }
    }
    out
}

/// The casefolded words of a [`folded`] text.
pub fn word_set(folded: &str) -> FxHashSet<&str> {
    folded.split(' ').filter(|w| !w.is_empty()).collect()
}

/// Whether two word sets may hold the same fact: similar sizes, and a Jaccard similarity of at least `coarse`.
fn alike(a: &FxHashSet<&str>, b: &FxHashSet<&str>, coarse: f64) -> bool {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if (small.len() as f64) < coarse * large.len() as f64 {
        return false;
    }
    let shared = small.iter().filter(|w| large.contains(*w)).count();
    shared as f64 >= coarse * (a.len() + b.len() - shared) as f64
}

/// For each text (best-ranked first), the indices of the earlier texts it may repeat, ascending: their sketches
/// share at least half of its own (and at least one word), and their word sets are [`alike`].
pub fn near_copy_candidates(texts: &[&str], coarse: f64) -> Vec<Vec<usize>> {
    let folded: Vec<String> = texts.iter().map(|t| folded(t)).collect();
    let sets: Vec<FxHashSet<&str>> = folded.iter().map(|t| word_set(t)).collect();
    let mut by_word: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    let mut out = Vec::with_capacity(texts.len());
    for (i, words) in sets.iter().enumerate() {
        let mut sketch: Vec<&str> = words.iter().copied().collect();
        if sketch.len() > SKETCH {
            sketch.select_nth_unstable(SKETCH);
            sketch.truncate(SKETCH);
        }
        let mut shared: FxHashMap<usize, usize> = FxHashMap::default();
        for word in &sketch {
            for &j in by_word.get(word).map_or(&[][..], Vec::as_slice) {
                *shared.entry(j).or_default() += 1;
            }
        }
        let mut alike_ones: Vec<usize> = shared
            .into_iter()
            .filter(|&(j, n)| n >= sketch.len() / 2 && alike(words, &sets[j], coarse))
            .map(|(j, _)| j)
            .collect();
        alike_ones.sort_unstable();
        out.push(alike_ones);
        for word in sketch {
            by_word.entry(word).or_default().push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_casefolded_with_ascii_punctuation_as_space() {
        let text = folded("Straße, DEPLOY-key\u{1f}ΟΔΟΣ (v2.1)\u{3000} «x»");
        let mut sorted: Vec<&str> = word_set(&text).into_iter().collect();
        sorted.sort_unstable();
        assert_eq!(sorted, ["1", "deploy", "key", "strasse", "v2", "«x»", "οδοσ"]);
    }

    #[test]
    fn a_near_copy_finds_the_earlier_text_and_others_do_not() {
        let a = "the deploy key lives in the team vault under ops slash keys";
        let copy = "The deploy key lives in the *team* vault, under ops/keys!";
        let other = "lunch with the design team on friday at noon";
        assert_eq!(near_copy_candidates(&[a, other, copy, ""], 0.7), vec![vec![], vec![], vec![0], vec![]]);
    }
}
