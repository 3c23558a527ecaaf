//! The presigned forms issued for each key (`upload_forms`). A signed form cannot be withdrawn:
//! it writes its key until it expires, before the insert that records its object and after. So
//! the drive remembers, per key, the size every form was issued for (a key keeps one size
//! while any form for it can write), until when the last one can write, and the ETag of the
//! object when a file was recorded under the key, to tell a rewrite when it sees one
//! ([`crate::rewrites`]). Rows are forgotten by the sweep once their last form has expired.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use crate::id::UserId;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct FormRow {
    pub object_key: String,
    pub user_id: UserId,
    pub file_size: i64,
    pub form_until: DateTime<Utc>,
    pub recorded_etag: Option<String>,
}

/// The size forms were issued for under `object_key`, if any was.
pub async fn issued_size(conn: &mut PgConnection, object_key: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("select file_size from upload_forms where object_key = $1")
        .bind(object_key)
        .fetch_optional(conn)
        .await
}

/// Remembers a form issued for `object_key` of `file_size` bytes, writing until `until`. The
/// caller checked the size is the key's ([`issued_size`]).
pub async fn issue(
    conn: &mut PgConnection,
    user_id: UserId,
    object_key: &str,
    file_size: i64,
    until: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into upload_forms (object_key, user_id, file_size, form_until)
         values ($1, $2, $3, $4)
         on conflict (object_key) do update set form_until = greatest(upload_forms.form_until, excluded.form_until)",
    )
    .bind(object_key)
    .bind(user_id)
    .bind(file_size)
    .bind(until)
    .execute(conn)
    .await?;
    Ok(())
}

/// The form row of `object_key`, if a form was ever issued for it and not yet forgotten.
pub async fn find(conn: &mut PgConnection, object_key: &str) -> Result<Option<FormRow>, sqlx::Error> {
    sqlx::query_as(
        "select object_key, user_id, file_size, form_until, recorded_etag
         from upload_forms where object_key = $1",
    )
    .bind(object_key)
    .fetch_optional(conn)
    .await
}

/// Whether a form was issued for `object_key` and not yet forgotten: the cheap question asked
/// before any link to a file's bytes is signed.
pub async fn watched<'e>(db: impl sqlx::PgExecutor<'e>, object_key: &str) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("select exists (select 1 from upload_forms where object_key = $1)")
        .bind(object_key)
        .fetch_one(db)
        .await
}

/// Every key with forms remembered, those whose last form expired first.
pub async fn all_keys<'e>(db: impl sqlx::PgExecutor<'e>) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar("select object_key from upload_forms order by form_until")
        .fetch_all(db)
        .await
}

/// Records the ETag of what is stored under `object_key` now that a file records it (or
/// follows a rewrite); does nothing for a key no form was issued for.
pub async fn recorded(conn: &mut PgConnection, object_key: &str, etag: &str) -> Result<(), sqlx::Error> {
    sqlx::query("update upload_forms set recorded_etag = $2 where object_key = $1")
        .bind(object_key)
        .bind(etag)
        .execute(conn)
        .await?;
    Ok(())
}

/// Forgets `object_key`'s forms: the last one has expired and nothing can write the key again.
pub async fn forget(conn: &mut PgConnection, object_key: &str) -> Result<(), sqlx::Error> {
    sqlx::query("delete from upload_forms where object_key = $1")
        .bind(object_key)
        .execute(conn)
        .await?;
    Ok(())
}
