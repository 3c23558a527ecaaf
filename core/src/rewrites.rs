//! A recorded key written again. A presigned form cannot be withdrawn and S3 POST policies have
//! no "only if absent" condition, so a form issued before `/insert-file` can write its key again
//! until it expires (2 days), with bytes of the one size the key keeps ([`db::reservations`]).
//! The drive notices by the stored object's ETag against the one it recorded
//! ([`db::forms`]): before it hands a link to a watched file's bytes out or answers a checksum
//! it kept ([`settle`]), and on every sweep ([`crate::maintenance`]). The record then follows
//! what is stored: its size (counted against the account), its digests forgotten, its
//! metadata read again. A job reads what is stored as it is (of the key's one size, so the
//! jobs' download limit holds) without a check per input, which would cost a round trip to the
//! store for each; the sweep follows. Once a key's last form has expired, an object under it
//! that no private file records is removed.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::db::{files, forms, jobs, locks, reservations};
use crate::id::JobId;
use crate::storage::{Bucket, Storage, StorageError};

#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// What [`check`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// The record followed bytes written again; the metadata reading queued for them, to ring
    /// for once committed (or left to the workers' poll).
    pub followed: bool,
    pub reading: Option<JobId>,
}

/// How long [`settle`] waits for the store before it lets the link be signed unchecked.
const SETTLE_WAIT: Duration = Duration::from_millis(500);

/// Before a link to the bytes under `key` is signed: when a form issued for the key may have
/// written it since its file was recorded, the record follows what is stored first. A key no
/// form was issued for costs one indexed look-up. Should the store fail or keep it waiting past
/// [`SETTLE_WAIT`], the link is signed as it would be without the check: the store it points at
/// is the one that did not answer, and the sweep follows the key later. A route that hands out
/// links must not go down with the store for a check of its records.
pub async fn settle(db: &PgPool, storage: &Storage, key: &str) -> Result<Checked, RewriteError> {
    if !forms::watched(db, key).await? {
        return Ok(Checked::default());
    }
    match tokio::time::timeout(SETTLE_WAIT, check(db, storage, key, Utc::now())).await {
        Ok(Err(RewriteError::Storage(cause))) => {
            tracing::warn!(key = %key, %cause, "a written-again check was left to the sweep: the store failed");
            Ok(Checked::default())
        }
        Ok(checked) => checked,
        Err(_) => {
            tracing::warn!(key = %key, "a written-again check was left to the sweep: the store was slow");
            Ok(Checked::default())
        }
    }
}

/// Under the key's lock: compares what is stored under `key` with what its file recorded and
/// makes the record follow a rewrite; once the key's last form has expired (by `now`), queues
/// the removal of an object no private file records there (a form may have written it after
/// the file was deleted or moved to the public bucket) and forgets the key.
pub async fn check(
    db: &PgPool,
    storage: &Storage,
    key: &str,
    now: DateTime<Utc>,
) -> Result<Checked, RewriteError> {
    let mut tx = db.begin().await?;
    locks::lock_object(&mut tx, Bucket::Private, key).await?;
    let Some(form) = forms::find(&mut tx, key).await? else {
        return Ok(Checked::default());
    };
    let file = files::find_by_key(&mut *tx, form.user_id, key)
        .await?
        .filter(|file| file.bucket == Bucket::Private);
    let mut checked = Checked::default();
    if let Some(file) = &file
        && let Some(stored) = storage.head(Bucket::Private, key).await?
        && form.recorded_etag.as_deref() != Some(stored.etag.as_str())
    {
        tracing::warn!(file.id = %file.id, key = %key, size = stored.size, "a form wrote a recorded key again; the record follows");
        files::follow_stored_size(&mut tx, file, stored.size).await?;
        forms::recorded(&mut tx, key, &stored.etag).await?;
        checked.followed = true;
        checked.reading = jobs::queue_metadata_reading(&mut tx, file).await?;
    }
    if form.form_until < now {
        if file.is_none() && !reservations::held(&mut tx, key).await? {
            files::queue_deletion(&mut tx, Bucket::Private, key).await?;
        }
        forms::forget(&mut tx, key).await?;
    }
    tx.commit().await?;
    Ok(checked)
}
