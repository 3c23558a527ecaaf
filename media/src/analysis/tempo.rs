//! Tempo: an onset-strength envelope, and the beat period that best repeats in it.

use super::RATE;

/// Onset frames: 46 ms windows every 128 samples, 86.1 frames a second.
pub(super) const ONSET_WINDOW: usize = 512;
pub(super) const ONSET_HOP: usize = 128;
/// Compression before the spectral flux (`ln(1 + γ·|X|)`), so quiet attacks count too.
pub(super) const ONSET_GAMMA: f32 = 100.0;

/// The tempo range searched, and the tempo a listener hears most readily (the prior that picks
/// between a tempo and its half or double, which the autocorrelation alone cannot tell apart).
pub(super) const MIN_BPM: f64 = 60.0;
pub(super) const MAX_BPM: f64 = 200.0;
pub(super) const PREFERRED_BPM: f64 = 120.0;
/// Width of that prior, in octaves (one standard deviation of log2 of the tempo).
pub(super) const PRIOR_OCTAVES: f64 = 1.0;
/// Lowest normalized autocorrelation at the beat taken as a steady beat (click tracks reach 0.96 or
/// more, 20 s of white noise 0.05, noise swelling and fading every 9 s 0.09).
pub(super) const MIN_BEAT_STRENGTH: f64 = 0.15;

/// The onset-strength envelope: half-wave rectified spectral flux of log-compressed magnitudes,
/// high where energy appears (attacks), zero where it fades.
pub(super) struct Onsets {
    pub(super) previous: Vec<f32>,
    pub(super) envelope: Vec<f32>,
}

impl Onsets {
    pub(super) fn frame(&mut self, magnitudes: &[f32]) {
        let mut flux = 0.0;
        for (previous, &magnitude) in self.previous.iter_mut().zip(magnitudes) {
            let level = (ONSET_GAMMA * magnitude).ln_1p();
            flux += (level - *previous).max(0.0);
            *previous = level;
        }
        self.envelope.push(flux);
    }
}

/// The tempo whose beat period best repeats in the onset envelope, if it repeats clearly enough.
pub(super) fn tempo(envelope: &[f32]) -> Option<f64> {
    let fps = RATE / ONSET_HOP as f64;
    // One lag beyond each end of the range, for the interpolation around a peak at its edge.
    let min_lag = (60.0 * fps / MAX_BPM).floor() as usize;
    let max_lag = (60.0 * fps / MIN_BPM).ceil() as usize;
    // At least four periods of the slowest tempo (4 s).
    if envelope.len() < 4 * max_lag {
        return None;
    }
    // Smooth with a triangle five frames (58 ms) wide: a beat falls between frames, and a pulse
    // wider than that correlates nearly as well with itself shifted by a fraction of a frame, so
    // the lags either side of a fractional period do not lose to a multiple of it that is whole.
    let smoothed: Vec<f64> = (0..envelope.len())
        .map(|i| {
            let (from, to) = (i.saturating_sub(2), (i + 3).min(envelope.len()));
            (from..to)
                .map(|j| f64::from(envelope[j]) * (3 - i.abs_diff(j)) as f64)
                .sum::<f64>()
                / 9.0
        })
        .collect();
    // Subtract the mean over the surrounding second: what repeats is the beat, not loudness.
    let half = (fps / 2.0) as usize;
    let mut prefix = vec![0.0; smoothed.len() + 1];
    for (i, e) in smoothed.iter().enumerate() {
        prefix[i + 1] = prefix[i] + e;
    }
    let detrended: Vec<f64> = (0..smoothed.len())
        .map(|i| {
            let (from, to) = (i.saturating_sub(half), (i + half + 1).min(smoothed.len()));
            smoothed[i] - (prefix[to] - prefix[from]) / (to - from) as f64
        })
        .collect();
    let n = detrended.len();
    let power = detrended.iter().map(|e| e * e).sum::<f64>() / n as f64;
    if power <= 1e-12 {
        return None;
    }
    // Normalized autocorrelation: 1 for a lag at which the envelope repeats exactly.
    let correlation: Vec<f64> = (min_lag..=max_lag)
        .map(|lag| {
            let sum: f64 = detrended.iter().zip(&detrended[lag..]).map(|(a, b)| a * b).sum();
            sum / (n - lag) as f64 / power
        })
        .collect();
    let bpm_of = |lag: f64| 60.0 * fps / lag;
    let prior = |lag: usize| {
        let octaves = (bpm_of(lag as f64) / PREFERRED_BPM).log2() / PRIOR_OCTAVES;
        (-0.5 * octaves * octaves).exp()
    };
    let best = (1..correlation.len() - 1).max_by(|&i, &j| {
        let score = |i: usize| correlation[i] * prior(min_lag + i);
        score(i).total_cmp(&score(j))
    })?;
    // On noise the highest peak shrinks as 1/sqrt(n) (up to 2.4/sqrt(n) measured, 4.6 when the
    // noise swells and fades): a short envelope must correlate more to show a beat.
    if correlation[best] < MIN_BEAT_STRENGTH.max(6.0 / (n as f64).sqrt()) {
        return None;
    }
    // The peak between lags, from the parabola through it and its neighbours.
    let (left, middle, right) = (correlation[best - 1], correlation[best], correlation[best + 1]);
    let curvature = left - 2.0 * middle + right;
    let shift = if curvature < 0.0 {
        0.5 * (left - right) / curvature
    } else {
        0.0
    };
    Some(bpm_of((min_lag + best) as f64 + shift))
}
