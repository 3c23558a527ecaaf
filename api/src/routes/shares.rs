//! Sharing with people: an owner shares files or a folder with other accounts by handle, as
//! viewers (they list, search, read and download; never change, move, share on or delete), and
//! takes it back; each side lists its shares. And the profile those people see.

use std::collections::HashMap;

use axum::extract::State;
use chrono::{DateTime, Utc};
use drive_core::db::events::{self, EventKind};
use drive_core::db::shares::{self, ShareRow, Shared};
use drive_core::db::{folders, users};
use drive_core::id::{FileId, FolderId, ShareId, UserId};
use drive_core::input::{Bounded, Line, List};
use drive_core::records::FileRecord;
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(share_files))
        .routes(routes!(unshare_files))
        .routes(routes!(select_file_shares))
        .routes(routes!(select_shared_files))
        .routes(routes!(select_profile))
        .routes(routes!(update_profile))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShareInput {
    /// 1 to 500 of the caller's files; or `folderId`.
    file_ids: Option<List<FileId, 1, 500>>,
    /// One of the caller's folders: the files in it and in the folders below it, now and later.
    folder_id: Option<FolderId>,
    /// 1 to 50 accounts' handles.
    handles: List<Line<1, 100>, 1, 50>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnshareInput {
    /// 1 to 500 of the caller's files; or `folderId`.
    file_ids: Option<List<FileId, 1, 500>>,
    folder_id: Option<FolderId>,
    /// 1 to 50 handles to take it back from; left out, from everyone.
    handles: Option<List<Line<1, 100>, 1, 50>>,
}

/// A file or folder shared with one account.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Share {
    id: ShareId,
    /// The file shared, `{ id, fileName }`; null for a folder's share.
    #[schema(value_type = Option<Object>)]
    file: Option<serde_json::Value>,
    /// The folder shared, `{ id, path }`; null for a file's share.
    #[schema(value_type = Option<Object>)]
    folder: Option<serde_json::Value>,
    /// Who it is shared with.
    handle: String,
    display_name: Option<String>,
    insert_time: DateTime<Utc>,
}

impl From<ShareRow> for Share {
    fn from(row: ShareRow) -> Share {
        Share {
            id: row.id,
            file: row
                .file_id
                .map(|id| json!({ "id": id, "fileName": row.file_name })),
            folder: row.folder_id.map(
                |id| json!({ "id": id, "path": row.folder_path.as_deref().map(drive_core::folder::listed) }),
            ),
            handle: row.handle,
            display_name: row.display_name,
            insert_time: row.created_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Shares {
    shares: Vec<Share>,
}

/// What the body names: files or one folder of the caller's (404 otherwise, as for ids that
/// do not exist).
async fn shared<'a>(
    state: &AppState,
    caller: &Caller,
    file_ids: &'a Option<List<FileId, 1, 500>>,
    folder_id: Option<FolderId>,
) -> ApiResult<Shared<'a>> {
    match (file_ids, folder_id) {
        (None, None) => Err(ApiError::missing("fileIds")),
        (Some(_), Some(_)) => Err(ApiError::invalid(
            "folderId",
            "give fileIds or folderId, not both",
        )),
        (Some(ids), None) => Ok(Shared::Files(ids)),
        (None, Some(id)) => {
            folders::find_owned(&state.db, caller.user_id, id)
                .await?
                .ok_or_else(|| ApiError::not_found("folder_not_found", "no folder of yours has that id"))?;
            Ok(Shared::Folder(id))
        }
    }
}

/// The accounts of `handles`; 400 naming `handles` for one there is none of, or the caller's own.
async fn accounts(state: &AppState, caller: &Caller, handles: &[Line<1, 100>]) -> ApiResult<Vec<UserId>> {
    let wanted: Vec<String> = handles.iter().map(|h| h.trim().to_string()).collect();
    let found = users::by_handles(&state.db, &wanted).await?;
    if let Some(missing) = wanted.iter().find(|h| !found.iter().any(|(f, _)| f == *h)) {
        return Err(ApiError::bad_request(
            "handle_not_found",
            "handles",
            format!("there is no account {missing:?}"),
        ));
    }
    if found.iter().any(|(_, id)| *id == caller.user_id) {
        return Err(ApiError::invalid("handles", "your own files are yours already"));
    }
    Ok(found.into_iter().map(|(_, id)| id).collect())
}

/// Tells both sides' feeds of shares made or taken back: the owner's names who, each other's
/// names whose. One statement a feed, however many shares (up to 500 files for 50 people).
async fn tell(
    conn: &mut sqlx::PgConnection,
    owner: &Caller,
    kind: EventKind,
    rows: &[ShareRow],
) -> Result<(), sqlx::Error> {
    let me = users::profile(&mut *conn, owner.user_id).await?;
    let mut owners_feed = Vec::new();
    let mut feeds: HashMap<UserId, Vec<(uuid::Uuid, serde_json::Value)>> = HashMap::new();
    for row in rows {
        let what = json!({
            "file": row.file_id.map(|id| json!({ "id": id, "fileName": row.file_name })),
            "folder": row.folder_id.map(|id| json!({ "id": id, "path": row.folder_path })),
        });
        let subject: uuid::Uuid = match (row.file_id, row.folder_id) {
            (Some(file), _) => file.into(),
            (None, Some(folder)) => folder.into(),
            (None, None) => row.id.into(),
        };
        let mut told = what.clone();
        told["with"] = json!({ "handle": row.handle, "displayName": row.display_name });
        owners_feed.push((subject, told));
        let mut told = what;
        told["owner"] = json!({ "handle": me.handle, "displayName": me.display_name });
        feeds.entry(row.grantee_id).or_default().push((subject, told));
    }
    events::record_many(&mut *conn, owner.user_id, kind, owners_feed).await?;
    for (grantee, told) in feeds {
        events::record_many(&mut *conn, grantee, kind, told).await?;
    }
    Ok(())
}

/// Share files, or a folder (what is in it and below it, now and later), with other accounts
/// as viewers. Sharing again what is shared already changes nothing.
#[utoipa::path(post, path = "/share-files", tag = "sharing", request_body = ShareInput,
    responses((status = 200, body = Shares)))]
