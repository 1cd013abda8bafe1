//! Thin PyO3 bindings over the pure core.
//!
//! Every heavy call follows extract → detach → convert: Python arguments become
//! owned Rust data (or numpy views), the work runs with the GIL released, and
//! results are turned into Python objects afterwards. Core errors map to the
//! exception tree in one place (`From<Error> for PyErr`), and every call runs
//! under `catch_unwind` so a Rust panic surfaces as `InternalError`.

// PyO3 extracts arguments into owned values (`Vec`, `Text`), so they are passed by value.
#![allow(clippy::needless_pass_by_value)]
// Doc comments are Python docstrings with doctests, not rustdoc.
#![allow(clippy::doc_link_with_quotes)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Mutex, RwLock};

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOverflowError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDate, PyList, PyString};
use rustc_hash::FxHashMap;

use crate::analyzer::{Analyzer, TokenBuf};
use crate::bm25::{Bm25Index, ChunkDoc};
use crate::error::Error;
use crate::vector::{AnnParams, Metric, Quantization, VectorStore};
use crate::{chunk, rank};

create_exception!(memsift._core, MemsiftError, PyException, "Root of every error memsift raises.");
create_exception!(
    memsift._core,
    InvalidInputError,
    MemsiftError,
    "An argument has the wrong shape, type or range (the message names it)."
);
create_exception!(
    memsift._core,
    SearchIndexError,
    MemsiftError,
    "The BM25 index could not be opened, written or read (the message names the path)."
);
create_exception!(
    memsift._core,
    InternalError,
    MemsiftError,
    "A bug inside memsift's Rust core (a caught panic); please report it."
);

impl From<Error> for PyErr {
    fn from(e: Error) -> Self {
        match e {
            Error::InvalidInput(msg) => InvalidInputError::new_err(msg),
            e @ Error::Index { .. } => SearchIndexError::new_err(e.to_string()),
        }
    }
}

// ------------------------------------------------------------------ argument types

/// A Python `str` argument as UTF-8. Lone surrogates (a string cut mid-emoji, e.g. by `JSON.stringify`)
/// cannot be encoded: they become U+FFFD instead of failing the call with `UnicodeEncodeError`.
pub struct Text(String);

impl FromPyObject<'_, '_> for Text {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
        let s = obj.cast::<PyString>()?;
        if let Ok(text) = s.to_str() {
            return Ok(Text(text.to_owned()));
        }
        // One U+FFFD per lone surrogate, as Python's own "replace" gives (a UTF-8 round trip would give three).
        let utf16 = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
        let units: Vec<u16> =
            utf16.cast::<PyBytes>()?.as_bytes().chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
        Ok(Text(String::from_utf16_lossy(&units)))
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text(text.to_owned())
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

fn texts(items: Vec<Text>) -> Vec<String> {
    items.into_iter().map(|t| t.0).collect()
}

/// The start of an argument's repr, for error messages (`10**400` has 401 digits).
fn short_repr(obj: Borrowed<'_, '_, PyAny>) -> String {
    let text = obj.repr().map_or_else(|_| "?".to_owned(), |r| r.to_string_lossy().into_owned());
    if text.chars().count() <= 40 {
        text
    } else {
        text.chars().take(40).collect::<String>() + "…"
    }
}

/// Numeric argument types whose out-of-range values (Python ints of any size) raise `InvalidInputError` naming the
/// value, instead of the `OverflowError` PyO3 gives for the plain Rust type.
macro_rules! bounded_argument {
    ($(#[$doc:meta])* $name:ident($inner:ty), $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $name($inner);

        impl FromPyObject<'_, '_> for $name {
            type Error = PyErr;

            fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
                obj.extract::<$inner>().map($name).map_err(|e| {
                    if e.is_instance_of::<PyOverflowError>(obj.py()) {
                        InvalidInputError::new_err(format!($what, short_repr(obj)))
                    } else {
                        e
                    }
                })
            }
        }
    };
}

bounded_argument!(
    /// An integer argument (64 bits).
    Int(i64),
    "integer {} is out of range (at most 64 bits)"
);
bounded_argument!(
    /// A float argument (an int too large for a double is refused).
    Num(f64),
    "number {} is too large for a float"
);
bounded_argument!(
    /// An id argument: an integer in [0, 2**64).
    Id(u64),
    "id {} is not in [0, 2**64)"
);

fn nums(items: Vec<Num>) -> Vec<f64> {
    items.into_iter().map(|n| n.0).collect()
}

/// A non-negative count named `name` for error messages.
fn count(value: Int, name: &str) -> PyResult<usize> {
    usize::try_from(value.0).map_err(|_| InvalidInputError::new_err(format!("{name} must be >= 0, got {}", value.0)))
}

fn scored(items: Vec<(Id, Num)>) -> Vec<(u64, f64)> {
    items.into_iter().map(|(id, score)| (id.0, score.0)).collect()
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// Run `f` with the GIL released, turning core errors and panics into Python errors.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> crate::error::Result<T> + Send) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f)))
        .map_err(|p| InternalError::new_err(format!("internal error (please report): {}", panic_message(&*p))))?
        .map_err(PyErr::from)
}

// ------------------------------------------------------------------ analyzer

/// memsift's text analyzer: the one tokenizer used by BM25, queries, sessions and MMR.
///
/// Args:
///     stem: Apply the English Snowball stemmer to plain Latin words.
///
/// >>> Analyzer().tokenize("BBDown视频下载")
/// ['bbdown', '视', '视频', '频', '频下', '下', '下载', '载']
#[pyclass(name = "Analyzer", module = "memsift._core", frozen)]
pub struct PyAnalyzer {
    inner: Analyzer,
    strings: TokenStrings,
}

/// Python strings of recently returned tokens, reused across calls: tokens repeat
/// (Zipf), and creating a `str` is the main cost of returning a token list.
#[derive(Default)]
struct TokenStrings(Mutex<FxHashMap<Box<str>, Py<PyString>>>);

impl TokenStrings {
    /// Bound on cached strings; the cache restarts empty when it is full.
    const LIMIT: usize = 1 << 18;

