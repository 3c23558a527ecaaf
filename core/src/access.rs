//! Moving a file's bytes between the private and the public bucket: the access switch, and
//! trash and restore of a public file (a trashed file is never in the public bucket, where
//! anyone could read it); and renaming a file, whose public object is stored again under its
//! new name.
//!
//! A move copies, then records where the bytes are and queues the old copy's removal in one
//! transaction, then removes the old copy: a crash or a failure at any step leaves the record
//! pointing at bytes that exist, and at most a queued removal for the sweep. Moves of one file
//! take turns ([`locks::try_lock_file`]), so two concurrent switches can never both copy from,
//! or both remove, the same copy.

use crate::db::events::EventKind;
use crate::db::files::{self, FileRow};
use crate::db::{folders, locks};
use crate::id::{FileId, FolderId, UserId};
use crate::storage::{Bucket, Storage, StorageError, StoredHeaders};
use crate::{maintenance, mirror};
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
    /// A rename onto a name another file in the folder has: the path taken.
    #[error("{0} is taken: another file in the folder has that name")]
    NameTaken(String),
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
    let mut tx = take_turn(db, file_id, None).await?;
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
    storage.copy(from, key, to, key, file.file_size, &headers).await?;
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
    let told = match how {
        Move::Toggle => EventKind::Access,
        Move::Trash => EventKind::Trashed,
        Move::Restore => EventKind::Restored,
    };
    mirror::files_changed(
        &mut tx,
        user_id,
        told,
        std::slice::from_ref(&moved),
        mirror::nothing_more,
    )
    .await?;
    tx.commit().await?;
    if let Err(cause) = maintenance::remove_object(db, storage, from, key).await {
        tracing::warn!(file.id = %file.id, %cause, "the old copy stays queued for the sweep");
    }
    Ok(moved)
}

/// A transaction holding the turn on `file_id`'s moves, and first, when `names` says, the
/// names of a folder of an account's (the locks' order). Turns are waited for without holding
/// a pooled connection: many switches of one file at once must not take every connection the
/// process has.
async fn take_turn(
    db: &PgPool,
    file_id: FileId,
    names: Option<(UserId, Option<FolderId>)>,
) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, MoveError> {
    let waited = tokio::time::Instant::now();
    loop {
        let mut tx = db.begin().await?;
        if let Some((user_id, folder_id)) = names {
            locks::lock_names(&mut tx, user_id, folder_id).await?;
        }
        if locks::try_lock_file(&mut tx, file_id).await? {
            return Ok(tx);
        }
        drop(tx);
        if waited.elapsed() > TURN_WAIT {
            return Err(MoveError::Busy);
        }
        let jitter = rand::random_range(10..50);
        tokio::time::sleep(std::time::Duration::from_millis(jitter)).await;
    }
}

/// Renames the caller's file (not trashed) to `name`, which no other file in its folder has
/// (case aside; 409 with the path otherwise). The record's name is what a private file's
/// links download under; a public file's object is stored again in place with the new name in
/// its headers (on the store's side), as its permanent link serves it, before the rename is
/// recorded.
pub async fn rename(
    db: &PgPool,
    storage: &Storage,
    user_id: UserId,
    file_id: FileId,
    name: &str,
) -> Result<FileRow, MoveError> {
    let folder_id = files::find_owned(db, user_id, file_id)
        .await?
        .ok_or(MoveError::NotFound)?
        .folder_id;
    let mut tx = take_turn(db, file_id, Some((user_id, folder_id))).await?;
    let file = files::find_owned(&mut *tx, user_id, file_id)
        .await?
        .ok_or(MoveError::NotFound)?;
    if file.folder_id != folder_id {
        // Moved meanwhile: the names held are another folder's.
        return Err(MoveError::Busy);
    }
    if file.trashed_at.is_some() {
        return Err(MoveError::Trashed);
    }
    if file.file_name == name {
        return Ok(file);
    }
    if folders::name_taken(&mut tx, user_id, file.folder_id, name, Some(file.id)).await? {
        let folder = folders::path_of(db, file.folder_id).await?.unwrap_or_default();
        return Err(MoveError::NameTaken(format!("{folder}/{name}")));
    }
    if file.bucket == Bucket::Public {
        let headers = StoredHeaders::new(&file.mime_type, name, "inline");
        let key = file.object_key.as_str();
        storage
            .copy(file.bucket, key, file.bucket, key, file.file_size, &headers)
            .await?;
    }
    let renamed: FileRow = sqlx::query_as(&format!(
        "update files set file_name = $2 where id = $1 returning {}",
        files::COLUMNS
    ))
    .bind(file.id)
    .bind(name)
    .fetch_one(&mut *tx)
    .await?;
    let from = file.file_name.clone();
    mirror::files_changed(
        &mut tx,
        user_id,
        EventKind::Renamed,
        std::slice::from_ref(&renamed),
        |_| serde_json::Map::from_iter([("fromName".to_string(), serde_json::json!(from))]),
    )
    .await?;
    tx.commit().await?;
    Ok(renamed)
}
