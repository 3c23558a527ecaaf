//! all-MiniLM-L6-v2's forward pass, a BERT encoder, on plain slices: each text's tokens
//! as they are, one after another (no padding, so no mask), through the embeddings and six
//! layers of attention and feed-forward, to the last hidden states.
//!
//! candle's `BertModel` computed the same, but its matrix products (the `gemm` crate) packed
//! the weights anew at every call, and each of its operations made a new tensor: for a search's
//! query of a few tokens that was most of 9-14 ms. Here the weights are packed once, at load
//! ([`Panels`]), and a query's pass reads each once. The test in `lib.rs` holds the embeddings
//! to candle's model.

use drive_kernels::{Panels, math};
use rayon::prelude::*;
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

/// What `config.json` says of the model's shape.
#[derive(Deserialize)]
struct Config {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    hidden_act: String,
    max_position_embeddings: usize,
    type_vocab_size: usize,
    layer_norm_eps: f64,
}

/// A text's tokens: WordPiece ids and their segment (type) ids, as many of each.
pub struct Tokens<'a> {
    pub ids: &'a [u32],
    pub types: &'a [u32],
}

pub struct Bert {
    hidden: usize,
    heads: usize,
    /// Each token's embedding, each position's and each segment's: rows of `hidden`.
    words: Vec<f32>,
    positions: Vec<f32>,
    segments: Vec<f32>,
    embeddings_norm: Norm,
    layers: Vec<Layer>,
}

struct Layer {
    /// The queries' weights carry the attention's scale, 1/√(head width).
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    output: Linear,
    output_norm: Norm,
}

struct Linear {
    weights: Panels,
    bias: Vec<f32>,
}

struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

/// The rows of hidden states a thread normalizes at once.
const ROWS_A_THREAD: usize = 64;

