//! Binding of the workspace scan.

use super::*;

/// The memory files of ``workspace`` and ``extra_roots`` (absolute paths), stat only, in scan order, as
/// ``(relative path, path, st_mtime, size)``; see :func:`memsift.index.workspace.list_memory_files` for the rules.
/// ``media``: lower-case suffixes with their dot, counted in the extra paths only. ``root_files``: the file names
/// taken at the workspace root, in that order, before ``memory/`` (OpenClaw 1.x: ``MEMORY.md``, ``memory.md``;
/// 2.x: ``MEMORY.md``, ``USER.md``).
///
/// Raises:
///     InvalidInputError: a name in ``root_files`` is not a plain file name (empty, ``.``, ``..`` or with a ``/``).
///
/// >>> import tempfile, pathlib
/// >>> root = pathlib.Path(tempfile.mkdtemp())
/// >>> _ = (root / 'MEMORY.md').write_text('# Facts')
/// >>> _ = (root / 'USER.md').write_text('- Terse')
/// >>> [(rel, size) for rel, _, _, size in scan_memory_files(str(root), [], [])]
/// [('MEMORY.md', 7)]
/// >>> [rel for rel, _, _, _ in scan_memory_files(str(root), [], [], root_files=['MEMORY.md', 'USER.md'])]
/// ['MEMORY.md', 'USER.md']
#[pyfunction(name = "scan_memory_files")]
#[pyo3(
    signature = (workspace, extra_roots, media, root_files = None),
    text_signature = "(workspace, extra_roots, media, root_files=('MEMORY.md', 'memory.md'))"
)]
pub(super) fn scan_memory_files_py(
    py: Python<'_>,
    workspace: PathBuf,
    extra_roots: Vec<PathBuf>,
    media: Vec<String>,
    root_files: Option<Vec<String>>,
) -> PyResult<Vec<(OsString, OsString, f64, u64)>> {
    let root_files = root_files.unwrap_or_else(|| vec!["MEMORY.md".to_owned(), "memory.md".to_owned()]);
    check_root_files(&root_files)?;
    let files =
        detached(py, || Ok(crate::workspace::scan_memory_files(&workspace, &extra_roots, &media, &root_files, true)))?;
    Ok(files.into_iter().map(|f| (f.rel, f.abs.into_os_string(), f.mtime, f.size)).collect())
}

/// ``(relative path, path, st_mtime, size)``: a listed memory file.
type FileTuple = (OsString, OsString, f64, u64);

fn check_root_files(root_files: &[String]) -> PyResult<()> {
    match root_files.iter().find(|name| matches!(name.as_str(), "" | "." | "..") || name.contains('/')) {
        Some(bad) => Err(InvalidInputError::new_err(format!("root_files: {bad:?} is not a file name"))),
        None => Ok(()),
    }
}

/// The store's stamp of every indexed file, held in the core: :meth:`changes` tells what a sync must look at (the
/// scan and the compare) with the GIL released throughout, so searches running beside the check are not slowed by
/// it (a Python loop over 584k files held them up to seconds on 2 cores).
///
/// >>> import tempfile, pathlib, os
/// >>> root = pathlib.Path(tempfile.mkdtemp())
/// >>> _ = (root / 'MEMORY.md').write_text('# Facts')
/// >>> stamps = FileStamps()
/// >>> stat = os.stat(root / 'MEMORY.md')
/// >>> stamps.extend([('MEMORY.md', stat.st_mtime, stat.st_size, stat.st_mtime + 5)])
/// >>> len(stamps), stamps.changes(str(root), [], [], ['MEMORY.md'], 2.0, 0.1)
/// (1, ([], []))
/// >>> _ = (root / 'MEMORY.md').write_text('# Facts, more')
/// >>> [rel for rel, _, _, _ in stamps.changes(str(root), [], [], ['MEMORY.md'], 2.0, 0.1)[0]]
/// ['MEMORY.md']
#[pyclass(name = "FileStamps", module = "memsift._core")]
pub struct PyFileStamps {
    inner: crate::workspace::FileStamps,
}

#[pymethods]
impl PyFileStamps {
    #[new]
    fn new() -> Self {
        Self { inner: crate::workspace::FileStamps::default() }
    }

    /// Add ``(path, st_mtime, size, read_at)`` stamps (a path given again replaces its stamp).
    fn extend(&mut self, stamps: Vec<(OsString, f64, u64, f64)>) {
        for (path, mtime, size, read_at) in stamps {
            self.inner.insert(path, crate::workspace::Stamp { mtime, size, read_at });
        }
    }

    /// Write the stamps and the store ``generation`` they reflect to ``path`` (aside, then renamed into place),
    /// without the GIL; ``False`` when the file could not be written (it is a derived copy: nothing else changes).
    fn save(&self, py: Python<'_>, path: PathBuf, generation: u64) -> bool {
        let stamps = &self.inner;
        py.detach(|| stamps.save(&path, generation).is_ok())
    }

