//! Contiguous vector store: exact top-k with SIMD kernels (multi-threaded for
//! large scans) and a usearch HNSW index once the store passes a size threshold.
//!
//! Cosine stores unit vectors so every score is a dot product. ANN candidates are
//! re-scored with the exact kernel, so scores never depend on the search path.
//! A large i8 store also keeps 4-bit codes of its vectors ([`crate::nibbles`]): its scan ranks every row by them
//! and scores the best exactly; a very large one ranks by 1-bit codes ([`crate::signs`]) before those.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Condvar, Mutex};

use half::f16;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use usearch::{Index as AnnIndex, IndexOptions, MetricKind, ScalarKind};

use crate::error::{invalid, Error, Result};
use crate::nibbles::NibbleCodes;
use crate::signs::BLOCK_ROWS;
use crate::simd::kernels;

/// Below this many multiply-adds a scan stays on the calling thread.
const PARALLEL_SCAN_WORK: usize = 1 << 21;
/// An HNSW search fetches this many times `k` candidates (at least [`ANN_MIN_CANDIDATES`]) for exact rescoring.
const ANN_OVERSAMPLE: usize = 4;
const ANN_MIN_CANDIDATES: usize = 40;
/// The exact scan of a large i8 store ranks with an i8 query first and scores this many times `k` exactly (at least
/// [`I8_MIN_RESCORED`]: a store of near copies of one note holds hundreds within the query's rounding of each other).
const I8_RESCORE: usize = 4;
const I8_MIN_RESCORED: usize = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Cosine,
    Dot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantization {
    F32,
    F16,
    I8,
}

impl Metric {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "cosine" => Ok(Self::Cosine),
            "dot" => Ok(Self::Dot),
            _ => invalid!("metric must be 'cosine' or 'dot', got {s:?}"),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Cosine => "cosine",
            Self::Dot => "dot",
        }
    }
}

impl Quantization {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "f32" => Ok(Self::F32),
            "f16" => Ok(Self::F16),
            "i8" => Ok(Self::I8),
            _ => invalid!("dtype must be 'f32', 'f16' or 'i8', got {s:?}"),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F16 => "f16",
            Self::I8 => "i8",
        }
    }
}

/// HNSW parameters (usearch names).
#[derive(Clone, Copy, Debug)]
pub struct AnnParams {
    pub threshold: usize,
    pub connectivity: usize,
    pub expansion_add: usize,
    pub expansion_search: usize,
    /// From this many vectors the store keeps them as i8 (a quarter of f32's memory; `usize::MAX`: never).
    pub i8_from: usize,
    /// From this many vectors an i8 store also keeps 4-bit codes and ranks with them first (`usize::MAX`: never).
    pub u4_from: usize,
}

impl Storage {
    fn empty(quant: Quantization) -> Self {
        match quant {
            Quantization::F32 => Storage::F32(Vec::new()),
            Quantization::F16 => Storage::F16(Vec::new()),
            Quantization::I8 => Storage::I8 { data: Vec::new(), scales: Vec::new() },
        }
    }

    /// Row `slot` (of `dims` values) as f32.
    fn decode(&self, dims: usize, slot: usize) -> Vec<f32> {
        let mut out = vec![0f32; dims];
        self.decode_into(slot, &mut out);
        out
    }

    /// Row `slot` into `out` (its width), without allocating: for passes over every row.
    fn decode_into(&self, slot: usize, out: &mut [f32]) {
        let range = slot * out.len()..(slot + 1) * out.len();
        match self {
            Storage::F32(v) => out.copy_from_slice(&v[range]),
            Storage::F16(v) => out.iter_mut().zip(&v[range]).for_each(|(o, x)| *o = x.to_f32()),
            Storage::I8 { data, scales } => {
                out.iter_mut().zip(&data[range]).for_each(|(o, &q)| *o = f32::from(q) * scales[slot]);
            }
        }
    }
}

enum Storage {
    F32(Vec<f32>),
    F16(Vec<f16>),
    /// Symmetric per-vector quantization: value ≈ scale * q.
    I8 {
        data: Vec<i8>,
        scales: Vec<f32>,
    },
}

pub struct VectorStore {
    dims: usize,
    metric: Metric,
    quant: Quantization,
    ids: Vec<u64>,
    slot_of: FxHashMap<u64, usize>,
    storage: Storage,
    ann_params: AnnParams,
    ann: Option<Ann>,
    nibbles: Option<NibbleCodes>,
}

