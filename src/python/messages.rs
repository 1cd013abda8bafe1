//! Bindings of the transcript message index (`crate::messages`).

use super::*;
use crate::messages::{MessageIndex, MessageRow, Sessions};

/// An in-RAM BM25 index of transcript messages for ranked ``sessions_search``, fed the session store's full-text
/// rows (analyzer tokens, space-separated); searches re-rank BM25 candidates by how much of the question each
/// message covers, by the message each replies to (the one before it in its session; add a session's rows in
/// order) and by how well their session as a whole answers.
///
/// >>> index = MessageIndex()
/// >>> index.add([1, 2], ["agent:main:a", "agent:main:b"], ["carolin went support group", "support support"])
/// >>> [i for i, _ in index.search("When did Caroline go to the support group?")]
/// [1, 2]
/// >>> [i for i, _ in index.search("support", exclude=["agent:main:a"])]
/// [2]
#[pyclass(name = "MessageIndex", module = "memsift._core", frozen)]
pub struct PyMessageIndex {
    inner: MessageIndex,
}

#[pymethods]
impl PyMessageIndex {
    #[new]
    #[pyo3(signature = (*, stem = true))]
    fn new(stem: bool) -> PyResult<Self> {
        Ok(Self { inner: MessageIndex::new(stem)? })
    }

    /// Index rows (ids, their session keys and token strings) and make them searchable.
    fn add(&self, py: Python<'_>, ids: Vec<u64>, sessions: Vec<Text>, tokens: Vec<Text>) -> PyResult<()> {
        if sessions.len() != ids.len() || tokens.len() != ids.len() {
            return Err(InvalidInputError::new_err(format!(
                "ids, sessions and tokens must have the same length, got {}, {}, {}",
                ids.len(),
                sessions.len(),
                tokens.len()
            )));
        }
        let rows: Vec<MessageRow> = ids
            .into_iter()
            .zip(texts(sessions))
            .zip(texts(tokens))
            .map(|((id, session), tokens)| MessageRow { id, session, tokens })
            .collect();
        detached(py, || self.inner.add(&rows))
    }

    /// Remove the rows of these sessions (gone from searches after the next ``add``).
    fn delete_sessions(&self, py: Python<'_>, sessions: Vec<Text>) -> PyResult<()> {
        let sessions = texts(sessions);
        detached(py, || self.inner.delete_sessions(&sessions))
    }

    /// Remove every row.
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || self.inner.clear())
    }

    /// Rows searchable now.
    #[getter]
    fn num_docs(&self) -> u64 {
        self.inner.num_docs()
    }

    /// The best ``k`` messages for ``query`` as ``(id, score)``, best first: from the sessions in ``only`` when
    /// given, else from all but those in ``exclude``.
    #[pyo3(signature = (query, k = Int(10), *, only = None, exclude = None), text_signature = "($self, query, k=10, *, only=None, exclude=None)")]
    fn search(
        &self,
        py: Python<'_>,
        query: Text,
        k: Int,
        only: Option<Vec<Text>>,
        exclude: Option<Vec<Text>>,
    ) -> PyResult<Vec<(u64, f32)>> {
        let k = check_k(k)?;
        let only = only.map(texts);
        let exclude = exclude.map(texts).unwrap_or_default();
        detached(py, || {
            let sessions = only.as_deref().map_or(Sessions::Except(&exclude), Sessions::Only);
            self.inner.search(&query, k, &sessions)
        })
    }

    fn __len__(&self) -> usize {
        self.inner.num_docs() as usize
    }
}
