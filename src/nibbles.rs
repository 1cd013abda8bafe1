//! 4-bit codes of a large store's vectors, for the first pass of its scan.
//!
//! The exact i8 scan of 1M x 384 reads 390 MB per query, and memory gives both cores of a small machine about
//! 30 GB/s together: 12 ms whatever the kernel. These codes keep each value in 4 bits, half the bytes, on a scale of
//! its own per dimension: 16 levels over the range of the values the codes were fitted to. The first pass ranks
//! every row by its codes; the store then scores the best candidates exactly, so a code's error can only cost a
//! result when it pushes a true top-k row below hundreds of others. Rounding moves a value by half a step at most,
//! but a row added later with a value outside its dimension's range (a note unlike the others) is clamped, which
//! could move it anywhere: a row clamped by more than a step is an outlier, which every search scores exactly too.
//! The codes are fitted again when the store has doubled, or when outliers pass 1/64 of the rows.
//!
//! From [`SIGNS_FROM`] rows the codes also keep 1-bit codes of the rows ([`crate::signs`]), a quarter of their
//! bytes, fitted and refitted with them; the ranking reads those first, and the 4-bit codes then rank only the best
//! of them.

use rayon::prelude::*;
use rustc_hash::FxHashSet;

use crate::signs::{SignCodes, MIN_SHARE, OVERSAMPLE};
use crate::simd::kernels;
use crate::vector::{best_in_shares, best_slots};

/// Rows from which the codes keep 1-bit codes too (dropped under half as many). Below, the 4-bit scan takes a
/// millisecond or two, and the oversampled rows would be a large share of the store.
pub const SIGNS_FROM: usize = 250_000;

/// Dimensions are paired into bytes in blocks of this many: byte `i` of block `b` holds dimension `128b + i` in its
/// low nibble and `128b + 64 + i` in its high one, so any 32- or 64-byte load of a row meets whole query runs.
const BLOCK: usize = 128;
const TOP_CODE: f32 = 15.0;

pub struct NibbleCodes {
    /// Bytes per row (half the dimensions, rounded up to whole blocks).
    width: usize,
    /// Per dimension: the value code 0 stands for, and the value of one step (0 for a constant dimension).
    low: Vec<f32>,
    step: Vec<f32>,
    codes: Vec<u8>,
    /// Rows when the scales were fitted: they are fitted again when the store has doubled since.
    fitted_rows: usize,
    /// Rows whose codes clamp them by more than `tolerance` (in norm): scored exactly by every search.
    outliers: FxHashSet<usize>,
    /// The clamping a row's codes may hide: the median step.
    tolerance: f32,
    /// 1-bit codes of the rows, from [`SIGNS_FROM`] rows where the CPU has their kernel.
    signs: Option<SignCodes>,
}

/// A query as the codes' kernel takes it: its values times each dimension's step, rounded to i8, split into the
/// values that meet low nibbles and those that meet high ones.
pub struct NibbleQuery {
    low: Vec<i8>,
    high: Vec<i8>,
}

impl NibbleCodes {
    /// Codes of `n` rows of `dims` values, `row(slot)` giving each, with scales fitted to them.
    pub fn fit(dims: usize, n: usize, row: impl Fn(usize) -> Vec<f32> + Sync) -> Self {
        let (low, step) = fit_scales(dims, n, &row);
        let width = dims.div_ceil(BLOCK) * BLOCK / 2;
        let tolerance = median(&step);
        let mut codes = vec![0u8; n * width];
        let mut this = Self {
            width,
            low,
            step,
            codes: Vec::new(),
            fitted_rows: n,
            outliers: FxHashSet::default(),
            tolerance,
            signs: None,
        };
        let outliers: Vec<usize> = codes
            .par_chunks_mut(width)
            .enumerate()
            .filter_map(|(slot, out)| this.encode(&row(slot), out).then_some(slot))
            .collect();
        this.codes = codes;
        this.outliers.extend(outliers);
        this
    }

