//! BM25 chunk index on tantivy (k1 = 1.2, b = 0.75), in RAM or in a directory.
//!
//! Queries are ranked OR queries of the analyzer's tokens built as term queries,
//! never parsed as query syntax, so user text cannot inject operators. The index
//! is derived data: the caller's store is the truth and records which store
//! generation a commit reflects in the commit payload.

use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rustc_hash::FxHashMap;
use tantivy::query::EnableScoring;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STRING};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy::{DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, Score, Searcher, TantivyDocument, Term};

use crate::analyzer::{Analyzer, TokenBuf};
use crate::error::{invalid, Error, Result};

const TOKENIZER_STEM: &str = "memsift_stem";
const TOKENIZER_PLAIN: &str = "memsift_plain";
/// Indexes up to this many chunks are merged into one segment at each commit.
const COMPACT_MAX_DOCS: u64 = 50_000;

/// From this many documents a search runs on rayon's worker threads (see `search_field`); below, the caller's
/// thread answers in well under a millisecond, and a keyword-only process need not start the workers.
const IN_POOL_FROM_DOCS: u64 = 50_000;

/// Indexing threads of a writer: one per core but one, at most four. A sync reads, hashes and chunks the next files
/// (rayon) and writes the store (the caller's thread) while tantivy indexes the last ones: on two cores a second
/// indexing thread only took turns with them (100k chunks: 16-19 MB/s with two, 19-23 MB/s with one).
fn writer_threads() -> usize {
    (std::thread::available_parallelism().map_or(1, std::num::NonZero::get) - 1).clamp(1, 4)
}

/// One chunk to index.
#[derive(Clone, Debug)]
pub struct ChunkDoc {
    pub id: u64,
    pub path: String,
    pub source: String,
    pub text: String,
}

/// tantivy adapter for [`Analyzer`]: analyzes into a reusable arena, then streams.
#[derive(Clone)]
struct MemsiftTokenizer {
    analyzer: Analyzer,
    buf: TokenBuf,
}

struct ArenaStream<'a> {
    buf: &'a TokenBuf,
    next: usize,
    token: Token,
}

impl TokenStream for ArenaStream<'_> {
    fn advance(&mut self) -> bool {
        if self.next >= self.buf.len() {
            return false;
        }
        self.token.text.clear();
        self.token.text.push_str(self.buf.get(self.next));
        self.token.position = self.next;
        self.next += 1;
        true
    }
    fn token(&self) -> &Token {
        &self.token
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

impl Tokenizer for MemsiftTokenizer {
    type TokenStream<'a> = ArenaStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> ArenaStream<'a> {
        self.buf.clear();
        self.analyzer.analyze_into(text, &mut self.buf);
        ArenaStream { buf: &self.buf, next: 0, token: Token::default() }
    }
}

#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    path: Field,
    source: Field,
    text: Field,
    path_text: Field,
}

fn build_schema(stem: bool) -> Schema {
    let tokenizer = if stem { TOKENIZER_STEM } else { TOKENIZER_PLAIN };
    // Frequencies without positions: we never run phrase queries.
    let analyzed = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(tokenizer).set_index_option(IndexRecordOption::WithFreqs),
    );
    let mut builder = Schema::builder();
    builder.add_u64_field("id", INDEXED | FAST);
    builder.add_text_field("path", STRING);
    builder.add_text_field("source", STRING);
    builder.add_text_field("text", analyzed.clone());
    builder.add_text_field("path_text", analyzed);
    builder.build()
}

fn fields(schema: &Schema) -> Result<Fields> {
    let get = |name: &str| {
        schema.get_field(name).map_err(|_| Error::Index {
            location: String::new(),
            message: format!("schema has no field {name:?}; it was not created by memsift"),
        })
    };
    Ok(Fields {
        id: get("id")?,
        path: get("path")?,
        source: get("source")?,
        text: get("text")?,
        path_text: get("path_text")?,
    })
}

/// A BM25 index over chunks. All methods take `&self` and are safe to call from
/// several threads: searches run lock-free on the current reader, writes share
/// one lazily opened writer behind a mutex.
pub struct Bm25Index {
    index: Index,
    reader: IndexReader,
    writer: Mutex<Option<IndexWriter>>,
    fields: Fields,
    analyzer: Analyzer,
    location: Option<PathBuf>,
    writer_memory: usize,
    /// Generation of the commit the reader currently shows (read before reloading,
    /// so it never runs ahead of the searchable data).
    generation: Mutex<Option<u64>>,
}

