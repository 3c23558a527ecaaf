//! Moments: what was said, seen or written inside a file, stored by a readForSearch job (through
//! its supervisor) and found by `/search-files`'s `query`. See the `moments` migration.

use sqlx::PgPool;

use crate::id::{FileId, UserId};
pub use drive_domain::moment::{EntryType, Said};

/// A moment read from a file, with its embedding (little-endian f32 bytes, see `drive-embed`).
#[derive(Debug, Clone)]
pub struct NewMoment {
    pub entry_type: EntryType,
    pub text: String,
    pub at: Option<f64>,
    pub until: Option<f64>,
    pub page: Option<i32>,
    pub embedding: Vec<u8>,
}

/// Replaces the moments of `file_id` (the caller's) with `moments` and marks the file read, in
/// one transaction: a search sees the old moments or the new ones, never a mix.
pub async fn replace(
    pool: &PgPool,
    user_id: UserId,
    file_id: FileId,
    moments: &[NewMoment],
) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "insert into file_readings (file_id, user_id, state, error, moment_count, read_at)
         values ($1, $2, 'read', null, $3, now())
         on conflict (file_id) do update
         set state = 'read', error = null, moment_count = $3, read_at = now()",
    )
    .bind(file_id)
    .bind(user_id)
    .bind(moments.len() as i32)
    .execute(&mut *tx)
    .await?;
    sqlx::query("delete from moments where file_id = $1")
        .bind(file_id)
        .execute(&mut *tx)
        .await?;
    let column = |f: fn(&NewMoment) -> String| moments.iter().map(f).collect::<Vec<_>>();
    sqlx::query(
        "insert into moments (file_id, user_id, entry_type, text, at, until, page, embedding)
         select $1, $2, m.entry_type, m.text, m.at, m.until, m.page, m.embedding
         from unnest($3::text[], $4::text[], $5::float8[], $6::float8[], $7::int4[], $8::bytea[])
              as m (entry_type, text, at, until, page, embedding)",
    )
    .bind(file_id)
    .bind(user_id)
    .bind(column(|m| m.entry_type.as_str().to_string()))
    .bind(column(|m| m.text.clone()))
    .bind(moments.iter().map(|m| m.at).collect::<Vec<_>>())
    .bind(moments.iter().map(|m| m.until).collect::<Vec<_>>())
    .bind(moments.iter().map(|m| m.page).collect::<Vec<_>>())
    .bind(moments.iter().map(|m| m.embedding.clone()).collect::<Vec<_>>())
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

/// Records that `file_id` (the caller's) could not be read, and why; its earlier moments go.
pub async fn unreadable(
    pool: &PgPool,
    user_id: UserId,
    file_id: FileId,
    why: &str,
) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query("delete from moments where file_id = $1")
        .bind(file_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "insert into file_readings (file_id, user_id, state, error, moment_count, read_at)
         values ($1, $2, 'failed', $3, 0, now())
         on conflict (file_id) do update
         set state = 'failed', error = $3, moment_count = 0, read_at = now()",
    )
    .bind(file_id)
    .bind(user_id)
    .bind(why)
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

/// `query` as PostgreSQL reads it for matching words (web-search syntax, English stemming),
/// in the text form `drive-words` matches the moments' `words` with; empty when only stop words
/// are left.
pub async fn words_query(pool: &PgPool, query: &str) -> Result<String, sqlx::Error> {
    sqlx::query_scalar("select websearch_to_tsquery('english', $1)::text")
        .bind(query)
        .fetch_one(pool)
        .await
}

/// Changes whenever one of the account's moments is added or removed (see the migration).
pub async fn generation(pool: &PgPool, user_id: UserId) -> Result<i64, sqlx::Error> {
    let found: Option<i64> =
        sqlx::query_scalar("select generation from moment_generations where user_id = $1")
            .bind(user_id)
            .fetch_optional(pool)
            .await?;
    Ok(found.unwrap_or(0))
}

/// The ids of every moment of the account, ascending: moments are only ever added or removed,
/// never changed, so comparing id lists tells what a copy in memory lacks and what it has to drop.
pub async fn ids(pool: &PgPool, user_id: UserId) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar("select id from moments where user_id = $1 order by id")
        .bind(user_id)
        .fetch_all(pool)
        .await
}

/// What a moment is searched by: its embedding and its words (the `tsvector`'s text).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Searchable {
    pub id: i64,
    pub file_id: FileId,
    pub embedding: Vec<u8>,
    pub words: String,
}

/// The embeddings and words of the account's moments `ids`.
pub async fn searchable(pool: &PgPool, user_id: UserId, ids: &[i64]) -> Result<Vec<Searchable>, sqlx::Error> {
    sqlx::query_as(
        "select id, file_id, embedding, words::text as words from moments where user_id = $1 and id = any($2)",
    )
        .bind(user_id)
        .bind(ids)
        .fetch_all(pool)
        .await
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Moment {
    pub id: i64,
    pub file_id: FileId,
    pub entry_type: EntryType,
    pub text: String,
    pub at: Option<f64>,
    pub until: Option<f64>,
    pub page: Option<i32>,
}

/// The moments `ids` of `accounts` that are in library files (not trashed, not derivatives), in
/// no particular order.
pub async fn found(pool: &PgPool, accounts: &[UserId], ids: &[i64]) -> Result<Vec<Moment>, sqlx::Error> {
    sqlx::query_as(
        "select m.id, m.file_id, m.entry_type, m.text, m.at, m.until, m.page
         from moments m join files f on f.id = m.file_id
         where m.user_id = any($1) and m.id = any($2) and f.trashed_at is null and f.derivative_of is null",
    )
    .bind(accounts)
    .bind(ids)
    .fetch_all(pool)
    .await
}

/// Which of `files` (the caller's) have been read for searching, whether or not anything was
/// found in them.
pub async fn read_files(
    pool: &PgPool,
    user_id: UserId,
    files: &[FileId],
) -> Result<Vec<FileId>, sqlx::Error> {
    sqlx::query_scalar(
        "select file_id from file_readings where user_id = $1 and file_id = any($2) and state = 'read'",
    )
    .bind(user_id)
    .bind(files)
    .fetch_all(pool)
    .await
}

/// What is said in `file_id` (whoever reads it: the caller has checked it may), in order of
/// time: the stretches that end after `from` and start before `to` (all of them when both are
/// `None`).
pub async fn said(
    pool: &PgPool,
    file_id: FileId,
    from: Option<f64>,
    to: Option<f64>,
) -> Result<Vec<Said>, sqlx::Error> {
    sqlx::query_as(
        "select at, until, text from moments
         where file_id = $1 and entry_type = 'speech' and at is not null and until is not null
           and ($2::float8 is null or until > $2) and ($3::float8 is null or at < $3)
         order by at, id",
    )
    .bind(file_id)
    .bind(from)
    .bind(to)
    .fetch_all(pool)
    .await
}
