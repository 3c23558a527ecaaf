//! A pipeline's runs and what each made (`file_job_runs`, `file_job_run_outputs`). A step's
//! runs are written when it begins; a run is worked by one job process and ends done or
//! failed; its outputs are recorded once each, by position, so a job taken up again skips what
//! was done and made. An output of a step whose outputs are files points at its file; any other
//! is an intermediate, an object under the job's keys in no library and no quota.

use sqlx::{PgConnection, PgPool};

use crate::db::files::FileRow;
use crate::file::FileKind;
use crate::id::{FileId, FolderId, JobId};
use crate::job::JobState;
use crate::storage::Bucket;

/// One run of a step.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RunRow {
    pub step: i32,
    pub run: i32,
    pub state: JobState,
    pub output_folder_id: Option<FolderId>,
    pub result: Option<serde_json::Value>,
    pub error: Option<String>,
}

/// Which run: a step's index and the run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunAt {
    pub job_id: JobId,
    pub step: i32,
    pub run: i32,
}

/// What a run made at one position, as the next step is given it: a file's row, or the
/// intermediate's as if it were one (its own id, no folder).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RunOutput {
    pub job_id: JobId,
    pub step: i32,
    pub run: i32,
    pub is_file: bool,
    /// An intermediate whose object was removed (its job ended).
    pub removed: bool,
    #[sqlx(flatten)]
    pub file: FileRow,
}

/// An output's row, over the file's when it became one.
const OUTPUT: &str = "o.job_id, o.step, o.run, o.is_file, o.removed_at is not null as removed, coalesce(f.id, o.id) as id, j.user_id,
     coalesce(f.file_name, o.file_name) as file_name, coalesce(f.file_size, o.file_size) as file_size,
     coalesce(f.mime_type, o.mime_type) as mime_type, coalesce(f.kind, o.kind) as kind,
     coalesce(f.bucket, 'private') as bucket, coalesce(f.object_key, o.object_key) as object_key,
     f.modified_time, f.trashed_at, coalesce(f.created_at, o.created_at) as created_at, f.folder_id
     from file_job_run_outputs o join file_jobs j on j.id = o.job_id left join files f on f.id = o.file_id";

/// Writes a step's `count` runs, queued, unless written already.
pub async fn plan(pool: &PgPool, job_id: JobId, step: i32, count: i32) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into file_job_runs (job_id, step, run)
         select $1, $2, run from generate_series(0, $3 - 1) as run
         on conflict do nothing",
    )
    .bind(job_id)
    .bind(step)
    .bind(count)
    .execute(pool)
    .await?;
    Ok(())
}

/// The job's runs, by step and run.
pub async fn of_job(pool: &PgPool, job_id: JobId) -> Result<Vec<RunRow>, sqlx::Error> {
    sqlx::query_as(
        "select step, run, state, output_folder_id, result, error from file_job_runs
         where job_id = $1 order by step, run",
    )
    .bind(job_id)
    .fetch_all(pool)
    .await
}

/// The runs of each of `job_ids`, by job, step and run.
pub async fn of_jobs(
    conn: &mut PgConnection,
    job_ids: &[JobId],
) -> Result<Vec<(JobId, RunRow)>, sqlx::Error> {
    #[derive(sqlx::FromRow)]
    struct Row {
        job_id: JobId,
        #[sqlx(flatten)]
        run: RunRow,
    }
    let rows: Vec<Row> = sqlx::query_as(
        "select job_id, step, run, state, output_folder_id, result, error from file_job_runs
         where job_id = any($1) order by job_id, step, run",
    )
    .bind(job_ids)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.job_id, r.run)).collect())
}

/// Marks a run under way (a run done stays done).
pub async fn start(pool: &PgPool, at: RunAt) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update file_job_runs set state = 'running', started_at = coalesce(started_at, now())
         where job_id = $1 and step = $2 and run = $3 and state in ('queued', 'running')",
    )
    .bind(at.job_id)
    .bind(at.step)
    .bind(at.run)
    .execute(pool)
    .await?;
    Ok(())
}

/// Ends a run under way: done with its result, or failed with why.
pub async fn end(
    pool: &PgPool,
    at: RunAt,
    outcome: Result<serde_json::Value, String>,
) -> Result<(), sqlx::Error> {
    let (state, result, error) = match outcome {
        Ok(result) => (JobState::Done, Some(result), None),
        Err(why) => (JobState::Failed, None, Some(why)),
    };
    sqlx::query(
        "update file_job_runs set state = $4, result = $5, error = $6, ended_at = now()
         where job_id = $1 and step = $2 and run = $3 and state in ('queued', 'running')",
    )
    .bind(at.job_id)
    .bind(at.step)
    .bind(at.run)
    .bind(state.as_str())
    .bind(result)
    .bind(error)
    .execute(pool)
    .await?;
    Ok(())
}

