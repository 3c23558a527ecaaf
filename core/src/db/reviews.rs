//! Reviews: a link to watch one of the owner's videos or tracks and leave notes at its
//! moments, and replies to them. A review goes with its file.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::file::FileKind;
use crate::id::{FileId, NoteId, ReviewId, TokenId, UserId};
use crate::storage::Bucket;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ReviewRow {
    pub id: ReviewId,
    pub user_id: UserId,
    pub title: String,
    pub created_at: DateTime<Utc>,
    pub file_id: FileId,
    pub file_name: String,
    #[sqlx(try_from = "String")]
    pub kind: FileKind,
    pub bucket: Bucket,
    pub object_key: String,
    pub trashed_at: Option<DateTime<Utc>>,
    /// When the API token that made it was revoked: its link no longer opens it.
    pub closed_at: Option<DateTime<Utc>>,
}

const REVIEW_COLUMNS: &str = "r.id, r.user_id, r.title, r.created_at, f.id as file_id, f.file_name, f.kind, \
                              f.bucket, f.object_key, f.trashed_at, r.closed_at";

/// Makes a review of `file_id`, by the API token `token_id` (it closes when that is revoked).
pub async fn create(
    pool: &PgPool,
    user_id: UserId,
    token_id: Option<TokenId>,
    file_id: FileId,
    title: &str,
) -> Result<ReviewRow, sqlx::Error> {
    let id: ReviewId = sqlx::query_scalar(
        "insert into file_reviews (id, user_id, file_id, title, api_token_id) values ($1, $2, $3, $4, $5)
         returning id",
    )
    .bind(ReviewId::random())
    .bind(user_id)
    .bind(file_id)
    .bind(title)
    .bind(token_id)
    .fetch_one(pool)
    .await?;
    Ok(find(pool, id).await?.expect("the review just made"))
}

/// Any review, for its page and its reviewers (who have no account).
pub async fn find<'e>(
    conn: impl sqlx::PgExecutor<'e>,
    id: ReviewId,
) -> Result<Option<ReviewRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {REVIEW_COLUMNS} from file_reviews r join files f on f.id = r.file_id where r.id = $1"
    ))
    .bind(id)
    .fetch_optional(conn)
    .await
}

/// The caller's reviews, newest first, at most `limit`: those named (when `ids` is given), of
/// one file (when `file_id` is given).
pub async fn list(
    pool: &PgPool,
    user_id: UserId,
    ids: Option<&[ReviewId]>,
    file_id: Option<FileId>,
    limit: i64,
) -> Result<Vec<ReviewRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {REVIEW_COLUMNS} from file_reviews r join files f on f.id = r.file_id
         where r.user_id = $1 and ($2::uuid[] is null or r.id = any($2)) and ($3::uuid is null or r.file_id = $3)
         order by r.created_at desc, r.id limit $4"
    ))
    .bind(user_id)
    .bind(ids)
    .bind(file_id)
    .bind(limit)
    .fetch_all(pool)
    .await
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct NoteRow {
    pub id: NoteId,
    pub review_id: ReviewId,
    pub reply_to: Option<NoteId>,
    pub reviewer_name: String,
    pub by_owner: bool,
    pub text: String,
    pub seconds: f64,
    pub resolved_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

const NOTE_COLUMNS: &str =
    "id, review_id, reply_to, reviewer_name, by_owner, text, seconds, resolved_at, created_at";

/// The notes and replies of these reviews, in the order of the timeline (then of writing).
pub async fn notes(pool: &PgPool, review_ids: &[ReviewId]) -> Result<Vec<NoteRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {NOTE_COLUMNS} from review_notes where review_id = any($1) order by seconds, created_at, id"
    ))
    .bind(review_ids)
    .fetch_all(pool)
    .await
}

/// Up to `limit` notes (not replies) of one review in the order of the timeline (then of
/// writing), those after the note `after` when given.
pub async fn page(
    pool: &PgPool,
    review_id: ReviewId,
    after: Option<NoteId>,
    limit: i64,
) -> Result<Vec<NoteRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {NOTE_COLUMNS} from review_notes
         where review_id = $1 and reply_to is null
           and ($2::uuid is null
                or (seconds, created_at, id) > (select seconds, created_at, id from review_notes where id = $2 and review_id = $1))
         order by seconds, created_at, id
         limit $3"
    ))
    .bind(review_id)
    .bind(after)
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// The replies to these notes, oldest first.
pub async fn replies(pool: &PgPool, note_ids: &[NoteId]) -> Result<Vec<NoteRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {NOTE_COLUMNS} from review_notes where reply_to = any($1) order by created_at, id"
    ))
    .bind(note_ids)
    .fetch_all(pool)
    .await
}

/// A note or a reply being written.
#[derive(Debug, Clone)]
pub struct NewNote<'a> {
    pub review_id: ReviewId,
    /// The note answered: a reply is always to a note, never to a reply, and at its moment.
    pub reply_to: Option<NoteId>,
    pub reviewer_name: &'a str,
    pub by_owner: bool,
    pub text: &'a str,
    pub seconds: f64,
}

pub async fn add(conn: &mut PgConnection, note: &NewNote<'_>) -> Result<NoteRow, sqlx::Error> {
    sqlx::query_as(&format!(
        "insert into review_notes (id, review_id, reply_to, reviewer_name, by_owner, text, seconds)
         values ($1, $2, $3, $4, $5, $6, $7) returning {NOTE_COLUMNS}"
    ))
    .bind(NoteId::random())
    .bind(note.review_id)
    .bind(note.reply_to)
    .bind(note.reviewer_name)
    .bind(note.by_owner)
    .bind(note.text)
    .bind(note.seconds)
    .fetch_one(conn)
    .await
}

