//! File requests: a link anyone can send files to without an account. The owner's routes are
//! here (create, list with what arrived, open and close); the routes a sender's page calls are
//! in `senders`, and the page itself in `crate::pages`.

pub mod senders;

use axum::extract::State;
use chrono::{DateTime, Utc};
use drive_core::db::folders;
use drive_core::db::requests::{self, DropListing, DroppedFile, NewRequest, RequestRow};
use drive_core::db::rules::{self, MAX_RULES, NewRule};
use drive_core::file::{FileKind, check_name, guess_type};
use drive_core::folder::{FolderPath, listed};
use drive_core::id::{DropId, FolderId, RequestId};
use drive_core::input::{Bounded, Line, List, Text};
use drive_core::job::{JobSpec, JobType, SettingsError};
use drive_core::maintenance;
use drive_core::records::FolderRef;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_file_request))
        .routes(routes!(select_file_requests))
        .routes(routes!(set_file_request_open))
        .routes(routes!(delete_file_request))
        .merge(senders::router())
}

/// The most requests a listing answers.
const MAX_LISTED: i64 = 50;
/// The most entries `acceptTypes` may have.
const MAX_ACCEPT_TYPES: usize = 50;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateRequestInput {
    /// 1 to 200 characters.
    title: Line<1, 200>,
    /// Up to 2000 characters; shown to whoever opens the link.
    message: Option<Text<0, 2000>>,
    /// Where arrivals land, made if absent; or `folderId`. Default: a new folder at the top
    /// named for the request.
    folder: Option<FolderPath>,
    /// One of the caller's folders; or `folder`.
    folder_id: Option<FolderId>,
    /// When it stops taking files; in the future.
    expire_time: Option<DateTime<Utc>>,
    /// Most it takes across every sender, at least 1.
    max_bytes: Option<Bounded<1, { i64::MAX }>>,
    /// Extension: what it takes, each an extension (`.pdf`) or a kind (`Video`, `Audio`,
    /// `Image`, `Pdf`, `Text`, `Archive`); 1 to 50. Default: anything.
    accept_types: Option<List<Line, 1, { MAX_ACCEPT_TYPES }>>,
    /// Extension: most files one sender (one visit of the page) may send, 1 to 10000.
    max_files_per_sender: Option<Bounded<1, 10000>>,
    /// Extension: a job run on each file that arrives and that its type takes, under the
    /// owner's job minutes, its result beside the file: `{ jobType, options }` as
    /// `/create-file-job` takes them (a type that works on one file at a time). It is the
    /// folder rule on the request's folder (`/select-folder-rules`): it also takes what the
    /// owner puts there.
    on_arrival: Option<OnArrival>,
}

#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OnArrival {
    #[schema(schema_with = JobType::requestable_schema)]
    job_type: JobType,
    #[serde(default)]
    options: serde_json::Value,
}

/// `onArrival` checked: the job its rule runs.
fn on_arrival_spec(on_arrival: OnArrival) -> ApiResult<JobSpec> {
    let spec = JobSpec::parse(on_arrival.job_type, on_arrival.options).map_err(|e| {
        let why = match e {
            SettingsError::Range(e) => format!("{}: {}", e.field, e.message),
            SettingsError::Shape { at, error } => format!("{at}: {}", error.inner()),
        };
        ApiError::invalid("onArrival", why)
    })?;
    let (min, max) = spec.input_count();
    if !(min..=max).contains(&1) {
        return Err(ApiError::invalid(
            "onArrival",
            "onArrival runs a job type that takes one file",
        ));
    }
    Ok(spec)
}

/// A request as `/create-file-request` answers it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedRequest {
    id: RequestId,
    title: String,
    message: Option<String>,
    expire_time: Option<DateTime<Utc>>,
    max_bytes: Option<i64>,
    folder: FolderRef,
    /// Extension: the page to share, `{site}/requests/{id}`.
    url: String,
    accept_types: Option<Vec<String>>,
    max_files_per_sender: Option<i32>,
    #[schema(value_type = Option<Object>)]
    on_arrival: Option<serde_json::Value>,
}

