//! Audio and video on FFmpeg's libraries (through `ffmpeg-next`, linked against the system's
//! libav*), in process. Inputs are locations FFmpeg opens itself: a presigned URL of the store
//! (read with ranged requests as the demuxer seeks, never whole) or a local path.
//!
//! - [`graph`]: the one decode → filter loop every pipeline runs on (a libavfilter graph
//!   written as text, its inputs `[v0]`, `[a0]`, `[v1]`… and outputs `[vout]`, `[aout]`).
//! - [`encode`]: that loop into encoders and a muxer ([`encode::transcode`]), and stream copy
//!   without decoding ([`encode::remux`]).
//! - [`probe`]: what a file is (duration, dimensions, codecs, tags, place and time).
//! - [`pictures`]: frames as pictures (stills, contact sheets, posters, album art).
//! - [`jobs`]: each job type as a graph and an encoding.

pub mod encode;
pub mod graph;
pub mod jobs;
pub mod pictures;
pub mod probe;
pub mod sound;
pub mod source;

use std::sync::Once;

pub use ffmpeg_next as ffmpeg;

/// Prepares FFmpeg once per process and keeps its own logging to errors.
pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // `init` only registers devices and networking; it cannot fail on these versions.
        let _ = ffmpeg::init();
        ffmpeg::util::log::set_level(ffmpeg::util::log::Level::Fatal);
    });
}

/// Why an audio or video pipeline stopped.
#[derive(Debug, thiserror::Error)]
pub enum AvError {
    /// The file cannot be read as audio or video, or lacks what the job needs.
    #[error("{0}")]
    Input(String),
    /// This machine failed (the network to the store, the disk, a missing encoder).
    #[error("{0}")]
    Machine(String),
}

impl AvError {
    pub fn is_client_error(&self) -> bool {
        matches!(self, AvError::Input(_))
    }

    /// An FFmpeg error while reading a file: its own fault when the bytes are not media,
    /// the machine's otherwise (a dropped connection is worth a retry).
    pub(crate) fn reading(what: &str, e: ffmpeg::Error) -> AvError {
        use ffmpeg::Error as E;
        match e {
            E::InvalidData
            | E::StreamNotFound
            | E::DecoderNotFound
            | E::DemuxerNotFound
            | E::PatchWelcome
            | E::Bug
            | E::BsfNotFound => AvError::Input(format!(
                "the file could not be read as audio or video ({what}: {e})"
            )),
            other => AvError::Machine(format!("{what}: {other}")),
        }
    }

    pub(crate) fn machine(what: &str, e: impl std::fmt::Display) -> AvError {
        AvError::Machine(format!("{what}: {e}"))
    }
}

/// One input of a pipeline: where it is, and the span of it to use (seconds from its start).
#[derive(Debug, Clone)]
pub struct Input {
    pub location: String,
    pub start: f64,
    pub end: Option<f64>,
}

impl Input {
    pub fn whole(location: impl Into<String>) -> Input {
        Input {
            location: location.into(),
            start: 0.0,
            end: None,
        }
    }
}
