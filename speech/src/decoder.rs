//! Whisper's text decoder, reading each token once: the keys and values of the tokens already
//! read are kept for the window, so a step runs the decoder over its one new token. candle's
//! decoder (`whisper::model::TextDecoder`) keeps only the audio's, so each step ran every layer
//! over the whole sequence again: a window of n tokens cost O(n²) layer runs instead of n. The
//! weights and the arithmetic are candle's (after OpenAI's `whisper/model.py`); the encoder is
//! still candle's.

use candle_core::{IndexOp, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, Module, VarBuilder};
use candle_transformers::models::whisper::Config;

pub struct Decoder {
    embedding: Embedding,
    positions: Tensor,
    layers: Vec<Layer>,
    ln: LayerNorm,
}

struct Layer {
    this: Attention,
    this_ln: LayerNorm,
    audio: Attention,
    audio_ln: LayerNorm,
    fc1: Linear,
    fc2: Linear,
    mlp_ln: LayerNorm,
}

struct Attention {
    query: Linear,
    key: Linear,
    value: Linear,
    out: Linear,
    heads: usize,
    /// Queries and keys are each scaled by the fourth root of a head's width, as candle and
    /// OpenAI do.
    scale: f64,
}

/// One window's decoding so far: each layer's keys and values of the window's audio (computed
/// once) and of the tokens read, split into heads, the keys scaled: as the scores read them, so
/// a step copies and scales only its own token's.
pub struct Window {
    audio: Vec<(Tensor, Tensor)>,
    read: Vec<Option<(Tensor, Tensor)>>,
    len: usize,
}

fn layer_norm(size: usize, vb: VarBuilder) -> Result<LayerNorm> {
    Ok(LayerNorm::new(
        vb.get(size, "weight")?,
        vb.get(size, "bias")?,
        1e-5,
    ))
}

impl Attention {
    fn load(state: usize, heads: usize, vb: VarBuilder) -> Result<Attention> {
        Ok(Attention {
            query: candle_nn::linear(state, state, vb.pp("q_proj"))?,
            key: candle_nn::linear_no_bias(state, state, vb.pp("k_proj"))?,
            value: candle_nn::linear(state, state, vb.pp("v_proj"))?,
            out: candle_nn::linear(state, state, vb.pp("out_proj"))?,
            heads,
            scale: ((state / heads) as f64).powf(-0.25),
        })
    }

    /// The keys (scaled) and values of `x` (1 × n × state), each 1 × heads × n × state/heads.
    fn keys_values(&self, x: &Tensor) -> Result<(Tensor, Tensor)> {
        let k = (self.split(&self.key.forward(x)?)? * self.scale)?;
        let v = self.split(&self.value.forward(x)?)?.contiguous()?;
        Ok((k, v))
    }

    /// `x` (1 × n × state) attending to keys `k` and values `v` of [`Attention::keys_values`]
    /// (1 × heads × t × state/heads), `mask` added to its scores (n × t).
    fn attend(&self, x: &Tensor, k: &Tensor, v: &Tensor, mask: Option<&Tensor>) -> Result<Tensor> {
        let q = (self.split(&self.query.forward(x)?)? * self.scale)?;
        let mut scores = q.matmul(&k.t()?)?;
        if let Some(mask) = mask {
            scores = scores.broadcast_add(mask)?;
        }
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let mixed = weights.matmul(v)?.transpose(1, 2)?.flatten_from(2)?;
        self.out.forward(&mixed)
    }

    /// 1 × n × state as 1 × heads × n × state/heads.
    fn split(&self, x: &Tensor) -> Result<Tensor> {
        let (batch, n, state) = x.dims3()?;
        x.reshape((batch, n, self.heads, state / self.heads))?
            .transpose(1, 2)
    }
}

