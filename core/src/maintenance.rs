//! Periodic clean-up that keeps storage and records in step. Run by `drive-api admin sweep`
//! and by every worker on a schedule (`DRIVE_SWEEP_INTERVAL_SECONDS`). Every step is idempotent: running
//! it twice, or on two machines at once, does no harm.

use crate::db::{files, forms, generations, requests, reservations, uploads, users};
use crate::id::RequestId;
use crate::rewrites::{self, RewriteError};
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
    /// Files whose keys a form wrote again, whose records followed ([`rewrites`]).
    pub rewritten_files: usize,
    /// Objects, uploads, keys or steps that failed, each logged with its cause; the rest of
    /// the sweep went on without them, and the next sweep tries them again.
    pub failures: usize,
}

/// How long a file request's drop may sit with files and nothing under way before the sweep
/// finishes it for a sender who left without saying so (and its `drop` event is written).
pub const DROP_IDLE: TimeDelta = TimeDelta::hours(1);

/// How long an expired session is kept, so its holder hears `session_expired` rather than
/// `unauthorized` for a day.
const SESSION_MEMORY: TimeDelta = TimeDelta::days(1);

/// The whole sweep, step after step: multipart uploads idle for `idle_for` are aborted, keys
/// written again by forms followed ([`follow_rewritten_keys`]), queued object removals
/// retried, uploads never recorded removed once their reservation expired, sessions expired
/// over a day ago forgotten, file requests' drops idle for [`DROP_IDLE`] finished, and
/// generations with no image `image_grace` after their provider succeeded failed. A failure
/// (the store or the database refusing one object, or a whole step) is logged and counted in
/// [`Swept::failures`], and everything else is still swept.
pub async fn sweep(
    db: &PgPool,
    storage: &Storage,
    idle_for: TimeDelta,
    image_grace: TimeDelta,
    now: DateTime<Utc>,
) -> Swept {
    let mut failures = 0;
    let mut tally = |step: &str, done: Result<Tally, SweepError>| match done {
        Ok(tally) => {
            failures += tally.failed;
            tally.done
        }
        Err(cause) => {
            tracing::warn!(step, %cause, "a sweep step failed; the next sweep tries it again");
            failures += 1;
            0
        }
    };
    let aborted_uploads = tally(
        "aborting idle uploads",
        abort_idle_uploads(db, storage, idle_for, now).await,
    );
    let rewritten_files = tally(
        "following rewritten keys",
        follow_rewritten_keys(db, storage, now).await,
    );
    let removed_objects = tally(
        "removing queued objects",
        retry_object_deletions(db, storage).await,
    );
    let unrecorded_uploads = tally(
        "removing unrecorded uploads",
        remove_unrecorded_uploads(db, storage, now).await,
    );
    let forgotten = users::delete_sessions_expired_before(db, now - SESSION_MEMORY).await;
    let finished_drops = tally("finishing idle drops", finish_idle_drops(db, now).await);
    let imageless_generations = tally(
        "failing imageless generations",
        fail_imageless_generations(db, storage, now - image_grace).await,
    );
    let forgotten_sessions = forgotten.unwrap_or_else(|cause| {
        tracing::warn!(%cause, "expired sessions were not forgotten; the next sweep tries again");
        failures += 1;
        0
    });
    Swept {
        aborted_uploads,
        removed_objects,
        unrecorded_uploads,
        forgotten_sessions,
        finished_drops,
        imageless_generations,
        rewritten_files,
        failures,
    }
}

/// What one step of the sweep did with its objects: how many it handled, and how many failed
/// (each logged where it failed).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub done: usize,
    pub failed: usize,
}

impl Tally {
    /// Counts one object's outcome: done when it answered true, nothing when false, failed
    /// (and logged) on an error.
    fn count<E: std::fmt::Display>(&mut self, what: &str, outcome: Result<bool, E>) {
        match outcome {
            Ok(true) => self.done += 1,
            Ok(false) => {}
            Err(cause) => {
                tracing::warn!(what, %cause, "the sweep could not handle this; the next sweep tries again");
                self.failed += 1;
            }
        }
    }
}

/// Fails the generations that succeeded at their provider before `before` and still have no
/// image in the drive (never saved, or deleted for good since), each with its `generation`
/// event, and removes an image stored for one but never recorded as a file.
pub async fn fail_imageless_generations(
    db: &PgPool,
    storage: &Storage,
    before: DateTime<Utc>,
) -> Result<Tally, SweepError> {
    let mut tally = Tally::default();
    for generation in generations::imageless(db, before).await? {
        let failed = fail_imageless(db, storage, &generation).await;
        tally.count(&format!("generation {}", generation.id), failed);
    }
    Ok(tally)
}

async fn fail_imageless(
    db: &PgPool,
    storage: &Storage,
    generation: &generations::GenerationRow,
) -> Result<bool, SweepError> {
    let why = match generation.status {
        crate::generation::GenerationStatus::Done => "the image was deleted for good",
        _ => "the image was made but could not be saved to the drive",
    };
    let mut tx = db.begin().await?;
    let failed = generations::finish_failed(&mut tx, generation.id, why, true).await?;
    tx.commit().await?;
    let key = generation.object_key();
    if !files::key_is_recorded(db, &key).await? {
        storage.delete(Bucket::Private, &key).await?;
    }
    Ok(failed)
}

