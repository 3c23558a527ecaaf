//! The library: listing, switching a file between public and private, and storage usage.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::StatusCode;
use drive_core::access::{self, Move};
use drive_core::db::collections::{self, CollectionKind};
use drive_core::db::{files, generations};
use drive_core::file::FileKind;
use drive_core::id::{CollectionId, FileId};
use drive_core::input::{Line, List};
use drive_core::job::{self, JobSpec};
use drive_core::plan::Plan;
use drive_core::storage::Bucket;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::records::{FileRecord, FileRef};
use crate::routes::jobs::{self as file_jobs, CreatedJob, JobRequest};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(select_user_files))
        .routes(routes!(toggle_file_access))
        .routes(routes!(get_user_storage_usage))
        .routes(routes!(create_archive_request))
}

/// The caller's files, newest first, without trashed files and extracted derivatives.
#[utoipa::path(post, path = "/select-user-files", tag = "library",
    responses((status = 200, body = Vec<FileRecord>)))]
async fn select_user_files(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<axum::Json<Vec<FileRecord>>> {
    let rows = files::library(&state.db, caller.user_id).await?;
    Ok(axum::Json(
        rows.iter()
            .map(|r| FileRecord::listed(r, &state.storage))
            .collect(),
    ))
}

/// Switch a file between public and private; its stored object moves to the other bucket
/// (see `drive_core::access`). A trashed file cannot be switched.
#[utoipa::path(post, path = "/toggle-file-access", tag = "library", request_body = FileRef,
    responses((status = 200, body = FileRecord)))]
async fn toggle_file_access(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<FileRef>,
) -> ApiResult<axum::Json<FileRecord>> {
    let moved = access::move_file(&state.db, &state.storage, caller.user_id, input.id, Move::Toggle).await?;
    let url = moved.is_public().then(|| state.storage.public_link(moved.id));
    Ok(axum::Json(FileRecord::with_url(&moved, url)))
}

#[derive(Debug, Default, Serialize, ToSchema)]
pub struct Tally {
    bytes: i64,
    objects: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StorageUsage {
    /// The account's plan, or null without one.
    plan: Option<Plan>,
    /// Bytes stored, trash included.
    used_bytes: i64,
    /// The plan's storage limit in bytes (0 without a plan).
    limit_bytes: i64,
    /// What is left before the limit (never negative).
    remaining_bytes: i64,
    /// Stored objects, trash included.
    objects: i64,
    /// By bucket: `private` and `public`.
    buckets: BTreeMap<String, Tally>,
    /// By file type.
    kinds: BTreeMap<String, Tally>,
    /// Extension: images generated this calendar month (UTC, failed ones aside) against the
    /// plan's monthly allowance (0 without a plan).
    images: ImageUsage,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ImageUsage {
    used: i64,
    limit: i64,
}

/// Bytes and object counts, by bucket and by kind, against the plan's limit.
#[utoipa::path(post, path = "/get-user-storage-usage", tag = "library",
    responses((status = 200, body = StorageUsage)))]