/// L2-normalize in place; zero vectors stay zero (their cosine with anything is 0).
pub fn normalize(v: &mut [f32]) {
    let norm = (kernels().f32)(v, v).sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

impl VectorStore {
    pub fn new(dims: usize, metric: Metric, quant: Quantization, ann_params: AnnParams) -> Result<Self> {
        if dims == 0 || dims > 65_536 {
            return invalid!("dims must be between 1 and 65536, got {dims}");
        }
        let storage = Storage::empty(quant);
        Ok(Self {
            dims,
            metric,
            quant,
            ids: Vec::new(),
            slot_of: FxHashMap::default(),
            storage,
            ann_params,
            ann: None,
            nibbles: None,
        })
    }

    pub fn dims(&self) -> usize {
        self.dims
    }
    pub fn metric(&self) -> Metric {
        self.metric
    }
    pub fn quantization(&self) -> Quantization {
        self.quant
    }
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    pub fn contains(&self, id: u64) -> bool {
        self.slot_of.contains_key(&id)
    }
    pub fn ann_active(&self) -> bool {
        self.ann.is_some()
    }
    pub fn u4_active(&self) -> bool {
        self.nibbles.is_some()
    }

    pub fn one_bit_active(&self) -> bool {
        self.nibbles.as_ref().is_some_and(NibbleCodes::signs_active)
    }

    fn check_vectors(&self, n: usize, data: &[f32]) -> Result<()> {
        if data.len() != n * self.dims {
            return invalid!(
                "expected {n} vectors of {} dims ({} values), got {} values",
                self.dims,
                n * self.dims,
                data.len()
            );
        }
        if let Some(pos) = data.iter().position(|x| !x.is_finite()) {
            return invalid!("vector {} has a non-finite value at position {}", pos / self.dims, pos % self.dims);
        }
        Ok(())
    }

    /// Insert or replace `ids[i]` → row `i` of `data` (row-major, `dims` wide).
    pub fn add(&mut self, ids: &[u64], data: &[f32]) -> Result<()> {
        self.check_vectors(ids.len(), data)?;
        let dims = self.dims;
        let mut row = vec![0f32; dims];
        for (i, &id) in ids.iter().enumerate() {
            row.copy_from_slice(&data[i * dims..(i + 1) * dims]);
            if self.metric == Metric::Cosine {
                normalize(&mut row);
            }
            let slot = if let Some(&slot) = self.slot_of.get(&id) {
                slot
            } else {
                self.ids.push(id);
                self.slot_of.insert(id, self.ids.len() - 1);
                self.grow_storage();
                self.ids.len() - 1
            };
            self.write_slot(slot, &row);
            if let Some(nibbles) = &mut self.nibbles {
                nibbles.set(slot, &self.storage.decode(dims, slot));
            }
        }
        if self.ids.len() >= self.ann_params.i8_from {
            self.requantize(Quantization::I8);
            self.ann = None;
        }
        self.refresh_nibbles();
        if let Some(ann) = &self.ann {
            ann.reserve(self.ids.len())?;
            let mut seen = FxHashSet::default();
            let rows: Vec<(u64, Vec<f32>)> =
                ids.iter().filter(|&&id| seen.insert(id)).map(|&id| (id, self.decoded(self.slot_of[&id]))).collect();
            for (id, _) in &rows {
                if ann.index.contains(*id) {
                    ann.index.remove(*id).map_err(ann_error)?;
                }
            }
            rows.par_iter().try_for_each(|(id, v)| ann.add(*id, v))?;
        } else if self.wants_graph() {
            self.build_ann()?;
        }
        Ok(())
    }

    /// Whether searches should go through an HNSW graph: from `threshold` vectors, but not from `i8_from`, where
    /// the exact i8 scan is the better trade. It reads a quarter of f32's bytes (1M x 384 in ~12 ms on 2 cores),
    /// answers exactly, and needs no second copy of the vectors. A graph over vectors of high intrinsic dimension
    /// would need thousands of candidates to keep recall@10 at 0.95 at that size, and cost as much.
    fn wants_graph(&self) -> bool {
        let n = self.ids.len();
        n >= self.ann_params.threshold.max(1) && n < self.ann_params.i8_from
    }

    /// Keep 4-bit codes while the store is i8 and holds `u4_from` vectors (dropped under half that, so a store
    /// near the threshold does not fit them again and again), fitted again once it has doubled.
    fn refresh_nibbles(&mut self) {
        let (n, from) = (self.ids.len(), self.ann_params.u4_from);
        let wanted = self.quant == Quantization::I8 && n >= from;
        let kept = self.quant == Quantization::I8 && n >= from / 2;
        match &self.nibbles {
            Some(nibbles) if kept && !nibbles.outgrown() => {}
            Some(_) if kept => self.fit_nibbles(),
            None if wanted => self.fit_nibbles(),
            _ => self.nibbles = None,
        }
        let storage = &self.storage;
        if let Some(nibbles) = &mut self.nibbles {
            nibbles.refresh_signs(|slot, out| storage.decode_into(slot, out));
        }
    }

    fn fit_nibbles(&mut self) {
        let (storage, dims) = (&self.storage, self.dims);
        self.nibbles = Some(NibbleCodes::fit(dims, self.ids.len(), |slot| storage.decode(dims, slot)));
    }

    fn grow_storage(&mut self) {
        let dims = self.dims;
        match &mut self.storage {
            Storage::F32(v) => v.resize(v.len() + dims, 0.0),
            Storage::F16(v) => v.resize(v.len() + dims, f16::ZERO),
            Storage::I8 { data, scales } => {
                data.resize(data.len() + dims, 0);
                scales.push(0.0);
            }
        }
    }

    fn write_slot(&mut self, slot: usize, row: &[f32]) {
        let range = slot * self.dims..(slot + 1) * self.dims;
        match &mut self.storage {
            Storage::F32(v) => v[range].copy_from_slice(row),
            Storage::F16(v) => v[range].iter_mut().zip(row).for_each(|(d, &x)| *d = f16::from_f32(x)),
            Storage::I8 { data, scales } => {
                let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
                let scale = if max > 0.0 { max / 127.0 } else { 0.0 };
                scales[slot] = scale;
                for (d, &x) in data[range].iter_mut().zip(row) {
                    *d = if scale > 0.0 { (x / scale).round().clamp(-127.0, 127.0) as i8 } else { 0 };
                }
            }
        }
    }

    /// The stored (quantized) row of `slot` as f32.
    fn decoded(&self, slot: usize) -> Vec<f32> {
        self.storage.decode(self.dims, slot)
    }

    /// Keep every vector as `to` from now on (the HNSW graph keeps its own scalars).
    pub fn requantize(&mut self, to: Quantization) {
        if to == self.quant {
            return;
        }
        let old = std::mem::replace(&mut self.storage, Storage::empty(to));
        self.quant = to;
        self.nibbles = None;
        for slot in 0..self.ids.len() {
            self.grow_storage();
            self.write_slot(slot, &old.decode(self.dims, slot));
        }
        self.refresh_nibbles();
    }

    #[inline]
    fn score_slot(&self, slot: usize, query: &[f32]) -> f32 {
        let k = kernels();
        let range = slot * self.dims..(slot + 1) * self.dims;
        match &self.storage {
            Storage::F32(v) => (k.f32)(&v[range], query),
            Storage::F16(v) => (k.f16)(&v[range], query),
            Storage::I8 { data, scales } => scales[slot] * (k.i8)(&data[range], query),
        }
    }

    /// Remove ids; returns how many were present.
    pub fn remove(&mut self, ids: &[u64]) -> Result<usize> {
        let mut removed = 0;
        for &id in ids {
            let Some(slot) = self.slot_of.remove(&id) else { continue };
            removed += 1;
            let last = self.ids.len() - 1;
            if slot != last {
                let moved = self.ids[last];
                let row = self.decoded_raw(last);
                self.ids[slot] = moved;
                self.slot_of.insert(moved, slot);
                self.restore_slot(slot, row);
            }
            if let Some(nibbles) = &mut self.nibbles {
                nibbles.swap_remove(slot);
            }
            self.ids.pop();
            self.truncate_storage();
            if let Some(ann) = &self.ann {
                ann.index.remove(id).map_err(ann_error)?;
            }
        }
        self.refresh_nibbles();
        Ok(removed)
    }

    /// Raw stored row (no requantization when moved).
    fn decoded_raw(&self, slot: usize) -> RawRow {
        let range = slot * self.dims..(slot + 1) * self.dims;
        match &self.storage {
            Storage::F32(v) => RawRow::F32(v[range].to_vec()),
            Storage::F16(v) => RawRow::F16(v[range].to_vec()),
            Storage::I8 { data, scales } => RawRow::I8(data[range].to_vec(), scales[slot]),
        }
    }

    fn restore_slot(&mut self, slot: usize, row: RawRow) {
        let range = slot * self.dims..(slot + 1) * self.dims;
        match (&mut self.storage, row) {
            (Storage::F32(v), RawRow::F32(r)) => v[range].copy_from_slice(&r),
            (Storage::F16(v), RawRow::F16(r)) => v[range].copy_from_slice(&r),
            (Storage::I8 { data, scales }, RawRow::I8(r, s)) => {
                data[range].copy_from_slice(&r);
                scales[slot] = s;
            }
            _ => unreachable!("a row always matches its storage"),
        }
    }

    fn truncate_storage(&mut self) {
        let len = self.ids.len() * self.dims;
        match &mut self.storage {
            Storage::F32(v) => v.truncate(len),
            Storage::F16(v) => v.truncate(len),
            Storage::I8 { data, scales } => {
                data.truncate(len);
                scales.truncate(self.ids.len());
            }
        }
    }

    pub fn clear(&mut self) {
        self.ids.clear();
        self.slot_of.clear();
        self.truncate_storage();
        self.ann = None;
        self.nibbles = None;
    }

    fn ann_options(&self) -> IndexOptions {
        let p = self.ann_params;
        IndexOptions {
            dimensions: self.dims,
            metric: MetricKind::IP,
            // The graph only proposes candidates (rescored from the stored vectors), so it keeps the cheapest
            // scalars that still find them: i8 for unit vectors (usearch's i8 assumes values in [-1, 1]), f16 for
            // raw dot products. Distances in i8 make inserts ~4x faster than in f32.
            quantization: match self.metric {
                Metric::Cosine => ScalarKind::I8,
                Metric::Dot => ScalarKind::F16,
            },
            connectivity: p.connectivity,
            expansion_add: p.expansion_add,
            expansion_search: p.expansion_search,
            multi: false,
        }
    }

    fn build_ann(&mut self) -> Result<()> {
        let ann = Ann::new(&self.ann_options())?;
        ann.reserve(self.ids.len())?;
        (0..self.ids.len()).into_par_iter().try_for_each(|slot| ann.add(self.ids[slot], &self.decoded(slot)))?;
        self.ann = Some(ann);
        Ok(())
    }

    /// Top `k` `(id, score)` best first. `exact = None` uses HNSW or the 4-bit codes when active; `Some(true)`
    /// neither.
    pub fn search(&self, query: &[f32], k: usize, exact: Option<bool>) -> Result<Vec<(u64, f32)>> {
        if query.len() != self.dims {
            return invalid!("query has {} dims, the store has {}", query.len(), self.dims);
        }
        if let Some(pos) = query.iter().position(|x| !x.is_finite()) {
            return invalid!("query has a non-finite value at position {pos}");
        }
        let mut q = query.to_vec();
        if self.metric == Metric::Cosine {
            normalize(&mut q);
            if q.iter().all(|&x| x == 0.0) {
                return Ok(Vec::new()); // a zero query has no direction: nothing is similar
            }
        }
        let k = k.min(self.ids.len());
        if k == 0 {
            return Ok(Vec::new());
        }
        let exact = exact == Some(true);
        match &self.ann {
            Some(ann) if !exact => self.search_ann(ann, &q, k),
            _ => Ok(self.search_exact(&q, k, exact)),
        }
    }

    /// The scan of every row (`exact`: without the 4-bit codes).
    fn search_exact(&self, q: &[f32], k: usize, exact: bool) -> Vec<(u64, f32)> {
        const BLOCK: usize = 1024;
        let n = self.ids.len();
        if let Storage::I8 { data, scales } = &self.storage {
            if n * self.dims >= PARALLEL_SCAN_WORK {
                return self.search_i8(data, scales, q, k, if exact { None } else { self.nibbles.as_ref() });
            }
        }
        let mut scores = vec![0f32; n];
        if n * self.dims >= PARALLEL_SCAN_WORK {
            scores.par_chunks_mut(BLOCK).enumerate().for_each(|(c, out)| self.score_block(c * BLOCK, q, out));
        } else {
            self.score_block(0, q, &mut scores);
        }
        let best = best_slots(&scores, k);
        top_k(best.into_iter().map(|slot| (self.ids[slot], scores[slot])).collect(), k)
    }

    /// The scan of a large i8 store, in two steps. Every row is ranked first by a cheaper score: with 4-bit codes
    /// (from `u4_from` vectors), their dot product with the query, reading half the bytes (from
    /// [`crate::nibbles::SIGNS_FROM`], only of the rows 1-bit codes rank best, an eighth); without, its integer dot
    /// product with the query rounded to i8 as well (about three times the speed of widening each stored value to
    /// f32). Then the best [`I8_RESCORE`] x `k` (at least [`I8_MIN_RESCORED`]), and the codes' outliers, are scored
    /// as every other search scores them, so the scores are always the exact ones. The i8 query's rounding moves a
    /// score by about 0.3 %, less than the gap between the `k`-th best and the last one rescored, so that answer is
    /// the plain scan's; the codes' error is larger, and their answer is the plain scan's when no true top-`k` row
    /// falls below the rescored ones (`benches/million.py` and `tests/core/test_vector.py` measure how often).
    fn search_i8(
        &self,
        data: &[i8],
        scales: &[f32],
        q: &[f32],
        k: usize,
        nibbles: Option<&NibbleCodes>,
    ) -> Vec<(u64, f32)> {
        let n = self.ids.len();
        let wanted = (k * I8_RESCORE).max(I8_MIN_RESCORED).min(n);
        let slots = if let Some(nibbles) = nibbles {
            nibbles.candidates(q, wanted)
        } else {
            let dims = self.dims;
            let top = q.iter().fold(0f32, |m, x| m.max(x.abs()));
            #[allow(clippy::cast_possible_truncation)] // clamped to i8's range
            let query: Vec<i8> = q.iter().map(|&x| (x * 127.0 / top).round().clamp(-127.0, 127.0) as i8).collect();
            best_in_shares(n, wanted, |first, out| {
                let mut dots = vec![0i32; out.len()];
                (kernels().i8_rows)(&data[first * dims..(first + out.len()) * dims], &query, &mut dots);
                #[allow(clippy::cast_precision_loss)] // a ranking key: i32 dot products of 384 values fit f32 well
                for ((o, &d), &s) in out.iter_mut().zip(&dots).zip(&scales[first..]) {
                    *o = d as f32 * s;
                }
            })
        };
        let hits = slots.into_iter().map(|slot| (self.ids[slot], self.score_slot(slot, q))).collect();
        top_k(hits, k)
    }

    /// Scores of slots `first..first + out.len()`.
    fn score_block(&self, first: usize, q: &[f32], out: &mut [f32]) {
        if let Storage::F32(v) = &self.storage {
            let rows = &v[first * self.dims..(first + out.len()) * self.dims];
            return (kernels().f32_rows)(rows, q, out);
        }
        for (i, s) in out.iter_mut().enumerate() {
            *s = self.score_slot(first + i, q);
        }
    }

    fn search_ann(&self, ann: &Ann, q: &[f32], k: usize) -> Result<Vec<(u64, f32)>> {
        // More candidates than asked for: the graph's coarse scalars misorder near-ties, the exact rescoring below
        // puts them right.
        let candidates = (k * ANN_OVERSAMPLE).max(ANN_MIN_CANDIDATES).min(self.ids.len());
        let matches = ann.search(q, candidates)?;
        let hits = matches
            .keys
            .iter()
            .filter_map(|id| self.slot_of.get(id).map(|&slot| (*id, self.score_slot(slot, q))))
            .collect();
        Ok(top_k(hits, k))
    }
}

/// File format of [`VectorStore::save`]: magic, version, then little-endian fields (see `save`).
const FILE_MAGIC: &[u8; 8] = b"MSVECTS\0";
/// Version 2 adds the 4-bit codes after the graph; a version 1 file loads and fits them again.
const FILE_VERSION: u32 = 2;

impl VectorStore {
    /// The stored ids, in slot order.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }

    /// Write the store (ids, vectors, the HNSW graph and the 4-bit codes when active) to `path`, with a caller's
    /// `tag` (memsift stores the index generation the vectors reflect). Written to a temporary file beside `path`
    /// and renamed over it, so a reader sees the old file or the new one, never a torn one.
    pub fn save(&self, path: &Path, tag: u64) -> Result<()> {
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let io = |e: std::io::Error| Error::Index { location: path.display().to_string(), message: e.to_string() };
        let written = std::fs::File::create(&tmp).and_then(|file| {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
            self.write_to(&mut out, tag)?;
            out.into_inner().map(drop).map_err(std::io::IntoInnerError::into_error)
        });
        written.and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }

    /// The file's bytes, streamed to `out` (a copy of a million vectors in memory would double the store's size).
    fn write_to(&self, out: &mut impl Write, tag: u64) -> std::io::Result<()> {
        out.write_all(FILE_MAGIC)?;
        for value in [u64::from(FILE_VERSION), tag, self.dims as u64, self.ids.len() as u64] {
            out.write_all(&value.to_le_bytes())?;
        }
        let metric = match self.metric {
            Metric::Cosine => 0,
            Metric::Dot => 1,
        };
        let quant = match self.quant {
            Quantization::F32 => 0,
            Quantization::F16 => 1,
            Quantization::I8 => 2,
        };
        out.write_all(&[metric, quant])?;
        write_le(out, &self.ids, u64::to_le_bytes)?;
        match &self.storage {
            Storage::F32(v) => write_le(out, v, f32::to_le_bytes)?,
            Storage::F16(v) => write_le(out, v, f16::to_le_bytes)?,
            Storage::I8 { data, scales } => {
                write_le(out, data, i8::to_le_bytes)?;
                write_le(out, scales, f32::to_le_bytes)?;
            }
        }
        if let Some(ann) = &self.ann {
            let mut graph = vec![0u8; ann.index.serialized_length()];
            ann.index.save_to_buffer(&mut graph).map_err(|e| std::io::Error::other(ann_error(e).to_string()))?;
            out.write_all(&(graph.len() as u64).to_le_bytes())?;
            out.write_all(&graph)?;
        } else {
            out.write_all(&0u64.to_le_bytes())?;
        }
        let codes_len = self.nibbles.as_ref().map_or(0, NibbleCodes::byte_len);
        out.write_all(&(codes_len as u64).to_le_bytes())?;
        if let Some(nibbles) = &self.nibbles {
            nibbles.write_to(out)?;
        }
        Ok(())
    }

    /// Read a file written by [`save`](Self::save): the store and its tag. The HNSW graph is loaded when saved
    /// (no rebuild); `ann_params` apply to later growth.
    pub fn load(path: &Path, ann_params: AnnParams) -> Result<(Self, u64)> {
        let bad = |why: &str| Error::Index {
            location: path.display().to_string(),
            message: format!("not a vector file: {why}"),
        };
        let io = |e: std::io::Error| Error::Index { location: path.display().to_string(), message: e.to_string() };
        let mut input = FileSections::open(path).map_err(io)?;
        let truncated = |_| bad("truncated");
        let mut u64_field = || input.values(1, u64::from_le_bytes).map(|v| v[0]).map_err(truncated);
        if u64_field()?.to_le_bytes() != *FILE_MAGIC {
            return Err(bad("wrong magic"));
        }
        let version = u64_field()?;
        if version != 1 && version != u64::from(FILE_VERSION) {
            return Err(bad("another version"));
        }
        let tag = u64_field()?;
        let dims = usize::try_from(u64_field()?).map_err(|_| bad("dims"))?;
        let n = usize::try_from(u64_field()?).map_err(|_| bad("count"))?;
        let [metric, quant] = input.values(2, u8::from_le_bytes).map_err(truncated)?[..] else { unreachable!() };
        let metric = match metric {
            0 => Metric::Cosine,
            1 => Metric::Dot,
            _ => return Err(bad("metric")),
        };
        let quant = match quant {
            0 => Quantization::F32,
            1 => Quantization::F16,
            2 => Quantization::I8,
            _ => return Err(bad("dtype")),
        };
        let mut store = Self::new(dims, metric, quant, ann_params)?;
        let values = n.checked_mul(dims).ok_or_else(|| bad("size"))?;
        store.ids = input.values(n, u64::from_le_bytes).map_err(truncated)?;
        store.storage = match quant {
            Quantization::F32 => Storage::F32(input.values(values, f32::from_le_bytes).map_err(truncated)?),
            Quantization::F16 => Storage::F16(input.values(values, f16::from_le_bytes).map_err(truncated)?),
            Quantization::I8 => Storage::I8 {
                data: input.values(values, i8::from_le_bytes).map_err(truncated)?,
                scales: input.values(n, f32::from_le_bytes).map_err(truncated)?,
            },
        };
        store.slot_of = store.ids.iter().enumerate().map(|(slot, &id)| (id, slot)).collect();
        if store.slot_of.len() != n {
            return Err(bad("duplicate ids"));
        }
        let mut section = || -> Result<Vec<u8>> {
            let len = input.values(1, u64::from_le_bytes).map_err(truncated)?[0];
            input.values(usize::try_from(len).map_err(|_| bad("section size"))?, u8::from_le_bytes).map_err(truncated)
        };
        let graph = section()?;
        let codes = if version == 1 { Vec::new() } else { section()? };
        if n >= store.ann_params.i8_from {
            store.requantize(Quantization::I8); // saved before its i8_from was lowered
        }
        if !codes.is_empty() && store.nibbles.is_none() {
            let read = NibbleCodes::from_bytes(codes, dims, n).ok_or_else(|| bad("codes do not match the vectors"))?;
            store.nibbles = Some(read);
        }
        store.refresh_nibbles();
        if !graph.is_empty() && store.wants_graph() {
            let ann = Ann::new(&store.ann_options())?;
            ann.index.load_from_buffer(&graph).map_err(ann_error)?;
            if ann.index.size() != n || ann.index.dimensions() != dims {
                return Err(bad("graph does not match the vectors"));
            }
            ann.reserve(n)?;
            store.ann = Some(ann);
        }
        Ok((store, tag))
    }
}

enum RawRow {
    F32(Vec<f32>),
    F16(Vec<f16>),
    I8(Vec<i8>, f32),
}

/// The HNSW index plus the permits that bound concurrent calls into it: usearch
/// serves at most its reserved number of concurrent operations (one context each)
/// and fails past that instead of waiting, so callers queue here.
struct Ann {
    index: AnnIndex,
    threads: usize,
    free: Mutex<usize>,
    released: Condvar,
}

impl Ann {
    fn new(options: &IndexOptions) -> Result<Self> {
        let threads =
            std::thread::available_parallelism().map_or(1, std::num::NonZero::get).max(rayon::current_num_threads());
        let index = AnnIndex::new(options).map_err(ann_error)?;
        Ok(Self { index, threads, free: Mutex::new(threads), released: Condvar::new() })
    }

    fn reserve(&self, needed: usize) -> Result<()> {
        if self.index.capacity() < needed {
            let capacity = needed.next_power_of_two().max(1024);
            self.index.reserve_capacity_and_threads(capacity, self.threads).map_err(ann_error)?;
        }
        Ok(())
    }

    fn with_permit<T>(&self, f: impl FnOnce(&AnnIndex) -> T) -> T {
        {
            let mut free = self.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            while *free == 0 {
                free = self.released.wait(free).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            *free -= 1;
        }
        let out = f(&self.index);
        *self.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
        self.released.notify_one();
        out
    }

    fn add(&self, id: u64, vector: &[f32]) -> Result<()> {
        self.with_permit(|index| index.add(id, vector)).map_err(ann_error)
    }

    fn search(&self, q: &[f32], k: usize) -> Result<usearch::ffi::Matches> {
        self.with_permit(|index| index.search(q, k)).map_err(ann_error)
    }
}

fn ann_error(e: impl std::fmt::Display) -> crate::error::Error {
    crate::error::Error::InvalidInput(format!("HNSW index error: {e}"))
}

/// Slots of the `k` highest scores (ties: the lower slot) in one pass: the candidates go into a buffer of `2k`,
/// which is cut back to the best `k` when full, and a score that is not above the last cut's `k`-th best is not
/// looked at again. After the first few rows almost every score loses that one comparison.
pub(crate) fn best_slots(scores: &[f32], k: usize) -> Vec<usize> {
    let better = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if k == 0 {
        return Vec::new();
    }
    let mut kept: Vec<(f32, usize)> = Vec::with_capacity(2 * k);
    let mut floor = f32::NEG_INFINITY;
    for (slot, &score) in scores.iter().enumerate() {
        if score.total_cmp(&floor).is_le() && kept.len() >= k {
            continue;
        }
        kept.push((score, slot));
        if kept.len() == 2 * k {
            kept.select_nth_unstable_by(k - 1, better);
            kept.truncate(k);
            floor = kept[k - 1].0;
        }
    }
    if kept.len() > k {
        kept.select_nth_unstable_by(k - 1, better);
        kept.truncate(k);
    }
    kept.into_iter().map(|(_, slot)| slot).collect()
}

/// The best `wanted` of `n` slots by the scores `score(first, out)` writes for slots `first..first + out.len()`,
/// computed in shares on rayon's workers (a few per thread, to even them out), each keeping its own best. Shares
/// start on whole blocks of [`crate::signs::BLOCK_ROWS`].
pub(crate) fn best_in_shares(n: usize, wanted: usize, score: impl Fn(usize, &mut [f32]) + Sync) -> Vec<usize> {
    let share = n.div_ceil(rayon::current_num_threads() * 4).max(wanted).max(1024).next_multiple_of(BLOCK_ROWS);
    let mut candidates: Vec<(f32, usize)> = (0..n.div_ceil(share))
        .into_par_iter()
        .flat_map_iter(|part| {
            let (first, last) = (part * share, ((part + 1) * share).min(n));
            let mut scores = vec![0f32; last - first];
            score(first, &mut scores);
            best_slots(&scores, wanted).into_iter().map(move |slot| (scores[slot], first + slot))
        })
        .collect();
    if candidates.len() > wanted {
        candidates.select_nth_unstable_by(wanted - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        candidates.truncate(wanted);
    }
    candidates.into_iter().map(|(_, slot)| slot).collect()
}

/// A vector file read section by section, never asked for more than it holds (a corrupt count cannot make a huge
/// allocation), in blocks (one buffer of the whole file would double the store's size while it loads).
struct FileSections {
    input: std::io::BufReader<std::fs::File>,
    left: u64,
}

impl FileSections {
    fn open(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::File::open(path)?;
        let left = file.metadata()?.len();
        Ok(Self { input: std::io::BufReader::with_capacity(1 << 20, file), left })
    }

    /// The next `count` values of `N` little-endian bytes each; an error when the file holds fewer.
    fn values<T, const N: usize>(&mut self, count: usize, from: impl Fn([u8; N]) -> T) -> std::io::Result<Vec<T>> {
        let size = count.checked_mul(N).and_then(|size| u64::try_from(size).ok()).filter(|&size| size <= self.left);
        let size = size.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        self.left -= size;
        let mut out = Vec::with_capacity(count);
        let mut block = vec![0u8; N << 14];
        for part in (0..count).step_by(1 << 14) {
            let bytes = &mut block[..(count - part).min(1 << 14) * N];
            self.input.read_exact(bytes)?;
            out.extend(bytes.chunks_exact(N).map(|b| from(b.try_into().expect("N bytes"))));
        }
        Ok(out)
    }
}

/// Each value's little-endian bytes, in blocks (one write per value would be slow, one buffer of all of them large).
fn write_le<T: Copy, const N: usize>(
    out: &mut impl Write,
    values: &[T],
    bytes: impl Fn(T) -> [u8; N],
) -> std::io::Result<()> {
    let mut block = Vec::with_capacity(N << 14);
    for chunk in values.chunks(1 << 14) {
        block.clear();
        block.extend(chunk.iter().flat_map(|&x| bytes(x)));
        out.write_all(&block)?;
    }
    Ok(())
}

/// Best `k` by score (descending), ties by id (ascending) for a deterministic order.
pub fn top_k(mut hits: Vec<(u64, f32)>, k: usize) -> Vec<(u64, f32)> {
    let better = |a: &(u64, f32), b: &(u64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if k < hits.len() {
        hits.select_nth_unstable_by(k, better);
        hits.truncate(k);
    }
    hits.sort_unstable_by(better);
    hits
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::*;

    fn params(threshold: usize) -> AnnParams {
        AnnParams {
            threshold,
            connectivity: 16,
            expansion_add: 128,
            expansion_search: 96,
            i8_from: usize::MAX,
            u4_from: usize::MAX,
        }
    }

    fn brute(rows: &[Vec<f32>], q: &[f32], k: usize) -> Vec<u64> {
        let mut qn = q.to_vec();
        normalize(&mut qn);
        let hits = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut rn = r.clone();
                normalize(&mut rn);
                (i as u64, rn.iter().zip(&qn).map(|(a, b)| a * b).sum::<f32>())
            })
            .collect();
        top_k(hits, k).into_iter().map(|h| h.0).collect()
    }

    #[test]
    fn exact_matches_brute_force_and_handles_edges() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let rows: Vec<Vec<f32>> = (0..300).map(|_| (0..17).map(|_| rng.random_range(-1.0..1.0)).collect()).collect();
        let mut store = VectorStore::new(17, Metric::Cosine, Quantization::F32, params(usize::MAX)).unwrap();
        let ids: Vec<u64> = (0..300).collect();
        store.add(&ids, &rows.concat()).unwrap();
        let q: Vec<f32> = (0..17).map(|_| rng.random_range(-1.0..1.0)).collect();
        let got: Vec<u64> = store.search(&q, 10, None).unwrap().into_iter().map(|h| h.0).collect();
        assert_eq!(got, brute(&rows, &q, 10));
        assert_eq!(store.search(&q, 1000, None).unwrap().len(), 300);
        assert!(store.search(&[0.0; 17], 5, None).unwrap().is_empty());
        assert!(store.search(&q[..3], 5, None).is_err());
        assert_eq!(store.remove(&[0, 1, 999]).unwrap(), 2);
        assert!(store.search(&q, 300, None).unwrap().iter().all(|h| h.0 > 1));
    }

    #[test]
    fn ann_recall_is_high_and_scores_are_exact() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(2);
        let n = 5000;
        let data: Vec<f32> = (0..n * 32).map(|_| rng.random_range(-1.0..1.0)).collect();
        let mut store = VectorStore::new(32, Metric::Cosine, Quantization::F32, params(1000)).unwrap();
        store.add(&(0..n as u64).collect::<Vec<_>>(), &data).unwrap();
        assert!(store.ann_active());
        let mut found = 0;
        for _ in 0..50 {
            let q: Vec<f32> = (0..32).map(|_| rng.random_range(-1.0..1.0)).collect();
            let exact = store.search(&q, 10, Some(true)).unwrap();
            let approx = store.search(&q, 10, None).unwrap();
            found += approx.iter().filter(|h| exact.iter().any(|e| e.0 == h.0)).count();
        }
        assert!(found as f64 / 500.0 >= 0.9, "recall {}", found as f64 / 500.0);
    }

    #[test]
    fn saved_stores_reload_with_their_graph_and_tag() {
        let dir = std::env::temp_dir().join(format!("memsift-vs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let rows: Vec<f32> = (0..500 * 24).map(|_| rng.random_range(-1.0..1.0)).collect();
        let ids: Vec<u64> = (100..600).collect();
        for (quant, threshold) in [(Quantization::F32, 100), (Quantization::F16, usize::MAX), (Quantization::I8, 100)] {
            let mut store = VectorStore::new(24, Metric::Cosine, quant, params(threshold)).unwrap();
            store.add(&ids, &rows).unwrap();
            store.remove(&[150]).unwrap();
            let path = dir.join("v.bin");
            store.save(&path, 77).unwrap();
            let (mut loaded, tag) = VectorStore::load(&path, params(threshold)).unwrap();
            assert_eq!((tag, loaded.len(), loaded.ann_active()), (77, 499, store.ann_active()));
            assert_eq!(loaded.ids(), store.ids());
            let q = &rows[..24];
            assert_eq!(loaded.search(q, 10, None).unwrap(), store.search(q, 10, None).unwrap());
            assert_eq!(loaded.search(q, 10, Some(true)).unwrap(), store.search(q, 10, Some(true)).unwrap());
            let fresh: Vec<f32> = (0..24).map(|_| rng.random_range(-1.0..1.0)).collect();
            loaded.add(&[7], &fresh).unwrap(); // the loaded graph keeps growing
            assert_eq!(loaded.search(&fresh, 1, None).unwrap()[0].0, 7);
            let mut data = std::fs::read(&path).unwrap();
            std::fs::write(&path, &data[..data.len() / 2]).unwrap();
            assert!(VectorStore::load(&path, params(threshold)).is_err(), "a torn file is refused");
            data[32..40].copy_from_slice(&(1u64 << 40).to_le_bytes()); // the count: refused before any allocation
            std::fs::write(&path, &data).unwrap();
            let refused = VectorStore::load(&path, params(threshold)).err().unwrap().to_string();
            assert!(refused.contains("truncated"), "{refused}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn saved_codes_load_as_saved_and_a_version_1_file_fits_them_again() {
        let path = std::env::temp_dir().join(format!("memsift-codes-{}.bin", std::process::id()));
        let mut rng = rand::rngs::StdRng::seed_from_u64(4);
        let rows: Vec<f32> = (0..300 * 16).map(|_| rng.random_range(-1.0..1.0)).collect();
        let ids: Vec<u64> = (0..300).collect();
        let with_codes = AnnParams { i8_from: 1, u4_from: 200, ..params(usize::MAX) };
        let mut store = VectorStore::new(16, Metric::Cosine, Quantization::F32, with_codes).unwrap();
        store.add(&ids[..200], &rows[..200 * 16]).unwrap();
        store.add(&ids[200..], &rows[200 * 16..]).unwrap(); // fitted on 200 rows, holding 300
        let saved = store.nibbles.as_ref().unwrap().to_bytes();
        store.save(&path, 1).unwrap();
        let (loaded, _) = VectorStore::load(&path, with_codes).unwrap();
        assert_eq!(loaded.nibbles.as_ref().unwrap().to_bytes(), saved, "read, not fitted again on 300 rows");
        // The same store without codes, written as version 1 (no codes section): they are fitted on load.
        let mut plain =
            VectorStore::new(16, Metric::Cosine, Quantization::F32, AnnParams { u4_from: usize::MAX, ..with_codes })
                .unwrap();
        plain.add(&ids, &rows).unwrap();
        plain.save(&path, 1).unwrap();
        let mut data = std::fs::read(&path).unwrap();
        data[8..16].copy_from_slice(&1u64.to_le_bytes());
        data.truncate(data.len() - 8);
        std::fs::write(&path, &data).unwrap();
        let (old, _) = VectorStore::load(&path, with_codes).unwrap();
        assert!(old.u4_active());
        assert_eq!(old.search(&rows[..16], 5, None).unwrap(), loaded.search(&rows[..16], 5, None).unwrap());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_store_past_i8_from_keeps_its_vectors_as_i8() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let rows: Vec<f32> = (0..300 * 16).map(|_| rng.random_range(-1.0..1.0)).collect();
        let ids: Vec<u64> = (0..300).collect();
        let mut store =
            VectorStore::new(16, Metric::Cosine, Quantization::F32, AnnParams { i8_from: 200, ..params(100) }).unwrap();
        store.add(&ids[..150], &rows[..150 * 16]).unwrap();
        assert_eq!(store.quantization(), Quantization::F32);
        assert!(store.ann_active());
        let q = &rows[..16];
        let before = store.search(q, 5, None).unwrap();
        store.add(&ids[150..], &rows[150 * 16..]).unwrap();
        assert_eq!(store.quantization(), Quantization::I8);
        assert!(!store.ann_active(), "an i8 store past i8_from is scanned exactly, without a graph");
        let after = store.search(q, 5, None).unwrap();
        assert_eq!(after[0].0, before[0].0); // the query's own row still wins
        assert!((after[0].1 - before[0].1).abs() < 0.01, "i8 keeps scores within 1%");
        assert_eq!(after, store.search(q, 5, Some(true)).unwrap(), "the default search is the exact one");

        let dir = std::env::temp_dir().join(format!("memsift-i8-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("v.bin");
        let mut small = VectorStore::new(16, Metric::Cosine, Quantization::F32, params(100)).unwrap();
        small.add(&ids[..150], &rows[..150 * 16]).unwrap();
        small.save(&path, 1).unwrap();
        let (loaded, _) = VectorStore::load(&path, AnnParams { i8_from: 120, ..params(100) }).unwrap();
        assert_eq!((loaded.quantization(), loaded.ann_active()), (Quantization::I8, false), "loading applies i8_from");
        std::fs::remove_dir_all(&dir).unwrap();

        store.remove(&ids[120..]).unwrap();
        store.add(&ids[120..130], &rows[120 * 16..130 * 16]).unwrap();
        assert!(store.ann_active(), "back under i8_from, the graph serves again");
        assert_eq!(store.search(q, 5, None).unwrap()[0].0, before[0].0);
    }

    #[test]
    fn the_two_step_i8_scan_answers_as_the_plain_scan() {
        let (n, dims) = (40_000, 64);
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        // Clustered, with a shared direction (as embedding models have): many near ties to order.
        let shared: Vec<f32> = (0..dims).map(|_| rng.random_range(-1.0..1.0)).collect();
        let centers: Vec<Vec<f32>> =
            (0..200).map(|_| (0..dims).map(|_| rng.random_range(-1.0..1.0)).collect()).collect();
        let rows: Vec<f32> = (0..n)
            .flat_map(|i| {
                let c = &centers[i % centers.len()];
                (0..dims).map(|d| shared[d] + c[d] + rng.random_range(-0.03..0.03)).collect::<Vec<f32>>()
            })
            .collect();
        let ids: Vec<u64> = (0..n as u64).map(|i| i * 3).collect();
        let mut store =
            VectorStore::new(dims, Metric::Cosine, Quantization::F32, AnnParams { i8_from: 1, ..params(usize::MAX) })
                .unwrap();
        store.add(&ids, &rows).unwrap();
        assert!(n * dims >= PARALLEL_SCAN_WORK, "large enough for the two steps");
        for probe in 0..20 {
            let mut q: Vec<f32> = rows[probe * 97 * dims..][..dims].iter().map(|x| x + 0.1).collect();
            for k in [1, 10, 200] {
                let got = store.search(&q, k, Some(true)).unwrap();
                normalize(&mut q);
                let plain = top_k((0..n).map(|slot| (store.ids[slot], store.score_slot(slot, &q))).collect(), k);
                assert_eq!(got, plain, "probe {probe}, k {k}");
            }
        }
    }
}
