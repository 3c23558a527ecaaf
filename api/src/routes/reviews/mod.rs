//! Reviews: a link to watch one of the owner's videos or tracks and leave notes at its moments.
//! The owner makes and lists them, replies to notes and marks them resolved; reviewers (a name,
//! no account) open the review and leave notes and replies through the two routes the review
//! page calls, each of which writes a `note` event for the owner.

use std::collections::HashMap;

use axum::extract::State;
use chrono::{DateTime, TimeDelta, Utc};
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
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::state::AppState;

mod reviewers;

pub use reviewers::available;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_file_review))
        .routes(routes!(select_file_reviews))
        .routes(routes!(reply_to_review_note))
        .routes(routes!(set_review_note_resolved))
        .routes(routes!(close_file_review))
        .merge(reviewers::router())
}

/// The most reviews a listing answers.
const MAX_LISTED: i64 = 50;
/// How long the media link a review hands out works; the page renews it before then.
const MEDIA_LINK_LIFETIME: TimeDelta = TimeDelta::hours(6);
/// The latest moment a note may be at: a day into the file.
const MAX_SECONDS: f64 = 86_400.0;
/// The notes a page of `/open-review` holds when the call does not say.
const DEFAULT_PAGE: i64 = 50;

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
    /// When its link was closed (`/close-file-review`, or with the API token that made it);
    /// null while open.
    close_time: Option<DateTime<Utc>>,
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

fn reply(row: NoteRow) -> Reply {
    Reply {
        id: row.id,
        reviewer: Reviewer {
            name: row.reviewer_name,
            owner: row.by_owner,
        },
        text: row.text,
        insert_time: row.created_at,
    }
}

/// The edit list of rows of one review, notes and replies given in the order of the timeline
/// (then of writing): its notes in that order, each with its replies. One pass over the rows
/// (the replies are grouped by the note they answer first), so a long review costs its length.
fn edit_list(rows: impl IntoIterator<Item = NoteRow>) -> Vec<Note> {
    let (notes, answers): (Vec<NoteRow>, Vec<NoteRow>) =
        rows.into_iter().partition(|row| row.reply_to.is_none());
    let mut replies: HashMap<NoteId, Vec<Reply>> = HashMap::new();
    for answer in answers {
        if let Some(note) = answer.reply_to {
            replies.entry(note).or_default().push(reply(answer));
        }
    }
    notes
        .into_iter()
        .map(|n| Note {
            id: n.id,
            replies: replies.remove(&n.id).unwrap_or_default(),
            reviewer: Reviewer {
                name: n.reviewer_name,
                owner: n.by_owner,
            },
            text: n.text,
            seconds: n.seconds,
            timecode: timecode(n.seconds),
            resolved: n.resolved_at.is_some(),
            resolved_time: n.resolved_at,
            insert_time: n.created_at,
        })
        .collect()
}

fn review(state: &AppState, row: ReviewRow, notes: Vec<NoteRow>) -> Review {
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
        close_time: row.closed_at,
        notes: edit_list(notes),
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
    let row = reviews::create(&state.db, caller.user_id, caller.token_id, file.id, &title).await?;
    Ok(axum::Json(review(&state, row, Vec::new())))
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
    let mut notes: HashMap<ReviewId, Vec<NoteRow>> = HashMap::new();
    for note in reviews::notes(&state.db, &ids).await? {
        notes.entry(note.review_id).or_default().push(note);
    }
    Ok(axum::Json(Reviews {
        reviews: rows
            .into_iter()
            .map(|row| {
                let own = notes.remove(&row.id).unwrap_or_default();
                review(&state, row, own)
            })
            .collect(),
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
    Ok(axum::Json(reply(row)))
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

fn note_not_found() -> ApiError {
    ApiError::not_found("note_not_found", "no note on a review of yours has that noteId")
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, Utc};
    use drive_core::db::reviews::NoteRow;
    use drive_core::id::{NoteId, ReviewId};

    use super::{edit_list, timecode};

    #[test]
    fn the_edit_list_puts_each_reply_under_its_note_in_the_order_given() {
        let review = ReviewId::random();
        let start = Utc::now();
        let row = |n: i64, seconds: f64, reply_to: Option<NoteId>| NoteRow {
            id: NoteId::random(),
            review_id: review,
            reply_to,
            reviewer_name: format!("r{n}"),
            by_owner: false,
            text: format!("t{n}"),
            seconds,
            resolved_at: None,
            created_at: start + TimeDelta::seconds(n),
        };
        // As the queries give them: the timeline, then the time of writing.
        let early = row(1, 0.5, None);
        let late = row(0, 2.0, None);
        let rows = vec![
            early.clone(),
            row(3, 0.5, Some(early.id)),
            late.clone(),
            row(2, 2.0, Some(late.id)),
            row(4, 2.0, Some(late.id)),
        ];
        let list = edit_list(rows);
        let shape: Vec<(&str, Vec<&str>)> = list
            .iter()
            .map(|n| {
                (
                    n.text.as_str(),
                    n.replies.iter().map(|r| r.text.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(shape, [("t1", vec!["t3"]), ("t0", vec!["t2", "t4"])]);
    }

    #[test]
    fn timecodes_are_hours_minutes_seconds_and_milliseconds() {
        assert_eq!(timecode(0.0), "00:00:00.000");
        assert_eq!(timecode(83.4567), "00:01:23.457");
        assert_eq!(timecode(3723.5), "01:02:03.500");
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloseReviewInput {
    review_id: ReviewId,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClosedReview {
    id: ReviewId,
    close_time: DateTime<Utc>,
}

/// Close a review's link: its page answers that it is closed and takes no more notes; its
/// notes stay in `/select-file-reviews`. Closing a closed review answers when it closed.
#[utoipa::path(post, path = "/close-file-review", tag = "reviews", request_body = CloseReviewInput,
    responses((status = 200, body = ClosedReview)))]
async fn close_file_review(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CloseReviewInput>,
) -> ApiResult<axum::Json<ClosedReview>> {
    let close_time = reviews::close(&state.db, caller.user_id, input.review_id)
        .await?
        .ok_or_else(|| ApiError::not_found("review_not_found", "no review of yours has that id"))?;
    Ok(axum::Json(ClosedReview {
        id: input.review_id,
        close_time,
    }))
}
