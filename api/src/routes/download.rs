//! Download: a fresh link to a file's bytes.

use axum::extract::State;
use chrono::{TimeDelta, Utc};
use drive_core::db::{files, views};
use drive_core::storage::Bucket;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::MaybeCaller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::records::{FileRecord, FileRef};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(generate_download_url))
}

/// How long a private download link works.
const DOWNLOAD_LINK_LIFETIME: TimeDelta = TimeDelta::hours(6);

/// A link to a file: its permanent public link, or a 6-hour link for a private file. Public
/// files need no token.
#[utoipa::path(post, path = "/generate-download-url", tag = "download", request_body = FileRef,
    responses((status = 200, body = FileRecord)))]
async fn generate_download_url(
    State(state): State<AppState>,
    MaybeCaller(caller): MaybeCaller,
    Json(input): Json<FileRef>,
) -> ApiResult<axum::Json<FileRecord>> {
    let file = files::find(&state.db, input.id)
        .await?
        .filter(|f| f.trashed_at.is_none());
    let reachable = file.filter(|f| f.is_public() || caller.as_ref().is_some_and(|c| c.user_id == f.user_id));
    let Some(file) = reachable else {
        return Err(match caller {
            // Anonymous callers learn nothing about private files, not even that they exist.
            None => ApiError::bad_request(
                "sign_in_required",
                "Authorization",
                "this file is not public: sign in to fetch it",
            ),
            Some(_) => ApiError::forbidden("file_not_found", "no file of yours has that id"),
        });
    };
    let url = match file.bucket() {
        Bucket::Public => state.storage.public_url(&file.object_key),
        Bucket::Private => {
            state
                .storage
                .presign_get(
                    Bucket::Private,
                    &file.object_key,
                    &file.file_name,
                    DOWNLOAD_LINK_LIFETIME,
                )
                .await?
        }
    };
    let record = FileRecord::with_url(&file, Some(url));
    let mut conn = state.db.acquire().await?;
    let listed = serde_json::to_value(FileRecord::with_url(&file, None)).unwrap_or_default();
    let viewer = caller.map(|c| c.user_id);
    views::record(&mut conn, file.user_id, listed, file.id, viewer, Utc::now()).await?;
    Ok(axum::Json(record))
}
