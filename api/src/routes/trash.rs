//! Trash: recoverable removal, and deletion for good (records and stored bytes).

use axum::extract::State;
use drive_core::access::{self, Move};
use drive_core::db::events::EventKind;
use drive_core::db::files::{self, ObjectToDelete};
use drive_core::db::folders;
use drive_core::id::FileId;
use drive_core::input::{List, UNLIMITED};
use drive_core::{maintenance, mirror};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::Json;
use crate::records::{FileRecord, FileRef};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(trash_files))
        .routes(routes!(restore_files))
        .routes(routes!(select_trashed_files))
        .routes(routes!(purge_trashed_files))
        .routes(routes!(delete_files))
}

/// The ids of a file-reference array.
fn ids(refs: &[FileRef]) -> Vec<FileId> {
    refs.iter().map(|r| r.id).collect()
}

/// What `/trash-files` and `/delete-files` take: 1 to 100 files a call.
type HundredFiles = List<FileRef, 1, 100>;
/// What `/restore-files` takes: any number from 1.
type AnyFiles = List<FileRef, 1, { UNLIMITED }>;

/// Trashes or restores (`how`) those of `ids` whose bytes change bucket on the way; answers
/// their ids.
async fn move_where_needed(
    state: &AppState,
    caller: &Caller,
    ids: &[FileId],
    how: Move,
) -> ApiResult<Vec<FileId>> {
    let restoring = how == Move::Restore;
    let moving = files::needing_a_move(&state.db, caller.user_id, ids, restoring).await?;
    for &id in &moving {
        access::move_file(&state.db, &state.storage, caller.user_id, id, how).await?;
    }
    Ok(moving)
}

/// Trashes or restores (`how`) those of `ids` that are the caller's: first those whose bytes
/// change bucket, each on its own, then the rest in one transaction with their events. Answers
/// the ids acted on, in the order given.
async fn trash_or_restore(
    state: &AppState,
    caller: &Caller,
    ids: &[FileId],
    how: Move,
) -> ApiResult<Vec<FileId>> {
    let mut done = move_where_needed(state, caller, ids, how).await?;
    let mut tx = state.db.begin().await?;
    let (private, told) = match how {
        Move::Restore => (
            files::restore(&mut tx, caller.user_id, ids).await?,
            EventKind::Restored,
        ),
        _ => (
            files::trash(&mut tx, caller.user_id, ids).await?,
            EventKind::Trashed,
        ),
    };
    mirror::files_changed(&mut tx, caller.user_id, told, &private, mirror::nothing_more).await?;
    tx.commit().await?;
    done.extend(private.iter().map(|f| f.id));
    done.sort_by_key(|id| ids.iter().position(|i| i == id));
    Ok(done)
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Trashed {
    trashed: Vec<FileId>,
}

/// Move 1 to 100 of the caller's files to the trash.
#[utoipa::path(post, path = "/trash-files", tag = "trash", request_body = HundredFiles,
    responses((status = 200, body = Trashed)))]
async fn trash_files(
    State(state): State<AppState>,
    caller: Caller,
    Json(refs): Json<HundredFiles>,
) -> ApiResult<axum::Json<Trashed>> {
    let ids = ids(&refs);
    // Public files first leave the public bucket: nothing anonymous reaches a trashed file.
    let trashed = trash_or_restore(&state, &caller, &ids, Move::Trash).await?;
    Ok(axum::Json(Trashed { trashed }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Restored {
    restored: Vec<FileId>,
}

/// Bring the caller's files back from the trash.
#[utoipa::path(post, path = "/restore-files", tag = "trash", request_body = AnyFiles,
    responses((status = 200, body = Restored)))]
async fn restore_files(
    State(state): State<AppState>,
    caller: Caller,
    Json(refs): Json<AnyFiles>,
) -> ApiResult<axum::Json<Restored>> {
    let ids = ids(&refs);
    // Files trashed with their deleted folder go back to its path first.
    let mut tx = state.db.begin().await?;
    folders::restore_paths(&mut tx, caller.user_id, &ids).await?;
    tx.commit().await?;
    // Files that were public when trashed go back to the public bucket.
    let restored = trash_or_restore(&state, &caller, &ids, Move::Restore).await?;
    Ok(axum::Json(Restored { restored }))
}

/// The caller's trash, most recently trashed first.
#[utoipa::path(post, path = "/select-trashed-files", tag = "trash",
    responses((status = 200, body = Vec<FileRecord>)))]
async fn select_trashed_files(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<axum::Json<Vec<FileRecord>>> {
    let rows = files::trashed(&state.db, caller.user_id).await?;
    Ok(axum::Json(
        rows.iter()
            .map(|r| FileRecord::listed(r, &state.storage))
            .collect(),
    ))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Deleted {
    deleted: Vec<FileId>,
}

/// Empty the trash for good.
#[utoipa::path(post, path = "/purge-trashed-files", tag = "trash",
    responses((status = 200, body = Deleted)))]
async fn purge_trashed_files(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<axum::Json<Deleted>> {
    let gone = delete(&state, &caller, None).await?;
    Ok(axum::Json(Deleted {
        deleted: remove_objects(&state, gone).await,
    }))
}

/// Delete 1 to 100 files for good, trashed or not, with their stored objects.
#[utoipa::path(post, path = "/delete-files", tag = "trash", request_body = HundredFiles,
    responses((status = 200, body = Deleted)))]
async fn delete_files(
    State(state): State<AppState>,
    caller: Caller,
    Json(refs): Json<HundredFiles>,
) -> ApiResult<axum::Json<Deleted>> {
    let ids = ids(&refs);
    let gone = delete(&state, &caller, Some(&ids)).await?;
    Ok(axum::Json(Deleted {
        deleted: remove_objects(&state, gone).await,
    }))
}

/// Deletes the records ([`files::delete`]) and tells a mirror which files went, in one
/// transaction.
async fn delete(state: &AppState, caller: &Caller, ids: Option<&[FileId]>) -> ApiResult<Vec<ObjectToDelete>> {
    let mut tx = state.db.begin().await?;
    let gone = files::delete(&mut tx, caller.user_id, ids).await?;
    let told: Vec<_> = gone
        .iter()
        .filter(|o| !o.is_derivative)
        .map(|o| (o.id.into(), o.file_name.clone(), o.folder_id))
        .collect();
    mirror::files_deleted(&mut tx, caller.user_id, &told).await?;
    tx.commit().await?;
    Ok(gone)
}

/// Removes the stored objects of deleted records and answers the deleted ids (derivatives go
/// too but are not named). An object the store fails to remove stays queued in
/// `object_deletions` for the next sweep; the record is gone either way.
async fn remove_objects(state: &AppState, gone: Vec<ObjectToDelete>) -> Vec<FileId> {
    let mut deleted = Vec::new();
    for object in gone {
        if let Err(cause) =
            maintenance::remove_object(&state.db, &state.storage, object.bucket, &object.object_key).await
        {
            tracing::warn!(%cause, key = %object.object_key, "object removal queued for retry");
        }
        if !object.is_derivative {
            deleted.push(object.id);
        }
    }
    deleted
}
