//! Folders and where files sit in them.

use crate::db::{files, locks, rules};
use crate::id::{FileId, FolderId, JobId, UserId};
use sqlx::{PgConnection, PgPool};

use crate::db::files::FileRow;
use crate::file::stem;
use crate::folder::{FolderPath, MAX_DEPTH, stored_depth};
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

/// A file a move took, and the folder it was in (`None`: the top).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct MovedFile {
    #[sqlx(flatten)]
    pub file: FileRow,
    pub from_folder_id: Option<FolderId>,
}

/// Puts files in `folder` (`None`: the top) and fires the rules of the folder on those that
/// were elsewhere; answers the files moved and the jobs the rules queued.
pub async fn move_files(
    conn: &mut PgConnection,
    user_id: UserId,
    source: MoveSource<'_>,
    folder: Option<FolderId>,
) -> Result<(Vec<MovedFile>, Vec<JobId>), sqlx::Error> {
    let (ids, from) = match source {
        MoveSource::Files(ids) => (Some(ids), None),
        MoveSource::Folder(id) => (None, Some(id)),
    };
    let moved: Vec<MovedFile> = sqlx::query_as(&format!(
        "update files f set folder_id = $4
         from files was
         where was.id = f.id and f.user_id = $1 and f.derivative_of is null
           and ($2::uuid[] is null or f.id = any($2))
           and ($3::uuid is null or f.folder_id = $3)
         returning {}, was.folder_id as from_folder_id",
        files::COLUMNS_OF_F
    ))
    .bind(user_id)
    .bind(ids)
    .bind(from)
    .bind(folder)
    .fetch_all(&mut *conn)
    .await?;
    let mut queued = Vec::new();
    // A trashed file moved with its folder's files fires nothing.
    for moved in moved
        .iter()
        .filter(|m| m.from_folder_id != folder && m.file.trashed_at.is_none())
    {
        queued.extend(rules::fire(&mut *conn, &moved.file, None).await?);
    }
    Ok((moved, queued))
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

/// Whether a file in the folder (`None`: the top), not trashed and not `except`, is called
/// `name`, case aside. The caller holds the folder's names ([`locks::lock_names`]).
pub async fn name_taken(
    conn: &mut PgConnection,
    user_id: UserId,
    folder_id: Option<FolderId>,
    name: &str,
    except: Option<FileId>,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        "select exists (select 1 from files
                        where user_id = $1 and folder_id is not distinct from $2 and trashed_at is null
                          and derivative_of is null and lower(file_name) = lower($3)
                          and id is distinct from $4)",
    )
    .bind(user_id)
    .bind(folder_id)
    .bind(name)
    .bind(except)
    .fetch_one(conn)
    .await
}

