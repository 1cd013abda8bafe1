//! memsift's Rust core.
//!
//! The pure modules (`analyzer`, `chunk`, `bm25`, `simd`, `vector`, `rank`) never
//! touch PyO3 and are tested with plain `cargo test`; `python` holds the thin
//! bindings that make up the `memsift._core` extension module.

pub mod analyzer;
pub mod bm25;
pub mod chunk;
pub mod error;
pub mod messages;
pub mod paths;
pub mod rank;
pub mod redact;
pub mod simd;
pub mod vector;
pub mod workspace;

mod python;
