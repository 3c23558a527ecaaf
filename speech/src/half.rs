//! The decoder's matrices in half precision, as the model file stores them, multiplied in f32.
//!
//! The decoder reads one token at a time, so each of its products is a matrix times a vector or
//! two, and its time is the time to read the matrix from memory (about 22 GB/s here, whatever
//! the number of cores): at 2 bytes a weight instead of 4, a token costs half the reading. Each
//! weight is widened as it is read and every sum is f32, so the results are those of the
//! weights widened at load, to within the order of the additions.

use candle_core::{DType, Result, Tensor};
use half::f16;
use rayon::prelude::*;

/// A `rows` × `cols` matrix (row-major, each row one output) and its bias.
pub struct HalfMatrix {
    weights: Vec<f16>,
    bias: Option<Vec<f32>>,
    rows: usize,
    cols: usize,
}

/// Rows a thread takes at once: enough that handing them out costs nothing beside reading
/// them (64 rows of base's 512 columns are 64 KiB), few enough that the vocabulary's 51,865
/// rows split evenly over the cores.
const ROWS_AT_ONCE: usize = 64;

impl HalfMatrix {
    /// `weight` (rows × cols) and `bias` (rows), as half-precision weights: exact for a model
    /// stored in half precision, as Whisper's CTranslate2 files are.
    pub fn new(weight: &Tensor, bias: Option<&Tensor>) -> Result<HalfMatrix> {
        let (rows, cols) = weight.dims2()?;
        let bias = bias
            .map(|b| b.to_dtype(DType::F32)?.to_vec1::<f32>())
            .transpose()?;
        if bias.as_ref().is_some_and(|b| b.len() != rows) {
            candle_core::bail!("a bias of {} for {rows} rows", bias.map_or(0, |b| b.len()));
        }
        Ok(HalfMatrix {
            weights: weight.to_dtype(DType::F16)?.flatten_all()?.to_vec1()?,
            bias,
            rows,
            cols,
        })
    }

    /// Row `i` in f32: a token's embedding.
    pub fn row(&self, i: usize) -> Option<Vec<f32>> {
        let row = self.weights.get(i * self.cols..(i + 1) * self.cols)?;
        Some(row.iter().map(|w| w.to_f32()).collect())
    }

    /// `x` (n × cols, row-major) times the matrix's transpose, plus the bias: n × rows.
    /// Each row is read once for all n vectors.
    pub fn times(&self, x: &[f32]) -> Vec<f32> {
        let n = x.len() / self.cols;
        if n == 0 {
            // No vector: no answer (and no blocks of zero length to split into).
            return Vec::new();
        }
        // A block's answers land row by row and are put in the caller's order after.
        let dot = dot_kernel();
        let mut by_row = vec![0f32; self.rows * n];
        let rows = |(block, out): (usize, &mut [f32])| {
            let first = block * ROWS_AT_ONCE;
            for (r, out) in out.chunks_mut(n).enumerate() {
                let row = &self.weights[(first + r) * self.cols..(first + r + 1) * self.cols];
                let bias = self.bias.as_ref().map_or(0.0, |b| b[first + r]);
                for (t, out) in out.iter_mut().enumerate() {
                    *out = dot(row, &x[t * self.cols..(t + 1) * self.cols]) + bias;
                }
            }
        };
        by_row.par_chunks_mut(ROWS_AT_ONCE * n).enumerate().for_each(rows);
        if n == 1 {
            return by_row;
        }
        (0..n)
            .flat_map(|t| (0..self.rows).map(move |r| (t, r)))
            .map(|(t, r)| by_row[r * n + t])
            .collect()
    }
}

type Dot = fn(&[f16], &[f32]) -> f32;

/// The sum of `w[i] × x[i]`, each `w` widened to f32: by AVX2, FMA and F16C where the CPU has
/// them (every x86 server since 2015), else one at a time.
fn dot_kernel() -> Dot {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("f16c")
    {
        // SAFETY: the features it is compiled for are there.
        return |w, x| unsafe { x86::dot(w, x) };
    }
    |w, x| w.iter().zip(x).map(|(w, x)| w.to_f32() * x).sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use half::f16;

    /// 32 weights a turn into four sums of eight, widened by F16C eight at a time.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn dot(w: &[f16], x: &[f32]) -> f32 {
        let len = w.len().min(x.len());
        let (wp, xp) = (w.as_ptr() as *const u16, x.as_ptr());
        let mut sums = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        // SAFETY: every load reads 8 elements from i + 8k < len.
        unsafe {
            while i + 32 <= len {
                for (k, sum) in sums.iter_mut().enumerate() {
                    let at = i + 8 * k;
                    let wide = _mm256_cvtph_ps(_mm_loadu_si128(wp.add(at) as *const __m128i));
                    *sum = _mm256_fmadd_ps(wide, _mm256_loadu_ps(xp.add(at)), *sum);
                }
                i += 32;
            }
            while i + 8 <= len {
                let wide = _mm256_cvtph_ps(_mm_loadu_si128(wp.add(i) as *const __m128i));
                sums[0] = _mm256_fmadd_ps(wide, _mm256_loadu_ps(xp.add(i)), sums[0]);
                i += 8;
            }
            let all = _mm256_add_ps(_mm256_add_ps(sums[0], sums[1]), _mm256_add_ps(sums[2], sums[3]));
            let mut lanes = [0f32; 8];
            _mm256_storeu_ps(lanes.as_mut_ptr(), all);
            lanes.iter().sum::<f32>()
                + w[i..len]
                    .iter()
                    .zip(&x[i..len])
                    .map(|(w, x)| w.to_f32() * x)
                    .sum::<f32>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    /// Against candle's f32 product on the same half-precision numbers, for one vector and for
    /// three, with lengths that leave a remainder after the blocks of 32 and of 8.
    #[test]
    fn times_is_the_f32_product_of_the_same_weights() {
        let (rows, cols) = (131, 77);
        let numbers = |count: usize, seed: u32| -> Vec<f32> {
            (0..count as u32)
                .map(|i| {
                    let v =
                        f16::from_f32(((i.wrapping_mul(2_654_435_761) ^ seed) % 2000) as f32 / 1000.0 - 1.0);
                    v.to_f32()
                })
                .collect()
        };
        let weight = Tensor::from_vec(numbers(rows * cols, 7), (rows, cols), &Device::Cpu).unwrap();
        let bias = Tensor::from_vec(numbers(rows, 11), rows, &Device::Cpu).unwrap();
        let matrix = HalfMatrix::new(&weight, Some(&bias)).unwrap();
        for n in [1, 3] {
            let x = Tensor::from_vec(numbers(n * cols, 13 + n as u32), (1, n, cols), &Device::Cpu).unwrap();
            let ours = matrix.times(&x.flatten_all().unwrap().to_vec1::<f32>().unwrap());
            let theirs: Vec<f32> = x
                .broadcast_matmul(&weight.t().unwrap())
                .unwrap()
                .broadcast_add(&bias)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1()
                .unwrap();
            assert_eq!(ours.len(), n * rows);
            let worst = ours
                .iter()
                .zip(&theirs)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(worst < 1e-4, "{n} vectors: off by {worst}");
        }
        assert!(matrix.times(&[]).is_empty());
        assert_eq!(
            matrix.row(2).unwrap(),
            numbers(rows * cols, 7)[2 * cols..3 * cols]
        );
        assert!(matrix.row(rows).is_none());
    }
}