async fn share_files(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<ShareInput>,
) -> ApiResult<axum::Json<Shares>> {
    let what = shared(&state, &caller, &input.file_ids, input.folder_id).await?;
    let grantees = accounts(&state, &caller, &input.handles).await?;
    let mut tx = state.db.begin().await?;
    let before = shares::of_subject(&mut tx, caller.user_id, what).await?;
    let rows = shares::share(&mut tx, caller.user_id, what, &grantees).await?;
    if rows.is_empty() {
        return Err(ApiError::not_found(
            "file_not_found",
            "none of the files are yours",
        ));
    }
    let made: Vec<ShareRow> = rows.iter().filter(|r| !before.contains(&r.id)).cloned().collect();
    tell(&mut tx, &caller, EventKind::Shared, &made).await?;
    tx.commit().await?;
    Ok(axum::Json(Shares {
        shares: rows.into_iter().map(Share::from).collect(),
    }))
}

/// Take back shares of files or a folder, from some accounts or from everyone.
#[utoipa::path(post, path = "/unshare-files", tag = "sharing", request_body = UnshareInput,
    responses((status = 200, body = Shares)))]
async fn unshare_files(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<UnshareInput>,
) -> ApiResult<axum::Json<Shares>> {
    let what = shared(&state, &caller, &input.file_ids, input.folder_id).await?;
    let grantees = match &input.handles {
        Some(handles) => Some(accounts(&state, &caller, handles).await?),
        None => None,
    };
    let mut tx = state.db.begin().await?;
    let rows = shares::unshare(&mut tx, caller.user_id, what, grantees.as_deref()).await?;
    tell(&mut tx, &caller, EventKind::Unshared, &rows).await?;
    tx.commit().await?;
    Ok(axum::Json(Shares {
        shares: rows.into_iter().map(Share::from).collect(),
    }))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileSharesInput {
    /// Only the shares of these files (1 to 500).
    file_ids: Option<List<FileId, 1, 500>>,
}

/// What the caller shares, with whom, newest first (at most 1000).
#[utoipa::path(post, path = "/select-file-shares", tag = "sharing", request_body = Option<FileSharesInput>,
    responses((status = 200, body = Shares)))]
