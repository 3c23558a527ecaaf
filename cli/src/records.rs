//! Shapes the service answers that several commands read. `--json` prints them back in the
//! service's own field names.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A file as `/select-user-files`, `/select-trashed-files`, `/generate-download-url` and
/// `/toggle-file-access` answer it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileRecord {
    pub id: Uuid,
    pub file_name: String,
    pub file_size: u64,
    pub mime_type: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub is_public: bool,
    pub download_url: Option<String>,
    pub insert_time: DateTime<Utc>,
    pub modified_time: Option<DateTime<Utc>>,
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
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Tally {
    pub bytes: u64,
    pub objects: u64,
}