    /// Keep 1-bit codes from [`SIGNS_FROM`] rows, fitted to the rows `row(slot, out)` writes (the store's values,
    /// finer than the 4-bit codes' for the medians); drop them under half that. The store calls it after fitting
    /// or loading the codes and after each change.
    pub fn refresh_signs(&mut self, row: impl Fn(usize, &mut [f32]) + Sync) {
        let n = self.len();
        if self.signs.is_none() && n >= SIGNS_FROM {
            self.signs = SignCodes::fit(self.low.len(), n, row);
        } else if n < SIGNS_FROM / 2 {
            self.signs = None;
        }
    }

    /// Whether 1-bit codes rank the rows first.
    pub fn signs_active(&self) -> bool {
        self.signs.is_some()
    }

    /// The rows every search scores exactly (see the module).
    pub fn outliers(&self) -> impl Iterator<Item = usize> + '_ {
        self.outliers.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.codes.len() / self.width
    }

    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// Whether the scales may no longer suit the rows: the store has doubled since they were fitted, or outliers
    /// are more than 1/64 of the rows.
    pub fn outgrown(&self) -> bool {
        self.len() >= 2 * self.fitted_rows.max(1) || self.outliers.len() > self.len() / 64
    }

    /// Set row `slot` (one past the last: append it).
    pub fn set(&mut self, slot: usize, row: &[f32]) {
        if slot == self.len() {
            self.codes.resize(self.codes.len() + self.width, 0);
        }
        let mut out = vec![0u8; self.width];
        if self.encode(row, &mut out) {
            self.outliers.insert(slot);
        } else {
            self.outliers.remove(&slot);
        }
        self.codes[slot * self.width..(slot + 1) * self.width].copy_from_slice(&out);
        if let Some(signs) = &mut self.signs {
            signs.set(slot, row);
        }
    }

    /// The codes with their scales, for a store's file (little-endian): the rows they were fitted on, the row
    /// width, the outliers' count, each dimension's low value and step, the outliers' slots, then the rows' codes.
    pub fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        for value in [self.fitted_rows, self.width, self.outliers.len()] {
            out.write_all(&(value as u64).to_le_bytes())?;
        }
        let scales: Vec<u8> = self.low.iter().chain(&self.step).flat_map(|x| x.to_le_bytes()).collect();
        out.write_all(&scales)?;
        let mut outliers: Vec<usize> = self.outliers().collect();
        outliers.sort_unstable();
        let slots: Vec<u8> = outliers.iter().flat_map(|&slot| (slot as u64).to_le_bytes()).collect();
        out.write_all(&slots)?;
        out.write_all(&self.codes)
    }

    /// How many bytes [`write_to`](Self::write_to) writes.
    pub fn byte_len(&self) -> usize {
        24 + 8 * (self.low.len() + self.outliers.len()) + self.codes.len()
    }

    #[cfg(test)]
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out).expect("a Vec takes every write");
        assert_eq!(out.len(), self.byte_len());
        out
    }

    /// What [`write_to`](Self::write_to) wrote, for `n` rows of `dims` values; `None` when it does not hold that.
    pub fn from_bytes(mut bytes: Vec<u8>, dims: usize, n: usize) -> Option<Self> {
        let width = dims.div_ceil(BLOCK) * BLOCK / 2;
        let u64_at = |at: usize| -> Option<usize> {
            let value = u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().expect("8 bytes"));
            usize::try_from(value).ok()
        };
        let (fitted_rows, count) = (u64_at(0)?, u64_at(16)?);
        let scales = bytes.get(24..24 + 8 * dims)?;
        let slots_end = (24 + 8 * dims).checked_add(count.checked_mul(8)?)?;
        let outliers: FxHashSet<usize> = (24 + 8 * dims..slots_end).step_by(8).map(u64_at).collect::<Option<_>>()?;
        let codes_len = bytes.len().checked_sub(slots_end)?;
        if u64_at(8)? != width || codes_len != n.checked_mul(width)? || outliers.iter().any(|&slot| slot >= n) {
            return None;
        }
        let floats: Vec<f32> = scales.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4"))).collect();
        let (low, step) = (floats[..dims].to_vec(), floats[dims..].to_vec());
        let tolerance = median(&step);
        bytes.drain(..slots_end); // the codes stay where they were read: no second copy of them
        Some(Self { width, low, step, codes: bytes, fitted_rows, outliers, tolerance, signs: None })
    }

    /// Move the last row into `slot` and drop the last (a store's swap-remove).
    pub fn swap_remove(&mut self, slot: usize) {
        let last = self.len() - 1;
        self.codes.copy_within(last * self.width..(last + 1) * self.width, slot * self.width);
        self.codes.truncate(last * self.width);
        self.outliers.remove(&slot);
        if self.outliers.remove(&last) {
            self.outliers.insert(slot);
        }
        if let Some(signs) = &mut self.signs {
            signs.swap_remove(slot);
        }
        if self.len() < SIGNS_FROM / 2 {
            self.signs = None;
        }
    }

    /// The slots to score exactly, for a store that scores `wanted` rows exactly: the best `wanted` by the codes
    /// (the best [`OVERSAMPLE`] times as many by the 1-bit codes first, where kept) and every outlier.
    pub fn candidates(&self, q: &[f32], wanted: usize) -> Vec<usize> {
        let n = self.len();
        let mut slots = match self.query(q) {
            None => (0..wanted).collect(), // no weight where rows differ: every row scores the same
            Some(query) => match self.signs.as_ref().and_then(|signs| Some((signs, signs.query(q)?))) {
                Some((signs, table)) => {
                    let first = signs.best(&table, (wanted * OVERSAMPLE).max(n / MIN_SHARE).min(n));
                    let scores = self.scores_of(&query, &first);
                    best_slots(&scores, wanted).into_iter().map(|i| first[i]).collect()
                }
                None => best_in_shares(n, wanted, |first, out| self.scores(&query, first, out)),
            },
        };
        slots.extend(self.outliers());
        slots.sort_unstable();
        slots.dedup();
        slots
    }

    /// [`scores`](Self::scores) of the rows at `slots`.
    #[allow(clippy::cast_precision_loss)] // as in `scores`
    fn scores_of(&self, query: &NibbleQuery, slots: &[usize]) -> Vec<f32> {
        let kernel = kernels().u4_rows;
        slots
            .par_iter()
            .with_min_len(1024)
            .map(|&slot| {
                let mut dot = [0i32];
                kernel(&self.codes[slot * self.width..(slot + 1) * self.width], &query.low, &query.high, &mut dot);
                dot[0] as f32
            })
            .collect()
    }

    /// Row `slot` as its codes stand for it.
    #[cfg(test)]
    fn decoded(&self, slot: usize) -> Vec<f32> {
        let row = &self.codes[slot * self.width..(slot + 1) * self.width];
        let dims = self.low.len();
        let mut out = vec![0f32; dims];
        for (j, &byte) in row.iter().enumerate() {
            let (lo, hi) = paired_dims(j);
            for (d, code) in [(lo, byte & 15), (hi, byte >> 4)] {
                if d < dims {
                    out[d] = self.low[d] + f32::from(code) * self.step[d];
                }
            }
        }
        out
    }

    /// Write `row`'s codes into `out`; whether the row is an outlier (clamped by more than the tolerance).
    fn encode(&self, row: &[f32], out: &mut [u8]) -> bool {
        let mut clamped = 0f32; // the squared distance clamping moved the row
        let mut code = |d: usize| -> u8 {
            let Some(&x) = row.get(d) else { return 0 };
            let (low, step) = (self.low[d], self.step[d]);
            let high = low + TOP_CODE * step;
            let kept = x.clamp(low, high);
            clamped += (x - kept) * (x - kept);
            if step > 0.0 {
                ((kept - low) / step).round() as u8
            } else {
                0
            }
        };
        for (j, byte) in out.iter_mut().enumerate() {
            let (lo, hi) = paired_dims(j);
            *byte = code(lo) | (code(hi) << 4);
        }
        clamped.sqrt() > self.tolerance
    }

    /// The query for [`scores`](Self::scores), or `None` when it has no weight on any dimension that varies
    /// (every row would score the same).
    pub fn query(&self, q: &[f32]) -> Option<NibbleQuery> {
        let weighted: Vec<f32> = q.iter().zip(&self.step).map(|(x, s)| x * s).collect();
        let top = weighted.iter().fold(0f32, |m, x| m.max(x.abs()));
        if top == 0.0 || !top.is_finite() {
            return None;
        }
        let value = |d: usize| weighted.get(d).map_or(0, |&x| (x * 127.0 / top).round().clamp(-127.0, 127.0) as i8);
        let (low, high) = (0..self.width).map(|j| (value(paired_dims(j).0), value(paired_dims(j).1))).unzip();
        Some(NibbleQuery { low, high })
    }

    /// Ranking scores of rows `first..first + out.len()` for `query`: the dot product with each row's codes. It
    /// leaves out the part every row shares (the query against the codes' offsets) and a positive factor, so it
    /// orders the rows as their decoded values would.
    #[allow(clippy::cast_precision_loss)] // at most 15 x 127 x dims: exact in f32 up to 8,800 dimensions
    pub fn scores(&self, query: &NibbleQuery, first: usize, out: &mut [f32]) {
        let rows = &self.codes[first * self.width..(first + out.len()) * self.width];
        let mut dots = vec![0i32; out.len()];
        (kernels().u4_rows)(rows, &query.low, &query.high, &mut dots);
        for (o, d) in out.iter_mut().zip(dots) {
            *o = d as f32;
        }
    }
}

