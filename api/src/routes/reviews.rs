//! Reviews: a link to watch one of the owner's videos or tracks and leave notes at its moments.
//! The owner makes and lists them, replies to notes and marks them resolved; reviewers (a name,
//! no account) open the review and leave notes and replies through the two routes the review
//! page calls, each of which writes a `note` event for the owner.

use axum::extract::State;
use chrono::{DateTime, TimeDelta, Utc};
use drive_core::db::events::{self, EventKind};
use drive_core::db::reviews::{self, NewNote, NoteRow, ReviewRow};
use drive_core::db::{files, users};
use drive_core::file::FileKind;
use drive_core::id::{FileId, NoteId, ReviewId};
use drive_core::input::{Line, List, Text};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::client::ClientAddress;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::limits::Limited;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_file_review))
        .routes(routes!(select_file_reviews))
        .routes(routes!(reply_to_review_note))
        .routes(routes!(set_review_note_resolved))
        .routes(routes!(open_review))
        .routes(routes!(add_review_note))
}

/// The most reviews a listing answers.
const MAX_LISTED: i64 = 50;
/// How long the media link a review hands out works; the page renews it before then.
const MEDIA_LINK_LIFETIME: TimeDelta = TimeDelta::hours(6);
/// The latest moment a note may be at: a day into the file.
const MAX_SECONDS: f64 = 86_400.0;

/// Who wrote a note or reply.
#[derive(Debug, Serialize, ToSchema)]
pub struct Reviewer {
    name: String,
    /// True for the review's owner (a reply through `/reply-to-review-note`).
    owner: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    id: NoteId,
    reviewer: Reviewer,
    text: String,
    insert_time: DateTime<Utc>,
}

/// A note at a moment of the file, with its replies.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    id: NoteId,
    reviewer: Reviewer,
    text: String,
    /// Seconds into the file.
    seconds: f64,
    /// The same moment as `HH:MM:SS.mmm`.
    timecode: String,
    resolved: bool,
    resolved_time: Option<DateTime<Utc>>,
    insert_time: DateTime<Utc>,
    /// Oldest first.
    replies: Vec<Reply>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewedFile {
    id: FileId,
    file_name: String,
    #[serde(rename = "type")]
    kind: FileKind,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    id: ReviewId,
    title: String,
    file: ReviewedFile,
    /// The page to share, `{site}/reviews/{id}`.
    url: String,
    insert_time: DateTime<Utc>,
    /// The edit list: notes in the order of the timeline (then of writing), each with its
    /// timecode and replies.
    notes: Vec<Note>,
}

fn timecode(seconds: f64) -> String {
    let millis = (seconds * 1000.0).round() as u64;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        millis / 3_600_000,
        millis / 60_000 % 60,
        millis / 1000 % 60,
        millis % 1000
    )
}

fn reviewer(row: &NoteRow) -> Reviewer {
    Reviewer {
        name: row.reviewer_name.clone(),
        owner: row.by_owner,
    }
}

fn reply(row: &NoteRow) -> Reply {
    Reply {
        id: row.id,
        reviewer: reviewer(row),
        text: row.text.clone(),
        insert_time: row.created_at,
    }
}

/// Notes in timeline order with their replies, from rows of one review.
fn edit_list(rows: &[NoteRow]) -> Vec<Note> {
    rows.iter()
        .filter(|n| n.reply_to.is_none())
        .map(|n| Note {
            id: n.id,
            reviewer: reviewer(n),
            text: n.text.clone(),
            seconds: n.seconds,
            timecode: timecode(n.seconds),
            resolved: n.resolved_at.is_some(),
            resolved_time: n.resolved_at,
            insert_time: n.created_at,
            replies: {
                let mut replies: Vec<&NoteRow> = rows.iter().filter(|r| r.reply_to == Some(n.id)).collect();
                replies.sort_by_key(|r| r.created_at);
                replies.into_iter().map(reply).collect()
            },
        })
        .collect()
}

fn review(state: &AppState, row: ReviewRow, notes: &[NoteRow]) -> Review {
    let own: Vec<NoteRow> = notes.iter().filter(|n| n.review_id == row.id).cloned().collect();
    Review {
        url: page_url(state, row.id),
        id: row.id,
        title: row.title,
        file: ReviewedFile {
            id: row.file_id,
            file_name: row.file_name,
            kind: row.kind,
        },
        insert_time: row.created_at,
        notes: edit_list(&own),
    }
}

/// The page a review's reviewers open.
pub fn page_url(state: &AppState, id: ReviewId) -> String {
    format!("{}/reviews/{id}", state.storage.site_url())
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateReviewInput {
    /// One of the caller's videos or tracks.
    file_id: FileId,
    /// 1 to 200 characters; default the file's name.
    title: Option<Line<1, 200>>,
}

/// Make a link to watch a video or track and leave notes on it.
#[utoipa::path(post, path = "/create-file-review", tag = "reviews", request_body = CreateReviewInput,
    responses((status = 200, body = Review)))]