/// Why a folder cannot move where it was asked to.
#[derive(Debug, thiserror::Error)]
pub enum FolderMoveError {
    #[error("a folder cannot move into itself or a folder inside it")]
    IntoItself,
    #[error("the folders inside it would be more than {MAX_DEPTH} levels deep there")]
    TooDeep,
    /// The caller already has a folder at one of the paths the move would take.
    #[error("{0} is taken: a folder is already there")]
    Taken(String),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// Moves `folder` and everything in it to `to` (a rename is a move to a path with another last
/// name), making the folders above `to` on the way; answers it as it now stands. Its id, and so
/// its files, rules and requests, stay; only paths change.
pub async fn move_folder(
    conn: &mut PgConnection,
    user_id: UserId,
    folder: &FolderRow,
    to: &FolderPath,
) -> Result<FolderRow, FolderMoveError> {
    let new_path = to.stored();
    if new_path == folder.path {
        return Ok(folder.clone());
    }
    if to.is_top() || within(&new_path, &folder.path) {
        return Err(FolderMoveError::IntoItself);
    }
    locks::lock_folders(&mut *conn, user_id).await?;
    let deepest: i32 = sqlx::query_scalar(
        "select coalesce(max(length(path) - length(replace(path, '/', ''))), 0)::int
         from folders where user_id = $1 and path_within(path, $2)",
    )
    .bind(user_id)
    .bind(&folder.path)
    .fetch_one(&mut *conn)
    .await?;
    if deepest as usize - stored_depth(&folder.path) + to.depth() > MAX_DEPTH {
        return Err(FolderMoveError::TooDeep);
    }
    let taken: Option<String> = sqlx::query_scalar(
        "select other.path from folders moving
         join folders other on other.user_id = moving.user_id
                           and other.path = $3 || substr(moving.path, length($2) + 1)
         where moving.user_id = $1 and path_within(moving.path, $2) and not path_within(other.path, $2)
         order by other.path limit 1",
    )
    .bind(user_id)
    .bind(&folder.path)
    .bind(&new_path)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some(path) = taken {
        return Err(FolderMoveError::Taken(path));
    }
    let parent = ensure(&mut *conn, user_id, &to.parent()).await?;
    sqlx::query(
        "update folders set path = $3 || substr(path, length($2) + 1),
                            parent_id = case when id = $4 then $5 else parent_id end
         where user_id = $1 and path_within(path, $2)",
    )
    .bind(user_id)
    .bind(&folder.path)
    .bind(&new_path)
    .bind(folder.id)
    .bind(parent.map(|p| p.id))
    .execute(&mut *conn)
    .await?;
    Ok(FolderRow {
        id: folder.id,
        path: new_path,
    })
}

/// Whether stored path `path` is `folder` or inside it (as SQL's `path_within`).
fn within(path: &str, folder: &str) -> bool {
    path == folder
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The title of a file request that drops into `folder` or a folder inside it, if any: such a
/// folder is not deleted from under its public link.
pub async fn request_landing_in(
    conn: &mut PgConnection,
    user_id: UserId,
    folder: &FolderRow,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "select r.title from file_requests r join folders d on d.id = r.folder_id
         where r.user_id = $1 and path_within(d.path, $2)
         order by r.created_at limit 1",
    )
    .bind(user_id)
    .bind(&folder.path)
    .fetch_optional(conn)
    .await
}

/// The caller's public files, not trashed, in `folder` and the folders inside it: their bytes
/// leave the public bucket before the folder is deleted.
pub async fn public_files_within(
    conn: &mut PgConnection,
    user_id: UserId,
    folder: &FolderRow,
) -> Result<Vec<FileId>, sqlx::Error> {
    sqlx::query_scalar(
        "select f.id from files f join folders d on d.id = f.folder_id
         where f.user_id = $1 and path_within(d.path, $2) and f.bucket = 'public'
           and f.trashed_at is null and f.derivative_of is null",
    )
    .bind(user_id)
    .bind(&folder.path)
    .fetch_all(conn)
    .await
}

/// Deletes `folder` and the folders inside it. Their files go to the trash (those trashed
/// already stay there), each remembering the path it sat at so a restore puts it back; answers
/// the files it trashed. Their rules go with them. The caller has taken every public file
/// out of the public bucket first ([`public_files_within`]); one still there (switched since)
/// is trashed with the others by the caller's next try, so none is left public: `None`.
pub async fn delete_folder(
    conn: &mut PgConnection,
    user_id: UserId,
    folder: &FolderRow,
) -> Result<Option<Vec<FileRow>>, sqlx::Error> {
    locks::lock_folders(&mut *conn, user_id).await?;
    if !public_files_within(&mut *conn, user_id, folder).await?.is_empty() {
        return Ok(None);
    }
    let trashed: Vec<FileRow> = sqlx::query_as(&format!(
        "with marked as (
             update files f set trashed_from_path = d.path,
                                trashed_at = coalesce(f.trashed_at, now())
             from folders d
             where d.id = f.folder_id and f.user_id = $1 and d.user_id = $1
               and path_within(d.path, $2) and f.derivative_of is null
             returning f.*, f.trashed_at = now() as newly
         )
         select {} from marked where newly",
        files::COLUMNS
    ))
    .bind(user_id)
    .bind(&folder.path)
    .fetch_all(&mut *conn)
    .await?;
    sqlx::query("delete from folders where user_id = $1 and path_within(path, $2)")
        .bind(user_id)
        .bind(&folder.path)
        .execute(&mut *conn)
        .await?;
    Ok(Some(trashed))
}

/// Puts those of `ids` that were trashed with their deleted folder back at that folder's path,
/// made again, before they are restored.
pub async fn restore_paths(
    conn: &mut PgConnection,
    user_id: UserId,
    ids: &[FileId],
) -> Result<(), sqlx::Error> {
    let paths: Vec<String> = sqlx::query_scalar(
        "select distinct trashed_from_path from files
         where user_id = $1 and id = any($2) and trashed_at is not null and trashed_from_path is not null",
    )
    .bind(user_id)
    .bind(ids)
    .fetch_all(&mut *conn)
    .await?;
    for stored in paths {
        // A stored path was a FolderPath when it was made.
        let Ok(path) = FolderPath::try_from(stored.clone()) else {
            continue;
        };
        let folder = ensure(&mut *conn, user_id, &path).await?;
        sqlx::query(
            "update files set folder_id = $3, trashed_from_path = null
             where user_id = $1 and id = any($2) and trashed_from_path = $4 and trashed_at is not null",
        )
        .bind(user_id)
        .bind(ids)
        .bind(folder.map(|f| f.id))
        .bind(&stored)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
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
