//! Jobs on audio and video (and the picture-taking ones that read videos): their settings,
//! ranges and rates. Convert, which also takes pictures, is in `convert`; the sound-only ones in `sound`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::sound::check_audio_format;
use super::{MB, Rates, Settings, SettingsError, check_text, one_kind, out_of_range, whole_numbers};
use crate::file::FileKind;
use crate::job::{AudioFormat, PictureFormat, Seconds};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = CutOptions)]
pub struct Cut {
    #[serde(default)]
    pub start: Seconds,
    /// Default the end of the file.
    pub end: Option<Seconds>,
    /// Frame-exact start (re-encodes); otherwise the cut starts at the keyframe before `start`
    /// and copies the streams as they are.
    #[serde(default)]
    pub exact: bool,
    /// Fades of the sound, up to 10 seconds each (re-encodes the sound).
    #[serde(default)]
    pub fade_in: Seconds,
    #[serde(default)]
    pub fade_out: Seconds,
}

fn p1080() -> u32 {
    1080
}

const PROXY_HEIGHTS: [i64; 2] = [720, 1080];

fn proxy_heights() -> utoipa::openapi::Object {
    whole_numbers(&PROXY_HEIGHTS)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ProxyOptions)]
pub struct Proxy {
    /// 720 or 1080 (default).
    #[serde(default = "p1080")]
    #[schema(schema_with = proxy_heights)]
    pub height: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ShrinkOptions)]
pub struct Shrink {
    /// The result's size at most, in megabytes (1,000,000 bytes).
    #[serde(rename = "targetMB")]
    #[schema(minimum = 0.1, maximum = 1000000)]
    pub target_mb: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum Aspect {
    #[serde(rename = "9:16")]
    Portrait,
    #[serde(rename = "1:1")]
    Square,
    #[serde(rename = "4:5")]
    Tall,
    #[serde(rename = "16:9")]
    Wide,
}

impl Aspect {
    /// Width over height.
    pub fn ratio(self) -> (u32, u32) {
        match self {
            Aspect::Portrait => (9, 16),
            Aspect::Square => (1, 1),
            Aspect::Tall => (4, 5),
            Aspect::Wide => (16, 9),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ReframeOptions)]
pub struct Reframe {
    /// Cropped from the middle to this shape, after any rotation.
    pub aspect: Option<Aspect>,
    /// Clockwise: 90, 180 or 270.
    #[schema(minimum = 90, maximum = 270, multiple_of = 90)]
    pub rotate: Option<u32>,
}

fn five_seconds() -> Seconds {
    Seconds(5.0)
}

fn gif_width() -> u32 {
    480
}

fn gif_fps() -> u32 {
    12
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = GifOptions)]
pub struct Gif {
    #[serde(default)]
    pub start: Seconds,
    /// Up to 15 seconds; default 5.
    #[serde(default = "five_seconds")]
    pub length: Seconds,
    /// 120 to 960 pixels; default 480.
    #[serde(default = "gif_width")]
    #[schema(minimum = 120, maximum = 960)]
    pub width: u32,
    /// 5 to 24; default 12.
    #[serde(default = "gif_fps")]
    #[schema(minimum = 5, maximum = 24)]
    pub fps: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = BurnInOptions)]
pub struct BurnIn {
    /// The running time (hours:minutes:seconds.frames), top left.
    #[serde(default)]
    pub timecode: bool,
    /// A line of text, bottom centre: 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub text: Option<String>,
    /// What is said, as captions at the bottom (from what was read of the file: readForSearch
    /// first).
    #[serde(default)]
    pub captions: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = JoinOptions)]
pub struct Join {
    /// Audio only: mp3 (default), m4a, wav or flac. Videos join into an mp4.
    pub format: Option<AudioFormat>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = StillsOptions)]
pub struct Stills {
    /// One moment.
    pub at: Option<Seconds>,
    /// Several moments (1 to 100), in the order wanted.
    #[schema(min_items = 1, max_items = 100)]
    pub moments: Option<Vec<Seconds>>,
    /// A still every so many seconds from the start (at least 0.5).
    pub every: Option<Seconds>,
    /// jpg (default), png or webp.
    #[serde(default = "jpg")]
    pub format: PictureFormat,
}

fn jpg() -> PictureFormat {
    PictureFormat::Jpg
}

/// Stills one job may make.
pub const MAX_STILLS: usize = 1000;

