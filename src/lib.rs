//! memsift's Rust core.
//!
//! The public modules are pure: they never touch PyO3 and are tested with plain
//! `cargo test --lib`. `python` holds the thin bindings that make up the
//! `memsift._core` extension module.
//!
//! - [`analyzer`]: the one tokenizer behind BM25, queries, session search and MMR.
//! - [`bm25`]: the BM25 chunk index on tantivy, in RAM or in a directory.
//! - [`chunk`]: OpenClaw's Markdown chunker (`chunkMarkdown`).
//! - [`dedupe`]: the first look of one hit per fact: which results may repeat which.
//! - [`error`]: the crate's one error type, mapped to Python classes once.
//! - [`messages`]: ranked search over transcript messages (an in-RAM tantivy mirror).
//! - [`paths`]: path queries: a file named exactly ranks above every content match.
//! - [`rank`]: ranking primitives (hybrid merge, MMR, temporal decay, RRF).
//! - [`redact`]: secret redaction for text shown to agents (OpenClaw's "tools" mode).
//! - [`simd`]: dot-product kernels with runtime CPU dispatch.
//! - [`vector`]: the vector store: exact SIMD top-k and a usearch HNSW index.
//! - [`workspace`]: listing an agent workspace's memory files (the scan behind sync).

pub mod analyzer;
pub mod bm25;
pub mod chunk;
pub mod dedupe;
pub mod error;
pub mod messages;
pub mod nibbles;
pub mod paths;
pub mod rank;
pub mod redact;
pub mod signs;
pub mod simd;
pub mod vector;
pub mod workspace;

mod python;
