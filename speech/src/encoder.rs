//! Whisper's audio encoder: a window's log-mel spectrogram to 1,500 frames of features.
//!
//! The matrix products are candle's, as in candle's encoder (`whisper::model::AudioEncoder`);
//! the rest is done here, where candle's took most of a window's time beside them: its
//! attention made the scores of all heads at once (8 × 1,500 × 1,500 numbers, 72 MB a layer,
//! written and read twice and mapped afresh from the system each time), and its softmax and
//! GELU call the C library's `expf` and `tanhf` one number at a time. Here each head's scores are
//! made, weighed and used in turn (9 MB), and exp and tanh are polynomials the compiler turns
//! into vector instructions. The test below holds the features to candle's encoder.

use candle_core::{D, Device, Module, Result, Tensor};
use candle_nn::{Conv1d, Conv1dConfig, LayerNorm, Linear, VarBuilder};
use candle_transformers::models::whisper::Config;
use rayon::prelude::*;

use drive_kernels::math;

pub struct Encoder {
    conv1: Conv1d,
    conv2: Conv1d,
    /// Each frame's position, frames × state (the sinusoids of OpenAI's `model.py`).
    positions: Tensor,
    layers: Vec<Layer>,
    ln: LayerNorm,
    heads: usize,
}

struct Layer {
    attention_ln: LayerNorm,
    query: Linear,
    key: Linear,
    value: Linear,
    out: Linear,
    mlp_ln: LayerNorm,
    fc1: Linear,
    fc2: Linear,
}

fn layer_norm(size: usize, vb: VarBuilder) -> Result<LayerNorm> {
    Ok(LayerNorm::new(
        vb.get(size, "weight")?,
        vb.get(size, "bias")?,
        1e-5,
    ))
}

/// OpenAI's `sinusoids`: sines then cosines of each frame at geometric timescales.
fn sinusoids(frames: usize, channels: usize) -> Result<Tensor> {
    let increment = 10_000f32.ln() / (channels / 2 - 1) as f32;
    let values: Vec<f32> = (0..frames)
        .flat_map(|t| {
            let angle = move |i: usize| t as f32 * (-(i as f32) * increment).exp();
            let sines = (0..channels / 2).map(move |i| angle(i).sin());
            sines.chain((0..channels / 2).map(move |i| angle(i).cos()))
        })
        .collect();
    Tensor::from_vec(values, (frames, channels), &Device::Cpu)
}