impl Decoder {
    /// The decoder's weights under `vb` (`model.decoder` of a Whisper checkpoint).
    pub fn load(vb: VarBuilder, config: &Config) -> Result<Decoder> {
        let (state, heads) = (config.d_model, config.decoder_attention_heads);
        let layers = (0..config.decoder_layers)
            .map(|i| {
                let vb = vb.pp(format!("layers.{i}"));
                Ok(Layer {
                    this: Attention::load(state, heads, vb.pp("self_attn"))?,
                    this_ln: layer_norm(state, vb.pp("self_attn_layer_norm"))?,
                    audio: Attention::load(state, heads, vb.pp("encoder_attn"))?,
                    audio_ln: layer_norm(state, vb.pp("encoder_attn_layer_norm"))?,
                    fc1: candle_nn::linear(state, state * 4, vb.pp("fc1"))?,
                    fc2: candle_nn::linear(state * 4, state, vb.pp("fc2"))?,
                    mlp_ln: layer_norm(state, vb.pp("final_layer_norm"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Decoder {
            embedding: candle_nn::embedding(config.vocab_size, state, vb.pp("embed_tokens"))?,
            positions: vb.get((config.max_target_positions, state), "embed_positions.weight")?,
            layers,
            ln: layer_norm(state, vb.pp("layer_norm"))?,
        })
    }

    /// A window to decode: the encoder's `features` of its audio (1 × frames × state).
    pub fn window(&self, features: &Tensor) -> Result<Window> {
        let audio = self
            .layers
            .iter()
            .map(|l| l.audio.keys_values(features))
            .collect::<Result<Vec<_>>>()?;
        Ok(Window {
            read: vec![None; audio.len()],
            audio,
            len: 0,
        })
    }

    /// Reads `tokens` after those `window` has read, and answers the logits of the token after
    /// them.
    pub fn next(&self, window: &mut Window, tokens: &[u32]) -> Result<Vec<f32>> {
        let (start, n) = (window.len, tokens.len());
        let device = self.positions.device();
        let ids = Tensor::new(tokens, device)?.unsqueeze(0)?;
        let mut x = self
            .embedding
            .forward(&ids)?
            .broadcast_add(&self.positions.narrow(0, start, n)?)?;
        // Each new token sees the tokens before it and itself, not those after it.
        let mask = (n > 1)
            .then(|| {
                let scores: Vec<f32> = (0..n)
                    .flat_map(|i| {
                        (0..start + n).map(move |j| if j > start + i { f32::NEG_INFINITY } else { 0.0 })
                    })
                    .collect();
                Tensor::from_vec(scores, (n, start + n), device)
            })
            .transpose()?;
        for ((layer, read), (audio_k, audio_v)) in self.layers.iter().zip(&mut window.read).zip(&window.audio)
        {
            let h = layer.this_ln.forward(&x)?;
            let (k, v) = layer.this.keys_values(&h)?;
            let (k, v) = match read.take() {
                Some((old_k, old_v)) => (Tensor::cat(&[&old_k, &k], 2)?, Tensor::cat(&[&old_v, &v], 2)?),
                None => (k, v),
            };
            x = (&x + layer.this.attend(&h, &k, &v, mask.as_ref())?)?;
            *read = Some((k, v));
            let h = layer.audio_ln.forward(&x)?;
            x = (&x + layer.audio.attend(&h, audio_k, audio_v, None)?)?;
            let h = layer.mlp_ln.forward(&x)?;
            x = (&x + layer.fc2.forward(&layer.fc1.forward(&h)?.gelu()?)?)?;
        }
        window.len += n;
        let last = self.ln.forward(&x.i((0, n - 1..))?)?;
        // The vocabulary's embeddings (vocab × state) times the state as a column: read in
        // their stored order. The other way round (state × vocab, transposed) copies all of them
        // at each step, 100 MB for base: most of a step's time.
        self.embedding
            .embeddings()
            .matmul(&last.t()?)?
            .flatten_all()?
            .to_vec1()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;
    use candle_transformers::models::whisper::{self, model::Whisper};

    /// Each step gives the logits candle's decoder gives reading the whole sequence again, on a
    /// window of the installed model's encoded audio: a prompt of three tokens (the mask), then
    /// a token at a time as greedy decoding picks them.
    #[test]
    fn each_step_gives_the_logits_of_reading_the_whole_sequence() {
        let models = std::env::var_os("DRIVE_MODELS").map_or_else(
            || std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/drive/models"),
            std::path::PathBuf::from,
        );
        let weights = crate::ct2::read(&models.join(crate::MODEL_FOLDER).join("model.bin"))
            .expect("the model scripts/test installs");
        let vb = VarBuilder::from_tensors(weights.tensors, whisper::DTYPE, &Device::Cpu);
        let mut candle = Whisper::load(&vb, weights.config).unwrap();
        let ours = Decoder::load(vb.pp("model.decoder"), &candle.config).unwrap();
        // Two seconds of a rising tone: any audio gives features to compare on.
        let samples: Vec<f32> = (0..32_000)
            .map(|i| (i as f32 * (0.05 + i as f32 * 1e-6)).sin() * 0.3)
            .collect();
        let config = candle.config.clone();
        let mel = crate::mel::window(&config, &crate::mel::filters(config.num_mel_bins), &samples);
        let mel = Tensor::from_vec(mel, (1, config.num_mel_bins, whisper::N_FRAMES), &Device::Cpu).unwrap();
        let features = candle.encoder.forward(&mel, true).unwrap();

        let mut window = ours.window(&features).unwrap();
        // Start of transcript, English, transcribe (multilingual base's ids).
        let mut tokens: Vec<u32> = vec![50258, 50259, 50359];
        let mut fed = tokens.clone();
        for step in 0..12 {
            let mine = ours.next(&mut window, &fed).unwrap();
            let all = Tensor::new(tokens.as_slice(), &Device::Cpu)
                .unwrap()
                .unsqueeze(0)
                .unwrap();
            let hidden = candle.decoder.forward(&all, &features, step == 0).unwrap();
            let theirs: Vec<f32> = candle
                .decoder
                .final_linear(&hidden.i((.., tokens.len() - 1..)).unwrap())
                .unwrap()
                .i((0, 0))
                .unwrap()
                .to_vec1()
                .unwrap();
            let worst = mine
                .iter()
                .zip(&theirs)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(worst < 1e-3, "step {step}: logits differ by {worst}");
            // The next token as greedy decoding would pick it, text tokens only.
            let next = (0..50257u32)
                .max_by(|&a, &b| mine[a as usize].total_cmp(&mine[b as usize]))
                .unwrap();
            tokens.push(next);
            fed = vec![next];
        }
    }
}
