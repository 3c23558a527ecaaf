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

mod pitch;
mod signal;
mod tempo;

use realfft::RealFftPlanner;

use self::pitch::{CHROMA_HOP, CHROMA_WINDOW, Chroma, key};
use self::signal::{Resampler, Stft};
use self::tempo::{ONSET_HOP, ONSET_WINDOW, Onsets, tempo};

/// The rate every analysis runs at, whatever the input's.
const RATE: f64 = 11025.0;

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

#[cfg(test)]
mod tests {
    use super::pitch::PRINT_FRAMES;
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
