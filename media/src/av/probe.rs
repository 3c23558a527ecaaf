//! What an audio, video or picture file is, from its container: duration, dimensions,
//! codecs, the tags people set (title, artists, album, genre), when and where it was
//! recorded, and whether it carries cover art.

use ffmpeg::media;

use super::source::{Source, duration_of};
use super::{AvError, Input, ffmpeg};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Probe {
    pub duration: Option<f64>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub video_codec: Option<String>,
    pub audio_codec: Option<String>,
    pub title: Option<String>,
    pub artists: Vec<String>,
    pub album: Option<String>,
    pub genre: Option<String>,
    /// As the container says it (ISO 8601 as a rule).
    pub recorded: Option<String>,
    /// Latitude and longitude.
    pub location: Option<(f64, f64)>,
    /// Beats per minute, when a tag says.
    pub tempo: Option<f64>,
    /// The key as a tag writes it (`Am`, `F# minor`).
    pub key: Option<String>,
    /// A picture stream marked as cover art.
    pub has_cover: bool,
}

pub fn probe(location: &str) -> Result<Probe, AvError> {
    Ok(Input::whole(location).open()?.probe())
}

impl Source {
    /// What the opened file holds, from what opening it read.
    pub fn probe(&self) -> Probe {
        let context = &self.context;
        let mut probe = Probe {
            duration: Some(duration_of(context)).filter(|d| *d > 0.0),
            ..Probe::default()
        };
        let mut tags: Vec<(String, String)> = context
            .metadata()
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect();
        for stream in context.streams() {
            let parameters = stream.parameters();
            // The format's name (`h264`, `mp3`), not the decoder's (`mp3float`).
            let codec = Some(parameters.id().name().to_string()).filter(|n| n != "none");
            // SAFETY: reads fields of an opened stream and its parameters.
            let (cover, width, height) = unsafe {
                let s = &*stream.as_ptr();
                let p = &*s.codecpar;
                (
                    s.disposition & ffmpeg::ffi::AV_DISPOSITION_ATTACHED_PIC != 0,
                    p.width,
                    p.height,
                )
            };
            match parameters.medium() {
                media::Type::Video if cover => probe.has_cover = true,
                media::Type::Video if probe.video_codec.is_none() => {
                    probe.video_codec = codec;
                    probe.width = u32::try_from(width).ok().filter(|w| *w > 0);
                    probe.height = u32::try_from(height).ok().filter(|h| *h > 0);
                }
                media::Type::Audio if probe.audio_codec.is_none() => probe.audio_codec = codec,
                _ => {}
            }
            tags.extend(
                stream
                    .metadata()
                    .iter()
                    .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string())),
            );
        }
        let tag = |names: &[&str]| {
            names.iter().find_map(|name| {
                tags.iter()
                    .find(|(k, v)| k == name && !v.trim().is_empty())
                    .map(|(_, v)| v.trim().to_string())
            })
        };
        probe.title = tag(&["title"]);
        probe.album = tag(&["album"]);
        probe.genre = tag(&["genre"]);
        probe.artists = tag(&["artist", "album_artist", "artists"])
            .map(|a| {
                a.split(';')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        probe.recorded = tag(&["creation_time", "com.apple.quicktime.creationdate", "date"]);
        probe.location =
            tag(&["location", "com.apple.quicktime.location.iso6709"]).and_then(|l| parse_iso6709(&l));
        probe.tempo = tag(&["tbpm", "bpm", "tempo"])
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|t| (20.0..=400.0).contains(t));
        probe.key = tag(&["tkey", "initialkey", "key"]);
        probe
    }
}

/// `+37.7749-122.4194+010.000/` (ISO 6709, as phones write a video's place).
pub fn parse_iso6709(text: &str) -> Option<(f64, f64)> {
    let text = text.trim().trim_end_matches('/');
    let mut starts = text
        .char_indices()
        .filter(|(_, c)| *c == '+' || *c == '-')
        .map(|(i, _)| i);
    let (a, b) = (starts.next()?, starts.next()?);
    let end = starts.next().unwrap_or(text.len());
    let latitude: f64 = text[a..b].parse().ok()?;
    let longitude: f64 = text[b..end].parse().ok()?;
    ((-90.0..=90.0).contains(&latitude) && (-180.0..=180.0).contains(&longitude))
        .then_some((latitude, longitude))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso6709_places_read_with_or_without_altitude() {
        assert_eq!(
            parse_iso6709("+37.7749-122.4194+010.000/"),
            Some((37.7749, -122.4194))
        );
        assert_eq!(parse_iso6709("-33.8688+151.2093/"), Some((-33.8688, 151.2093)));
        assert_eq!(parse_iso6709("+91.0+10.0/"), None);
        assert_eq!(parse_iso6709("somewhere"), None);
    }
}
