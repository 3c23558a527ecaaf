//! Organise: folders. A folder only says where a file sits; moving never changes who can see
//! a file.

use axum::extract::State;
use drive_core::db::folders::{self, FolderRow, MoveSource};
use drive_core::folder::{self, FolderPath};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(move_files))
}

/// A folder as answers show it; `path` ends in a slash, as listings write it.
#[derive(Debug, Serialize, ToSchema)]
pub struct FolderRef {
    id: Uuid,
    path: String,
}

impl From<FolderRow> for FolderRef {
    fn from(row: FolderRow) -> FolderRef {
        FolderRef {
            id: row.id,
            path: folder::listed(&row.path),
        }
    }
}

/// Tells a field sent as `null` (`Some(None)`) from one left out (`None`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MoveInput {
    /// 1 to 500 of the caller's files; or `fromFolderId`.
    file_ids: Option<Vec<Uuid>>,
    /// Every file in this folder of the caller's, trashed ones included; or `fileIds`.
    from_folder_id: Option<Uuid>,
    /// The destination path, at most 32 deep, made on the way (`/` is the top); or `folderId`.
    folder: Option<FolderPath>,
    /// One of the caller's folders, or null for the top; or `folder`.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Uuid>)]
    folder_id: Option<Option<Uuid>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Moved {
    moved: Vec<Uuid>,
    /// Where the files now sit; null for the top.
    folder: Option<FolderRef>,
}

fn folder_not_found() -> ApiError {
    ApiError::not_found("folder_not_found", "no folder of yours has that id")
}

/// Put files in a folder.
#[utoipa::path(post, path = "/move-files", tag = "organize", request_body = MoveInput,
    responses((status = 200, body = Moved)))]
async fn move_files(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<MoveInput>,
) -> ApiResult<axum::Json<Moved>> {
    let source = match (&input.file_ids, input.from_folder_id) {
        (None, None) => return Err(ApiError::missing("fileIds")),
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "fromFolderId",
                "give fileIds or fromFolderId, not both",
            ));
        }
        (Some(ids), None) if ids.is_empty() || ids.len() > 500 => {
            return Err(ApiError::invalid("fileIds", "give 1 to 500 file ids"));
        }
        (Some(ids), None) => MoveSource::Files(ids),
        (None, Some(from)) => {
            folders::find_owned(&state.db, caller.user_id, from)
                .await?
                .ok_or_else(folder_not_found)?;
            MoveSource::Folder(from)
        }
    };
    let mut tx = state.db.begin().await?;
    let destination = match (input.folder, input.folder_id) {
        (None, None) => return Err(ApiError::missing("folder")),
        (Some(_), Some(_)) => return Err(ApiError::invalid("folderId", "give folder or folderId, not both")),
        (Some(path), None) => folders::ensure(&mut tx, caller.user_id, &path).await?,
        (None, Some(None)) => None,
        (None, Some(Some(id))) => Some(
            folders::find_owned(&state.db, caller.user_id, id)
                .await?
                .ok_or_else(folder_not_found)?,
        ),
    };
    let moved = folders::move_files(
        &mut tx,
        caller.user_id,
        source,
        destination.as_ref().map(|f| f.id),
    )
    .await?;
    if moved.is_empty() && matches!(source, MoveSource::Files(_)) {
        // Dropping the transaction also drops any folder made on the way.
        return Err(ApiError::not_found(
            "file_not_found",
            "none of the files are yours",
        ));
    }
    tx.commit().await?;
    Ok(axum::Json(Moved {
        moved,
        folder: destination.map(FolderRef::from),
    }))
}