/// The folder an unzip run made for its entries.
pub async fn set_output_folder(pool: &PgPool, at: RunAt, folder_id: FolderId) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update file_job_runs set output_folder_id = $4 where job_id = $1 and step = $2 and run = $3",
    )
    .bind(at.job_id)
    .bind(at.step)
    .bind(at.run)
    .bind(folder_id)
    .execute(pool)
    .await?;
    Ok(())
}

/// What a run recorded at `position`, if it did.
pub async fn output_at(pool: &PgPool, at: RunAt, position: i32) -> Result<Option<RunOutput>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {OUTPUT} where o.job_id = $1 and o.step = $2 and o.run = $3 and o.position = $4"
    ))
    .bind(at.job_id)
    .bind(at.step)
    .bind(at.run)
    .bind(position)
    .fetch_optional(pool)
    .await
}

/// What a step's runs made, in the order made: what a step using it is given.
pub async fn outputs_of_step(pool: &PgPool, job_id: JobId, step: i32) -> Result<Vec<RunOutput>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {OUTPUT} where o.job_id = $1 and o.step = $2 order by o.run, o.position"
    ))
    .bind(job_id)
    .bind(step)
    .fetch_all(pool)
    .await
}

/// What the runs of `job_ids` made, by job, step, run and position.
pub async fn outputs(conn: &mut PgConnection, job_ids: &[JobId]) -> Result<Vec<RunOutput>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {OUTPUT} where o.job_id = any($1) order by o.job_id, o.step, o.run, o.position"
    ))
    .bind(job_ids)
    .fetch_all(conn)
    .await
}

/// An output stored under `object_key`, to record.
#[derive(Debug)]
pub struct NewOutput<'a> {
    pub file_name: &'a str,
    pub file_size: i64,
    pub kind: FileKind,
    pub mime_type: &'a str,
    pub object_key: &'a str,
    /// The file it became; `None`: an intermediate.
    pub file_id: Option<FileId>,
}

/// Records what the run made at `position` (in the caller's transaction); answers its id, or
/// `None` when that position was recorded already.
pub async fn add_output(
    conn: &mut PgConnection,
    at: RunAt,
    position: i32,
    output: &NewOutput<'_>,
) -> Result<Option<uuid::Uuid>, sqlx::Error> {
    sqlx::query_scalar(
        "insert into file_job_run_outputs
             (job_id, step, run, position, file_name, file_size, kind, mime_type, object_key, is_file, file_id)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         on conflict do nothing
         returning id",
    )
    .bind(at.job_id)
    .bind(at.step)
    .bind(at.run)
    .bind(position)
    .bind(output.file_name)
    .bind(output.file_size)
    .bind(output.kind.as_str())
    .bind(output.mime_type)
    .bind(output.object_key)
    .bind(output.file_id.is_some())
    .bind(output.file_id)
    .fetch_optional(conn)
    .await
}

/// Bytes the job's intermediates hold in the store.
pub async fn intermediate_bytes(pool: &PgPool, job_id: JobId) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "select coalesce(sum(file_size), 0)::bigint from file_job_run_outputs
         where job_id = $1 and not is_file and removed_at is null",
    )
    .bind(job_id)
    .fetch_one(pool)
    .await
}

/// Queues the removal of the job's intermediates (in the transaction that ends it): they
/// belong to no library, so nothing of them outlives the job. Answers their keys.
pub async fn queue_intermediate_removals(
    conn: &mut PgConnection,
    job_id: JobId,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "with gone as (
             update file_job_run_outputs set removed_at = now()
             where job_id = $1 and not is_file and removed_at is null
             returning object_key
         )
         insert into object_deletions (bucket, object_key)
         select $2, object_key from gone
         returning object_key",
    )
    .bind(job_id)
    .bind(Bucket::Private.as_str())
    .fetch_all(conn)
    .await
}

/// Readies the runs that did not finish (failed, stopped, or cut short) to run anew when their
/// job is tried again: the intermediates they made (removed with the job's end) are forgotten,
/// the files they made are kept, so each run finds those recorded and makes only the rest. Runs
/// done stay done.
pub async fn forget_unfinished(conn: &mut PgConnection, job_id: JobId) -> Result<(), sqlx::Error> {
    sqlx::query(
        "delete from file_job_run_outputs o using file_job_runs r
         where r.job_id = $1 and r.state <> 'done'
           and o.job_id = r.job_id and o.step = r.step and o.run = r.run and not o.is_file",
    )
    .bind(job_id)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "update file_job_runs set state = 'queued', result = null, error = null, ended_at = null
         where job_id = $1 and state <> 'done'",
    )
    .bind(job_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Forgets a step's runs, to run it anew: its intermediates were removed and a step using
/// them has yet to run.
pub async fn forget_step(pool: &PgPool, job_id: JobId, step: i32) -> Result<(), sqlx::Error> {
    sqlx::query("delete from file_job_runs where job_id = $1 and step = $2")
        .bind(job_id)
        .bind(step)
        .execute(pool)
        .await?;
    Ok(())
}
