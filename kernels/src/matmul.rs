//! The f32 matrix product of the local models: `out += x · B`, with `B` packed once into
//! panels of 16 columns (each panel its `k` rows of 16 numbers in a run), so that the kernel
//! reads the weights in order, once per block of rows of `x`.
//!
//! A general library (candle's `gemm`) packs the weights again at every call: for the few rows
//! of a search's query that packing is most of the work. Here a model's weights are packed when
//! it loads. The kernel keeps six rows by 16 columns of sums in AVX2 registers, each weight read
//! once for the six rows (FMA, chosen at run time; elsewhere the same loops in plain Rust).

use rayon::prelude::*;

/// The columns of a panel.
const WIDTH: usize = 16;

/// The rows of `x` a kernel call sums at once: twelve registers of sums, beside two of weights
/// and one of `x`, in AVX2's sixteen.
const ROWS: usize = 6;

/// Rows of `x` a thread takes at once: enough that its part of the weights is read for many
/// rows, few enough that a few hundred rows still split over the cores.
const ROWS_A_THREAD: usize = 48;

/// A `k` × `n` matrix packed for being multiplied by: its columns in panels of [`WIDTH`], the
/// last one padded with zeros.
pub struct Panels {
    k: usize,
    n: usize,
    packed: Vec<f32>,
}

impl Panels {
    /// `B` from its element at (row, column): `k` rows of `n`.
    fn new(k: usize, n: usize, at: impl Fn(usize, usize) -> f32) -> Panels {
        let panels = n.div_ceil(WIDTH);
        let mut packed = vec![0f32; panels * k * WIDTH];
        for (panel, run) in packed.chunks_exact_mut(k * WIDTH).enumerate() {
            for (row, numbers) in run.chunks_exact_mut(WIDTH).enumerate() {
                for (c, number) in numbers.iter_mut().enumerate() {
                    let column = panel * WIDTH + c;
                    if column < n {
                        *number = at(row, column);
                    }
                }
            }
        }
        Panels { k, n, packed }
    }

    /// A linear layer's weights as PyTorch stores them, `n` outputs of `k` inputs each (row
    /// `j` at `w[j * stride..]`), to multiply by as their transpose: `x · wᵀ`.
    pub fn transposed(w: &[f32], n: usize, k: usize, stride: usize) -> Panels {
        assert!(
            n == 0 || k == 0 || w.len() >= (n - 1) * stride + k,
            "a matrix too short"
        );
        Panels::new(k, n, |row, column| w[column * stride + row])
    }

    /// `b` itself: `k` rows of `n` (row `i` at `b[i * stride..]`).
    pub fn rows(b: &[f32], k: usize, n: usize, stride: usize) -> Panels {
        assert!(
            n == 0 || k == 0 || b.len() >= (k - 1) * stride + n,
            "a matrix too short"
        );
        Panels::new(k, n, |row, column| b[row * stride + column])
    }

    /// The rows of `B` (the length of each row of `x`).
    pub fn inputs(&self) -> usize {
        self.k
    }

    /// The columns of `B` (the numbers each row of `x` gives).
    pub fn outputs(&self) -> usize {
        self.n
    }

    /// `out += x · B` for `m` rows: row `i` of `x` at `x[i * x_stride..]`, of `out` at
    /// `out[i * out_stride..]`. Many rows are split over rayon's threads, a few rows are done
    /// on this one.
    pub fn multiply_add(&self, x: &[f32], x_stride: usize, m: usize, out: &mut [f32], out_stride: usize) {
        if m == 0 || self.n == 0 {
            return;
        }
        assert!(x_stride >= self.k && out_stride >= self.n, "rows overlapping");
        assert!(x.len() >= (m - 1) * x_stride + self.k, "x too short");
        assert!(out.len() >= (m - 1) * out_stride + self.n, "out too short");
        // Chunked by blocks of rows, the last chunk ends with the last row.
        let out = &mut out[..(m - 1) * out_stride + self.n];
        let kernel = kernel();
        let block = |(b, out): (usize, &mut [f32])| {
            let first = b * ROWS_A_THREAD;
            let rows = ROWS_A_THREAD.min(m - first);
            self.rows_times(kernel, &x[first * x_stride..], x_stride, rows, out, out_stride);
        };
        if m <= ROWS_A_THREAD {
            block((0, out));
        } else {
            out.par_chunks_mut(ROWS_A_THREAD * out_stride)
                .enumerate()
                .for_each(block);
        }
    }

