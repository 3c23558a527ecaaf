//! The routes a file request's senders call, with no account: the request's page uses them.
//! A sender starts a drop (a name, a note) and gets a token good for that drop alone; each file
//! is announced first (its bytes reserved against the request's `maxBytes` and the owner's
//! quota, under a key the drive chooses below the owner's prefix), sent straight to the store
//! (a presigned form up to 64 MiB, multipart parts above, resumable), then recorded into the
//! request's folder as the owner's file; finishing the drop writes its one `drop` event. Every
//! route is counted by the per-address limit on anonymous calls.

use axum::extract::State;
use chrono::{DateTime, TimeDelta, Utc};
use drive_core::db::files::NewFile;
use drive_core::db::requests::{self, ArrivalRow, DropRow, RequestRow, Shut};
use drive_core::db::reservations::{self, ForRequest, Reserve};
use drive_core::db::uploads::{self, UploadState};
use drive_core::db::users;
use drive_core::file::{FileName, FileSize, guess_type};
use drive_core::id::{ArrivalId, DropId, RequestId};
use drive_core::input::{Bounded, Line, List, Text};
use drive_core::multipart::{DEFAULT_PART_SIZE, MAX_PARTS, PART_URL_LIFETIME, PartPlan};
use drive_core::storage::{Bucket, PostRules, StoredHeaders};
use drive_core::token;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::client::ClientAddress;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::limits::Limited;
use crate::routes::multipart::{self, SignedPart, StoredPartBody};
use crate::routes::upload::{self, key_taken};
use crate::state::AppState;

use super::accepts;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(start_request_drop))
        .routes(routes!(add_request_file))
        .routes(routes!(sign_request_parts))
        .routes(routes!(finish_request_file))
        .routes(routes!(finish_request_drop))
}

/// Files up to this size are sent through one presigned form; larger ones in parts.
const FORM_MAX: i64 = DEFAULT_PART_SIZE;
/// How long a sender's form works: long enough for 64 MiB on a slow line, short enough that
/// an abandoned one does not hold the request's room for days.
const FORM_LIFETIME: TimeDelta = TimeDelta::hours(1);
/// How long after its last moment to write an announced file may wait to be recorded.
const RECORD_GRACE: TimeDelta = TimeDelta::hours(1);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartDropInput {
    request_id: RequestId,
    /// Who is sending: 1 to 100 characters.
    sender_name: Line<1, 100>,
    /// Up to 2000 characters for the owner.
    note: Option<Text<0, 2000>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartedDrop {
    drop_id: DropId,
    /// The sender's credential for this drop's other calls; shown once.
    token: String,
}

/// Start sending to a file request (no account).
#[utoipa::path(post, path = "/start-request-drop", tag = "request senders", request_body = StartDropInput,
    responses((status = 200, body = StartedDrop)))]
