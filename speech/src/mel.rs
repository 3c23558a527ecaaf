//! Whisper's input: an 80-band log-mel spectrogram of 30 s of 16 kHz audio.

use candle_transformers::models::whisper::{self, Config};

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
/// `n_mels × 3000` frames. candle's `pcm_to_mel` pads a further 15 s that Whisper never looks
/// at; those frames are cut off here.
pub fn window(config: &Config, bank: &[f32], samples: &[f32]) -> Vec<f32> {
    let mel = whisper::audio::pcm_to_mel(config, samples, bank);
    let frames = mel.len() / config.num_mel_bins;
    (0..config.num_mel_bins)
        .flat_map(|m| mel[m * frames..m * frames + whisper::N_FRAMES].iter().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
