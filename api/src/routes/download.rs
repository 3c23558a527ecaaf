//! Download: a fresh link to a file's bytes, and the permanent link of a public file. Both
//! count an open by anyone but the owner as a view.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::response::Redirect;
use chrono::{TimeDelta, Utc};
use drive_core::db::files::{self, FileRow};
use drive_core::db::{shares, views};
use drive_core::rewrites;
use drive_core::storage::Bucket;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::{Caller, MaybeCaller};
use crate::client::ClientAddress;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::limits::Limited;
use crate::records::{FileRecord, FileRef};
use crate::routes::upload;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(generate_download_url))
        .routes(routes!(open_public_link))
}

/// How long a private download link works.
pub(crate) const DOWNLOAD_LINK_LIFETIME: TimeDelta = TimeDelta::hours(6);

/// A link to a file: its permanent public link, or a 6-hour link for a private file. Public
/// files need no token.
#[utoipa::path(post, path = "/generate-download-url", tag = "download", request_body = FileRef,
    responses((status = 200, body = FileRecord)))]
async fn generate_download_url(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    MaybeCaller(caller): MaybeCaller,
    Json(input): Json<FileRef>,
) -> ApiResult<axum::Json<FileRecord>> {
    if caller.is_none() {
        state.limits.check(Limited::Anonymous, client).await?;
    }
    let file = files::find(&state.db, input.id)
        .await?
        .filter(|f| f.trashed_at.is_none());
    let reachable = match (file, &caller) {
        (Some(f), _) if f.is_public() || caller.as_ref().is_some_and(|c| c.user_id == f.user_id) => Some(f),
        // Another account's private file reaches only those it is shared with.
        (Some(_), Some(caller)) => shares::visible(&state.db, caller.user_id, input.id).await?,
        _ => None,
    };
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
    let file = as_stored(&state, file).await?;
    let url = link_to(&state, &file).await?;
    count_view(&state, &file, caller).await?;
    Ok(axum::Json(FileRecord::with_url(&file, Some(url))))
}

/// `file` as its key stores it now: where a form issued before the file was recorded may have
/// written the key again, the record follows what is stored ([`rewrites`]) before the bytes
/// are handed out.
pub(crate) async fn as_stored(state: &AppState, file: FileRow) -> ApiResult<FileRow> {
    let checked = rewrites::settle(&state.db, &state.storage, &file.object_key).await?;
    upload::push_reading(state, checked.reading).await;
    if !checked.followed {
        return Ok(file);
    }
    Ok(files::find(&state.db, file.id).await?.unwrap_or(file))
}

/// A file's `downloadUrl`: its permanent link when public, else a 6-hour link.
pub(crate) async fn link_to(state: &AppState, file: &FileRow) -> ApiResult<String> {
    Ok(match file.bucket {
        Bucket::Public => state.storage.public_link(file.id),
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
    })
}

/// A public file's permanent link (the `downloadUrl` of a public file): counts the open and
/// sends the reader on to the bytes. Browsers send no token, so their opens count as
/// someone's not signed in; a caller who sends the owner's token is not counted. A private,
/// trashed or unknown file answers 404, whoever asks.
#[utoipa::path(get, path = "/p/{id}", tag = "download",
    params(("id" = String, Path, description = "The file's id")),
    responses((status = 307, description = "On to the file's bytes in the public bucket")))]
async fn open_public_link(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    MaybeCaller(caller): MaybeCaller,
    // A path that is not even text (bad percent-encoding) names no file either; axum's own
    // rejection would answer without the error body.
    id: Result<Path<String>, PathRejection>,
) -> ApiResult<Redirect> {
    if caller.is_none() {
        state.limits.check(Limited::Anonymous, client).await?;
    }
    let file = match id.ok().and_then(|Path(id)| id.parse().ok()) {
        Some(id) => files::find(&state.db, id).await?,
        None => None,
    };
    let Some(file) = file.filter(|f| f.is_public() && f.trashed_at.is_none()) else {
        return Err(ApiError::not_found(
            "file_not_found",
            "no public file has that id",
        ));
    };
    count_view(&state, &file, caller).await?;
    Ok(Redirect::temporary(
        &state.storage.public_object_url(&file.object_key),
    ))
}

/// Records an open of `file` by `caller` (nobody signed in: `None`); the owner's own opens
/// are not views.
async fn count_view(state: &AppState, file: &FileRow, caller: Option<Caller>) -> ApiResult<()> {
    let mut conn = state.db.acquire().await?;
    let listed = serde_json::to_value(FileRecord::with_url(file, None)).unwrap_or_default();
    let viewer = caller.map(|c| c.user_id);
    views::record(&mut conn, file, listed, viewer, Utc::now()).await?;
    Ok(())
}
