//! File jobs: create (or estimate with `dryRun`), list, cancel. The API only validates,
//! writes the job row (the queue is the job rows) and rings the workers' doorbell; the worker
//! farm does the work.

use std::time::Duration;

use axum::extract::State;
use drive_core::db::digests;
use drive_core::db::files::{self, FileRow};
use drive_core::db::folders;
use drive_core::db::jobs::{self, JobRecord, JobRow, JobState, NewJob, runs};
use drive_core::db::moments;
use drive_core::db::requests;
use drive_core::folder::FolderPath;
use drive_core::id::{ArrivalId, FileId, FolderId, JobId};
use drive_core::input::{Bounded, Line, List, MAX_OFFSET};
use drive_core::job::{self, JobSpec, JobType, MAX_STEPS, Pipeline, SettingsError, StepInput};
use drive_core::job_end;
use drive_core::rewrites;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{self, Json, id_count};
use crate::follow::Woken;
use crate::routes::upload;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_file_job))
        .routes(routes!(select_file_jobs))
        .routes(routes!(cancel_file_job))
        .routes(routes!(retry_file_job))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({
    "jobType": "checksum",
    "fileIds": ["5f0c8a8e-3b1d-4c7a-9d7e-2a4b6c8d0e1f"],
    "options": { "algorithm": "sha256" },
}))]
pub struct CreateJobInput {
    /// The job's type, with its `options`; or `steps`.
    #[schema(schema_with = JobType::requestable_schema)]
    job_type: Option<JobType>,
    /// A pipeline: the jobs to run one after another as one job, each taking the files given
    /// (`input`) or what earlier steps made; or `jobType`.
    steps: Option<List<StepInput, 1, { MAX_STEPS }>>,
    /// The caller's files, each once, in order; or `fromFolderId` for a zip.
    file_ids: Option<Vec<FileId>>,
    /// zip only: every file in this folder of the caller's and the folders inside it.
    from_folder_id: Option<FolderId>,
    /// Settings by type; leave out for the defaults. A pipeline's are its steps'.
    #[serde(default)]
    options: serde_json::Value,
    /// Validate and estimate without starting anything.
    #[serde(default)]
    dry_run: bool,
    /// Where results land, made on the way; default beside the first file (a folder's zip
    /// beside the folder).
    folder: Option<FolderPath>,
    /// One of the caller's folders for the results; or `folder`.
    folder_id: Option<FolderId>,
    /// Any string of the caller's, 1 to 200 characters: asking again with the same key within 24
    /// hours answers the same job (as it now is), never a second one; asking with it for
    /// another job is 409 `idempotency_key_reused`.
    idempotency_key: Option<Line<1, 200>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedJob {
    /// The queued job; absent on a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    job: Option<JobRecord>,
    /// About how long it should take once it starts.
    estimate_seconds: u64,
    dry_run: bool,
}

/// What a job is asked to do, checked and ready to write.
pub(crate) struct JobRequest {
    pub spec: JobSpec,
    pub inputs: Vec<FileRow>,
    pub source_folder_id: Option<FolderId>,
    /// `None`: beside the first input (or the source folder).
    pub folder: Option<FolderPath>,
    pub folder_id: Option<FolderId>,
    /// A file request's arrival whose `onArrival` job this is: linked to it in the job's own
    /// transaction, so the job works within the request's room from its first run.
    pub arrival: Option<ArrivalId>,
    /// The caller's idempotency key (`/create-file-job` only).
    pub idempotency_key: Option<Line<1, 200>>,
}

/// Start a file job, or with `dryRun` check it and estimate its time.
#[utoipa::path(post, path = "/create-file-job", tag = "jobs", request_body = CreateJobInput,
    responses((status = 200, body = CreatedJob)))]
