//! The four multipart routes: create (or resume), sign parts, complete and abort. Parts go
//! straight to the store through URLs signed for their exact length; completion reads the parts
//! from the store, so no client sends ETags.

use axum::extract::State;
use chrono::{DateTime, Utc};
use drive_core::db::files;
use drive_core::db::reservations;
use drive_core::db::uploads::{self, UploadRow, UploadState};
use drive_core::id::UserId;
use drive_core::input::{Bounded, Line, List};
use drive_core::multipart::{
    MAX_PARTS, PART_URL_LIFETIME, PartPlan, SIGNED_PARTS_IN_CREATE, TokenError, UPLOAD_LIFETIME,
};
use drive_core::storage::{Bucket, StoredHeaders, StoredPart};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::routes::upload::{UploadInput, key_taken, reserve_upload};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_multipart_upload))
        .routes(routes!(sign_upload_parts))
        .routes(routes!(complete_multipart_upload))
        .routes(routes!(abort_multipart_upload))
}

/// A part the upload already holds.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredPartBody {
    part_number: i32,
    size: i64,
}

/// A URL to PUT one part's bytes to, signed for the part's exact length.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedPart {
    part_number: i32,
    /// Exact number of bytes the URL takes.
    size: i64,
    url: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MultipartUpload {
    /// Passed to the other multipart calls. Valid 7 days.
    token: String,
    upload_id: String,
    /// True when an upload already open under the key was picked up.
    resumed: bool,
    part_size: i64,
    part_count: i64,
    /// Parts storage already holds.
    parts: Vec<StoredPartBody>,
    /// URLs for the first 100 parts storage does not hold yet.
    signed_parts: Vec<SignedPart>,
    /// When the `signedParts` URLs stop working, one day after issue.
    expires_at: DateTime<Utc>,
    /// Static URL for public-bucket files; null for private files.
    download_url: Option<String>,
}

/// Start (or resume) a multipart upload.
#[utoipa::path(post, path = "/create-multipart-upload", tag = "upload", request_body = UploadInput,
    responses((status = 200, body = MultipartUpload)))]
async fn create_multipart_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<UploadInput>,
) -> ApiResult<axum::Json<MultipartUpload>> {
    if input.file_size.bytes() < 1 {
        return Err(ApiError::invalid(
            "fileSize",
            "a multipart upload needs at least one byte",
        ));
    }
    let key = input.object_key.as_str();
    reserve_upload(&state, &caller, &input, None, true).await?;
    let plan = PartPlan::for_size(input.file_size.bytes());

    let headers = StoredHeaders::new(input.mime_type(), input.file_name.as_str(), "inline");
    let opened = open_upload(&state, caller.user_id, key, &headers, plan).await?;
    Ok(axum::Json(opened.answer(&state).await?))
}

/// A multipart upload opened or picked up, with the parts the store holds.
pub(crate) struct Opened {
    pub row: UploadRow,
    stored: Vec<StoredPart>,
    resumed: bool,
}

impl Opened {
    /// The answer of `/create-multipart-upload`: a token, the parts stored, and URLs for the
    /// first 100 parts missing.
    pub(crate) async fn answer(self, state: &AppState) -> ApiResult<MultipartUpload> {
        let signed_parts = self.sign_missing(state).await?;
        let now = Utc::now();
        let plan = self.row.plan();
        Ok(MultipartUpload {
            token: state
                .settings
                .upload_tokens
                .issue(self.row.id, now + UPLOAD_LIFETIME),
            resumed: self.resumed,
            part_size: plan.part_size,
            part_count: plan.part_count,
            parts: self.stored_parts(),
            signed_parts,
            expires_at: now + PART_URL_LIFETIME,
            download_url: None,
            upload_id: self.row.upload_id,
        })
    }

    /// Whether an upload open before was picked up.
    pub(crate) fn resumed(&self) -> bool {
        self.resumed
    }

    /// The parts the store holds already.
    pub(crate) fn stored_parts(&self) -> Vec<StoredPartBody> {
        self.stored
            .iter()
            .map(|p| StoredPartBody {
                part_number: p.part_number,
                size: p.size,
            })
            .collect()
    }

    /// URLs for the first 100 parts the store does not hold yet.
    pub(crate) async fn sign_missing(&self, state: &AppState) -> ApiResult<Vec<SignedPart>> {
        let missing: Vec<i64> = (1..=self.row.plan().part_count)
            .filter(|n| !self.stored.iter().any(|p| i64::from(p.part_number) == *n))
            .take(SIGNED_PARTS_IN_CREATE)
            .collect();
        sign_parts(state, &self.row, &missing).await
    }
}

