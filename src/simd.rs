//! Dot-product kernels with runtime CPU dispatch.
//!
//! The scalar versions are the reference; AVX-512F, AVX2+FMA(+F16C) and NEON
//! variants are chosen once per process from the CPU's features (never from
//! compile-time flags, so one wheel runs everywhere). Stored vectors may be f32,
//! f16 or i8; queries are f32, except for the integer row scans a large i8 store ranks with first (i8 x i8,
//! 4-bit codes x i8, and table lookups over 1-bit codes).
//!
//! `MEMSIFT_SIMD=scalar|avx2|avx512|neon` picks a set by name instead, when this CPU
//! can run it: to test the fallback paths of a wheel on a machine that would never
//! choose them, or to compare them. Any other value means the automatic choice.

use std::sync::OnceLock;

use half::f16;

pub type DotF32 = fn(&[f32], &[f32]) -> f32;
pub type DotF16 = fn(&[f16], &[f32]) -> f32;
pub type DotI8 = fn(&[i8], &[f32]) -> f32;
/// `out[r] = rows[r] · q` for a row-major block of `out.len()` rows, `q.len()` wide.
pub type DotRowsF32 = fn(&[f32], &[f32], &mut [f32]);
/// The same in integers, for i8 rows and an i8 query (values in -127..=127).
pub type DotRowsI8 = fn(&[i8], &[i8], &mut [i32]);
/// `out[r] = Σ_j lo(rows[r][j]) * q_lo[j] + hi(rows[r][j]) * q_hi[j]` for rows of `q_lo.len()` bytes, each byte
/// holding two 4-bit codes (0..=15: `lo` in its low nibble, `hi` in its high one), and i8 query values.
pub type DotRowsU4 = fn(&[u8], &[i8], &[i8], &mut [i32]);
/// Table sums over blocks of 32 rows (the layout of [`crate::signs`]): a block holds, group by group, 16 bytes of
/// 32 nibbles (row `2i` in byte `i`'s low nibble, row `2i + 1` in its high one); `table` holds 16 bytes per group;
/// `out[32b + r] = Σ_g table[16g + nibble(b, g, r)]`. `table.len()` is the block's size, a multiple of 32, and
/// its entries are small enough that every sum fits u16.
pub type LookupBlocks = fn(&[u8], &[u8], &mut [u16]);

/// The kernels selected for this CPU.
#[derive(Clone, Copy)]
pub struct Kernels {
    pub name: &'static str,
    pub f32: DotF32,
    pub f16: DotF16,
    pub i8: DotI8,
    pub f32_rows: DotRowsF32,
    pub i8_rows: DotRowsI8,
    pub u4_rows: DotRowsU4,
    /// `None` where no byte-shuffle kernel exists: the scalar lookups are slower than the 4-bit scan they would
    /// spare, so such a CPU keeps no 1-bit codes.
    pub lookup_blocks: Option<LookupBlocks>,
}

pub fn scalar_dot_f32(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub fn scalar_dot_f16(a: &[f16], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x.to_f32() * y).sum()
}

pub fn scalar_dot_i8(a: &[i8], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(&x, y)| f32::from(x) * y).sum()
}

pub fn scalar_dot_rows_f32(rows: &[f32], q: &[f32], out: &mut [f32]) {
    for (row, o) in rows.chunks_exact(q.len().max(1)).zip(out) {
        *o = scalar_dot_f32(row, q);
    }
}

pub fn scalar_dot_rows_i8(rows: &[i8], q: &[i8], out: &mut [i32]) {
    for (row, o) in rows.chunks_exact(q.len().max(1)).zip(out) {
        *o = row.iter().zip(q).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum();
    }
}

pub fn scalar_dot_rows_u4(rows: &[u8], q_lo: &[i8], q_hi: &[i8], out: &mut [i32]) {
    for (row, o) in rows.chunks_exact(q_lo.len().max(1)).zip(out) {
        *o = row
            .iter()
            .zip(q_lo.iter().zip(q_hi))
            .map(|(&b, (&l, &h))| i32::from(b & 15) * i32::from(l) + i32::from(b >> 4) * i32::from(h))
            .sum();
    }
}

