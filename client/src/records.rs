//! Shapes the service answers that several commands read. `--json` and the tool server give
//! them back in the service's own field names.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The fields of an answer not typed in its struct, kept as the service sent them, so an
/// answer printed as JSON (`--json`) is the service's whole answer.
pub type Rest = serde_json::Map<String, serde_json::Value>;

/// A file as `/select-user-files`, `/select-trashed-files`, `/generate-download-url` and
/// `/toggle-file-access` answer it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "tools", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct FileRecord {
    pub id: Uuid,
    pub file_name: String,
    /// Bytes.
    pub file_size: u64,
    pub mime_type: String,
    /// The file's kind: Video, Audio, Image, Pdf, Text, …
    #[serde(rename = "type")]
    pub kind: String,
    /// Public files have a permanent link anyone can open; private ones get 6-hour links.
    pub is_public: bool,
    /// A link that downloads the file, when this answer carries one.
    pub download_url: Option<String>,
    /// When it was uploaded.
    pub insert_time: DateTime<Utc>,
    /// When it was last modified where it came from, as the uploader said.
    pub modified_time: Option<DateTime<Utc>>,
    /// The folder it sits in; none at the top.
    #[serde(default)]
    pub folder_id: Option<Uuid>,
}

/// Names one file in the bodies of `/trash-files`, `/restore-files`, `/delete-files` and
/// `/toggle-file-access`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct FileRef {
    pub id: Uuid,
}

/// The answer of `/get-user-storage-usage`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StorageUsage {
    pub plan: Option<String>,
    pub used_bytes: u64,
    pub limit_bytes: u64,
    pub remaining_bytes: u64,
    pub objects: u64,
    pub buckets: BTreeMap<String, Tally>,
    pub kinds: BTreeMap<String, Tally>,
    /// Images generated this month against the plan's allowance.
    pub images: ImageUsage,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ImageUsage {
    pub used: u64,
    pub limit: u64,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Tally {
    pub bytes: u64,
    pub objects: u64,
}

/// A size in binary units with one decimal: `512 B`, `1.2 MiB`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(size(0), "0 B");
        assert_eq!(size(1023), "1023 B");
        assert_eq!(size(1024), "1.0 KiB");
        assert_eq!(size(1_258_291), "1.2 MiB");
        assert_eq!(size(150 * 1024 * 1024), "150.0 MiB");
        assert_eq!(size(10 * 1024_u64.pow(4)), "10.0 TiB");
    }
}