async fn select_file_shares(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<Option<FileSharesInput>>,
) -> ApiResult<axum::Json<Shares>> {
    let input = input.unwrap_or_default();
    let rows = shares::of_owner(&state.db, caller.user_id, input.file_ids.as_deref(), 1000).await?;
    Ok(axum::Json(Shares {
        shares: rows.into_iter().map(Share::from).collect(),
    }))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SharedFilesInput {
    /// A `nextCursor` from before.
    cursor: Option<Line<1, 100>>,
    /// 1 to 100; default 50.
    limit: Option<Bounded<1, 100>>,
}

/// Who shared a file with the caller.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Owner {
    handle: String,
    display_name: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SharedFile {
    file: FileRecord,
    owner: Owner,
    /// Since when the caller may see it.
    shared_time: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SharedFiles {
    files: Vec<SharedFile>,
    /// Pass back as `cursor` for the next page; null on the last.
    next_cursor: Option<String>,
}

/// The files others share with the caller, newest share first.
#[utoipa::path(post, path = "/select-shared-files", tag = "sharing", request_body = Option<SharedFilesInput>,
    responses((status = 200, body = SharedFiles)))]
async fn select_shared_files(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<Option<SharedFilesInput>>,
) -> ApiResult<axum::Json<SharedFiles>> {
    let input = input.unwrap_or_default();
    let limit = input.limit.map_or(50, Bounded::get);
    let after = match input.cursor.as_deref() {
        None => None,
        Some(cursor) => {
            Some(decode(cursor).ok_or_else(|| ApiError::invalid("cursor", "is not a nextCursor"))?)
        }
    };
    let mut rows = shares::with_me(&state.db, caller.user_id, after, limit + 1).await?;
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next_cursor = rows
        .last()
        .filter(|_| more)
        .map(|last| format!("s{}.{}", last.shared_at.timestamp_micros(), last.file.id));
    Ok(axum::Json(SharedFiles {
        files: rows
            .into_iter()
            .map(|row| SharedFile {
                file: FileRecord::listed(&row.file, &state.storage),
                owner: Owner {
                    handle: row.owner_handle,
                    display_name: row.owner_display_name,
                },
                shared_time: row.shared_at,
            })
            .collect(),
        next_cursor,
    }))
}

fn decode(cursor: &str) -> Option<(DateTime<Utc>, FileId)> {
    let (micros, id) = cursor.strip_prefix('s')?.split_once('.')?;
    Some((
        DateTime::from_timestamp_micros(micros.parse().ok()?)?,
        id.parse().ok()?,
    ))
}

/// What an account shows the people who share with it, and whether they see its opens.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    handle: String,
    display_name: Option<String>,
    /// Whether owners see when the caller opens the files they share (on by default).
    show_views: bool,
}

impl From<users::Profile> for Profile {
    fn from(p: users::Profile) -> Profile {
        Profile {
            handle: p.handle,
            display_name: p.display_name,
            show_views: p.show_views,
        }
    }
}

/// The caller's profile.
#[utoipa::path(post, path = "/select-profile", tag = "sharing", responses((status = 200, body = Profile)))]
async fn select_profile(State(state): State<AppState>, caller: Caller) -> ApiResult<axum::Json<Profile>> {
    Ok(axum::Json(
        users::profile(&state.db, caller.user_id).await?.into(),
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileInput {
    /// Up to 100 characters; empty clears it; left out, it stays.
    display_name: Option<Line<0, 100>>,
    /// Let owners see when you open the files they share with you.
    show_views: Option<bool>,
}

/// Change the caller's display name, or whether owners see their opens.
#[utoipa::path(post, path = "/update-profile", tag = "sharing", request_body = ProfileInput,
    responses((status = 200, body = Profile)))]
async fn update_profile(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<ProfileInput>,
) -> ApiResult<axum::Json<Profile>> {
    let name = input
        .display_name
        .as_deref()
        .map(|n| Some(n.trim()).filter(|n| !n.is_empty()));
    let profile = users::update_profile(&state.db, caller.user_id, name, input.show_views).await?;
    Ok(axum::Json(profile.into()))
}