    /// `out += x · B` for `m` rows on this thread: the rows packed in strips of [`ROWS`]
    /// (each step of `k` their numbers side by side, so the kernel reads them in order), then
    /// each panel in turn, for all the strips.
    fn rows_times(
        &self,
        kernel: Kernel,
        x: &[f32],
        x_stride: usize,
        m: usize,
        out: &mut [f32],
        out_stride: usize,
    ) {
        let k = self.k;
        let mut strips = vec![0f32; m.div_ceil(ROWS) * k * ROWS];
        for (i, strip) in strips.chunks_exact_mut(k * ROWS).enumerate() {
            for r in 0..ROWS.min(m - i * ROWS) {
                let row = &x[(i * ROWS + r) * x_stride..][..k];
                for (p, number) in row.iter().enumerate() {
                    strip[p * ROWS + r] = *number;
                }
            }
        }
        for (panel, weights) in self.packed.chunks_exact(k * WIDTH).enumerate() {
            let column = panel * WIDTH;
            let columns = WIDTH.min(self.n - column);
            for (i, strip) in strips.chunks_exact(k * ROWS).enumerate() {
                let row = i * ROWS;
                let block = Block {
                    k,
                    x: strip,
                    weights,
                    out: &mut out[row * out_stride + column..],
                    out_stride,
                    columns,
                };
                kernel(ROWS.min(m - row), block);
            }
        }
    }
}

/// One kernel call: a strip of up to [`ROWS`] rows of `x` (number `p` of row `r` at
/// `x[p * ROWS + r]`) times one panel, added to `out`'s `columns`.
struct Block<'a> {
    k: usize,
    x: &'a [f32],
    weights: &'a [f32],
    out: &'a mut [f32],
    out_stride: usize,
    columns: usize,
}

type Kernel = fn(usize, Block);

/// The kernel for this CPU: AVX2 and FMA where it has them (every x86 server since 2015),
/// else plain Rust.
fn kernel() -> Kernel {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        return x86::block;
    }
    portable
}

