//! 1-bit codes of a very large store's vectors, for the first of its scan's three passes.
//!
//! At a million rows of 384 dimensions the 4-bit codes ([`crate::nibbles`]) are still 190 MB a query reads: on a
//! machine whose memory gives a core 7 GB/s, 13 ms on two cores, most of a search's time. These codes keep one bit
//! per dimension, whether the row's value lies above the dimension's median, a quarter of those bytes. A row's
//! value is then read as one of two levels (the mean of the values above the median, or of those below), so its
//! dot product with the query is a constant plus the sum of `query × (upper level − lower level)` over its set
//! bits. The scan ranks every row by that sum; the 4-bit codes rank the best [`OVERSAMPLE`] times the rows the
//! store will score exactly, and the store scores the best of those exactly, so scores never change and a code's
//! error only costs a result that both coarser passes push below thousands of others.
//!
//! Rows lie in blocks of 32 and a block group by group (four dimensions a group, a nibble a row, two rows a byte),
//! so one byte shuffle looks up a group's partial sums for 32 rows at once (the layout of FAISS's "fast scan"):
//! about 22 operations a row for 384 dimensions, where the 4-bit scan needs 50. Only CPUs with such a shuffle
//! kernel keep these codes ([`crate::simd::Kernels::lookup_blocks`]).

use rayon::prelude::*;

use crate::simd::{kernels, LookupBlocks};

/// Rows per block.
pub const BLOCK_ROWS: usize = 32;
/// The 4-bit pass ranks this many times the rows the store scores exactly (at least [`MIN_SHARE`] of the rows).
pub const OVERSAMPLE: usize = 24;
/// ... and at least 1/64 of the rows.
pub const MIN_SHARE: usize = 64;
/// Dimensions beyond which the query's weights would be coarser than ±3 (they shrink as dimensions grow, to keep the
/// block sums within u16).
pub const MAX_DIMS: usize = 8192;
/// Rows whose values the medians and levels are fitted on (evenly spread over the store).
const SAMPLE: usize = 8_192;

pub struct SignCodes {
    /// Groups of four dimensions, rounded up to whole pairs (a 32-byte step of the kernel holds two).
    groups: usize,
    /// Per dimension: a value above it sets the bit.
    split: Vec<f32>,
    /// Per dimension: the upper level minus the lower one (0 where every sampled value is the median).
    gain: Vec<f32>,
    blocks: Vec<u8>,
    rows: usize,
    kernel: LookupBlocks,
}

impl SignCodes {
    /// Codes of `n` rows of `dims` values, `row(slot, out)` writing each; `None` where this CPU has no lookup
    /// kernel or `dims` is beyond [`MAX_DIMS`].
    pub fn fit(dims: usize, n: usize, row: impl Fn(usize, &mut [f32]) + Sync) -> Option<Self> {
        let kernel = kernels().lookup_blocks?;
        if dims == 0 || dims > MAX_DIMS {
            return None;
        }
        let taken = n.min(SAMPLE);
        let mut sample = vec![0f32; taken * dims];
        sample.par_chunks_mut(dims).enumerate().for_each(|(i, out)| row(i * n / taken, out));
        let (split, gain) =
            (0..dims).into_par_iter().map(|d| levels(sample.iter().skip(d).step_by(dims).copied().collect())).unzip();
        let groups = dims.div_ceil(8) * 2;
        let mut this = Self { groups, split, gain, blocks: Vec::new(), rows: n, kernel };
        let mut blocks = vec![0u8; n.div_ceil(BLOCK_ROWS) * this.block_bytes()];
        blocks.par_chunks_mut(this.block_bytes()).enumerate().for_each_init(
            || (vec![0f32; dims], vec![0u64; dims.div_ceil(64)], vec![0u64; dims.div_ceil(64)]),
            |(values, even, odd), (b, block)| {
                // Rows in pairs, so each byte is written once, whole.
                for pair in 0..BLOCK_ROWS / 2 {
                    for (lane, words) in [(2 * pair, &mut *even), (2 * pair + 1, &mut *odd)] {
                        words.fill(0);
                        if b * BLOCK_ROWS + lane < n {
                            row(b * BLOCK_ROWS + lane, values);
                            this.bits(values, words);
                        }
                    }
                    for (g, byte) in block[pair..].iter_mut().step_by(16).take(dims.div_ceil(4)).enumerate() {
                        #[allow(clippy::cast_possible_truncation)] // two nibbles
                        let nibbles = (even[g / 16] >> (4 * (g % 16)) & 15) | (odd[g / 16] >> (4 * (g % 16)) & 15) << 4;
                        *byte = nibbles as u8;
                    }
                }
            },
        );
        this.blocks = blocks;
        Some(this)
    }

    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    fn block_bytes(&self) -> usize {
        16 * self.groups
    }

