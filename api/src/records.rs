//! Shapes shared by several routes: the file record and the file reference.

use chrono::{DateTime, Utc};
use drive_core::db::files::FileRow;
use drive_core::file::FileKind;
use drive_core::storage::Storage;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// A file as the service answers it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileRecord {
    pub id: Uuid,
    pub file_name: String,
    pub file_size: i64,
    pub mime_type: String,
    #[serde(rename = "type")]
    pub kind: FileKind,
    pub is_public: bool,
    /// A link to the bytes: the permanent public link of a public file, or a 6-hour link from
    /// `/generate-download-url`; null in listings of private files.
    pub download_url: Option<String>,
    /// When the file was recorded.
    pub insert_time: DateTime<Utc>,
    /// The source file's modified time, when the uploader said.
    pub modified_time: Option<DateTime<Utc>>,
    /// When the file went to the trash; null unless trashed.
    pub trash_time: Option<DateTime<Utc>>,
}

impl FileRecord {
    pub fn with_url(row: &FileRow, download_url: Option<String>) -> FileRecord {
        FileRecord {
            id: row.id,
            file_name: row.file_name.clone(),
            file_size: row.file_size,
            mime_type: row.mime_type.clone(),
            kind: row.kind(),
            is_public: row.is_public(),
            download_url,
            insert_time: row.created_at,
            modified_time: row.modified_time,
            trash_time: row.trashed_at,
        }
    }

    /// The record as listings show it: public files carry their permanent link.
    pub fn listed(row: &FileRow, storage: &Storage) -> FileRecord {
        let url = row.is_public().then(|| storage.public_url(&row.object_key));
        FileRecord::with_url(row, url)
    }
}

/// Names one file.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FileRef {
    pub id: Uuid,
}
