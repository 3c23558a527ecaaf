//! Tags on files, and file descriptions.

use crate::id::{FileId, TagId, UserId};
use sqlx::{PgConnection, PgPool};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TagRow {
    pub id: TagId,
    pub text: String,
}

/// The caller's tags of these names (case-insensitive), making the missing ones in the case
/// given; in the order of `names`, each once.
pub async fn ensure(
    conn: &mut PgConnection,
    user_id: UserId,
    names: &[String],
) -> Result<Vec<TagRow>, sqlx::Error> {
    sqlx::query(
        "insert into tags (id, user_id, text)
         select gen_random_uuid(), $1, name from unnest($2::text[]) as name
         on conflict (user_id, lower(text)) do nothing",
    )
    .bind(user_id)
    .bind(names)
    .execute(&mut *conn)
    .await?;
    find(conn, user_id, names).await
}

/// The caller's existing tags of these names (case-insensitive), in the order of `names`.
pub async fn find(
    conn: &mut PgConnection,
    user_id: UserId,
    names: &[String],
) -> Result<Vec<TagRow>, sqlx::Error> {
    sqlx::query_as(
        "select t.id, t.text
         from unnest($2::text[]) with ordinality as wanted (name, n)
         join tags t on t.user_id = $1 and lower(t.text) = lower(wanted.name)
         group by t.id, t.text
         order by min(wanted.n)",
    )
    .bind(user_id)
    .bind(names)
    .fetch_all(conn)
    .await
}

pub async fn find_owned(pool: &PgPool, user_id: UserId, id: TagId) -> Result<Option<TagRow>, sqlx::Error> {
    sqlx::query_as("select id, text from tags where id = $1 and user_id = $2")
        .bind(id)
        .bind(user_id)
        .fetch_optional(pool)
        .await
}

/// The caller's files among `file_ids` (derivatives aside), trashed or not.
pub async fn owned_files(
    conn: &mut PgConnection,
    user_id: UserId,
    file_ids: &[FileId],
) -> Result<Vec<FileId>, sqlx::Error> {
    sqlx::query_scalar(
        "select id from files where user_id = $1 and id = any($2) and derivative_of is null order by id",
    )
    .bind(user_id)
    .bind(file_ids)
    .fetch_all(conn)
    .await
}

/// Puts every tag on every file (`add`) or takes it off; files and tags must be the caller's.
pub async fn apply(
    conn: &mut PgConnection,
    files: &[FileId],
    tags: &[TagId],
    add: bool,
) -> Result<(), sqlx::Error> {
    let sql = if add {
        "insert into file_tags (file_id, tag_id)
         select f, t from unnest($1::uuid[]) as f cross join unnest($2::uuid[]) as t
         on conflict do nothing"
    } else {
        "delete from file_tags where file_id = any($1) and tag_id = any($2)"
    };
    sqlx::query(sql).bind(files).bind(tags).execute(conn).await?;
    Ok(())
}

/// Sets (or with `None` clears) one of the caller's files' description; false when the
/// caller has no such file.
pub async fn set_description(
    pool: &PgPool,
    user_id: UserId,
    file_id: FileId,
    description: Option<&str>,
) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query(
        "update files set description = $3 where id = $1 and user_id = $2 and derivative_of is null",
    )
    .bind(file_id)
    .bind(user_id)
    .bind(description)
    .execute(pool)
    .await?
    .rows_affected()
        == 1)
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TagListing {
    pub id: TagId,
    pub text: String,
    /// Files carrying it, not trashed.
    pub file_count: i64,
}

/// The caller's tags by name.
pub async fn list(pool: &PgPool, user_id: UserId) -> Result<Vec<TagListing>, sqlx::Error> {
    sqlx::query_as(
        "select t.id, t.text,
                (select count(*) from file_tags ft join files f on f.id = ft.file_id
                 where ft.tag_id = t.id and f.trashed_at is null) as file_count
         from tags t where t.user_id = $1
         order by lower(t.text)",
    )
    .bind(user_id)
    .fetch_all(pool)
    .await
}

/// Deletes one of the caller's tags, taking it off every file; false when it has no such tag.
pub async fn delete(pool: &PgPool, user_id: UserId, id: TagId) -> Result<bool, sqlx::Error> {
    let deleted = sqlx::query("delete from tags where id = $1 and user_id = $2")
        .bind(id)
        .bind(user_id)
        .execute(pool)
        .await?;
    Ok(deleted.rows_affected() == 1)
}
