//! Periodic clean-up that keeps storage and records in step. Run by `drive-api admin sweep`
//! (and by the worker farm on a schedule once it exists). Every step is idempotent: running
//! it twice, or on two machines at once, does no harm.

use crate::db::{files, generations, requests, reservations, uploads, users};
use crate::id::UploadId;
use crate::storage::{Bucket, Storage, StorageError};
use chrono::{DateTime, TimeDelta, Utc};
use sqlx::PgPool;

/// What one [`sweep`] did.
#[derive(Debug, Default)]
pub struct Swept {
    pub aborted_uploads: usize,
    pub removed_objects: usize,
    pub unrecorded_uploads: usize,
    pub forgotten_sessions: u64,
    pub finished_drops: usize,
    pub imageless_generations: usize,
}

/// How long a file request's drop may sit with files and nothing under way before the sweep
/// finishes it for a sender who left without saying so (and its `drop` event is written).
pub const DROP_IDLE: TimeDelta = TimeDelta::hours(1);

/// How long an expired session is kept, so its holder hears `session_expired` rather than
/// `unauthorized` for a day.
const SESSION_MEMORY: TimeDelta = TimeDelta::days(1);

/// The whole sweep, step after step: multipart uploads idle for `idle_for` are aborted, queued
/// object removals retried, uploads never recorded removed once their reservation expired,
/// sessions expired over a day ago forgotten, and file requests' drops idle for [`DROP_IDLE`]
/// finished, and generations with no image `image_grace` after their provider succeeded
/// failed.
pub async fn sweep(
    db: &PgPool,
    storage: &Storage,
    idle_for: TimeDelta,
    image_grace: TimeDelta,
    now: DateTime<Utc>,
) -> Result<Swept, SweepError> {
    Ok(Swept {
        aborted_uploads: abort_idle_uploads(db, storage, idle_for, now).await?.len(),
        removed_objects: retry_object_deletions(db, storage).await?,
        unrecorded_uploads: remove_unrecorded_uploads(db, storage, now).await?,
        forgotten_sessions: users::delete_sessions_expired_before(db, now - SESSION_MEMORY).await?,
        finished_drops: finish_idle_drops(db, now).await?,
        imageless_generations: fail_imageless_generations(db, storage, now - image_grace).await?,
    })
}

/// Fails the generations that succeeded at their provider before `before` and still have no
/// image in the drive (never saved, or deleted for good since), each with its `generation`
/// event, and removes an image stored for one but never recorded as a file.
pub async fn fail_imageless_generations(
    db: &PgPool,
    storage: &Storage,
    before: DateTime<Utc>,
) -> Result<usize, SweepError> {
    let mut failed = 0;
    for generation in generations::imageless(db, before).await? {
        let why = match generation.status {
            crate::generation::GenerationStatus::Done => "the image was deleted for good",
            _ => "the image was made but could not be saved to the drive",
        };
        let mut tx = db.begin().await?;
        if generations::finish_failed(&mut tx, generation.id, why, true).await? {
            failed += 1;
        }
        tx.commit().await?;
        let key = generation.object_key();
        if !files::key_is_recorded(db, &key).await? {
            storage.delete(Bucket::Private, &key).await?;
        }
    }
    Ok(failed)
}

/// Finishes the drops whose senders left with files sent and nothing under way for
/// [`DROP_IDLE`]; answers how many.
pub async fn finish_idle_drops(db: &PgPool, now: DateTime<Utc>) -> Result<usize, SweepError> {
    let mut finished = 0;
    for id in requests::idle_drops(db, now - DROP_IDLE).await? {
        if requests::finish_idle_drop(db, id).await? {
            finished += 1;
        }
    }
    Ok(finished)
}

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// Aborts the open multipart uploads that received no part for `idle_for` (the spec's 7 days
/// are [`crate::multipart::UPLOAD_LIFETIME`]; counted from the
/// newest part, or from the upload's creation when it has none); answers their row ids.
pub async fn abort_idle_uploads(
    db: &PgPool,
    storage: &Storage,
    idle_for: TimeDelta,
    now: DateTime<Utc>,
) -> Result<Vec<UploadId>, SweepError> {
    let mut aborted = Vec::new();
    for upload in uploads::all_open(db).await? {
        let parts = storage
            .list_parts(Bucket::Private, &upload.object_key, &upload.upload_id)
            .await?;
        let last_activity = parts
            .iter()
            .flatten()
            .filter_map(|p| p.last_modified)
            .chain([upload.created_at])
            .max()
            .unwrap_or(upload.created_at);
        // An upload the store no longer has is gone already; record that.
        if parts.is_none() || now - last_activity >= idle_for {
            storage
                .abort_multipart(Bucket::Private, &upload.object_key, &upload.upload_id)
                .await?;
            uploads::set_state(db, upload.id, uploads::UploadState::Aborted).await?;
            tracing::info!(upload.id = %upload.id, key = %upload.object_key, "aborted an idle multipart upload");
            aborted.push(upload.id);
        }
    }
    Ok(aborted)
}

/// Removes the objects whose deletion is still queued (the store failed when their records
/// were deleted or their files moved); answers how many were removed.
pub async fn retry_object_deletions(db: &PgPool, storage: &Storage) -> Result<usize, SweepError> {
    let mut removed = 0;
    for queued in files::queued_deletions(db).await? {
        if remove_object(db, storage, queued.bucket, &queued.object_key).await? {
            removed += 1;
        }
    }
    Ok(removed)
}

/// Removes one object whose removal is queued, and dequeues it; answers false when nothing
/// was queued for it (or another transaction holds the object's lock). The lock is held while
/// the store removes the object, and whatever writes the key again first cancels the queued
/// removals ([`files::cancel_deletions`]) under the same lock, waiting for this: a queued
/// removal never takes bytes written after it was queued.
pub async fn remove_object(
    db: &PgPool,
    storage: &Storage,
    bucket: Bucket,
    key: &str,
) -> Result<bool, SweepError> {
    let mut tx = db.begin().await?;
    let queued = files::claim_deletions(&mut tx, bucket, key).await?;
    if queued.is_empty() {
        return Ok(false);
    }
    storage.delete(bucket, key).await?;
    files::deletions_done(&mut tx, &queued).await?;
    tx.commit().await?;
    Ok(true)
}

/// Ends the upload reservations that expired by `now` without their object becoming a file:
/// aborts a multipart upload still open under the key and removes whatever was stored there,
/// so an object never recorded neither fills the store nor escapes the quota. Answers how many
/// reservations ended.
pub async fn remove_unrecorded_uploads(
    db: &PgPool,
    storage: &Storage,
    now: DateTime<Utc>,
) -> Result<usize, SweepError> {
    let mut ended = 0;
    for key in reservations::expired(db, now).await? {
        let mut tx = db.begin().await?;
        let Some(user_id) = reservations::claim_expired(&mut tx, &key, now).await? else {
            continue;
        };
        if let Some(upload) = uploads::open_under_key(db, user_id, &key).await? {
            storage
                .abort_multipart(Bucket::Private, &key, &upload.upload_id)
                .await?;
            uploads::set_state(db, upload.id, uploads::UploadState::Aborted).await?;
        }
        // A recorded key has no reservation; this guards the file's bytes all the same.
        if !files::key_is_recorded(&mut *tx, &key).await? {
            storage.delete(Bucket::Private, &key).await?;
        }
        reservations::release(&mut tx, &key).await?;
        tx.commit().await?;
        tracing::info!(key = %key, "removed an upload never recorded as a file");
        ended += 1;
    }
    Ok(ended)
}
