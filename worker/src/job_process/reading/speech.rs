//! The moments of audio and of a video's sound: what is said, with when (`drive-speech`,
//! Whisper base run in this process). The sound is decoded by FFmpeg from the input's
//! presigned URL as a stream and transcribed window by window, so memory stays at one 30 s
//! window whatever the length.

use drive_domain::moment::EntryType;
use drive_domain::rows::FileRow;
use drive_media::av::{Input, sound};
use drive_speech::{SAMPLE_RATE, Transcriber};

use super::passages::pieces;
use super::{Passage, Reading, machine};
use crate::job_process::context::JobContext;
use crate::protocol::JobResult;

/// A moment a segment Whisper times (a sentence or a phrase, a few seconds); a segment longer
/// than a moment holds is cut into pieces sharing its times. A video without sound, or sound
/// where nobody speaks, has no moments.
pub fn moments(context: &JobContext, file: &FileRow, progress: &dyn Fn(f64)) -> JobResult<Reading> {
    let source = Input::whole(context.location(file)?).open()?;
    if source.probe().audio_codec.is_none() {
        return Ok(Reading::default());
    }
    let transcriber = Transcriber::load(&context.models.join(drive_speech::MODEL_FOLDER))
        .map_err(|e| machine("loading the speech model", e))?;
    let mut stream = transcriber.stream();
    let mut failed = None;
    sound::mono_samples(
        source,
        SAMPLE_RATE as u32,
        &mut |samples| {
            if failed.is_none()
                && let Err(e) = stream.push(samples)
            {
                failed = Some(e);
            }
        },
        &mut |done| progress(done),
    )?;
    if let Some(e) = failed {
        return Err(machine("transcribing", e));
    }
    let segments = stream.finish().map_err(|e| machine("transcribing", e))?;
    let mut found = Vec::new();
    for segment in segments {
        let mut texts = Vec::new();
        let said = segment.text.split_whitespace().collect::<Vec<_>>().join(" ");
        pieces(&said, &mut texts);
        found.extend(texts.into_iter().map(|text| Passage {
            entry_type: EntryType::Speech,
            text,
            at: Some(segment.start),
            until: Some(segment.end),
            page: None,
        }));
    }
    Ok(Reading::of(found, false))
}