/// Make a link anyone can send files to.
#[utoipa::path(post, path = "/create-file-request", tag = "requests", request_body = CreateRequestInput,
    responses((status = 200, body = CreatedRequest)))]
async fn create_file_request(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CreateRequestInput>,
) -> ApiResult<axum::Json<CreatedRequest>> {
    caller.plan()?;
    let title = input.title.trim();
    let message = input.message.as_deref().filter(|m| !m.trim().is_empty());
    if input.expire_time.is_some_and(|t| t <= Utc::now()) {
        return Err(ApiError::invalid(
            "expireTime",
            "expireTime must be in the future",
        ));
    }
    let accept_types = input.accept_types.as_deref().map(accepted_types).transpose()?;
    let on_arrival = input.on_arrival.map(on_arrival_spec).transpose()?;

    let mut tx = state.db.begin().await?;
    let folder = match (input.folder, input.folder_id) {
        (Some(_), Some(_)) => return Err(ApiError::invalid("folderId", "give folder or folderId, not both")),
        (Some(path), None) => folders::ensure(&mut tx, caller.user_id, &path)
            .await?
            .ok_or_else(|| ApiError::invalid("folder", "give a folder below the top, or leave folder out"))?,
        (None, Some(id)) => folders::find_owned(&state.db, caller.user_id, id)
            .await?
            .ok_or_else(|| ApiError::not_found("folder_not_found", "no folder of yours has that folderId"))?,
        (None, None) => {
            let path =
                folders::free_folder_path(&state.db, caller.user_id, &format!("/{}", folder_name(title)))
                    .await?;
            let path = FolderPath::try_from(path).map_err(|why| ApiError::invalid("title", why))?;
            folders::ensure(&mut tx, caller.user_id, &path)
                .await?
                .expect("a folder below the top")
        }
    };
    let row = requests::create(
        &mut tx,
        &NewRequest {
            user_id: caller.user_id,
            token_id: caller.token_id,
            title,
            message,
            folder_id: folder.id,
            expires_at: input.expire_time,
            max_bytes: input.max_bytes.map(Bounded::get),
            accept_types,
            max_files_per_sender: input.max_files_per_sender.map(|n| n.get() as i32),
        },
    )
    .await?;
    let row = match on_arrival {
        None => row,
        Some(spec) => {
            let rule = NewRule {
                user_id: caller.user_id,
                folder_id: folder.id,
                spec: &spec,
                template_id: None,
                request_id: Some(row.id),
                result_folder_id: None,
            };
            if rules::create(&mut tx, &rule).await?.is_none() {
                return Err(ApiError::invalid(
                    "onArrival",
                    format!("an account keeps at most {MAX_RULES} folder rules; delete one first"),
                ));
            }
            requests::find(&mut *tx, row.id)
                .await?
                .expect("the request just made")
        }
    };
    tx.commit().await?;
    Ok(axum::Json(CreatedRequest {
        url: page_url(&state, row.id),
        id: row.id,
        title: row.title,
        message: row.message,
        expire_time: row.expires_at,
        max_bytes: row.max_bytes,
        folder: FolderRef {
            id: row.folder_id,
            path: listed(&row.folder_path),
        },
        accept_types: row.accept_types,
        max_files_per_sender: row.max_files_per_sender,
        on_arrival: row.on_arrival.as_ref().and_then(on_arrival_shown),
    }))
}

/// `onArrival` as answers show it: `{ jobType, options }`.
fn on_arrival_shown(stored: &serde_json::Value) -> Option<serde_json::Value> {
    serde_json::from_value::<JobSpec>(stored.clone())
        .ok()
        .map(|spec| serde_json::json!({ "jobType": spec.job_type(), "options": spec.options() }))
}

/// The page a request's senders open.
pub fn page_url(state: &AppState, id: RequestId) -> String {
    format!("{}/requests/{id}", state.storage.site_url())
}

/// A folder name for a title: slashes and backslashes become dashes, and a name the folder rule
/// refuses (`.`, `..`) is "File request".
fn folder_name(title: &str) -> String {
    let name: String = title
        .chars()
        .map(|c| if c == '/' || c == '\\' { '-' } else { c })
        .collect();
    let name = name.trim().to_string();
    if check_name(&name).is_ok() {
        name
    } else {
        "File request".to_string()
    }
}