async fn get_user_storage_usage(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<axum::Json<StorageUsage>> {
    let rows = files::usage(&state.db, caller.user_id).await?;
    let mut buckets: BTreeMap<String, Tally> = [Bucket::Private, Bucket::Public]
        .into_iter()
        .map(|b| (b.as_str().to_string(), Tally::default()))
        .collect();
    let mut kinds: BTreeMap<String, Tally> = FileKind::ALL
        .into_iter()
        .map(|k| (k.as_str().to_string(), Tally::default()))
        .collect();
    for row in &rows {
        for tally in [
            buckets.entry(row.bucket.as_str().to_string()).or_default(),
            kinds.entry(row.kind.as_str().to_string()).or_default(),
        ] {
            tally.bytes += row.bytes;
            tally.objects += row.objects;
        }
    }
    let used_bytes = rows.iter().map(|r| r.bytes).sum();
    let plan = caller.plan().ok();
    let limit_bytes = plan.map_or(0, |p| state.settings.quotas.for_plan(p));
    let images = ImageUsage {
        used: generations::count_this_month(&mut *state.db.acquire().await?, caller.user_id).await?,
        limit: plan.map_or(0, |p| state.settings.image_allowance.for_plan(p)),
    };
    Ok(axum::Json(StorageUsage {
        plan,
        used_bytes,
        limit_bytes,
        remaining_bytes: (limit_bytes - used_bytes).max(0),
        objects: rows.iter().map(|r| r.objects).sum(),
        buckets,
        kinds,
        images,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArchiveRequestInput {
    /// 1 to 1000 of the caller's files; or `galleryId` or `playlistId`.
    file_ids: Option<List<FileId, 1, 1000>>,
    /// One of the caller's galleries: its images in display order.
    gallery_id: Option<CollectionId>,
    /// One of the caller's playlists: its tracks in order.
    playlist_id: Option<CollectionId>,
    /// The archive's name (`.zip` is added); default `Archive`.
    #[schema(schema_with = title_schema)]
    title: Option<Line>,
}

/// A file name (the zip job's `name`) of 1 to 200 characters, or null.
fn title_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .min_length(Some(1))
        .max_length(Some(200))
        .pattern(Some(format!("^{}$", drive_core::file::name_pattern())))
        .build()
}

/// Ask for a ZIP of files, a gallery or a playlist: a zip job the farm builds in the
/// background; the archive lands as a file beside the first one, and the job's event and
/// `/select-file-jobs` say when.
#[utoipa::path(post, path = "/create-archive-request", tag = "library", request_body = ArchiveRequestInput,
    responses((status = 202, body = CreatedJob)))]
async fn create_archive_request(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<ArchiveRequestInput>,
) -> ApiResult<(StatusCode, axum::Json<CreatedJob>)> {
    let (ids, with_public) = match (&input.file_ids, input.gallery_id, input.playlist_id) {
        (Some(ids), None, None) => (ids.to_vec(), false),
        (None, Some(id), None) => (
            collection_files(&state, &caller, CollectionKind::Gallery, id).await?,
            true,
        ),
        (None, None, Some(id)) => (
            collection_files(&state, &caller, CollectionKind::Playlist, id).await?,
            true,
        ),
        (None, None, None) => return Err(ApiError::missing("fileIds")),
        _ => {
            return Err(ApiError::invalid(
                "fileIds",
                "give one of fileIds, galleryId and playlistId",
            ));
        }
    };
    let title = input.title.map_or_else(|| "Archive".to_string(), String::from);
    let spec = JobSpec::parse(job::JobType::Zip, serde_json::json!({ "name": title })).map_err(|_| {
        ApiError::invalid(
            "title",
            "title is 1 to 200 characters, not . or .., with no slash, backslash, control or invisible characters",
        )
    })?;
    // In the collection's order; files the caller cannot see (any more) are left out.
    let mut inputs = files::find_many(&state.db, caller.user_id, &ids, with_public).await?;
    inputs.sort_by_key(|f| ids.iter().position(|id| *id == f.id));
    if inputs.is_empty() {
        return Err(ApiError::not_found(
            "file_not_found",
            "none of the files are yours",
        ));
    }
    let request = JobRequest {
        spec,
        inputs,
        source_folder_id: None,
        folder: None,
        folder_id: None,
        idempotency_key: None,
        notify: None,
    };
    let created = file_jobs::submit(&state, &caller, request, false).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(created)))
}

async fn collection_files(
    state: &AppState,
    caller: &Caller,
    kind: CollectionKind,
    id: CollectionId,
) -> ApiResult<Vec<FileId>> {
    let mut tx = state.db.begin().await?;
    if collections::lock_owned(&mut tx, caller.user_id, kind, id)
        .await?
        .is_none()
    {
        return Err(crate::routes::collections::not_found(kind));
    }
    let ids = collections::file_ids(&mut tx, id).await?;
    tx.commit().await?;
    Ok(ids)
}