impl Bert {
    /// The model from its `config.json` text and `model.safetensors` bytes; the error says
    /// which part is missing or misshapen.
    pub fn load(config: &str, weights: &[u8]) -> Result<Bert, String> {
        let config: Config = serde_json::from_str(config).map_err(|e| format!("config.json: {e}"))?;
        if config.hidden_act != "gelu" {
            return Err(format!(
                "config.json: hidden_act {:?}, not gelu",
                config.hidden_act
            ));
        }
        let (hidden, heads) = (config.hidden_size, config.num_attention_heads);
        if heads == 0 || hidden % heads != 0 {
            return Err(format!("config.json: {heads} heads for {hidden} hidden numbers"));
        }
        let eps = config.layer_norm_eps as f32;
        let tensors = SafeTensors::deserialize(weights).map_err(|e| format!("model.safetensors: {e}"))?;
        // Saved from `BertModel` or from a model around it (`bert.` before each name).
        let prefix = if tensors.names().iter().any(|n| n.starts_with("bert.")) {
            "bert."
        } else {
            ""
        };
        let get = |name: &str, shape: &[usize]| -> Result<Vec<f32>, String> {
            let name = format!("{prefix}{name}");
            let view = tensors
                .tensor(&name)
                .map_err(|e| format!("model.safetensors: {name}: {e}"))?;
            if view.dtype() != Dtype::F32 || view.shape() != shape {
                return Err(format!(
                    "model.safetensors: {name} is {:?} {:?}, not F32 {shape:?}",
                    view.dtype(),
                    view.shape()
                ));
            }
            Ok(view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect())
        };
        let norm = |name: &str| -> Result<Norm, String> {
            Ok(Norm {
                weight: get(&format!("{name}.weight"), &[hidden])?,
                bias: get(&format!("{name}.bias"), &[hidden])?,
                eps,
            })
        };
        let linear = |name: &str, inputs: usize, outputs: usize, scale: f32| -> Result<Linear, String> {
            let mut w = get(&format!("{name}.weight"), &[outputs, inputs])?;
            let mut bias = get(&format!("{name}.bias"), &[outputs])?;
            if scale != 1.0 {
                w.iter_mut().chain(bias.iter_mut()).for_each(|v| *v *= scale);
            }
            Ok(Linear {
                weights: Panels::transposed(&w, outputs, inputs, inputs),
                bias,
            })
        };
        let scale = 1.0 / ((hidden / heads) as f32).sqrt();
        let inner = config.intermediate_size;
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let at = |part: &str| format!("encoder.layer.{i}.{part}");
                Ok(Layer {
                    query: linear(&at("attention.self.query"), hidden, hidden, scale)?,
                    key: linear(&at("attention.self.key"), hidden, hidden, 1.0)?,
                    value: linear(&at("attention.self.value"), hidden, hidden, 1.0)?,
                    attention_out: linear(&at("attention.output.dense"), hidden, hidden, 1.0)?,
                    attention_norm: norm(&at("attention.output.LayerNorm"))?,
                    intermediate: linear(&at("intermediate.dense"), hidden, inner, 1.0)?,
                    output: linear(&at("output.dense"), inner, hidden, 1.0)?,
                    output_norm: norm(&at("output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Bert {
            hidden,
            heads,
            words: get("embeddings.word_embeddings.weight", &[config.vocab_size, hidden])?,
            positions: get(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, hidden],
            )?,
            segments: get(
                "embeddings.token_type_embeddings.weight",
                &[config.type_vocab_size, hidden],
            )?,
            embeddings_norm: norm("embeddings.LayerNorm")?,
            layers,
        })
    }

    /// The last hidden states of the texts' tokens: a row of `hidden` numbers a token, the
    /// texts' rows one after another. A token, segment or position the model has no
    /// embedding for is an error naming it.
    pub fn forward(&self, texts: &[Tokens]) -> Result<Vec<f32>, String> {
        let h = self.hidden;
        let lengths: Vec<usize> = texts.iter().map(|t| t.ids.len()).collect();
        let rows: usize = lengths.iter().sum();
        let mut x = Vec::with_capacity(rows * h);
        for text in texts {
            if text.types.len() != text.ids.len() {
                return Err(format!(
                    "{} tokens with {} segment ids",
                    text.ids.len(),
                    text.types.len()
                ));
            }
            for (position, (&id, &segment)) in text.ids.iter().zip(text.types).enumerate() {
                let word = row(&self.words, h, id as usize, "token")?;
                let place = row(&self.positions, h, position, "position")?;
                let segment = row(&self.segments, h, segment as usize, "segment")?;
                x.extend((0..h).map(|i| word[i] + place[i] + segment[i]));
            }
        }
        self.embeddings_norm.apply(&mut x, h);
        let (mut q, mut k, mut v, mut mixed) = (
            vec![0f32; rows * h],
            vec![0f32; rows * h],
            vec![0f32; rows * h],
            vec![0f32; rows * h],
        );
        let mut inner = Vec::new();
        for layer in &self.layers {
            layer.query.apply(&x, rows, &mut q);
            layer.key.apply(&x, rows, &mut k);
            layer.value.apply(&x, rows, &mut v);
            self.attend(&lengths, &q, &k, &v, &mut mixed);
            layer.attention_out.add(&mixed, rows, &mut x);
            layer.attention_norm.apply(&mut x, h);
            inner.resize(rows * layer.intermediate.bias.len(), 0.0);
            layer.intermediate.apply(&x, rows, &mut inner);
            inner
                .par_chunks_mut(1 << 14)
                .for_each(|part| part.iter_mut().for_each(|v| *v = math::gelu_erf(*v)));
            layer.output.add(&inner, rows, &mut x);
            layer.output_norm.apply(&mut x, h);
        }
        Ok(x)
    }

    /// Each text's self-attention, head by head: its queries' scores against its own keys,
    /// weighed by softmax, mixing its values into `mixed`. Texts apart go to the cores.
    fn attend(&self, lengths: &[usize], q: &[f32], k: &[f32], v: &[f32], mixed: &mut [f32]) {
        let h = self.hidden;
        let width = h / self.heads;
        let mut parts = Vec::with_capacity(lengths.len());
        let (mut rest, mut first) = (mixed, 0);
        for &length in lengths {
            let (part, after) = rest.split_at_mut(length * h);
            parts.push((first, length, part));
            (rest, first) = (after, first + length);
        }
        parts.into_par_iter().for_each(|(first, length, mixed)| {
            mixed.fill(0.0);
            let mut scores = vec![0f32; length * length];
            for head in 0..self.heads {
                let at = first * h + head * width;
                scores.fill(0.0);
                Panels::transposed(&k[at..], length, width, h).multiply_add(
                    &q[at..],
                    h,
                    length,
                    &mut scores,
                    length,
                );
                scores.chunks_exact_mut(length).for_each(math::softmax);
                Panels::rows(&v[at..], length, width, h).multiply_add(
                    &scores,
                    length,
                    length,
                    &mut mixed[head * width..],
                    h,
                );
            }
        });
    }
}

/// Row `i` of a table of rows of `width`, or an error naming what has no row.
fn row<'a>(table: &'a [f32], width: usize, i: usize, what: &str) -> Result<&'a [f32], String> {
    table
        .get(i * width..(i + 1) * width)
        .ok_or_else(|| format!("{what} {i}: the model has none"))
}

impl Linear {
    /// `out = x · wᵀ + bias` for `rows` rows.
    fn apply(&self, x: &[f32], rows: usize, out: &mut [f32]) {
        let n = self.bias.len();
        out[..rows * n]
            .chunks_exact_mut(n)
            .for_each(|row| row.copy_from_slice(&self.bias));
        self.weights.multiply_add(x, self.weights.inputs(), rows, out, n);
    }

    /// `out += x · wᵀ + bias` for `rows` rows: the residual kept in `out`.
    fn add(&self, x: &[f32], rows: usize, out: &mut [f32]) {
        let n = self.bias.len();
        out[..rows * n]
            .chunks_exact_mut(n)
            .for_each(|row| row.iter_mut().zip(&self.bias).for_each(|(o, b)| *o += b));
        self.weights.multiply_add(x, self.weights.inputs(), rows, out, n);
    }
}

impl Norm {
    /// Each row of `width` made mean 0 and variance 1, then scaled and shifted.
    fn apply(&self, x: &mut [f32], width: usize) {
        x.par_chunks_mut(width * ROWS_A_THREAD).for_each(|rows| {
            for row in rows.chunks_exact_mut(width) {
                let mean = row.iter().sum::<f32>() / width as f32;
                let variance = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width as f32;
                let scale = 1.0 / (variance + self.eps).sqrt();
                for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                    *v = (*v - mean) * scale * w + b;
                }
            }
        });
    }
}
