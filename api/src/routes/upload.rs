//! Upload: the presigned form, the insert that records a stored object, and the checks and
//! reservation every upload starts with (the multipart routes are in `multipart`). Bytes go
//! straight to the store; these handlers only check, sign and record.

use axum::extract::State;
use chrono::{DateTime, Utc};
use drive_core::db::events::EventKind;
use drive_core::db::files::{self, FileRow};
use drive_core::db::folders;
use drive_core::db::forms;
use drive_core::db::reservations::{self, Reserve};
use drive_core::entry::{self, Entered};
use drive_core::file::{FileKind, FileName, FileSize, MAX_FORM_UPLOAD_SIZE, MimeType, ObjectKey};
use drive_core::folder::FolderPath;
use drive_core::id::{FileId, FolderId, JobId, UserId};
use drive_core::multipart::{PART_URL_LIFETIME, UPLOAD_LIFETIME};
use drive_core::plan::Plan;
use drive_core::storage::{Bucket, PostRules, StoredHeaders};
use serde::{Deserialize, Serialize};
use sqlx::PgConnection;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, JsonWith};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(generate_file_urls))
        .routes(routes!(insert_file))
}

/// How long a presigned upload form works.
const FORM_LIFETIME: chrono::TimeDelta = chrono::TimeDelta::days(2);
/// Stored objects are private and may be cached by the downloader for the life of a link.
pub(crate) const CACHE_CONTROL: &str = "private, max-age=21600";

/// The body of `/generate-file-urls` and `/create-multipart-upload`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadInput {
    /// The kind of file.
    #[serde(rename = "type")]
    kind: FileKind,
    pub(crate) file_name: FileName,
    /// Exact size in bytes, at most 2 TB.
    pub(crate) file_size: FileSize,
    /// Storage key; begins `users/{userId}/`.
    pub(crate) object_key: ObjectKey,
    /// Content type; `application/octet-stream` when absent.
    mime_type: Option<MimeType>,
}

impl UploadInput {
    pub(crate) fn mime_type(&self) -> &str {
        self.mime_type
            .as_ref()
            .map_or(MimeType::OCTET_STREAM, MimeType::as_str)
    }
}

/// How long after the last moment an issued form or part URL can write, the object it made
/// may wait for `/insert-file` before the sweep removes it.
const INSERT_GRACE: chrono::TimeDelta = chrono::TimeDelta::days(1);

/// The checks every route that starts an upload makes, and its reservation: a plan, the
/// caller's own key, a key no file is recorded under (an upload never overwrites a file: 409),
/// and room in the quota for the declared size beside the account's files and its other
/// uploads not yet recorded. `form_until` is when a form being issued stops working; a
/// multipart upload (`multipart`) is also refused past the open uploads an account may have
/// under other keys.
pub(crate) async fn reserve_upload(
    state: &AppState,
    caller: &Caller,
    input: &UploadInput,
    form_until: Option<DateTime<Utc>>,
    multipart: bool,
) -> ApiResult<Plan> {
    let plan = caller.plan()?;
    check_key(caller, &input.object_key)?;
    let last_write = form_until.unwrap_or_else(|| Utc::now() + UPLOAD_LIFETIME + PART_URL_LIFETIME);
    let request = reservations::Request {
        user_id: caller.user_id,
        object_key: input.object_key.as_str(),
        file_size: input.file_size.bytes(),
        form_until,
        expires_at: last_write + INSERT_GRACE,
        max_open_uploads: multipart.then_some(state.settings.max_open_uploads),
        request: None,
    };
    let limit = state.settings.quotas.for_plan(plan);
    let mut tx = state.db.begin().await?;
    match reservations::reserve(&mut tx, request, limit).await? {
        Reserve::Reserved => {
            tx.commit().await?;
            Ok(plan)
        }
        Reserve::KeyTaken => Err(key_taken()),
        Reserve::SizeFixed { size } => Err(ApiError::bad_request(
            "size_mismatch",
            "fileSize",
            format!(
                "objectKey was issued for {size} bytes, and a key keeps one size while a form \
                 issued for it can still write: send {size}, or choose another objectKey"
            ),
        )),
        Reserve::OverQuota {
            used,
            reserved,
            wanted,
        } => Err(storage_limit_reached(
            "fileSize",
            limit,
            used.saturating_add(reserved),
            wanted,
        )),
        Reserve::TooManyUploads { open } => Err(ApiError::bad_request(
            "too_many_open_uploads",
            "objectKey",
            format!(
                "{open} multipart uploads are open, the most an account may have; complete or abort one first"
            ),
        )),
        // Only a sender's upload has a request to fill.
        Reserve::RequestFull => Err(ApiError::Machine(
            "an owner's upload was measured against a file request".into(),
        )),
    }
}

