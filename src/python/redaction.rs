//! Bindings of the redaction engine (`crate::redact`).

use super::*;

/// Masks secrets in text: the given user patterns (``logging.redactPatterns``) first, then the built-in rules.
///
/// A plain pattern is case-insensitive; ``/body/flags`` takes its own flags (``i``, ``m``, ``s``). A pattern with
/// a capture group masks group 1 (the whole match if group 1 did not take part); one without masks the whole
/// match. Patterns use Rust regex syntax and run in linear time; one that cannot compile (look-around,
/// back-references, too big) raises ``InvalidInputError`` whose message starts with ``logging.redactPatterns[i]: ``.
///
/// >>> Redactor([r"codename (\w+)"]).redact("codename nightingale, DB_PASSWORD=hunter2hunter2")
/// 'codename ***, DB_PASSWORD=***'
#[pyclass(name = "Redactor", module = "memsift._core", frozen)]
pub struct PyRedactor {
    inner: Arc<redact::Redactor>,
}

#[pymethods]
impl PyRedactor {
    #[new]
    #[pyo3(signature = (patterns = Vec::new()))]
    fn new(patterns: Vec<Text>) -> PyResult<Self> {
        let patterns = texts(patterns);
        let inner = redact::Redactor::new(&patterns).map_err(|e| InvalidInputError::new_err(e.message))?;
        Ok(Self { inner: Arc::new(inner) })
    }

    /// ``text`` with every secret masked; text without secrets comes back unchanged.
    fn redact(&self, py: Python<'_>, text: Text) -> PyResult<String> {
        let inner = Arc::clone(&self.inner);
        let text = text.0;
        detached(py, move || Ok(inner.redact(&text)))
    }

    /// :meth:`redact` of each text, in order (in parallel, without the GIL).
    fn redact_many(&self, py: Python<'_>, texts: Vec<Text>) -> PyResult<Vec<String>> {
        let inner = Arc::clone(&self.inner);
        let texts = self::texts(texts);
        detached(py, move || {
            use rayon::prelude::*;
            Ok(texts.par_iter().map(|t| inner.redact(t)).collect())
        })
    }

    /// ``text`` as a search indexes it: :meth:`redact`'s text with every mask it wrote replaced by ``***``, so no
    /// fragment of a secret is searchable (a guessed secret reads as any other of its shape).
    fn redact_for_search(&self, py: Python<'_>, text: Text) -> PyResult<String> {
        let inner = Arc::clone(&self.inner);
        let text = text.0;
        detached(py, move || Ok(inner.redact_for_search(&text)))
    }

    /// :meth:`redact_for_search` of each text, in order (in parallel, without the GIL).
    fn redact_for_search_many(&self, py: Python<'_>, texts: Vec<Text>) -> PyResult<Vec<String>> {
        let inner = Arc::clone(&self.inner);
        let texts = self::texts(texts);
        detached(py, move || {
            use rayon::prelude::*;
            Ok(texts.par_iter().map(|t| inner.redact_for_search(t)).collect())
        })
    }
}
