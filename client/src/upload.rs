//! Uploading one file: never twice (a file of the same name, size and modified time already in
//! the drive is answered instead), only when it fits in the storage left, its bytes streamed
//! from disk straight to storage, picking up what an interrupted upload left behind.

use anyhow::{Result, anyhow, bail};
use serde::Serialize;
use uuid::Uuid;

use crate::Client;
use crate::local::LocalFile;
use crate::records;
use crate::transfer::{self, Sent};

pub use crate::transfer::Progress;

/// What became of a file handed to the drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tools", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum UploadStatus {
    Uploaded,
    /// Uploaded, picking up the parts an interrupted upload had stored.
    Resumed,
    /// Not sent: an interrupted upload had stored the whole file but not recorded it; this one
    /// recorded it.
    Recovered,
    /// Not sent: the drive has a file of the same name, size and modified time.
    AlreadyStored,
    /// Not sent: the drive has it, in the trash.
    InTrash,
}

impl UploadStatus {
    /// In words, for people.
    pub fn label(self) -> &'static str {
        match self {
            UploadStatus::Uploaded => "uploaded",
            UploadStatus::Resumed => "resumed",
            UploadStatus::Recovered => "recovered",
            UploadStatus::AlreadyStored => "already stored",
            UploadStatus::InTrash => "in trash",
        }
    }
}

/// Where a file ended up in the drive.
#[derive(Debug, Clone, Copy)]
pub struct Uploaded {
    pub status: UploadStatus,
    pub id: Uuid,
    /// Parts an interrupted upload had already stored, which this one skipped.
    pub resumed_parts: Option<usize>,
}

impl Uploaded {
    pub fn found(status: UploadStatus, id: Uuid) -> Uploaded {
        Uploaded {
            status,
            id,
            resumed_parts: None,
        }
    }
}

/// One file, start to end: the stored file when the library has it already, otherwise the
/// storage left checked, then the bytes sent and the file recorded.
pub async fn upload(client: &Client, file: &LocalFile, progress: &Progress) -> Result<Uploaded> {
    if let Some(stored) = client.stored_copy(file).await? {
        return Ok(Uploaded::found(UploadStatus::AlreadyStored, stored.id));
    }
    check_room(client, 1, file.size).await?;
    let user_id = client.user_id().await?;
    send(client, file, user_id, progress).await
}

/// Refuses before anything is sent when `count` files of `bytes` in all do not fit in the
/// storage left.
pub async fn check_room(client: &Client, count: usize, bytes: u64) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let usage = client.storage_usage().await?;
    if bytes > usage.remaining_bytes {
        let files = if count == 1 {
            "1 file"
        } else {
            &format!("{count} files")
        };
        bail!(
            "not enough storage: {files} to upload need {}, but only {} of {} is left; nothing was uploaded",
            records::size(bytes),
            records::size(usage.remaining_bytes),
            records::size(usage.limit_bytes),
        );
    }
    Ok(())
}

/// Sends a file the library did not show, and records it.
pub async fn send(client: &Client, file: &LocalFile, user_id: Uuid, progress: &Progress) -> Result<Uploaded> {
    match transfer::send(client, file, user_id, progress).await? {
        Sent::Recorded { id, resumed_parts } => Ok(Uploaded {
            status: if resumed_parts.is_some() {
                UploadStatus::Resumed
            } else {
                UploadStatus::Uploaded
            },
            id,
            resumed_parts,
        }),
        Sent::Recovered { id } => recovered(client, id).await,
        Sent::KeyTaken => find_recorded(client, file).await,
    }
}

/// `/insert-file` answers the file already recorded under a key too, and the library showed
/// none: a recovered file is one of those only if it is in the trash. (One another run
/// recorded meanwhile is reported recovered.)
async fn recovered(client: &Client, id: Uuid) -> Result<Uploaded> {
    let trash = client.trash_listing().await?;
    let status = if trash.iter().any(|r| r.id == id) {
        UploadStatus::InTrash
    } else {
        UploadStatus::Recovered
    };
    Ok(Uploaded::found(status, id))
}

/// The file recorded under this file's key, which the library did not show: recorded
/// since by another run, or in the trash.
async fn find_recorded(client: &Client, file: &LocalFile) -> Result<Uploaded> {
    if let Some(stored) = client.stored_copy(file).await? {
        return Ok(Uploaded::found(UploadStatus::AlreadyStored, stored.id));
    }
    let trash = client.trash_listing().await?;
    if let Some(trashed) = trash.into_iter().find(|r| file.is_stored_as(r)) {
        return Ok(Uploaded::found(UploadStatus::InTrash, trashed.id));
    }
    Err(anyhow!(
        "the drive already records a file under this file's key, but neither the library nor the trash shows it"
    ))
}