fn twelve() -> u32 {
    12
}

fn four() -> u32 {
    4
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ContactSheetOptions)]
pub struct ContactSheet {
    /// Frames taken from a video, evenly spaced: 2 to 100; default 12.
    #[serde(default = "twelve")]
    #[schema(minimum = 2, maximum = 100)]
    pub count: u32,
    /// 1 to 12; default 4.
    #[serde(default = "four")]
    #[schema(minimum = 1, maximum = 12)]
    pub columns: u32,
}

/// stripMetadata takes no settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = StripMetadataOptions)]
pub struct StripMetadata {}

/// A video's thumbnail taken from a frame (`/set-video-thumbnail` with `at`; not through
/// `/create-file-job`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = VideoThumbnailOptions)]
pub struct VideoThumbnail {
    /// The moment of the frame.
    pub at: Seconds,
}

/// The drive's own reading of a new file takes no settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ReadMetadataOptions)]
pub struct ReadMetadata {}

pub(super) const VIDEOS: Option<&[FileKind]> = Some(&[FileKind::Video]);
pub(super) const VIDEOS_OR_AUDIO: Option<&[FileKind]> = Some(&[FileKind::Video, FileKind::Audio]);

/// Encoding video: a few megabytes of input a second on this farm's cores.
pub(super) const ENCODING: Rates = Rates {
    per_file: 0.5,
    bytes_per_second: 2.0 * MB,
};

const TAKING_PICTURES: Rates = Rates {
    per_file: 1.0,
    bytes_per_second: 200.0 * MB,
};

fn check_fade(field: &str, fade: Seconds) -> Result<(), SettingsError> {
    if fade.0 > 10.0 {
        return Err(out_of_range(field, "a fade is up to 10 seconds"));
    }
    Ok(())
}

impl Settings for Cut {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        VIDEOS_OR_AUDIO
    }

    fn check(&self) -> Result<(), SettingsError> {
        if let Some(end) = self.end
            && end <= self.start
        {
            return Err(out_of_range("options.end", "end comes after start"));
        }
        check_fade("options.fadeIn", self.fade_in)?;
        check_fade("options.fadeOut", self.fade_out)
    }

    fn rates(&self) -> Rates {
        if !self.exact && self.fade_in.0 == 0.0 && self.fade_out.0 == 0.0 {
            // Streams copied, not encoded.
            return Rates {
                per_file: 0.2,
                bytes_per_second: 150.0 * MB,
            };
        }
        ENCODING
    }
}

impl Settings for Proxy {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        VIDEOS
    }

    fn check(&self) -> Result<(), SettingsError> {
        if !PROXY_HEIGHTS.contains(&i64::from(self.height)) {
            return Err(out_of_range("options.height", "height is 720 or 1080"));
        }
        Ok(())
    }

    fn rates(&self) -> Rates {
        ENCODING
    }
}

impl Settings for Shrink {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        VIDEOS
    }

    fn check(&self) -> Result<(), SettingsError> {
        if !(self.target_mb.is_finite() && (0.1..=1_000_000.0).contains(&self.target_mb)) {
            return Err(out_of_range("options.targetMB", "targetMB is 0.1 to 1000000"));
        }
        Ok(())
    }

    fn rates(&self) -> Rates {
        ENCODING
    }
}

impl Settings for Reframe {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        VIDEOS
    }

    fn check(&self) -> Result<(), SettingsError> {
        match self.rotate {
            Some(90 | 180 | 270) => Ok(()),
            Some(_) => Err(out_of_range("options.rotate", "rotate is 90, 180 or 270")),
            None if self.aspect.is_none() => Err(out_of_range(
                "options.aspect",
                "give an aspect (9:16, 1:1, 4:5, 16:9), a rotation or both",
            )),
            None => Ok(()),
        }
    }

    fn rates(&self) -> Rates {
        ENCODING
    }
}

impl Settings for Gif {
    fn makes(&self, _taken: &[FileKind]) -> Vec<FileKind> {
        vec![FileKind::Image]
    }

