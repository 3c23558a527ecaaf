//! File jobs: create (or estimate with `dryRun`), list, cancel. The API only validates,
//! writes the job row (the queue is the job rows) and rings the workers' doorbell; the worker
//! farm does the work.

use axum::extract::State;
use drive_core::db::digests;
use drive_core::db::files::{self, FileRow};
use drive_core::db::folders;
use drive_core::db::jobs::{self, JobRecord, JobState, NewJob};
use drive_core::db::moments;
use drive_core::db::templates;
use drive_core::folder::FolderPath;
use drive_core::id::{FileId, FolderId, TemplateId};
use drive_core::input::{Line, List};
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
use crate::routes::upload;
use crate::state::AppState;

mod states;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_file_job))
        .merge(states::router())
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
    /// (`input`) or what earlier steps made; or `jobType`, or `templateId`.
    steps: Option<List<StepInput, 1, { MAX_STEPS }>>,
    /// One of the caller's templates (`/create-job-template`): its steps run on these files.
    template_id: Option<TemplateId>,
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
    /// An https link the job's end is POSTed to (`{ job, clientMetadata }`), signed with the
    /// answer's `notifySecret` as webhooks are; sent through the drive's one outbound fetcher.
    notify_url: Option<Line<1, 2048>>,
    /// Any JSON object of the caller's, up to 4 KiB, echoed in the notice.
    #[schema(value_type = Option<Object>)]
    client_metadata: Option<serde_json::Value>,
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
    /// With `notifyUrl`: the secret its notice is signed with (`X-Drive-Signature`).
    #[serde(skip_serializing_if = "Option::is_none")]
    notify_secret: Option<String>,
}

/// What a job is asked to do, checked and ready to write.
pub(crate) struct JobRequest {
    pub spec: JobSpec,
    pub inputs: Vec<FileRow>,
    pub source_folder_id: Option<FolderId>,
    /// `None`: beside the first input (or the source folder).
    pub folder: Option<FolderPath>,
    pub folder_id: Option<FolderId>,
    /// The caller's idempotency key (`/create-file-job` only).
    pub idempotency_key: Option<Line<1, 200>>,
    /// The link the job's end is sent to, checked, and the caller's metadata for it.
    pub notify: Option<(String, Option<serde_json::Value>)>,
}

/// Start a file job, or with `dryRun` check it and estimate its time.
#[utoipa::path(post, path = "/create-file-job", tag = "jobs", request_body = CreateJobInput,
    responses((status = 200, body = CreatedJob)))]
async fn create_file_job(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CreateJobInput>,
) -> ApiResult<axum::Json<CreatedJob>> {
    let spec = asked_job(
        &state,
        &caller,
        AskedJob {
            job_type: input.job_type,
            steps: input.steps,
            template_id: input.template_id,
            options: input.options,
        },
    )
    .await?;
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
        idempotency_key: input.idempotency_key,
        notify: notify_of(&state, input.notify_url, input.client_metadata).await?,
    };
    submit(&state, &caller, request, input.dry_run)
        .await
        .map(axum::Json)
}

/// A job as `/create-file-job` and `/create-folder-rule` ask for it: exactly one of `jobType`
/// (with `options`), `steps` or `templateId`.
pub(crate) struct AskedJob {
    pub job_type: Option<JobType>,
    pub steps: Option<List<StepInput, 1, { MAX_STEPS }>>,
    pub template_id: Option<TemplateId>,
    pub options: serde_json::Value,
}

/// The job asked for, checked: its type's settings, the pipeline's steps or the caller's
/// template.
pub(crate) async fn asked_job(state: &AppState, caller: &Caller, asked: AskedJob) -> ApiResult<JobSpec> {
    // Of two ways given, the later one is named.
    let second = if asked.template_id.is_some() {
        "templateId"
    } else {
        "steps"
    };
    Ok(match (asked.job_type, asked.steps, asked.template_id) {
        (Some(job_type), None, None) => JobSpec::parse(job_type, asked.options).map_err(settings_error)?,
        (None, _, _) if !asked.options.is_null() => {
            return Err(ApiError::invalid(
                "options",
                "a pipeline's settings are in its steps",
            ));
        }
        (None, Some(steps), None) => Pipeline::parse(steps.into()).map_err(settings_error)?,
        (None, None, Some(id)) => templates::find(&state.db, caller.user_id, id)
            .await?
            .ok_or_else(|| ApiError::not_found("template_not_found", "no template of yours has that id"))?
            .spec()
            .map_err(|e| ApiError::Machine(format!("a template that does not read back: {e}")))?,
        (None, None, None) => return Err(ApiError::missing("jobType")),
        _ => {
            return Err(ApiError::invalid(
                second,
                "give one of jobType, steps or templateId",
            ));
        }
    })
}

/// The link a job's end goes to, checked as a webhook's is, with the caller's metadata.
async fn notify_of(
    state: &AppState,
    url: Option<Line<1, 2048>>,
    metadata: Option<serde_json::Value>,
) -> ApiResult<Option<(String, Option<serde_json::Value>)>> {
    if let Some(metadata) = &metadata {
        if !metadata.is_object() {
            return Err(ApiError::invalid(
                "clientMetadata",
                "clientMetadata is a JSON object",
            ));
        }
        if metadata.to_string().len() > 4096 {
            return Err(ApiError::invalid(
                "clientMetadata",
                "clientMetadata is at most 4 KiB of JSON",
            ));
        }
    }
    let Some(url) = url else {
        if metadata.is_some() {
            return Err(ApiError::invalid(
                "clientMetadata",
                "clientMetadata goes with notifyUrl",
            ));
        }
        return Ok(None);
    };
    let url = crate::routes::subscriptions::checked_link(state, &url, "notifyUrl").await?;
    Ok(Some((url, metadata)))
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
            notify_secret: None,
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
            notify_secret: notify_secret(state, &request, asked.id),
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
            notify: request
                .notify
                .as_ref()
                .map(|(url, metadata)| (url.as_str(), metadata.as_ref())),
        },
    )
    .await?;
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
        notify_secret: notify_secret(state, &request, row.id),
        job: record,
        estimate_seconds,
        dry_run,
    })
}

/// The secret job `id`'s notice is signed with, for a caller that gave a `notifyUrl`.
fn notify_secret(state: &AppState, request: &JobRequest, id: drive_core::id::JobId) -> Option<String> {
    request
        .notify
        .as_ref()
        .map(|_| state.settings.sealer.job_notice_secret(id))
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

pub(crate) fn settings_error(error: SettingsError) -> ApiError {
    match error {
        SettingsError::Range(e) => ApiError::invalid(&e.field, e.message),
        SettingsError::Shape { at, error } => extract::serde_error(&at, error),
    }
}

pub(crate) fn too_many_jobs(active: i64) -> ApiError {
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
