//! Resampling to the analysis rate and the short-time Fourier transform.

use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{RealFftPlanner, RealToComplex};

use super::RATE;

/// Low-pass filter and linear interpolation from the input rate to [`RATE`].
///
/// The filter (a Hann-windowed sinc at 4.5 kHz) keeps what lies above the new Nyquist frequency from
/// folding back; past it, the signal is smooth enough at the input rate for linear interpolation.
pub(super) struct Resampler {
    /// FIR taps at the input rate; a single 1 when the input is no faster than [`RATE`].
    taps: Vec<f32>,
    /// Input samples from absolute index `start` on (the indices before 0 are zeros).
    history: Vec<f32>,
    start: i64,
    /// Input samples per output sample, and how many output samples were made.
    step: f64,
    produced: u64,
}

impl Resampler {
    pub(super) fn new(input_rate: f64) -> Resampler {
        let ratio = input_rate / RATE;
        let taps = if ratio <= 1.0 {
            vec![1.0]
        } else {
            // A Hann window's transition band is about 3 / len of the input rate wide: with 8 taps
            // per unit of ratio it ends near 8 kHz, so nothing aliases into the 55–2000 Hz of the
            // key and the print.
            let len = 8 * ratio.ceil() as usize + 1;
            let cutoff = 4500.0 / input_rate;
            let middle = (len / 2) as f64;
            let raw: Vec<f64> = (0..len)
                .map(|i| {
                    let x = i as f64 - middle;
                    let sinc = if x == 0.0 {
                        2.0 * cutoff
                    } else {
                        (2.0 * std::f64::consts::PI * cutoff * x).sin() / (std::f64::consts::PI * x)
                    };
                    let hann = 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / (len - 1) as f64).cos();
                    sinc * hann
                })
                .collect();
            let sum: f64 = raw.iter().sum();
            raw.iter().map(|t| (t / sum) as f32).collect()
        };
        let warmup = taps.len() - 1;
        Resampler {
            taps,
            history: vec![0.0; warmup],
            start: -(warmup as i64),
            step: ratio,
            produced: 0,
        }
    }

    pub(super) fn push(&mut self, samples: &[f32], out: &mut Vec<f32>) {
        // Guard the sums below against a stray NaN or an out-of-range sample.
        self.history.extend(
            samples
                .iter()
                .map(|&s| if s.is_finite() { s.clamp(-1.0, 1.0) } else { 0.0 }),
        );
        let end = self.start + self.history.len() as i64;
        loop {
            let position = self.produced as f64 * self.step;
            let index = position.floor() as i64;
            if index + 1 >= end {
                break;
            }
            let fraction = (position - index as f64) as f32;
            let here = self.filtered(index);
            let next = if fraction > 0.0 {
                self.filtered(index + 1)
            } else {
                here
            };
            out.push(here + (next - here) * fraction);
            self.produced += 1;
        }
        // Keep what the next output sample's filter reaches back to.
        let next_index = (self.produced as f64 * self.step).floor() as i64;
        let keep_from = next_index - (self.taps.len() as i64 - 1);
        if keep_from > self.start {
            self.history.drain(..(keep_from - self.start) as usize);
            self.start = keep_from;
        }
    }

    /// The filter's output at absolute input index `index` (its newest tap on that sample).
    pub(super) fn filtered(&self, index: i64) -> f32 {
        let newest = (index - self.start) as usize;
        self.taps
            .iter()
            .enumerate()
            .map(|(k, tap)| tap * self.history[newest - k])
            .sum()
    }
}

/// Short-time Fourier transform: Hann-windowed frames of `window` samples every `hop`, handed on as
/// magnitudes scaled so that a full-scale sine peaks near 1.
pub(super) struct Stft {
    fft: Arc<dyn RealToComplex<f32>>,
    window: Vec<f32>,
    hop: usize,
    /// Samples not yet consumed by a frame.
    pending: Vec<f32>,
    input: Vec<f32>,
    spectrum: Vec<Complex<f32>>,
    scratch: Vec<Complex<f32>>,
    magnitudes: Vec<f32>,
}

impl Stft {
    pub(super) fn new(planner: &mut RealFftPlanner<f32>, window: usize, hop: usize) -> Stft {
        let fft = planner.plan_fft_forward(window);
        let hann: Vec<f32> = (0..window)
            .map(|i| 0.5 - 0.5 * (2.0 * std::f32::consts::PI * i as f32 / window as f32).cos())
            .collect();
        // A sine of amplitude 1 makes a peak of sum(window) / 2.
        let scale = 2.0 / hann.iter().sum::<f32>();
        Stft {
            input: fft.make_input_vec(),
            spectrum: fft.make_output_vec(),
            scratch: fft.make_scratch_vec(),
            magnitudes: vec![0.0; window / 2 + 1],
            window: hann.iter().map(|w| w * scale).collect(),
            fft,
            hop,
            pending: Vec::with_capacity(window),
        }
    }

    pub(super) fn push(&mut self, samples: &[f32], mut on_frame: impl FnMut(&[f32])) {
        self.pending.extend_from_slice(samples);
        let mut offset = 0;
        while self.pending.len() - offset >= self.window.len() {
            let frame = &self.pending[offset..offset + self.window.len()];
            for ((input, sample), weight) in self.input.iter_mut().zip(frame).zip(&self.window) {
                *input = sample * weight;
            }
            self.fft
                .process_with_scratch(&mut self.input, &mut self.spectrum, &mut self.scratch)
                .expect("buffers made by the plan");
            for (magnitude, bin) in self.magnitudes.iter_mut().zip(&self.spectrum) {
                *magnitude = bin.norm();
            }
            on_frame(&self.magnitudes);
            offset += self.hop;
        }
        // Dropped once per push, not per frame: a long chunk is not shifted over and over.
        self.pending.drain(..offset);
    }
}