/// The most notes and replies reviewers may write on one review (the owner's replies are not
/// counted): anyone with the link writes them, and the owner's listing and every reader who
/// pages through the review reads them all.
pub const MAX_NOTES_PER_REVIEW: usize = 500;
/// The most notes and replies one reviewer name (as [`name_key`] reads it) may write on one
/// review, so one voice cannot take the whole of [`MAX_NOTES_PER_REVIEW`] by itself.
pub const MAX_NOTES_PER_REVIEWER: usize = 100;

/// What a name is, whatever its spelling: compatibility forms folded (NFKC: full-width and
/// styled letters are plain ones), lower case, letters and digits only. Two names with the
/// same key are one reviewer, for the caps and for telling a reviewer from the owner.
pub fn name_key(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    name.nfkc()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect()
}

/// Why a reviewer's note was not written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// Reviewers have written [`MAX_NOTES_PER_REVIEW`] notes and replies on the review.
    Review,
    /// This name has written [`MAX_NOTES_PER_REVIEWER`] of them.
    Reviewer,
}

/// Writes a reviewer's note or reply, unless the review or the name has written its most. The
/// counts are taken under a lock on the review held to the end of `conn`'s transaction, so
/// notes written at once cannot pass a cap together.
pub async fn add_by_reviewer(
    conn: &mut PgConnection,
    note: &NewNote<'_>,
) -> Result<Result<NoteRow, Full>, sqlx::Error> {
    // An advisory lock, not the review's row: a row lock would take a transaction id, which
    // holds back the event feed until the note's transaction ends.
    sqlx::query("select pg_advisory_xact_lock(hashtextextended($1::text, 7))")
        .bind(note.review_id)
        .execute(&mut *conn)
        .await?;
    // Never more than the cap is read, even of a review that held more before there was one.
    let names: Vec<String> = sqlx::query_scalar(
        "select reviewer_name from review_notes where review_id = $1 and not by_owner limit $2",
    )
    .bind(note.review_id)
    .bind(MAX_NOTES_PER_REVIEW as i64)
    .fetch_all(&mut *conn)
    .await?;
    if names.len() >= MAX_NOTES_PER_REVIEW {
        return Ok(Err(Full::Review));
    }
    let key = name_key(note.reviewer_name);
    if names.iter().filter(|name| name_key(name) == key).count() >= MAX_NOTES_PER_REVIEWER {
        return Ok(Err(Full::Reviewer));
    }
    add(conn, note).await.map(Ok)
}

/// A note or reply of one review, for a reply to find what it answers.
pub async fn note_of_review(
    pool: &PgPool,
    review_id: ReviewId,
    id: NoteId,
) -> Result<Option<NoteRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {NOTE_COLUMNS} from review_notes where id = $1 and review_id = $2"
    ))
    .bind(id)
    .bind(review_id)
    .fetch_optional(pool)
    .await
}

/// A note (not a reply) on one of the caller's reviews.
pub async fn owned_note(pool: &PgPool, user_id: UserId, id: NoteId) -> Result<Option<NoteRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {NOTE_COLUMNS} from review_notes
         where id = $1 and reply_to is null
           and review_id in (select id from file_reviews where user_id = $2)"
    ))
    .bind(id)
    .bind(user_id)
    .fetch_optional(pool)
    .await
}

/// Marks a note of the caller's reviews dealt with, or not; the first resolve time is kept
/// while it stays resolved.
pub async fn set_resolved(
    pool: &PgPool,
    user_id: UserId,
    id: NoteId,
    resolved: bool,
) -> Result<Option<NoteRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "update review_notes set resolved_at = case when $3 then coalesce(resolved_at, now()) end
         where id = $1 and reply_to is null
           and review_id in (select id from file_reviews where user_id = $2)
         returning {NOTE_COLUMNS}"
    ))
    .bind(id)
    .bind(user_id)
    .bind(resolved)
    .fetch_optional(pool)
    .await
}

/// Closes one of the caller's reviews: its page answers that it is closed and takes no more
/// notes; the notes stay for the owner. Answers when it closed (the first time, when closed
/// already); `None` when the caller has no such review.
pub async fn close(
    pool: &PgPool,
    user_id: UserId,
    id: ReviewId,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar(
        "update file_reviews set closed_at = coalesce(closed_at, now())
         where id = $1 and user_id = $2
         returning closed_at",
    )
    .bind(id)
    .bind(user_id)
    .fetch_optional(pool)
    .await
}

#[cfg(test)]
mod tests {
    use super::name_key;

    #[test]
    fn a_name_is_one_whatever_its_case_spacing_punctuation_or_compatibility_form() {
        let key = name_key("mary_ann");
        for spelling in ["Mary Ann", "MARY-ANN", "@mary.ann", "ＭＡＲＹ ＡＮＮ", "𝐌𝐚𝐫𝐲 𝐀𝐧𝐧"]
        {
            assert_eq!(name_key(spelling), key, "{spelling}");
        }
        assert_ne!(name_key("Mary Anne"), key);
        assert_eq!(name_key("Zoë"), name_key("ZOË"));
    }
}