async fn start_request_drop(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    Json(input): Json<StartDropInput>,
) -> ApiResult<axum::Json<StartedDrop>> {
    state.limits.check(Limited::Anonymous, client).await?;
    let name = input.sender_name.trim();
    let note = input.note.as_deref().map(str::trim).filter(|n| !n.is_empty());
    let request = requests::find(&state.db, input.request_id)
        .await?
        .ok_or_else(request_not_found)?;
    check_open(&request)?;
    let token = token::generate("drive_drop_");
    let drop_id = requests::start_drop(&state.db, request.id, &token::digest(&token), name, note).await?;
    Ok(axum::Json(StartedDrop { drop_id, token }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddFileInput {
    /// The drop's token.
    token: Line,
    file_name: FileName,
    /// Exact size in bytes.
    file_size: FileSize,
}

/// Where to send a file's bytes: a form (`form`) or parts (`parts`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddedFile {
    arrival_id: ArrivalId,
    /// Up to 64 MiB: POST the fields, then the file, as `multipart/form-data`.
    #[serde(skip_serializing_if = "Option::is_none")]
    form: Option<SenderForm>,
    /// Above 64 MiB: PUT each part to its URL, then `/finish-request-file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    parts: Option<SenderParts>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SenderForm {
    upload_url: String,
    upload_form: BTreeMap<String, String>,
    expires_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SenderParts {
    /// True when parts sent before were found (the same file announced again in this drop).
    resumed: bool,
    part_size: i64,
    part_count: i64,
    /// Parts the store holds already.
    stored: Vec<StoredPartBody>,
    /// URLs for the first 100 parts missing; `/sign-request-parts` for more.
    signed_parts: Vec<SignedPart>,
    expires_at: DateTime<Utc>,
}

/// Announce a file and get where to send it. Announcing the same name and size again in the
/// same drop picks up where it stopped.
#[utoipa::path(post, path = "/add-request-file", tag = "request senders", request_body = AddFileInput,
    responses((status = 200, body = AddedFile)))]
async fn add_request_file(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    Json(input): Json<AddFileInput>,
) -> ApiResult<axum::Json<AddedFile>> {
    state.limits.check(Limited::Anonymous, client).await?;
    let file_name = input.file_name.as_str();
    let file_size = input.file_size.bytes();
    let now = Utc::now();
    // The drop's row is locked until the reservation commits: one sender's files are counted
    // one at a time.
    let mut tx = state.db.begin().await?;
    let drop = open_drop(&mut tx, &input.token, true).await?;
    check_sending(&drop)?;
    let request = requests::find(&mut *tx, drop.request_id)
        .await?
        .ok_or_else(request_not_found)?;
    check_open(&request)?;
    if !accepts(request.accept_types.as_deref(), file_name) {
        let accepted = request.accept_types.as_deref().unwrap_or_default().join(", ");
        return Err(ApiError::bad_request(
            "type_not_accepted",
            "fileName",
            format!("this request takes only {accepted}"),
        ));
    }
    let limit = owner_limit(&state, &request).await?;
    let arrival = match requests::pending_arrival(&mut tx, drop.id, file_name, file_size).await? {
        Some(arrival) => arrival,
        None => {
            if let Some(max) = request.max_files_per_sender
                && requests::files_of_drop(&mut tx, drop.id).await? >= i64::from(max)
            {
                return Err(ApiError::bad_request(
                    "too_many_files",
                    "fileName",
                    format!("this request takes at most {max} files from each sender"),
                ));
            }
            let id = ArrivalId::random();
            let (kind, mime_type) = guess_type(file_name);
            let arrival = ArrivalRow {
                id,
                request_id: request.id,
                drop_id: drop.id,
                object_key: format!(
                    "users/{}/requests/{}/{id}/{file_name}",
                    request.user_id, request.id
                ),
                file_name: file_name.to_string(),
                file_size,
                mime_type: mime_type.to_string(),
                kind,
                file_id: None,
            };
            requests::announce(&mut tx, &arrival).await?;
            arrival
        }
    };
    let by_form = file_size <= FORM_MAX;
    let form_until = by_form.then_some(now + FORM_LIFETIME);
    // A sender's parts are signed for a day at a time: the reservation lapses a day after the
    // last signing (`/sign-request-parts` renews it), not with the upload's week, so an
    // announcement with nothing sent holds the owner's room a day at most.
    let last_write = form_until.unwrap_or(now + PART_URL_LIFETIME);
    let reservation = reservations::Request {
        user_id: request.user_id,
        object_key: &arrival.object_key,
        file_size,
        form_until,
        expires_at: last_write + RECORD_GRACE,
        max_open_uploads: None,
        request: Some(ForRequest {
            id: request.id,
            max_bytes: request.max_bytes,
            max_pending_bytes: state.settings.request_pending_bytes,
        }),
    };
    match reservations::reserve(&mut tx, reservation, limit).await? {
        Reserve::Reserved => tx.commit().await?,
        Reserve::KeyTaken => return Err(key_taken()),
        // An arrival's key is the drive's own, made for one name and size.
        Reserve::SizeFixed { .. } => {
            return Err(ApiError::Machine(
                "an arrival's key was reserved for another size".into(),
            ));
        }
        // One answer, with no numbers, whichever limit it met: the request's, what its senders
        // may hold unsent, or the owner's storage, which is not the sender's to measure.
        Reserve::RequestFull | Reserve::OverQuota { .. } | Reserve::TooManyUploads { .. } => {
            return Err(request_full());
        }
    }

    let headers = StoredHeaders::new(&arrival.mime_type, &arrival.file_name, "inline");
    if by_form {
        let rules = PostRules {
            content_length: file_size,
            content_type: headers.content_type,
            content_disposition: headers.content_disposition,
            cache_control: upload::CACHE_CONTROL.to_string(),
        };
        let form =
            state
                .storage
                .presign_post(Bucket::Private, &arrival.object_key, &rules, FORM_LIFETIME, now);
        return Ok(axum::Json(AddedFile {
            arrival_id: arrival.id,
            form: Some(SenderForm {
                upload_url: form.url,
                upload_form: form.fields,
                expires_at: now + FORM_LIFETIME,
            }),
            parts: None,
        }));
    }
    let plan = PartPlan::for_size(file_size);
    let opened = multipart::open_upload(&state, request.user_id, &arrival.object_key, &headers, plan).await?;
    Ok(axum::Json(AddedFile {
        arrival_id: arrival.id,
        form: None,
        parts: Some(SenderParts {
            resumed: opened.resumed(),
            part_size: plan.part_size,
            part_count: plan.part_count,
            stored: opened.stored_parts(),
            signed_parts: opened.sign_missing(&state).await?,
            expires_at: now + PART_URL_LIFETIME,
        }),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignRequestPartsInput {
    token: Line,
    arrival_id: ArrivalId,
    /// 1 to 1000 part numbers of the file's plan.
    part_numbers: List<Bounded<1, { MAX_PARTS }>, 1, 1000>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedRequestParts {
    parts: Vec<SignedPart>,
    expires_at: DateTime<Utc>,
}

/// More part URLs for a file sent in parts, valid one day.
#[utoipa::path(post, path = "/sign-request-parts", tag = "request senders", request_body = SignRequestPartsInput,
    responses((status = 200, body = SignedRequestParts)))]
async fn sign_request_parts(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    Json(input): Json<SignRequestPartsInput>,
) -> ApiResult<axum::Json<SignedRequestParts>> {
    state.limits.check(Limited::Anonymous, client).await?;
    let (arrival, request) = sending(&state, &input.token, input.arrival_id).await?;
    let row = uploads::open_under_key(&state.db, request.user_id, &arrival.object_key)
        .await?
        .ok_or_else(multipart::upload_not_found)?;
    let mut numbers: Vec<i64> = input.part_numbers.into_iter().map(Bounded::get).collect();
    numbers.sort_unstable();
    numbers.dedup();
    let expires_at = Utc::now() + PART_URL_LIFETIME;
    let parts = multipart::sign_parts(&state, &row, &numbers).await?;
    reservations::renew(&state.db, &arrival.object_key, expires_at + RECORD_GRACE).await?;
    Ok(axum::Json(SignedRequestParts { parts, expires_at }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FinishFileInput {
    token: Line,
    arrival_id: ArrivalId,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArrivedFile {
    arrival_id: ArrivalId,
    file_name: String,
    file_size: i64,
}

/// Record a file whose bytes were sent (its parts joined first). Safe to repeat.
#[utoipa::path(post, path = "/finish-request-file", tag = "request senders", request_body = FinishFileInput,
    responses((status = 200, body = ArrivedFile)))]
async fn finish_request_file(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    Json(input): Json<FinishFileInput>,
) -> ApiResult<axum::Json<ArrivedFile>> {
    state.limits.check(Limited::Anonymous, client).await?;
    let (arrival, request) = sending(&state, &input.token, input.arrival_id).await?;
    let answer = ArrivedFile {
        arrival_id: arrival.id,
        file_name: arrival.file_name.clone(),
        file_size: arrival.file_size,
    };
    if arrival.file_id.is_some() {
        return Ok(axum::Json(answer));
    }
    if arrival.file_size > FORM_MAX {
        let row = uploads::latest_under_key(&state.db, request.user_id, &arrival.object_key)
            .await?
            .ok_or_else(multipart::upload_not_found)?;
        multipart::complete(&state, request.user_id, &row).await?;
    }
    let limit = owner_limit(&state, &request).await?;
    let new = NewFile {
        user_id: request.user_id,
        file_name: &arrival.file_name,
        file_size: arrival.file_size,
        mime_type: &arrival.mime_type,
        kind: arrival.kind,
        bucket: Bucket::Private,
        object_key: &arrival.object_key,
        modified_time: None,
        folder_id: Some(request.folder_id),
        derivative_of: None,
        copy_of: None,
    };
    let mut tx = state.db.begin().await?;
    // No event of its own: the drop's event announces what arrived.
    let recorded = upload::record_upload(&state, &mut tx, &new, limit, None)
        .await
        .map_err(|e| match e {
            ApiError::BadRequest {
                code: "storage_limit_reached",
                ..
            } => request_full(),
            e => e,
        })?;
    requests::arrived(&mut tx, arrival.id, recorded.file.id).await?;
    tx.commit().await?;
    recorded.ring_for_queued(&state).await;
    Ok(axum::Json(answer))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct FinishDropInput {
    token: Line,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FinishedDrop {
    drop_id: DropId,
    finish_time: DateTime<Utc>,
    /// Files of this drop that arrived.
    files: usize,
}

/// Say the drop is done: the owner gets one `drop` event with what arrived. Files announced and
/// not sent are given up. Safe to repeat.
#[utoipa::path(post, path = "/finish-request-drop", tag = "request senders", request_body = FinishDropInput,
    responses((status = 200, body = FinishedDrop)))]
async fn finish_request_drop(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    Json(input): Json<FinishDropInput>,
) -> ApiResult<axum::Json<FinishedDrop>> {
    state.limits.check(Limited::Anonymous, client).await?;
    let mut tx = state.db.begin().await?;
    let drop = open_drop(&mut tx, &input.token, true).await?;
    let request = requests::find(&mut *tx, drop.request_id)
        .await?
        .ok_or_else(request_not_found)?;
    let (finish_time, files) = requests::finish_drop(&mut tx, &drop, &request).await?;
    let unsent = requests::unsent(&mut tx, drop.id).await?;
    tx.commit().await?;
    for arrival in unsent {
        if let Err(cause) = give_up(&state, request.user_id, &arrival).await {
            tracing::warn!(arrival.id = %arrival.id, %cause, "an unsent upload was left to expire");
        }
    }
    Ok(axum::Json(FinishedDrop {
        drop_id: drop.id,
        finish_time,
        files: files.len(),
    }))
}

/// Aborts the multipart upload of a file announced and never sent, freeing the request's room.
/// A form's reservation lapses with the form (it may still write until then).
async fn give_up(state: &AppState, owner: drive_core::id::UserId, arrival: &ArrivalRow) -> ApiResult<()> {
    let Some(row) = uploads::open_under_key(&state.db, owner, &arrival.object_key).await? else {
        return Ok(());
    };
    state
        .storage
        .abort_multipart(Bucket::Private, &row.object_key, &row.upload_id)
        .await?;
    uploads::set_state(&state.db, row.id, UploadState::Aborted).await?;
    reservations::release_after_abort(&state.db, &row.object_key).await?;
    Ok(())
}

/// The drop a token opens (its row locked with `lock`); a token that opens none is a bad field.
async fn open_drop(conn: &mut sqlx::PgConnection, token: &str, lock: bool) -> ApiResult<DropRow> {
    requests::drop_by_token(conn, &token::digest(token), lock)
        .await?
        .ok_or_else(|| ApiError::bad_request("invalid_token", "token", "the token opens no drop"))
}

/// A drop still sending: once finished it takes nothing more.
fn check_sending(drop: &DropRow) -> ApiResult<()> {
    match drop.finished_at {
        Some(_) => Err(ApiError::bad_request(
            "drop_finished",
            "token",
            "this drop is finished; open the request's page again to send more",
        )),
        None => Ok(()),
    }
}

/// 403 `request_closed` unless the request takes files now.
fn check_open(request: &RequestRow) -> ApiResult<()> {
    let why = match request.shut(Utc::now()) {
        None => return Ok(()),
        Some(Shut::Expired(t)) => format!("this request stopped taking files at {}", t.to_rfc3339()),
        Some(Shut::Closed) => "this request is closed and takes no files".to_string(),
    };
    Err(ApiError::forbidden("request_closed", why))
}

/// The owner's storage limit; a request of an account with no plan takes nothing.
async fn owner_limit(state: &AppState, request: &RequestRow) -> ApiResult<i64> {
    let plan = users::plan_of(&state.db, request.user_id)
        .await?
        .ok_or_else(|| ApiError::forbidden("request_closed", "this request takes no files now"))?;
    Ok(state.settings.quotas.for_plan(plan))
}

/// An arrival of a drop still sending, with its request: what a sender's calls about one file
/// act on.
async fn sending(
    state: &AppState,
    token: &str,
    arrival_id: ArrivalId,
) -> ApiResult<(ArrivalRow, RequestRow)> {
    let mut conn = state.db.acquire().await?;
    let drop = open_drop(&mut conn, token, false).await?;
    check_sending(&drop)?;
    let arrival = requests::arrival(&mut *conn, drop.id, arrival_id)
        .await?
        .ok_or_else(arrival_not_found)?;
    let request = requests::find(&mut *conn, drop.request_id)
        .await?
        .ok_or_else(request_not_found)?;
    Ok((arrival, request))
}

/// 400 `request_full`: the file does not fit now. The same sentence whatever limit it met, so a
/// sender learns nothing of the owner's storage.
fn request_full() -> ApiError {
    ApiError::bad_request(
        "request_full",
        "fileSize",
        "this request cannot take this file now: it is full, or holds as much as it may of files \
         announced and not yet sent",
    )
}

fn request_not_found() -> ApiError {
    ApiError::not_found("request_not_found", "there is no file request with that id")
}

fn arrival_not_found() -> ApiError {
    ApiError::not_found(
        "arrival_not_found",
        "this drop announced no file with that arrivalId",
    )
}
