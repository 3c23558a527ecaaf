//! Playlists (audio and video) and galleries (images), and `/select-collections`.
//!
//! Admission: while a collection is private any audio or video (for a gallery, image) the
//! caller can see goes in, their own, anyone's public file or one shared with them; once public
//! only the caller's own. Anything else is skipped and named in `skipped`.

use std::collections::HashSet;

use axum::extract::State;
use drive_core::db::collections::{self, CollectionKind, CollectionRow};
use drive_core::db::{folders, tags};
use drive_core::folder;
use drive_core::id::{CollectionId, FileId, FolderId, TagId};
use drive_core::input::{Line, List, Text};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::state::AppState;

mod edits;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_playlist))
        .routes(routes!(add_to_playlist))
        .routes(routes!(reorder_playlist))
        .routes(routes!(create_gallery))
        .routes(routes!(add_to_gallery))
        .routes(routes!(reorder_gallery))
        .routes(routes!(select_collections))
        .merge(edits::router())
}

/// A playlist or gallery as it now stands.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Collection {
    id: CollectionId,
    title: String,
    /// Galleries only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    description: Option<serde_json::Value>,
    is_public: bool,
    file_count: i64,
    /// Galleries only.
    #[serde(skip_serializing_if = "Option::is_none")]
    featured_count: Option<i64>,
    /// Every file in it, in order (a gallery's featured images first).
    file_ids: Vec<FileId>,
    /// Ids given that it does not hold: not admissible, not the caller's to see, or unknown.
    skipped: Vec<FileId>,
}

/// The answer of the reorder and rename routes.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reordered {
    id: CollectionId,
    title: String,
    is_public: bool,
    file_count: i64,
}

pub(crate) fn not_found(kind: CollectionKind) -> ApiError {
    match kind {
        CollectionKind::Playlist => {
            ApiError::not_found("playlist_not_found", "no playlist of yours has that id")
        }
        CollectionKind::Gallery => {
            ApiError::not_found("gallery_not_found", "no gallery of yours has that id")
        }
    }
}

/// Appends to a locked collection and answers it as it now stands.
async fn append_and_answer(
    conn: &mut sqlx::PgConnection,
    caller: &Caller,
    kind: CollectionKind,
    id: CollectionId,
    is_public: bool,
    file_ids: &[FileId],
    featured: &[FileId],
) -> ApiResult<Collection> {
    collections::append(conn, caller.user_id, kind, id, is_public, file_ids, featured).await?;
    let row: CollectionRow = collections::summary(conn, id).await?;
    let held = row.file_ids;
    let mut seen = HashSet::new();
    let skipped = file_ids
        .iter()
        .filter(|f| !held.contains(f) && seen.insert(**f))
        .copied()
        .collect();
    Ok(Collection {
        id: row.id,
        title: row.title,
        description: (kind == CollectionKind::Gallery).then(|| row.description.into()),
        is_public: row.is_public,
        file_count: row.file_count,
        featured_count: (kind == CollectionKind::Gallery).then_some(row.featured_count),
        file_ids: held,
        skipped,
    })
}

struct NewCollection<'a> {
    title: &'a str,
    description: Option<&'a str>,
    is_public: bool,
    file_ids: &'a [FileId],
    featured: &'a [FileId],
}

async fn create(
    state: &AppState,
    caller: &Caller,
    kind: CollectionKind,
    new: NewCollection<'_>,
) -> ApiResult<Collection> {
    let title = new.title.trim();
    let file_ids = new.file_ids;
    let mut tx = state.db.begin().await?;
    let id = collections::create(
        &mut tx,
        caller.user_id,
        kind,
        title,
        new.description,
        new.is_public,
    )
    .await?;
    let answer = append_and_answer(&mut tx, caller, kind, id, new.is_public, file_ids, new.featured).await?;
    tx.commit().await?;
    Ok(answer)
}

async fn add(
    state: &AppState,
    caller: &Caller,
    kind: CollectionKind,
    id: CollectionId,
    file_ids: &[FileId],
    featured: &[FileId],
) -> ApiResult<Collection> {
    let mut tx = state.db.begin().await?;
    let is_public = collections::lock_owned(&mut tx, caller.user_id, kind, id)
        .await?
        .ok_or_else(|| not_found(kind))?;
    let answer = append_and_answer(&mut tx, caller, kind, id, is_public, file_ids, featured).await?;
    tx.commit().await?;
    Ok(answer)
}