    /// Set row `slot` (one past the last: append it).
    pub fn set(&mut self, slot: usize, row: &[f32]) {
        if slot == self.rows {
            self.rows += 1;
            self.blocks.resize(self.rows.div_ceil(BLOCK_ROWS) * self.block_bytes(), 0);
        }
        let size = self.block_bytes();
        let mut block = std::mem::take(&mut self.blocks);
        self.encode(row, &mut block[slot / BLOCK_ROWS * size..][..size], slot % BLOCK_ROWS);
        self.blocks = block;
    }

    /// Move the last row into `slot` and drop the last (a store's swap-remove).
    pub fn swap_remove(&mut self, slot: usize) {
        let last = self.rows - 1;
        for g in 0..self.groups {
            let value = self.nibble(last, g);
            self.put_nibble(slot, g, value);
            self.put_nibble(last, g, 0);
        }
        self.rows = last;
        self.blocks.truncate(self.rows.div_ceil(BLOCK_ROWS) * self.block_bytes());
    }

    /// The lookup tables of `q` (16 bytes a group), or `None` when it has no weight where rows differ.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // rounded into ±top, summed into 0..=8 top
    pub fn query(&self, q: &[f32]) -> Option<Vec<u8>> {
        let weights: Vec<f32> = q.iter().zip(&self.gain).map(|(x, g)| x * g).collect();
        let largest = weights.iter().fold(0f32, |m, x| m.max(x.abs()));
        if largest == 0.0 || !largest.is_finite() {
            return None;
        }
        let top = self.top_weight();
        let weight = |d: usize| weights.get(d).map_or(0, |&w| (w * top as f32 / largest).round() as i32);
        let mut table = Vec::with_capacity(self.block_bytes());
        for g in 0..self.groups {
            let group: [i32; 4] = std::array::from_fn(|i| weight(4 * g + i));
            let entry = |m: usize| 4 * top + (0..4).filter(|i| m >> i & 1 == 1).map(|i| group[i]).sum::<i32>();
            table.extend((0..16).map(|m| entry(m) as u8));
        }
        Some(table)
    }

    /// The largest query weight in a table: 31 (an entry, four weights offset by four times this, fits a byte),
    /// less where the groups' entries could add up past u16.
    fn top_weight(&self) -> i32 {
        i32::try_from(65_535 / (8 * self.groups)).unwrap_or(i32::MAX).min(31)
    }