    /// The stamps and generation :meth:`save` wrote to ``path``, or ``None`` for a missing, short or foreign file.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> Option<(Self, u64)> {
        py.detach(|| crate::workspace::FileStamps::load(&path)).map(|(inner, generation)| (Self { inner }, generation))
    }

    /// Forget the stamps of ``paths`` (those it holds).
    fn remove(&mut self, paths: Vec<OsString>) {
        for path in paths {
            self.inner.remove(&path);
        }
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// What a sync must look at: the memory files :func:`scan_memory_files` lists (same arguments; the scan runs on
    /// the calling thread alone, so that its priority holds) that are not stamped, or not with their current mtime
    /// and size, or were read within ``racy_s`` (whole-second mtimes) or ``racy_fine_s`` of their mtime, as
    /// ``(relative path, path, st_mtime, size)``; and the stamped paths it does not list, sorted. Both empty: nothing
    /// to sync.
    ///
    /// Raises:
    ///     InvalidInputError: a name in ``root_files`` is not a plain file name.
    #[pyo3(signature = (workspace, extra_roots, media, root_files, racy_s, racy_fine_s))]
    #[allow(clippy::too_many_arguments)]
    fn changes(
        &self,
        py: Python<'_>,
        workspace: PathBuf,
        extra_roots: Vec<PathBuf>,
        media: Vec<String>,
        root_files: Vec<String>,
        racy_s: f64,
        racy_fine_s: f64,
    ) -> PyResult<(Vec<FileTuple>, Vec<OsString>)> {
        check_root_files(&root_files)?;
        let windows = crate::workspace::RacyWindows { whole_seconds: racy_s, fine: racy_fine_s };
        let stamps = &self.inner;
        detached(py, || {
            let files = crate::workspace::scan_memory_files(&workspace, &extra_roots, &media, &root_files, false);
            let (changed, gone) = stamps.changes(&files, windows);
            let changed = changed.into_iter().map(|f| (f.rel.clone(), f.abs.clone().into_os_string(), f.mtime, f.size));
            Ok((changed.collect(), gone.into_iter().cloned().collect()))
        })
    }
}

/// Read, hash and chunk memory files in parallel, without the GIL: what a sync does to each changed file.
///
/// Returns, per path in order, ``(sha256 hex of the raw text, [(start_line, end_line, text, hash, importance),
/// ...])`` (the chunks of :func:`chunk_memory`), or ``None`` where :func:`memsift.index.workspace.read_memory_file`
/// would refuse the file (too large, unreadable, binary, not UTF-8), so the caller reads it there for the reason.
/// ``per_entry`` (one flag per path, default all ``False``) chunks those files per entry, with their importance;
/// ``annotations`` strips the annotations from every file's chunks (see :func:`chunk_memory`).
///
/// Raises:
///     InvalidInputError: ``tokens < 1``, ``overlap < 0`` or ``overlap >= tokens``; ``per_entry`` is not one flag
///         per path.
///
/// >>> import tempfile, pathlib
/// >>> note = pathlib.Path(tempfile.mkdtemp()) / 'a.md'
/// >>> _ = note.write_text('# Title\nbody\n')
/// >>> [(len(h), [(s, e, t, i) for s, e, t, _, i in chunks]) for h, chunks in prepare_files([str(note)], 1000)]
/// [(64, [(1, 3, '# Title\nbody\n', None)])]
#[pyfunction(name = "prepare_files")]
#[pyo3(
    signature = (paths, max_bytes, tokens = Int(400), overlap = Int(80), per_entry = None, annotations = false),
    text_signature = "(paths, max_bytes, tokens=400, overlap=80, per_entry=None, annotations=False)"
)]
pub(super) fn prepare_files_py(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    max_bytes: u64,
    tokens: Int,
    overlap: Int,
    per_entry: Option<Vec<bool>>,
    annotations: bool,
) -> PyResult<Vec<Option<PreparedTuple>>> {
    let tokens = count(tokens, "tokens")?;
    let overlap = count(overlap, "overlap")?;
    let per_entry = per_entry.unwrap_or_else(|| vec![false; paths.len()]);
    let prepared =
        detached(py, || crate::workspace::prepare_files(&paths, max_bytes, tokens, overlap, &per_entry, annotations))?;
    Ok(prepared
        .into_iter()
        .map(|file| file.map(|f| (f.hash, f.chunks.into_iter().map(memory_chunk_tuple).collect())))
        .collect())
}

/// ``(file hash, [(start_line, end_line, text, hash, importance)])``.
type PreparedTuple = (String, Vec<MemoryChunkTuple>);
