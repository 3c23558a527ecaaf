//! Folders and where files sit in them.

use crate::db::{files, locks, rules};
use crate::id::{FileId, FolderId, JobId, UserId};
use sqlx::{PgConnection, PgPool};

use crate::file::stem;
use crate::folder::FolderPath;
use drive_domain::file::{first_free, free_variant};
pub use drive_domain::rows::FolderRow;

/// The folder at `path`, made with every folder above it when missing; `None` for the top.
/// Concurrent calls for the same path agree on one folder (`folders_one_per_path`).
pub async fn ensure(
    conn: &mut PgConnection,
    user_id: UserId,
    path: &FolderPath,
) -> Result<Option<FolderRow>, sqlx::Error> {
    let mut parent: Option<FolderRow> = None;
    for level in path.lineage() {
        sqlx::query(
            "insert into folders (id, user_id, path, parent_id) values ($1, $2, $3, $4)
             on conflict (user_id, path) do nothing",
        )
        .bind(FolderId::random())
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
pub async fn find_owned(
    pool: &PgPool,
    user_id: UserId,
    id: FolderId,
) -> Result<Option<FolderRow>, sqlx::Error> {
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
    Files(&'a [FileId]),
    /// Every file of the caller's in this folder, trashed ones included.
    Folder(FolderId),
}

/// Puts files in `folder` (`None`: the top) and fires the rules of the folder on those that
/// were elsewhere; answers the ids moved and the jobs the rules queued.
pub async fn move_files(
    conn: &mut PgConnection,
    user_id: UserId,
    source: MoveSource<'_>,
    folder: Option<FolderId>,
) -> Result<(Vec<FileId>, Vec<JobId>), sqlx::Error> {
    let (ids, from) = match source {
        MoveSource::Files(ids) => (Some(ids), None),
        MoveSource::Folder(id) => (None, Some(id)),
    };
    let moved: Vec<(FileId, bool)> = sqlx::query_as(
        "update files f set folder_id = $4
         from files was
         where was.id = f.id and f.user_id = $1 and f.derivative_of is null
           and ($2::uuid[] is null or f.id = any($2))
           and ($3::uuid is null or f.folder_id = $3)
         returning f.id, was.folder_id is distinct from $4",
    )
    .bind(user_id)
    .bind(ids)
    .bind(from)
    .bind(folder)
    .fetch_all(&mut *conn)
    .await?;
    let arrived: Vec<FileId> = moved
        .iter()
        .filter(|(_, arrived)| *arrived)
        .map(|(id, _)| *id)
        .collect();
    let mut queued = Vec::new();
    for file in files::find_many(&mut *conn, user_id, &arrived, false).await? {
        queued.extend(rules::fire(&mut *conn, &file, None).await?);
    }
    Ok((moved.into_iter().map(|(id, _)| id).collect(), queued))
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct FolderListing {
    pub id: FolderId,
    pub path: String,
    /// Files directly in it, not trashed.
    pub file_count: i64,
}

/// The caller's folders by path.
pub async fn list(pool: &PgPool, user_id: UserId) -> Result<Vec<FolderListing>, sqlx::Error> {
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

/// The folder holding `folder_id`; `None` for a folder at the top.
pub async fn parent_of(pool: &PgPool, folder_id: FolderId) -> Result<Option<FolderId>, sqlx::Error> {
    sqlx::query_scalar("select parent_id from folders where id = $1")
        .bind(folder_id)
        .fetch_optional(pool)
        .await
        .map(Option::flatten)
}

/// The folder's stored path (`/a/b`), or `None` for the top.
pub async fn path_of(pool: &PgPool, folder_id: Option<FolderId>) -> Result<Option<String>, sqlx::Error> {
    match folder_id {
        None => Ok(None),
        Some(id) => {
            sqlx::query_scalar("select path from folders where id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await
        }
    }
}

/// The ids of the library files (not trashed, not derivatives) in `folder` and every folder
/// inside it, ordered by folder path then name so a listing of them reads like a tree.
pub async fn files_within(
    pool: &PgPool,
    user_id: UserId,
    folder: &FolderRow,
) -> Result<Vec<FileId>, sqlx::Error> {
    sqlx::query_scalar(
        "select f.id from files f join folders d on d.id = f.folder_id
         where f.user_id = $1 and d.user_id = $1 and path_within(d.path, $2)
           and f.trashed_at is null and f.derivative_of is null
         order by d.path, f.file_name, f.id",
    )
    .bind(user_id)
    .bind(&folder.path)
    .fetch_all(pool)
    .await
}

/// `name`, or the first of `name (2)`, `name (3)`... (before the extension) that no file in
/// the folder (`None`: the top) is called, so a job's result never takes an input's name.
/// Holds the folder's names until the caller's transaction ends, so that two results saved at
/// once (two workers, two generations) do not both take the free name: the caller records the
/// file in that transaction.
pub async fn free_file_name(
    conn: &mut PgConnection,
    user_id: UserId,
    folder_id: Option<FolderId>,
    name: &str,
) -> Result<String, sqlx::Error> {
    locks::lock_names(&mut *conn, user_id, folder_id).await?;
    let taken: Vec<String> = sqlx::query_scalar(
        "select file_name from files
         where user_id = $1 and folder_id is not distinct from $2 and trashed_at is null
           and lower(file_name) like lower($3) || '%'",
    )
    .bind(user_id)
    .bind(folder_id)
    .bind(like_prefix(stem(name)))
    .fetch_all(conn)
    .await?;
    Ok(free_variant(name, |candidate| {
        taken.iter().any(|t| t.eq_ignore_ascii_case(candidate))
    }))
}

/// `path`, or the first of `path (2)`, `path (3)`... that the caller has no folder at.
pub async fn free_folder_path(pool: &PgPool, user_id: UserId, path: &str) -> Result<String, sqlx::Error> {
    let taken: Vec<String> = sqlx::query_scalar(
        "select path from folders where user_id = $1 and lower(path) like lower($2) || '%'",
    )
    .bind(user_id)
    .bind(like_prefix(path))
    .fetch_all(pool)
    .await?;
    Ok(first_free(path, "", |candidate| {
        taken.iter().any(|t| t.eq_ignore_ascii_case(candidate))
    }))
}

/// `s` with LIKE's wildcards escaped.
fn like_prefix(s: &str) -> String {
    s.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}
