//! The library: listing, switching a file between public and private, and storage usage.

use std::collections::BTreeMap;

use axum::extract::State;
use drive_core::db::files;
use drive_core::file::FileKind;
use drive_core::plan::Plan;
use drive_core::storage::Bucket;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::records::{FileRecord, FileRef};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(select_user_files))
        .routes(routes!(toggle_file_access))
        .routes(routes!(get_user_storage_usage))
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

/// Switch a file between public and private; its stored object moves to the other bucket.
#[utoipa::path(post, path = "/toggle-file-access", tag = "library", request_body = FileRef,
    responses((status = 200, body = FileRecord)))]
async fn toggle_file_access(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<FileRef>,
) -> ApiResult<axum::Json<FileRecord>> {
    let file = files::find_owned(&state.db, caller.user_id, input.id)
        .await?
        .ok_or_else(|| ApiError::not_found("file_not_found", "no file of yours has that id"))?;
    let from = file.bucket();
    let to = from.other();
    // Copy, then record, then remove the old copy: a crash part-way leaves the record
    // pointing at bytes that exist, never at bytes already removed.
    state
        .storage
        .copy_to(from, to, &file.object_key, file.file_size)
        .await?;
    let moved = files::set_bucket(&state.db, file.id, to).await?;
    if let Err(cause) = state.storage.delete(from, &file.object_key).await {
        tracing::warn!(file.id = %file.id, %cause, "old copy left behind after an access switch");
    }
    let url = (to == Bucket::Public).then(|| state.storage.public_url(&moved.object_key));
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
            buckets.entry(row.bucket.clone()).or_default(),
            kinds.entry(row.kind.clone()).or_default(),
        ] {
            tally.bytes += row.bytes;
            tally.objects += row.objects;
        }
    }
    let used_bytes = rows.iter().map(|r| r.bytes).sum();
    let plan = caller.plan().ok();
    let limit_bytes = plan.map_or(0, |p| state.settings.quotas.for_plan(p));
    Ok(axum::Json(StorageUsage {
        plan,
        used_bytes,
        limit_bytes,
        remaining_bytes: (limit_bytes - used_bytes).max(0),
        objects: rows.iter().map(|r| r.objects).sum(),
        buckets,
        kinds,
    }))
}
