//! Folders and where files sit in them.

use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::folder::FolderPath;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct FolderRow {
    pub id: Uuid,
    /// Stored form, `/a/b`.
    pub path: String,
}

/// The folder at `path`, made with every folder above it when missing; `None` for the top.
/// Concurrent calls for the same path agree on one folder (`folders_one_per_path`).
pub async fn ensure(
    conn: &mut PgConnection,
    user_id: Uuid,
    path: &FolderPath,
) -> Result<Option<FolderRow>, sqlx::Error> {
    let mut parent: Option<FolderRow> = None;
    for level in path.lineage() {
        sqlx::query(
            "insert into folders (id, user_id, path, parent_id) values ($1, $2, $3, $4)
             on conflict (user_id, path) do nothing",
        )
        .bind(Uuid::new_v4())
        .bind(user_id)
        .bind(&level)
        .bind(parent.as_ref().map(|p| p.id))
        .execute(&mut *conn)
        .await?;
        parent = Some(
            sqlx::query_as("select id, path from folders where user_id = $1 and path = $2")
                .bind(user_id)
                .bind(&level)
                .fetch_one(&mut *conn)
                .await?,
        );
    }
    Ok(parent)
}

/// One of the caller's folders; another user's id finds nothing.
pub async fn find_owned(pool: &PgPool, user_id: Uuid, id: Uuid) -> Result<Option<FolderRow>, sqlx::Error> {
    sqlx::query_as("select id, path from folders where id = $1 and user_id = $2")
        .bind(id)
        .bind(user_id)
        .fetch_optional(pool)
        .await
}

/// Which files a move takes.
#[derive(Debug, Clone, Copy)]
pub enum MoveSource<'a> {
    /// These of the caller's files (not derivatives).
    Files(&'a [Uuid]),
    /// Every file of the caller's in this folder, trashed ones included.
    Folder(Uuid),
}

/// Puts files in `folder` (`None`: the top); answers the ids moved.
pub async fn move_files(
    conn: &mut PgConnection,
    user_id: Uuid,
    source: MoveSource<'_>,
    folder: Option<Uuid>,
) -> Result<Vec<Uuid>, sqlx::Error> {
    let (ids, from) = match source {
        MoveSource::Files(ids) => (Some(ids), None),
        MoveSource::Folder(id) => (None, Some(id)),
    };
    sqlx::query_scalar(
        "update files set folder_id = $4
         where user_id = $1 and derivative_of is null
           and ($2::uuid[] is null or id = any($2))
           and ($3::uuid is null or folder_id = $3)
         returning id",
    )
    .bind(user_id)
    .bind(ids)
    .bind(from)
    .bind(folder)
    .fetch_all(conn)
    .await
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct FolderListing {
    pub id: Uuid,
    pub path: String,
    /// Files directly in it, not trashed.
    pub file_count: i64,
}

/// The caller's folders by path.
pub async fn list(pool: &PgPool, user_id: Uuid) -> Result<Vec<FolderListing>, sqlx::Error> {
    sqlx::query_as(
        "select d.id, d.path,
                (select count(*) from files f where f.folder_id = d.id and f.trashed_at is null) as file_count
         from folders d where d.user_id = $1
         order by d.path",
    )
    .bind(user_id)
    .fetch_all(pool)
    .await
}