/// Picks up the upload open under `key` when its parts fit `plan`, or opens a new one, for
/// `user_id` (the caller, or the owner of a request a sender sends to). The key is reserved.
pub(crate) async fn open_upload(
    state: &AppState,
    user_id: UserId,
    key: &str,
    headers: &StoredHeaders,
    plan: PartPlan,
) -> ApiResult<Opened> {
    if let Some((row, stored)) = resumable(state, user_id, key, plan).await? {
        return Ok(Opened {
            row,
            stored,
            resumed: true,
        });
    }
    let upload_id = state
        .storage
        .create_multipart(
            Bucket::Private,
            key,
            &headers.content_type,
            &headers.content_disposition,
        )
        .await?;
    let row = match uploads::insert(&state.db, user_id, key, &upload_id, plan).await {
        Ok(row) => row,
        Err(e) => {
            // Lost a race with a concurrent create under the same key (the one open upload
            // per key index): drop ours; calling again resumes the winner's.
            state
                .storage
                .abort_multipart(Bucket::Private, key, &upload_id)
                .await?;
            let raced = e.as_database_error().is_some_and(|d| d.is_unique_violation());
            return Err(if raced {
                ApiError::conflict(
                    "upload_in_progress",
                    "another upload under this objectKey was opened at the same moment; call again to resume it",
                )
            } else {
                e.into()
            });
        }
    };
    Ok(Opened {
        row,
        stored: Vec::new(),
        resumed: false,
    })
}

/// The upload open under `key` with the parts it holds, when they fit `plan`. An open upload
/// whose parts do not fit (the file changed size) is discarded, as is one the store lost.
async fn resumable(
    state: &AppState,
    user_id: UserId,
    key: &str,
    plan: PartPlan,
) -> ApiResult<Option<(UploadRow, Vec<StoredPart>)>> {
    let Some(row) = uploads::open_under_key(&state.db, user_id, key).await? else {
        return Ok(None);
    };
    let stored = state
        .storage
        .list_parts(Bucket::Private, key, &row.upload_id)
        .await?;
    if let Some(stored) = stored {
        if row.file_size == plan.file_size && plan.fits(&stored) {
            return Ok(Some((row, stored)));
        }
        state
            .storage
            .abort_multipart(Bucket::Private, key, &row.upload_id)
            .await?;
    }
    uploads::set_state(&state.db, row.id, UploadState::Aborted).await?;
    Ok(None)
}

pub(crate) async fn sign_parts(
    state: &AppState,
    row: &UploadRow,
    numbers: &[i64],
) -> ApiResult<Vec<SignedPart>> {
    let plan = row.plan();
    let mut signed = Vec::with_capacity(numbers.len());
    for &number in numbers {
        let size = plan.part_len(number).ok_or_else(|| {
            ApiError::invalid(
                "partNumbers",
                format!("part {number} is not in 1..={}", plan.part_count),
            )
        })?;
        let part_number = number as i32;
        let url = state
            .storage
            .presign_part(
                Bucket::Private,
                &row.object_key,
                &row.upload_id,
                part_number,
                size,
                PART_URL_LIFETIME,
            )
            .await?;
        signed.push(SignedPart {
            part_number,
            size,
            url,
        });
    }
    Ok(signed)
}

/// The body of `/complete-multipart-upload` and `/abort-multipart-upload`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct UploadToken {
    /// The `token` from `/create-multipart-upload`.
    token: Line,
}

/// The caller's upload a token names. A token that is forged or expired is a bad field; a
/// token of another user's upload finds nothing, like an upload that is gone.
async fn upload_for(state: &AppState, caller: &Caller, token: &str) -> ApiResult<Option<UploadRow>> {
    let id = state
        .settings
        .upload_tokens
        .verify(token, Utc::now())
        .map_err(|e| match e {
            TokenError::Invalid => ApiError::bad_request("invalid_token", "token", e.to_string()),
            TokenError::Expired => ApiError::bad_request("token_expired", "token", e.to_string()),
        })?;
    Ok(uploads::find_owned(&state.db, caller.user_id, id).await?)
}

pub(crate) fn upload_not_found() -> ApiError {
    ApiError::not_found(
        "upload_not_found",
        "the multipart upload is no longer open and no object was made",
    )
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignPartsInput {
    token: Line,
    /// 1 to 1000 part numbers, each 1 to 10000 (and in the upload's plan).
    part_numbers: List<Bounded<1, { MAX_PARTS }>, 1, 1000>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedParts {
    parts: Vec<SignedPart>,
    expires_at: DateTime<Utc>,
}

/// Sign part URLs (1 to 1000 parts), valid one day.
#[utoipa::path(post, path = "/sign-upload-parts", tag = "upload", request_body = SignPartsInput,
    responses((status = 200, body = SignedParts)))]