async fn create_file_job(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CreateJobInput>,
) -> ApiResult<axum::Json<CreatedJob>> {
    let spec = match (input.job_type, input.steps) {
        (Some(job_type), None) => JobSpec::parse(job_type, input.options),
        (None, Some(_)) if !input.options.is_null() => {
            return Err(ApiError::invalid(
                "options",
                "a pipeline's settings are in its steps",
            ));
        }
        (None, Some(steps)) => Pipeline::parse(steps.into()),
        (None, None) => return Err(ApiError::missing("jobType")),
        (Some(_), Some(_)) => return Err(ApiError::invalid("steps", "give jobType or steps, not both")),
    }
    .map_err(settings_error)?;
    let (inputs, source_folder_id) = match (&input.file_ids, input.from_folder_id) {
        (None, None) => return Err(ApiError::missing("fileIds")),
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "fromFolderId",
                "give fileIds or fromFolderId, not both",
            ));
        }
        (Some(ids), None) => (owned_inputs(&state, &caller, &spec, ids).await?, None),
        (None, Some(folder_id)) => {
            if spec.job_type() != JobType::Zip {
                return Err(ApiError::invalid("fromFolderId", "only zip jobs take a folder"));
            }
            let folder = folders::find_owned(&state.db, caller.user_id, folder_id)
                .await?
                .ok_or_else(folder_not_found)?;
            let ids = folders::files_within(&state.db, caller.user_id, &folder).await?;
            if ids.is_empty() {
                return Err(ApiError::invalid("fromFolderId", "the folder holds no files"));
            }
            let mut found = files::find_many(&state.db, caller.user_id, &ids, false).await?;
            found.sort_by_key(|f| ids.iter().position(|id| *id == f.id));
            (found, Some(folder_id))
        }
    };
    let request = JobRequest {
        spec,
        inputs,
        source_folder_id,
        folder: input.folder,
        folder_id: input.folder_id,
        arrival: None,
        idempotency_key: input.idempotency_key,
    };
    submit(&state, &caller, request, input.dry_run)
        .await
        .map(axum::Json)
}

/// Checks the caller's minutes and the destination, then writes and queues the job (or only
/// estimates it on a dry run). `/create-archive-request` comes through here too.
pub(crate) async fn submit(
    state: &AppState,
    caller: &Caller,
    request: JobRequest,
    dry_run: bool,
) -> ApiResult<CreatedJob> {
    let bytes: i64 = request.inputs.iter().map(|f| f.file_size).sum();
    let downloaded: i64 = request
        .inputs
        .iter()
        .filter(|f| request.spec.downloads(f.kind))
        .map(|f| f.file_size)
        .sum();
    let limit = state.settings.job_download_limit;
    if downloaded > limit {
        return Err(ApiError::invalid(
            "fileIds",
            format!(
                "pictures and PDFs a job works on may total {}; these total {}",
                job::decimal_size(limit),
                job::decimal_size(downloaded)
            ),
        ));
    }
    if request.spec.reads_speech() {
        let ids: Vec<FileId> = request.inputs.iter().map(|f| f.id).collect();
        let read = moments::read_files(&state.db, caller.user_id, &ids).await?;
        if let Some(unread) = request.inputs.iter().find(|f| !read.contains(&f.id)) {
            return Err(ApiError::invalid(
                "fileIds",
                format!(
                    "{} has not been read yet: captions come from what was read of a file, so run a \
                     readForSearch job on it first",
                    unread.file_name
                ),
            ));
        }
    }
    minutes_left(state, caller).await?;
    let estimate_seconds = request.spec.estimate_seconds(request.inputs.len(), bytes);
    let existing_folder = match (&request.folder, request.folder_id) {
        (Some(_), Some(_)) => return Err(ApiError::invalid("folderId", "give folder or folderId, not both")),
        (None, Some(id)) => Some(
            folders::find_owned(&state.db, caller.user_id, id)
                .await?
                .ok_or_else(folder_not_found)?
                .id,
        ),
        (Some(_), None) => None,
        (None, None) => match request.source_folder_id {
            Some(source) => folders::parent_of(&state.db, source).await?,
            // Beside the first input, when it is the caller's: an archive of a gallery may
            // start with someone else's public file, whose folder is theirs.
            None => request
                .inputs
                .first()
                .filter(|first| first.user_id == caller.user_id)
                .and_then(|first| first.folder_id),
        },
    };
    if dry_run {
        return Ok(CreatedJob {
            job: None,
            estimate_seconds,
            dry_run,
        });
    }
    if let JobSpec::Checksum(_) = &request.spec {
        // Before the transaction: a record that follows a rewrite takes its account's row.
        for file in &request.inputs {
            let checked = rewrites::settle(&state.db, &state.storage, &file.object_key).await?;
            upload::push_reading(state, checked.reading).await;
        }
    }
    let mut tx = state.db.begin().await?;
    let active = jobs::lock_and_count_active(&mut tx, caller.user_id).await?;
    let over_cap = active >= state.settings.max_active_jobs;
    let folder_id = match &request.folder {
        Some(path) => folders::ensure(&mut tx, caller.user_id, path)
            .await?
            .map(|f| f.id),
        None => existing_folder,
    };
    let input_ids: Vec<FileId> = request.inputs.iter().map(|f| f.id).collect();
    if let Some(key) = &request.idempotency_key
        && let Some(asked) = jobs::by_idempotency_key(&mut tx, caller.user_id, key).await?
    {
        let same = asked.job_type == request.spec.job_type()
            && asked.options == request.spec.options()
            && asked.input_ids == input_ids
            && asked.folder_id == folder_id;
        if !same {
            return Err(ApiError::conflict(
                "idempotency_key_reused",
                format!(
                    "the key was given in the last 24 hours for another job, {}",
                    asked.id
                ),
            ));
        }
        let record = JobRecord::load(&mut tx, &state.storage, std::slice::from_ref(&asked))
            .await?
            .pop();
        return Ok(CreatedJob {
            job: record,
            estimate_seconds,
            dry_run,
        });
    }
    // A checksum of files whose digests are kept (an earlier checksum computed them) needs
    // no job run: it is answered at once, unless a key was written again since (its digests
    // are then forgotten, and the job reads the bytes).
    let known = match &request.spec {
        JobSpec::Checksum(settings) => digests::answer(&mut tx, settings.algorithm, &request.inputs).await?,
        _ => None,
    };
    if over_cap {
        return Err(too_many_jobs(active));
    }
    let mut row = jobs::create(
        &mut tx,
        &NewJob {
            user_id: caller.user_id,
            spec: &request.spec,
            input_ids: &input_ids,
            source_folder_id: request.source_folder_id,
            folder_id,
            idempotency_key: request.idempotency_key.as_deref(),
        },
    )
    .await?;
    if let Some(arrival) = request.arrival {
        requests::arrival_job(&mut tx, arrival, row.id).await?;
    }
    if let Some(known) = known {
        let result = serde_json::to_value(known).expect("digests are JSON");
        row = job_end::answer(&mut tx, &state.storage, row.id, result)
            .await?
            .expect("the job was just created");
    }
    let record = JobRecord::load(&mut tx, &state.storage, std::slice::from_ref(&row))
        .await?
        .pop();
    tx.commit().await?;
    if row.state == JobState::Queued {
        state.doorbell.ring().await;
    }
    Ok(CreatedJob {
        job: record,
        estimate_seconds,
        dry_run,
    })
}

