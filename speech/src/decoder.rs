//! Whisper's text decoder, reading each token once: the keys and values of the tokens already
//! read are kept for the window, so a step runs the decoder over its one new token. candle's
//! decoder (`whisper::model::TextDecoder`) keeps only the audio's, so each step ran every layer
//! over the whole sequence again: a window of n tokens cost O(n²) layer runs instead of n.
//!
//! A step is a few vectors through matrices, so its time is the time to read them: the
//! matrices are kept in half precision ([`HalfMatrix`]), the audio's keys and values laid out
//! so each head's scores and mix read them straight through, and the arithmetic is done on
//! plain slices (candle's tensors cost an allocation and a dispatch an operation, which at one
//! token were most of a step). The arithmetic is candle's (after OpenAI's `whisper/model.py`):
//! the test below holds each step's logits to candle's decoder.

use candle_core::{DType, Result, Tensor};
use candle_nn::{Linear, Module, VarBuilder};
use candle_transformers::models::whisper::Config;
use rayon::prelude::*;

use crate::half::HalfMatrix;
use drive_kernels::math;

pub struct Decoder {
    /// The tokens' embeddings (vocabulary × state), also the logits' projection.
    embedding: HalfMatrix,
    /// Each position's embedding, a row of `state` each.
    positions: Vec<f32>,
    layers: Vec<Layer>,
    ln: Norm,
    state: usize,
    heads: usize,
}

struct Layer {
    this: Attention,
    this_ln: Norm,
    audio: AudioAttention,
    audio_ln: Norm,
    fc1: HalfMatrix,
    fc2: HalfMatrix,
    mlp_ln: Norm,
}

/// The attention to the tokens read.
struct Attention {
    query: HalfMatrix,
    key: HalfMatrix,
    value: HalfMatrix,
    out: HalfMatrix,
}

/// The attention to the audio, whose keys and values are computed once a window (1,500 frames
/// at once: candle's matrix product, in f32).
struct AudioAttention {
    query: HalfMatrix,
    key: Linear,
    value: Linear,
    out: HalfMatrix,
}

struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// One window's decoding so far, each layer's keys already scaled (queries and keys are each
/// scaled by the fourth root of a head's width, as candle and OpenAI do).
pub struct Window {
    /// The audio's keys, head by head and transposed (heads × head width × frames), and values
    /// (heads × frames × head width): a head's scores and mix each read one run of memory.
    audio: Vec<(Vec<f32>, Vec<f32>)>,
    frames: usize,
    /// The keys and values of the tokens read, a row of `state` each.
    read: Vec<(Vec<f32>, Vec<f32>)>,
    len: usize,
}

/// The matrix (`rows` × `cols`) under `vb`, in half precision, and its bias when it has one.
fn matrix(rows: usize, cols: usize, bias: bool, vb: VarBuilder) -> Result<HalfMatrix> {
    let vb = vb.to_dtype(DType::F16);
    let bias = bias.then(|| vb.get(rows, "bias")).transpose()?;
    HalfMatrix::new(&vb.get((rows, cols), "weight")?, bias.as_ref())
}

fn vector(size: usize, name: &str, vb: &VarBuilder) -> Result<Vec<f32>> {
    vb.get(size, name)?.to_vec1()
}

impl Norm {
    fn load(size: usize, vb: VarBuilder) -> Result<Norm> {
        Ok(Norm {
            weight: vector(size, "weight", &vb)?,
            bias: vector(size, "bias", &vb)?,
        })
    }

    /// Each row of `x` normalised (candle's `LayerNorm`, ε 1e-5).
    fn apply(&self, x: &[f32]) -> Vec<f32> {
        let size = self.weight.len();
        let mut out = Vec::with_capacity(x.len());
        for row in x.chunks(size) {
            let mean = row.iter().sum::<f32>() / size as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / size as f32;
            let inv = 1.0 / (var + 1e-5).sqrt();
            out.extend(
                row.iter()
                    .zip(self.weight.iter().zip(&self.bias))
                    .map(|(v, (w, b))| (v - mean) * inv * w + b),
            );
        }
        out
    }
}

