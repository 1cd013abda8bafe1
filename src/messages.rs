//! Ranked search over transcript messages: an in-RAM tantivy mirror of the session store's full-text rows.
//!
//! Rows arrive already analyzed (the store keeps each message's analyzer tokens, space-separated), so they are
//! indexed by splitting on whitespace. A query's weighted terms come from [`Analyzer::query_terms`]; BM25 (tantivy,
//! k1 = 1.2, b = 0.75, block-max WAND) proposes candidates, and each is re-scored with a coverage bonus: the share of
//! the question's IDF-weighted terms the message holds, as `bm25 · (0.5 + coverage)`, so a message that answers
//! more of the question outranks one that repeats a single word of it, plus a fifth of what the other candidates
//! of its session scored (session context: the answer sits where the conversation was about the question).

use std::sync::Mutex;

use rustc_hash::FxHashMap;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STRING};
use tantivy::tokenizer::WhitespaceTokenizer;
use tantivy::{DocAddress, DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term, TERMINATED};

use crate::analyzer::Analyzer;
use crate::error::{Error, Result};

const TOKENIZER: &str = "memsift_tokens";
/// BM25 proposes this many candidates per hit wanted (at least [`MIN_CANDIDATES`]) for the coverage re-ranking.
const CANDIDATES_PER_HIT: usize = 8;
const MIN_CANDIDATES: usize = 100;
/// At most this many query terms (the most telling by weight times IDF) are searched: a 4,096-character question
/// costs about what a short one does.
const MAX_TERMS: usize = 48;
const WRITER_MEMORY: usize = 32 << 20;
/// `score · (COVERAGE_BASE + coverage)`: a message holding every telling term scores 3× one holding none of weight.
const COVERAGE_BASE: f32 = 0.5;
/// The share of the other candidates' scores in the same session added to a message's own. Chosen on the
/// conversational dev set (`benches/conversations.py`, SciFact and CMRC 2018 as sessions of four documents each):
/// recall@5 0.603 / 0.833 without it, 0.690 / 0.862 with 0.2, 0.678 / 0.858 with a ±4-message window instead.
const SESSION_CONTEXT: f32 = 0.2;

/// One message row: its id (the store's event sequence number), session key and analyzer tokens.
pub struct MessageRow {
    pub id: u64,
    pub session: String,
    pub tokens: String,
}