impl Bm25Index {
    /// Open the index in `dir` (created if missing or empty) or, with `None`, in RAM.
    pub fn open(dir: Option<&Path>, stem: bool, writer_memory_mb: usize) -> Result<Self> {
        if !(15..=4096).contains(&writer_memory_mb) {
            return invalid!("writer_memory_mb must be between 15 and 4096, got {writer_memory_mb}");
        }
        let location = dir.map(Path::to_path_buf);
        let err = |e: &dyn std::fmt::Display| Error::Index {
            location: describe(location.as_deref()),
            message: e.to_string(),
        };
        let index = match dir {
            None => Index::create_in_ram(build_schema(stem)),
            Some(dir) => {
                if dir.exists() && !dir.is_dir() {
                    return Err(err(&"exists and is not a directory; pass a directory path"));
                }
                std::fs::create_dir_all(dir).map_err(|e| err(&e))?;
                if Index::exists(&tantivy::directory::MmapDirectory::open(dir).map_err(|e| err(&e))?)
                    .map_err(|e| err(&e))?
                {
                    Index::open_in_dir(dir).map_err(|e| err(&e))?
                } else {
                    Index::create_in_dir(dir, build_schema(stem)).map_err(|e| err(&e))?
                }
            }
        };
        let schema = index.schema();
        let fields = fields(&schema).map_err(|e| err(&e))?;
        let stored_tokenizer = match schema.get_field_entry(fields.text).field_type() {
            tantivy::schema::FieldType::Str(opts) => opts.get_indexing_options().map(|o| o.tokenizer().to_owned()),
            _ => None,
        };
        let stored_stem = match stored_tokenizer.as_deref() {
            Some(TOKENIZER_STEM) => true,
            Some(TOKENIZER_PLAIN) => false,
            other => return Err(err(&format!("unknown text tokenizer {other:?}; rebuild the index"))),
        };
        if stored_stem != stem {
            return Err(err(&format!(
                "was built with stem={stored_stem} but stem={stem} was requested; open it with stem={stored_stem} or delete the directory to rebuild"
            )));
        }
        for (name, stem) in [(TOKENIZER_STEM, true), (TOKENIZER_PLAIN, false)] {
            index
                .tokenizers()
                .register(name, MemsiftTokenizer { analyzer: Analyzer::new(stem), buf: TokenBuf::default() });
        }
        let generation = payload_generation(&index).map_err(|e| err(&e))?;
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(|e| err(&e))?;
        Ok(Self {
            index,
            reader,
            writer: Mutex::new(None),
            fields,
            analyzer: Analyzer::new(stem),
            location,
            writer_memory: writer_memory_mb << 20,
            generation: Mutex::new(generation),
        })
    }

    pub fn location(&self) -> Option<&Path> {
        self.location.as_deref()
    }

    pub fn stem(&self) -> bool {
        self.analyzer.stem
    }

    fn error(&self, e: impl std::fmt::Display) -> Error {
        Error::Index { location: describe(self.location.as_deref()), message: e.to_string() }
    }