/// The kernel in plain Rust: the same sums in the same order, each product rounded before it is
/// added (a fused multiply-add without the instruction is a library call).
fn portable(rows: usize, b: Block) {
    let mut sums = [[0f32; WIDTH]; ROWS];
    for p in 0..b.k {
        let weights = &b.weights[p * WIDTH..(p + 1) * WIDTH];
        for (r, sums) in sums.iter_mut().enumerate().take(rows) {
            let a = b.x[p * ROWS + r];
            for (sum, w) in sums.iter_mut().zip(weights) {
                *sum += a * w;
            }
        }
    }
    for (r, sums) in sums.iter().enumerate().take(rows) {
        let out = &mut b.out[r * b.out_stride..r * b.out_stride + b.columns];
        for (out, sum) in out.iter_mut().zip(sums) {
            *out += sum;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Block, ROWS, WIDTH};

    pub fn block(rows: usize, b: Block) {
        // SAFETY (each arm): `kernel` is chosen only where AVX2 and FMA are there.
        unsafe {
            match rows {
                6 => sums::<6>(b),
                5 => sums::<5>(b),
                4 => sums::<4>(b),
                3 => sums::<3>(b),
                2 => sums::<2>(b),
                _ => sums::<1>(b),
            }
        }
    }

    /// `R` rows by 16 columns of sums in registers; each step of `k` reads the panel's 16
    /// weights once and one number of each row.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn sums<const R: usize>(b: Block) {
        const { assert!(R <= ROWS) };
        let mut sums = [[_mm256_setzero_ps(); 2]; R];
        let (x, w) = (b.x.as_ptr(), b.weights.as_ptr());
        // SAFETY: a strip holds k × ROWS numbers and a panel k × 16 weights.
        unsafe {
            for p in 0..b.k {
                let low = _mm256_loadu_ps(w.add(p * WIDTH));
                let high = _mm256_loadu_ps(w.add(p * WIDTH + 8));
                for (r, sums) in sums.iter_mut().enumerate() {
                    let a = _mm256_set1_ps(*x.add(p * ROWS + r));
                    sums[0] = _mm256_fmadd_ps(a, low, sums[0]);
                    sums[1] = _mm256_fmadd_ps(a, high, sums[1]);
                }
            }
        }
        for (r, sums) in sums.iter().enumerate() {
            let mut row = [0f32; WIDTH];
            // SAFETY: `row` holds 16 numbers.
            unsafe {
                _mm256_storeu_ps(row.as_mut_ptr(), sums[0]);
                _mm256_storeu_ps(row.as_mut_ptr().add(8), sums[1]);
            }
            let out = &mut b.out[r * b.out_stride..r * b.out_stride + b.columns];
            for (out, sum) in out.iter_mut().zip(row) {
                *out += sum;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(count: usize, seed: u32) -> Vec<f32> {
        (0..count as u32)
            .map(|i| ((i.wrapping_mul(2_654_435_761) ^ seed) % 2000) as f32 / 1000.0 - 1.0)
            .collect()
    }

    /// `x · B` summed in f64, one number at a time.
    fn product(x: &[f32], m: usize, k: usize, b: impl Fn(usize, usize) -> f32, n: usize) -> Vec<f64> {
        (0..m)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| (0..k).map(|p| x[i * k + p] as f64 * b(p, j) as f64).sum())
            .collect()
    }

    fn assert_near(ours: &[f32], theirs: &[f64], what: &str) {
        let worst = ours
            .iter()
            .zip(theirs)
            .map(|(a, b)| (*a as f64 - b).abs())
            .fold(0f64, f64::max);
        assert!(worst < 1e-4, "{what}: off by {worst}");
    }

    /// Row counts below, at and past a kernel's six and a thread's 48, columns that leave a
    /// part panel, both ways of packing, strides wider than the rows, and sums added to what
    /// `out` held.
    #[test]
    fn multiply_add_is_the_product_added() {
        let (k, n) = (37, 45);
        let w = numbers(n * 40, 3); // n rows of k, stride 40
        let transposed = Panels::transposed(&w, n, k, 40);
        let b = numbers(k * 50, 5); // k rows of n, stride 50
        let rows = Panels::rows(&b, k, n, 50);
        assert_eq!((transposed.inputs(), transposed.outputs()), (k, n));
        for m in [1, 5, 6, 7, 48, 49, 200] {
            let x = numbers(m * k, 7 + m as u32);
            for (panels, at, name) in [
                (
                    &transposed,
                    &(|p: usize, j: usize| w[j * 40 + p]) as &dyn Fn(usize, usize) -> f32,
                    "transposed",
                ),
                (&rows, &|p: usize, j: usize| b[p * 50 + j], "rows"),
            ] {
                let start = numbers(m * 60, 11);
                let mut out = start.clone();
                panels.multiply_add(&x, k, m, &mut out, 60);
                let expected = product(&x, m, k, at, n);
                let ours: Vec<f32> = (0..m)
                    .flat_map(|i| (0..n).map(move |j| (i, j)))
                    .map(|(i, j)| out[i * 60 + j] - start[i * 60 + j])
                    .collect();
                assert_near(&ours, &expected, &format!("{name}, {m} rows"));
                // The columns past n are left as they were.
                for i in 0..m {
                    assert_eq!(out[i * 60 + n..(i + 1) * 60], start[i * 60 + n..(i + 1) * 60]);
                }
            }
        }
    }

    #[test]
    fn the_portable_kernel_gives_the_same_sums() {
        let (k, n, m) = (19, 20, 5);
        let panels = Panels::rows(&numbers(k * n, 1), k, n, n);
        let x = numbers(m * k, 2);
        let (mut chosen, mut plain) = (vec![0f32; m * n], vec![0f32; m * n]);
        panels.multiply_add(&x, k, m, &mut chosen, n);
        panels.rows_times(portable, &x, k, m, &mut plain, n);
        let plain: Vec<f64> = plain.iter().map(|v| *v as f64).collect();
        assert_near(&chosen, &plain, "portable");
    }
}
