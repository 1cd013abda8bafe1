//! Bindings of the analyzer and the Markdown chunker.

use super::*;

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
pub(super) struct TokenStrings(Mutex<FxHashMap<Box<str>, Py<PyString>>>);

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

    /// The distinct terms of a search query with their weights, in first-seen order: how often the query says
    /// each, with English stopwords and CJK particles dropped (all kept when the query has nothing else) and an
    /// identifier counting as one word shared by its parts plus half a word for the whole compound.
    ///
    /// >>> Analyzer().query_terms("when did the cats meet the cat?")
    /// [('cat', 2.0), ('meet', 1.0)]
    /// >>> Analyzer().query_terms("ERR_CONN_RESET")
    /// [('err_conn_reset', 0.5), ('err', 0.3333333432674408), ('conn', 0.3333333432674408), ('reset', 0.3333333432674408)]
    fn query_terms(&self, py: Python<'_>, text: Text) -> PyResult<Vec<(String, f32)>> {
        let analyzer = self.inner;
        detached(py, move || Ok(analyzer.query_terms(&text)))
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
pub(super) fn tokenize_py(py: Python<'_>, text: Text) -> PyResult<Bound<'_, PyList>> {
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
pub(super) fn chunk_markdown_py(py: Python<'_>, text: Text, tokens: Int, overlap: Int) -> PyResult<Vec<PyChunk>> {
    let tokens = count(tokens, "tokens")?;
    let overlap = count(overlap, "overlap")?;
    let chunks = detached(py, move || chunk::chunk_markdown(&text, tokens, overlap))?;
    Ok(chunks
        .into_iter()
        .map(|c| PyChunk { start_line: c.start_line, end_line: c.end_line, text: c.text, hash: c.hash })
        .collect())
}

/// Chunk a memory file as OpenClaw 2.x indexes it: ``(start_line, end_line, text, hash, importance)`` per chunk.
///
/// Args:
///     text: The file content.
///     tokens: Target chunk size in estimated tokens, as for :func:`chunk_markdown`.
///     overlap: Tokens of trailing whole lines carried into the next chunk (never from one entry into the next).
///     per_entry: Chunk each entry on its own (2.x does so for the root ``MEMORY.md`` and ``USER.md``): an entry
///         starts at each line starting with ``- `` or a Markdown heading (and at line 1); its chunks get the
///         highest ``<!-- importance: N -->`` (N in 1..10) on its lines that end with an annotation (a heading's
///         chunks: on their own lines), else ``None``.
///     annotations: Strip the ``importance``/``trigger``/``project`` annotations closed on their line from the
///         chunks' text (2.x does so in every memory file), and the spaces they leave at line ends; line numbers
///         are unchanged. ``hash`` is the sha256 of the text returned.
///
/// Without ``per_entry``, importance is ``None`` and the chunks are :func:`chunk_markdown`'s (of the stripped text
/// with ``annotations``).
///
/// Raises:
///     InvalidInputError: ``tokens < 1``, ``overlap < 0`` or ``overlap >= tokens``.
///
/// >>> text = "# Facts\n- Port is 8080. <!-- importance: 9 -->\n- Host is a."
/// >>> [(s, e, t, i) for s, e, t, _, i in chunk_memory(text, per_entry=True, annotations=True)]
/// [(1, 1, '# Facts', None), (2, 2, '- Port is 8080.', 9), (3, 3, '- Host is a.', None)]
#[pyfunction(name = "chunk_memory")]
#[pyo3(
    signature = (text, tokens = Int(400), overlap = Int(80), per_entry = false, annotations = false),
    text_signature = "(text, tokens=400, overlap=80, per_entry=False, annotations=False)"
)]
pub(super) fn chunk_memory_py(
    py: Python<'_>,
    text: Text,
    tokens: Int,
    overlap: Int,
    per_entry: bool,
    annotations: bool,
) -> PyResult<Vec<MemoryChunkTuple>> {
    let tokens = count(tokens, "tokens")?;
    let overlap = count(overlap, "overlap")?;
    let chunks = detached(py, move || chunk::chunk_memory(&text, tokens, overlap, per_entry, annotations))?;
    Ok(chunks.into_iter().map(memory_chunk_tuple).collect())
}

/// ``(start_line, end_line, text, hash, importance)``: a chunk of :func:`chunk_memory` and :func:`prepare_files`.
pub(super) type MemoryChunkTuple = (usize, usize, String, String, Option<u8>);

pub(super) fn memory_chunk_tuple(c: chunk::MemoryChunk) -> MemoryChunkTuple {
    (c.chunk.start_line, c.chunk.end_line, c.chunk.text, c.chunk.hash, c.importance)
}

/// OpenClaw's weighted length: UTF-16 length with CJK/full-width characters counted 4x.
///
/// >>> estimate_chars("ab视频")
/// 10
#[pyfunction(name = "estimate_chars")]
pub(super) fn estimate_chars_py(text: Text) -> usize {
    chunk::estimate_chars(&text)
}