/// `acceptTypes` as stored: extensions lower case with their dot, kinds by their name.
fn accepted_types(types: &[Line]) -> ApiResult<Vec<String>> {
    let mut accepted: Vec<String> = Vec::with_capacity(types.len());
    for entry in types {
        let entry = entry.trim();
        let normal = if let Some(extension) = entry.strip_prefix('.') {
            let valid =
                (1..=16).contains(&extension.len()) && extension.chars().all(|c| c.is_ascii_alphanumeric());
            if !valid {
                return Err(ApiError::invalid(
                    "acceptTypes",
                    format!("{entry:?} is not an extension: a dot, then 1 to 16 letters or digits"),
                ));
            }
            format!(".{}", extension.to_ascii_lowercase())
        } else {
            FileKind::ALL
                .into_iter()
                .find(|k| *k != FileKind::Other && k.as_str().eq_ignore_ascii_case(entry))
                .map(|k| k.as_str().to_string())
                .ok_or_else(|| {
                    ApiError::invalid(
                        "acceptTypes",
                        format!("{entry:?} is neither an extension (.pdf) nor a kind (Video, Audio, Image, Pdf, Text, Archive)"),
                    )
                })?
        };
        if !accepted.contains(&normal) {
            accepted.push(normal);
        }
    }
    Ok(accepted)
}

/// Whether a request taking `accept` (`None`: anything) takes a file of this name.
pub fn accepts(accept: Option<&[String]>, file_name: &str) -> bool {
    let Some(accept) = accept else { return true };
    let (kind, _) = guess_type(file_name);
    let extension = file_name
        .rsplit_once('.')
        .map(|(_, e)| format!(".{}", e.to_ascii_lowercase()));
    accept
        .iter()
        .any(|a| Some(a) == extension.as_ref() || a == kind.as_str())
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelectRequestsInput {
    /// 1 to 50 of the caller's requests.
    request_ids: Option<List<RequestId, 1, { MAX_LISTED as usize }>>,
    /// Only requests dropping into this folder or one inside it (counted before the 50); of
    /// what arrived, only files still there.
    folder: Option<FolderPath>,
}

/// A file request with what arrived.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileRequest {
    id: RequestId,
    title: String,
    message: Option<String>,
    insert_time: DateTime<Utc>,
    /// Not closed and not past `expireTime`.
    open: bool,
    close_time: Option<DateTime<Utc>>,
    expire_time: Option<DateTime<Utc>>,
    max_bytes: Option<i64>,
    /// Bytes of the files listed in `drops`.
    received_bytes: i64,
    folder: FolderRef,
    /// One per sender who sent something still there, oldest first.
    drops: Vec<RequestDrop>,
    /// Extension: the page to share.
    url: String,
    accept_types: Option<Vec<String>>,
    max_files_per_sender: Option<i32>,
    #[schema(value_type = Option<Object>)]
    on_arrival: Option<serde_json::Value>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestDrop {
    id: DropId,
    sender_name: String,
    note: Option<String>,
    /// When its first file was recorded.
    arrived_time: DateTime<Utc>,
    /// When the sender said it was done; null while sending (or if it never said).
    finish_time: Option<DateTime<Utc>>,
    /// Whether the owner had listed it before.
    viewed: bool,
    files: Vec<DroppedFile>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FileRequests {
    /// Newest first, at most 50.
    requests: Vec<FileRequest>,
}

/// The caller's file requests, with what arrived.
#[utoipa::path(post, path = "/select-file-requests", tag = "requests", request_body = Option<SelectRequestsInput>,
    responses((status = 200, body = FileRequests)))]