    /// The slots of the best `wanted` rows for `table` by the codes (more where rows tie with the last of them):
    /// every row's sum in shares on rayon's workers, with a count of each sum, then the rows at or above the
    /// lowest sum that keeps `wanted`.
    pub fn best(&self, table: &[u8], wanted: usize) -> Vec<usize> {
        let size = self.block_bytes();
        let blocks_per_share = self.rows.div_ceil(BLOCK_ROWS).div_ceil(rayon::current_num_threads() * 4).max(1);
        let mut sums = vec![0u16; self.rows.div_ceil(BLOCK_ROWS) * BLOCK_ROWS];
        let bins = 8 * self.top_weight() as usize * self.groups + 1; // the largest sum a table allows, and 0
        let counts = sums
            .par_chunks_mut(blocks_per_share * BLOCK_ROWS)
            .enumerate()
            .map(|(share, out)| {
                let start = share * blocks_per_share * size;
                (self.kernel)(&self.blocks[start..start + out.len() / BLOCK_ROWS * size], table, out);
                let mut counts = vec![0u32; bins];
                let real = self.rows.saturating_sub(share * blocks_per_share * BLOCK_ROWS).min(out.len());
                for &sum in &out[..real] {
                    counts[usize::from(sum)] += 1;
                }
                counts
            })
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                a
            })
            .unwrap_or_default();
        let mut kept = 0;
        let floor = (0..counts.len())
            .rev()
            .find(|&sum| {
                kept += counts[sum] as usize;
                kept >= wanted
            })
            .unwrap_or(0);
        let floor = u16::try_from(floor).unwrap_or(u16::MAX);
        let share = blocks_per_share * BLOCK_ROWS;
        sums[..self.rows]
            .par_chunks(share)
            .enumerate()
            .flat_map_iter(|(part, sums)| {
                sums.iter().enumerate().filter(move |(_, &sum)| sum >= floor).map(move |(i, _)| part * share + i)
            })
            .collect()
    }

    /// `row`'s bits, 64 dimensions a word.
    fn bits(&self, row: &[f32], words: &mut [u64]) {
        for ((values, splits), word) in row.chunks(64).zip(self.split.chunks(64)).zip(words) {
            *word = values.iter().zip(splits).enumerate().fold(0, |bits, (i, (x, s))| bits | u64::from(x > s) << i);
        }
    }

    /// Write `row`'s bits as lane `lane` of `block`.
    fn encode(&self, row: &[f32], block: &mut [u8], lane: usize) {
        let mut words = vec![0u64; row.len().div_ceil(64)];
        self.bits(row, &mut words);
        let shift = 4 * (lane % 2);
        for (g, byte) in block[lane / 2..].iter_mut().step_by(16).take(row.len().div_ceil(4)).enumerate() {
            #[allow(clippy::cast_possible_truncation)] // one nibble
            let nibble = (words[g / 16] >> (4 * (g % 16)) & 15) as u8;
            *byte = (*byte & !(15 << shift)) | nibble << shift;
        }
    }

    fn nibble(&self, slot: usize, group: usize) -> u8 {
        let byte = self.blocks[slot / BLOCK_ROWS * self.block_bytes() + 16 * group + slot % BLOCK_ROWS / 2];
        (byte >> (4 * (slot % 2))) & 15
    }

    fn put_nibble(&mut self, slot: usize, group: usize, value: u8) {
        let at = slot / BLOCK_ROWS * self.block_bytes() + 16 * group + slot % BLOCK_ROWS / 2;
        let shift = 4 * (slot % 2);
        self.blocks[at] = (self.blocks[at] & !(15 << shift)) | value << shift;
    }
}

