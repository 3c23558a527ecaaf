//! What follows a job's end, in the transaction that ends it: a checksum's digests are kept,
//! a metadata reading that failed is recorded on its files (the drive's own work: no event), a
//! generation's job that did not finish fails its generation (which has its own event), and
//! every other job writes its `job` drive event with what it made. A pipeline's intermediates
//! are queued for removal in that transaction and removed after it. The row itself is
//! [`jobs::end_row`]'s; the decisions are here, apart from the SQL.

use sqlx::{PgConnection, PgPool};

use crate::db::digests;
use crate::db::events::{self, EventKind};
use crate::db::files;
use crate::db::generations;
use crate::db::job_notices;
use crate::db::jobs::{self, End, JobRecord, JobRow, JobState, runs};
use crate::db::search::store_metadata;
use crate::id::{FileId, JobId, UserId};
use crate::job::{JobSpec, JobType};
use crate::maintenance;
use crate::metadata::Metadata;
use crate::storage::{Bucket, Storage};

/// Ends a job that has not ended yet and does what follows in the same transaction; `None`
/// when it had already ended (a stop and a finish racing: the first one wins).
pub async fn finish(
    pool: &PgPool,
    storage: &Storage,
    id: JobId,
    end: End,
) -> Result<Option<JobRow>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let ended = end_in(&mut tx, storage, id, end).await?;
    let intermediates = match &ended {
        Some(job) if job.job_type == JobType::Pipeline => {
            runs::queue_intermediate_removals(&mut tx, id).await?
        }
        _ => Vec::new(),
    };
    tx.commit().await?;
    for key in intermediates {
        // What the store refuses now stays queued for the sweep.
        if let Err(e) = maintenance::remove_object(pool, storage, Bucket::Private, &key).await {
            tracing::warn!(job.id = %id, "removing the intermediate {key} failed: {e}");
        }
    }
    Ok(ended)
}

/// A metadata reading's end: what was read from its file (stored on it) or why it could not
/// be read (recorded on it), and the job's own end.
#[derive(Debug)]
pub struct ReadingEnd {
    pub job: JobId,
    pub file: FileId,
    pub metadata: Result<Metadata, String>,
    pub end: End,
}

/// Stores what metadata readings read and ends their jobs, all in one transaction: the readings
/// of a burst of uploads, read together, are recorded together. A reading that had already
/// ended (stopped meanwhile) is left as it is, and so is its file.
pub async fn finish_readings(
    pool: &PgPool,
    storage: &Storage,
    readings: Vec<ReadingEnd>,
) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    for reading in readings {
        if end_in(&mut tx, storage, reading.job, reading.end)
            .await?
            .is_none()
        {
            continue;
        }
        match &reading.metadata {
            Ok(metadata) => store_metadata(&mut *tx, reading.file, metadata).await?,
            Err(why) => files::metadata_unreadable(&mut *tx, &[reading.file], why).await?,
        }
    }
    tx.commit().await
}

/// Runs a job just created in `conn`'s transaction no further than this: it is answered at
/// once, done with `result`, from what the drive already knows (a checksum whose digests are
/// kept), and its `job` event recorded. It takes no minutes (it ran for no time).
pub async fn answer(
    conn: &mut PgConnection,
    storage: &Storage,
    id: JobId,
    result: serde_json::Value,
) -> Result<Option<JobRow>, sqlx::Error> {
    jobs::mark_started(conn, id).await?;
    end_in(conn, storage, id, End::Done(result)).await
}

/// Asks a job to stop. A queued job stops at once; a running one is marked and its worker
/// stops it within a heartbeat. Answers the job as it now is; `None` when it is not the
/// caller's.
pub async fn request_stop(
    pool: &PgPool,
    storage: &Storage,
    user_id: UserId,
    id: JobId,
) -> Result<Option<JobRow>, sqlx::Error> {
    match jobs::mark_stop_requested(pool, user_id, id).await? {
        Some(job) if job.state == JobState::Queued => {
            finish(pool, storage, id, End::Stopped).await?;
            jobs::find(pool, id).await
        }
        other => Ok(other),
    }
}

/// [`finish`] in the caller's transaction.
async fn end_in(
    tx: &mut PgConnection,
    storage: &Storage,
    id: JobId,
    end: End,
) -> Result<Option<JobRow>, sqlx::Error> {
    let Some(job) = jobs::end_row(&mut *tx, id, end).await? else {
        return Ok(None);
    };
    // Its caller's link, if it gave one, hears of the end once it is committed.
    job_notices::write(&mut *tx, id).await?;
    if job.job_type == JobType::Checksum
        && let Some(result) = &job.result
    {
        digests::keep(&mut *tx, &job.input_ids, result).await?;
    }
    if job.job_type == JobType::ReadMetadata {
        // Reading a file's metadata is the drive's own work: no event, no minutes; a reading
        // that could not finish is recorded on the file.
        if job.state == JobState::Failed {
            let why = job.error.as_deref().unwrap_or("the reading failed");
            files::metadata_unreadable(&mut *tx, &job.input_ids, why).await?;
        }
        return Ok(Some(job));
    }
    if let Ok(JobSpec::GenerateImage(settings)) = job.spec() {
        // A generation is announced by its own event: a job given up on (its worker died too
        // often, say) fails its generation with it; a done one has ended its generation already.
        if job.state != JobState::Done {
            let why = job.error.as_deref().unwrap_or("the generation was stopped");
            generations::finish_failed(&mut *tx, settings.generation, why, false).await?;
        }
        return Ok(Some(job));
    }
    let record = JobRecord::load(&mut *tx, storage, std::slice::from_ref(&job))
        .await?
        .pop()
        .expect("one record per job");
    events::record(
        &mut *tx,
        job.user_id,
        EventKind::Job,
        job.id,
        serde_json::json!({ "job": record, "files": record.files }),
    )
    .await?;
    Ok(Some(job))
}
