//! Renaming a playlist or gallery, taking files out of one, and deleting one. Its files stay
//! in the drive either way.

use axum::extract::State;
use drive_core::db::collections::{self, CollectionKind};
use drive_core::id::{CollectionId, FileId};
use drive_core::input::{Line, List, Text};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Reordered, not_found};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::Json;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(rename_playlist))
        .routes(routes!(rename_gallery))
        .routes(routes!(remove_from_playlist))
        .routes(routes!(remove_from_gallery))
        .routes(routes!(delete_playlist))
        .routes(routes!(delete_gallery))
}

async fn rename(
    state: &AppState,
    caller: &Caller,
    kind: CollectionKind,
    id: CollectionId,
    title: &str,
    description: Option<Option<&str>>,
) -> ApiResult<Reordered> {
    let mut tx = state.db.begin().await?;
    collections::lock_owned(&mut tx, caller.user_id, kind, id)
        .await?
        .ok_or_else(|| not_found(kind))?;
    collections::rename(&mut tx, id, title.trim(), description).await?;
    let row = collections::summary(&mut tx, id).await?;
    tx.commit().await?;
    Ok(row.into())
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenamePlaylistInput {
    playlist_id: CollectionId,
    title: Line<1, 200>,
}

/// Retitle a playlist.
#[utoipa::path(post, path = "/rename-playlist", tag = "collections", request_body = RenamePlaylistInput,
    responses((status = 200, body = Reordered)))]
async fn rename_playlist(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<RenamePlaylistInput>,
) -> ApiResult<axum::Json<Reordered>> {
    let kind = CollectionKind::Playlist;
    Ok(axum::Json(
        rename(&state, &caller, kind, input.playlist_id, &input.title, None).await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenameGalleryInput {
    gallery_id: CollectionId,
    title: Line<1, 200>,
    /// Up to 2000 characters; empty clears it; left out, it stays.
    description: Option<Text<0, 2000>>,
}

/// Retitle a gallery, and change its description when one is given.
#[utoipa::path(post, path = "/rename-gallery", tag = "collections", request_body = RenameGalleryInput,
    responses((status = 200, body = Reordered)))]
async fn rename_gallery(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<RenameGalleryInput>,
) -> ApiResult<axum::Json<Reordered>> {
    let kind = CollectionKind::Gallery;
    let description = input
        .description
        .as_deref()
        .map(|d| Some(d).filter(|d| !d.trim().is_empty()));
    Ok(axum::Json(
        rename(&state, &caller, kind, input.gallery_id, &input.title, description).await?,
    ))
}

/// A collection after files were taken out.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Removed {
    #[serde(flatten)]
    collection: Reordered,
    /// Those of the ids given that it held.
    removed: Vec<FileId>,
}

async fn remove(
    state: &AppState,
    caller: &Caller,
    kind: CollectionKind,
    id: CollectionId,
    file_ids: &[FileId],
) -> ApiResult<Removed> {
    let mut tx = state.db.begin().await?;
    collections::lock_owned(&mut tx, caller.user_id, kind, id)
        .await?
        .ok_or_else(|| not_found(kind))?;
    let held = collections::file_ids(&mut tx, id).await?;
    let removed = held.into_iter().filter(|f| file_ids.contains(f)).collect();
    collections::remove(&mut tx, id, file_ids).await?;
    let row = collections::summary(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Removed {
        collection: row.into(),
        removed,
    })
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoveFromPlaylistInput {
    playlist_id: CollectionId,
    /// 1 to 500 files to take out; ids it does not hold are ignored.
    file_ids: List<FileId, 1, 500>,
}

/// Take files out of a playlist; the rest keep their order.
#[utoipa::path(post, path = "/remove-from-playlist", tag = "collections", request_body = RemoveFromPlaylistInput,
    responses((status = 200, body = Removed)))]
async fn remove_from_playlist(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<RemoveFromPlaylistInput>,
) -> ApiResult<axum::Json<Removed>> {
    let kind = CollectionKind::Playlist;
    Ok(axum::Json(
        remove(&state, &caller, kind, input.playlist_id, &input.file_ids).await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoveFromGalleryInput {
    gallery_id: CollectionId,
    /// 1 to 500 images to take out; ids it does not hold are ignored.
    file_ids: List<FileId, 1, 500>,
}

/// Take images out of a gallery; the rest keep their order and featuring.
#[utoipa::path(post, path = "/remove-from-gallery", tag = "collections", request_body = RemoveFromGalleryInput,
    responses((status = 200, body = Removed)))]
async fn remove_from_gallery(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<RemoveFromGalleryInput>,
) -> ApiResult<axum::Json<Removed>> {
    let kind = CollectionKind::Gallery;
    Ok(axum::Json(
        remove(&state, &caller, kind, input.gallery_id, &input.file_ids).await?,
    ))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedCollection {
    deleted: CollectionId,
}

async fn delete(
    state: &AppState,
    caller: &Caller,
    kind: CollectionKind,
    id: CollectionId,
) -> ApiResult<DeletedCollection> {
    if !collections::delete(&state.db, caller.user_id, kind, id).await? {
        return Err(not_found(kind));
    }
    Ok(DeletedCollection { deleted: id })
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeletePlaylistInput {
    playlist_id: CollectionId,
}

/// Delete a playlist (its public page with it); its files stay.
#[utoipa::path(post, path = "/delete-playlist", tag = "collections", request_body = DeletePlaylistInput,
    responses((status = 200, body = DeletedCollection)))]
async fn delete_playlist(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<DeletePlaylistInput>,
) -> ApiResult<axum::Json<DeletedCollection>> {
    Ok(axum::Json(
        delete(&state, &caller, CollectionKind::Playlist, input.playlist_id).await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteGalleryInput {
    gallery_id: CollectionId,
}

/// Delete a gallery (its public page with it); its images stay.
#[utoipa::path(post, path = "/delete-gallery", tag = "collections", request_body = DeleteGalleryInput,
    responses((status = 200, body = DeletedCollection)))]
async fn delete_gallery(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<DeleteGalleryInput>,
) -> ApiResult<axum::Json<DeletedCollection>> {
    Ok(axum::Json(
        delete(&state, &caller, CollectionKind::Gallery, input.gallery_id).await?,
    ))
}