    fn list<'py>(&self, py: Python<'py>, buf: &TokenBuf) -> PyResult<Bound<'py, PyList>> {
        let mut cache = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() > Self::LIMIT {
            cache.clear();
        }
        let items: Vec<Bound<'py, PyString>> = buf
            .iter()
            .map(|token| {
                if let Some(s) = cache.get(token) {
                    return s.bind(py).clone();
                }
                let s = PyString::new(py, token);
                cache.insert(token.into(), s.clone().unbind());
                s
            })
            .collect();
        PyList::new(py, items)
    }
}

#[pymethods]
impl PyAnalyzer {
    #[new]
    #[pyo3(signature = (stem = true))]
    fn new(stem: bool) -> Self {
        Self { inner: Analyzer::new(stem), strings: TokenStrings::default() }
    }

    #[getter]
    fn stem(&self) -> bool {
        self.inner.stem
    }

    /// Tokenize one text.
    fn tokenize<'py>(&self, py: Python<'py>, text: Text) -> PyResult<Bound<'py, PyList>> {
        let analyzer = self.inner;
        let text: &str = &text;
        let analyze = move || {
            let mut buf = TokenBuf::default();
            analyzer.analyze_into(text, &mut buf);
            Ok(buf)
        };
        // Short texts are cheaper than a GIL round-trip; long ones release it.
        let buf = if text.len() < 4096 { analyze()? } else { detached(py, analyze)? };
        self.strings.list(py, &buf)
    }

    /// Tokenize many texts in parallel with the GIL released.
    fn tokenize_batch<'py>(&self, py: Python<'py>, texts: Vec<Text>) -> PyResult<Vec<Bound<'py, PyList>>> {
        use rayon::prelude::*;
        let analyzer = self.inner;
        let texts = self::texts(texts);
        let bufs = detached(py, move || {
            Ok(texts
                .par_iter()
                .map(|t| {
                    let mut buf = TokenBuf::default();
                    analyzer.analyze_into(t, &mut buf);
                    buf
                })
                .collect::<Vec<_>>())
        })?;
        bufs.iter().map(|buf| self.strings.list(py, buf)).collect()
    }

    /// Number of tokens ``tokenize`` would return, without building Python strings.
    fn count_tokens(&self, py: Python<'_>, text: Text) -> PyResult<usize> {
        let analyzer = self.inner;
        detached(py, move || {
            let mut buf = TokenBuf::default();
            analyzer.analyze_into(&text, &mut buf);
            Ok(buf.len())
        })
    }

    fn __repr__(&self) -> String {
        format!("Analyzer(stem={})", if self.inner.stem { "True" } else { "False" })
    }
}

