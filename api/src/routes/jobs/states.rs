//! A job once made: `/select-file-jobs` (with `wait`), `/cancel-file-job` and `/retry-file-job`.

use std::time::Duration;

use axum::extract::State;
use drive_core::db::jobs::{self, JobRecord, JobRow, JobState, runs};
use drive_core::id::{FileId, JobId};
use drive_core::input::{Bounded, List, MAX_OFFSET};
use drive_core::job_end;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{job_not_found, minutes_left, too_many_jobs};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::follow::Woken;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(select_file_jobs))
        .routes(routes!(cancel_file_job))
        .routes(routes!(retry_file_job))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelectJobsInput {
    /// 1 to 100 job ids; default all the caller's jobs.
    ids: Option<List<JobId, 1, 100>>,
    /// Extension: only the jobs that took this file as an input.
    file_id: Option<FileId>,
    /// 1 to 100, default 25.
    limit: Option<Bounded<1, 100>>,
    /// Default 0.
    offset: Option<Bounded<0, { MAX_OFFSET }>>,
    /// Extension: seconds, 0 to 60 (default 0). When every job selected is still queued or
    /// running, the call holds until one of them ends (answered within a second of it) or the
    /// wait ends, and then answers as usual.
    wait: Option<Bounded<0, 60>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobMinutesUsage {
    /// Minutes of job time used this calendar month (UTC).
    used: f64,
    /// The plan's monthly minutes.
    limit: f64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelectedJobs {
    /// Newest first.
    jobs: Vec<JobRecord>,
    /// Pass as `offset` for the next page; null on the last.
    next_offset: Option<i64>,
    minutes: JobMinutesUsage,
}

/// The caller's jobs, newest first, with progress and what each made.
#[utoipa::path(post, path = "/select-file-jobs", tag = "jobs", request_body = Option<SelectJobsInput>,
    responses((status = 200, body = SelectedJobs)))]
async fn select_file_jobs(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<Option<SelectJobsInput>>,
) -> ApiResult<axum::Json<SelectedJobs>> {
    let input = input.unwrap_or_default();
    let ids = input.ids.as_ref().map(|ids| &ids[..]);
    let limit = input.limit.map_or(25, Bounded::get);
    let offset = input.offset.map_or(0, Bounded::get);
    let wait = Duration::from_secs(input.wait.map_or(0, Bounded::get) as u64);
    let deadline = tokio::time::Instant::now() + wait;
    // Taken before the first look: a job ending between a look and the wait still wakes it (its
    // end writes a `job` event, whose commit notifies the account).
    let mut waiter = (!wait.is_zero()).then(|| state.follow.subscribe());
    let (rows, more) = loop {
        // One more than asked tells whether another page follows.
        let mut rows = jobs::list(&state.db, caller.user_id, ids, input.file_id, limit + 1, offset).await?;
        let more = rows.len() as i64 > limit;
        rows.truncate(limit as usize);
        let under_way = !rows.is_empty() && rows.iter().all(|job| !job.state.has_ended());
        match waiter.as_mut() {
            Some(waiter) if under_way && tokio::time::Instant::now() < deadline => {
                waiter.wait(Woken::Events(caller.user_id), deadline).await;
            }
            _ => break (rows, more),
        }
    };
    let mut conn = state.db.acquire().await?;
    let records = JobRecord::load(&mut conn, &state.storage, &rows).await?;
    let used = jobs::seconds_this_month(&state.db, caller.user_id).await?;
    let limit_minutes = caller
        .plan()
        .map_or(0.0, |plan| state.settings.job_minutes.for_plan(plan));
    Ok(axum::Json(SelectedJobs {
        jobs: records,
        next_offset: more.then_some(offset + limit),
        minutes: JobMinutesUsage {
            used: used / 60.0,
            limit: limit_minutes,
        },
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelJobInput {
    id: JobId,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CanceledJob {
    job: JobRecord,
}

/// How long `/cancel-file-job` waits for a running job's worker to stop it before answering
/// the job as it is (still running, with `stopRequested`).
const STOP_WAIT: Duration = Duration::from_secs(10);

/// Stop a queued or running job; what it already made is kept.
#[utoipa::path(post, path = "/cancel-file-job", tag = "jobs", request_body = CancelJobInput,
    responses((status = 200, body = CanceledJob)))]
async fn cancel_file_job(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CancelJobInput>,
) -> ApiResult<axum::Json<CanceledJob>> {
    let job = jobs::find(&state.db, input.id)
        .await?
        .filter(|j| j.user_id == caller.user_id)
        .ok_or_else(job_not_found)?;
    if job.state.has_ended() {
        return Err(ApiError::conflict(
            "job_ended",
            format!("the job has already ended ({})", job.state.as_str()),
        ));
    }
    // Taken before the stop is asked for: the job's end writes a `job` event, which wakes it.
    let mut waiter = state.follow.subscribe();
    let mut job = job_end::request_stop(&state.db, &state.storage, caller.user_id, input.id)
        .await?
        .ok_or_else(job_not_found)?;
    let deadline = tokio::time::Instant::now() + STOP_WAIT;
    while !job.state.has_ended() && waiter.wait(Woken::Events(caller.user_id), deadline).await {
        job = jobs::find(&state.db, input.id).await?.ok_or_else(job_not_found)?;
    }
    Ok(axum::Json(CanceledJob {
        job: record_of(&state, job).await?,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryJobInput {
    id: JobId,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RetriedJob {
    job: JobRecord,
}

/// Try a failed or stopped job again: the same job, queued as a new attempt of the same steps.
/// What it made is kept and not made again; its time so far stays counted.
#[utoipa::path(post, path = "/retry-file-job", tag = "jobs", request_body = RetryJobInput,
    responses((status = 200, body = RetriedJob)))]
async fn retry_file_job(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<RetryJobInput>,
) -> ApiResult<axum::Json<RetriedJob>> {
    let job = jobs::find(&state.db, input.id)
        .await?
        .filter(|j| j.user_id == caller.user_id)
        .ok_or_else(job_not_found)?;
    if !matches!(job.state, JobState::Failed | JobState::Stopped) {
        return Err(ApiError::conflict(
            "job_not_retryable",
            format!(
                "only a failed or stopped job is tried again; this one is {}",
                job.state.as_str()
            ),
        ));
    }
    minutes_left(&state, &caller).await?;
    let mut tx = state.db.begin().await?;
    let active = jobs::lock_and_count_active(&mut tx, caller.user_id).await?;
    if active >= state.settings.max_active_jobs {
        return Err(too_many_jobs(active));
    }
    // A pipeline's runs that did not finish run anew; those done are kept.
    runs::forget_unfinished(&mut tx, input.id).await?;
    let job = jobs::requeue_ended(&mut tx, caller.user_id, input.id)
        .await?
        .ok_or_else(|| ApiError::conflict("job_not_retryable", "the job is no longer failed or stopped"))?;
    let record = JobRecord::load(&mut tx, &state.storage, std::slice::from_ref(&job))
        .await?
        .pop()
        .expect("one record per job");
    tx.commit().await?;
    state.doorbell.ring().await;
    Ok(axum::Json(RetriedJob { job: record }))
}

async fn record_of(state: &AppState, job: JobRow) -> ApiResult<JobRecord> {
    let mut conn = state.db.acquire().await?;
    Ok(
        JobRecord::load(&mut conn, &state.storage, std::slice::from_ref(&job))
            .await?
            .pop()
            .expect("one record per job"),
    )
}
