//! The moments of audio and of a video's sound: what is said, with when. The sound is decoded
//! by FFmpeg from the input's presigned URL as a stream, here, and handed to the supervisor
//! piece by piece ([`Request::Hear`]), whose Whisper (`drive-speech`, loaded once for the
//! worker) transcribes each piece while the next is decoded; memory stays at a piece or two
//! whatever the length.

use base64::Engine;
use drive_domain::moment::{EntryType, Said};
use drive_domain::rows::FileRow;
use drive_media::av::{Input, sound};
use drive_speech::SAMPLE_RATE;

use super::passages::pieces;
use super::{Passage, Reading};
use crate::job_process::context::JobContext;
use crate::protocol::{JobResult, MAX_HEARD_SAMPLES, Request};

/// A moment a segment Whisper times (a sentence or a phrase, a few seconds); a segment longer
/// than a moment holds is cut into pieces sharing its times. A video without sound, or sound
/// where nobody speaks, has no moments.
pub fn moments(context: &JobContext, file: &FileRow, progress: &dyn Fn(f64)) -> JobResult<Reading> {
    let source = Input::whole(context.location(file)?).open()?;
    if source.probe().audio_codec.is_none() {
        return Ok(Reading::default());
    }
    let mut piece = Vec::with_capacity(MAX_HEARD_SAMPLES);
    let mut failed = None;
    sound::mono_samples(
        source,
        SAMPLE_RATE as u32,
        &mut |samples| {
            // Once a piece is refused, the rest is decoded to its end but not kept.
            if failed.is_some() {
                return;
            }
            for part in samples.chunks(MAX_HEARD_SAMPLES) {
                if piece.len() + part.len() > MAX_HEARD_SAMPLES {
                    if let Err(e) = hear(context, &piece) {
                        failed = Some(e);
                        return;
                    }
                    piece.clear();
                }
                piece.extend_from_slice(part);
            }
        },
        &mut |done| progress(done),
    )?;
    if let Some(e) = failed {
        return Err(e);
    }
    if !piece.is_empty() {
        hear(context, &piece)?;
    }
    let said: Vec<Said> = context.ask(&Request::Transcript)?;
    let mut found = Vec::new();
    for segment in said {
        let mut texts = Vec::new();
        let said = segment.text.split_whitespace().collect::<Vec<_>>().join(" ");
        pieces(&said, &mut texts);
        found.extend(texts.into_iter().map(|text| Passage {
            entry_type: EntryType::Speech,
            text,
            at: Some(segment.at),
            until: Some(segment.until),
            page: None,
        }));
    }
    Ok(Reading::of(found, false))
}

/// Hands a piece of the recording to the supervisor's transcription.
fn hear(context: &JobContext, samples: &[f32]) -> JobResult<()> {
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    let samples = base64::engine::general_purpose::STANDARD.encode(bytes);
    context.ask(&Request::Hear { samples })
}
