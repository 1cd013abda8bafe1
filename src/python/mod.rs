//! Thin PyO3 bindings over the pure core, one module per core module (`args` holds the argument types).
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
// Each binding module starts with `use super::*`: one prelude of PyO3, numpy and core imports for all of them.
#![allow(clippy::wildcard_imports)]

use std::ffi::OsString;
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
use crate::{chunk, rank, redact};
use std::sync::Arc;

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

mod analysis;
mod args;
mod bm25_index;
mod messages;
mod paths;
mod ranking;
mod redaction;
mod vectors;
mod workspace;

use analysis::*;
use args::*;
use bm25_index::*;
use messages::*;
use paths::*;
use ranking::*;
use redaction::*;
use vectors::*;
use workspace::*;

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

/// Panics on purpose, to test that panics surface as ``InternalError`` (not public API).
#[pyfunction(name = "_debug_panic")]
fn debug_panic_py(py: Python<'_>) -> PyResult<()> {
    detached(py, || -> crate::error::Result<()> { panic!("deliberate panic from _debug_panic") })
}

/// Name of the SIMD kernel set picked for this CPU (``avx512``, ``avx2``, ``neon`` or ``scalar``).
///
/// ``MEMSIFT_SIMD`` set to one of these names before the first vector search picks that set instead, when this
/// CPU can run it; any other value leaves the choice to the CPU's features.
#[pyfunction(name = "simd_kernels")]
fn simd_kernels_py() -> &'static str {
    crate::simd::kernels().name
}

#[pymodule]
pub mod _core {
    #[pymodule_export]
    use super::{
        apply_temporal_decay_py, bm25_score_to_unit_py, chunk_markdown_py, chunk_memory_py, debug_panic_py,
        decay_multiplier_py, estimate_chars_py, fuse_messages_py, is_evergreen_path_py, jaccard_py,
        memory_date_from_path_py, mmr_py, near_copy_candidates_py, normalize_weights_py, prepare_files_py,
        rank_candidates_py, scan_memory_files_py, simd_kernels_py, tokenize_py, InternalError, InvalidInputError,
        MemsiftError, PyAnalyzer, PyBm25Index, PyChunk, PyFileStamps, PyMessageIndex, PyPathCatalogue, PyRedactor,
        PyVectorStore, SearchIndexError,
    };

    #[pymodule_init]
    fn init(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
        use pyo3::types::PyModuleMethods;
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
