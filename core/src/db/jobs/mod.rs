//! File jobs: the row is the job. The API writes it queued; a worker claims it (running),
//! renews its heartbeat while it runs, records what it makes as it makes it, and ends it
//! (done, failed or stopped) together with the `job` drive event.

use crate::id::{FileId, FolderId, JobId, UserId};
use sqlx::{PgConnection, PgPool};

use crate::db::files::{COLUMNS_OF_F, FileRow};
use crate::job::{JobSpec, Lane};

mod claim;
mod record;
pub mod runs;
pub use claim::{
    Candidate, Claimed, LaneGauge, Pool, candidates, claim, claim_readings, gauges, hand_back,
    release_unended, requeue_stale, stale_given_up,
};
pub use drive_domain::job::JobState;
pub use drive_domain::rows::JobRow;
pub use record::JobRecord;

/// The job types the drive runs for itself, which callers neither list nor pay minutes for:
/// metadata readings, and generations (counted by the image allowance instead).
const DRIVES_OWN: &str = "('readMetadata', 'generateImage')";

const COLUMNS: &str = "id, user_id, job_type, lane, options, input_ids, source_folder_id, folder_id, \
                       output_folder_id, state, progress, error, result, attempts, stop_requested_at, \
                       created_at, started_at, ended_at, seconds, paused_seconds";

/// The seconds a job has stood still, a pause under way included (SQL on `file_jobs`).
const PAUSED: &str = "(paused_seconds + coalesce(extract(epoch from now() - paused_at), 0))";

/// Ends a pause under way, adding it to the job's paused seconds (SQL `set` items).
const PAUSE_ENDED: &str =
    "paused_seconds = paused_seconds + coalesce(extract(epoch from now() - paused_at), 0), paused_at = null";

#[derive(Debug)]
pub struct NewJob<'a> {
    pub user_id: UserId,
    pub spec: &'a JobSpec,
    pub input_ids: &'a [FileId],
    pub source_folder_id: Option<FolderId>,
    pub folder_id: Option<FolderId>,
    /// The caller's key: the same key answers this job for 24 hours ([`by_idempotency_key`]).
    pub idempotency_key: Option<&'a str>,
    /// Where its end is POSTed, with the caller's metadata echoed ([`crate::db::job_notices`]).
    pub notify: Option<(&'a str, Option<&'a serde_json::Value>)>,
}

pub async fn create(conn: &mut PgConnection, job: &NewJob<'_>) -> Result<JobRow, sqlx::Error> {
    sqlx::query_as(&format!(
        "insert into file_jobs
             (id, user_id, job_type, lane, options, input_ids, source_folder_id, folder_id, idempotency_key,
              notify_url, client_metadata)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         returning {COLUMNS}"
    ))
    .bind(JobId::random())
    .bind(job.user_id)
    .bind(job.spec.job_type().as_str())
    .bind(Lane::of(job.spec, job.input_ids.len(), job.source_folder_id.is_some()).as_str())
    .bind(job.spec.options())
    .bind(job.input_ids)
    .bind(job.source_folder_id)
    .bind(job.folder_id)
    .bind(job.idempotency_key)
    .bind(job.notify.map(|(url, _)| url))
    .bind(job.notify.and_then(|(_, metadata)| metadata))
    .fetch_one(conn)
    .await
}

/// How long an idempotency key answers its job.
pub const IDEMPOTENCY_HOURS: i32 = 24;

/// The job of `user_id`'s asked with `key` in the last [`IDEMPOTENCY_HOURS`]; an older one lets
/// go of the key (in the caller's transaction, which holds the account's lock).
pub async fn by_idempotency_key(
    conn: &mut PgConnection,
    user_id: UserId,
    key: &str,
) -> Result<Option<JobRow>, sqlx::Error> {
    sqlx::query(&format!(
        "update file_jobs set idempotency_key = null
         where user_id = $1 and idempotency_key = $2
           and created_at < now() - make_interval(hours => {IDEMPOTENCY_HOURS})"
    ))
    .bind(user_id)
    .bind(key)
    .execute(&mut *conn)
    .await?;
    sqlx::query_as(&format!(
        "select {COLUMNS} from file_jobs where user_id = $1 and idempotency_key = $2"
    ))
    .bind(user_id)
    .bind(key)
    .fetch_optional(conn)
    .await
}

