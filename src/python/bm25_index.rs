//! Bindings of the tantivy BM25 index.

use super::*;

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

pub(super) fn check_k(k: Int) -> PyResult<usize> {
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

    /// Merge every segment into one and delete the files no commit uses any more; returns how many segments
    /// there were. Searches keep reading the previous segments until the merge lands.
    fn merge_segments(&self, py: Python<'_>) -> PyResult<usize> {
        detached(py, || self.inner.merge_segments())
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

    /// :meth:`search` for many queries at once: one call, the GIL released once, queries run in parallel.
    ///
    /// >>> idx = Bm25Index()
    /// >>> idx.add([1, 2], ["a.md", "b.md"], ["memory"] * 2, ["tantivy index", "sqlite store"])
    /// >>> idx.commit()
    /// >>> [[i for i, _ in hits] for hits in idx.search_batch(["index", "store", "none"])]
    /// [[1], [2], []]
    #[pyo3(signature = (queries, k = Int(10), *, sources = None), text_signature = "($self, queries, k=10, *, sources=None)")]
    fn search_batch(
        &self,
        py: Python<'_>,
        queries: Vec<Text>,
        k: Int,
        sources: Option<Vec<Text>>,
    ) -> PyResult<Vec<Vec<(u64, f32)>>> {
        let k = check_k(k)?;
        let queries = texts(queries);
        let sources = sources.map(texts);
        detached(py, || self.inner.search_batch(&queries, k, sources.as_deref()))
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