/// Which sessions a search may return.
pub enum Sessions<'a> {
    /// Only these.
    Only(&'a [String]),
    /// All but these.
    Except(&'a [String]),
}

pub struct MessageIndex {
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    id: Field,
    session: Field,
    session_hash: Field,
    tokens: Field,
    analyzer: Analyzer,
}

fn session_hash(key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = rustc_hash::FxHasher::default();
    key.hash(&mut hasher);
    hasher.finish()
}

fn error(e: impl std::fmt::Display) -> Error {
    Error::Index { location: "(message index, in memory)".to_owned(), message: e.to_string() }
}

impl MessageIndex {
    /// An empty index whose queries are analyzed with `stem` (as the rows were).
    pub fn new(stem: bool) -> Result<Self> {
        let mut builder = Schema::builder();
        let id = builder.add_u64_field("id", INDEXED | FAST);
        let session = builder.add_text_field("session", STRING);
        let session_hash = builder.add_u64_field("session_hash", FAST);
        let tokens = builder.add_text_field(
            "tokens",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default().set_tokenizer(TOKENIZER).set_index_option(IndexRecordOption::WithFreqs),
            ),
        );
        let index = Index::create_in_ram(builder.build());
        index.tokenizers().register(TOKENIZER, WhitespaceTokenizer::default());
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(error)?;
        let writer = index.writer_with_num_threads(1, WRITER_MEMORY).map_err(error)?;
        Ok(Self {
            reader,
            writer: Mutex::new(writer),
            id,
            session,
            session_hash,
            tokens,
            analyzer: Analyzer::new(stem),
        })
    }

    fn writer(&self) -> std::sync::MutexGuard<'_, IndexWriter> {
        self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Add rows and make them searchable.
    pub fn add(&self, rows: &[MessageRow]) -> Result<()> {
        let mut writer = self.writer();
        for row in rows {
            let mut doc = TantivyDocument::default();
            doc.add_u64(self.id, row.id);
            doc.add_text(self.session, &row.session);
            doc.add_u64(self.session_hash, session_hash(&row.session));
            doc.add_text(self.tokens, &row.tokens);
            writer.add_document(doc).map_err(error)?;
        }
        writer.commit().map_err(error)?;
        self.reader.reload().map_err(error)
    }

    /// Remove the rows of these sessions (visible after the next [`add`](Self::add)).
    pub fn delete_sessions(&self, sessions: &[String]) -> Result<()> {
        let writer = self.writer();
        for key in sessions {
            writer.delete_term(Term::from_field_text(self.session, key));
        }
        Ok(())
    }

    /// Remove every row.
    pub fn clear(&self) -> Result<()> {
        let mut writer = self.writer();
        writer.delete_all_documents().map_err(error)?;
        writer.commit().map_err(error)?;
        self.reader.reload().map_err(error)
    }

    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// The best `k` messages for `query` among `sessions`, best first, as `(id, score)`.
    pub fn search(&self, query: &str, k: usize, sessions: &Sessions<'_>) -> Result<Vec<(u64, f32)>> {
        let searcher = self.reader.searcher();
        let docs = searcher.num_docs();
        if k == 0 || docs == 0 {
            return Ok(Vec::new());
        }
        // Each term with its query weight times IDF; terms no message holds are dropped.
        let mut terms: Vec<(Term, f32, f32)> = Vec::new();
        for (text, weight) in self.analyzer.query_terms(query) {
            let term = Term::from_field_text(self.tokens, &text);
            let df = searcher.doc_freq(&term).map_err(error)?;
            if df > 0 {
                let idf = (1.0 + (docs as f32 - df as f32 + 0.5) / (df as f32 + 0.5)).ln();
                terms.push((term, weight, weight * idf));
            }
        }
        terms.sort_by(|a, b| b.2.total_cmp(&a.2));
        terms.truncate(MAX_TERMS);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let should: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|(term, weight, _)| {
                let q: Box<dyn Query> = Box::new(BoostQuery::new(
                    Box::new(TermQuery::new(term.clone(), IndexRecordOption::WithFreqs)),
                    *weight,
                ));
                (Occur::Should, q)
            })
            .collect();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, Box::new(BooleanQuery::new(should)))];
        let session_terms = |keys: &[String]| -> Box<dyn Query> {
            Box::new(BooleanQuery::new(
                keys.iter()
                    .map(|key| {
                        let q: Box<dyn Query> = Box::new(TermQuery::new(
                            Term::from_field_text(self.session, key),
                            IndexRecordOption::Basic,
                        ));
                        (Occur::Should, q)
                    })
                    .collect(),
            ))
        };
        match sessions {
            Sessions::Only(keys) => {
                // A filter must not change scores: a zero constant score.
                clauses.push((Occur::Must, Box::new(ConstScoreQuery::new(session_terms(keys), 0.0))));
            }
            Sessions::Except(keys) if !keys.is_empty() => clauses.push((Occur::MustNot, session_terms(keys))),
            Sessions::Except(_) => {}
        }
        let wanted = (k * CANDIDATES_PER_HIT).max(MIN_CANDIDATES).min(usize::try_from(docs).unwrap_or(usize::MAX));
        let hits: Vec<(f32, DocAddress)> = searcher
            .search(&BooleanQuery::new(clauses), &TopDocs::with_limit(wanted).order_by_score())
            .map_err(error)?;

        // Coverage: which query terms each candidate holds, by seeking each term's postings in doc order.
        let total: f32 = terms.iter().map(|t| t.2).sum();
        let mut by_segment: FxHashMap<u32, Vec<(u32, usize)>> = FxHashMap::default();
        for (i, (_, addr)) in hits.iter().enumerate() {
            by_segment.entry(addr.segment_ord).or_default().push((addr.doc_id, i));
        }
        let mut held = vec![0f32; hits.len()];
        let mut ids = vec![None; hits.len()];
        let mut sessions = vec![0u64; hits.len()];
        for (segment_ord, mut docs) in by_segment {
            docs.sort_unstable();
            let segment = searcher.segment_reader(segment_ord);
            let id_column = segment.fast_fields().u64("id").map_err(error)?;
            let session_column = segment.fast_fields().u64("session_hash").map_err(error)?;
            for &(doc, i) in &docs {
                ids[i] = id_column.first(doc);
                sessions[i] = session_column.first(doc).unwrap_or_default();
            }
            let inverted = segment.inverted_index(self.tokens).map_err(error)?;
            for (term, _, weight) in &terms {
                let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic).map_err(error)? else {
                    continue;
                };
                for &(doc, i) in &docs {
                    if postings.doc() == TERMINATED {
                        break;
                    }
                    if postings.doc() <= doc && postings.seek(doc) == doc {
                        held[i] += weight;
                    }
                }
            }
        }
        // A message's own score, then a share of what the rest of its session scored: the answer to a question
        // usually sits where the conversation was about it.
        let own: Vec<f32> =
            hits.iter().enumerate().map(|(i, (score, _))| score * (COVERAGE_BASE + held[i] / total)).collect();
        let mut context: FxHashMap<u64, f32> = FxHashMap::default();
        for (i, score) in own.iter().enumerate() {
            *context.entry(sessions[i]).or_default() += score;
        }
        let mut ranked: Vec<(u64, f32)> = own
            .iter()
            .enumerate()
            .filter_map(|(i, score)| ids[i].map(|id| (id, score + SESSION_CONTEXT * (context[&sessions[i]] - score))))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(k);
        Ok(ranked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: u64, session: &str, text: &str) -> MessageRow {
        MessageRow { id, session: session.into(), tokens: Analyzer::new(true).tokenize(text).join(" ") }
    }

    #[test]
    fn a_message_whose_session_talked_about_the_question_ranks_first() {
        let index = MessageIndex::new(true).unwrap();
        index
            .add(&[
                row(1, "trip", "we booked the flight to Lisbon"),
                row(2, "trip", "the hotel in Lisbon is near the river"),
                row(3, "other", "my cousin lives in Lisbon"),
                row(4, "trip", "the hotel has a pool"),
            ])
            .unwrap();
        let hits = index.search("which hotel in Lisbon", 10, &Sessions::Except(&[])).unwrap();
        assert_eq!(hits[0].0, 2);
        let order: Vec<u64> = hits.iter().map(|h| h.0).collect();
        let rank = |id: u64| order.iter().position(|&x| x == id).unwrap();
        assert!(rank(1) < rank(3), "the trip session's other Lisbon message gains from its context: {order:?}");
    }

    #[test]
    fn coverage_ranks_the_message_that_answers_more_of_the_question() {
        let index = MessageIndex::new(true).unwrap();
        index
            .add(&[
                row(1, "a", "Caroline went to the LGBTQ support group yesterday"),
                row(2, "d", "support support support, we all need support"),
                row(3, "b", "Caroline's group talk"),
                row(4, "c", "nothing relevant here"),
            ])
            .unwrap();
        let hits =
            index.search("When did Caroline go to the LGBTQ support group?", 10, &Sessions::Except(&[])).unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 3, 2]);
        let only_b = index.search("Caroline support group", 10, &Sessions::Only(&["b".to_owned()])).unwrap();
        assert_eq!(only_b.iter().map(|h| h.0).collect::<Vec<_>>(), [3]);
        let not_a =
            index.search("Caroline support group", 10, &Sessions::Except(&["a".to_owned(), "d".to_owned()])).unwrap();
        assert_eq!(not_a.iter().map(|h| h.0).collect::<Vec<_>>(), [3]);
        assert!(index.search("???", 10, &Sessions::Except(&[])).unwrap().is_empty());
        index.delete_sessions(&["a".to_owned()]).unwrap();
        index.delete_sessions(&["d".to_owned()]).unwrap();
        index.add(&[row(5, "a", "the support group moved")]).unwrap();
        let now = index.search("support group", 10, &Sessions::Except(&[])).unwrap();
        assert_eq!(now.iter().map(|h| h.0).collect::<Vec<_>>(), [5, 3]);
        index.clear().unwrap();
        assert_eq!(index.num_docs(), 0);
    }
}