/// Finishes the drops whose senders left with files sent and nothing under way for
/// [`DROP_IDLE`].
pub async fn finish_idle_drops(db: &PgPool, now: DateTime<Utc>) -> Result<Tally, SweepError> {
    let mut tally = Tally::default();
    for id in requests::idle_drops(db, now - DROP_IDLE).await? {
        tally.count(&format!("drop {id}"), requests::finish_idle_drop(db, id).await);
    }
    Ok(tally)
}

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    #[error(transparent)]
    Rewrite(#[from] RewriteError),
}

/// Aborts the open multipart uploads that received no part for `idle_for` (the spec's 7 days
/// are [`crate::multipart::UPLOAD_LIFETIME`]; counted from the
/// newest part, or from the upload's creation when it has none).
pub async fn abort_idle_uploads(
    db: &PgPool,
    storage: &Storage,
    idle_for: TimeDelta,
    now: DateTime<Utc>,
) -> Result<Tally, SweepError> {
    let mut tally = Tally::default();
    for upload in uploads::all_open(db).await? {
        let aborted = abort_if_idle(db, storage, &upload, idle_for, now).await;
        tally.count(&format!("upload {}", upload.id), aborted);
    }
    Ok(tally)
}

async fn abort_if_idle(
    db: &PgPool,
    storage: &Storage,
    upload: &uploads::UploadRow,
    idle_for: TimeDelta,
    now: DateTime<Utc>,
) -> Result<bool, SweepError> {
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
    if parts.is_some() && now - last_activity < idle_for {
        return Ok(false);
    }
    storage
        .abort_multipart(Bucket::Private, &upload.object_key, &upload.upload_id)
        .await?;
    uploads::set_state(db, upload.id, uploads::UploadState::Aborted).await?;
    tracing::info!(upload.id = %upload.id, key = %upload.object_key, "aborted an idle multipart upload");
    Ok(true)
}

/// Checks every key forms were issued for ([`rewrites::check`]): a record follows what a form
/// wrote again, and a key whose last form expired is forgotten, its unrecorded object queued
/// for removal. Counts the records that followed.
pub async fn follow_rewritten_keys(
    db: &PgPool,
    storage: &Storage,
    now: DateTime<Utc>,
) -> Result<Tally, SweepError> {
    let mut tally = Tally::default();
    for key in forms::all_keys(db).await? {
        let checked = rewrites::check(db, storage, &key, now).await;
        tally.count(&key, checked.map(|checked| checked.followed));
    }
    Ok(tally)
}

/// Removes the objects whose deletion is still queued (the store failed when their records
/// were deleted or their files moved, or a key's last form expired).
pub async fn retry_object_deletions(db: &PgPool, storage: &Storage) -> Result<Tally, SweepError> {
    let mut tally = Tally::default();
    for queued in files::queued_deletions(db).await? {
        let removed = remove_object(db, storage, queued.bucket, &queued.object_key).await;
        tally.count(&queued.object_key, removed);
    }
    Ok(tally)
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
/// so an object never recorded neither fills the store nor escapes the quota.
pub async fn remove_unrecorded_uploads(
    db: &PgPool,
    storage: &Storage,
    now: DateTime<Utc>,
) -> Result<Tally, SweepError> {
    let mut tally = Tally::default();
    for key in reservations::expired(db, now).await? {
        let removed = remove_unrecorded(db, storage, &key, now).await;
        tally.count(&key, removed);
    }
    Ok(tally)
}

/// Releases what `request_id`'s senders announced and never sent, once the request has stopped
/// taking files: each upload under way is aborted, its object removed and its reservation
/// ended (a form may still write for up to its hour: [`follow_rewritten_keys`] removes what it
/// leaves once it expires). What is being recorded right now is left to the sweep.
pub async fn release_request(
    db: &PgPool,
    storage: &Storage,
    request_id: RequestId,
    now: DateTime<Utc>,
) -> Result<Tally, SweepError> {
    let mut tally = Tally::default();
    for key in reservations::of_request(db, request_id).await? {
        let removed = remove_unrecorded(db, storage, &key, now).await;
        tally.count(&key, removed);
    }
    Ok(tally)
}

async fn remove_unrecorded(
    db: &PgPool,
    storage: &Storage,
    key: &str,
    now: DateTime<Utc>,
) -> Result<bool, SweepError> {
    let mut tx = db.begin().await?;
    let Some(user_id) = reservations::claim_expired(&mut tx, key, now).await? else {
        return Ok(false);
    };
    if let Some(upload) = uploads::open_under_key(db, user_id, key).await? {
        storage
            .abort_multipart(Bucket::Private, key, &upload.upload_id)
            .await?;
        uploads::set_state(db, upload.id, uploads::UploadState::Aborted).await?;
    }
    // A recorded key has no reservation; this guards the file's bytes all the same.
    if !files::key_is_recorded(&mut *tx, key).await? {
        storage.delete(Bucket::Private, key).await?;
    }
    reservations::release(&mut tx, key).await?;
    tx.commit().await?;
    tracing::info!(key = %key, "removed an upload never recorded as a file");
    Ok(true)
}
