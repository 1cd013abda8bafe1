//! Binding of the workspace scan.

use super::*;

/// The memory files of ``workspace`` and ``extra_roots`` (absolute paths), stat only, in scan order, as
/// ``(relative path, path, st_mtime, size)``; see :func:`memsift.index.workspace.list_memory_files` for the rules.
/// ``media``: lower-case suffixes with their dot, counted in the extra paths only.
///
/// >>> import tempfile, pathlib
/// >>> root = pathlib.Path(tempfile.mkdtemp())
/// >>> _ = (root / 'MEMORY.md').write_text('# Facts')
/// >>> [(rel, size) for rel, _, _, size in scan_memory_files(str(root), [], [])]
/// [('MEMORY.md', 7)]
#[pyfunction(name = "scan_memory_files")]
pub(super) fn scan_memory_files_py(
    py: Python<'_>,
    workspace: PathBuf,
    extra_roots: Vec<PathBuf>,
    media: Vec<String>,
) -> PyResult<Vec<(OsString, OsString, f64, u64)>> {
    let files = detached(py, || Ok(crate::workspace::scan_memory_files(&workspace, &extra_roots, &media)))?;
    Ok(files.into_iter().map(|f| (f.rel, f.abs.into_os_string(), f.mtime, f.size)).collect())
}

/// Read, hash and chunk memory files in parallel, without the GIL: what a sync does to each changed file.
///
/// Returns, per path in order, ``(sha256 hex of the text, [(start_line, end_line, text, hash), ...])`` (the
/// chunks of :func:`chunk_markdown`), or ``None`` where :func:`memsift.index.workspace.read_memory_file` would
/// refuse the file (too large, unreadable, binary, not UTF-8), so the caller reads it there for the reason.
///
/// Raises:
///     InvalidInputError: ``tokens < 1``, ``overlap < 0`` or ``overlap >= tokens``.
///
/// >>> import tempfile, pathlib
/// >>> note = pathlib.Path(tempfile.mkdtemp()) / 'a.md'
/// >>> _ = note.write_text('# Title\nbody\n')
/// >>> [(len(h), [(s, e, t) for s, e, t, _ in chunks]) for h, chunks in prepare_files([str(note)], 1000)]
/// [(64, [(1, 3, '# Title\nbody\n')])]
#[pyfunction(name = "prepare_files")]
#[pyo3(
    signature = (paths, max_bytes, tokens = Int(400), overlap = Int(80)),
    text_signature = "(paths, max_bytes, tokens=400, overlap=80)"
)]
pub(super) fn prepare_files_py(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    max_bytes: u64,
    tokens: Int,
    overlap: Int,
) -> PyResult<Vec<Option<PreparedTuple>>> {
    let tokens = count(tokens, "tokens")?;
    let overlap = count(overlap, "overlap")?;
    let prepared = detached(py, || crate::workspace::prepare_files(&paths, max_bytes, tokens, overlap))?;
    Ok(prepared
        .into_iter()
        .map(|file| {
            file.map(|f| {
                let chunks = f.chunks.into_iter().map(|c| (c.start_line, c.end_line, c.text, c.hash)).collect();
                (f.hash, chunks)
            })
        })
        .collect())
}

/// ``(file hash, [(start_line, end_line, text, hash)])``.
type PreparedTuple = (String, Vec<(usize, usize, String, String)>);
