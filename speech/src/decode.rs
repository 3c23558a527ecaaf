//! Greedy decoding of one 30 s window with Whisper's timestamp rules, and the split of the
//! decoded tokens into timed segments (after OpenAI's `whisper/decoding.py` and
//! `whisper/transcribe.py`).

use candle_core::Tensor;

use crate::decoder::Decoder;

/// Seconds per timestamp token: the encoder's 1500 positions over 30 s.
pub const TIMESTAMP_SECONDS: f64 = 0.02;
/// The first timestamp may be at most 1 s into the window (OpenAI's `max_initial_timestamp`).
const MAX_INITIAL_TIMESTAMP: u32 = 50;

/// The special tokens, which differ between English-only and multilingual vocabularies.
#[derive(Debug, Clone)]
pub struct Specials {
    pub sot: u32,
    pub eot: u32,
    pub transcribe: u32,
    pub no_timestamps: u32,
    pub no_speech: u32,
    pub timestamp_begin: u32,
    /// Language tokens of a multilingual model; empty for an English-only one.
    pub languages: Vec<u32>,
    /// Tokens never sampled (punctuation-like noise markers from the model's config.json).
    pub suppress: Vec<u32>,
    /// Tokens not sampled first (the blank and end of text).
    pub suppress_begin: Vec<u32>,
}

/// What greedy decoding made of a window.
pub struct Decoded {
    /// Sampled tokens: text and timestamps, without the prompt or the end of text.
    pub tokens: Vec<u32>,
    pub avg_logprob: f64,
    pub no_speech_prob: f64,
}

pub fn greedy(
    decoder: &Decoder,
    features: &Tensor,
    s: &Specials,
    max_tokens: usize,
) -> candle_core::Result<Decoded> {
    let mut window = decoder.window(features)?;
    // The start token's logits give the no-speech probability and, for a multilingual model,
    // the language.
    let first = decoder.next(&mut window, &[s.sot])?;
    let no_speech_prob = softmax(&first)[s.no_speech as usize] as f64;
    let mut logits = first;
    if !s.languages.is_empty() {
        let language = s
            .languages
            .iter()
            .copied()
            .max_by(|&a, &b| logits[a as usize].total_cmp(&logits[b as usize]))
            .expect("languages is not empty");
        logits = decoder.next(&mut window, &[language, s.transcribe])?;
    }

    let mut sum_logprob = 0f64;
    let mut sampled: Vec<u32> = Vec::new();
    while sampled.len() < max_tokens {
        suppress(&mut logits, &sampled, s);
        let logprobs = log_softmax(&logits);
        let next = argmax(&logits);
        sum_logprob += logprobs[next as usize] as f64;
        if next == s.eot {
            break;
        }
        sampled.push(next);
        if sampled.len() < max_tokens {
            logits = decoder.next(&mut window, &[next])?;
        }
    }
    let avg_logprob = sum_logprob / (sampled.len() + 1) as f64;
    Ok(Decoded {
        tokens: sampled,
        avg_logprob,
        no_speech_prob,
    })
}

/// Whisper's logit filters: the configured suppressions, then the timestamp rules (timestamps
/// come in pairs, never go back, the first token is a timestamp within the first second, and a
/// timestamp is forced when timestamps together outweigh every text token).
fn suppress(logits: &mut [f32], sampled: &[u32], s: &Specials) {
    let ban = |logits: &mut [f32], range: std::ops::Range<usize>| logits[range].fill(f32::NEG_INFINITY);
    for &t in &s.suppress {
        logits[t as usize] = f32::NEG_INFINITY;
    }
    if sampled.is_empty() {
        for &t in &s.suppress_begin {
            logits[t as usize] = f32::NEG_INFINITY;
        }
    }
    logits[s.no_timestamps as usize] = f32::NEG_INFINITY;
    let ts = s.timestamp_begin as usize;
    let is_ts = |t: &u32| *t >= s.timestamp_begin;

    let last_was_ts = sampled.last().is_some_and(is_ts);
    let penultimate_was_ts = sampled.len() < 2 || is_ts(&sampled[sampled.len() - 2]);
    if last_was_ts {
        if penultimate_was_ts {
            ban(logits, ts..logits.len());
        } else {
            ban(logits, 0..s.eot as usize);
        }
    }
    if let Some(&last) = sampled.iter().rev().find(|t| is_ts(t)) {
        // A closing timestamp may equal the opening one; after a pair, time moves on.
        let floor = if last_was_ts && !penultimate_was_ts {
            last
        } else {
            last + 1
        };
        ban(logits, ts..(floor as usize).min(logits.len()));
    }
    if sampled.is_empty() {
        ban(logits, 0..ts);
        let last_allowed = ts + MAX_INITIAL_TIMESTAMP as usize + 1;
        if last_allowed < logits.len() {
            ban(logits, last_allowed..logits.len());
        }
    }
    let logprobs = log_softmax(logits);
    let timestamp_mass = log_sum_exp(&logprobs[ts..]);
    let best_text = logprobs[..ts].iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if timestamp_mass > best_text {
        ban(logits, 0..ts);
    }
}

