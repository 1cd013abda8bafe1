//! Ranked search over transcript messages: an in-RAM tantivy mirror of the session store's full-text rows.
//!
//! Rows arrive already analyzed (the store keeps each message's analyzer tokens, space-separated), so they are
//! indexed by splitting on whitespace. A query's weighted terms come from [`Analyzer::query_terms`]; BM25 (tantivy,
//! k1 = 1.2, b = 0.75, block-max WAND) proposes candidates, and each is re-scored with a coverage bonus: the share of
//! the question's IDF-weighted terms the message holds, as `bm25 · (0.5 + coverage)`, so a message that answers
//! more of the question outranks one that repeats a single word of it. Each message is also indexed with the
//! tokens of the message before it in its session (reply context, [`REPLY_CONTEXT`]: "What movies do you like?"
//! finds the answer after it), and a second in-RAM index holds one document per stretch of a session
//! ([`SESSION_BLOCK`] messages), whose BM25 adds [`SESSION_BM25`] of the best message score, scaled by how well that
//! part of the conversation as a whole answers the question against the best candidate's. Constants chosen on LoCoMo-dev and the
//! conversational dev set together (`benches/conversations.py`; issue 42).

use std::sync::Mutex;

use rustc_hash::{FxHashMap, FxHashSet};
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
/// The weight of the reply-context field (each message indexed with the tokens of the message before it in its
/// session, so an answer is found by the words of the question it answers) against the message's own words.
/// Chosen with [`SESSION_BM25`] on LoCoMo-dev and the conversational dev set together (`benches/conversations.py`,
/// keyword only, turn / session recall@5; issue 42): see [`SESSION_BM25`].
const REPLY_CONTEXT: f32 = 0.5;
/// A message gains `SESSION_BM25 · best · s`, where `s` is its session's BM25 (the session as one document) over
/// the best candidate session's and `best` the best message's own score. It replaced issue 29's session context
/// (a fifth of the other candidates' scores in the session), which a chatty session repeating one word of the
/// question won. Keyword only, turn / session recall@5, LoCoMo-dev overall; SciFact; CMRC 2018 (Chit Chat 0.990
/// throughout):
///
/// | variant | LoCoMo-dev | SciFact | CMRC 2018 |
/// |---|--:|--:|--:|
/// | session context 0.2 (issue 29) | 0.649 / 0.862 | 0.648 / 0.792 | 0.861 / 0.971 |
/// | + reply context 0.4 | 0.672 / 0.846 | 0.652 / 0.773 | 0.856 / 0.963 |
/// | session BM25 0.35, no reply context | 0.660 / 0.892 | 0.641 / 0.850 | 0.860 / 0.986 |
/// | reply 0.4, session BM25 0.35 and session context 0.2 | 0.678 / 0.849 | 0.671 / 0.786 | 0.864 / 0.965 |
/// | reply 0.4, session BM25 0.35 | 0.683 / 0.885 | 0.664 / 0.840 | 0.862 / 0.984 |
/// | reply 0.4, session BM25 0.5 | 0.690 / 0.882 | 0.674 / 0.849 | 0.872 / 0.985 |
/// | reply 0.4, session BM25 0.7 | 0.687 / 0.870 | 0.681 / 0.851 | 0.877 / 0.985 |
/// | **reply 0.5 (own term required), session BM25 0.5** | 0.690 / 0.887 | 0.677 / 0.844 | 0.869 / 0.984 |
///
/// Counting reply terms in coverage (at half weight) changed nothing that held (0.680 / 0.884 at 0.4 / 0.35);
/// matching on reply words alone (no term of the message's own) 0.690 / 0.882 against 0.687 / 0.882, so a message
/// must hold a word of the question. With a vector leg (LoCoMo-dev): all-MiniLM-L6-v2 0.638 / 0.842 → 0.664 / 0.868,
/// bge-small-en-v1.5 0.692 / 0.871 → 0.721 / 0.885.
const SESSION_BM25: f32 = 0.5;
/// Messages of a session per session-level document. A live agent appends to a session all day: only its open
/// block is indexed again on each catch-up, and a conversation that long has moved through many topics. In a
/// 10k-message session, a search after each one-message append took 27.6 ms re-adding the whole session, 14.6 ms
/// with blocks and 8.3 ms with both indexes committing at once (3.8 ms without a session index; 0.8 ms with no
/// append). LoCoMo's sessions (at most 43 turns) and the dev set's (four documents) each fit one block, so the
/// figures above hold.
const SESSION_BLOCK: usize = 64;

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
    writer: Mutex<Writers>,
    id: Field,
    session: Field,
    /// Which session-level document the message belongs to ([`block_hash`]).
    block_hash: Field,
    tokens: Field,
    reply_to: Field,
    /// One document per block of a session (its messages' tokens), for session-level BM25.
    sessions: IndexReader,
    analyzer: Analyzer,
}

