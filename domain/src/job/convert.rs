//! Convert: videos, audio or pictures into another format of their kind, and the formats
//! other jobs write too.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{MB, Rates, Settings, SettingsError, out_of_range};
use crate::file::FileKind;
use crate::job::PictureFormat;

/// What a convert makes: a picture, video or audio format; inputs are of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MediaFormat {
    #[serde(alias = "jpeg")]
    Jpg,
    Png,
    Webp,
    Mp4,
    Webm,
    Mov,
    Mp3,
    M4a,
    Wav,
    Flac,
    Ogg,
}

impl MediaFormat {
    pub fn kind(self) -> FileKind {
        match self.picture() {
            Some(_) => FileKind::Image,
            None if self.video().is_some() => FileKind::Video,
            None => FileKind::Audio,
        }
    }

    pub fn picture(self) -> Option<PictureFormat> {
        match self {
            MediaFormat::Jpg => Some(PictureFormat::Jpg),
            MediaFormat::Png => Some(PictureFormat::Png),
            MediaFormat::Webp => Some(PictureFormat::Webp),
            _ => None,
        }
    }

    pub fn video(self) -> Option<VideoFormat> {
        match self {
            MediaFormat::Mp4 => Some(VideoFormat::Mp4),
            MediaFormat::Webm => Some(VideoFormat::Webm),
            MediaFormat::Mov => Some(VideoFormat::Mov),
            _ => None,
        }
    }

    pub fn audio(self) -> Option<AudioFormat> {
        match self {
            MediaFormat::Mp3 => Some(AudioFormat::Mp3),
            MediaFormat::M4a => Some(AudioFormat::M4a),
            MediaFormat::Wav => Some(AudioFormat::Wav),
            MediaFormat::Flac => Some(AudioFormat::Flac),
            MediaFormat::Ogg => Some(AudioFormat::Ogg),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum VideoFormat {
    Mp4,
    Webm,
    Mov,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AudioFormat {
    Mp3,
    M4a,
    Wav,
    Flac,
    Ogg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum VideoCodec {
    #[default]
    H264,
    Hevc,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ConvertOptions)]
pub struct Convert {
    pub format: MediaFormat,
    /// Pictures: the longer edge at most this many pixels (never enlarged); 16 to 20000.
    #[schema(minimum = 16, maximum = 20000)]
    pub max_edge: Option<u32>,
    /// mp4 and mov: h264 (default) or hevc; webm is always VP9 with Opus. Left out of the
    /// stored settings when not given, as it means nothing for pictures and audio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codec: Option<VideoCodec>,
}

impl Settings for Convert {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        Some(match self.format.kind() {
            FileKind::Image => &[FileKind::Image],
            FileKind::Video => &[FileKind::Video],
            _ => &[FileKind::Audio],
        })
    }

    fn check(&self) -> Result<(), SettingsError> {
        match (self.max_edge, self.codec) {
            (Some(_), _) if self.format.picture().is_none() => {
                Err(out_of_range("options.maxEdge", "maxEdge is for pictures"))
            }
            (Some(edge), _) if !(16..=20_000).contains(&edge) => {
                Err(out_of_range("options.maxEdge", "maxEdge is 16 to 20000 pixels"))
            }
            (_, Some(_)) if !matches!(self.format, MediaFormat::Mp4 | MediaFormat::Mov) => Err(out_of_range(
                "options.codec",
                "codec is for mp4 and mov (webm is always VP9)",
            )),
            _ => Ok(()),
        }
    }

    fn rates(&self) -> Rates {
        match self.format.picture() {
            Some(_) => Rates {
                per_file: 0.3,
                bytes_per_second: 30.0 * MB,
            },
            None => super::av::ENCODING,
        }
    }
}
