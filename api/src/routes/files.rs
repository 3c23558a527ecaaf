//! Renaming and copying files.

use axum::extract::State;
use drive_core::access::{self, MoveError};
use drive_core::copies::{self, CopyError};
use drive_core::db::folders;
use drive_core::file::FileName;
use drive_core::folder::FolderPath;
use drive_core::id::{FileId, FolderId};
use drive_core::input::List;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::records::{FileRecord, FolderRef};
use crate::routes::upload::storage_limit_reached;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(rename_file))
        .routes(routes!(copy_files))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenameInput {
    /// One of the caller's files, not trashed.
    file_id: FileId,
    /// The new name, by the rules of an upload's: 1 to 255 characters, no slash, backslash or
    /// control character, not `.` or `..`; no other file in the folder may have it (case aside).
    file_name: FileName,
}

/// Rename a file. Its links download under the new name from now on (a public file's object is
/// stored again with it, on the store's side); its type stays what its bytes are.
#[utoipa::path(post, path = "/rename-file", tag = "organize", request_body = RenameInput,
    responses((status = 200, body = FileRecord),
        (status = 409, description = "`file_name_taken`: another file in the folder has the name; the message names the path")))]
async fn rename_file(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<RenameInput>,
) -> ApiResult<axum::Json<FileRecord>> {
    let name = input.file_name.as_str();
    let renamed = access::rename(&state.db, &state.storage, caller.user_id, input.file_id, name)
        .await
        .map_err(|e| match e {
            MoveError::Trashed => ApiError::bad_request(
                "file_trashed",
                "fileId",
                "the file is in the trash; restore it first",
            ),
            other => other.into(),
        })?;
    Ok(axum::Json(FileRecord::listed(&renamed, &state.storage)))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CopyInput {
    /// 1 to 500 of the caller's files, not trashed.
    file_ids: List<FileId, 1, 500>,
    /// Where the copies go, at most 32 deep, made on the way (`/` is the top); or `folderId`.
    folder: Option<FolderPath>,
    /// One of the caller's folders; or `folder`.
    folder_id: Option<FolderId>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Copy {
    /// The file copied.
    from: FileId,
    /// The copy.
    file: FileRecord,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Copies {
    /// In the order given; ids that are not the caller's files are left out.
    copies: Vec<Copy>,
    /// Where they sit; null for the top.
    folder: Option<FolderRef>,
}

/// Copy files into a folder. Each copy is a new private file with its own stored object
/// (copied on the store's side), counted against the storage limit; it takes the source's
/// metadata, description, tags, reading and digests. A copy landing beside a file of its name
/// is numbered: `a (2).txt`.
#[utoipa::path(post, path = "/copy-files", tag = "organize", request_body = CopyInput,
    responses((status = 200, body = Copies)))]
async fn copy_files(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CopyInput>,
) -> ApiResult<axum::Json<Copies>> {
    let plan = caller.plan()?;
    let destination = match (input.folder, input.folder_id) {
        (None, None) => return Err(ApiError::missing("folder")),
        (Some(_), Some(_)) => return Err(ApiError::invalid("folderId", "give folder or folderId, not both")),
        (Some(path), None) => {
            let mut tx = state.db.begin().await?;
            let folder = folders::ensure(&mut tx, caller.user_id, &path).await?;
            tx.commit().await?;
            folder
        }
        (None, Some(id)) => Some(
            folders::find_owned(&state.db, caller.user_id, id)
                .await?
                .ok_or_else(|| ApiError::not_found("folder_not_found", "no folder of yours has that id"))?,
        ),
    };
    let limit = state.settings.quotas.for_plan(plan);
    let folder_id = destination.as_ref().map(|f| f.id);
    let (copied, queued) = copies::copy_files(
        &state.db,
        &state.storage,
        caller.user_id,
        &input.file_ids,
        folder_id,
        limit,
    )
    .await
    .map_err(|e| match e {
        CopyError::NotFound => ApiError::not_found("file_not_found", "none of the files are yours"),
        CopyError::OverQuota { used, wanted } => storage_limit_reached("fileIds", limit, used, wanted),
        CopyError::Storage(cause) => ApiError::Storage(cause),
        CopyError::Database(cause) => ApiError::Database(cause),
        CopyError::KeyRefused(why) => ApiError::Machine(why),
    })?;
    if !queued.is_empty() {
        // The destination's rules started jobs on the copies.
        state.doorbell.ring().await;
    }
    Ok(axum::Json(Copies {
        copies: copied
            .into_iter()
            .map(|c| Copy {
                from: c.from,
                file: FileRecord::listed(&c.file, &state.storage),
            })
            .collect(),
        folder: destination.map(FolderRef::from),
    }))
}