    /// The writer, opened on first use (it holds the directory lock).
    fn writer(&self) -> Result<MutexGuard<'_, Option<IndexWriter>>> {
        let mut guard = self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_none() {
            let threads = writer_threads();
            let per_thread = (self.writer_memory / threads).max(15 << 20);
            let writer = self
                .index
                .writer_with_num_threads(threads, per_thread * threads)
                .map_err(|e| self.error(format!("cannot open a writer ({e}); is another process writing to it?")))?;
            *guard = Some(writer);
        }
        Ok(guard)
    }

    fn with_writer<T>(&self, f: impl FnOnce(&mut IndexWriter) -> tantivy::Result<T>) -> Result<T> {
        let mut guard = self.writer()?;
        let writer = guard.as_mut().expect("writer opened above");
        f(writer).map_err(|e| self.error(e))
    }

    /// Stage documents; they become searchable at the next [`commit`](Self::commit).
    pub fn add(&self, docs: &[ChunkDoc]) -> Result<()> {
        let f = self.fields;
        self.with_writer(|w| {
            for d in docs {
                let mut doc = TantivyDocument::default();
                doc.add_u64(f.id, d.id);
                doc.add_text(f.path, &d.path);
                doc.add_text(f.source, &d.source);
                doc.add_text(f.text, &d.text);
                doc.add_text(f.path_text, &d.path);
                w.add_document(doc)?;
            }
            Ok(())
        })
    }

    pub fn delete_ids(&self, ids: &[u64]) -> Result<()> {
        let f = self.fields;
        self.with_writer(|w| {
            for &id in ids {
                w.delete_term(Term::from_field_u64(f.id, id));
            }
            Ok(())
        })
    }

    pub fn delete_path(&self, path: &str) -> Result<()> {
        let f = self.fields;
        self.with_writer(|w| {
            w.delete_term(Term::from_field_text(f.path, path));
            Ok(())
        })
    }

    pub fn clear(&self) -> Result<()> {
        self.with_writer(|w| w.delete_all_documents().map(|_| ()))
    }

    pub fn rollback(&self) -> Result<()> {
        self.with_writer(|w| w.rollback().map(|_| ()))
    }

    /// Make staged changes durable and visible, recording `generation` in the commit payload.
    ///
    /// With `compact`, a small index is then merged into one segment: query cost
    /// grows with the segment count (each term is looked up per segment), and
    /// merging a few thousand chunks takes milliseconds. Larger indexes leave it
    /// to tantivy's background merge policy. Intermediate commits of a long sync
    /// skip it (merging the whole index at each would make the sync quadratic).
    pub fn commit(&self, generation: Option<u64>, compact: bool) -> Result<()> {
        self.with_writer(|w| {
            let mut prepared = w.prepare_commit()?;
            if let Some(generation) = generation {
                prepared.set_payload(&generation.to_string());
            }
            prepared.commit()?;
            let segments = self.index.searchable_segment_metas()?;
            let docs: u64 = segments.iter().map(|s| u64::from(s.num_docs())).sum();
            // One segment per indexing thread is what a single bulk commit leaves: merging those costs a pass over
            // the whole index for little search speed; more segments (many small commits) are worth merging.
            if compact && segments.len() > writer_threads() && docs <= COMPACT_MAX_DOCS {
                let ids: Vec<_> = segments.iter().map(tantivy::index::SegmentMeta::id).collect();
                // Best effort: the commit is already durable, and a merge the background
                // policy started first (or a failed one) leaves the segments as they were.
                let _ = w.merge(&ids).wait();
            }
            Ok(())
        })?;
        self.reload()
    }

    /// Merge every segment into one and delete the files no commit uses any more (`memsift compact`): the
    /// fewest files and the fastest queries. Searches keep reading the previous segments until the merge
    /// lands. Returns how many segments there were.
    pub fn merge_segments(&self) -> Result<usize> {
        let segments = self.with_writer(|w| {
            let ids = self.index.searchable_segment_ids()?;
            if ids.len() > 1 {
                w.merge(&ids).wait()?;
            }
            w.garbage_collect_files().wait()?;
            Ok(ids.len())
        })?;
        self.reload()?;
        Ok(segments)
    }

    /// Drop the writer, discarding uncommitted changes, and release the directory lock
    /// so another process can write. The next write opens a new writer.
    pub fn release_writer(&self) -> Result<()> {
        let writer = self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        match writer {
            Some(writer) => writer.wait_merging_threads().map_err(|e| self.error(e)),
            None => Ok(()),
        }
    }

    /// Pick up the latest commit (made by this or another handle).
    ///
    /// Reloads are serialized (under the generation lock): two concurrent ones could otherwise
    /// install their searchers out of order, leaving an older searcher live under a newer
    /// generation, so searches would miss the newer commit's documents until the next reload.
    pub fn reload(&self) -> Result<()> {
        let mut recorded = self.generation.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // The payload is read first: the searcher then reflects that commit or a later one.
        let generation = payload_generation(&self.index).map_err(|e| self.error(e))?;
        self.reader.reload().map_err(|e| self.error(e))?;
        *recorded = generation;
        Ok(())
    }

    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Store generation recorded by the commit searches currently see, if any.
    pub fn generation(&self) -> Option<u64> {
        *self.generation.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Top `k` chunks for `query` over the text field, optionally limited to `sources`.
    pub fn search(&self, query: &str, k: usize, sources: Option<&[String]>) -> Result<Vec<(u64, f32)>> {
        self.search_field(self.fields.text, query, k, sources)
    }

    /// [`search`](Self::search) for each query, in parallel on the reader's current snapshot; results in order.
    pub fn search_batch(
        &self,
        queries: &[String],
        k: usize,
        sources: Option<&[String]>,
    ) -> Result<Vec<Vec<(u64, f32)>>> {
        use rayon::prelude::*;
        queries.par_iter().map(|q| self.search_field(self.fields.text, q, k, sources)).collect()
    }

    /// Top `k` chunks whose analyzed path matches `query`.
    pub fn search_paths(&self, query: &str, k: usize) -> Result<Vec<(u64, f32)>> {
        self.search_field(self.fields.path_text, query, k, None)
    }

    fn search_field(&self, field: Field, query: &str, k: usize, sources: Option<&[String]>) -> Result<Vec<(u64, f32)>> {
        // Weighted distinct terms: repeats count (BM25 sums over query terms), stopwords and particles do not, an
        // identifier counts as about one word (see `Analyzer::query_terms`).
        let terms: Vec<(Occur, Box<dyn Query>)> = self
            .analyzer
            .query_terms(query)
            .into_iter()
            .map(|(t, weight)| {
                let term = Box::new(TermQuery::new(Term::from_field_text(field, &t), IndexRecordOption::WithFreqs));
                let q: Box<dyn Query> = Box::new(BoostQuery::new(term, weight));
                (Occur::Should, q)
            })
            .collect();
        let searcher = self.reader.searcher();
        // TopDocs reserves room for `k` hits up front: a huge `k` must not become a huge allocation.
        let k = k.min(usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX));
        if terms.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let mut query: Box<dyn Query> = Box::new(BooleanQuery::new(terms));
        if let Some(sources) = sources {
            let allowed: Vec<(Occur, Box<dyn Query>)> = sources
                .iter()
                .map(|s| {
                    let q: Box<dyn Query> = Box::new(TermQuery::new(
                        Term::from_field_text(self.fields.source, s),
                        IndexRecordOption::Basic,
                    ));
                    (Occur::Should, q)
                })
                .collect();
            // The filter must not change scores: wrap it in a zero constant score.
            let filter: Box<dyn Query> = Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(allowed)), 0.0));
            query = Box::new(BooleanQuery::new(vec![(Occur::Must, query), (Occur::Must, filter)]));
        }
        let hits = if field == self.fields.text && searcher.num_docs() >= IN_POOL_FROM_DOCS {
            // On the worker threads, beside the vector leg's scan, rather than on the caller's thread as a third
            // thread competing for the cores: the shares of both are then spread over the cores. Not the path
            // field's search: it takes microseconds, and would wait there for the scan's shares.
            rayon::join(|| top_docs(&searcher, &*query, k), || ()).0
        } else {
            top_docs(&searcher, &*query, k)
        }
        .map_err(|e| self.error(e))?;
        let mut columns = FxHashMap::default();
        let mut out = Vec::with_capacity(hits.len());
        for (score, addr) in hits {
            let column = match columns.entry(addr.segment_ord) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => e.insert(
                    searcher.segment_reader(addr.segment_ord).fast_fields().u64("id").map_err(|e| self.error(e))?,
                ),
            };
            if let Some(id) = column.first(addr.doc_id) {
                out.push((id, round_score(score)));
            }
        }
        // Equal scores in chunk id order, not in tantivy's segment order: a keyword score is derived from the rank,
        // so two indexes of the same chunks (one built in batches, one rebuilt or installed from a snapshot)
        // must rank ties alike.
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(out)
    }

    /// Ids of every searchable document (for consistency checks against the store).
    pub fn ids(&self) -> Result<Vec<u64>> {
        let searcher = self.reader.searcher();
        let mut ids = Vec::with_capacity(searcher.num_docs() as usize);
        for segment in searcher.segment_readers() {
            let column = segment.fast_fields().u64("id").map_err(|e| self.error(e))?;
            let alive = segment.alive_bitset();
            for doc in 0..segment.max_doc() {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    ids.extend(column.first(doc));
                }
            }
        }
        Ok(ids)
    }
}