/// Refuses a job when the caller's month's job minutes are used up.
async fn minutes_left(state: &AppState, caller: &Caller) -> ApiResult<()> {
    let limit = state.settings.job_minutes.for_plan(caller.plan()?) * 60.0;
    let used = jobs::seconds_this_month(&state.db, caller.user_id).await?;
    if used >= limit {
        return Err(ApiError::forbidden(
            "job_minutes_used_up",
            format!(
                "this month's {:.0} job minutes are used up ({:.1} used)",
                limit / 60.0,
                used / 60.0
            ),
        ));
    }
    Ok(())
}

/// The files named, in order: each the caller's, in the library, given once, of a kind the
/// job takes.
async fn owned_inputs(
    state: &AppState,
    caller: &Caller,
    spec: &JobSpec,
    ids: &[FileId],
) -> ApiResult<Vec<FileRow>> {
    let (min, max) = spec.input_count();
    id_count("fileIds", ids, min, max)?;
    for (n, id) in ids.iter().enumerate() {
        if ids[..n].contains(id) {
            return Err(ApiError::invalid(
                "fileIds",
                format!("each file is given once; file {} repeats one before it", n + 1),
            ));
        }
    }
    let found = files::find_many(&state.db, caller.user_id, ids, false).await?;
    let mut inputs = Vec::with_capacity(ids.len());
    for (n, id) in ids.iter().enumerate() {
        let file = found.iter().find(|f| f.id == *id).ok_or_else(|| {
            ApiError::not_found("file_not_found", format!("no file of yours has the id {id}"))
        })?;
        if !spec.takes(file.kind, &file.file_name) {
            return Err(ApiError::invalid(
                "fileIds",
                format!(
                    "{} takes {}; {:?} (file {}) is not one",
                    spec.job_type().as_str(),
                    spec.takes_what(),
                    file.file_name,
                    n + 1
                ),
            ));
        }
        inputs.push(file.clone());
    }
    let kinds: Vec<_> = inputs.iter().map(|file| file.kind).collect();
    spec.check_inputs(&kinds).map_err(settings_error)?;
    Ok(inputs)
}

fn settings_error(error: SettingsError) -> ApiError {
    match error {
        SettingsError::Range(e) => ApiError::invalid(&e.field, e.message),
        SettingsError::Shape { at, error } => extract::serde_error(&at, error),
    }
}

fn too_many_jobs(active: i64) -> ApiError {
    ApiError::too_many(
        "too_many_jobs",
        format!("{active} of your jobs are waiting or running, the most at once; submit again when one ends"),
    )
}

fn folder_not_found() -> ApiError {
    ApiError::not_found("folder_not_found", "no folder of yours has that id")
}

fn job_not_found() -> ApiError {
    ApiError::not_found("job_not_found", "no job of yours has that id")
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelectJobsInput {
    /// 1 to 100 job ids; default all the caller's jobs.
    ids: Option<List<JobId, 1, 100>>,
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
        let mut rows = jobs::list(&state.db, caller.user_id, ids, limit + 1, offset).await?;
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