/// Queues a failed or stopped job of `user_id`'s again as a new attempt: its state, times and
/// attempts start over, what earlier attempts made (and a stopped end's cost) is kept. `None`
/// when it is not that account's or has not ended failed or stopped.
pub async fn requeue_ended(
    conn: &mut PgConnection,
    user_id: UserId,
    id: JobId,
) -> Result<Option<JobRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "update file_jobs
         set state = 'queued', error = null, result = null, progress = 0, attempts = 0, worker = null,
             stop_requested_at = null, heartbeat_at = null, started_at = null, ended_at = null,
             run_after = null, paused_seconds = 0, paused_at = null, queued_at = now(),
             seconds_before = seconds_before + coalesce(seconds, 0), seconds = null
         where id = $1 and user_id = $2 and state in ('failed', 'stopped')
         returning {COLUMNS}"
    ))
    .bind(id)
    .bind(user_id)
    .fetch_optional(conn)
    .await
}

/// For a new audio, video or picture file: marks its metadata pending and records the
/// `readMetadata` job that reads it (the caller rings the doorbell after commit). When the
/// account already has [`max_queued_readings`] waiting, the reading is deferred instead
/// (`None`): [`queue_deferred_readings`] queues it once there is room.
pub async fn queue_metadata_reading(
    conn: &mut PgConnection,
    file: &FileRow,
) -> Result<Option<JobId>, sqlx::Error> {
    let spec = JobSpec::ReadMetadata(crate::job::ReadMetadata {});
    if !spec.takes(file.kind, &file.file_name) {
        return Ok(None);
    }
    sqlx::query("update files set metadata_state = 'pending' where id = $1")
        .bind(file.id)
        .execute(&mut *conn)
        .await?;
    let waiting: i64 = sqlx::query_scalar(
        "select count(*) from file_jobs
         where user_id = $1 and job_type = 'readMetadata' and state = 'queued'",
    )
    .bind(file.user_id)
    .fetch_one(&mut *conn)
    .await?;
    if waiting >= max_queued_readings() {
        sqlx::query(
            "insert into deferred_readings (file_id, user_id) values ($1, $2) on conflict do nothing",
        )
        .bind(file.id)
        .bind(file.user_id)
        .execute(&mut *conn)
        .await?;
        return Ok(None);
    }
    let job = create(
        conn,
        &NewJob {
            user_id: file.user_id,
            spec: &spec,
            input_ids: &[file.id],
            source_folder_id: None,
            folder_id: None,
            idempotency_key: None,
            notify: None,
        },
    )
    .await?;
    Ok(Some(job.id))
}

/// How many metadata readings one account may have waiting (`DRIVE_MAX_QUEUED_READINGS`,
/// default 1,000); past it new files' readings are deferred. Both binaries read it at start
/// ([`reading_cap`]), so a bad value refuses the start rather than falling back here.
pub fn max_queued_readings() -> i64 {
    static MAX: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| reading_cap().unwrap_or(DEFAULT_READING_CAP))
}

const DEFAULT_READING_CAP: i64 = 1000;

/// `DRIVE_MAX_QUEUED_READINGS`, checked: a whole number from 1.
pub fn reading_cap() -> Result<i64, crate::config::ConfigError> {
    let cap: i64 = crate::config::parsed_or("DRIVE_MAX_QUEUED_READINGS", DEFAULT_READING_CAP)?;
    if cap < 1 {
        return Err(crate::config::invalid(
            "DRIVE_MAX_QUEUED_READINGS",
            format!("{cap} is under 1"),
        ));
    }
    Ok(cap)
}

/// Queues the deferred readings of every account with room under [`max_queued_readings`],
/// oldest first; answers how many were queued.
pub async fn queue_deferred_readings(pool: &PgPool) -> Result<u64, sqlx::Error> {
    let spec = JobSpec::ReadMetadata(crate::job::ReadMetadata {});
    let queued = sqlx::query(
        "with waiting as (
             select user_id, count(*) as n from file_jobs
             where job_type = 'readMetadata' and state = 'queued' group by user_id
         ),
         due as (
             select d.file_id, d.user_id,
                    row_number() over (partition by d.user_id order by d.deferred_at, d.file_id) as nth
             from deferred_readings d
         ),
         taken as (
             delete from deferred_readings d
             using due left join waiting w using (user_id)
             where d.file_id = due.file_id and due.nth <= $1 - coalesce(w.n, 0)
             returning d.file_id, d.user_id
         )
         insert into file_jobs (id, user_id, job_type, lane, options, input_ids)
         select gen_random_uuid(), user_id, $2, $3, $4, array[file_id]
         from taken",
    )
    .bind(max_queued_readings())
    // The type, lane and settings of a reading, from where every job's come from (as `create`).
    .bind(spec.job_type().as_str())
    .bind(Lane::of(&spec, 1, false).as_str())
    .bind(spec.options())
    .execute(pool)
    .await?;
    Ok(queued.rows_affected())
}

pub async fn find(pool: &PgPool, id: JobId) -> Result<Option<JobRow>, sqlx::Error> {
    sqlx::query_as(&format!("select {COLUMNS} from file_jobs where id = $1"))
        .bind(id)
        .fetch_optional(pool)
        .await
}

