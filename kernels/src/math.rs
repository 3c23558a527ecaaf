//! exp, tanh, erf, softmax and GELU written without calls or branches, so that a loop of them is
//! vector instructions: the C library's `expf` and `tanhf`, one number a call, were a large
//! part of a Whisper window's time (the encoder's softmax takes 108 million exponentials a
//! window).

/// e^x for x ≤ 88 to within 2 ulp (Cephes' `expf`): x = n ln 2 + r with |r| ≤ ln 2 / 2, a
/// polynomial for e^r, and 2^n put in the exponent's bits. Below −87 it is e^−87, about 1e−38.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    // Rounded to the nearest integer by adding and taking away 1.5 × 2^23.
    let n = (x * std::f32::consts::LOG2_E + 12_582_912.0) - 12_582_912.0;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let mut p = 1.987_569_1e-4;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let e = p * r * r + r + 1.0;
    // n is within −126..=127 here: 2^n is a normal number.
    e * f32::from_bits(((n as i32 + 127) << 23) as u32)
}

/// tanh(x) from [`exp`] of −2|x|, its sign put back.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let e = exp(-2.0 * x.abs());
    ((1.0 - e) / (1.0 + e)).copysign(x)
}

/// GELU by its tanh approximation, as candle's Whisper computes it.
#[inline(always)]
pub fn gelu_tanh(v: f32) -> f32 {
    const SQRT_TWO_OVER_PI: f32 = 0.797_884_6;
    0.5 * v * (1.0 + tanh(SQRT_TWO_OVER_PI * v * (1.0 + 0.044715 * v * v)))
}

/// erf(x) to within 4e-7: below 0.5 its Taylor series (where the formula beyond loses digits
/// taking a number near 1 from 1), from there Abramowitz and Stegun's 7.1.26 with [`exp`].
/// Both are computed and one is chosen, so that a loop of it stays vector instructions.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let mut p = 1.061_405_4;
    p = p * t - 1.453_152;
    p = p * t + 1.421_413_7;
    p = p * t - 0.284_496_74;
    p = p * t + 0.254_829_6;
    let far = 1.0 - p * t * exp(-a * a);
    let s = a * a;
    let mut q = -1.0 / 1320.0;
    q = q * s + 1.0 / 216.0;
    q = q * s - 1.0 / 42.0;
    q = q * s + 1.0 / 10.0;
    q = q * s - 1.0 / 3.0;
    q = q * s + 1.0;
    let near = std::f32::consts::FRAC_2_SQRT_PI * a * q;
    (if a < 0.5 { near } else { far }).copysign(x)
}

/// GELU as BERT defines it, x · Φ(x), with [`erf`].
#[inline(always)]
pub fn gelu_erf(v: f32) -> f32 {
    0.5 * v * (1.0 + erf(v * std::f32::consts::FRAC_1_SQRT_2))
}

/// `scores` made weights that sum to 1.
pub fn softmax(scores: &mut [f32]) {
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    scores.iter_mut().for_each(|s| *s = exp(*s - max));
    let sum: f32 = scores.iter().sum();
    scores.iter_mut().for_each(|s| *s /= sum);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_tanh_are_the_c_librarys_within_a_few_ulp() {
        for i in 0..=400_000 {
            let x = -87.0 + i as f32 * 175.0 / 400_000.0;
            let (ours, theirs) = (exp(x), x.exp());
            assert!(
                (ours - theirs).abs() <= theirs * 3e-7,
                "exp({x}): {ours} against {theirs}"
            );
            let x = x / 8.0;
            let (ours, theirs) = (tanh(x), x.tanh());
            assert!(
                (ours - theirs).abs() <= 2e-7,
                "tanh({x}): {ours} against {theirs}"
            );
        }
        assert_eq!(exp(f32::NEG_INFINITY), exp(-87.0));
    }

    #[test]
    fn erf_is_within_four_ten_millionths() {
        // Against erf's series, summed in f64 (|x| ≤ 3; beyond, erf is 1 to within 2e-5 and the
        // series would need too many terms).
        let series = |x: f64| {
            let (mut term, mut sum) = (x, x);
            for n in 1..200 {
                term *= -x * x / n as f64;
                sum += term / (2 * n + 1) as f64;
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        };
        let worst = (0..=60_000)
            .map(|i| -3.0 + i as f32 / 10_000.0)
            .map(|x| ((erf(x) as f64 - series(x as f64)).abs(), x))
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        assert!(worst.0 < 4e-7, "erf({}) off by {}", worst.1, worst.0);
        assert_eq!(erf(10.0), 1.0);
        assert_eq!(erf(-10.0), -1.0);
        assert!((gelu_erf(1.0) - 0.841_344_8).abs() < 1e-6);
        assert!(exp(-87.0) > 0.0);
    }

    #[test]
    fn softmax_weights_sum_to_one_in_the_scores_order() {
        let mut scores = vec![1.0, 3.0, 2.0, f32::NEG_INFINITY];
        softmax(&mut scores);
        let sum = 1.0 + 2f32.exp() + 1f32.exp();
        let expected = [1.0 / sum, 2f32.exp() / sum, 1f32.exp() / sum, 0.0];
        for (ours, theirs) in scores.iter().zip(expected) {
            assert!((ours - theirs).abs() < 1e-6, "{scores:?}");
        }
    }
}
