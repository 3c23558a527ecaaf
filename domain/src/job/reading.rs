//! readForSearch: the owner has files read for searching inside them (`/search-files`'s
//! `query`). The job turns each file into moments, embeds them and stores them. captions:
//! what was read of a video or audio file written out as subtitles.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{MB, Rates, Settings};
use crate::file::FileKind;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ReadForSearchOptions)]
pub struct ReadForSearch {}

/// The kinds of file there is a source of moments for (the worker's `reading` module): text
/// files (their text), PDFs (the text layer, OCR of scanned pages), pictures (OCR), audio and
/// videos (speech).
const READABLE: &[FileKind] = &[
    FileKind::Text,
    FileKind::Pdf,
    FileKind::Image,
    FileKind::Audio,
    FileKind::Video,
];

impl Settings for ReadForSearch {
    /// Moments for search: no files.
    fn makes(&self, _taken: &[FileKind]) -> Vec<FileKind> {
        Vec::new()
    }

    fn kinds(&self) -> Option<&'static [FileKind]> {
        Some(READABLE)
    }

    fn rates(&self) -> Rates {
        // Speech is the slow source: Whisper base reads a 128 kbit/s recording (16 kB a
        // second) at about a third of real time here, some 40 kB a second; a page of OCR takes
        // about a second, a text file's 5 kB a second of embedding less. Loading the models
        // (~2 s) is per file.
        Rates {
            per_file: 2.0,
            bytes_per_second: 40_000.0,
        }
    }
}

/// Captions: one file per input, its speech moments as cues. Only files read first (a
/// readForSearch job) can have captions: the API refuses others, naming them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = CaptionsOptions)]
pub struct Captions {
    /// srt (default), vtt or txt.
    #[serde(default)]
    pub format: CaptionFormat,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum CaptionFormat {
    /// SubRip: numbered cues, `00:00:01,500 --> 00:00:03,000`.
    #[default]
    Srt,
    /// WebVTT: `WEBVTT`, then cues timed `00:00:01.500 --> 00:00:03.000`.
    Vtt,
    /// Plain text: what was said, a line a cue, no times.
    Txt,
}

impl CaptionFormat {
    pub fn extension(self) -> &'static str {
        match self {
            CaptionFormat::Srt => "srt",
            CaptionFormat::Vtt => "vtt",
            CaptionFormat::Txt => "txt",
        }
    }
}

const SOUND: &[FileKind] = &[FileKind::Video, FileKind::Audio];

impl Settings for Captions {
    fn makes(&self, _taken: &[FileKind]) -> Vec<FileKind> {
        vec![FileKind::Text]
    }

    fn kinds(&self) -> Option<&'static [FileKind]> {
        Some(SOUND)
    }

    fn rates(&self) -> Rates {
        // The moments are fetched from the database, the inputs never read.
        Rates {
            per_file: 0.1,
            bytes_per_second: 1000.0 * MB,
        }
    }

    fn downloads(&self) -> bool {
        false
    }

    fn reads_speech(&self) -> bool {
        true
    }
}
