//! Streaming audio analysis: tempo, musical key and a Chromaprint-style sound print.
//!
//! Pure computation on samples the caller decodes: [`Analyzer::push`] takes mono `f32` samples in
//! -1..1 in chunks of any size and [`Analyzer::finish`] returns the [`Analysis`]. Nothing here keeps
//! the samples: the state is a few FFT frames, the onset envelope (86 values a second, about 2.4 MB
//! for two hours, and six times that for a moment in `finish`), twelve chroma totals and the print
//! of the first two minutes.
//!
//! Everything runs at 11025 Hz (Chromaprint's rate), resampled from the input's: it holds the
//! 55–2000 Hz the key and the print look at and enough of the attacks for the tempo, at a quarter of
//! the work of 44.1 kHz.

use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{RealFftPlanner, RealToComplex};

/// The rate every analysis runs at, whatever the input's.
const RATE: f64 = 11025.0;

/// Onset frames: 46 ms windows every 128 samples, 86.1 frames a second.
const ONSET_WINDOW: usize = 512;
const ONSET_HOP: usize = 128;
/// Compression before the spectral flux (`ln(1 + γ·|X|)`), so quiet attacks count too.
const ONSET_GAMMA: f32 = 100.0;

/// The tempo range searched, and the tempo a listener hears most readily (the prior that picks
/// between a tempo and its half or double, which the autocorrelation alone cannot tell apart).
const MIN_BPM: f64 = 60.0;
const MAX_BPM: f64 = 200.0;
const PREFERRED_BPM: f64 = 120.0;
/// Width of that prior, in octaves (one standard deviation of log2 of the tempo).
const PRIOR_OCTAVES: f64 = 1.0;
/// Lowest normalized autocorrelation at the beat taken as a steady beat (click tracks reach 0.96 or
/// more, 20 s of white noise 0.05, noise swelling and fading every 9 s 0.09).
const MIN_BEAT_STRENGTH: f64 = 0.15;

/// Chroma frames: 372 ms windows every 1365 samples (8 frames a second), as Chromaprint.
const CHROMA_WINDOW: usize = 4096;
const CHROMA_HOP: usize = 1365;
/// The notes folded into pitch classes: A1 (55 Hz) to B6 (1976 Hz), as MIDI numbers.
const LOWEST_NOTE: u32 = 33;
const HIGHEST_NOTE: u32 = 95;
/// Below this mean chroma magnitude per frame (about -80 dB of a full-scale tone) a track is silent.
const MIN_TONAL_LEVEL: f64 = 1e-4;
/// Noise spreads over all pitch classes (its chroma total varies by about 0.3 of the mean, the
/// wider semitones holding a higher maximum); tonal music stands out by several times the mean.
const MIN_CHROMA_CONTRAST: f64 = 0.5;
/// The print covers the frames that lie wholly within the first 120 s.
const PRINT_FRAMES: usize = (120 * 11025 - CHROMA_WINDOW) / CHROMA_HOP + 1;

/// Krumhansl–Schmuckler key profiles (probe-tone ratings), from the tonic up by semitones.
const MAJOR_PROFILE: [f64; 12] = [
    6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88,
];
const MINOR_PROFILE: [f64; 12] = [
    6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17,
];

/// What [`Analyzer::finish`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// Beats per minute, None when no steady beat was found (silence, noise, too short).
    pub tempo_bpm: Option<f64>,
    /// Pitch class 0 = C .. 11 = B and whether the key is major; None for silence / no tonal content.
    pub key: Option<(u8, bool)>,
    /// Chromaprint-style fingerprint: one u32 per frame over (at most) the first 120 s.
    pub soundprint: Vec<u32>,
}

/// Analyses one track fed in chunks; see the module documentation.
pub struct Analyzer {
    resampler: Resampler,
    /// The resampler's output for the chunk being pushed, kept to reuse its allocation.
    resampled: Vec<f32>,
    onset_stft: Stft,
    onsets: Onsets,
    chroma_stft: Stft,
    chroma: Chroma,
}

