//! What reviewers (a name, no account) call from the review page: open a review, a page of its
//! notes at a time, and leave a note or a reply, which writes a `note` event for the owner. Both
//! are counted by the per-address limit on anonymous calls.

use axum::extract::State;
use chrono::{DateTime, Utc};
use drive_core::db::events::{self, EventKind};
use drive_core::db::reviews::{self, Full, MAX_NOTES_PER_REVIEW, MAX_NOTES_PER_REVIEWER, NewNote, ReviewRow};
use drive_core::db::users;
use drive_core::file::FileKind;
use drive_core::id::{NoteId, ReviewId};
use drive_core::input::{Bounded, Line, Text};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{DEFAULT_PAGE, MAX_SECONDS, MEDIA_LINK_LIFETIME, Note, edit_list};
use crate::client::ClientAddress;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::limits::Limited;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(open_review))
        .routes(routes!(add_review_note))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenReviewInput {
    review_id: ReviewId,
    /// A `nextCursor` from before: the notes that follow it. Left out: from the start.
    cursor: Option<NoteId>,
    /// Notes on the page, 1 to 100; default 50. Each comes with all its replies.
    limit: Option<Bounded<1, 100>>,
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
    /// A page of the edit list: notes in the order of the timeline (then of writing), each
    /// with its replies.
    notes: Vec<Note>,
    /// Pass back as `cursor` for the notes that follow; null on the last page.
    next_cursor: Option<NoteId>,
}

/// Open a review (no account): the file to play and a page of the notes so far, in the order
/// of the timeline.
#[utoipa::path(post, path = "/open-review", tag = "reviewers", request_body = OpenReviewInput,
    responses((status = 200, body = OpenedReview)))]
async fn open_review(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    Json(input): Json<OpenReviewInput>,
) -> ApiResult<axum::Json<OpenedReview>> {
    state.limits.check(Limited::Anonymous, client).await?;
    let row = available(&state, input.review_id).await?;
    if let Some(cursor) = input.cursor {
        let note = reviews::note_of_review(&state.db, row.id, cursor).await?;
        if note.is_none_or(|n| n.reply_to.is_some()) {
            return Err(ApiError::invalid(
                "cursor",
                "cursor must be a nextCursor this review answered",
            ));
        }
    }
    let media_url = state
        .storage
        .presign_get(row.bucket, &row.object_key, &row.file_name, MEDIA_LINK_LIFETIME)
        .await?;
    let limit = input.limit.map_or(DEFAULT_PAGE, Bounded::get);
    let mut page = reviews::page(&state.db, row.id, input.cursor, limit + 1).await?;
    let more = page.len() as i64 > limit;
    page.truncate(limit as usize);
    let next_cursor = if more { page.last().map(|n| n.id) } else { None };
    let ids: Vec<NoteId> = page.iter().map(|n| n.id).collect();
    let replies = reviews::replies(&state.db, &ids).await?;
    Ok(axum::Json(OpenedReview {
        id: row.id,
        title: row.title,
        file_name: row.file_name,
        kind: row.kind,
        media_url,
        expires_at: Utc::now() + MEDIA_LINK_LIFETIME,
        notes: edit_list(page.into_iter().chain(replies)),
        next_cursor,
    }))
}

/// A review whose file is in the library and that is open; one of a trashed file is as gone
/// as a deleted one, and a closed one (by its owner, or with the token that made it) is 403
/// `review_closed`.
pub async fn available(state: &AppState, id: ReviewId) -> ApiResult<ReviewRow> {
    let review = reviews::find(&state.db, id)
        .await?
        .filter(|r| r.trashed_at.is_none())
        .ok_or_else(|| ApiError::not_found("review_not_found", "there is no review with that id"))?;
    if review.closed_at.is_some() {
        return Err(ApiError::forbidden(
            "review_closed",
            "this review is closed: its owner takes no more notes here",
        ));
    }
    Ok(review)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddNoteInput {
    review_id: ReviewId,
    /// Who is writing: 1 to 100 characters, not the review's owner's handle (in any case,
    /// spacing, punctuation or compatibility form). A name writes at most 100 notes and
    /// replies on one review, and reviewers together at most 500; past either the call is
    /// 400 `too_many_notes` naming `reviewerName` or `reviewId`.
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
/// replies. The owner gets a `note` event. Reviewers write at most 500 notes and replies on a
/// review, at most 100 under one name; the owner's handle is not a reviewer's name.
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
    // The owner's replies are signed with the handle, so a reviewer under it would pass for them.
    let handle = users::handle_of(&state.db, review.user_id).await?;
    if reviews::name_key(name) == reviews::name_key(&handle) {
        return Err(ApiError::invalid(
            "reviewerName",
            "that is the name of the review's owner; write under your own",
        ));
    }
    let (answered, seconds) = match (input.reply_to, input.seconds) {
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
            let seconds = note.seconds;
            (Some(note), seconds)
        }
        (None, Some(seconds)) if seconds.is_finite() && (0.0..=MAX_SECONDS).contains(&seconds) => {
            (None, seconds)
        }
        (None, Some(_)) => return Err(ApiError::invalid("seconds", "seconds is 0 to 86400")),
        (None, None) => return Err(ApiError::missing("seconds")),
    };
    let mut tx = state.db.begin().await?;
    let written = reviews::add_by_reviewer(
        &mut tx,
        &NewNote {
            review_id: review.id,
            reply_to: answered.as_ref().map(|n| n.id),
            reviewer_name: name,
            by_owner: false,
            text,
            seconds,
        },
    )
    .await?;
    let row = match written {
        Ok(row) => row,
        Err(Full::Review) => {
            return Err(ApiError::bad_request(
                "too_many_notes",
                "reviewId",
                format!("this review has the most notes and replies it takes ({MAX_NOTES_PER_REVIEW})"),
            ));
        }
        Err(Full::Reviewer) => {
            return Err(ApiError::bad_request(
                "too_many_notes",
                "reviewerName",
                format!(
                    "this name has left the most notes and replies one name may on a review \
                     ({MAX_NOTES_PER_REVIEWER})"
                ),
            ));
        }
    };
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
    // The note written, or the note answered with every reply (this one among them).
    let (note, replies) = match answered {
        Some(note) => {
            let replies = reviews::replies(&state.db, &[note.id]).await?;
            (note, replies)
        }
        None => (row, Vec::new()),
    };
    edit_list(std::iter::once(note).chain(replies))
        .pop()
        .map(axum::Json)
        .ok_or_else(|| ApiError::Machine("a note just written made no edit list".into()))
}