async fn reorder(
    state: &AppState,
    caller: &Caller,
    kind: CollectionKind,
    id: CollectionId,
    file_ids: &[FileId],
    featured: Option<&[FileId]>,
) -> ApiResult<Reordered> {
    let mut tx = state.db.begin().await?;
    collections::lock_owned(&mut tx, caller.user_id, kind, id)
        .await?
        .ok_or_else(|| not_found(kind))?;
    collections::reorder(&mut tx, id, file_ids, featured).await?;
    let row = collections::summary(&mut tx, id).await?;
    tx.commit().await?;
    Ok(row.into())
}

impl From<CollectionRow> for Reordered {
    fn from(row: CollectionRow) -> Reordered {
        Reordered {
            id: row.id,
            title: row.title,
            is_public: row.is_public,
            file_count: row.file_count,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatePlaylistInput {
    title: Line<1, 200>,
    /// Up to 500, in order.
    #[serde(default)]
    file_ids: List<FileId, 0, 500>,
    #[serde(default)]
    is_public: bool,
}

/// Make a playlist of audio and video.
#[utoipa::path(post, path = "/create-playlist", tag = "collections", request_body = CreatePlaylistInput,
    responses((status = 200, body = Collection)))]
async fn create_playlist(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CreatePlaylistInput>,
) -> ApiResult<axum::Json<Collection>> {
    let new = NewCollection {
        title: &input.title,
        description: None,
        is_public: input.is_public,
        file_ids: &input.file_ids,
        featured: &[],
    };
    Ok(axum::Json(
        create(&state, &caller, CollectionKind::Playlist, new).await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddToPlaylistInput {
    playlist_id: CollectionId,
    /// 1 to 500, appended in order.
    file_ids: List<FileId, 1, 500>,
}

/// Append files to a playlist; files already in stay where they are.
#[utoipa::path(post, path = "/add-to-playlist", tag = "collections", request_body = AddToPlaylistInput,
    responses((status = 200, body = Collection)))]
async fn add_to_playlist(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<AddToPlaylistInput>,
) -> ApiResult<axum::Json<Collection>> {
    let added = add(
        &state,
        &caller,
        CollectionKind::Playlist,
        input.playlist_id,
        &input.file_ids,
        &[],
    )
    .await?;
    Ok(axum::Json(added))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReorderPlaylistInput {
    playlist_id: CollectionId,
    /// 1 to 10000: these first, in this order.
    file_ids: List<FileId, 1, 10_000>,
}

/// Put named files first in the order given; the others follow in their prior order.
#[utoipa::path(post, path = "/reorder-playlist", tag = "collections", request_body = ReorderPlaylistInput,
    responses((status = 200, body = Reordered)))]
async fn reorder_playlist(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<ReorderPlaylistInput>,
) -> ApiResult<axum::Json<Reordered>> {
    let reordered = reorder(
        &state,
        &caller,
        CollectionKind::Playlist,
        input.playlist_id,
        &input.file_ids,
        None,
    )
    .await?;
    Ok(axum::Json(reordered))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateGalleryInput {
    title: Line<1, 200>,
    /// Up to 2000 characters; line feeds and tabs are kept.
    description: Option<Text<0, 2000>>,
    /// Up to 500 images, in order.
    #[serde(default)]
    file_ids: List<FileId, 0, 500>,
    /// Which of `fileIds` go up front.
    #[serde(default)]
    featured_ids: List<FileId, 0, 500>,
    #[serde(default)]
    is_public: bool,
}

/// Make a gallery of images.
#[utoipa::path(post, path = "/create-gallery", tag = "collections", request_body = CreateGalleryInput,
    responses((status = 200, body = Collection)))]
