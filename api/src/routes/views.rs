//! `/select-file-views`: how often the caller's files were opened by others.

use axum::extract::State;
use chrono::{NaiveDate, TimeDelta, Utc};
use drive_core::db::views;
use drive_core::folder::FolderPath;
use drive_core::id::FileId;
use drive_core::input::{Bounded, List};
use drive_core::storage::Bucket;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::Json;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(select_file_views))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ViewsInput {
    /// 1 to 100 of the caller's files; without it, the files opened most since `since`.
    file_ids: Option<List<FileId, 1, 100>>,
    /// Count opens from this day on; default 30 days ago.
    since: Option<NaiveDate>,
    /// 1 to 100; default 25.
    limit: Option<Bounded<1, 100>>,
    /// Files in this folder and folders inside it.
    folder: Option<FolderPath>,
}

/// A viewer who may be named: someone the file was shared with who lets it be known.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Viewer {
    handle: Option<String>,
    display_name: Option<String>,
    last_day: NaiveDate,
    views: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ViewEntry {
    id: FileId,
    file_name: String,
    is_public: bool,
    /// Opens since `since`.
    views: i64,
    all_views: i64,
    last_view_time: Option<chrono::DateTime<Utc>>,
    /// Named viewers since `since`, most recent first: people the file is shared with who let
    /// it be known (`/update-profile`); every other open is counted only.
    viewers: Vec<Viewer>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FileViews {
    since: NaiveDate,
    files: Vec<ViewEntry>,
}

/// View counts of the caller's files.
#[utoipa::path(post, path = "/select-file-views", tag = "library", request_body = Option<ViewsInput>,
    responses((status = 200, body = FileViews)))]
async fn select_file_views(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<Option<ViewsInput>>,
) -> ApiResult<axum::Json<FileViews>> {
    let input = input.unwrap_or_default();
    let limit = input.limit.map_or(25, Bounded::get);
    let since = input
        .since
        .unwrap_or_else(|| (Utc::now() - TimeDelta::days(30)).date_naive());
    let folder = input.folder.filter(|f| !f.is_top()).map(|f| f.stored());
    let counts = views::counts(
        &state.db,
        caller.user_id,
        input.file_ids.as_deref(),
        since,
        folder.as_deref(),
        limit,
    )
    .await?;
    let ids: Vec<FileId> = counts.iter().map(|c| c.id).collect();
    let mut named = views::named(&state.db, &ids, since).await?;
    let files = counts
        .into_iter()
        .map(|c| ViewEntry {
            id: c.id,
            file_name: c.file_name,
            is_public: c.bucket == Bucket::Public,
            views: c.views,
            all_views: c.all_views,
            last_view_time: c.last_view_time,
            viewers: named
                .extract_if(.., |v| v.file_id == c.id)
                .map(|v| Viewer {
                    handle: Some(v.handle),
                    display_name: v.display_name,
                    last_day: v.last_day,
                    views: v.views,
                })
                .collect(),
        })
        .collect();
    Ok(axum::Json(FileViews { since, files }))
}