/// The caller's jobs, newest first; `ids` narrows them.
pub async fn list(
    pool: &PgPool,
    user_id: UserId,
    ids: Option<&[JobId]>,
    on_file: Option<FileId>,
    limit: i64,
    offset: i64,
) -> Result<Vec<JobRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from file_jobs
         where user_id = $1 and ($2::uuid[] is null or id = any($2)) and job_type not in {DRIVES_OWN}
           and ($5::uuid is null or $5 = any(input_ids))
         order by created_at desc, id desc
         limit $3 offset $4"
    ))
    .bind(user_id)
    .bind(ids)
    .bind(limit)
    .bind(offset)
    .bind(on_file)
    .fetch_all(pool)
    .await
}

/// Seconds of job time the account has used this calendar month (UTC): done and stopped
/// jobs count by the time they took, running ones by the time they have run so far; failed
/// ones cost nothing.
pub async fn seconds_this_month(pool: &PgPool, user_id: UserId) -> Result<f64, sqlx::Error> {
    sqlx::query_scalar(&format!(
        "select coalesce(sum(case when state = 'running'
                                  then seconds_before + extract(epoch from now() - started_at) - {PAUSED}
                                  when state = 'queued' then seconds_before
                                  else seconds end), 0)::float8
         from file_jobs
         where user_id = $1 and job_type not in {DRIVES_OWN}
           and ((seconds is not null
                 and ended_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc')
                or (state = 'running' and started_at is not null)
                or (state = 'queued' and seconds_before > 0))"
    ))
    .bind(user_id)
    .fetch_one(pool)
    .await
}

/// Locks the account's row for the rest of the transaction and counts its jobs waiting or
/// running (the drive's own readings aside): submissions of one account take turns, so
/// concurrent ones can never pass the cap together.
pub async fn lock_and_count_active(
    conn: &mut sqlx::PgConnection,
    user_id: UserId,
) -> Result<i64, sqlx::Error> {
    // `no key update`: see `reservations::reserve` (an insert's key-share lock on the row).
    sqlx::query("select 1 from users where id = $1 for no key update")
        .bind(user_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query_scalar(&format!(
        "select count(*) from file_jobs
         where user_id = $1 and state in ('queued', 'running') and job_type not in {DRIVES_OWN}"
    ))
    .bind(user_id)
    .fetch_one(conn)
    .await
}

/// Renews a running job's heartbeat; answers whether a stop was asked for, or `None` when
/// the job is no longer this worker's to run.
pub async fn heartbeat(pool: &PgPool, id: JobId, worker: &str) -> Result<Option<bool>, sqlx::Error> {
    sqlx::query_scalar(
        "update file_jobs set heartbeat_at = now()
         where id = $1 and state = 'running' and worker = $2
         returning stop_requested_at is not null",
    )
    .bind(id)
    .bind(worker)
    .fetch_optional(pool)
    .await
}

/// Renews the heartbeats of the running jobs of `ids` that are still `worker`'s: the readings
/// read in the process of another, whose own heartbeat is [`heartbeat`]'s.
pub async fn heartbeats(pool: &PgPool, ids: &[JobId], worker: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update file_jobs set heartbeat_at = now()
         where id = any($1) and state = 'running' and worker = $2",
    )
    .bind(ids)
    .bind(worker)
    .execute(pool)
    .await?;
    Ok(())
}

/// Marks running job `id` of `worker` as held still; [`resumed`] ends the pause.
pub async fn paused(pool: &PgPool, id: JobId, worker: &str) -> Result<(), sqlx::Error> {
    sqlx::query("update file_jobs set paused_at = now() where id = $1 and state = 'running' and worker = $2")
        .bind(id)
        .bind(worker)
        .execute(pool)
        .await?;
    Ok(())
}

/// Ends job `id`'s pause under way (if any), adding it to the seconds it stood still.
pub async fn resumed(pool: &PgPool, id: JobId) -> Result<(), sqlx::Error> {
    sqlx::query(&format!(
        "update file_jobs set {PAUSE_ENDED} where id = $1 and paused_at is not null"
    ))
    .bind(id)
    .execute(pool)
    .await?;
    Ok(())
}

pub async fn set_progress(pool: &PgPool, id: JobId, progress: f32) -> Result<(), sqlx::Error> {
    sqlx::query("update file_jobs set progress = $2 where id = $1 and state = 'running'")
        .bind(id)
        .bind(progress.clamp(0.0, 1.0))
        .execute(pool)
        .await?;
    Ok(())
}

pub async fn set_output_folder(pool: &PgPool, id: JobId, folder_id: FolderId) -> Result<(), sqlx::Error> {
    sqlx::query("update file_jobs set output_folder_id = $2 where id = $1")
        .bind(id)
        .bind(folder_id)
        .execute(pool)
        .await?;
    Ok(())
}