pub fn scalar_lookup_blocks(blocks: &[u8], table: &[u8], out: &mut [u16]) {
    for (block, out) in blocks.chunks_exact(table.len().max(1)).zip(out.chunks_exact_mut(32)) {
        for (row, o) in out.iter_mut().enumerate() {
            let shift = 4 * (row % 2);
            *o = (0..table.len() / 16)
                .map(|g| u16::from(table[16 * g + usize::from((block[16 * g + row / 2] >> shift) & 15)]))
                .sum();
        }
    }
}

pub const SCALAR: Kernels = Kernels {
    name: "scalar",
    f32: scalar_dot_f32,
    f16: scalar_dot_f16,
    i8: scalar_dot_i8,
    f32_rows: scalar_dot_rows_f32,
    i8_rows: scalar_dot_rows_i8,
    u4_rows: scalar_dot_rows_u4,
    lookup_blocks: None,
};

/// The environment variable that names a kernel set to use instead of the detected one.
pub const OVERRIDE_VAR: &str = "MEMSIFT_SIMD";

/// Kernels for the running CPU, chosen on first use: `MEMSIFT_SIMD`'s set if this CPU can run it, else the best.
pub fn kernels() -> &'static Kernels {
    static KERNELS: OnceLock<Kernels> = OnceLock::new();
    KERNELS.get_or_init(|| select(std::env::var(OVERRIDE_VAR).ok().as_deref()))
}

