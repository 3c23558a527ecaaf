//! Organise: folders, tags and descriptions. A folder only says where a file sits; moving
//! never changes who can see a file. Tags are case-insensitive and kept in the case they were
//! first written.

use axum::extract::State;
use drive_core::db::events::EventKind;
use drive_core::db::files::FileRow;
use drive_core::db::folders::{self, MoveSource};
use drive_core::db::tags::{self, TagRow};
use drive_core::folder::FolderPath;
use drive_core::id::{FileId, FolderId, TagId};
use drive_core::input::{Line, List, Text};
use drive_core::mirror;
use serde::{Deserialize, Deserializer, Serialize};
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
        .routes(routes!(move_files))
        .routes(routes!(tag_files))
        .routes(routes!(update_file_tags))
        .routes(routes!(update_file_description))
        .routes(routes!(delete_tag))
}

/// Tells a field sent as `null` (`Some(None)`) from one left out (`None`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MoveInput {
    /// 1 to 500 of the caller's files; or `fromFolderId`.
    file_ids: Option<List<FileId, 1, 500>>,
    /// Every file in this folder of the caller's, trashed ones included; or `fileIds`.
    from_folder_id: Option<FolderId>,
    /// The destination path, at most 32 deep, made on the way (`/` is the top); or `folderId`.
    folder: Option<FolderPath>,
    /// One of the caller's folders, or null for the top; or `folder`.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Uuid>)]
    folder_id: Option<Option<FolderId>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Moved {
    moved: Vec<FileId>,
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
    let (moved, queued) = folders::move_files(
        &mut tx,
        caller.user_id,
        source,
        destination.as_ref().map(|f| f.id),
    )
    .await?;
    if moved.is_empty() && matches!(source, MoveSource::Files(_)) {
        // Dropping the transaction also drops any folder made on the way.
        return Err(no_files());
    }
    let to = destination.as_ref().map(|f| f.id);
    let arrived: Vec<(FileRow, Option<FolderId>)> = moved
        .iter()
        .filter(|m| m.from_folder_id != to)
        .map(|m| (m.file.clone(), m.from_folder_id))
        .collect();
    let rows: Vec<FileRow> = arrived.iter().map(|(file, _)| file.clone()).collect();
    mirror::files_changed(&mut tx, caller.user_id, EventKind::Moved, &rows, |file| {
        let from = arrived
            .iter()
            .find(|(f, _)| f.id == file.id)
            .and_then(|(_, from)| *from);
        serde_json::Map::from_iter([("fromFolderId".to_string(), serde_json::json!(from))])
    })
    .await?;
    tx.commit().await?;
    if !queued.is_empty() {
        // The destination's rules started jobs on files moved in.
        state.doorbell.ring().await;
    }
    Ok(axum::Json(Moved {
        moved: moved.into_iter().map(|m| m.file.id).collect(),
        folder: destination.map(FolderRef::from),
    }))
}