/// A timed piece of a window: timestamp positions (in 0.02 s units from the window's start) and
/// its text tokens.
pub struct Piece {
    pub start: u32,
    pub end: u32,
    pub text: Vec<u32>,
}

/// Splits a window's tokens at each pair of timestamps. Answers the pieces and how far the
/// window was consumed (in 0.02 s units), or `None` when it was consumed whole: text after the
/// last closed pair is decoded again from the next window, where it is not cut off.
pub fn pieces(tokens: &[u32], timestamp_begin: u32, window_units: u32) -> (Vec<Piece>, Option<u32>) {
    let is_ts = |t: u32| t >= timestamp_begin;
    let at = |t: u32| t - timestamp_begin;
    let text_of = |slice: &[u32]| slice.iter().copied().filter(|&t| !is_ts(t)).collect::<Vec<_>>();
    let single_ending =
        tokens.len() >= 2 && !is_ts(tokens[tokens.len() - 2]) && is_ts(tokens[tokens.len() - 1]);
    let mut cuts: Vec<usize> = (1..tokens.len())
        .filter(|&i| is_ts(tokens[i - 1]) && is_ts(tokens[i]))
        .collect();
    if cuts.is_empty() {
        // No closed pair: one piece for the window, ending at its last timestamp if it has one.
        let end = tokens
            .iter()
            .rev()
            .copied()
            .find(|&t| is_ts(t))
            .map(at)
            .filter(|&e| e > 0)
            .unwrap_or(window_units);
        let start = tokens.first().copied().filter(|&t| is_ts(t)).map(at).unwrap_or(0);
        return (
            vec![Piece {
                start,
                end,
                text: text_of(tokens),
            }],
            None,
        );
    }
    if single_ending {
        cuts.push(tokens.len());
    }
    let mut out = Vec::new();
    let mut from = 0;
    for cut in cuts {
        let slice = &tokens[from..cut];
        out.push(Piece {
            start: at(slice[0].max(timestamp_begin)),
            end: at(slice[slice.len() - 1].max(timestamp_begin)),
            text: text_of(slice),
        });
        from = cut;
    }
    if single_ending {
        (out, None)
    } else {
        (out, Some(at(tokens[from - 1])))
    }
}

fn argmax(v: &[f32]) -> u32 {
    v.iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| i as u32)
        .unwrap_or(0)
}

fn log_sum_exp(v: &[f32]) -> f32 {
    let max = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if max == f32::NEG_INFINITY {
        return max;
    }
    max + v.iter().map(|x| (x - max).exp()).sum::<f32>().ln()
}

fn log_softmax(v: &[f32]) -> Vec<f32> {
    let lse = log_sum_exp(v);
    v.iter().map(|x| x - lse).collect()
}

fn softmax(v: &[f32]) -> Vec<f32> {
    log_softmax(v).into_iter().map(f32::exp).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TS: u32 = 50_000;

    #[test]
    fn pairs_cut_pieces_and_the_rest_is_decoded_again() {
        // <0.00> a b <1.00><1.00> c <2.00><2.00> d  (d is cut off by the window's end)
        let tokens = [TS, 1, 2, TS + 50, TS + 50, 3, TS + 100, TS + 100, 4];
        let (pieces, consumed) = pieces(&tokens, TS, 1500);
        assert_eq!(pieces.len(), 2);
        assert_eq!(
            (pieces[0].start, pieces[0].end, pieces[0].text.clone()),
            (0, 50, vec![1, 2])
        );
        assert_eq!(
            (pieces[1].start, pieces[1].end, pieces[1].text.clone()),
            (50, 100, vec![3])
        );
        assert_eq!(consumed, Some(100));
    }

    #[test]
    fn a_single_closing_timestamp_consumes_the_window() {
        let tokens = [TS, 1, TS + 40, TS + 60, 2, TS + 90];
        let (pieces, consumed) = pieces(&tokens, TS, 1500);
        assert_eq!(pieces.len(), 2);
        assert_eq!((pieces[1].start, pieces[1].end), (60, 90));
        assert_eq!(consumed, None);
    }

    #[test]
    fn timestamps_pair_up_and_never_go_back() {
        let s = Specials {
            sot: 10,
            eot: 9,
            transcribe: 11,
            no_timestamps: 12,
            no_speech: 13,
            timestamp_begin: 20,
            languages: vec![],
            suppress: vec![],
            suppress_begin: vec![],
        };
        // First token: a timestamp within the first second only.
        let mut logits = vec![0f32; 20 + 100];
        suppress(&mut logits, &[], &s);
        assert!(logits[..20].iter().all(|l| l.is_infinite()));
        assert!(logits[20..=70].iter().all(|l| l.is_finite()));
        assert!(logits[71..].iter().all(|l| l.is_infinite()));
        // After an opening timestamp and text, a closing one may not be before the opening.
        let mut logits = vec![0f32; 120];
        suppress(&mut logits, &[30, 1], &s);
        assert!(logits[20..31].iter().all(|l| l.is_infinite()));
        // Text closed by a timestamp: another timestamp (or the end) must follow, not text.
        let mut logits = vec![0f32; 120];
        suppress(&mut logits, &[30, 1, 40], &s);
        assert!(logits[..9].iter().all(|l| l.is_infinite()));
    }
}
