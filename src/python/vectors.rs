//! Bindings of the vector store (numpy in and out, zero-copy where possible).

use super::*;

/// Contiguous vector store with exact SIMD top-k and usearch HNSW above a size threshold.
///
/// ``i8_from``: from this many vectors the store keeps them as i8 (a quarter of f32's memory), whatever ``dtype``,
/// and answers every search with the exact i8 scan instead of the graph (which it drops): the scan reads 1M x 384
/// in ~12 ms on 2 cores and is exact, where a graph would need thousands of candidates to keep recall@10 at 0.95.
/// ``u4_from``: from this many vectors an i8 store also keeps 4-bit codes of them (an eighth of f32's memory) and
/// its scan ranks every row by them first, reading half the bytes, then scores the best 1,000 exactly.
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
pub(super) fn as_f32_matrix<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<PyReadonlyArray2<'py, f32>> {
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

pub(super) fn as_f32_vector<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArray1<'py, f32>> {
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
pub(super) fn as_ids(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let bad = |why: String| {
        InvalidInputError::new_err(format!("ids must be a 1-D sequence of integers in [0, 2**64): {why}"))
    };
    // A list or tuple of ints (what the Python layer passes) is read directly: numpy loads only for arrays, so a
    // keyword-only process never imports it.
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<pyo3::types::PyTuple>() {
        let items = obj.try_iter()?;
        let mut ids = Vec::with_capacity(obj.len().unwrap_or(0));
        for item in items {
            let item = item?;
            match item.extract::<u64>() {
                Ok(id) if !item.is_instance_of::<pyo3::types::PyBool>() => ids.push(id),
                _ if item.extract::<i64>().is_ok_and(|v| v < 0) => {
                    return Err(bad(format!("got a negative id ({item})")))
                }
                _ => return Err(bad(format!("got {}", item.repr()?))),
            }
        }
        return Ok(ids);
    }
    if let Ok(view) = obj.extract::<PyReadonlyArray1<'_, u64>>() {
        return Ok(view.as_array().to_vec());
    }
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

pub(super) fn hits_to_arrays(py: Python<'_>, hits: Vec<(u64, f32)>) -> Hits<'_> {
    let (ids, scores): (Vec<u64>, Vec<f32>) = hits.into_iter().unzip();
    (ids.into_pyarray(py), scores.into_pyarray(py))
}

fn ann_params(
    ann_threshold: Int,
    connectivity: Int,
    expansion_add: Int,
    expansion_search: Int,
    i8_from: Option<Int>,
    u4_from: Option<Int>,
) -> PyResult<AnnParams> {
    Ok(AnnParams {
        threshold: count(ann_threshold, "ann_threshold")?,
        connectivity: count(connectivity, "connectivity")?,
        expansion_add: count(expansion_add, "expansion_add")?,
        expansion_search: count(expansion_search, "expansion_search")?,
        i8_from: i8_from.map(|n| count(n, "i8_from")).transpose()?.unwrap_or(usize::MAX),
        u4_from: u4_from.map(|n| count(n, "u4_from")).transpose()?.unwrap_or(usize::MAX),
    })
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
    #[allow(clippy::too_many_arguments)] // the Python keyword arguments
    #[pyo3(signature = (dims, *, metric = Text::from("cosine"), dtype = Text::from("f32"), ann_threshold = Int(20000), connectivity = Int(16), expansion_add = Int(64), expansion_search = Int(96), i8_from = None, u4_from = None), text_signature = "(dims, *, metric='cosine', dtype='f32', ann_threshold=20000, connectivity=16, expansion_add=64, expansion_search=96, i8_from=None, u4_from=None)")]
    fn new(
        dims: Int,
        metric: Text,
        dtype: Text,
        ann_threshold: Int,
        connectivity: Int,
        expansion_add: Int,
        expansion_search: Int,
        i8_from: Option<Int>,
        u4_from: Option<Int>,
    ) -> PyResult<Self> {
        let params = ann_params(ann_threshold, connectivity, expansion_add, expansion_search, i8_from, u4_from)?;
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
    /// True when searches use the HNSW index (``ann_threshold <= len < i8_from``).
    #[getter]
    fn ann_active(&self) -> bool {
        self.read().ann_active()
    }
    /// True when searches rank with 4-bit codes first (an i8 store of at least ``u4_from`` vectors).
    #[getter]
    fn u4_active(&self) -> bool {
        self.read().u4_active()
    }
    /// True when searches rank with 1-bit codes before the 4-bit ones (at least 250,000 vectors with 4-bit codes,
    /// on a CPU with a byte-shuffle kernel: AVX2 or later).
    #[getter]
    fn one_bit_active(&self) -> bool {
        self.read().one_bit_active()
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

    /// The stored ids (``uint64``), in no particular order.
    fn ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.read().ids().to_vec().into_pyarray(py)
    }

    /// Write the store (ids, vectors and the HNSW graph when active) to ``path`` with an integer ``tag``, through a
    /// temporary file renamed over ``path``: a reader sees the old file or the new one.
    ///
    /// Raises:
    ///     SearchIndexError: the file cannot be written (the message names it).
    #[pyo3(signature = (path, tag = 0))]
    fn save(&self, py: Python<'_>, path: PathBuf, tag: u64) -> PyResult<()> {
        detached(py, || self.read().save(&path, tag))
    }

    /// Read a store written by :meth:`save`: ``(store, tag)``. The HNSW graph loads as saved (no rebuild); the
    /// keyword arguments, as for the constructor, apply to later growth.
    ///
    /// Raises:
    ///     SearchIndexError: the file is missing, torn or not a vector file (the message names it).
    ///
    /// >>> import numpy as np, tempfile, os
    /// >>> vs = VectorStore(2)
    /// >>> vs.add(np.array([7], dtype=np.uint64), np.array([[1, 0]], dtype=np.float32))
    /// >>> path = os.path.join(tempfile.mkdtemp(), 'vectors.bin')
    /// >>> vs.save(path, tag=3)
    /// >>> loaded, tag = VectorStore.load(path)
    /// >>> (len(loaded), tag, loaded.ids().tolist())
    /// (1, 3, [7])
    #[staticmethod]
    #[allow(clippy::too_many_arguments)] // the Python keyword arguments
    #[pyo3(signature = (path, *, ann_threshold = Int(20000), connectivity = Int(16), expansion_add = Int(64), expansion_search = Int(96), i8_from = None, u4_from = None), text_signature = "(path, *, ann_threshold=20000, connectivity=16, expansion_add=64, expansion_search=96, i8_from=None, u4_from=None)")]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        ann_threshold: Int,
        connectivity: Int,
        expansion_add: Int,
        expansion_search: Int,
        i8_from: Option<Int>,
        u4_from: Option<Int>,
    ) -> PyResult<(Self, u64)> {
        let params = ann_params(ann_threshold, connectivity, expansion_add, expansion_search, i8_from, u4_from)?;
        let (store, tag) = detached(py, || VectorStore::load(&path, params))?;
        Ok((Self { inner: RwLock::new(store) }, tag))
    }

    /// Top-k ``(ids, scores)`` best first; ``exact=None`` uses HNSW or 4-bit codes when active, ``exact=True``
    /// neither.
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