/// Tokenize with the default analyzer (``Analyzer(stem=True)``).
///
/// >>> tokenize("ERR_CONN_RESET in v2.3.1")
/// ['err_conn_reset', 'err', 'conn', 'reset', 'in', 'v2.3.1', 'v2', '3', '1']
#[pyfunction(name = "tokenize")]
fn tokenize_py(py: Python<'_>, text: Text) -> PyResult<Bound<'_, PyList>> {
    static DEFAULT: PyOnceLock<Py<PyAnalyzer>> = PyOnceLock::new();
    DEFAULT.get_or_try_init(py, || Py::new(py, PyAnalyzer::new(true)))?.get().tokenize(py, text)
}

// ------------------------------------------------------------------ chunker

/// One chunk of a Markdown file (1-based inclusive line range, sha256 of ``text``).
#[pyclass(name = "Chunk", module = "memsift._core", frozen, eq, get_all)]
#[derive(PartialEq, Eq, Clone)]
pub struct PyChunk {
    start_line: usize,
    end_line: usize,
    text: String,
    hash: String,
}

#[pymethods]
impl PyChunk {
    #[new]
    fn new(start_line: Int, end_line: Int, text: Text, hash: Text) -> PyResult<Self> {
        Ok(Self {
            start_line: count(start_line, "start_line")?,
            end_line: count(end_line, "end_line")?,
            text: text.0,
            hash: hash.0,
        })
    }

    fn __repr__(&self) -> String {
        let preview: String = self.text.chars().take(40).collect();
        format!(
            "Chunk(start_line={}, end_line={}, text={:?}, hash='{}…')",
            self.start_line,
            self.end_line,
            preview,
            &self.hash[..12.min(self.hash.len())]
        )
    }
}

/// Split Markdown into line-packed chunks exactly as OpenClaw's ``chunkMarkdown``.
///
/// Args:
///     text: The file content.
///     tokens: Target chunk size in estimated tokens (4 chars, or 1 CJK char, per token).
///     overlap: Tokens of trailing whole lines carried into the next chunk.
///
/// Raises:
///     InvalidInputError: ``tokens < 1``, ``overlap < 0`` or ``overlap >= tokens``.
///
/// >>> [(c.start_line, c.end_line) for c in chunk_markdown("a\nb\n\nc")]
/// [(1, 4)]
#[pyfunction(name = "chunk_markdown")]
#[pyo3(signature = (text, tokens = Int(400), overlap = Int(80)), text_signature = "(text, tokens=400, overlap=80)")]
fn chunk_markdown_py(py: Python<'_>, text: Text, tokens: Int, overlap: Int) -> PyResult<Vec<PyChunk>> {
    let tokens = count(tokens, "tokens")?;
    let overlap = count(overlap, "overlap")?;
    let chunks = detached(py, move || chunk::chunk_markdown(&text, tokens, overlap))?;
    Ok(chunks
        .into_iter()
        .map(|c| PyChunk { start_line: c.start_line, end_line: c.end_line, text: c.text, hash: c.hash })
        .collect())
}

/// OpenClaw's weighted length: UTF-16 length with CJK/full-width characters counted 4x.
///
/// >>> estimate_chars("ab视频")
/// 10
#[pyfunction(name = "estimate_chars")]
fn estimate_chars_py(text: Text) -> usize {
    chunk::estimate_chars(&text)
}

// ------------------------------------------------------------------ BM25

/// A BM25 chunk index on tantivy, in RAM (``path=None``) or in a directory.
///
/// >>> idx = Bm25Index()
/// >>> idx.add([1, 2], ["memory/a.md", "memory/b.md"], ["memory"] * 2, ["tantivy index", "sqlite store"])
/// >>> idx.commit(generation=1)
/// >>> [i for i, _ in idx.search("index")]
/// [1]
#[pyclass(name = "Bm25Index", module = "memsift._core", frozen)]
pub struct PyBm25Index {
    inner: Bm25Index,
}

fn check_k(k: Int) -> PyResult<usize> {
    count(k, "k")
}

#[pymethods]
impl PyBm25Index {
    #[new]
    #[pyo3(signature = (path = None, *, stem = true, writer_memory_mb = Int(64)), text_signature = "(path=None, *, stem=True, writer_memory_mb=64)")]
    fn new(py: Python<'_>, path: Option<PathBuf>, stem: bool, writer_memory_mb: Int) -> PyResult<Self> {
        let writer_memory_mb = count(writer_memory_mb, "writer_memory_mb")?;
        let inner = detached(py, move || Bm25Index::open(path.as_deref(), stem, writer_memory_mb))?;
        Ok(Self { inner })
    }

    #[getter]
    fn path(&self) -> Option<String> {
        self.inner.location().map(|p| p.display().to_string())
    }

    #[getter]
    fn stem(&self) -> bool {
        self.inner.stem()
    }

    /// Documents visible to searches (committed).
    #[getter]
    fn num_docs(&self) -> u64 {
        self.inner.num_docs()
    }

    /// Store generation recorded by the commit searches see (``None`` if never given).
    #[getter]
    fn generation(&self) -> Option<u64> {
        self.inner.generation()
    }

    /// Stage documents (visible after ``commit``). Existing ids are not replaced: delete first.
    fn add(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        paths: Vec<Text>,
        sources: Vec<Text>,
        texts: Vec<Text>,
    ) -> PyResult<()> {
        let ids = as_ids(py, ids)?;
        let (paths, sources, texts) = (self::texts(paths), self::texts(sources), self::texts(texts));
        let n = ids.len();
        if paths.len() != n || sources.len() != n || texts.len() != n {
            return Err(InvalidInputError::new_err(format!(
                "ids, paths, sources and texts must have the same length, got {n}, {}, {}, {}",
                paths.len(),
                sources.len(),
                texts.len()
            )));
        }
        let docs: Vec<ChunkDoc> = ids
            .into_iter()
            .zip(paths)
            .zip(sources)
            .zip(texts)
            .map(|(((id, path), source), text)| ChunkDoc { id, path, source, text })
            .collect();
        detached(py, || self.inner.add(&docs))
    }

    fn delete_ids(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<()> {
        let ids = as_ids(py, ids)?;
        detached(py, || self.inner.delete_ids(&ids))
    }

    fn delete_path(&self, py: Python<'_>, path: Text) -> PyResult<()> {
        detached(py, || self.inner.delete_path(&path))
    }

    /// Stage deletion of every document.
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || self.inner.clear())
    }

    /// Make staged changes durable and searchable, recording ``generation``; ``compact`` merges a small
    /// index into one segment (faster queries).
    #[pyo3(signature = (generation = None, *, compact = true))]
    fn commit(&self, py: Python<'_>, generation: Option<&Bound<'_, PyAny>>, compact: bool) -> PyResult<()> {
        let generation = generation
            .map(|g| {
                g.extract::<u64>().map_err(|_| {
                    InvalidInputError::new_err(format!("generation must be an integer in [0, 2**64), got {g}"))
                })
            })
            .transpose()?;
        detached(py, || self.inner.commit(generation, compact))
    }

    /// Drop staged, uncommitted changes.
    fn rollback(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || self.inner.rollback())
    }

    /// Drop the writer (uncommitted changes are discarded) so another process can write.
    fn release_writer(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || self.inner.release_writer())
    }

    /// Pick up commits made by another handle on the same directory.
    fn reload(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || self.inner.reload())
    }

    /// Ranked OR query over ``text``; returns ``(id, bm25_score)`` best first. Never raises on query syntax.
    #[pyo3(signature = (query, k = Int(10), *, sources = None), text_signature = "($self, query, k=10, *, sources=None)")]
    fn search(&self, py: Python<'_>, query: Text, k: Int, sources: Option<Vec<Text>>) -> PyResult<Vec<(u64, f32)>> {
        let k = check_k(k)?;
        let sources = sources.map(texts);
        detached(py, || self.inner.search(&query, k, sources.as_deref()))
    }

    /// Ranked OR query over the analyzed path field.
    #[pyo3(signature = (query, k = Int(10)), text_signature = "($self, query, k=10)")]
    fn search_paths(&self, py: Python<'_>, query: Text, k: Int) -> PyResult<Vec<(u64, f32)>> {
        let k = check_k(k)?;
        detached(py, || self.inner.search_paths(&query, k))
    }

    fn __len__(&self) -> usize {
        self.inner.num_docs() as usize
    }

    fn __repr__(&self) -> String {
        let path = self.path().map_or_else(|| "None".to_owned(), |p| format!("{p:?}"));
        format!("Bm25Index(path={path}, num_docs={})", self.inner.num_docs())
    }
}