async fn create_gallery(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CreateGalleryInput>,
) -> ApiResult<axum::Json<Collection>> {
    let new = NewCollection {
        title: &input.title,
        description: input.description.as_deref().filter(|d| !d.trim().is_empty()),
        is_public: input.is_public,
        file_ids: &input.file_ids,
        featured: &input.featured_ids,
    };
    Ok(axum::Json(
        create(&state, &caller, CollectionKind::Gallery, new).await?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddToGalleryInput {
    gallery_id: CollectionId,
    /// 1 to 500, appended in order.
    file_ids: List<FileId, 1, 500>,
    /// Which of the new images go up front.
    #[serde(default)]
    featured_ids: List<FileId, 0, 500>,
}

/// Append images to a gallery; images already in, and those featured, stay.
#[utoipa::path(post, path = "/add-to-gallery", tag = "collections", request_body = AddToGalleryInput,
    responses((status = 200, body = Collection)))]
async fn add_to_gallery(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<AddToGalleryInput>,
) -> ApiResult<axum::Json<Collection>> {
    let featured = &input.featured_ids;
    let added = add(
        &state,
        &caller,
        CollectionKind::Gallery,
        input.gallery_id,
        &input.file_ids,
        featured,
    )
    .await?;
    Ok(axum::Json(added))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReorderGalleryInput {
    gallery_id: CollectionId,
    /// 1 to 10000: these first, in this order.
    file_ids: List<FileId, 1, 10_000>,
    /// With it, the named images listed here are featured and the other named ones are not;
    /// without it, featuring stays.
    featured_ids: Option<List<FileId, 0, 10_000>>,
}

/// Reorder a gallery, and optionally change which named images are featured.
#[utoipa::path(post, path = "/reorder-gallery", tag = "collections", request_body = ReorderGalleryInput,
    responses((status = 200, body = Reordered)))]
async fn reorder_gallery(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<ReorderGalleryInput>,
) -> ApiResult<axum::Json<Reordered>> {
    let featured = input.featured_ids.as_ref().map(|ids| &ids[..]);
    let reordered = reorder(
        &state,
        &caller,
        CollectionKind::Gallery,
        input.gallery_id,
        &input.file_ids,
        featured,
    )
    .await?;
    Ok(axum::Json(reordered))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FolderSummary {
    id: FolderId,
    /// With a trailing slash, like `/a/b/`.
    path: String,
    /// Files directly in it, not trashed.
    file_count: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaylistSummary {
    id: CollectionId,
    title: String,
    is_public: bool,
    file_count: i64,
    /// The picture put on it with `/set-cover`; null when none.
    cover_id: Option<FileId>,
    /// Its files in order.
    file_ids: Vec<FileId>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GallerySummary {
    id: CollectionId,
    title: String,
    description: Option<String>,
    is_public: bool,
    file_count: i64,
    featured_count: i64,
    /// Its images in order, the featured ones first.
    file_ids: Vec<FileId>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagSummary {
    id: TagId,
    text: String,
    /// Files carrying it, not trashed.
    file_count: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Collections {
    folders: Vec<FolderSummary>,
    playlists: Vec<PlaylistSummary>,
    galleries: Vec<GallerySummary>,
    tags: Vec<TagSummary>,
}

/// The caller's folders, playlists, galleries and tags.
#[utoipa::path(post, path = "/select-collections", tag = "collections",
    responses((status = 200, body = Collections)))]
async fn select_collections(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<axum::Json<Collections>> {
    let folders = folders::list(&state.db, caller.user_id).await?;
    let playlists = collections::list(&state.db, caller.user_id, CollectionKind::Playlist).await?;
    let galleries = collections::list(&state.db, caller.user_id, CollectionKind::Gallery).await?;
    let tags = tags::list(&state.db, caller.user_id).await?;
    Ok(axum::Json(Collections {
        folders: folders
            .into_iter()
            .map(|f| FolderSummary {
                id: f.id,
                path: folder::listed(&f.path),
                file_count: f.file_count,
            })
            .collect(),
        playlists: playlists
            .into_iter()
            .map(|p| PlaylistSummary {
                id: p.id,
                title: p.title,
                is_public: p.is_public,
                file_count: p.file_count,
                cover_id: p.cover_id,
                file_ids: p.file_ids,
            })
            .collect(),
        galleries: galleries
            .into_iter()
            .map(|g| GallerySummary {
                id: g.id,
                title: g.title,
                description: g.description,
                is_public: g.is_public,
                file_count: g.file_count,
                featured_count: g.featured_count,
                file_ids: g.file_ids,
            })
            .collect(),
        tags: tags
            .into_iter()
            .map(|t| TagSummary {
                id: t.id,
                text: t.text,
                file_count: t.file_count,
            })
            .collect(),
    }))
}
