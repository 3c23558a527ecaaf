//! The library's tools, as the spec names them: upload a file and get its link, a fresh link,
//! the library newest first, trash or delete, restore, public or private, and storage usage.
//! Each is a call or two of the client library; answers are typed, so each declares its schema.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;
use chrono::{DateTime, TimeDelta, Utc};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::Failure;
use crate::files::Batch;
use crate::local::LocalFile;
use crate::records::{FileRecord, StorageUsage};
use crate::search::SearchQuery;
use crate::spool::{self, SpoolError};
use crate::upload::{self, Progress, UploadStatus};
use crate::{Client, has_code};

/// How long `/generate-download-url`'s link to a private file works.
const PRIVATE_LINK_LIFETIME: TimeDelta = TimeDelta::hours(6);
const DEFAULT_PAGE: usize = 50;
const LARGEST_PAGE: usize = 200;
const MOST_IDS: usize = 100;

/// A file of the drive, as every library tool answers it: the drive's record, and how long its
/// link works.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct File {
    #[serde(flatten)]
    pub record: FileRecord,
    /// When `downloadUrl` stops working; null for a public file's permanent link or no link.
    pub link_expires_at: Option<DateTime<Utc>>,
}

impl File {
    fn from_record(record: FileRecord) -> File {
        // A private file's link is made fresh by the call that answered it.
        let link_expires_at =
            (record.download_url.is_some() && !record.is_public).then(|| Utc::now() + PRIVATE_LINK_LIFETIME);
        File {
            record,
            link_expires_at,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct LocalUpload {
    /// The file to upload, on the machine this server runs on. Best given absolute; a
    /// relative path is taken from the server's working folder.
    pub path: PathBuf,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SentUpload {
    /// The file's name in the drive, such as `report.pdf`.
    pub file_name: String,
    /// The file's bytes, base64-encoded (standard alphabet, padded). At most 100 MiB of bytes.
    pub content_base64: String,
    /// When the file was last modified (RFC 3339). Give it, so that sending the same file
    /// again answers the stored one instead of storing it twice; without it, now is taken.
    pub modified_time: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadAnswer {
    /// `uploaded`; `resumed` (an interrupted upload of it was picked up); `recovered` (its
    /// bytes were stored by an interrupted upload and are now recorded); `alreadyStored` (the
    /// drive has a file of the same name, size and modified time: nothing was sent);
    /// `inTrash` (it has one in the trash: restore it with restore_files).
    pub status: UploadStatus,
    pub file: File,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FileId {
    /// The file's id (a UUID), as list_files or upload_file answer it.
    pub id: Uuid,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Page {
    /// How many files to answer, 1 to 200 (50 when not given).
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<usize>,
    /// The `nextCursor` of the previous page, to go on where it ended.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// Newest first.
    pub files: Vec<File>,
    /// Pass it as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Removal {
    /// The files' ids, 1 to 100.
    #[schemars(length(min = 1, max = 100))]
    pub ids: Vec<Uuid>,
    /// False (the default) moves the files to the trash, from where restore_files brings them
    /// back. True deletes them for good: their bytes are gone and cannot be recovered.
    #[serde(default)]
    pub permanently: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Removed {
    /// The files trashed (or deleted, when `permanently`).
    pub ids: Vec<Uuid>,
    /// Ids passed over: not in the library (already in the trash?) or not the caller's.
    pub not_found: Vec<Uuid>,
    pub permanently: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Restoration {
    /// The trashed files' ids, 1 to 100.
    #[schemars(length(min = 1, max = 100))]
    pub ids: Vec<Uuid>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Restored {
    /// The files brought back to the library.
    pub ids: Vec<Uuid>,
    /// Ids passed over: not in the trash.
    pub not_found: Vec<Uuid>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Access {
    /// The file's id.
    pub id: Uuid,
    /// True: anyone with its permanent link can download it. False: only 6-hour links work.
    pub public: bool,
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Nothing {}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// The plan, or null for an account without one.
    pub plan: Option<String>,
    pub used_bytes: u64,
    pub limit_bytes: u64,
    pub remaining_bytes: u64,
    /// Files stored, the trash included.
    pub files: u64,
}

impl From<StorageUsage> for Usage {
    fn from(usage: StorageUsage) -> Usage {
        Usage {
            plan: usage.plan,
            used_bytes: usage.used_bytes,
            limit_bytes: usage.limit_bytes,
            remaining_bytes: usage.remaining_bytes,
            files: usage.objects,
        }
    }
}

async fn upload(client: &Client, file: &LocalFile) -> Result<UploadAnswer> {
    let nothing: Progress = Arc::new(|_| {});
    let uploaded = upload::upload(client, file, &nothing).await?;
    let record = if uploaded.status == UploadStatus::InTrash {
        let trash = client.trash_listing().await?;
        trash.into_iter().find(|f| f.id == uploaded.id)
    } else {
        Some(client.download_link(uploaded.id).await?)
    };
    let record = record.ok_or_else(|| {
        Failure::new("the uploaded file vanished before its link was made; call list_files")
    })?;
    Ok(UploadAnswer {
        status: uploaded.status,
        file: File::from_record(record),
    })
}

pub(super) async fn upload_local_file(client: &Client, input: LocalUpload) -> Result<UploadAnswer> {
    let file = LocalFile::open(&input.path)
        .map_err(|e| Failure::new(format!("{e:#}")).next("Give the path of a file this server can read."))?;
    upload(client, &file).await
}

pub(super) async fn upload_sent_file(client: &Client, input: SentUpload) -> Result<UploadAnswer> {
    let spooled = spool::decode(input.content_base64).await.map_err(explain_spool)?;
    let file = spooled
        .as_file(&input.file_name, input.modified_time)
        .map_err(explain_spool)?;
    upload(client, &file).await
}

/// A sent file that could not be spooled, as the tool's caller is told it.
fn explain_spool(e: SpoolError) -> Failure {
    match e {
        SpoolError::TooLarge => Failure::new(format!("contentBase64 {e}."))
            .next("Upload larger files with the drive CLI, or run this server over stdio and pass a path."),
        SpoolError::NotBase64(_) => Failure::new(format!("contentBase64: {e}."))
            .next("Send the file's bytes in standard base64 with padding, no line breaks."),
        SpoolError::BadName => Failure::new(format!("fileName: {e}.")),
        SpoolError::Io(_) => Failure::new(format!("{e}")),
    }
}

pub(super) async fn get_download_link(client: &Client, input: FileId) -> Result<File> {
    Ok(File::from_record(client.download_link(input.id).await?))
}

pub(super) async fn list_library(client: &Client, input: Page) -> Result<Listing> {
    let limit = input.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=LARGEST_PAGE).contains(&limit) {
        return Err(Failure::new(format!("limit must be 1 to {LARGEST_PAGE}, not {limit}")).into());
    }
    // Newest first, straight from the service's pages: its cursor is this tool's.
    let query = SearchQuery {
        sort: Some("newest".to_string()),
        limit: Some(limit as u32),
        cursor: input.cursor,
        ..SearchQuery::default()
    };
    let found = match client.search(&query).await {
        Err(e) if has_code(&e, "invalid_field") => {
            return Err(Failure::new("cursor is not one list_files answered")
                .next("Pass the nextCursor of the previous page, or no cursor to start over.")
                .into());
        }
        found => found?,
    };
    let next_cursor = found.next_cursor;
    let page = found.files.into_iter().map(FileRecord::from);
    Ok(Listing {
        files: page.map(File::from_record).collect(),
        next_cursor,
    })
}

pub(super) async fn remove_files(client: &Client, input: Removal) -> Result<Removed> {
    check_ids(&input.ids)?;
    let batch = if input.permanently {
        Batch::Delete
    } else {
        Batch::Trash
    };
    let outcome = client.batch(batch, &input.ids).await?;
    Ok(Removed {
        ids: outcome.done,
        not_found: outcome.skipped,
        permanently: input.permanently,
    })
}

pub(super) async fn restore_files(client: &Client, input: Restoration) -> Result<Restored> {
    check_ids(&input.ids)?;
    let outcome = client.batch(Batch::Restore, &input.ids).await?;
    Ok(Restored {
        ids: outcome.done,
        not_found: outcome.skipped,
    })
}

pub(super) async fn set_file_access(client: &Client, input: Access) -> Result<File> {
    let (_, file) = client.set_access(input.id, input.public).await?.ok_or_else(|| {
        Failure::new(format!(
            "No file in the library has id {} (file_not_found).",
            input.id
        ))
        .next("Find the id with list_files; a trashed file must be restored with restore_files first.")
    })?;
    Ok(File::from_record(file))
}

pub(super) async fn get_storage_usage(client: &Client, _: Nothing) -> Result<Usage> {
    Ok(client.storage_usage().await?.into())
}

fn check_ids(ids: &[Uuid]) -> Result<(), Failure> {
    if ids.is_empty() || ids.len() > MOST_IDS {
        return Err(Failure::new(format!(
            "ids must hold 1 to {MOST_IDS} ids, not {}",
            ids.len()
        )));
    }
    Ok(())
}
