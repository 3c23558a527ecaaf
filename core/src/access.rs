//! Moving a file's bytes between the private and the public bucket: the access switch, and
//! trash and restore of a public file (a trashed file is never in the public bucket, where
//! anyone could read it).
//!
//! A move copies, then records where the bytes are and queues the old copy's removal in one
//! transaction, then removes the old copy: a crash or a failure at any step leaves the record
//! pointing at bytes that exist, and at most a queued removal for the sweep. Moves of one file
//! take turns ([`locks::try_lock_file`]), so two concurrent switches can never both copy from,
//! or both remove, the same copy.

use crate::db::files::{self, FileRow};
use crate::db::locks;
use crate::id::{FileId, UserId};
use crate::maintenance;
use crate::storage::{Bucket, Storage, StorageError, StoredHeaders};
use sqlx::PgPool;

/// How long a move waits for the ones before it on the same file.
const TURN_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Why a file's bytes move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// `/toggle-file-access`: to the other bucket; a trashed file cannot be switched.
    Toggle,
    /// A public file goes to the trash: its bytes leave the public bucket.
    Trash,
    /// A file that was public when trashed comes back public.
    Restore,
}

#[derive(Debug, thiserror::Error)]
pub enum MoveError {
    #[error("no file of yours has that id")]
    NotFound,
    #[error("the file is in the trash; restore it first")]
    Trashed,
    #[error("other switches of this file are under way; try again")]
    Busy,
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// Moves the caller's file `file_id` as `how` says and answers its record afterwards. A file
/// already where the move would put it (a trash or restore repeated) is left as it is.
pub async fn move_file(
    db: &PgPool,
    storage: &Storage,
    user_id: UserId,
    file_id: FileId,
    how: Move,
) -> Result<FileRow, MoveError> {
    // Waiting turns without holding a pooled connection: many switches of one file at once
    // must not take every connection the process has.
    let waited = tokio::time::Instant::now();
    let mut tx = loop {
        let mut tx = db.begin().await?;
        if locks::try_lock_file(&mut tx, file_id).await? {
            break tx;
        }
        drop(tx);
        if waited.elapsed() > TURN_WAIT {
            return Err(MoveError::Busy);
        }
        let jitter = rand::random_range(10..50);
        tokio::time::sleep(std::time::Duration::from_millis(jitter)).await;
    };
    // Read under the lock: a switch that waited sees where the one before it left the bytes.
    let file = files::find_owned(&mut *tx, user_id, file_id)
        .await?
        .ok_or(MoveError::NotFound)?;
    let trashed = file.trashed_at.is_some();
    let from = file.bucket;
    let (to, trash) = match how {
        Move::Toggle if trashed => return Err(MoveError::Trashed),
        Move::Toggle => (from.other(), false),
        Move::Trash if trashed || from == Bucket::Private => return Ok(file),
        Move::Trash => (Bucket::Private, true),
        Move::Restore if !trashed => return Ok(file),
        Move::Restore => (Bucket::Public, false),
    };
    let key = file.object_key.as_str();
    // A removal of an older copy queued under the destination must not take this one.
    files::cancel_deletions(&mut tx, to, key).await?;
    let headers = StoredHeaders::new(&file.mime_type, &file.file_name, "inline");
    storage.copy_to(from, to, key, file.file_size, &headers).await?;
    let moved: FileRow = sqlx::query_as(&format!(
        "update files set bucket = $2,
                          trashed_at = case when $3 then now() when $4 then null else trashed_at end,
                          public_on_restore = $3
         where id = $1
         returning {}",
        files::COLUMNS
    ))
    .bind(file.id)
    .bind(to.as_str())
    .bind(trash)
    .bind(how == Move::Restore)
    .fetch_one(&mut *tx)
    .await?;
    files::queue_deletion(&mut tx, from, key).await?;
    tx.commit().await?;
    if let Err(cause) = maintenance::remove_object(db, storage, from, key).await {
        tracing::warn!(file.id = %file.id, %cause, "the old copy stays queued for the sweep");
    }
    Ok(moved)
}