/// The writers of both indexes and what each session holds so far, under one lock.
struct Writers {
    messages: IndexWriter,
    sessions: IndexWriter,
    /// Each session's last block so far and its last message's tokens.
    texts: FxHashMap<String, SessionText>,
}

#[derive(Default)]
struct SessionText {
    /// Which block of the session the next message joins, unless it is full.
    block: u64,
    /// Messages in `block` so far, and their tokens (space-separated).
    count: usize,
    all: String,
    last: String,
}

/// A block's key in the session index: its session and number.
fn block_key(session: &str, block: u64) -> String {
    format!("{session}\u{0}{block}")
}

fn block_hash(session: &str, block: u64) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = rustc_hash::FxHasher::default();
    (session, block).hash(&mut hasher);
    hasher.finish()
}

/// The same text term in another field.
fn retarget(term: &Term, field: Field) -> Term {
    Term::from_field_text(field, term.value().as_str().unwrap_or_default())
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
        let block_field = builder.add_u64_field("block_hash", FAST);
        let tokens = builder.add_text_field(
            "tokens",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default().set_tokenizer(TOKENIZER).set_index_option(IndexRecordOption::WithFreqs),
            ),
        );
        let text = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default().set_tokenizer(TOKENIZER).set_index_option(IndexRecordOption::WithFreqs),
        );
        let reply_to = builder.add_text_field("reply_to", text.clone());
        let index = Index::create_in_ram(builder.build());
        index.tokenizers().register(TOKENIZER, WhitespaceTokenizer::default());
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(error)?;
        let writer = index.writer_with_num_threads(1, WRITER_MEMORY).map_err(error)?;

        let mut builder = Schema::builder();
        builder.add_text_field("session", STRING);
        builder.add_text_field("block", STRING);
        builder.add_u64_field("block_hash", FAST);
        builder.add_text_field("tokens", text);
        let by_session = Index::create_in_ram(builder.build());
        by_session.tokenizers().register(TOKENIZER, WhitespaceTokenizer::default());
        let sessions = by_session.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(error)?;
        let sessions_writer = by_session.writer_with_num_threads(1, WRITER_MEMORY).map_err(error)?;
        Ok(Self {
            reader,
            writer: Mutex::new(Writers { messages: writer, sessions: sessions_writer, texts: FxHashMap::default() }),
            id,
            session,
            block_hash: block_field,
            tokens,
            reply_to,
            sessions,
            analyzer: Analyzer::new(stem),
        })
    }

    fn writer(&self) -> std::sync::MutexGuard<'_, Writers> {
        self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Add rows and make them searchable.
    pub fn add(&self, rows: &[MessageRow]) -> Result<()> {
        let mut guard = self.writer();
        let writers = &mut *guard;
        let mut touched: FxHashSet<&str> = FxHashSet::default();
        // Blocks that filled up in this batch, as (session, block, tokens): indexed below with the open ones.
        let mut closed: Vec<(&str, u64, String)> = Vec::new();
        for row in rows {
            let text = writers.texts.entry(row.session.clone()).or_default();
            if text.count == SESSION_BLOCK {
                closed.push((&row.session, text.block, std::mem::take(&mut text.all)));
                text.block += 1;
                text.count = 0;
            }
            let mut doc = TantivyDocument::default();
            doc.add_u64(self.id, row.id);
            doc.add_text(self.session, &row.session);
            doc.add_u64(self.block_hash, block_hash(&row.session, text.block));
            doc.add_text(self.tokens, &row.tokens);
            doc.add_text(self.reply_to, &text.last);
            writers.messages.add_document(doc).map_err(error)?;
            if !text.all.is_empty() {
                text.all.push(' ');
            }
            text.all.push_str(&row.tokens);
            text.count += 1;
            text.last.clone_from(&row.tokens);
            touched.insert(&row.session);
        }
        // The blocks this batch closed and each touched session's open one, each indexed again whole (a block
        // holds at most SESSION_BLOCK messages, so an append costs the same however long the session is).
        let open = touched.into_iter().map(|session| {
            let text = &writers.texts[session];
            (session, text.block, text.all.clone())
        });
        let blocks: Vec<(&str, u64, String)> = closed.into_iter().chain(open.collect::<Vec<_>>()).collect();
        let schema = self.sessions.searcher().schema().clone();
        let fields = |name: &str| schema.get_field(name).map_err(error);
        let (key_field, block_field, hash_field, tokens_field) =
            (fields("session")?, fields("block")?, fields("block_hash")?, fields("tokens")?);
        for (session, block, tokens) in blocks {
            let key = block_key(session, block);
            writers.sessions.delete_term(Term::from_field_text(block_field, &key));
            let mut doc = TantivyDocument::default();
            doc.add_text(key_field, session);
            doc.add_text(block_field, &key);
            doc.add_u64(hash_field, block_hash(session, block));
            doc.add_text(tokens_field, &tokens);
            writers.sessions.add_document(doc).map_err(error)?;
        }
        // Both commits at once: each costs milliseconds (a new segment), and a live agent's search pays for them.
        let (messages, sessions) = (&mut writers.messages, &mut writers.sessions);
        let (a, b) = rayon::join(|| messages.commit(), || sessions.commit());
        a.map_err(error)?;
        b.map_err(error)?;
        self.reader.reload().map_err(error)?;
        self.sessions.reload().map_err(error)
    }

    /// Remove the rows of these sessions (visible after the next [`add`](Self::add)).
    pub fn delete_sessions(&self, sessions: &[String]) -> Result<()> {
        let mut writers = self.writer();
        let key_field = self.sessions.searcher().schema().get_field("session").map_err(error)?;
        for key in sessions {
            writers.messages.delete_term(Term::from_field_text(self.session, key));
            writers.sessions.delete_term(Term::from_field_text(key_field, key));
            writers.texts.remove(key);
        }
        Ok(())
    }

    /// Remove every row.
    pub fn clear(&self) -> Result<()> {
        let mut writers = self.writer();
        writers.texts.clear();
        writers.messages.delete_all_documents().map_err(error)?;
        writers.messages.commit().map_err(error)?;
        writers.sessions.delete_all_documents().map_err(error)?;
        writers.sessions.commit().map_err(error)?;
        self.reader.reload().map_err(error)?;
        self.sessions.reload().map_err(error)
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
        let clauses = self.candidates(&terms, sessions);
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
            let session_column = segment.fast_fields().u64("block_hash").map_err(error)?;
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
        // A message's own score, then its session's: the answer to a question usually sits where the conversation
        // was about it. The session's BM25 (all its messages as one document) relative to the best candidate
        // session's, times the best message score.
        let own: Vec<f32> =
            hits.iter().enumerate().map(|(i, (score, _))| score * (COVERAGE_BASE + held[i] / total)).collect();
        let candidate_sessions: FxHashSet<u64> = sessions.iter().copied().collect();
        let by_session = self.session_scores(&terms, &candidate_sessions)?;
        let best_own = own.iter().copied().fold(0f32, f32::max);
        let mut ranked: Vec<(u64, f32)> = own
            .iter()
            .enumerate()
            .filter_map(|(i, score)| {
                let session = by_session.get(&sessions[i]).copied().unwrap_or_default();
                ids[i].map(|id| (id, score + SESSION_BM25 * best_own * session))
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(k);
        Ok(ranked)
    }

    /// The candidate query: the terms in the message's own words (required) and in the message it replies to,
    /// within `sessions`.
    fn candidates(&self, terms: &[(Term, f32, f32)], sessions: &Sessions<'_>) -> Vec<(Occur, Box<dyn Query>)> {
        let boosted = |term: Term, weight: f32| -> (Occur, Box<dyn Query>) {
            (
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)), weight)),
            )
        };
        // A message must hold a term itself; the message it replies to adds a share of its own score.
        let own: Vec<(Occur, Box<dyn Query>)> =
            terms.iter().map(|(term, weight, _)| boosted(term.clone(), *weight)).collect();
        let replies: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|(term, weight, _)| boosted(retarget(term, self.reply_to), weight * REPLY_CONTEXT))
            .collect();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![
            (Occur::Must, Box::new(BooleanQuery::new(own))),
            (Occur::Should, Box::new(BooleanQuery::new(replies))),
        ];
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
        clauses
    }

    /// Session-level BM25 of the query's terms for the sessions in `wanted` (by hash), each divided by the best of
    /// them: 1 for the session whose messages together hold the question best.
    fn session_scores(&self, terms: &[(Term, f32, f32)], wanted: &FxHashSet<u64>) -> Result<FxHashMap<u64, f32>> {
        let searcher = self.sessions.searcher();
        let count = usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX);
        let mut scores = FxHashMap::default();
        if count == 0 || wanted.is_empty() {
            return Ok(scores);
        }
        let field = searcher.schema().get_field("tokens").map_err(error)?;
        let should: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|(term, weight, _)| {
                let term = retarget(term, field);
                let q: Box<dyn Query> =
                    Box::new(BoostQuery::new(Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)), *weight));
                (Occur::Should, q)
            })
            .collect();
        let hits =
            searcher.search(&BooleanQuery::new(should), &TopDocs::with_limit(count).order_by_score()).map_err(error)?;
        let mut best = 0f32;
        for (score, addr) in hits {
            let column = searcher.segment_reader(addr.segment_ord).fast_fields().u64("block_hash").map_err(error)?;
            let hash = column.first(addr.doc_id).unwrap_or_default();
            if wanted.contains(&hash) {
                best = best.max(score);
                scores.insert(hash, score);
            }
        }
        if best > 0.0 {
            for s in scores.values_mut() {
                *s /= best;
            }
        }
        Ok(scores)
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
    fn a_reply_is_found_by_the_words_of_the_message_it_answers() {
        let index = MessageIndex::new(true).unwrap();
        let talk = [
            "Sam: what type of movies do you like best, Jo?",
            "Jo: action movies, the louder the better, explosions and car chases",
            "Sam: lunch was nice",
            "Jo: movies at the cinema",
        ];
        // Added in two batches: the reply context carries across them.
        index.add(&[row(1, "a", talk[0])]).unwrap();
        index.add(&[row(2, "a", talk[1]), row(3, "a", talk[2]), row(4, "a", talk[3])]).unwrap();
        let order = |index: &MessageIndex| -> Vec<u64> {
            index
                .search("What type of movies does Jo like best?", 10, &Sessions::Except(&[]))
                .unwrap()
                .iter()
                .map(|h| h.0)
                .collect()
        };
        assert_eq!(order(&index), [1, 2, 4], "the answer after the question outranks a shorter mention");
        // A rewritten session is re-added whole, its context rebuilt in order.
        index.delete_sessions(&["a".to_owned()]).unwrap();
        index.add(&(1..=4).map(|i| row(i + 10, "a", talk[i as usize - 1])).collect::<Vec<_>>()).unwrap();
        assert_eq!(order(&index), [11, 12, 14]);
    }

    #[test]
    fn a_session_whose_messages_together_answer_outranks_one_repeating_a_word() {
        let index = MessageIndex::new(true).unwrap();
        let mut rows: Vec<MessageRow> = (1..=15).map(|n| row(n, "chat", &format!("hotel talk {n}"))).collect();
        rows.extend((0..60).map(|n| row(100 + n, &format!("misc{}", n % 5), &format!("filler words number {n}"))));
        rows.push(row(20, "chat", "the hotel pool was cold"));
        rows.push(row(21, "trip", "we flew to Lisbon in May"));
        rows.push(row(22, "trip", "our hotel had a rooftop pool"));
        index.add(&rows).unwrap();
        let hits = index.search("Which hotel in Lisbon had a pool?", 10, &Sessions::Except(&[])).unwrap();
        assert_eq!(hits[0].0, 22, "{hits:?}");
        let top: Vec<u64> = hits.iter().take(3).map(|h| h.0).collect();
        assert!(top.contains(&21), "the trip's other message beats the chatty session's: {top:?}");
    }

    #[test]
    fn a_long_session_is_scored_by_its_stretches_and_appends_match_one_batch() {
        // 150 messages: the first block talks about the boat, the last one about the garden.
        let text = |i: usize| {
            if i < SESSION_BLOCK {
                format!("the sailing boat needs varnish {i}")
            } else {
                format!("planted tomatoes in the garden {i}")
            }
        };
        let rows: Vec<MessageRow> = (0..150).map(|i| row(i as u64, "s", &text(i))).collect();
        let whole = MessageIndex::new(true).unwrap();
        whole.add(&rows).unwrap();
        let appended = MessageIndex::new(true).unwrap();
        for chunk in rows.chunks(7) {
            appended.add(chunk).unwrap();
        }
        let sessions = Sessions::Except(&[]);
        for query in ["boat varnish", "garden tomatoes", "boat garden"] {
            assert_eq!(whole.search(query, 10, &sessions).unwrap(), appended.search(query, 10, &sessions).unwrap());
        }
        // Three blocks were indexed, the last one open.
        assert_eq!(whole.sessions.searcher().num_docs(), 3);
        assert_eq!(appended.sessions.searcher().num_docs(), 3);
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