async fn sign_upload_parts(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<SignPartsInput>,
) -> ApiResult<axum::Json<SignedParts>> {
    let row = upload_for(&state, &caller, &input.token)
        .await?
        .filter(|row| row.state == UploadState::Open)
        .ok_or_else(upload_not_found)?;
    if files::key_is_recorded(&state.db, &row.object_key).await? {
        return Err(key_taken());
    }
    let mut numbers: Vec<i64> = input.part_numbers.into_iter().map(Bounded::get).collect();
    numbers.sort_unstable();
    numbers.dedup();
    Ok(axum::Json(SignedParts {
        parts: sign_parts(&state, &row, &numbers).await?,
        expires_at: Utc::now() + PART_URL_LIFETIME,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompletedUpload {
    bucket: String,
    object_key: String,
    file_size: i64,
}

/// Join the parts into the object. Safe to repeat.
#[utoipa::path(post, path = "/complete-multipart-upload", tag = "upload", request_body = UploadToken,
    responses((status = 200, body = CompletedUpload)))]
async fn complete_multipart_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<UploadToken>,
) -> ApiResult<axum::Json<CompletedUpload>> {
    let row = upload_for(&state, &caller, &input.token)
        .await?
        .filter(|row| row.state != UploadState::Aborted)
        .ok_or_else(upload_not_found)?;
    complete(&state, caller.user_id, &row).await?;
    Ok(axum::Json(CompletedUpload {
        bucket: state.storage.bucket_name(Bucket::Private).to_string(),
        object_key: row.object_key,
        file_size: row.file_size,
    }))
}

/// Joins the parts of `user_id`'s upload into its object; succeeds again once done, while the
/// object it made is there (and after it was recorded as a file).
pub(crate) async fn complete(state: &AppState, user_id: UserId, row: &UploadRow) -> ApiResult<()> {
    let key = row.object_key.as_str();
    // The reservation is held until the end: an insert of the key waits for this completion,
    // and once the key is a file nothing completes over it.
    let mut tx = state.db.begin().await?;
    if reservations::lock(&mut tx, user_id, key).await?.is_none() {
        if row.state == UploadState::Complete && files::key_is_recorded(&mut *tx, key).await? {
            // A repeated complete after the insert: the object made is the file.
            return Ok(());
        }
        if row.state == UploadState::Open {
            state
                .storage
                .abort_multipart(Bucket::Private, key, &row.upload_id)
                .await?;
            uploads::set_state(&state.db, row.id, UploadState::Aborted).await?;
        }
        return Err(if files::key_is_recorded(&mut *tx, key).await? {
            key_taken()
        } else {
            upload_not_found()
        });
    }

    if row.state == UploadState::Open
        && let Some(stored) = state
            .storage
            .list_parts(Bucket::Private, key, &row.upload_id)
            .await?
    {
        check_parts(row.plan(), &stored)?;
        match state
            .storage
            .complete_multipart(Bucket::Private, key, &row.upload_id, &stored)
            .await
        {
            Ok(()) => {
                uploads::set_state(&state.db, row.id, UploadState::Complete).await?;
                tx.commit().await?;
                return Ok(());
            }
            // A concurrent complete may have finished it: the object tells.
            Err(e) => {
                tracing::info!(upload.id = %row.id, cause = %e, "complete failed; checking the object")
            }
        }
    }
    // Completed before (or the store finished it without us hearing): answer success again
    // while the object it made is there.
    let answer = match state.storage.object_size(Bucket::Private, key).await? {
        Some(size) if size == row.file_size => {
            uploads::set_state(&state.db, row.id, UploadState::Complete).await?;
            Ok(())
        }
        _ => {
            uploads::set_state(&state.db, row.id, UploadState::Aborted).await?;
            Err(upload_not_found())
        }
    };
    tx.commit().await?;
    answer
}

/// 409 when the stored parts are not the plan: `parts_invalid` for a part the plan does not
/// have or of the wrong length, `parts_missing` for planned parts not yet stored.
fn check_parts(plan: PartPlan, stored: &[StoredPart]) -> ApiResult<()> {
    if let Some(bad) = stored
        .iter()
        .find(|p| plan.part_len(p.part_number.into()) != Some(p.size))
    {
        return Err(ApiError::conflict(
            "parts_invalid",
            format!(
                "part {} holds {} bytes; the plan has {} parts of {} bytes (the last carries the remainder)",
                bad.part_number, bad.size, plan.part_count, plan.part_size
            ),
        ));
    }
    let missing: Vec<String> = (1..=plan.part_count)
        .filter(|n| !stored.iter().any(|p| i64::from(p.part_number) == *n))
        .map(|n| n.to_string())
        .collect();
    if !missing.is_empty() {
        let shown = missing.iter().take(20).cloned().collect::<Vec<_>>().join(", ");
        return Err(ApiError::conflict(
            "parts_missing",
            format!("{} parts are missing: {shown}", missing.len()),
        ));
    }
    Ok(())
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Aborted {
    /// True when an open upload was discarded; false when it was already gone.
    aborted: bool,
}

/// Discard an upload and its parts. Aborting a gone upload succeeds.
#[utoipa::path(post, path = "/abort-multipart-upload", tag = "upload", request_body = UploadToken,
    responses((status = 200, body = Aborted)))]
async fn abort_multipart_upload(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<UploadToken>,
) -> ApiResult<axum::Json<Aborted>> {
    let Some(row) = upload_for(&state, &caller, &input.token)
        .await?
        .filter(|row| row.state == UploadState::Open)
    else {
        return Ok(axum::Json(Aborted { aborted: false }));
    };
    state
        .storage
        .abort_multipart(Bucket::Private, &row.object_key, &row.upload_id)
        .await?;
    uploads::set_state(&state.db, row.id, UploadState::Aborted).await?;
    reservations::release_after_abort(&state.db, &row.object_key).await?;
    Ok(axum::Json(Aborted { aborted: true }))
}