// ------------------------------------------------------------------ vectors

/// Contiguous vector store with exact SIMD top-k and usearch HNSW above a size threshold.
///
/// >>> import numpy as np
/// >>> vs = VectorStore(3)
/// >>> vs.add(np.array([7, 8], dtype=np.uint64), np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32))
/// >>> ids, scores = vs.search(np.array([1, 0.1, 0], dtype=np.float32), k=1)
/// >>> ids.tolist()
/// [7]
#[pyclass(name = "VectorStore", module = "memsift._core", frozen)]
pub struct PyVectorStore {
    inner: RwLock<VectorStore>,
}

/// A float32 matrix view, converting (one copy) only when the input is not already C-contiguous float32.
fn as_f32_matrix<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, what: &str) -> PyResult<PyReadonlyArray2<'py, f32>> {
    if let Ok(view) = obj.extract::<PyReadonlyArray2<'py, f32>>() {
        if view.is_c_contiguous() {
            return Ok(view);
        }
    }
    let np = py.import("numpy")?;
    let converted = np
        .call_method1("ascontiguousarray", (obj, "float32"))
        .map_err(|e| InvalidInputError::new_err(format!("{what} must be convertible to a float32 array: {e}")))?;
    let converted = if converted.getattr("ndim")?.extract::<usize>()? == 1 {
        converted.call_method1("reshape", (1, -1))?
    } else {
        converted
    };
    converted
        .extract::<PyReadonlyArray2<'py, f32>>()
        .map_err(|_| InvalidInputError::new_err(format!("{what} must be a 2-D array of shape (n, dims)")))
}