/// 409: a file is recorded under the key, and a recorded object is never written again.
pub(crate) fn key_taken() -> ApiError {
    ApiError::conflict(
        "object_key_taken",
        "a file is already recorded under this objectKey; choose another",
    )
}

fn check_key(caller: &Caller, key: &ObjectKey) -> ApiResult<()> {
    if !key.belongs_to(caller.user_id) {
        return Err(ApiError::invalid(
            "objectKey",
            format!("objectKey must begin users/{}/", caller.user_id),
        ));
    }
    Ok(())
}

/// 400 `storage_limit_reached` on `field`: `used` of `limit` bytes are taken, `adding` more
/// were asked for.
pub(crate) fn storage_limit_reached(field: &str, limit: i64, used: i64, adding: i64) -> ApiError {
    ApiError::bad_request(
        "storage_limit_reached",
        field,
        format!(
            "the storage limit is reached: {used} of {limit} bytes used, {} left, {adding} needed",
            (limit - used).max(0)
        ),
    )
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileUrls {
    /// Where to POST the file as `multipart/form-data`.
    upload_url: String,
    /// Fields to send unchanged, before the file part.
    upload_form: BTreeMap<String, String>,
    /// Static URL for public-bucket files; null for private files.
    download_url: Option<String>,
}

/// A presigned upload form (single request, up to 5 GiB; use multipart above that).
#[utoipa::path(post, path = "/generate-file-urls", tag = "upload", request_body = UploadInput,
    responses((status = 200, body = FileUrls)))]