impl Analyzer {
    /// An analyzer for samples at `sample_rate` Hz.
    ///
    /// # Panics
    /// If `sample_rate` is 0.
    pub fn new(sample_rate: u32) -> Analyzer {
        assert!(sample_rate > 0, "sample rate must be positive");
        let mut planner = RealFftPlanner::new();
        Analyzer {
            resampler: Resampler::new(f64::from(sample_rate)),
            resampled: Vec::new(),
            onset_stft: Stft::new(&mut planner, ONSET_WINDOW, ONSET_HOP),
            onsets: Onsets {
                previous: vec![0.0; ONSET_WINDOW / 2 + 1],
                envelope: Vec::new(),
            },
            chroma_stft: Stft::new(&mut planner, CHROMA_WINDOW, CHROMA_HOP),
            chroma: Chroma::new(),
        }
    }

    /// Mono samples in -1..1, any chunk size.
    pub fn push(&mut self, samples: &[f32]) {
        let Analyzer {
            resampler,
            resampled,
            onset_stft,
            onsets,
            chroma_stft,
            chroma,
        } = self;
        resampled.clear();
        resampler.push(samples, resampled);
        onset_stft.push(resampled, |magnitudes| onsets.frame(magnitudes));
        chroma_stft.push(resampled, |magnitudes| chroma.frame(magnitudes));
    }

    /// The analysis of everything pushed.
    pub fn finish(self) -> Analysis {
        Analysis {
            tempo_bpm: tempo(&self.onsets.envelope),
            key: key(&self.chroma.total, self.chroma.frames),
            soundprint: self.chroma.print,
        }
    }
}

/// Fraction of differing bits between two prints at their best alignment (0 = same sound, ~0.5 = unrelated).
///
/// Alignments overlap by at least half the shorter print, so a short excerpt is found anywhere in
/// a longer one. An empty print matches nothing: the distance is then 1.
pub fn soundprint_distance(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 1.0;
    }
    let min_overlap = (a.len().min(b.len()) / 2).max(1);
    // Offsets of b's start relative to a's, from b starting late in a to b starting before it.
    let alignments = (0..=a.len() - min_overlap)
        .map(|skip| (&a[skip..], b))
        .chain((1..=b.len() - min_overlap).map(|skip| (a, &b[skip..])));
    alignments
        .map(|(a, b)| {
            let overlap = a.len().min(b.len());
            let differing: u32 = a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum();
            f64::from(differing) / (32 * overlap) as f64
        })
        .fold(1.0, f64::min)
}