/// The set named by `requested` among those this CPU can run, or the detected best one.
fn select(requested: Option<&str>) -> Kernels {
    let requested = requested.map(|name| name.trim().to_ascii_lowercase());
    available().into_iter().find(|k| requested.as_deref() == Some(k.name)).unwrap_or_else(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Kernels {
    if is_x86_feature_detected!("avx512f") {
        return x86::AVX512;
    }
    if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") && is_x86_feature_detected!("f16c") {
        return x86::AVX2;
    }
    SCALAR
}

#[cfg(target_arch = "aarch64")]
fn detect() -> Kernels {
    arm::NEON
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn detect() -> Kernels {
    SCALAR
}

/// Every variant this CPU can run (for tests comparing them to the scalar reference).
pub fn available() -> Vec<Kernels> {
    let mut all = vec![SCALAR];
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") && is_x86_feature_detected!("f16c") {
            all.push(x86::AVX2);
        }
        if is_x86_feature_detected!("avx512f") {
            all.push(x86::AVX512);
        }
    }
    #[cfg(target_arch = "aarch64")]
    all.push(arm::NEON);
    all
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_castps256_ps128, _mm256_cvtepi32_ps, _mm256_cvtepi8_epi32, _mm256_cvtph_ps,
        _mm256_extractf128_ps, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_setzero_ps, _mm512_add_ps, _mm512_cvtepi32_ps,
        _mm512_cvtepi8_epi32, _mm512_cvtph_ps, _mm512_fmadd_ps, _mm512_loadu_ps, _mm512_reduce_add_ps,
        _mm512_setzero_ps, _mm_add_ps, _mm_cvtss_f32, _mm_hadd_ps, _mm_loadl_epi64, _mm_loadu_si128,
    };
    use std::arch::x86_64::{__m256i, _mm256_add_epi16, _mm256_and_si256, _mm256_set1_epi8, _mm256_srli_epi16};
    use std::arch::x86_64::{
        _mm256_add_epi32, _mm256_castsi256_si128, _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_madd_epi16,
        _mm256_maddubs_epi16, _mm256_set1_epi16, _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_sign_epi8,
        _mm_add_epi16, _mm_add_epi32, _mm_cvtsi128_si32, _mm_shuffle_epi32, _mm_storeu_si128,
    };

    use half::f16;

    use super::{scalar_dot_f16, scalar_dot_f32, scalar_dot_i8, scalar_dot_rows_i8, scalar_dot_rows_u4, Kernels};

    pub const AVX2: Kernels = Kernels {
        name: "avx2",
        f32: dot_f32_avx2,
        f16: dot_f16_avx2,
        i8: dot_i8_avx2,
        f32_rows: dot_rows_f32_avx2,
        i8_rows: dot_rows_i8_avx2,
        u4_rows: dot_rows_u4_avx2,
        lookup_blocks: Some(lookup_blocks_avx2),
    };
    pub const AVX512: Kernels = Kernels {
        name: "avx512",
        f32: dot_f32_avx512,
        f16: dot_f16_avx512,
        i8: dot_i8_avx512,
        f32_rows: dot_rows_f32_avx512,
        // AVX2's: the scans they serve read memory as fast as 512-bit ones would.
        i8_rows: dot_rows_i8_avx2,
        u4_rows: dot_rows_u4_avx2,
        lookup_blocks: Some(lookup_blocks_avx2),
    };

    // The safe wrappers are only reachable through `detect`/`available`, which
    // checked the CPU features the `unsafe` bodies require.
    fn dot_f32_avx2(a: &[f32], b: &[f32]) -> f32 {
        unsafe { f32_avx2(a, b) }
    }
    fn dot_f16_avx2(a: &[f16], b: &[f32]) -> f32 {
        unsafe { f16_avx2(a, b) }
    }
    fn dot_i8_avx2(a: &[i8], b: &[f32]) -> f32 {
        unsafe { i8_avx2(a, b) }
    }
    fn dot_f32_avx512(a: &[f32], b: &[f32]) -> f32 {
        unsafe { f32_avx512(a, b) }
    }
    fn dot_rows_f32_avx2(rows: &[f32], q: &[f32], out: &mut [f32]) {
        unsafe { rows_f32_avx2(rows, q, out) }
    }
    fn dot_rows_f32_avx512(rows: &[f32], q: &[f32], out: &mut [f32]) {
        unsafe { rows_f32_avx512(rows, q, out) }
    }
    fn dot_rows_i8_avx2(rows: &[i8], q: &[i8], out: &mut [i32]) {
        unsafe { rows_i8_avx2(rows, q, out) }
    }

    // i8 x i8 in 32-byte steps: `maddubs` multiplies unsigned by signed bytes, so each row byte's sign moves onto
    // the query byte (`sign`) and its absolute value stays; pairs sum to i16 (at most 2 x 127 x 127, no saturation),
    // then `madd` against ones sums those pairs to i32.
    #[target_feature(enable = "avx2")]
    unsafe fn rows_i8_avx2(rows: &[i8], q: &[i8], out: &mut [i32]) {
        let dims = q.len();
        let body = dims - dims % 32;
        let ones = _mm256_set1_epi16(1);
        for (row, o) in rows.chunks_exact(dims.max(1)).zip(out.iter_mut()) {
            let mut acc = _mm256_setzero_si256();
            let mut i = 0;
            while i < body {
                unsafe {
                    let a = _mm256_loadu_si256(row.as_ptr().add(i).cast());
                    let b = _mm256_loadu_si256(q.as_ptr().add(i).cast());
                    let pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
                    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
                }
                i += 32;
            }
            let mut tail = [0i32];
            scalar_dot_rows_i8(&row[body..], &q[body..], &mut tail);
            *o = lane_sum(acc) + tail[0];
        }
    }

    /// The sum of the eight i32 lanes of `acc`.
    #[target_feature(enable = "avx2")]
    fn lane_sum(acc: __m256i) -> i32 {
        let lanes = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256::<1>(acc));
        let lanes = _mm_add_epi32(lanes, _mm_shuffle_epi32::<0b0100_1110>(lanes));
        let lanes = _mm_add_epi32(lanes, _mm_shuffle_epi32::<0b1011_0001>(lanes));
        _mm_cvtsi128_si32(lanes)
    }

    fn dot_rows_u4_avx2(rows: &[u8], q_lo: &[i8], q_hi: &[i8], out: &mut [i32]) {
        unsafe { rows_u4_avx2(rows, q_lo, q_hi, out) }
    }

    // 4-bit codes x i8 in 32-byte steps (64 codes): the two nibbles of each byte are split into two vectors of
    // bytes 0..=15, which `maddubs` multiplies (unsigned) by the query bytes (signed); a pair sums to at most
    // 2 x 15 x 127, so the low and high products add up in i16 before `madd` widens them to i32.
    #[target_feature(enable = "avx2")]
    unsafe fn rows_u4_avx2(rows: &[u8], q_lo: &[i8], q_hi: &[i8], out: &mut [i32]) {
        let width = q_lo.len();
        let body = width - width % 32;
        let (ones, nibble) = (_mm256_set1_epi16(1), _mm256_set1_epi8(15));
        for (row, o) in rows.chunks_exact(width.max(1)).zip(out.iter_mut()) {
            let mut acc = _mm256_setzero_si256();
            let mut i = 0;
            while i < body {
                unsafe {
                    let codes = _mm256_loadu_si256(row.as_ptr().add(i).cast());
                    let lo = _mm256_and_si256(codes, nibble);
                    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(codes), nibble);
                    let pairs = _mm256_add_epi16(
                        _mm256_maddubs_epi16(lo, _mm256_loadu_si256(q_lo.as_ptr().add(i).cast())),
                        _mm256_maddubs_epi16(hi, _mm256_loadu_si256(q_hi.as_ptr().add(i).cast())),
                    );
                    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
                }
                i += 32;
            }
            let mut tail = [0i32];
            scalar_dot_rows_u4(&row[body..], &q_lo[body..], &q_hi[body..], &mut tail);
            *o = lane_sum(acc) + tail[0];
        }
    }

    fn lookup_blocks_avx2(blocks: &[u8], table: &[u8], out: &mut [u16]) {
        unsafe { blocks_lookup_avx2(blocks, table, out) }
    }

    // Two groups per 32-byte step: each 128-bit lane holds one group's 32 nibbles and `shuffle` looks them up in
    // that lane's 16-byte table (the "fast scan" of 4-bit product codes). The low nibbles give rows 0, 2, 4, ...,
    // the high ones rows 1, 3, 5, ...; each result byte pair is split into two u16 sums (rows 4j and 4j + 2 of the
    // low ones, 4j + 1 and 4j + 3 of the high ones), and the two lanes' sums are added at the end of the block.
    #[target_feature(enable = "avx2")]
    unsafe fn blocks_lookup_avx2(blocks: &[u8], table: &[u8], out: &mut [u16]) {
        let stride = table.len();
        let (nibble, low_byte) = (_mm256_set1_epi8(15), _mm256_set1_epi16(0xff));
        for (block, out) in blocks.chunks_exact(stride.max(1)).zip(out.chunks_exact_mut(32)) {
            let mut acc = [_mm256_setzero_si256(); 4];
            let mut i = 0;
            while i + 32 <= stride {
                unsafe {
                    let codes = _mm256_loadu_si256(block.as_ptr().add(i).cast());
                    let lookup = _mm256_loadu_si256(table.as_ptr().add(i).cast());
                    let even = _mm256_shuffle_epi8(lookup, _mm256_and_si256(codes, nibble));
                    let odd = _mm256_shuffle_epi8(lookup, _mm256_and_si256(_mm256_srli_epi16::<4>(codes), nibble));
                    acc[0] = _mm256_add_epi16(acc[0], _mm256_and_si256(even, low_byte));
                    acc[1] = _mm256_add_epi16(acc[1], _mm256_srli_epi16::<8>(even));
                    acc[2] = _mm256_add_epi16(acc[2], _mm256_and_si256(odd, low_byte));
                    acc[3] = _mm256_add_epi16(acc[3], _mm256_srli_epi16::<8>(odd));
                }
                i += 32;
            }
            let mut sums = [[0u16; 8]; 4];
            for (sum, acc) in sums.iter_mut().zip(acc) {
                let lanes = _mm_add_epi16(_mm256_castsi256_si128(acc), _mm256_extracti128_si256::<1>(acc));
                unsafe { _mm_storeu_si128(sum.as_mut_ptr().cast(), lanes) };
            }
            for j in 0..8 {
                out[4 * j] = sums[0][j];
                out[4 * j + 1] = sums[2][j];
                out[4 * j + 2] = sums[1][j];
                out[4 * j + 3] = sums[3][j];
            }
        }
    }

    // Four rows per pass share each query load and the loop overhead; the
    // remaining rows and the tail of each row go through the one-row kernels.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn rows_f32_avx2(rows: &[f32], q: &[f32], out: &mut [f32]) {
        let dims = q.len();
        let body = dims - dims % 8;
        let n = out.len().min(rows.len() / dims.max(1));
        let mut r = 0;
        while r + 4 <= n {
            let base = rows[r * dims..].as_ptr();
            let mut acc = [_mm256_setzero_ps(); 4];
            let mut i = 0;
            while i < body {
                unsafe {
                    let qv = _mm256_loadu_ps(q.as_ptr().add(i));
                    for (j, acc) in acc.iter_mut().enumerate() {
                        *acc = _mm256_fmadd_ps(_mm256_loadu_ps(base.add(j * dims + i)), qv, *acc);
                    }
                }
                i += 8;
            }
            for (j, acc) in acc.into_iter().enumerate() {
                let row = &rows[(r + j) * dims..(r + j + 1) * dims];
                out[r + j] = hsum256(acc) + scalar_dot_f32(&row[body..], &q[body..]);
            }
            r += 4;
        }
        for rr in r..n {
            out[rr] = unsafe { f32_avx2(&rows[rr * dims..(rr + 1) * dims], q) };
        }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn rows_f32_avx512(rows: &[f32], q: &[f32], out: &mut [f32]) {
        let dims = q.len();
        let body = dims - dims % 16;
        let n = out.len().min(rows.len() / dims.max(1));
        let mut r = 0;
        while r + 4 <= n {
            let base = rows[r * dims..].as_ptr();
            let mut acc = [_mm512_setzero_ps(); 4];
            let mut i = 0;
            while i < body {
                unsafe {
                    let qv = _mm512_loadu_ps(q.as_ptr().add(i));
                    for (j, acc) in acc.iter_mut().enumerate() {
                        *acc = _mm512_fmadd_ps(_mm512_loadu_ps(base.add(j * dims + i)), qv, *acc);
                    }
                }
                i += 16;
            }
            for (j, acc) in acc.into_iter().enumerate() {
                let row = &rows[(r + j) * dims..(r + j + 1) * dims];
                out[r + j] = _mm512_reduce_add_ps(acc) + scalar_dot_f32(&row[body..], &q[body..]);
            }
            r += 4;
        }
        for rr in r..n {
            out[rr] = unsafe { f32_avx512(&rows[rr * dims..(rr + 1) * dims], q) };
        }
    }
    fn dot_f16_avx512(a: &[f16], b: &[f32]) -> f32 {
        unsafe { f16_avx512(a, b) }
    }
    fn dot_i8_avx512(a: &[i8], b: &[f32]) -> f32 {
        unsafe { i8_avx512(a, b) }
    }

    #[target_feature(enable = "avx2,fma")]
    fn hsum256(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let s = _mm_hadd_ps(s, s);
        _mm_cvtss_f32(_mm_hadd_ps(s, s))
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn f32_avx2(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        unsafe {
            while i + 32 <= n {
                for (j, acc) in acc.iter_mut().enumerate() {
                    *acc =
                        _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i + 8 * j)), _mm256_loadu_ps(pb.add(i + 8 * j)), *acc);
                }
                i += 32;
            }
            while i + 8 <= n {
                acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)), acc[0]);
                i += 8;
            }
        }
        let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
        hsum256(sum) + scalar_dot_f32(&a[i..n], &b[i..n])
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn f16_avx2(a: &[f16], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_ps(); 2];
        let mut i = 0;
        unsafe {
            while i + 16 <= n {
                for (j, acc) in acc.iter_mut().enumerate() {
                    let x = _mm256_cvtph_ps(_mm_loadu_si128(pa.add(i + 8 * j).cast()));
                    *acc = _mm256_fmadd_ps(x, _mm256_loadu_ps(pb.add(i + 8 * j)), *acc);
                }
                i += 16;
            }
            while i + 8 <= n {
                let x = _mm256_cvtph_ps(_mm_loadu_si128(pa.add(i).cast()));
                acc[0] = _mm256_fmadd_ps(x, _mm256_loadu_ps(pb.add(i)), acc[0]);
                i += 8;
            }
        }
        hsum256(_mm256_add_ps(acc[0], acc[1])) + scalar_dot_f16(&a[i..n], &b[i..n])
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn i8_avx2(a: &[i8], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_ps(); 2];
        let mut i = 0;
        unsafe {
            while i + 16 <= n {
                for (j, acc) in acc.iter_mut().enumerate() {
                    let x = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(pa.add(i + 8 * j).cast())));
                    *acc = _mm256_fmadd_ps(x, _mm256_loadu_ps(pb.add(i + 8 * j)), *acc);
                }
                i += 16;
            }
            while i + 8 <= n {
                let x = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(pa.add(i).cast())));
                acc[0] = _mm256_fmadd_ps(x, _mm256_loadu_ps(pb.add(i)), acc[0]);
                i += 8;
            }
        }
        hsum256(_mm256_add_ps(acc[0], acc[1])) + scalar_dot_i8(&a[i..n], &b[i..n])
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn f32_avx512(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm512_setzero_ps(); 2];
        let mut i = 0;
        unsafe {
            while i + 32 <= n {
                for (j, acc) in acc.iter_mut().enumerate() {
                    *acc =
                        _mm512_fmadd_ps(_mm512_loadu_ps(pa.add(i + 16 * j)), _mm512_loadu_ps(pb.add(i + 16 * j)), *acc);
                }
                i += 32;
            }
            while i + 16 <= n {
                acc[0] = _mm512_fmadd_ps(_mm512_loadu_ps(pa.add(i)), _mm512_loadu_ps(pb.add(i)), acc[0]);
                i += 16;
            }
        }
        _mm512_reduce_add_ps(_mm512_add_ps(acc[0], acc[1])) + scalar_dot_f32(&a[i..n], &b[i..n])
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn f16_avx512(a: &[f16], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = _mm512_setzero_ps();
        let mut i = 0;
        unsafe {
            while i + 16 <= n {
                let x = _mm512_cvtph_ps(std::arch::x86_64::_mm256_loadu_si256(pa.add(i).cast()));
                acc = _mm512_fmadd_ps(x, _mm512_loadu_ps(pb.add(i)), acc);
                i += 16;
            }
        }
        _mm512_reduce_add_ps(acc) + scalar_dot_f16(&a[i..n], &b[i..n])
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn i8_avx512(a: &[i8], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = _mm512_setzero_ps();
        let mut i = 0;
        unsafe {
            while i + 16 <= n {
                let x = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(pa.add(i).cast())));
                acc = _mm512_fmadd_ps(x, _mm512_loadu_ps(pb.add(i)), acc);
                i += 16;
            }
        }
        _mm512_reduce_add_ps(acc) + scalar_dot_i8(&a[i..n], &b[i..n])
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use std::arch::aarch64::{
        vaddq_f32, vaddvq_f32, vcvtq_f32_s32, vdupq_n_f32, vfmaq_f32, vget_high_s16, vget_low_s16, vld1_s8, vld1q_f32,
        vmovl_s16, vmovl_s8,
    };

    use half::f16;

    use super::{scalar_dot_f32, scalar_dot_i8, scalar_dot_rows_i8, scalar_dot_rows_u4, Kernels};

    pub const NEON: Kernels = Kernels {
        name: "neon",
        f32: dot_f32_neon,
        f16: dot_f16_neon,
        i8: dot_i8_neon,
        f32_rows: dot_rows_f32_neon,
        // The compiler vectorizes the scalar loops with NEON's widening multiplies.
        i8_rows: scalar_dot_rows_i8,
        u4_rows: scalar_dot_rows_u4,
        lookup_blocks: None,
    };

    fn dot_rows_f32_neon(rows: &[f32], q: &[f32], out: &mut [f32]) {
        for (row, o) in rows.chunks_exact(q.len().max(1)).zip(out) {
            *o = dot_f32_neon(row, q);
        }
    }

    // NEON is part of the aarch64 baseline, so these are always safe to call.
    fn dot_f32_neon(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let mut i = 0;
        unsafe {
            let (mut s0, mut s1) = (vdupq_n_f32(0.0), vdupq_n_f32(0.0));
            while i + 8 <= n {
                s0 = vfmaq_f32(s0, vld1q_f32(a.as_ptr().add(i)), vld1q_f32(b.as_ptr().add(i)));
                s1 = vfmaq_f32(s1, vld1q_f32(a.as_ptr().add(i + 4)), vld1q_f32(b.as_ptr().add(i + 4)));
                i += 8;
            }
            vaddvq_f32(vaddq_f32(s0, s1)) + scalar_dot_f32(&a[i..n], &b[i..n])
        }
    }

    fn dot_f16_neon(a: &[f16], b: &[f32]) -> f32 {
        // Widen in blocks, then reuse the f32 kernel (stable Rust has no f16 NEON intrinsics).
        let mut block = [0f32; 64];
        let mut total = 0.0;
        for (ca, cb) in a.chunks(64).zip(b.chunks(64)) {
            for (dst, src) in block.iter_mut().zip(ca) {
                *dst = src.to_f32();
            }
            total += dot_f32_neon(&block[..ca.len()], cb);
        }
        total
    }

    fn dot_i8_neon(a: &[i8], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let mut i = 0;
        unsafe {
            let mut acc = vdupq_n_f32(0.0);
            while i + 8 <= n {
                let wide = vmovl_s8(vld1_s8(a.as_ptr().add(i)));
                let lo = vcvtq_f32_s32(vmovl_s16(vget_low_s16(wide)));
                let hi = vcvtq_f32_s32(vmovl_s16(vget_high_s16(wide)));
                acc = vfmaq_f32(acc, lo, vld1q_f32(b.as_ptr().add(i)));
                acc = vfmaq_f32(acc, hi, vld1q_f32(b.as_ptr().add(i + 4)));
                i += 8;
            }
            vaddvq_f32(acc) + scalar_dot_i8(&a[i..n], &b[i..n])
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::*;

    #[test]
    fn a_named_set_is_chosen_only_when_this_cpu_runs_it() {
        let best = detect().name;
        assert_eq!(select(None).name, best);
        assert_eq!(select(Some("scalar")).name, "scalar");
        assert_eq!(select(Some(" Scalar ")).name, "scalar");
        assert_eq!(select(Some("auto")).name, best);
        assert_eq!(select(Some("sse9")).name, best);
        for k in available() {
            assert_eq!(select(Some(k.name)).name, k.name);
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(select(Some("neon")).name, best);
    }

    #[test]
    fn every_variant_matches_scalar() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for dims in [0, 1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 384, 385] {
            let a: Vec<f32> = (0..dims).map(|_| rng.random_range(-1.0..1.0)).collect();
            let b: Vec<f32> = (0..dims).map(|_| rng.random_range(-1.0..1.0)).collect();
            let h: Vec<f16> = a.iter().map(|&x| f16::from_f32(x)).collect();
            let q: Vec<i8> = (0..dims).map(|_| rng.random_range(-127..=127)).collect();
            for k in available() {
                let tol = 1e-4 * (dims as f32 + 1.0);
                assert!(((k.f32)(&a, &b) - scalar_dot_f32(&a, &b)).abs() <= tol, "{} f32 dims {dims}", k.name);
                assert!(((k.f16)(&h, &b) - scalar_dot_f16(&h, &b)).abs() <= tol, "{} f16 dims {dims}", k.name);
                assert!(((k.i8)(&q, &b) - scalar_dot_i8(&q, &b)).abs() <= tol * 127.0, "{} i8 dims {dims}", k.name);
                for n_rows in [0, 1, 3, 4, 5, 9] {
                    let int_rows: Vec<i8> = (0..n_rows * dims).map(|_| rng.random_range(-127..=127)).collect();
                    let (mut got, mut want) = (vec![0i32; n_rows], vec![0i32; n_rows]);
                    (k.i8_rows)(&int_rows, &q, &mut got);
                    scalar_dot_rows_i8(&int_rows, &q, &mut want);
                    assert_eq!(got, want, "{} i8 rows dims {dims} rows {n_rows}", k.name);
                    let codes: Vec<u8> = (0..n_rows * dims).map(|_| rng.random()).collect();
                    let q_hi: Vec<i8> = (0..dims).map(|_| rng.random_range(-127..=127)).collect();
                    (k.u4_rows)(&codes, &q, &q_hi, &mut got);
                    scalar_dot_rows_u4(&codes, &q, &q_hi, &mut want);
                    assert_eq!(got, want, "{} u4 rows width {dims} rows {n_rows}", k.name);
                    if let Some(lookup) = k.lookup_blocks {
                        let stride = 16 * 2 * (dims / 8 + 1); // whole pairs of groups
                        let blocks: Vec<u8> = (0..n_rows * stride).map(|_| rng.random()).collect();
                        let table: Vec<u8> = (0..stride).map(|_| rng.random_range(0..=248)).collect();
                        let (mut got, mut want) = (vec![0u16; 32 * n_rows], vec![0u16; 32 * n_rows]);
                        lookup(&blocks, &table, &mut got);
                        scalar_lookup_blocks(&blocks, &table, &mut want);
                        assert_eq!(got, want, "{} lookups groups {} blocks {n_rows}", k.name, stride / 16);
                    }
                    let rows: Vec<f32> = (0..n_rows * dims).map(|_| rng.random_range(-1.0..1.0)).collect();
                    let (mut got, mut want) = (vec![0f32; n_rows], vec![0f32; n_rows]);
                    (k.f32_rows)(&rows, &b, &mut got);
                    scalar_dot_rows_f32(&rows, &b, &mut want);
                    for (g, w) in got.iter().zip(&want) {
                        assert!((g - w).abs() <= tol, "{} rows dims {dims} rows {n_rows}", k.name);
                    }
                }
            }
        }
    }
}