async fn create_file_review(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CreateReviewInput>,
) -> ApiResult<axum::Json<Review>> {
    let file = files::find_owned(&state.db, caller.user_id, input.file_id)
        .await?
        .filter(|f| f.trashed_at.is_none())
        .ok_or_else(|| {
            ApiError::not_found(
                "file_not_found",
                "no file of yours in the library has that fileId",
            )
        })?;
    if !matches!(file.kind, FileKind::Video | FileKind::Audio) {
        return Err(ApiError::invalid("fileId", "a review takes a video or a track"));
    }
    let title = match input.title.as_deref() {
        Some(title) => title.trim().to_string(),
        None => file.file_name.clone(),
    };
    let row = reviews::create(&state.db, caller.user_id, file.id, &title).await?;
    Ok(axum::Json(review(&state, row, &[])))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelectReviewsInput {
    /// 1 to 50 of the caller's reviews.
    review_ids: Option<List<ReviewId, 1, { MAX_LISTED as usize }>>,
    /// Only reviews of this file.
    file_id: Option<FileId>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Reviews {
    /// Newest first, at most 50.
    reviews: Vec<Review>,
}

/// The caller's reviews, each with its notes as an edit list.
#[utoipa::path(post, path = "/select-file-reviews", tag = "reviews", request_body = Option<SelectReviewsInput>,
    responses((status = 200, body = Reviews)))]