/// The median of `values` (0 for none).
fn median(values: &[f32]) -> f32 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f32::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

/// The low and high nibbles' dimensions of byte `j` (possibly past the last dimension: padding).
fn paired_dims(j: usize) -> (usize, usize) {
    let (block, i) = (j / (BLOCK / 2), j % (BLOCK / 2));
    (block * BLOCK + i, block * BLOCK + BLOCK / 2 + i)
}

/// Per dimension, the value of code 0 and of one step: the range of the values seen, so no row is clamped when
/// fitted. (Ranges of the mean ± 4 standard deviations, finer for bell-shaped values, clamped 98 % of the rows of
/// bag-of-words vectors, whose stop words make long tails.)
fn fit_scales(dims: usize, n: usize, row: &(impl Fn(usize) -> Vec<f32> + Sync)) -> (Vec<f32>, Vec<f32>) {
    let empty = || (vec![f32::INFINITY; dims], vec![f32::NEG_INFINITY; dims]);
    let (min, max) = (0..n)
        .into_par_iter()
        .fold(empty, |(mut min, mut max), slot| {
            for (d, &x) in row(slot).iter().enumerate() {
                min[d] = min[d].min(x);
                max[d] = max[d].max(x);
            }
            (min, max)
        })
        .reduce(empty, |(mut min, mut max), (other_min, other_max)| {
            for d in 0..dims {
                min[d] = min[d].min(other_min[d]);
                max[d] = max[d].max(other_max[d]);
            }
            (min, max)
        });
    if n == 0 {
        return (vec![0.0; dims], vec![0.0; dims]);
    }
    min.iter().zip(&max).map(|(&low, &high)| (low, (high - low) / TOP_CODE)).unzip()
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::*;

    #[test]
    fn codes_decode_near_their_values_and_scores_follow_the_decoded_rows() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for dims in [1, 5, 64, 100, 129, 384] {
            let rows: Vec<Vec<f32>> = (0..500)
                .map(|_| (0..dims).map(|d| rng.random_range(-1.0..1.0) * (1.0 + d as f32 % 3.0)).collect())
                .collect();
            let codes = NibbleCodes::fit(dims, rows.len(), |slot| rows[slot].clone());
            assert_eq!((codes.len(), codes.outliers().count()), (500, 0), "the rows fitted are never clamped");
            for (slot, row) in rows.iter().enumerate() {
                for (d, (&x, y)) in row.iter().zip(codes.decoded(slot)).enumerate() {
                    let inside = x >= codes.low[d] && x <= codes.low[d] + TOP_CODE * codes.step[d];
                    if inside {
                        assert!((x - y).abs() <= codes.step[d] / 2.0 + 1e-5, "dims {dims} dim {d}: {x} coded as {y}");
                    }
                }
            }
            let q: Vec<f32> = (0..dims).map(|_| rng.random_range(-1.0..1.0)).collect();
            let query = codes.query(&q).unwrap();
            let mut got = vec![0f32; rows.len()];
            codes.scores(&query, 0, &mut got);
            // The score is the decoded row's dot product with the query, less the part all rows share, in units of
            // the query's i8 step; rounding the query to i8 moves it by at most half a unit per code step.
            let top = q.iter().zip(&codes.step).fold(0f32, |m, (x, s)| m.max((x * s).abs()));
            let shared: f32 = q.iter().zip(&codes.low).map(|(x, l)| x * l).sum();
            for (slot, &score) in got.iter().enumerate() {
                let row = codes.decoded(slot);
                let exact = (row.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>() - shared) * 127.0 / top;
                let steps: f32 =
                    row.iter().enumerate().map(|(d, x)| (x - codes.low[d]) / codes.step[d].max(1e-30)).sum();
                assert!((score - exact).abs() <= 0.5 * steps + 1e-2 * exact.abs().max(1.0), "dims {dims} row {slot}");
            }
        }
    }

    #[test]
    fn set_and_swap_remove_keep_rows_in_step_with_their_slots() {
        let rows: Vec<Vec<f32>> = (0..8).map(|i| vec![i as f32, -(i as f32), 0.5]).collect();
        let mut codes = NibbleCodes::fit(3, 8, |slot| rows[slot].clone());
        let before_7 = codes.decoded(7);
        codes.swap_remove(2);
        assert_eq!((codes.len(), codes.decoded(2)), (7, before_7.clone()));
        codes.set(7, &[3.0, -3.0, 0.5]);
        codes.set(0, &[7.0, -7.0, 0.5]);
        assert_eq!(codes.len(), 8);
        assert_eq!(codes.decoded(0), before_7);
        assert!(!codes.outgrown());
        for slot in 8..16 {
            codes.set(slot, &[1.0, -1.0, 0.5]);
        }
        assert!(codes.outgrown(), "16 rows are twice the 8 the scales were fitted on");
        assert!(codes.query(&[0.0, 0.0, 1.0]).is_none(), "a constant dimension gives no ranking");
        // A row clamped far from its values is an outlier, wherever swap-removes move it; a row set again within
        // range is not.
        codes.set(3, &[40.0, 0.0, 0.5]);
        codes.set(15, &[0.0, -40.0, 0.5]);
        let outliers = |c: &NibbleCodes| {
            let mut slots: Vec<usize> = c.outliers().collect();
            slots.sort_unstable();
            slots
        };
        assert_eq!(outliers(&codes), [3, 15]);
        codes.swap_remove(4); // the last row, an outlier, moves to 4
        assert_eq!(outliers(&codes), [3, 4]);
        codes.swap_remove(3); // an outlier goes, the last row (not one) moves to 3
        assert_eq!(outliers(&codes), [4]);
        codes.set(4, &[1.0, -1.0, 0.5]);
        assert!(outliers(&codes).is_empty(), "set again within range");
        codes.set(3, &[40.0, 0.0, 0.5]);
        let bytes = codes.to_bytes();
        let read = NibbleCodes::from_bytes(bytes.clone(), 3, 14).unwrap();
        assert_eq!(outliers(&read), [3]);
        assert_eq!(read.to_bytes(), bytes);
        assert!(NibbleCodes::from_bytes(bytes.clone(), 3, 13).is_none(), "a row short");
        assert!(NibbleCodes::from_bytes(bytes.clone(), 4, 16).is_none(), "other dimensions");
        assert!(NibbleCodes::from_bytes(bytes[..20].to_vec(), 3, 16).is_none(), "torn");
    }
}