fn payload_generation(index: &Index) -> tantivy::Result<Option<u64>> {
    Ok(index.load_metas()?.payload.and_then(|p| p.trim().parse().ok()))
}

fn describe(location: Option<&Path>) -> String {
    location.map_or_else(|| "(in memory)".to_owned(), |p| format!("at {}", p.display()))
}

/// A BM25 score to 1/1000: the same chunk scores a few millionths apart in indexes of different segment layouts
/// (float sums in another order), which would order equal chunks differently.
/// The `k` best-scoring documents of `query`, as tantivy's `TopDocs` finds them, but with one bar for all segments:
/// the largest segments are searched first, and each next one starts from the k-th best score so far, so
/// block-max WAND skips its blocks that cannot beat it (`TopDocs` starts every segment from zero: at 1M chunks in 14
/// segments that is most of a search's time).
fn top_docs(searcher: &Searcher, query: &dyn Query, k: usize) -> tantivy::Result<Vec<(f32, DocAddress)>> {
    /// A hit in the heap, the worst first: lowest score, then the later address (as `TopDocs` breaks ties).
    struct Hit(f32, DocAddress);
    impl PartialEq for Hit {
        fn eq(&self, other: &Self) -> bool {
            self.cmp(other) == Ordering::Equal
        }
    }
    impl Eq for Hit {}
    impl PartialOrd for Hit {
        fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Hit {
        fn cmp(&self, other: &Self) -> Ordering {
            other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
        }
    }

    let weight = query.weight(EnableScoring::enabled_from_searcher(searcher))?;
    let readers = searcher.segment_readers();
    let mut order: Vec<usize> = (0..readers.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(readers[i].num_docs()));
    let mut heap: BinaryHeap<Hit> = BinaryHeap::with_capacity(k + 1);
    let bar =
        |heap: &BinaryHeap<Hit>| if heap.len() == k { heap.peek().map_or(Score::MIN, |h| h.0) } else { Score::MIN };
    for ord in order {
        let reader = &readers[ord];
        let alive = reader.alive_bitset();
        let segment = u32::try_from(ord).unwrap_or(u32::MAX);
        let mut threshold = bar(&heap);
        weight.for_each_pruning(threshold, reader, &mut |doc, score| {
            if alive.is_some_and(|a| a.is_deleted(doc)) || score <= threshold {
                return threshold;
            }
            heap.push(Hit(score, DocAddress::new(segment, doc)));
            if heap.len() > k {
                heap.pop();
            }
            threshold = bar(&heap);
            threshold
        })?;
    }
    Ok(heap.into_sorted_vec().into_iter().map(|Hit(score, addr)| (score, addr)).collect())
}

fn round_score(score: f32) -> f32 {
    (score * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(id: u64, path: &str, source: &str, text: &str) -> ChunkDoc {
        ChunkDoc { id, path: path.into(), source: source.into(), text: text.into() }
    }

    #[test]
    fn ranked_or_search_deletes_and_sources() {
        let index = Bm25Index::open(None, true, 64).unwrap();
        index
            .add(&[
                doc(1, "memory/a.md", "memory", "视频下载 tool BBDown"),
                doc(2, "memory/b.md", "memory", "下载 the logs"),
                doc(3, "sessions/x.jsonl", "sessions", "视频 archive"),
            ])
            .unwrap();
        assert!(index.search("视频", 10, None).unwrap().is_empty(), "uncommitted docs are invisible");
        index.commit(Some(4), true).unwrap();
        let hits = index.search("视频下载", 10, None).unwrap();
        assert_eq!(hits[0].0, 1, "the doc with the whole phrase ranks first");
        assert_eq!(hits.len(), 3, "OR semantics: partial matches are returned too");
        let queries = ["视频下载".to_owned(), "logs".to_owned(), String::new()];
        let batch = index.search_batch(&queries, 10, None).unwrap();
        let one_by_one: Vec<_> = queries.iter().map(|q| index.search(q, 10, None).unwrap()).collect();
        assert_eq!(batch, one_by_one);
        let memory_only = index.search("视频", 10, Some(&["memory".to_owned()])).unwrap();
        assert_eq!(memory_only.iter().map(|h| h.0).collect::<Vec<_>>(), [1]);
        assert!(index.search("\"(*:- AND", 10, None).unwrap().is_empty());
        assert_eq!(index.search_paths("b.md", 10).unwrap().first().map(|h| h.0), Some(2));
        index.delete_path("memory/a.md").unwrap();
        index.delete_ids(&[3]).unwrap();
        index.commit(Some(5), true).unwrap();
        assert_eq!(index.ids().unwrap(), [2]);
        assert_eq!(index.generation(), Some(5));
    }

    #[test]
    #[allow(clippy::float_cmp)] // the rounded values are exact on purpose
    fn scores_are_kept_to_a_thousandth() {
        assert_eq!(round_score(30.321_983), 30.322);
        assert_eq!(round_score(30.321_981), 30.322);
        assert_eq!(round_score(0.000_4), 0.0);
    }

    #[test]
    fn equal_scores_come_in_id_order_whatever_the_segments() {
        // The same three equal chunks, added in one commit or one per commit in reverse: the same order.
        let docs = [
            doc(7, "a.md", "memory", "zeppelin"),
            doc(3, "b.md", "memory", "zeppelin"),
            doc(5, "c.md", "memory", "zeppelin"),
        ];
        let together = Bm25Index::open(None, true, 64).unwrap();
        together.add(&docs).unwrap();
        together.commit(Some(1), true).unwrap();
        let apart = Bm25Index::open(None, true, 64).unwrap();
        for d in docs.iter().rev() {
            apart.add(std::slice::from_ref(d)).unwrap();
            apart.commit(Some(1), false).unwrap();
        }
        let ids =
            |index: &Bm25Index| index.search("zeppelin", 10, None).unwrap().iter().map(|h| h.0).collect::<Vec<_>>();
        assert_eq!(ids(&together), [3, 5, 7]);
        assert_eq!(ids(&apart), [3, 5, 7]);
    }

    #[test]
    fn directory_index_reopens_with_its_generation() {
        let dir = std::env::temp_dir().join(format!("memsift-bm25-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let index = Bm25Index::open(Some(&dir), true, 64).unwrap();
            index.add(&[doc(9, "MEMORY.md", "memory", "ERR_CONN_RESET retries")]).unwrap();
            index.commit(Some(42), true).unwrap();
        }
        let index = Bm25Index::open(Some(&dir), true, 64).unwrap();
        assert_eq!(index.generation(), Some(42));
        assert_eq!(index.search("conn", 5, None).unwrap()[0].0, 9);
        assert!(Bm25Index::open(Some(&dir), false, 64).is_err(), "stem mismatch is refused");
        // More commits make more segments; past one per indexing thread a small index is merged back into one,
        // keeping the payload.
        let commits = writer_threads() + 1;
        for i in 0..commits {
            index.add(&[doc(10 + i as u64, "memory/2026-11-30.md", "memory", "another commit")]).unwrap();
            index.commit(Some(43), i + 1 == commits).unwrap();
        }
        assert_eq!(index.index.searchable_segment_ids().unwrap().len(), 1);
        drop(index);
        let index = Bm25Index::open(Some(&dir), true, 64).unwrap();
        assert_eq!((index.generation(), index.num_docs()), (Some(43), 1 + commits as u64));
        // Commits without compaction leave a segment each; merge_segments folds them into one, keeping every
        // document, the payload, and no files of the old segments.
        for i in 0..3 {
            index.add(&[doc(100 + i, "memory/2026-12-01.md", "memory", "uncompacted commit")]).unwrap();
            index.commit(Some(44), false).unwrap();
        }
        let files_before = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(index.merge_segments().unwrap(), 4);
        assert_eq!(index.index.searchable_segment_ids().unwrap().len(), 1);
        assert!(std::fs::read_dir(&dir).unwrap().count() < files_before, "old segment files are deleted");
        assert_eq!((index.generation(), index.num_docs()), (Some(44), 4 + commits as u64));
        assert_eq!(index.search("uncompacted", 10, None).unwrap().len(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
