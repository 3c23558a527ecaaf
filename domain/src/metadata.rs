//! What metadata extraction learns about a file, and musical keys.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How far the drive got reading a file's metadata (`files.metadata_state`): `pending` until
/// its reading ends, then `read`, or `failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MetadataState {
    Pending,
    Read,
    Failed,
}

impl MetadataState {
    pub fn parse(s: &str) -> Option<MetadataState> {
        match s {
            "pending" => Some(MetadataState::Pending),
            "read" => Some(MetadataState::Read),
            "failed" => Some(MetadataState::Failed),
            _ => None,
        }
    }
}

crate::column::text_column!(MetadataState, "metadata state");

/// Everything extraction may know; each field stays empty when the file does not say.
/// Serializable because a job process hands it to its supervisor, which stores it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    pub title: Option<String>,
    pub artists: Vec<String>,
    pub album: Option<String>,
    pub genre: Option<String>,
    pub taken_time: Option<DateTime<Utc>>,
    pub duration_seconds: Option<f64>,
    pub tempo_bpm: Option<f64>,
    pub key: Option<MusicalKey>,
    pub location: Option<Location>,
    pub width: Option<i32>,
    pub height: Option<i32>,
    pub video_codec: Option<String>,
    pub audio_codec: Option<String>,
    /// One code per frame of the first two minutes of sound.
    pub soundprint: Option<Vec<i32>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Location {
    pub latitude: f64,
    pub longitude: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Major,
    Minor,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Major => "major",
            Mode::Minor => "minor",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "major" => Some(Mode::Major),
            "minor" => Some(Mode::Minor),
            _ => None,
        }
    }
}

crate::column::text_column!(Mode, "key mode");

/// A key: a pitch class (0 = C … 11 = B, so C# and Db are one key) and maybe a mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MusicalKey {
    pub pitch: u8,
    pub mode: Option<Mode>,
}

const NAMES: [&str; 12] = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"];

impl MusicalKey {
    /// What [`MusicalKey::parse`] reads, as a regular expression for the OpenAPI document (ECMA
    /// 262 and Python read it alike; a test holds it to `parse`).
    pub const PATTERN: &str = "^[ \\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]*[A-Ga-g][#\\u266Fb\\u266D]?[ \\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]*([Mm]|[Mm][Ii][Nn]|[Mm][Ii][Nn][Oo][Rr]|[Mm][Aa][Jj]|[Mm][Aa][Jj][Oo][Rr])?[ \\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]*$";

    /// Reads `C`, `c#`, `Db`, `F♯ minor`, `Am`, `A min`, `Bb major`, `Ebmaj`…
    pub fn parse(s: &str) -> Option<MusicalKey> {
        let s = s.trim();
        let mut chars = s.chars();
        let letter = chars.next()?.to_ascii_uppercase();
        let natural: i8 = match letter {
            'C' => 0,
            'D' => 2,
            'E' => 4,
            'F' => 5,
            'G' => 7,
            'A' => 9,
            'B' => 11,
            _ => return None,
        };
        let rest = chars.as_str();
        let (shift, rest) = match rest.chars().next() {
            Some('#' | '♯') => (1, &rest[rest.chars().next()?.len_utf8()..]),
            // After the note letter a `b` can only be a flat: no mode begins with one.
            Some('b' | '♭') => (-1, &rest[rest.chars().next()?.len_utf8()..]),
            _ => (0, rest),
        };
        let mode = match rest.trim().to_ascii_lowercase().as_str() {
            "" => None,
            "m" | "min" | "minor" => Some(Mode::Minor),
            "maj" | "major" => Some(Mode::Major),
            _ => return None,
        };
        Some(MusicalKey {
            pitch: (natural + shift).rem_euclid(12) as u8,
            mode,
        })
    }

    /// Written with sharps: `C#`, `A minor`.
    pub fn name(self) -> String {
        let note = NAMES[usize::from(self.pitch % 12)];
        match self.mode {
            Some(mode) => format!("{note} {}", mode.as_str()),
            None => note.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_key_pattern_takes_what_parse_takes() {
        let pattern = regex::Regex::new(MusicalKey::PATTERN).unwrap();
        for sample in [
            "C",
            "c#",
            "Db",
            "F\u{266F} minor",
            "Am",
            "A min",
            "Bb major",
            "Ebmaj",
            " G ",
            "H",
            "Cb",
            "CB",
            "C maj7",
            "",
            "m",
            "A\u{3000}MINOR",
            "A\u{00A0}",
            "C#m",
            "C##",
        ] {
            assert_eq!(
                pattern.is_match(sample),
                MusicalKey::parse(sample).is_some(),
                "{sample:?}"
            );
        }
    }

    use super::*;

    #[test]
    fn keys_read_every_common_spelling() {
        let key = |s| MusicalKey::parse(s).map(MusicalKey::name);
        assert_eq!(key("C").as_deref(), Some("C"));
        assert_eq!(key("c#").as_deref(), Some("C#"));
        assert_eq!(key("Db major").as_deref(), Some("C# major"));
        assert_eq!(key("F♯ minor").as_deref(), Some("F# minor"));
        assert_eq!(key("Am").as_deref(), Some("A minor"));
        assert_eq!(key("Bb").as_deref(), Some("A#"));
        assert_eq!(key("B").as_deref(), Some("B"));
        assert_eq!(key("Cb").as_deref(), Some("B"));
        assert_eq!(key("Ebmaj").as_deref(), Some("D# major"));
        assert_eq!(key("H"), None);
        assert_eq!(key("C lydian"), None);
    }
}
