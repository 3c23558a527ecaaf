//! Whisper's input: an 80-band log-mel spectrogram of 30 s of 16 kHz audio.

use candle_transformers::models::whisper::{self, Config};
use realfft::RealFftPlanner;

const FFT_BINS: usize = whisper::N_FFT / 2 + 1;

/// The mel filter bank Whisper was trained with: librosa's `filters.mel(sr=16000, n_fft=400,
/// n_mels)` (Slaney mel scale, Slaney area normalisation), computed here rather than shipped as
/// a data file. Row-major, `n_mels × 201`.
pub fn filters(n_mels: usize) -> Vec<f32> {
    let sample_rate = whisper::SAMPLE_RATE as f64;
    // Slaney's scale: linear below 1 kHz, logarithmic above.
    let (f_sp, min_log_hz, logstep) = (200.0 / 3.0, 1000.0, (6.4f64).ln() / 27.0);
    let min_log_mel = min_log_hz / f_sp;
    let hz_to_mel = |hz: f64| {
        if hz >= min_log_hz {
            min_log_mel + (hz / min_log_hz).ln() / logstep
        } else {
            hz / f_sp
        }
    };
    let mel_to_hz = |mel: f64| {
        if mel >= min_log_mel {
            min_log_hz * (logstep * (mel - min_log_mel)).exp()
        } else {
            f_sp * mel
        }
    };

    let top = hz_to_mel(sample_rate / 2.0);
    let edges: Vec<f64> = (0..n_mels + 2)
        .map(|i| mel_to_hz(top * i as f64 / (n_mels + 1) as f64))
        .collect();
    let mut bank = vec![0f32; n_mels * FFT_BINS];
    for m in 0..n_mels {
        let (low, mid, high) = (edges[m], edges[m + 1], edges[m + 2]);
        let norm = 2.0 / (high - low);
        for k in 0..FFT_BINS {
            let hz = k as f64 * sample_rate / whisper::N_FFT as f64;
            let rising = (hz - low) / (mid - low);
            let falling = (high - hz) / (high - mid);
            bank[m * FFT_BINS + k] = (rising.min(falling).max(0.0) * norm) as f32;
        }
    }
    bank
}

/// The log-mel spectrogram of one window (at most 30 s; shorter is padded with silence), as
/// `n_mels × 3000` frames, with Whisper's arithmetic as candle's `pcm_to_mel` has it: a frame of
/// 400 samples every 160 under a periodic Hann window (not centred; zeros past the end), its
/// power spectrum, the mel bands' sums, their log10 (at least -10), floored 8 below the loudest
/// and scaled to `x / 4 + 1`. The real FFT is planned once a window: candle's recurses down to
/// a 25-point DFT, allocating at each level, and spent 0.27 s a window on a core (and computed
/// 15 s of padding besides).
pub fn window(config: &Config, bank: &[f32], samples: &[f32]) -> Vec<f32> {
    let n_mels = config.num_mel_bins;
    let fft = RealFftPlanner::<f32>::new().plan_fft_forward(whisper::N_FFT);
    let hann: Vec<f32> = (0..whisper::N_FFT)
        .map(|i| 0.5 * (1.0 - (2.0 * std::f32::consts::PI * i as f32 / whisper::N_FFT as f32).cos()))
        .collect();
    let (mut frame, mut spectrum) = (fft.make_input_vec(), fft.make_output_vec());
    let mut scratch = fft.make_scratch_vec();
    let mut power = vec![0f32; FFT_BINS];
    let mut mel = vec![0f32; n_mels * whisper::N_FRAMES];
    for at in 0..whisper::N_FRAMES {
        let start = at * whisper::HOP_LENGTH;
        for (j, x) in frame.iter_mut().enumerate() {
            *x = samples.get(start + j).map_or(0.0, |s| hann[j] * s);
        }
        fft.process_with_scratch(&mut frame, &mut spectrum, &mut scratch)
            .expect("buffers made by the plan");
        // The bins above the middle mirror those below: each of those counts twice.
        for (k, (p, c)) in power.iter_mut().zip(&spectrum).enumerate() {
            let squared = c.norm_sqr();
            *p = if k == 0 || k == FFT_BINS - 1 {
                squared
            } else {
                squared + squared
            };
        }
        for (m, band) in bank.chunks_exact(FFT_BINS).enumerate() {
            let sum: f32 = band.iter().zip(&power).map(|(w, p)| w * p).sum();
            mel[m * whisper::N_FRAMES + at] = sum.max(1e-10).log10();
        }
    }
    let floor = mel.iter().copied().fold(f32::NEG_INFINITY, f32::max) - 8.0;
    for v in &mut mel {
        *v = v.max(floor) / 4.0 + 1.0;
    }
    mel
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same spectrogram as candle's `pcm_to_mel` (its first 3000 frames), for a full window
    /// and for a short one padded with silence: to 1e-3 on a scale of about 3, what two FFTs'
    /// rounding leaves in the quietest bands once their log is taken.
    #[test]
    fn window_is_candles_spectrogram() {
        let config: Config = serde_json::from_value(serde_json::json!({
            "num_mel_bins": 80, "max_source_positions": 1500, "d_model": 512,
            "encoder_attention_heads": 8, "encoder_layers": 6, "vocab_size": 51865,
            "max_target_positions": 448, "decoder_attention_heads": 8, "decoder_layers": 6,
            "suppress_tokens": []
        }))
        .unwrap();
        let bank = filters(80);
        for seconds in [30, 7] {
            let samples: Vec<f32> = (0..seconds * whisper::SAMPLE_RATE)
                .map(|i| {
                    let t = i as f32 / whisper::SAMPLE_RATE as f32;
                    ((t * 440.0 * (1.0 + t)).sin() * 0.4 + (t * 97.0).sin() * 0.1) * (t * 0.7).sin()
                })
                .collect();
            let ours = window(&config, &bank, &samples);
            let theirs = whisper::audio::pcm_to_mel(&config, &samples, &bank);
            let frames = theirs.len() / 80;
            for m in 0..80 {
                for at in 0..whisper::N_FRAMES {
                    let (a, b) = (ours[m * whisper::N_FRAMES + at], theirs[m * frames + at]);
                    assert!(
                        (a - b).abs() < 1e-3,
                        "{seconds} s, band {m}, frame {at}: {a} against {b}"
                    );
                }
            }
        }
    }

    /// Values from Whisper's own `assets/mel_filters.npz` (`mel_80`, in the openai-whisper
    /// package), which librosa computed.
    #[test]
    fn filters_match_whisper() {
        let bank = filters(80);
        let at = |m: usize, k: usize| bank[m * FFT_BINS + k];
        for (m, k, expected) in [
            (0, 1, 0.024_862_595),
            (1, 2, 0.022_871_772),
            (20, 19, 0.010_972_2),
            (20, 20, 0.013_890_394),
            (40, 43, 0.014_735_566),
            (60, 93, 0.006_591_093),
            (79, 190, 0.002_232_055),
            (79, 199, 0.000_448_759),
        ] {
            assert!(
                (at(m, k) - expected).abs() < 1e-6,
                "band {m} bin {k}: {} not {expected}",
                at(m, k)
            );
        }
        assert_eq!(at(40, 41), 0.0);
        assert!((bank.iter().map(|&w| w as f64).sum::<f64>() - 1.999_024).abs() < 1e-4);
    }
}