async fn generate_file_urls(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<UploadInput>,
) -> ApiResult<axum::Json<FileUrls>> {
    if input.file_size.bytes() > MAX_FORM_UPLOAD_SIZE {
        return Err(ApiError::invalid(
            "fileSize",
            "a single-request upload takes at most 5 GiB; use /create-multipart-upload",
        ));
    }
    let now = Utc::now();
    reserve_upload(&state, &caller, &input, Some(now + FORM_LIFETIME), false).await?;
    let headers = StoredHeaders::new(input.mime_type(), input.file_name.as_str(), "inline");
    let rules = PostRules {
        content_length: input.file_size.bytes(),
        content_type: headers.content_type,
        content_disposition: headers.content_disposition,
        cache_control: CACHE_CONTROL.to_string(),
    };
    let form = state.storage.presign_post(
        Bucket::Private,
        input.object_key.as_str(),
        &rules,
        FORM_LIFETIME,
        now,
    );
    Ok(axum::Json(FileUrls {
        upload_url: form.url,
        upload_form: form.fields,
        download_url: None,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct Creator {
    id: UserId,
}

/// The fields `/insert-file` adds to the upload input.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InsertFields {
    /// Clients send false; a file under `users/` is always inserted private.
    #[serde(default)]
    #[allow(dead_code)]
    is_public: bool,
    /// The caller (`id` must be the caller's user id).
    creator: Option<Creator>,
    /// The source file's modified time; a client that sends it can skip re-uploading the
    /// same file later.
    modified_time: Option<DateTime<Utc>>,
    /// The folder it lands in, at most 32 deep, made on the way; or `folderId`. Default: the
    /// top of the drive.
    folder: Option<FolderPath>,
    /// One of the caller's folders for it to land in; or `folder`.
    folder_id: Option<FolderId>,
}

/// The body of `/insert-file`, as documented: the upload input plus [`InsertFields`]. The
/// handler reads the two parts separately (see [`JsonWith`]); this type only describes them.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct InsertInput {
    #[serde(flatten)]
    upload: UploadInput,
    #[serde(flatten)]
    fields: InsertFields,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Inserted {
    id: FileId,
}

/// Record an uploaded object as a file.
#[utoipa::path(post, path = "/insert-file", tag = "upload", request_body = InsertInput,
    responses((status = 200, body = Inserted)))]
async fn insert_file(
    State(state): State<AppState>,
    caller: Caller,
    JsonWith(upload, input): JsonWith<UploadInput, InsertFields>,
) -> ApiResult<axum::Json<Inserted>> {
    check_key(&caller, &upload.object_key)?;
    if input.creator.as_ref().is_some_and(|c| c.id != caller.user_id) {
        return Err(ApiError::invalid("creator.id", "creator.id must be your user id"));
    }
    let limit = state.settings.quotas.for_plan(caller.plan()?);
    let mut tx = state.db.begin().await?;
    let folder_id = match (input.folder, input.folder_id) {
        (Some(_), Some(_)) => return Err(ApiError::invalid("folderId", "give folder or folderId, not both")),
        (Some(path), None) => folders::ensure(&mut tx, caller.user_id, &path)
            .await?
            .map(|f| f.id),
        (None, Some(id)) => Some(
            folders::find_owned(&state.db, caller.user_id, id)
                .await?
                .ok_or_else(|| ApiError::not_found("folder_not_found", "no folder of yours has that id"))?
                .id,
        ),
        (None, None) => None,
    };
    let new = files::NewFile {
        user_id: caller.user_id,
        file_name: upload.file_name.as_str(),
        file_size: upload.file_size.bytes(),
        mime_type: upload.mime_type(),
        kind: upload.kind,
        bucket: Bucket::Private,
        object_key: upload.object_key.as_str(),
        modified_time: input.modified_time,
        folder_id,
        derivative_of: None,
        copy_of: None,
    };
    let recorded = record_upload(&state, &mut tx, &new, limit, Some(EventKind::File)).await?;
    tx.commit().await?;
    recorded.ring_for_queued(&state).await;
    Ok(axum::Json(Inserted { id: recorded.file.id }))
}

/// An uploaded object, recorded as a file.
pub(crate) struct Recorded {
    pub file: FileRow,
    /// The jobs queued for it (its metadata reading, its folder's rules'), to ring for once
    /// the transaction commits.
    queued: Vec<JobId>,
}

impl Recorded {
    /// Tells the farm of the jobs queued for the file, after the commit.
    pub(crate) async fn ring_for_queued(&self, state: &AppState) {
        if !self.queued.is_empty() {
            state.doorbell.ring().await;
        }
    }
}

/// Tells the farm a metadata reading was committed for a file.
pub(crate) async fn push_reading(state: &AppState, reading: Option<JobId>) {
    if reading.is_some() {
        state.doorbell.ring().await;
    }
}

/// Records the object an upload stored under `new.object_key` as a file, in `tx`, announced by
/// an event of `kind` (see [`entry::enter`]): the key's reservation is locked (so the sweep
/// cannot remove the object meanwhile, nor a multipart completion rewrite it), the stored size
/// must be the declared one, then the file enters the drive and the reservation ends. A key
/// recorded already answers its file (a re-sent insert).
pub(crate) async fn record_upload(
    state: &AppState,
    tx: &mut PgConnection,
    new: &files::NewFile<'_>,
    limit: i64,
    kind: Option<EventKind>,
) -> ApiResult<Recorded> {
    let key = new.object_key;
    let Some(reserved) = reservations::lock(&mut *tx, new.user_id, key).await? else {
        // Recorded already, or never uploaded through the drive's forms and uploads, or left
        // unrecorded past its time and removed.
        return match files::find_by_key(&mut *tx, new.user_id, key).await? {
            Some(file) => Ok(Recorded {
                file,
                queued: Vec::new(),
            }),
            None => Err(object_not_found()),
        };
    };
    let stored = state
        .storage
        .head(Bucket::Private, key)
        .await?
        .ok_or_else(object_not_found)?;
    if stored.size != new.file_size || stored.size > reserved {
        return Err(ApiError::bad_request(
            "size_mismatch",
            "fileSize",
            format!(
                "fileSize says {} bytes but storage holds {}",
                new.file_size, stored.size
            ),
        ));
    }
    let recorded = match entry::enter(&mut *tx, new, limit, kind, None).await? {
        Entered::New { file, queued } => {
            state.metrics.uploaded(file.file_size);
            Recorded { file, queued }
        }
        Entered::Existing(file) => Recorded {
            file,
            queued: Vec::new(),
        },
        // The caller's transaction, dropped, rolls the insert back.
        Entered::OverQuota { used } => {
            return Err(storage_limit_reached("fileSize", limit, used, stored.size));
        }
    };
    reservations::release(&mut *tx, key).await?;
    // What a form issued for the key may write from now on is told by this tag.
    forms::recorded(&mut *tx, key, &stored.etag).await?;
    Ok(recorded)
}

fn object_not_found() -> ApiError {
    ApiError::bad_request(
        "object_not_found",
        "objectKey",
        "no upload under objectKey is waiting to be recorded: upload the file first (an upload \
         not recorded within a day of its form or parts expiring is removed)",
    )
}