/// A dimension's median and the gap between the mean of the values above it and of those at or below it.
#[allow(clippy::cast_precision_loss)] // counts of sampled rows
fn levels(mut values: Vec<f32>) -> (f32, f32) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let middle = values.len() / 2;
    let split = *values.select_nth_unstable_by(middle, f32::total_cmp).1;
    let (mut above, mut below) = ((0f32, 0usize), (0f32, 0usize));
    for &x in &values {
        let side = if x > split { &mut above } else { &mut below };
        *side = (side.0 + x, side.1 + 1);
    }
    let gain = if above.1 == 0 || below.1 == 0 { 0.0 } else { above.0 / above.1 as f32 - below.0 / below.1 as f32 };
    (split, gain)
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::*;

    fn rows(n: usize, dims: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        (0..n).map(|_| (0..dims).map(|_| rng.random_range(-1.0f32..1.0)).collect()).collect()
    }

    fn scores(codes: &SignCodes, table: &[u8], first: usize, out: &mut [f32]) {
        let (size, count) = (codes.block_bytes(), out.len().div_ceil(BLOCK_ROWS));
        let start = first / BLOCK_ROWS * size;
        let mut sums = vec![0u16; count * BLOCK_ROWS];
        (codes.kernel)(&codes.blocks[start..start + count * size], table, &mut sums);
        for (o, s) in out.iter_mut().zip(sums) {
            *o = f32::from(s);
        }
    }

    /// The score the codes rank by, from the bits and weights directly.
    fn expected(codes: &SignCodes, table: &[u8], slot: usize) -> f32 {
        (0..codes.groups).map(|g| f32::from(table[16 * g + usize::from(codes.nibble(slot, g))])).sum()
    }

    #[test]
    fn scores_are_the_table_sums_of_each_rows_bits_after_sets_and_removals() {
        if kernels().lookup_blocks.is_none() {
            return; // no codes on this CPU: nothing to check
        }
        for dims in [1, 4, 7, 384, 385] {
            let data = rows(100, dims, 3);
            let mut codes =
                SignCodes::fit(dims, 70, |slot, out| out.copy_from_slice(&data[slot])).expect("a lookup kernel");
            for (slot, row) in data.iter().enumerate().skip(70) {
                codes.set(slot, row); // appended across a block's end
            }
            codes.set(5, &data[99]);
            for slot in [0, 40, 97] {
                codes.swap_remove(slot);
            }
            assert_eq!(codes.len(), 97);
            let table = codes.query(&data[1]).expect("weights");
            let mut got = vec![0f32; 64];
            scores(&codes, &table, 32, &mut got);
            for (i, &score) in got.iter().enumerate() {
                assert!((score - expected(&codes, &table, 32 + i)).abs() < 1e-3, "dims {dims} slot {}", 32 + i);
            }
            let mut last = vec![0f32; 1];
            scores(&codes, &table, 96, &mut last);
            assert!((last[0] - expected(&codes, &table, 96)).abs() < 1e-3);
        }
    }

    #[test]
    fn a_row_moved_by_a_removal_keeps_its_bits_and_the_last_block_shrinks() {
        let Some(mut codes) = SignCodes::fit(16, 33, |slot, out| out.fill(if slot == 32 { 1.0 } else { -1.0 })) else {
            return;
        };
        let before: Vec<u8> = (0..codes.groups).map(|g| codes.nibble(32, g)).collect();
        assert!(before.iter().any(|&n| n != 0), "the odd row out is above every median");
        codes.swap_remove(3);
        assert_eq!((0..codes.groups).map(|g| codes.nibble(3, g)).collect::<Vec<_>>(), before);
        assert_eq!(codes.blocks.len(), codes.block_bytes(), "one block for 32 rows");
    }

    #[test]
    fn the_first_pass_keeps_the_true_nearest_rows_among_its_best() {
        let Some(_) = kernels().lookup_blocks else { return };
        // Clustered rows (a centre and noise), as embeddings of related notes are: the true top 10 of a query near
        // one centre must be among the best 5 % by the codes.
        let (dims, n) = (384, 20_000);
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let centres = rows(200, dims, 5);
        let data: Vec<Vec<f32>> =
            (0..n).map(|i| centres[i % 200].iter().map(|c| c + rng.random_range(-0.8f32..0.8)).collect()).collect();
        let codes = SignCodes::fit(dims, n, |slot, out| out.copy_from_slice(&data[slot])).expect("a lookup kernel");
        let mut missed = 0;
        for query in 0..20 {
            let q: Vec<f32> = centres[query * 7].iter().map(|c| c + rng.random_range(-0.8f32..0.8)).collect();
            let dots: Vec<f32> = data.iter().map(|row| row.iter().zip(&q).map(|(a, b)| a * b).sum()).collect();
            let mut exact: Vec<usize> = (0..n).collect();
            exact.sort_by(|&a, &b| dots[b].total_cmp(&dots[a]));
            let kept: std::collections::HashSet<usize> =
                codes.best(&codes.query(&q).expect("weights"), n / 20).into_iter().collect();
            assert!((n / 20..n / 10).contains(&kept.len()), "the best 5 %, and rows tied with the last");
            missed += exact[..10].iter().filter(|slot| !kept.contains(slot)).count();
        }
        assert_eq!(missed, 0, "true top-10 rows outside the codes' best 5 %");
    }
}