fn as_f32_vector<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArray1<'py, f32>> {
    if let Ok(view) = obj.extract::<PyReadonlyArray1<'py, f32>>() {
        if view.is_c_contiguous() {
            return Ok(view);
        }
    }
    let np = py.import("numpy")?;
    np.call_method1("ascontiguousarray", (obj, "float32"))
        .and_then(|a| a.extract::<PyReadonlyArray1<'py, f32>>())
        .map_err(|e| InvalidInputError::new_err(format!("query must be a 1-D float32 array: {e}")))
}

/// Chunk ids: a 1-D sequence or array of integers in [0, 2**64). Negative, float,
/// bool or oversized values are rejected instead of being wrapped or truncated.
fn as_ids(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    if let Ok(view) = obj.extract::<PyReadonlyArray1<'_, u64>>() {
        return Ok(view.as_array().to_vec());
    }
    let bad = |why: String| {
        InvalidInputError::new_err(format!("ids must be a 1-D sequence of integers in [0, 2**64): {why}"))
    };
    let arr = py.import("numpy")?.call_method1("asarray", (obj,)).map_err(|e| bad(e.to_string()))?;
    if arr.getattr("size")?.extract::<usize>()? == 0 {
        return Ok(Vec::new());
    }
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    if arr.getattr("ndim")?.extract::<usize>()? != 1 || !(kind == "i" || kind == "u") {
        return Err(bad(format!("got {}", obj.repr()?)));
    }
    if kind == "i" && arr.call_method0("min")?.extract::<i64>()? < 0 {
        return Err(bad(format!("got a negative id ({})", arr.call_method0("min")?)));
    }
    Ok(arr.call_method1("astype", ("uint64",))?.extract::<PyReadonlyArray1<'_, u64>>()?.as_array().to_vec())
}

type Hits<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<f32>>);

fn hits_to_arrays(py: Python<'_>, hits: Vec<(u64, f32)>) -> Hits<'_> {
    let (ids, scores): (Vec<u64>, Vec<f32>) = hits.into_iter().unzip();
    (ids.into_pyarray(py), scores.into_pyarray(py))
}

impl PyVectorStore {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, VectorStore> {
        self.inner.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, VectorStore> {
        self.inner.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[pymethods]
impl PyVectorStore {
    #[new]
    #[pyo3(signature = (dims, *, metric = Text::from("cosine"), dtype = Text::from("f32"), ann_threshold = Int(20000), connectivity = Int(16), expansion_add = Int(128), expansion_search = Int(96)), text_signature = "(dims, *, metric='cosine', dtype='f32', ann_threshold=20000, connectivity=16, expansion_add=128, expansion_search=96)")]
    fn new(
        dims: Int,
        metric: Text,
        dtype: Text,
        ann_threshold: Int,
        connectivity: Int,
        expansion_add: Int,
        expansion_search: Int,
    ) -> PyResult<Self> {
        let params = AnnParams {
            threshold: count(ann_threshold, "ann_threshold")?,
            connectivity: count(connectivity, "connectivity")?,
            expansion_add: count(expansion_add, "expansion_add")?,
            expansion_search: count(expansion_search, "expansion_search")?,
        };
        let store =
            VectorStore::new(count(dims, "dims")?, Metric::parse(&metric)?, Quantization::parse(&dtype)?, params)?;
        Ok(Self { inner: RwLock::new(store) })
    }

    #[getter]
    fn dims(&self) -> usize {
        self.read().dims()
    }
    #[getter]
    fn metric(&self) -> &'static str {
        self.read().metric().name()
    }
    #[getter]
    fn dtype(&self) -> &'static str {
        self.read().quantization().name()
    }
    /// True when searches use the HNSW index (``len >= ann_threshold``).
    #[getter]
    fn ann_active(&self) -> bool {
        self.read().ann_active()
    }
    fn __len__(&self) -> usize {
        self.read().len()
    }
    fn __contains__(&self, id: &Bound<'_, PyAny>) -> bool {
        id.extract::<u64>().is_ok_and(|id| self.read().contains(id))
    }

    /// Insert or replace vectors; ``vectors`` is float32 ``(n, dims)`` (other inputs are converted once).
    fn add(&self, py: Python<'_>, ids: &Bound<'_, PyAny>, vectors: &Bound<'_, PyAny>) -> PyResult<()> {
        let ids = as_ids(py, ids)?;
        let matrix = as_f32_matrix(py, vectors, "vectors")?;
        let shape = matrix.shape().to_vec();
        let data = matrix.as_slice().map_err(|e| InvalidInputError::new_err(e.to_string()))?;
        if shape[0] != ids.len() {
            return Err(InvalidInputError::new_err(format!("got {} ids but {} vectors", ids.len(), shape[0])));
        }
        let dims = self.read().dims();
        if shape[1] != dims {
            return Err(InvalidInputError::new_err(format!("vectors have {} dims, the store has {dims}", shape[1])));
        }
        detached(py, || self.write().add(&ids, data))
    }

    /// Remove ids; returns how many were present.
    fn remove(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<usize> {
        let ids = as_ids(py, ids)?;
        detached(py, || self.write().remove(&ids))
    }

    fn clear(&self) {
        self.write().clear();
    }

    /// Top-k ``(ids, scores)`` best first; ``exact=None`` uses HNSW only when active.
    #[pyo3(signature = (query, k = Int(10), *, exact = None), text_signature = "($self, query, k=10, *, exact=None)")]
    fn search<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
        k: Int,
        exact: Option<bool>,
    ) -> PyResult<Hits<'py>> {
        let k = check_k(k)?;
        let query = as_f32_vector(py, query)?;
        let q = query.as_slice().map_err(|e| InvalidInputError::new_err(e.to_string()))?;
        let hits = detached(py, || self.read().search(q, k, exact))?;
        Ok(hits_to_arrays(py, hits))
    }

    #[pyo3(signature = (queries, k = Int(10), *, exact = None), text_signature = "($self, queries, k=10, *, exact=None)")]
    fn search_batch<'py>(
        &self,
        py: Python<'py>,
        queries: &Bound<'py, PyAny>,
        k: Int,
        exact: Option<bool>,
    ) -> PyResult<Vec<Hits<'py>>> {
        use rayon::prelude::*;
        let k = check_k(k)?;
        let matrix = as_f32_matrix(py, queries, "queries")?;
        let dims = matrix.shape()[1];
        let data = matrix.as_slice().map_err(|e| InvalidInputError::new_err(e.to_string()))?;
        let all = detached(py, || {
            let store = self.read();
            if dims != store.dims() {
                return crate::error::invalid!("queries have {dims} dims, the store has {}", store.dims());
            }
            data.par_chunks(dims).map(|q| store.search(q, k, exact)).collect::<crate::error::Result<Vec<_>>>()
        })?;
        Ok(all.into_iter().map(|hits| hits_to_arrays(py, hits)).collect())
    }

    fn __repr__(&self) -> String {
        let s = self.read();
        format!(
            "VectorStore(dims={}, metric='{}', dtype='{}', len={})",
            s.dims(),
            s.metric().name(),
            s.quantization().name(),
            s.len()
        )
    }
}