/// Notes that the job made `file_id` as its `position`th result. A retried job makes the
/// same files under the same keys, so the same position answers the same file.
pub async fn add_output(
    conn: &mut PgConnection,
    job_id: JobId,
    position: i32,
    file_id: FileId,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into file_job_outputs (job_id, position, file_id) values ($1, $2, $3)
         on conflict (job_id, position) do nothing",
    )
    .bind(job_id)
    .bind(position)
    .bind(file_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Notes that the job made `file_id`, after every file it made before, unless it is noted
/// already (a pipeline's run tried again records again what it made before).
pub async fn add_next_output(
    conn: &mut PgConnection,
    job_id: JobId,
    file_id: FileId,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into file_job_outputs (job_id, position, file_id)
         select $1, (select coalesce(max(position) + 1, 0) from file_job_outputs where job_id = $1), $2
         where not exists (select 1 from file_job_outputs where job_id = $1 and file_id = $2)",
    )
    .bind(job_id)
    .bind(file_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// The file the job made as its `position`th result, if it did.
pub async fn output_at(pool: &PgPool, job_id: JobId, position: i32) -> Result<Option<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS_OF_F} from file_job_outputs o join files f on f.id = o.file_id
         where o.job_id = $1 and o.position = $2"
    ))
    .bind(job_id)
    .bind(position)
    .fetch_optional(pool)
    .await
}

/// The files each of `job_ids` made, in the order made.
pub async fn outputs(
    conn: &mut PgConnection,
    job_ids: &[JobId],
) -> Result<Vec<(JobId, FileRow)>, sqlx::Error> {
    let rows: Vec<JobOutput> = sqlx::query_as(&format!(
        "select o.job_id, {COLUMNS_OF_F} from file_job_outputs o join files f on f.id = o.file_id
         where o.job_id = any($1)
         order by o.job_id, o.position"
    ))
    .bind(job_ids)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|o| (o.job_id, o.file)).collect())
}

#[derive(sqlx::FromRow)]
struct JobOutput {
    job_id: JobId,
    #[sqlx(flatten)]
    file: FileRow,
}

/// How a job ended.
#[derive(Debug, Clone)]
pub enum End {
    Done(serde_json::Value),
    Failed(String),
    Stopped,
}

/// Marks a job just created as started (in the caller's transaction), for it to be answered at
/// once ([`crate::job_end::answer`]).
pub async fn mark_started(conn: &mut PgConnection, id: JobId) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update file_jobs set state = 'running', started_at = now() where id = $1 and state = 'queued'",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Writes `end` on a job that has not ended yet, its seconds leaving out the time it stood
/// still; `None` when it had already ended. What follows an end is [`crate::job_end`]'s.
pub async fn end_row(tx: &mut PgConnection, id: JobId, end: End) -> Result<Option<JobRow>, sqlx::Error> {
    let (state, error, result) = match end {
        End::Done(result) => (JobState::Done, None, Some(result)),
        End::Failed(error) => (JobState::Failed, Some(error), None),
        End::Stopped => (JobState::Stopped, None, None),
    };
    sqlx::query_as(&format!(
        "update file_jobs
         set state = $2, error = $3, result = $4, ended_at = now(),
             progress = case when $2 = 'done' then 1 else progress end,
             seconds = case when $2 = 'failed' or started_at is null then nullif(seconds_before, 0)
                            else (seconds_before + extract(epoch from now() - started_at) - {PAUSED})::float8 end,
             {PAUSE_ENDED}
         where id = $1 and state in ('queued', 'running')
         returning {COLUMNS}"
    ))
    .bind(id)
    .bind(state.as_str())
    .bind(error)
    .bind(result)
    .fetch_optional(&mut *tx)
    .await
}

/// Marks job `id` of `user_id` asked to stop; answers it as it now is, `None` when it is not
/// that account's.
pub async fn mark_stop_requested(
    pool: &PgPool,
    user_id: UserId,
    id: JobId,
) -> Result<Option<JobRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "update file_jobs set stop_requested_at = coalesce(stop_requested_at, now())
         where id = $1 and user_id = $2
         returning {COLUMNS}"
    ))
    .bind(id)
    .bind(user_id)
    .fetch_optional(pool)
    .await
}

/// Puts a running job back in the queue after a server-side failure: no worker claims it
/// before `after` has passed.
pub async fn release(pool: &PgPool, id: JobId, after: std::time::Duration) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update file_jobs
         set state = 'queued', worker = null, run_after = now() + make_interval(secs => $2)
         where id = $1 and state = 'running'",
    )
    .bind(id)
    .bind(after.as_secs_f64())
    .execute(pool)
    .await?;
    Ok(())
}
