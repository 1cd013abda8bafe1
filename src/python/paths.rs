//! Binding of the path catalogue.

use super::*;

/// The indexed paths of one store generation, for exact path queries (reference §6).
///
/// Args:
///     paths: Workspace-relative paths; within a tier, matches come in this order.
///
/// >>> catalogue = PathCatalogue(['memory/2026-11-28.md'])
/// >>> [catalogue.exact(q) for q in ('memory/2026-11-28.md', '2026-11-28.MD', './2026-11-28', 'other')]
/// [[('memory/2026-11-28.md', 3)], [('memory/2026-11-28.md', 2)], [('memory/2026-11-28.md', 1)], []]
#[pyclass(name = "PathCatalogue", module = "memsift._core", frozen)]
pub struct PyPathCatalogue {
    inner: crate::paths::PathCatalogue,
}

#[pymethods]
impl PyPathCatalogue {
    #[new]
    fn new(py: Python<'_>, paths: Vec<String>) -> PyResult<Self> {
        Ok(Self { inner: detached(py, || Ok(crate::paths::PathCatalogue::new(paths)))? })
    }

    /// Files the query names exactly, as ``(path, tier)``: 3 = the full path, 2 = the basename (a query without
    /// ``/``), 1 = the stem; best tier first, each path once. Matching is on OpenClaw's normalization (trimmed,
    /// ``\`` as ``/``, no leading ``./``, NFC, lower case).
    fn exact(&self, query: &str) -> Vec<(String, u8)> {
        self.inner.exact(query).into_iter().map(|(path, tier)| (path.to_owned(), tier)).collect()
    }

    /// The catalogue of the indexed files in the stamps :meth:`FileStamps.save` wrote to ``path`` (a skipped
    /// file's left out) and the store generation they reflect, read without the GIL; ``None`` for a missing, short
    /// or foreign file. A process's first search builds it so instead of reading every path from the store.
    #[staticmethod]
    fn of_saved_stamps(py: Python<'_>, path: PathBuf) -> PyResult<Option<(Self, u64)>> {
        detached(py, || {
            let saved = crate::workspace::saved_paths(&path);
            Ok(saved.map(|(paths, generation)| (Self { inner: crate::paths::PathCatalogue::new(paths) }, generation)))
        })
    }

    /// Every path, sorted.
    fn paths(&self) -> Vec<String> {
        self.inner.paths().to_vec()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Whether ``path`` is one of the catalogue's paths, exactly (no normalization).
    fn __contains__(&self, path: &str) -> bool {
        self.inner.contains(path)
    }
}