// ------------------------------------------------------------------ ranking

/// OpenClaw's ``bm25RankToScore`` for a positive BM25 score ``r``: ``r / (1 + r)``.
///
/// >>> bm25_score_to_unit(1.0)
/// 0.5
#[pyfunction(name = "bm25_score_to_unit")]
fn bm25_score_to_unit_py(score: Num) -> f64 {
    rank::bm25_score_to_unit(score.0)
}

/// Hybrid weights clamped to [0, 1] and normalized to sum 1 (both 0 -> 0.7 / 0.3), as OpenClaw's config does.
///
/// >>> normalize_weights(2.0, 2.0)
/// (0.5, 0.5)
#[pyfunction(name = "normalize_weights")]
fn normalize_weights_py(vector_weight: Num, text_weight: Num) -> PyResult<(f64, f64)> {
    Ok(rank::normalize_weights(vector_weight.0, text_weight.0)?)
}

/// Weighted hybrid merge; returns ``(id, score, vector_score, text_score)`` best first.
///
/// ``keyword`` scores are raw BM25 and are mapped with ``bm25_score_to_unit``.
///
/// >>> fuse_weighted([(1, 0.9)], [(2, 1.0)])
/// [(1, 0.63, 0.9, 0.0), (2, 0.15, 0.0, 0.5)]
#[pyfunction(name = "fuse_weighted")]
#[pyo3(signature = (vector, keyword, vector_weight = Num(0.7), text_weight = Num(0.3)), text_signature = "(vector, keyword, vector_weight=0.7, text_weight=0.3)")]
fn fuse_weighted_py(
    vector: Vec<(Id, Num)>,
    keyword: Vec<(Id, Num)>,
    vector_weight: Num,
    text_weight: Num,
) -> PyResult<Vec<(u64, f64, f64, f64)>> {
    Ok(rank::fuse_weighted(&scored(vector), &scored(keyword), vector_weight.0, text_weight.0)?
        .into_iter()
        .map(|f| (f.id, f.score, f.vector_score, f.text_score))
        .collect())
}

/// Reciprocal-rank fusion: ``sum 1 / (k + rank)`` with 1-based ranks.
#[pyfunction(name = "fuse_rrf")]
#[pyo3(signature = (lists, k = Int(60)), text_signature = "(lists, k=60)")]
fn fuse_rrf_py(lists: Vec<Vec<(Id, Num)>>, k: Int) -> PyResult<Vec<(u64, f64)>> {
    let lists: Vec<Vec<(u64, f64)>> = lists.into_iter().map(scored).collect();
    Ok(rank::fuse_rrf(&lists, k.0 as f64)?)
}