    fn kinds(&self) -> Option<&'static [FileKind]> {
        VIDEOS
    }

    fn check(&self) -> Result<(), SettingsError> {
        if !(self.length.0 > 0.0 && self.length.0 <= 15.0) {
            return Err(out_of_range("options.length", "length is up to 15 seconds"));
        }
        if !(120..=960).contains(&self.width) {
            return Err(out_of_range("options.width", "width is 120 to 960 pixels"));
        }
        if !(5..=24).contains(&self.fps) {
            return Err(out_of_range("options.fps", "fps is 5 to 24"));
        }
        Ok(())
    }

    fn rates(&self) -> Rates {
        ENCODING
    }
}

impl Settings for BurnIn {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        VIDEOS
    }

    fn check(&self) -> Result<(), SettingsError> {
        match &self.text {
            Some(text) => check_text("options.text", text),
            None if !self.timecode && !self.captions => Err(out_of_range(
                "options.text",
                "give text, timecode, captions or several of them",
            )),
            None => Ok(()),
        }
    }

    fn rates(&self) -> Rates {
        ENCODING
    }

    fn reads_speech(&self) -> bool {
        self.captions
    }
}

impl Settings for Join {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        VIDEOS_OR_AUDIO
    }

    fn check(&self) -> Result<(), SettingsError> {
        self.format.map_or(Ok(()), check_audio_format)
    }

    fn rates(&self) -> Rates {
        ENCODING
    }

    fn input_count(&self) -> (usize, usize) {
        (2, 50)
    }

    fn check_inputs(&self, kinds: &[FileKind]) -> Result<(), SettingsError> {
        one_kind(kinds)?;
        if self.format.is_some() && kinds.first() == Some(&FileKind::Video) {
            return Err(out_of_range(
                "options.format",
                "format is for joining audio; videos join into an mp4",
            ));
        }
        Ok(())
    }
}

impl Settings for Stills {
    fn makes(&self, _taken: &[FileKind]) -> Vec<FileKind> {
        vec![FileKind::Image]
    }

    fn kinds(&self) -> Option<&'static [FileKind]> {
        VIDEOS
    }

    fn check(&self) -> Result<(), SettingsError> {
        let given = [self.at.is_some(), self.moments.is_some(), self.every.is_some()];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err(out_of_range(
                "options.at",
                "give one of at (a moment), moments (a list) or every (seconds)",
            ));
        }
        if let Some(moments) = &self.moments
            && !(1..=100).contains(&moments.len())
        {
            return Err(out_of_range("options.moments", "moments lists 1 to 100 times"));
        }
        if let Some(every) = self.every
            && every.0 < 0.5
        {
            return Err(out_of_range("options.every", "every is at least 0.5 seconds"));
        }
        Ok(())
    }

    fn rates(&self) -> Rates {
        TAKING_PICTURES
    }
}

impl Settings for ContactSheet {
    fn makes(&self, _taken: &[FileKind]) -> Vec<FileKind> {
        vec![FileKind::Image]
    }

    fn kinds(&self) -> Option<&'static [FileKind]> {
        Some(&[FileKind::Video, FileKind::Image])
    }

    fn check(&self) -> Result<(), SettingsError> {
        if !(2..=100).contains(&self.count) {
            return Err(out_of_range("options.count", "count is 2 to 100"));
        }
        if !(1..=12).contains(&self.columns) {
            return Err(out_of_range("options.columns", "columns is 1 to 12"));
        }
        Ok(())
    }

    fn rates(&self) -> Rates {
        TAKING_PICTURES
    }

    fn check_inputs(&self, kinds: &[FileKind]) -> Result<(), SettingsError> {
        one_kind(kinds)
    }
}

impl Settings for StripMetadata {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        Some(&[FileKind::Image, FileKind::Video, FileKind::Audio])
    }

    fn rates(&self) -> Rates {
        Rates {
            per_file: 0.3,
            bytes_per_second: 30.0 * MB,
        }
    }

    fn check_inputs(&self, kinds: &[FileKind]) -> Result<(), SettingsError> {
        one_kind(kinds)
    }
}

impl Settings for VideoThumbnail {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        VIDEOS
    }

    fn input_count(&self) -> (usize, usize) {
        (1, 1)
    }

    fn rates(&self) -> Rates {
        TAKING_PICTURES
    }

    fn downloads(&self) -> bool {
        false
    }
}

impl Settings for ReadMetadata {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        Some(&[FileKind::Video, FileKind::Audio, FileKind::Image])
    }

    fn rates(&self) -> Rates {
        Rates {
            per_file: 1.0,
            bytes_per_second: 20.0 * MB,
        }
    }
}
