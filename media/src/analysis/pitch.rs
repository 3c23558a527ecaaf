//! Pitch: chroma per frame, the key it shows and the sound print taken from it.

use super::RATE;

/// Chroma frames: 372 ms windows every 1365 samples (8 frames a second), as Chromaprint.
pub(super) const CHROMA_WINDOW: usize = 4096;
pub(super) const CHROMA_HOP: usize = 1365;
/// The notes folded into pitch classes: A1 (55 Hz) to B6 (1976 Hz), as MIDI numbers.
pub(super) const LOWEST_NOTE: u32 = 33;
pub(super) const HIGHEST_NOTE: u32 = 95;
/// Below this mean chroma magnitude per frame (about -80 dB of a full-scale tone) a track is silent.
pub(super) const MIN_TONAL_LEVEL: f64 = 1e-4;
/// Noise spreads over all pitch classes (its chroma total varies by about 0.3 of the mean, the
/// wider semitones holding a higher maximum); tonal music stands out by several times the mean.
pub(super) const MIN_CHROMA_CONTRAST: f64 = 0.5;
/// The print covers the frames that lie wholly within the first 120 s.
pub(super) const PRINT_FRAMES: usize = (120 * 11025 - CHROMA_WINDOW) / CHROMA_HOP + 1;

/// Krumhansl–Schmuckler key profiles (probe-tone ratings), from the tonic up by semitones.
pub(super) const MAJOR_PROFILE: [f64; 12] = [
    6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88,
];
pub(super) const MINOR_PROFILE: [f64; 12] = [
    6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17,
];

/// Chroma per frame: the strongest magnitude within each semitone from A1 to B6, summed by pitch
/// class. The maximum, not the sum, so that a high note (whose semitone spans more FFT bins) weighs
/// no more than a low one, and noise gives a nearly flat chroma.
pub(super) struct Chroma {
    /// FFT bin range and pitch class (0 = C) of each semitone.
    semitones: Vec<(std::ops::Range<usize>, usize)>,
    /// Chroma summed over every frame, for the key.
    pub(super) total: [f64; 12],
    pub(super) frames: usize,
    /// The previous frame's normalized chroma, and the print so far.
    previous: [f32; 12],
    pub(super) print: Vec<u32>,
}

impl Chroma {
    pub(super) fn new() -> Chroma {
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

    pub(super) fn frame(&mut self, magnitudes: &[f32]) {
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
pub(super) fn print_code(chroma: &[f32; 12], previous: &[f32; 12]) -> u32 {
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
pub(super) fn key(total: &[f64; 12], frames: usize) -> Option<(u8, bool)> {
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

pub(super) fn pearson(a: &[f64; 12], b: &[f64; 12]) -> f64 {
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