/// Jaccard similarity of the analyzer token sets of two texts (both empty -> 1).
#[pyfunction(name = "jaccard")]
fn jaccard_py(a: Text, b: Text) -> f64 {
    rank::jaccard(Analyzer::default(), &a, &b)
}

/// MMR order (indices) with Jaccard text similarity, as OpenClaw's ``mmrRerank``.
#[pyfunction(name = "mmr")]
#[pyo3(signature = (scores, texts, lambda_ = Num(0.7)), text_signature = "(scores, texts, lambda_=0.7)")]
fn mmr_py(py: Python<'_>, scores: Vec<Num>, texts: Vec<Text>, lambda_: Num) -> PyResult<Vec<usize>> {
    let (scores, texts, lambda_) = (nums(scores), self::texts(texts), lambda_.0);
    detached(py, move || {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        rank::mmr(Analyzer::default(), &scores, &refs, lambda_)
    })
}

/// MMR order (indices) with cosine similarity of embeddings.
#[pyfunction(name = "mmr_vectors")]
#[pyo3(signature = (scores, vectors, lambda_ = Num(0.7)), text_signature = "(scores, vectors, lambda_=0.7)")]
fn mmr_vectors_py(py: Python<'_>, scores: Vec<Num>, vectors: &Bound<'_, PyAny>, lambda_: Num) -> PyResult<Vec<usize>> {
    let (scores, lambda_) = (nums(scores), lambda_.0);
    let matrix = as_f32_matrix(py, vectors, "vectors")?;
    let dims = matrix.shape()[1];
    let data = matrix.as_slice().map_err(|e| InvalidInputError::new_err(e.to_string()))?;
    detached(py, || rank::mmr_vectors(&scores, data, dims, lambda_))
}

/// ``exp(-ln2 / half_life_days * max(0, age_days))``.
#[pyfunction(name = "decay_multiplier")]
fn decay_multiplier_py(age_days: Num, half_life_days: Num) -> f64 {
    rank::decay_multiplier(age_days.0, half_life_days.0)
}