fn no_files() -> ApiError {
    ApiError::not_found("file_not_found", "none of the files are yours")
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TagAction {
    #[default]
    Add,
    Remove,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Tag {
    id: TagId,
    text: String,
}

impl From<TagRow> for Tag {
    fn from(row: TagRow) -> Tag {
        Tag {
            id: row.id,
            text: row.text,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagFilesInput {
    /// 1 to 500 of the caller's files.
    file_ids: List<FileId, 1, 500>,
    /// 1 to 20 tag names, each 1 to 100 characters.
    tags: List<Line<1, 100>, 1, 20>,
    /// Default add.
    #[serde(default)]
    action: TagAction,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TaggedFiles {
    /// The caller's files among those given.
    updated: Vec<FileId>,
    tags: Vec<Tag>,
}

/// Add tags to files or take them off, making any tag the caller lacks.
#[utoipa::path(post, path = "/tag-files", tag = "organize", request_body = TagFilesInput,
    responses((status = 200, body = TaggedFiles)))]
async fn tag_files(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<TagFilesInput>,
) -> ApiResult<axum::Json<TaggedFiles>> {
    let ids = &input.file_ids;
    let names: Vec<String> = input.tags.iter().map(|tag| tag.trim().to_string()).collect();
    let mut tx = state.db.begin().await?;
    let updated = tags::owned_files(&mut tx, caller.user_id, ids).await?;
    if updated.is_empty() {
        return Err(no_files());
    }
    let tags = match input.action {
        TagAction::Add => tags::ensure(&mut tx, caller.user_id, &names).await?,
        TagAction::Remove => tags::find(&mut tx, caller.user_id, &names).await?,
    };
    let tag_ids: Vec<TagId> = tags.iter().map(|t| t.id).collect();
    tags::apply(&mut tx, &updated, &tag_ids, input.action == TagAction::Add).await?;
    tx.commit().await?;
    Ok(axum::Json(TaggedFiles {
        updated,
        tags: tags.into_iter().map(Tag::from).collect(),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateFileTagsInput {
    /// 1 to 500 of the caller's files.
    file_ids: List<FileId, 1, 500>,
    tag_id: TagId,
    action: TagAction,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct UpdatedFileTags {
    /// The caller's files among those given.
    updated: Vec<FileId>,
    tag: Tag,
}

/// Put one of the caller's tags on files or take it off.
#[utoipa::path(post, path = "/update-file-tags", tag = "organize", request_body = UpdateFileTagsInput,
    responses((status = 200, body = UpdatedFileTags)))]
async fn update_file_tags(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<UpdateFileTagsInput>,
) -> ApiResult<axum::Json<UpdatedFileTags>> {
    let ids = &input.file_ids;
    let tag = tags::find_owned(&state.db, caller.user_id, input.tag_id)
        .await?
        .ok_or_else(|| ApiError::not_found("tag_not_found", "no tag of yours has that id"))?;
    let mut tx = state.db.begin().await?;
    let updated = tags::owned_files(&mut tx, caller.user_id, ids).await?;
    if updated.is_empty() {
        return Err(no_files());
    }
    tags::apply(&mut tx, &updated, &[tag.id], input.action == TagAction::Add).await?;
    tx.commit().await?;
    Ok(axum::Json(UpdatedFileTags {
        updated,
        tag: tag.into(),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DescriptionInput {
    file_id: FileId,
    /// Up to 5000 characters; empty clears it. Line feeds and tabs are kept.
    description: Text<0, 5000>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Described {
    id: FileId,
    description: Option<String>,
}

/// Set or clear a file's description.
#[utoipa::path(post, path = "/update-file-description", tag = "organize", request_body = DescriptionInput,
    responses((status = 200, body = Described)))]
async fn update_file_description(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<DescriptionInput>,
) -> ApiResult<axum::Json<Described>> {
    let description = Some(String::from(input.description)).filter(|d| !d.trim().is_empty());
    if !tags::set_description(&state.db, caller.user_id, input.file_id, description.as_deref()).await? {
        return Err(ApiError::not_found(
            "file_not_found",
            "no file of yours has that id",
        ));
    }
    Ok(axum::Json(Described {
        id: input.file_id,
        description,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteTagInput {
    tag_id: TagId,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedTag {
    deleted: TagId,
}

/// Delete one of the caller's tags: it comes off every file, and the files stay.
#[utoipa::path(post, path = "/delete-tag", tag = "organize", request_body = DeleteTagInput,
    responses((status = 200, body = DeletedTag)))]
async fn delete_tag(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<DeleteTagInput>,
) -> ApiResult<axum::Json<DeletedTag>> {
    if !tags::delete(&state.db, caller.user_id, input.tag_id).await? {
        return Err(ApiError::not_found(
            "tag_not_found",
            "no tag of yours has that id",
        ));
    }
    Ok(axum::Json(DeletedTag {
        deleted: input.tag_id,
    }))
}
