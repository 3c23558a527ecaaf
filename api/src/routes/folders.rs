//! Moving (and so renaming) and deleting folders. A folder keeps its id through a move, and so
//! its files, its rules and the file requests that drop into it.

use axum::extract::State;
use drive_core::access::{self, Move};
use drive_core::db::events::EventKind;
use drive_core::db::folders::{self, FolderMoveError};
use drive_core::folder::{self, FolderPath};
use drive_core::id::{FileId, FolderId};
use drive_core::mirror;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::records::FolderRef;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(move_folder))
        .routes(routes!(delete_folder))
}

fn folder_not_found() -> ApiError {
    ApiError::not_found("folder_not_found", "no folder of yours has that id")
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MoveFolderInput {
    /// One of the caller's folders.
    folder_id: FolderId,
    /// Its new path (a rename is a path with another last name), made on the way; not the top,
    /// not inside the folder itself, and with every folder inside it still at most 32 deep.
    path: FolderPath,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MovedFolder {
    /// The folder where it now is; its id stays.
    folder: FolderRef,
    /// Where it was, like `/a/b/`.
    from: String,
}

/// Move or rename a folder, with everything in it.
#[utoipa::path(post, path = "/move-folder", tag = "organize", request_body = MoveFolderInput,
    responses((status = 200, body = MovedFolder),
        (status = 409, description = "`folder_path_taken`: a folder is already at a path the move would take; the message names it")))]
async fn move_folder(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<MoveFolderInput>,
) -> ApiResult<axum::Json<MovedFolder>> {
    let folder = folders::find_owned(&state.db, caller.user_id, input.folder_id)
        .await?
        .ok_or_else(folder_not_found)?;
    let mut tx = state.db.begin().await?;
    let moved = folders::move_folder(&mut tx, caller.user_id, &folder, &input.path)
        .await
        .map_err(|e| match e {
            FolderMoveError::IntoItself | FolderMoveError::TooDeep => {
                ApiError::invalid("path", e.to_string())
            }
            FolderMoveError::Taken(path) => ApiError::conflict(
                "folder_path_taken",
                format!("{} is taken: a folder is already there", folder::listed(&path)),
            ),
            FolderMoveError::Database(cause) => ApiError::Database(cause),
        })?;
    if moved.path != folder.path {
        mirror::folder_changed(&mut tx, caller.user_id, moved.id, &moved.path, Some(&folder.path)).await?;
    }
    tx.commit().await?;
    Ok(axum::Json(MovedFolder {
        folder: moved.into(),
        from: folder::listed(&folder.path),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteFolderInput {
    /// One of the caller's folders.
    folder_id: FolderId,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedFolder {
    deleted: FolderRef,
    /// The files it sent to the trash (those trashed already are not named).
    trashed: Vec<FileId>,
}

/// Delete a folder and the folders inside it. Their files go to the trash, and each, restored,
/// goes back to the path it sat at (made again). Their rules go with them. A folder a file
/// request drops into is not deleted (409 `folder_in_use`, naming the request).
#[utoipa::path(post, path = "/delete-folder", tag = "organize", request_body = DeleteFolderInput,
    responses((status = 200, body = DeletedFolder)))]
async fn delete_folder(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<DeleteFolderInput>,
) -> ApiResult<axum::Json<DeletedFolder>> {
    let folder = folders::find_owned(&state.db, caller.user_id, input.folder_id)
        .await?
        .ok_or_else(folder_not_found)?;
    let mut trashed = Vec::new();
    // Public files first leave the public bucket, as `/trash-files` has them; a file switched
    // public meanwhile is caught by the next round.
    for _round in 0..3 {
        let mut tx = state.db.begin().await?;
        if let Some(title) = folders::request_landing_in(&mut tx, caller.user_id, &folder).await? {
            return Err(ApiError::conflict(
                "folder_in_use",
                format!("the file request \"{title}\" drops into this folder: delete the request first"),
            ));
        }
        let public = folders::public_files_within(&mut tx, caller.user_id, &folder).await?;
        if !public.is_empty() {
            drop(tx);
            for id in public {
                access::move_file(&state.db, &state.storage, caller.user_id, id, Move::Trash).await?;
                trashed.push(id);
            }
            continue;
        }
        let Some(files) = folders::delete_folder(&mut tx, caller.user_id, &folder).await? else {
            continue;
        };
        mirror::files_changed(
            &mut tx,
            caller.user_id,
            EventKind::Trashed,
            &files,
            mirror::nothing_more,
        )
        .await?;
        mirror::folder_changed(&mut tx, caller.user_id, folder.id, &folder.path, None).await?;
        tx.commit().await?;
        trashed.extend(files.iter().map(|f| f.id));
        return Ok(axum::Json(DeletedFolder {
            deleted: folder.into(),
            trashed,
        }));
    }
    Err(ApiError::too_many(
        "folder_busy",
        "files in the folder keep being made public; try again",
    ))
}
