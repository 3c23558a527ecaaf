//! Copying files: each copy is a new file with an object of its own (copied on the store's
//! side, nothing through this process), private, counted against the account, taking what is
//! known of its source ([`files::carry`]) and entering the drive as any file does
//! ([`entry::enter`]: its event, its folder's rules).
//!
//! Crash-safe in three steps: room for every copy is reserved under its new key first (all or
//! none); then the objects are copied; then the copies are recorded and their reservations end,
//! in one transaction. A crash between leaves reservations that lapse, and the sweep removes
//! what was copied under them.

use chrono::{TimeDelta, Utc};
use sqlx::PgPool;

use crate::db::files::{self, FileRow, NewFile};
use crate::db::reservations::{self, Reserve};
use crate::db::{events::EventKind, folders};
use crate::entry::{self, Entered};
use crate::id::{FileId, FolderId, JobId, UserId};
use crate::storage::{Bucket, Storage, StorageError, StoredHeaders};

/// How long a copy's reservation holds its room: a copy on the store's side of even 2 TB ends
/// well within it.
const COPY_TIME: TimeDelta = TimeDelta::hours(6);

#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error("none of the files are yours")]
    NotFound,
    /// `used` of `limit` bytes are taken (stored and reserved); the copies need `wanted`.
    #[error("the storage limit is reached")]
    OverQuota { used: i64, wanted: i64 },
    /// The store failed a copy: what was reserved lapses now, and the sweep removes what was
    /// copied.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A reservation under a fresh key was refused for another reason than room.
    #[error("a new copy's key was refused: {0}")]
    KeyRefused(String),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// What a copy made: the source and its copy.
#[derive(Debug)]
pub struct Copied {
    pub from: FileId,
    pub file: FileRow,
}

/// Copies those of `ids` that are the caller's library files (not trashed) into `folder`
/// (`None`: the top), in the order given; a copy landing beside a file of its name is numbered
/// (`a (2).txt`). Answers the copies and the jobs their folder's rules queued.
pub async fn copy_files(
    db: &PgPool,
    storage: &Storage,
    user_id: UserId,
    ids: &[FileId],
    folder: Option<FolderId>,
    limit: i64,
) -> Result<(Vec<Copied>, Vec<JobId>), CopyError> {
    let mut sources = files::find_many(db, user_id, ids, false).await?;
    sources.sort_by_key(|f| ids.iter().position(|id| *id == f.id));
    if sources.is_empty() {
        return Err(CopyError::NotFound);
    }
    let keys: Vec<String> = sources
        .iter()
        .map(|_| format!("users/{user_id}/copies/{}", FileId::random()))
        .collect();

    let mut tx = db.begin().await?;
    let wanted: i64 = sources.iter().map(|f| f.file_size).sum();
    for (source, key) in sources.iter().zip(&keys) {
        let request = reservations::Request {
            user_id,
            object_key: key,
            file_size: source.file_size,
            form_until: None,
            expires_at: Utc::now() + COPY_TIME,
            max_open_uploads: None,
            request: None,
        };
        match reservations::reserve(&mut tx, request, limit).await? {
            Reserve::Reserved => {}
            Reserve::OverQuota { used, reserved, .. } => {
                return Err(CopyError::OverQuota {
                    used: used.saturating_add(reserved),
                    wanted,
                });
            }
            other => return Err(CopyError::KeyRefused(format!("{other:?}"))),
        }
    }
    tx.commit().await?;

    for (source, key) in sources.iter().zip(&keys) {
        let headers = StoredHeaders::new(&source.mime_type, &source.file_name, "inline");
        let copied = storage
            .copy(
                source.bucket,
                &source.object_key,
                Bucket::Private,
                key,
                source.file_size,
                &headers,
            )
            .await;
        if let Err(cause) = copied {
            reservations::lapse(db, &keys).await?;
            return Err(cause.into());
        }
    }

    let mut tx = db.begin().await?;
    let (mut copies, mut queued) = (Vec::new(), Vec::new());
    for (source, key) in sources.iter().zip(&keys) {
        let name = folders::free_file_name(&mut tx, user_id, folder, &source.file_name).await?;
        let new = NewFile {
            user_id,
            file_name: &name,
            file_size: source.file_size,
            mime_type: &source.mime_type,
            kind: source.kind,
            bucket: Bucket::Private,
            object_key: key,
            modified_time: source.modified_time,
            folder_id: folder,
            derivative_of: None,
            copy_of: Some(source.id),
        };
        match entry::enter(&mut tx, &new, limit, Some(EventKind::File), None).await? {
            Entered::New { file, queued: jobs } => {
                queued.extend(jobs);
                copies.push(Copied {
                    from: source.id,
                    file,
                });
            }
            Entered::Existing(file) => copies.push(Copied {
                from: source.id,
                file,
            }),
            Entered::OverQuota { used } => return Err(CopyError::OverQuota { used, wanted }),
        }
        reservations::release(&mut tx, key).await?;
    }
    tx.commit().await?;
    Ok((copies, queued))
}