async fn select_file_requests(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<Option<SelectRequestsInput>>,
) -> ApiResult<axum::Json<FileRequests>> {
    let input = input.unwrap_or_default();
    let folder = input.folder.filter(|f| !f.is_top()).map(|f| f.stored());
    let rows = requests::list(
        &state.db,
        caller.user_id,
        input.request_ids.as_deref(),
        folder.as_deref(),
        MAX_LISTED,
    )
    .await?;
    let ids: Vec<RequestId> = rows.iter().map(|r| r.id).collect();
    let drops = requests::drops(&state.db, &ids, folder.as_deref()).await?;
    let seen: Vec<DropId> = drops.iter().filter(|d| !d.viewed).map(|d| d.id).collect();
    let now = Utc::now();
    let requests = rows
        .into_iter()
        .map(|row| {
            let drops: Vec<RequestDrop> = drops
                .iter()
                .filter(|d| d.request_id == row.id)
                .cloned()
                .map(RequestDrop::from)
                .collect();
            listed_request(&state, row, drops, now)
        })
        .collect();
    requests::mark_viewed(&state.db, &seen).await?;
    Ok(axum::Json(FileRequests { requests }))
}

impl From<DropListing> for RequestDrop {
    fn from(d: DropListing) -> RequestDrop {
        RequestDrop {
            id: d.id,
            sender_name: d.sender_name,
            note: d.note,
            arrived_time: d.arrived_at,
            finish_time: d.finished_at,
            viewed: d.viewed,
            files: d.files,
        }
    }
}

fn listed_request(
    state: &AppState,
    row: RequestRow,
    drops: Vec<RequestDrop>,
    now: DateTime<Utc>,
) -> FileRequest {
    FileRequest {
        open: row.is_open(now),
        url: page_url(state, row.id),
        received_bytes: drops.iter().flat_map(|d| &d.files).map(|f| f.file_size).sum(),
        id: row.id,
        title: row.title,
        message: row.message,
        insert_time: row.created_at,
        close_time: row.closed_at,
        expire_time: row.expires_at,
        max_bytes: row.max_bytes,
        folder: FolderRef {
            id: row.folder_id,
            path: listed(&row.folder_path),
        },
        drops,
        on_arrival: row.on_arrival.as_ref().and_then(on_arrival_shown),
        accept_types: row.accept_types,
        max_files_per_sender: row.max_files_per_sender,
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetOpenInput {
    request_id: RequestId,
    open: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestOpen {
    id: RequestId,
    /// False once closed, and past `expireTime` whatever was asked.
    open: bool,
    close_time: Option<DateTime<Utc>>,
    expire_time: Option<DateTime<Utc>>,
}

/// Close a request, or open it again (a request past its `expireTime` stays closed).
#[utoipa::path(post, path = "/set-file-request-open", tag = "requests", request_body = SetOpenInput,
    responses((status = 200, body = RequestOpen)))]
async fn set_file_request_open(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<SetOpenInput>,
) -> ApiResult<axum::Json<RequestOpen>> {
    let row = requests::set_open(&state.db, caller.user_id, input.request_id, input.open)
        .await?
        .ok_or_else(request_not_found)?;
    if !row.is_open(Utc::now()) {
        // What its senders hold of the owner's storage without having sent it is given back
        // now; whatever this misses (an upload being recorded at this moment), the sweep does.
        let released = maintenance::release_request(&state.db, &state.storage, row.id, Utc::now()).await;
        if let Err(cause) = released {
            tracing::warn!(request.id = %row.id, %cause, "a closed request's uploads are left to the sweep");
        }
    }
    Ok(axum::Json(RequestOpen {
        id: row.id,
        open: row.is_open(Utc::now()),
        close_time: row.closed_at,
        expire_time: row.expires_at,
    }))
}

fn request_not_found() -> ApiError {
    ApiError::not_found("request_not_found", "no file request of yours has that requestId")
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteRequestInput {
    request_id: RequestId,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedRequest {
    deleted: RequestId,
}

/// Delete a file request: its link stops working, and its drops and its `onArrival` rule go;
/// what arrived stays as the caller's files, where it landed.
#[utoipa::path(post, path = "/delete-file-request", tag = "requests", request_body = DeleteRequestInput,
    responses((status = 200, body = DeletedRequest)))]
async fn delete_file_request(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<DeleteRequestInput>,
) -> ApiResult<axum::Json<DeletedRequest>> {
    let mut tx = state.db.begin().await?;
    if !requests::delete(&mut tx, caller.user_id, input.request_id).await? {
        return Err(request_not_found());
    }
    tx.commit().await?;
    Ok(axum::Json(DeletedRequest {
        deleted: input.request_id,
    }))
}