impl Attention {
    fn load(state: usize, vb: VarBuilder) -> Result<Attention> {
        Ok(Attention {
            query: matrix(state, state, true, vb.pp("q_proj"))?,
            key: matrix(state, state, false, vb.pp("k_proj"))?,
            value: matrix(state, state, true, vb.pp("v_proj"))?,
            out: matrix(state, state, true, vb.pp("out_proj"))?,
        })
    }
}

impl AudioAttention {
    fn load(state: usize, vb: VarBuilder) -> Result<AudioAttention> {
        Ok(AudioAttention {
            query: matrix(state, state, true, vb.pp("q_proj"))?,
            key: candle_nn::linear_no_bias(state, state, vb.pp("k_proj"))?,
            value: candle_nn::linear(state, state, vb.pp("v_proj"))?,
            out: matrix(state, state, true, vb.pp("out_proj"))?,
        })
    }
}

/// `x + y`, element by element, into `x`.
fn add(x: &mut [f32], y: &[f32]) {
    x.iter_mut().zip(y).for_each(|(x, y)| *x += y);
}

impl Decoder {
    /// The decoder's weights under `vb` (`model.decoder` of a Whisper checkpoint).
    pub fn load(vb: VarBuilder, config: &Config) -> Result<Decoder> {
        let (state, heads) = (config.d_model, config.decoder_attention_heads);
        let layers = (0..config.decoder_layers)
            .map(|i| {
                let vb = vb.pp(format!("layers.{i}"));
                Ok(Layer {
                    this: Attention::load(state, vb.pp("self_attn"))?,
                    this_ln: Norm::load(state, vb.pp("self_attn_layer_norm"))?,
                    audio: AudioAttention::load(state, vb.pp("encoder_attn"))?,
                    audio_ln: Norm::load(state, vb.pp("encoder_attn_layer_norm"))?,
                    fc1: matrix(state * 4, state, true, vb.pp("fc1"))?,
                    fc2: matrix(state, state * 4, true, vb.pp("fc2"))?,
                    mlp_ln: Norm::load(state, vb.pp("final_layer_norm"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Decoder {
            embedding: matrix(config.vocab_size, state, false, vb.pp("embed_tokens"))?,
            positions: vb
                .get((config.max_target_positions, state), "embed_positions.weight")?
                .flatten_all()?
                .to_vec1()?,
            layers,
            ln: Norm::load(state, vb.pp("layer_norm"))?,
            state,
            heads,
        })
    }

    /// A head's width and the scale of its queries and keys.
    fn head(&self) -> (usize, f32) {
        let width = self.state / self.heads;
        (width, (width as f32).powf(-0.25))
    }

    /// A window to decode: the encoder's `features` of its audio (1 × frames × state).
    pub fn window(&self, features: &Tensor) -> Result<Window> {
        let (_, frames, _) = features.dims3()?;
        let (width, scale) = self.head();
        // frames × state as heads × frames × width (and, transposed, heads × width × frames).
        let by_head = |t: Tensor, transposed: bool| -> Result<Vec<f32>> {
            let t = t.reshape((frames, self.heads, width))?.transpose(0, 1)?;
            let t = if transposed { t.transpose(1, 2)? } else { t };
            t.contiguous()?.flatten_all()?.to_vec1()
        };
        let audio = self
            .layers
            .iter()
            .map(|l| {
                let keys = (l.audio.key.forward(features)?.squeeze(0)? * scale as f64)?;
                let values = l.audio.value.forward(features)?.squeeze(0)?;
                Ok((by_head(keys, true)?, by_head(values, false)?))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Window {
            read: vec![(Vec::new(), Vec::new()); audio.len()],
            audio,
            frames,
            len: 0,
        })
    }

    /// Reads `tokens` after those `window` has read, and answers the logits of the token after
    /// them.
    pub fn next(&self, window: &mut Window, tokens: &[u32]) -> Result<Vec<f32>> {
        let (start, n, state) = (window.len, tokens.len(), self.state);
        if n == 0 {
            candle_core::bail!("no token to decode");
        }
        if start + n > self.positions.len() / state {
            candle_core::bail!("a window of more than {} tokens", self.positions.len() / state);
        }
        let (width, scale) = self.head();
        let mut x = Vec::with_capacity(n * state);
        for (i, &token) in tokens.iter().enumerate() {
            let Some(embedded) = self.embedding.row(token as usize) else {
                candle_core::bail!("token {token} is outside the vocabulary");
            };
            let position = &self.positions[(start + i) * state..(start + i + 1) * state];
            x.extend(embedded.iter().zip(position).map(|(e, p)| e + p));
        }
        for ((layer, (keys, values)), (audio_keys, audio_values)) in
            self.layers.iter().zip(&mut window.read).zip(&window.audio)
        {
            // The tokens so far: each new token sees those before it and itself.
            let h = layer.this_ln.apply(&x);
            let q: Vec<f32> = layer.this.query.times(&h).iter().map(|v| v * scale).collect();
            keys.extend(layer.this.key.times(&h).iter().map(|v| v * scale));
            values.extend(layer.this.value.times(&h));
            let mut mixed = vec![0f32; n * state];
            for (i, (q, mixed)) in q.chunks(state).zip(mixed.chunks_mut(state)).enumerate() {
                let seen = start + i + 1;
                for (head, (q, mixed)) in q.chunks(width).zip(mixed.chunks_mut(width)).enumerate() {
                    let at = |row: usize| row * state + head * width..row * state + (head + 1) * width;
                    let mut scores: Vec<f32> = (0..seen)
                        .map(|t| q.iter().zip(&keys[at(t)]).map(|(q, k)| q * k).sum())
                        .collect();
                    math::softmax(&mut scores);
                    for (t, weight) in scores.iter().enumerate() {
                        mixed
                            .iter_mut()
                            .zip(&values[at(t)])
                            .for_each(|(m, v)| *m += weight * v);
                    }
                }
            }
            add(&mut x, &layer.this.out.times(&mixed));

            // The audio.
            let h = layer.audio_ln.apply(&x);
            let q: Vec<f32> = layer.audio.query.times(&h).iter().map(|v| v * scale).collect();
            let frames = window.frames;
            let mut mixed = vec![0f32; n * state];
            // Each (token, head) reads its head's keys and values once: in parallel, they
            // are most of a step's reading after the matrices.
            mixed
                .par_chunks_mut(width)
                .zip(q.par_chunks(width))
                .enumerate()
                .for_each(|(i, (mixed, q))| {
                    let head = i % self.heads;
                    let keys = &audio_keys[head * width * frames..(head + 1) * width * frames];
                    let values = &audio_values[head * frames * width..(head + 1) * frames * width];
                    let mut scores = vec![0f32; frames];
                    for (q, keys) in q.iter().zip(keys.chunks(frames)) {
                        scores.iter_mut().zip(keys).for_each(|(s, k)| *s += q * k);
                    }
                    math::softmax(&mut scores);
                    for (weight, values) in scores.iter().zip(values.chunks(width)) {
                        mixed.iter_mut().zip(values).for_each(|(m, v)| *m += weight * v);
                    }
                });
            add(&mut x, &layer.audio.out.times(&mixed));

            let h = layer.mlp_ln.apply(&x);
            let hidden: Vec<f32> = layer.fc1.times(&h).into_iter().map(math::gelu_tanh).collect();
            add(&mut x, &layer.fc2.times(&hidden));
        }
        window.len += n;
        let last = self.ln.apply(&x[(n - 1) * state..]);
        // The vocabulary's embeddings (vocab × state) times the state: 53 MB read for base,
        // a third of a step's time.
        Ok(self.embedding.times(&last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, IndexOp};

    /// Each step gives the logits candle's decoder gives reading the whole sequence again, on a
    /// window of the installed model's encoded audio: a prompt of three tokens (the mask), then
    /// a token at a time as greedy decoding picks them.
    #[test]
    fn each_step_gives_the_logits_of_reading_the_whole_sequence() {
        let (vb, mut candle, mel) = crate::tests::candle_reference();
        let ours = Decoder::load(vb.pp("model.decoder"), &candle.config).unwrap();
        let features = candle.encoder.forward(&mel, true).unwrap();

        let mut window = ours.window(&features).unwrap();
        assert!(
            ours.next(&mut window, &[]).is_err(),
            "no token is an error, not a panic"
        );
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
