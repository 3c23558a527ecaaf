//! The words found inside a file (moments): what kind they are, and a stretch of speech as a
//! captions job reads it back. The data crate stores and searches them (`db::moments`).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What kind of words a moment holds, whatever the file's format: `text` is written words (a
/// text file, a PDF's text layer, OCR), `speech` what is said (transcripts, captions), `visual`
/// what a model saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum EntryType {
    Speech,
    Visual,
    Text,
}

impl EntryType {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryType::Speech => "speech",
            EntryType::Visual => "visual",
            EntryType::Text => "text",
        }
    }

    pub fn parse(s: &str) -> Option<EntryType> {
        match s {
            "speech" => Some(EntryType::Speech),
            "visual" => Some(EntryType::Visual),
            "text" => Some(EntryType::Text),
            _ => None,
        }
    }
}

crate::column::text_column!(EntryType, "moment entry type");

/// A stretch of what is said in a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct Said {
    /// Seconds from the start.
    pub at: f64,
    pub until: f64,
    pub text: String,
}