async fn select_file_reviews(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<Option<SelectReviewsInput>>,
) -> ApiResult<axum::Json<Reviews>> {
    let input = input.unwrap_or_default();
    let rows = reviews::list(
        &state.db,
        caller.user_id,
        input.review_ids.as_deref(),
        input.file_id,
        MAX_LISTED,
    )
    .await?;
    let ids: Vec<ReviewId> = rows.iter().map(|r| r.id).collect();
    let notes = reviews::notes(&state.db, &ids).await?;
    Ok(axum::Json(Reviews {
        reviews: rows.into_iter().map(|row| review(&state, row, &notes)).collect(),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReplyInput {
    /// A note (not a reply) on one of the caller's reviews.
    note_id: NoteId,
    /// 1 to 2000 characters.
    text: Text<1, 2000>,
}

/// Answer a note, as the review's owner (signed with the account's handle).
#[utoipa::path(post, path = "/reply-to-review-note", tag = "reviews", request_body = OwnerReplyInput,
    responses((status = 200, body = Reply)))]
async fn reply_to_review_note(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<OwnerReplyInput>,
) -> ApiResult<axum::Json<Reply>> {
    let text = input.text.trim();
    let note = reviews::owned_note(&state.db, caller.user_id, input.note_id)
        .await?
        .ok_or_else(note_not_found)?;
    let handle = users::handle_of(&state.db, caller.user_id).await?;
    let mut conn = state.db.acquire().await?;
    let row = reviews::add(
        &mut conn,
        &NewNote {
            review_id: note.review_id,
            reply_to: Some(note.id),
            reviewer_name: &handle,
            by_owner: true,
            text,
            seconds: note.seconds,
        },
    )
    .await?;
    Ok(axum::Json(reply(&row)))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResolveInput {
    note_id: NoteId,
    /// True: dealt with; false: not (again).
    resolved: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Resolved {
    id: NoteId,
    resolved: bool,
    resolved_time: Option<DateTime<Utc>>,
}

/// Mark a note dealt with, or not.
#[utoipa::path(post, path = "/set-review-note-resolved", tag = "reviews", request_body = ResolveInput,
    responses((status = 200, body = Resolved)))]
async fn set_review_note_resolved(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<ResolveInput>,
) -> ApiResult<axum::Json<Resolved>> {
    let row = reviews::set_resolved(&state.db, caller.user_id, input.note_id, input.resolved)
        .await?
        .ok_or_else(note_not_found)?;
    Ok(axum::Json(Resolved {
        id: row.id,
        resolved: row.resolved_at.is_some(),
        resolved_time: row.resolved_at,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenReviewInput {
    review_id: ReviewId,
}

/// A review as its page shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenedReview {
    id: ReviewId,
    title: String,
    file_name: String,
    #[serde(rename = "type")]
    kind: FileKind,
    /// Where to play the file from, for `expiresAt`; open the review again for a new one.
    media_url: String,
    expires_at: DateTime<Utc>,
    notes: Vec<Note>,
}

/// Open a review (no account): the file to play and the notes so far.
#[utoipa::path(post, path = "/open-review", tag = "reviewers", request_body = OpenReviewInput,
    responses((status = 200, body = OpenedReview)))]
async fn open_review(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    Json(input): Json<OpenReviewInput>,
) -> ApiResult<axum::Json<OpenedReview>> {
    state.limits.check(Limited::Anonymous, client).await?;
    let row = available(&state, input.review_id).await?;
    let media_url = state
        .storage
        .presign_get(row.bucket, &row.object_key, &row.file_name, MEDIA_LINK_LIFETIME)
        .await?;
    let notes = reviews::notes(&state.db, &[row.id]).await?;
    Ok(axum::Json(OpenedReview {
        id: row.id,
        title: row.title,
        file_name: row.file_name,
        kind: row.kind,
        media_url,
        expires_at: Utc::now() + MEDIA_LINK_LIFETIME,
        notes: edit_list(&notes),
    }))
}

/// A review whose file is in the library; another's trashed file is as gone as a deleted one.
pub async fn available(state: &AppState, id: ReviewId) -> ApiResult<ReviewRow> {
    reviews::find(&state.db, id)
        .await?
        .filter(|r| r.trashed_at.is_none())
        .ok_or_else(|| ApiError::not_found("review_not_found", "there is no review with that id"))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddNoteInput {
    review_id: ReviewId,
    /// Who is writing: 1 to 100 characters.
    reviewer_name: Line<1, 100>,
    /// 1 to 2000 characters.
    text: Text<1, 2000>,
    /// Seconds into the file, 0 to 86400; required for a note, left out for a reply (which is
    /// at its note's moment).
    #[schema(minimum = 0, maximum = 86400)]
    seconds: Option<f64>,
    /// The note answered (a note of this review, not a reply).
    reply_to: Option<NoteId>,
}

/// Leave a note at a moment, or a reply to one (no account): answers the note, with its
/// replies. The owner gets a `note` event.
#[utoipa::path(post, path = "/add-review-note", tag = "reviewers", request_body = AddNoteInput,
    responses((status = 200, body = Note)))]
async fn add_review_note(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    Json(input): Json<AddNoteInput>,
) -> ApiResult<axum::Json<Note>> {
    state.limits.check(Limited::Anonymous, client).await?;
    let name = input.reviewer_name.trim();
    let text = input.text.trim();
    let review = available(&state, input.review_id).await?;
    let (reply_to, seconds) = match (input.reply_to, input.seconds) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "seconds",
                "a reply is at its note's moment: leave seconds out",
            ));
        }
        (Some(id), None) => {
            let note = reviews::note_of_review(&state.db, review.id, id)
                .await?
                .ok_or_else(|| {
                    ApiError::not_found("note_not_found", "no note of this review has that replyTo")
                })?;
            if note.reply_to.is_some() {
                return Err(ApiError::invalid(
                    "replyTo",
                    "replies answer notes, not other replies",
                ));
            }
            (Some(note.id), note.seconds)
        }
        (None, Some(seconds)) if seconds.is_finite() && (0.0..=MAX_SECONDS).contains(&seconds) => {
            (None, seconds)
        }
        (None, Some(_)) => return Err(ApiError::invalid("seconds", "seconds is 0 to 86400")),
        (None, None) => return Err(ApiError::missing("seconds")),
    };
    let mut tx = state.db.begin().await?;
    let row = reviews::add(
        &mut tx,
        &NewNote {
            review_id: review.id,
            reply_to,
            reviewer_name: name,
            by_owner: false,
            text,
            seconds,
        },
    )
    .await?;
    let fields = serde_json::json!({
        "reviewer": { "name": row.reviewer_name },
        "text": row.text,
        "seconds": row.seconds,
        "replyTo": row.reply_to,
        "noteId": row.id,
        "review": { "id": review.id, "title": review.title },
        "file": { "id": review.file_id, "fileName": review.file_name, "type": review.kind },
    });
    events::record(&mut tx, review.user_id, EventKind::Note, review.id, fields).await?;
    tx.commit().await?;
    let shown = row.reply_to.unwrap_or(row.id);
    let notes = reviews::notes(&state.db, &[review.id]).await?;
    edit_list(&notes)
        .into_iter()
        .find(|n| n.id == shown)
        .map(axum::Json)
        .ok_or_else(|| ApiError::Machine("a note just written was not found".into()))
}

fn note_not_found() -> ApiError {
    ApiError::not_found("note_not_found", "no note on a review of yours has that noteId")
}

#[cfg(test)]
mod tests {
    use super::timecode;

    #[test]
    fn timecodes_are_hours_minutes_seconds_and_milliseconds() {
        assert_eq!(timecode(0.0), "00:00:00.000");
        assert_eq!(timecode(83.4567), "00:01:23.457");
        assert_eq!(timecode(3723.5), "01:02:03.500");
    }
}