impl Encoder {
    /// The encoder's weights under `vb` (`model.encoder` of a Whisper checkpoint).
    pub fn load(vb: VarBuilder, config: &Config) -> Result<Encoder> {
        let state = config.d_model;
        let conv = |stride| Conv1dConfig {
            padding: 1,
            stride,
            groups: 1,
            dilation: 1,
            cudnn_fwd_algo: None,
        };
        let layers = (0..config.encoder_layers)
            .map(|i| {
                let vb = vb.pp(format!("layers.{i}"));
                let attention = vb.pp("self_attn");
                Ok(Layer {
                    attention_ln: layer_norm(state, vb.pp("self_attn_layer_norm"))?,
                    query: candle_nn::linear(state, state, attention.pp("q_proj"))?,
                    key: candle_nn::linear_no_bias(state, state, attention.pp("k_proj"))?,
                    value: candle_nn::linear(state, state, attention.pp("v_proj"))?,
                    out: candle_nn::linear(state, state, attention.pp("out_proj"))?,
                    mlp_ln: layer_norm(state, vb.pp("final_layer_norm"))?,
                    fc1: candle_nn::linear(state, state * 4, vb.pp("fc1"))?,
                    fc2: candle_nn::linear(state * 4, state, vb.pp("fc2"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Encoder {
            conv1: candle_nn::conv1d(config.num_mel_bins, state, 3, conv(1), vb.pp("conv1"))?,
            conv2: candle_nn::conv1d(state, state, 3, conv(2), vb.pp("conv2"))?,
            positions: sinusoids(config.max_source_positions, state)?,
            layers,
            ln: layer_norm(state, vb.pp("layer_norm"))?,
            heads: config.encoder_attention_heads,
        })
    }

    /// The features (1 × frames × state) of a window's spectrogram (1 × mel bins × 3000).
    pub fn forward(&self, mel: &Tensor) -> Result<Tensor> {
        let x = gelu(&self.conv1.forward(mel)?)?;
        let x = gelu(&self.conv2.forward(&x)?)?;
        let x = x.squeeze(0)?.t()?;
        let frames = x.dim(0)?;
        let mut x = (x + self.positions.narrow(0, 0, frames)?)?;
        for layer in &self.layers {
            let h = layer.attention_ln.forward(&x)?;
            x = (x + layer.out.forward(&self.attend(layer, &h)?)?)?;
            let h = layer.mlp_ln.forward(&x)?;
            x = (&x + layer.fc2.forward(&gelu(&layer.fc1.forward(&h)?)?)?)?;
        }
        self.ln.forward(&x)?.unsqueeze(0)
    }

    /// Self-attention of `h` (frames × state), head by head.
    fn attend(&self, layer: &Layer, h: &Tensor) -> Result<Tensor> {
        let (frames, state) = h.dims2()?;
        let width = state / self.heads;
        // Candle and OpenAI scale queries and keys each by the fourth root of the width: here
        // the queries by its square root.
        let q = (layer.query.forward(h)? * (width as f64).powf(-0.5))?;
        let (k, v) = (layer.key.forward(h)?, layer.value.forward(h)?);
        let mixed = (0..self.heads)
            .map(|head| {
                let part = |t: &Tensor| t.narrow(1, head * width, width);
                let scores = part(&q)?.matmul(&part(&k)?.t()?)?;
                let mut weights: Vec<f32> = scores.flatten_all()?.to_vec1()?;
                weights.par_chunks_mut(frames).for_each(math::softmax);
                Tensor::from_vec(weights, (frames, frames), &Device::Cpu)?.matmul(&part(&v)?.contiguous()?)
            })
            .collect::<Result<Vec<_>>>()?;
        Tensor::cat(&mixed, D::Minus1)
    }
}

/// [`math::gelu_tanh`] over a tensor.
fn gelu(x: &Tensor) -> Result<Tensor> {
    let mut values: Vec<f32> = x.flatten_all()?.to_vec1()?;
    values
        .par_chunks_mut(1 << 14)
        .for_each(|chunk| chunk.iter_mut().for_each(|v| *v = math::gelu_tanh(*v)));
    Tensor::from_vec(values, x.dims(), &Device::Cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The features are candle's encoder's, to within the order of additions and our exp and
    /// tanh's last bits: a difference that grows with the features' size, so it is bounded
    /// relative to the largest. (Absolute, 1e-3, it failed on a CPU with AVX-512, where candle's
    /// products add in another order: 1.1e-3 at a largest of 23.6, 4.7e-5 of it.)
    #[test]
    fn features_are_those_of_candles_encoder() {
        let (vb, mut candle, mel) = crate::tests::candle_reference();
        let ours = Encoder::load(vb.pp("model.encoder"), &candle.config).unwrap();
        let theirs = candle.encoder.forward(&mel, true).unwrap();
        let ours = ours.forward(&mel).unwrap();
        assert_eq!(ours.dims(), theirs.dims());
        let largest = |t: &Tensor| {
            t.abs()
                .and_then(|t| t.max_all())
                .and_then(|t| t.to_scalar::<f32>())
                .unwrap()
        };
        let worst = largest(&(ours - &theirs).unwrap());
        let largest = largest(&theirs);
        assert!(
            worst < 1e-4 * largest,
            "features differ by {worst} (the largest is {largest})"
        );
    }
}
