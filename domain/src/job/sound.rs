//! Jobs on sound: extracting a video's sound, evening out loudness, splitting a recording at its
//! silences. (Joining, which takes videos too, is in `av`.)

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::av::{VIDEOS, VIDEOS_OR_AUDIO};
use super::{MB, Rates, Settings, SettingsError, out_of_range, whole_numbers};
use crate::file::FileKind;
use crate::job::{AudioFormat, Seconds};

fn mp3() -> AudioFormat {
    AudioFormat::Mp3
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ExtractAudioOptions)]
pub struct ExtractAudio {
    /// mp3 (default), m4a, wav or flac.
    #[serde(default = "mp3")]
    pub format: AudioFormat,
}

fn minus_fourteen() -> i32 {
    -14
}

const LOUDNESS_TARGETS: [i64; 3] = [-14, -16, -23];

fn loudness_targets() -> utoipa::openapi::Object {
    whole_numbers(&LOUDNESS_TARGETS)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = LoudnessOptions)]
pub struct Loudness {
    /// Integrated loudness in LUFS: -14 (default), -16 or -23.
    #[serde(default = "minus_fourteen")]
    #[schema(schema_with = loudness_targets)]
    pub target: i32,
}

fn one_second() -> Seconds {
    Seconds(1.0)
}

fn minus_forty() -> f64 {
    -40.0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = SplitOptions)]
pub struct Split {
    /// A quiet stretch at least this long separates pieces: 0.1 to 30 seconds; default 1.
    #[serde(default = "one_second")]
    pub silence: Seconds,
    /// Quieter than this (dBFS) is silence: -90 to -10; default -40.
    #[serde(default = "minus_forty")]
    #[schema(minimum = -90, maximum = -10)]
    pub threshold: f64,
}

const SOUND: Rates = Rates {
    per_file: 0.3,
    bytes_per_second: 10.0 * MB,
};

/// A joined audio file and an extracted sound are written as mp3, m4a, wav or flac.
pub(super) fn check_audio_format(format: AudioFormat) -> Result<(), SettingsError> {
    match format {
        AudioFormat::Ogg => Err(out_of_range("options.format", "format is mp3, m4a, wav or flac")),
        _ => Ok(()),
    }
}

impl Settings for ExtractAudio {
    fn makes(&self, _taken: &[FileKind]) -> Vec<FileKind> {
        vec![FileKind::Audio]
    }

    fn kinds(&self) -> Option<&'static [FileKind]> {
        VIDEOS
    }

    fn check(&self) -> Result<(), SettingsError> {
        check_audio_format(self.format)
    }

    fn rates(&self) -> Rates {
        SOUND
    }
}

impl Settings for Loudness {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        VIDEOS_OR_AUDIO
    }

    fn check(&self) -> Result<(), SettingsError> {
        if !LOUDNESS_TARGETS.contains(&i64::from(self.target)) {
            return Err(out_of_range("options.target", "target is -14, -16 or -23 (LUFS)"));
        }
        Ok(())
    }

    fn rates(&self) -> Rates {
        SOUND
    }
}

impl Settings for Split {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        Some(&[FileKind::Audio])
    }

    fn check(&self) -> Result<(), SettingsError> {
        if !(0.1..=30.0).contains(&self.silence.0) {
            return Err(out_of_range("options.silence", "silence is 0.1 to 30 seconds"));
        }
        if !(-90.0..=-10.0).contains(&self.threshold) {
            return Err(out_of_range("options.threshold", "threshold is -90 to -10 dB"));
        }
        Ok(())
    }

    fn rates(&self) -> Rates {
        SOUND
    }
}