/// Date of a ``memory/[.../]YYYY-MM-DD[-suffix].md`` path, ``None`` if absent or invalid.
///
/// >>> memory_date_from_path("memory/2026-11-30.md")
/// datetime.date(2026, 11, 30)
#[pyfunction(name = "memory_date_from_path")]
fn memory_date_from_path_py(py: Python<'_>, path: Text) -> PyResult<Option<Bound<'_, PyDate>>> {
    rank::memory_date_from_path(&path).map(|(y, m, d)| PyDate::new(py, y, m as u8, d as u8)).transpose()
}

/// ``MEMORY.md``, ``memory.md`` and undated files under ``memory/`` never decay.
#[pyfunction(name = "is_evergreen_path")]
fn is_evergreen_path_py(path: Text) -> bool {
    rank::is_evergreen_path(&path)
}

/// Decayed scores (timestamps in epoch seconds), as OpenClaw's temporal decay.
#[pyfunction(name = "apply_temporal_decay")]
#[pyo3(signature = (scores, paths, sources, mtimes, now, half_life_days = Num(30.0)), text_signature = "(scores, paths, sources, mtimes, now, half_life_days=30.0)")]
fn apply_temporal_decay_py(
    scores: Vec<Num>,
    paths: Vec<Text>,
    sources: Vec<Text>,
    mtimes: Vec<Option<Num>>,
    now: Num,
    half_life_days: Num,
) -> PyResult<Vec<f64>> {
    let (scores, paths, sources) = (nums(scores), texts(paths), texts(sources));
    let mtimes: Vec<Option<f64>> = mtimes.into_iter().map(|m| m.map(|m| m.0)).collect();
    let (now, half_life_days) = (now.0, half_life_days.0);
    let n = scores.len();
    if paths.len() != n || sources.len() != n || mtimes.len() != n {
        return Err(InvalidInputError::new_err(format!(
            "scores, paths, sources and mtimes must have the same length, got {n}, {}, {}, {}",
            paths.len(),
            sources.len(),
            mtimes.len()
        )));
    }
    let items: Vec<rank::DecayItem<'_>> = (0..n)
        .map(|i| rank::DecayItem { score: scores[i], path: &paths[i], source: &sources[i], mtime: mtimes[i] })
        .collect();
    Ok(rank::apply_temporal_decay(&items, now, half_life_days))
}

/// memsift's ranking of one query's candidates (merge, temporal decay, path tiers, MMR, floor) in one call.
///
/// Each list holds one value per candidate: chunk ``ids``, cosine ``vector`` scores and raw BM25 ``keyword``
/// scores (0 where that leg did not find the chunk), partial ``path_scores``, exact path ``tiers`` (3 full path,
/// 2 basename, 1 stem, 0 none), and each chunk's ``paths``, ``sources``, ``mtimes`` and ``texts``. ``mode`` is
/// ``hybrid``, ``vector-only`` or ``fts-only``; ``keyword_best`` is the keyword leg's best raw score; ``decay`` is
/// ``(now, half_life_days)`` or None; ``mmr`` is ``(lambda, pool_size)`` or None.
///
/// Returns ``(order, scores, relaxed)``: candidate indices best first (at most ``limit``), their reported scores
/// (capped at 1), and whether the relaxed pass chose them.
#[pyfunction(name = "rank_candidates")]
#[pyo3(signature = (ids, vector, keyword, path_scores, tiers, paths, sources, mtimes, texts, *, mode, query, keyword_best, vector_weight, text_weight, decay, mmr, min_score, limit))]
#[allow(clippy::too_many_arguments)] // one call per query: the arrays and settings of the whole ranking
fn rank_candidates_py(
    py: Python<'_>,
    ids: Vec<Id>,
    vector: Vec<Num>,
    keyword: Vec<Num>,
    path_scores: Vec<Num>,
    tiers: Vec<Int>,
    paths: Vec<Text>,
    sources: Vec<Text>,
    mtimes: Vec<Option<Num>>,
    texts: Vec<Text>,
    mode: Text,
    query: Text,
    keyword_best: Num,
    vector_weight: Num,
    text_weight: Num,
    decay: Option<(Num, Num)>,
    mmr: Option<(Num, Int)>,
    min_score: Num,
    limit: Int,
) -> PyResult<(Vec<usize>, Vec<f64>, bool)> {
    let n = ids.len();
    let lengths = [
        vector.len(),
        keyword.len(),
        path_scores.len(),
        tiers.len(),
        paths.len(),
        sources.len(),
        mtimes.len(),
        texts.len(),
    ];
    if lengths.iter().any(|&len| len != n) {
        return Err(InvalidInputError::new_err(format!("every candidate list must have {n} items, got {lengths:?}")));
    }
    let mode = rank::Mode::parse(&mode)?;
    let mmr = match mmr {
        Some((lambda, pool)) => Some((lambda.0, count(pool, "mmr pool size")?)),
        None => None,
    };
    let limit = count(limit, "limit")?;
    let ranked = detached(py, move || {
        let candidates: Vec<rank::Candidate<'_>> = (0..n)
            .map(|i| rank::Candidate {
                id: ids[i].0,
                vector: vector[i].0,
                keyword: keyword[i].0,
                path_score: path_scores[i].0,
                tier: u8::try_from(tiers[i].0.clamp(0, 3)).unwrap_or(0),
                path: &paths[i],
                source: &sources[i],
                mtime: mtimes[i].map(|m| m.0),
                text: &texts[i],
            })
            .collect();
        let params = rank::RankParams {
            mode,
            vector_weight: vector_weight.0,
            text_weight: text_weight.0,
            keyword_best: keyword_best.0,
            query: &query,
            decay: decay.map(|(now, half_life)| (now.0, half_life.0)),
            mmr,
            min_score: min_score.0,
            limit,
        };
        rank::rank(Analyzer::default(), &candidates, &params)
    })?;
    Ok((ranked.order, ranked.scores, ranked.relaxed))
}

/// Panics on purpose, to test that panics surface as ``InternalError`` (not public API).
#[pyfunction(name = "_debug_panic")]
fn debug_panic_py(py: Python<'_>) -> PyResult<()> {
    detached(py, || -> crate::error::Result<()> { panic!("deliberate panic from _debug_panic") })
}

/// Name of the SIMD kernel set picked for this CPU (``avx512``, ``avx2``, ``neon`` or ``scalar``).
#[pyfunction(name = "simd_kernels")]
fn simd_kernels_py() -> &'static str {
    crate::simd::kernels().name
}

#[pymodule]
pub mod _core {
    #[pymodule_export]
    use super::{
        apply_temporal_decay_py, bm25_score_to_unit_py, chunk_markdown_py, debug_panic_py, decay_multiplier_py,
        estimate_chars_py, fuse_rrf_py, fuse_weighted_py, is_evergreen_path_py, jaccard_py, memory_date_from_path_py,
        mmr_py, mmr_vectors_py, normalize_weights_py, rank_candidates_py, simd_kernels_py, tokenize_py, InternalError,
        InvalidInputError, MemsiftError, PyAnalyzer, PyBm25Index, PyChunk, PyVectorStore, SearchIndexError,
    };

    #[pymodule_init]
    fn init(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
        use pyo3::types::PyModuleMethods;
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
