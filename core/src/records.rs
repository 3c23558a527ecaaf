//! The shapes answers and drive events share: the file record, a folder reference and the
//! job record. They live in core because the worker writes them into events too.

use crate::db::files::FileRow;
use crate::db::folders::FolderRow;
use crate::file::FileKind;
use crate::folder;
use crate::id::{FileId, FolderId};
use crate::storage::Storage;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

/// A file as the service answers it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileRecord {
    pub id: FileId,
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
    /// The folder it sits in (its path in `/select-collections`); null for the top.
    #[schema(value_type = Option<Uuid>)]
    pub folder_id: Option<FolderId>,
}

impl FileRecord {
    pub fn with_url(row: &FileRow, download_url: Option<String>) -> FileRecord {
        FileRecord {
            id: row.id,
            file_name: row.file_name.clone(),
            file_size: row.file_size,
            mime_type: row.mime_type.clone(),
            kind: row.kind,
            is_public: row.is_public(),
            download_url,
            insert_time: row.created_at,
            modified_time: row.modified_time,
            trash_time: row.trashed_at,
            folder_id: row.folder_id,
        }
    }

    /// The record as listings show it: public files carry their permanent link.
    pub fn listed(row: &FileRow, storage: &Storage) -> FileRecord {
        let url = row.is_public().then(|| storage.public_link(row.id));
        FileRecord::with_url(row, url)
    }
}

/// A folder as answers show it; `path` ends in a slash, as listings write it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FolderRef {
    pub id: FolderId,
    pub path: String,
}

impl From<FolderRow> for FolderRef {
    fn from(row: FolderRow) -> FolderRef {
        FolderRef {
            id: row.id,
            path: folder::listed(&row.path),
        }
    }
}
