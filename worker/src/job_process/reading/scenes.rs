//! A video's `visual` moments, when the worker has a describing model: a frame every
//! [`SCENE_SECONDS`] described, each moment spanning its stretch of the video.

use drive_domain::rows::FileRow;
use drive_media::av::{pictures, probe};

use super::Passage;
use super::pictures::described;
use crate::job_process::context::JobContext;
use crate::protocol::JobResult;

/// A stretch of video one description stands for.
const SCENE_SECONDS: f64 = 30.0;

/// Descriptions of the stretches of the video, as many as the job may still ask for
/// ([`JobContext::descriptions_left`]); and whether the video had more stretches than that.
pub fn moments(context: &JobContext, file: &FileRow) -> JobResult<(Vec<Passage>, bool)> {
    let location = context.location(file)?;
    let facts = probe::probe(&location)?;
    let Some(duration) = facts.duration.filter(|_| facts.video_codec.is_some()) else {
        return Ok((Vec::new(), false));
    };
    let stretches = (duration / SCENE_SECONDS).ceil().max(1.0) as usize;
    let budget = context.descriptions_left();
    let mut found = Vec::new();
    for n in 0..stretches.min(budget) {
        let at = n as f64 * SCENE_SECONDS;
        let until = (at + SCENE_SECONDS).min(duration);
        // The middle of the stretch, which a cut at its start does not blacken.
        let frame = pictures::frame_at(&location, (at + until) / 2.0)?;
        if let Some(description) = described(context, &frame)? {
            found.push(Passage::seen(description, Some((at, until))));
        }
    }
    Ok((found, stretches > budget))
}
