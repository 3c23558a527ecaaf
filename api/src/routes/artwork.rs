//! Art the owner chooses: `/set-cover` puts one of the caller's pictures on a track or a
//! playlist, `/set-video-thumbnail` on a video (a picture, or a frame of the video at a moment,
//! taken by a `videoThumbnail` job). A file's chosen art is its `artworkId` in `/search-files`
//! (over the art extracted from it); a playlist's is its `coverId` in `/select-collections`.

use axum::extract::State;
use drive_core::db::collections;
use drive_core::db::files::{self, FileRow};
use drive_core::file::FileKind;
use drive_core::id::{CollectionId, FileId};
use drive_core::job::{JobSpec, Seconds, VideoThumbnail};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::routes::jobs::{self, CreatedJob, JobRequest};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(set_cover))
        .routes(routes!(set_video_thumbnail))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetCoverInput {
    /// A track of the caller's; or `playlistId`.
    file_id: Option<FileId>,
    /// One of the caller's playlists; or `fileId`.
    playlist_id: Option<CollectionId>,
    /// One of the caller's pictures in the library; null takes the cover off (a track shows
    /// the art extracted from it again).
    image_id: Option<FileId>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtSet {
    /// The track, video or playlist.
    id: uuid::Uuid,
    /// The picture now shown for it; null when none was chosen.
    image_id: Option<FileId>,
}

/// Put an image on a track or playlist as its art.
#[utoipa::path(post, path = "/set-cover", tag = "artwork", request_body = SetCoverInput,
    responses((status = 200, body = ArtSet)))]
async fn set_cover(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<SetCoverInput>,
) -> ApiResult<axum::Json<ArtSet>> {
    let image = picture(&state, &caller, input.image_id).await?;
    match (input.file_id, input.playlist_id) {
        (Some(_), Some(_)) => Err(ApiError::invalid(
            "playlistId",
            "give fileId or playlistId, not both",
        )),
        (None, None) => Err(ApiError::missing("fileId")),
        (Some(id), None) => {
            let track = library_file(&state, &caller, id, "fileId").await?;
            if track.kind != FileKind::Audio {
                return Err(ApiError::invalid(
                    "fileId",
                    "a cover goes on a track or a playlist; a video's picture is its thumbnail (/set-video-thumbnail)",
                ));
            }
            files::set_artwork(&state.db, caller.user_id, track.id, image).await?;
            Ok(axum::Json(ArtSet {
                id: track.id.into(),
                image_id: image,
            }))
        }
        (None, Some(id)) => {
            if !collections::set_cover(&state.db, caller.user_id, id, image).await? {
                return Err(ApiError::not_found(
                    "playlist_not_found",
                    "no playlist of yours has that playlistId",
                ));
            }
            Ok(axum::Json(ArtSet {
                id: id.into(),
                image_id: image,
            }))
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetThumbnailInput {
    /// One of the caller's videos.
    file_id: FileId,
    /// One of the caller's pictures in the library; or `at`.
    image_id: Option<FileId>,
    /// The moment of the video whose frame becomes its thumbnail (seconds or a clock form like
    /// 1:05), taken by a `videoThumbnail` job; or `imageId`. With neither, the video shows the
    /// poster extracted from it again.
    at: Option<Seconds>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThumbnailSet {
    id: FileId,
    /// The picture now shown for it; null while a frame is being taken, or when none was chosen.
    image_id: Option<FileId>,
    /// With `at`: the job taking the frame (its `result.artworkId` is the thumbnail).
    #[serde(skip_serializing_if = "Option::is_none")]
    job: Option<CreatedJob>,
}

/// Set a video's poster from a frame or an image.
#[utoipa::path(post, path = "/set-video-thumbnail", tag = "artwork", request_body = SetThumbnailInput,
    responses((status = 200, body = ThumbnailSet)))]
async fn set_video_thumbnail(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<SetThumbnailInput>,
) -> ApiResult<axum::Json<ThumbnailSet>> {
    let video = library_file(&state, &caller, input.file_id, "fileId").await?;
    if video.kind != FileKind::Video {
        return Err(ApiError::invalid(
            "fileId",
            "a thumbnail goes on a video; a track's picture is its cover (/set-cover)",
        ));
    }
    let answer = |image_id, job| ThumbnailSet {
        id: video.id,
        image_id,
        job,
    };
    match (input.image_id, input.at) {
        (Some(_), Some(_)) => Err(ApiError::invalid("at", "give imageId or at, not both")),
        (None, Some(at)) => {
            if !at.0.is_finite() || at.0 < 0.0 {
                return Err(ApiError::invalid(
                    "at",
                    "at is a moment of the video, 0 or more seconds",
                ));
            }
            let request = JobRequest {
                spec: JobSpec::VideoThumbnail(VideoThumbnail { at }),
                inputs: vec![video.clone()],
                source_folder_id: None,
                folder: None,
                folder_id: None,
                idempotency_key: None,
                notify: None,
            };
            let job = jobs::submit(&state, &caller, request, false).await?;
            Ok(axum::Json(answer(None, Some(job))))
        }
        (image, None) => {
            let image = picture(&state, &caller, image).await?;
            files::set_artwork(&state.db, caller.user_id, video.id, image).await?;
            Ok(axum::Json(answer(image, None)))
        }
    }
}

/// One of the caller's files in the library (not trashed, not extracted art).
pub(crate) async fn library_file(
    state: &AppState,
    caller: &Caller,
    id: FileId,
    field: &str,
) -> ApiResult<FileRow> {
    files::find_many(&state.db, caller.user_id, &[id], false)
        .await?
        .pop()
        .ok_or_else(|| {
            ApiError::not_found(
                "file_not_found",
                format!("no file of yours in the library has that {field}"),
            )
        })
}

/// The picture `image_id` names: one of the caller's images in the library.
pub(crate) async fn picture(
    state: &AppState,
    caller: &Caller,
    image_id: Option<FileId>,
) -> ApiResult<Option<FileId>> {
    let Some(id) = image_id else { return Ok(None) };
    let image = library_file(state, caller, id, "imageId").await?;
    if image.kind != FileKind::Image {
        return Err(ApiError::invalid("imageId", "imageId must be a picture"));
    }
    Ok(Some(image.id))
}