/// Low-pass filter and linear interpolation from the input rate to [`RATE`].
///
/// The filter (a Hann-windowed sinc at 4.5 kHz) keeps what lies above the new Nyquist frequency from
/// folding back; past it, the signal is smooth enough at the input rate for linear interpolation.
struct Resampler {
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
    fn new(input_rate: f64) -> Resampler {
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

    fn push(&mut self, samples: &[f32], out: &mut Vec<f32>) {
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
    fn filtered(&self, index: i64) -> f32 {
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
struct Stft {
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
    fn new(planner: &mut RealFftPlanner<f32>, window: usize, hop: usize) -> Stft {
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

    fn push(&mut self, samples: &[f32], mut on_frame: impl FnMut(&[f32])) {
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

/// The onset-strength envelope: half-wave rectified spectral flux of log-compressed magnitudes,
/// high where energy appears (attacks), zero where it fades.
struct Onsets {
    previous: Vec<f32>,
    envelope: Vec<f32>,
}

impl Onsets {
    fn frame(&mut self, magnitudes: &[f32]) {
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
fn tempo(envelope: &[f32]) -> Option<f64> {
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

/// Chroma per frame: the strongest magnitude within each semitone from A1 to B6, summed by pitch
/// class. The maximum, not the sum, so that a high note (whose semitone spans more FFT bins) weighs
/// no more than a low one, and noise gives a nearly flat chroma.
struct Chroma {
    /// FFT bin range and pitch class (0 = C) of each semitone.
    semitones: Vec<(std::ops::Range<usize>, usize)>,
    /// Chroma summed over every frame, for the key.
    total: [f64; 12],
    frames: usize,
    /// The previous frame's normalized chroma, and the print so far.
    previous: [f32; 12],
    print: Vec<u32>,
}

impl Chroma {
    fn new() -> Chroma {
        let bin_hz = RATE / CHROMA_WINDOW as f64;
        let semitones = (LOWEST_NOTE..=HIGHEST_NOTE)
            .map(|note| {
                let hz = 440.0 * 2f64.powf((f64::from(note) - 69.0) / 12.0);
                let quarter_tone = 2f64.powf(1.0 / 24.0);
                let low = (hz / quarter_tone / bin_hz).ceil() as usize;
                let high = (hz * quarter_tone / bin_hz).ceil() as usize;
                // At least one bin (the lowest semitones are narrower than a bin).
                (low..high.max(low + 1), note as usize % 12)
            })
            .collect();
        Chroma {
            semitones,
            total: [0.0; 12],
            frames: 0,
            previous: [0.0; 12],
            print: Vec::new(),
        }
    }

    fn frame(&mut self, magnitudes: &[f32]) {
        let mut chroma = [0.0f32; 12];
        for (bins, class) in &self.semitones {
            chroma[*class] += magnitudes[bins.clone()].iter().fold(0.0f32, |a, &b| a.max(b));
        }
        for (total, &c) in self.total.iter_mut().zip(&chroma) {
            *total += f64::from(c);
        }
        self.frames += 1;
        if self.print.len() < PRINT_FRAMES {
            let norm = chroma.iter().map(|c| c * c).sum::<f32>().sqrt();
            // A silent frame is all zeros rather than amplified noise.
            let normalized = if norm > 1e-4 {
                chroma.map(|c| c / norm)
            } else {
                [0.0; 12]
            };
            self.print.push(print_code(&normalized, &self.previous));
            self.previous = normalized;
        }
    }
}

/// One frame's 32 bits, from its normalized chroma and the previous frame's.
fn print_code(chroma: &[f32; 12], previous: &[f32; 12]) -> u32 {
    let mut code = 0;
    for band in 0..12 {
        let next = (band + 1) % 12;
        // Which of two neighbouring pitch classes is louder: the shape of the harmony.
        code |= u32::from(chroma[band] > chroma[next]) << band;
        // Whether that difference grew since the previous frame: how the harmony moves.
        let was = previous[band] - previous[next];
        code |= u32::from(chroma[band] - chroma[next] > was) << (12 + band);
    }
    // The same two questions for four groups of three pitch classes: coarser, so steadier.
    let group = |c: &[f32; 12], g: usize| c[3 * g] + c[3 * g + 1] + c[3 * g + 2];
    for g in 0..4 {
        let next = (g + 1) % 4;
        code |= u32::from(group(chroma, g) > group(chroma, next)) << (24 + g);
        let was = group(previous, g) - group(previous, next);
        code |= u32::from(group(chroma, g) - group(chroma, next) > was) << (28 + g);
    }
    code
}

/// The Krumhansl–Schmuckler key of a chroma total: the rotated major or minor profile that
/// correlates best with it. None for silence and for a chroma too flat to name a key (noise).
fn key(total: &[f64; 12], frames: usize) -> Option<(u8, bool)> {
    let mean = total.iter().sum::<f64>() / 12.0;
    if frames == 0 || 12.0 * mean / (frames as f64) < MIN_TONAL_LEVEL {
        return None;
    }
    let (lowest, highest) = total
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), &c| (lo.min(c), hi.max(c)));
    if (highest - lowest) / mean < MIN_CHROMA_CONTRAST {
        return None;
    }
    let mut best = None;
    let mut best_correlation = f64::NEG_INFINITY;
    for tonic in 0..12 {
        for (profile, major) in [(&MAJOR_PROFILE, true), (&MINOR_PROFILE, false)] {
            let rotated: [f64; 12] = std::array::from_fn(|class| profile[(class + 12 - tonic) % 12]);
            let r = pearson(total, &rotated);
            if r > best_correlation {
                best_correlation = r;
                best = Some((tonic as u8, major));
            }
        }
    }
    best
}

fn pearson(a: &[f64; 12], b: &[f64; 12]) -> f64 {
    let mean_a = a.iter().sum::<f64>() / 12.0;
    let mean_b = b.iter().sum::<f64>() / 12.0;
    let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        ab += (x - mean_a) * (y - mean_b);
        aa += (x - mean_a) * (x - mean_a);
        bb += (y - mean_b) * (y - mean_b);
    }
    ab / (aa * bb).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SR: u32 = 44100;

    /// A small deterministic noise source (xorshift), values in -1..1.
    struct Noise(u64);

    impl Noise {
        fn word(&mut self) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 32) as u32
        }

        fn next(&mut self) -> f32 {
            (self.word() >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        }

        fn signal(&mut self, amplitude: f32, len: usize) -> Vec<f32> {
            (0..len).map(|_| amplitude * self.next()).collect()
        }
    }

    fn analyse_at(rate: u32, samples: &[f32], chunk: usize) -> Analysis {
        let mut analyzer = Analyzer::new(rate);
        for part in samples.chunks(chunk) {
            analyzer.push(part);
        }
        analyzer.finish()
    }

    fn analyse(samples: &[f32], chunk: usize) -> Analysis {
        analyse_at(SR, samples, chunk)
    }

    /// `seconds` of clicks at `bpm`: 20 ms bursts decaying in 5 ms, of noise or of a 1 kHz tone.
    fn click_track(rate: u32, bpm: f64, seconds: f64, tone: bool) -> Vec<f32> {
        let mut samples = vec![0.0f32; (seconds * f64::from(rate)) as usize];
        let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
        let period = 60.0 / bpm * f64::from(rate);
        let burst = rate as usize / 50;
        let mut beat = 0.0;
        while (beat as usize) + burst < samples.len() {
            for i in 0..burst {
                let t = i as f32 / rate as f32;
                let carrier = if tone {
                    (2.0 * std::f32::consts::PI * 1000.0 * t).sin()
                } else {
                    noise.next()
                };
                samples[beat as usize + i] += 0.8 * carrier * (-t / 0.005).exp();
            }
            beat += period;
        }
        samples
    }

    fn assert_tempo(rate: u32, bpm: f64, tone: bool) {
        let found = analyse_at(rate, &click_track(rate, bpm, 30.0, tone), 4096).tempo_bpm;
        let found = found.unwrap_or_else(|| panic!("no tempo for {bpm} BPM at {rate} Hz"));
        assert!(
            (found - bpm).abs() < 2.0,
            "{found} BPM found for {bpm} BPM at {rate} Hz (tone: {tone})"
        );
    }

    /// Chords of five seconds each, every note four harmonics (a soft sawtooth), as MIDI notes.
    fn chords(progression: &[[f64; 3]]) -> Vec<f32> {
        let seconds = 5.0;
        let per_chord = (seconds * f64::from(SR)) as usize;
        let mut samples = Vec::with_capacity(per_chord * progression.len());
        for notes in progression {
            for i in 0..per_chord {
                let t = i as f64 / f64::from(SR);
                // A 20 ms fade in and out, so that chord changes do not click.
                let envelope = (t / 0.02).min((seconds - t) / 0.02).min(1.0);
                let mut value = 0.0;
                for &note in notes {
                    let hz = 440.0 * 2f64.powf((note - 69.0) / 12.0);
                    for harmonic in 1..=4 {
                        let h = f64::from(harmonic);
                        value += (2.0 * std::f64::consts::PI * hz * h * t).sin() / h;
                    }
                }
                samples.push((0.15 * envelope * value) as f32);
            }
        }
        samples
    }

    /// C major: C–F–G–C around middle C.
    fn c_major() -> Vec<f32> {
        chords(&[
            [60.0, 64.0, 67.0],
            [60.0, 65.0, 69.0],
            [59.0, 62.0, 67.0],
            [60.0, 64.0, 67.0],
        ])
    }

    /// A minor: Am–Dm–E–Am.
    fn a_minor() -> Vec<f32> {
        chords(&[
            [57.0, 60.0, 64.0],
            [57.0, 62.0, 65.0],
            [56.0, 59.0, 64.0],
            [57.0, 60.0, 64.0],
        ])
    }

    /// F♯ major (F♯–B–C♯–F♯), a tritone away from C major: hardly a note in common.
    fn f_sharp_major() -> Vec<f32> {
        chords(&[
            [66.0, 70.0, 73.0],
            [66.0, 71.0, 75.0],
            [65.0, 68.0, 73.0],
            [66.0, 70.0, 73.0],
        ])
    }

    #[test]
    fn tempo_of_click_tracks_at_120_bpm() {
        assert_tempo(SR, 120.0, false);
        assert_tempo(SR, 120.0, true);
    }

    #[test]
    fn tempo_of_click_tracks_at_97_bpm() {
        assert_tempo(SR, 97.0, false);
        assert_tempo(SR, 97.0, true);
    }

    #[test]
    fn tempo_of_click_tracks_at_150_bpm() {
        // Half of 150 BPM is in range too, and repeats as well: the prior must pick 150.
        assert_tempo(SR, 150.0, false);
        assert_tempo(SR, 150.0, true);
    }

    #[test]
    fn tempo_at_other_sample_rates() {
        // 48 kHz resamples by a ratio that is not whole; 8 kHz interpolates upwards.
        assert_tempo(48000, 128.0, false);
        assert_tempo(8000, 90.0, true);
    }

    #[test]
    fn too_short_for_a_tempo() {
        assert_eq!(analyse(&click_track(SR, 120.0, 3.0, false), 4096).tempo_bpm, None);
    }

    #[test]
    fn silence_has_no_tempo_and_no_key() {
        let analysis = analyse(&vec![0.0; 20 * SR as usize], 4096);
        assert_eq!(analysis.tempo_bpm, None);
        assert_eq!(analysis.key, None);
        // Still a print, of silent frames (about 8 a second).
        assert_eq!(
            analysis.soundprint.len(),
            (20 * 11025 - CHROMA_WINDOW) / CHROMA_HOP + 1
        );
        assert!(analysis.soundprint.iter().all(|&code| code == 0));
    }

    #[test]
    fn noise_has_no_tempo_and_no_key() {
        let analysis = analyse(&Noise(3).signal(0.3, 20 * SR as usize), 4096);
        assert_eq!(analysis.tempo_bpm, None);
        assert_eq!(analysis.key, None);
    }

    #[test]
    fn key_of_c_major_chords() {
        let samples = c_major();
        let whole = analyse(&samples, samples.len());
        assert_eq!(whole.key, Some((0, true)));
        assert_eq!(analyse(&samples, 1000), whole);
    }

    #[test]
    fn key_of_a_minor_chords() {
        let samples = a_minor();
        let whole = analyse(&samples, samples.len());
        assert_eq!(whole.key, Some((9, false)));
        assert_eq!(analyse(&samples, 777), whole);
    }

    #[test]
    fn soundprint_of_the_same_audio_is_identical() {
        let samples = c_major();
        let print = analyse(&samples, samples.len()).soundprint;
        assert_eq!(print.len(), (20 * 11025 - CHROMA_WINDOW) / CHROMA_HOP + 1);
        assert_eq!(analyse(&samples, 1000).soundprint, print);
        assert_eq!(soundprint_distance(&print, &print), 0.0);
    }

    #[test]
    fn soundprint_survives_light_noise() {
        let clean = c_major();
        let noisy: Vec<f32> = clean
            .iter()
            .zip(Noise(7).signal(0.02, clean.len()))
            .map(|(s, n)| s + n)
            .collect();
        let distance = soundprint_distance(
            &analyse(&clean, 4096).soundprint,
            &analyse(&noisy, 4096).soundprint,
        );
        assert!(distance < 0.2, "distance {distance}");
    }

    #[test]
    fn soundprints_of_different_audio_are_far_apart() {
        let c = analyse(&c_major(), 4096).soundprint;
        for (name, other) in [("F# major", f_sharp_major()), ("A minor", a_minor())] {
            let distance = soundprint_distance(&c, &analyse(&other, 4096).soundprint);
            assert!(distance > 0.35, "C major to {name}: distance {distance}");
        }
    }

    #[test]
    fn soundprint_covers_the_first_two_minutes() {
        // At the analysis rate nothing is filtered, which keeps this long input cheap.
        let tone: Vec<f32> = (0..130 * 11025).map(|i| (i as f32 * 0.25).sin() * 0.5).collect();
        let analysis = analyse_at(11025, &tone, 8192);
        assert_eq!(analysis.soundprint.len(), PRINT_FRAMES);
        assert!(analysis.key.is_some());
    }

    #[test]
    fn soundprint_distance_finds_the_best_alignment() {
        let mut noise = Noise(11);
        let print: Vec<u32> = (0..200).map(|_| noise.word()).collect();
        let random: Vec<u32> = (0..200).map(|_| noise.word()).collect();
        // An excerpt from the middle matches exactly wherever it starts.
        assert_eq!(soundprint_distance(&print, &print[50..150]), 0.0);
        assert_eq!(soundprint_distance(&print[50..150], &print), 0.0);
        let unrelated = soundprint_distance(&print, &random);
        // Below 0.5: the best of some 300 alignments, each of 3200 to 6400 bits.
        assert!((0.45..0.5).contains(&unrelated), "distance {unrelated}");
        assert_eq!(soundprint_distance(&print, &[]), 1.0);
    }
}
