//! Periodic clean-up that keeps storage and records in step. Run by `drive-api admin sweep`
//! (and by the worker farm on a schedule once it exists). Every step is idempotent: running
//! it twice, or on two machines at once, does no harm.

use chrono::{DateTime, TimeDelta, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::db::{files, uploads};
use crate::storage::{Bucket, Storage, StorageError};

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
) -> Result<Vec<Uuid>, SweepError> {
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
/// were deleted); answers how many were removed.
pub async fn retry_object_deletions(db: &PgPool, storage: &Storage) -> Result<usize, SweepError> {
    let mut removed = 0;
    for queued in files::queued_deletions(db).await? {
        let bucket = Bucket::parse(&queued.bucket).unwrap_or(Bucket::Private);
        storage.delete(bucket, &queued.object_key).await?;
        files::deletion_done(db, &queued.bucket, &queued.object_key).await?;
        removed += 1;
    }
    Ok(removed)
}
