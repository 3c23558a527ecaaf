//! Sharing with people: a file, or a folder (what is in it and below it, now and later), shared
//! by its owner with another account, who may see it and never change it. Who may see a file is
//! the SQL function `shared_with` (see its migration), used by every query that reaches shared
//! files.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::db::files::{COLUMNS_OF_F, FileRow};
use crate::id::{FileId, FolderId, ShareId, UserId};

/// What a share is of: files, or one folder.
#[derive(Debug, Clone, Copy)]
pub enum Shared<'a> {
    Files(&'a [FileId]),
    Folder(FolderId),
}

/// A share as its owner lists it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ShareRow {
    pub id: ShareId,
    pub file_id: Option<FileId>,
    pub file_name: Option<String>,
    pub folder_id: Option<FolderId>,
    pub folder_path: Option<String>,
    pub grantee_id: UserId,
    pub handle: String,
    pub display_name: Option<String>,
    pub created_at: DateTime<Utc>,
}

const SHARE_COLUMNS: &str = "s.id, s.file_id, f.file_name, s.folder_id, d.path as folder_path, s.grantee_id,
        u.handle, u.display_name, s.created_at";
/// What [`SHARE_COLUMNS`] reads beside a share `s` (a row of `file_shares`, or of rows just
/// deleted from it).
const SHARE_JOINS: &str = "join users u on u.id = s.grantee_id
        left join files f on f.id = s.file_id
        left join folders d on d.id = s.folder_id";

/// Shares what `shared` names of the owner's (library files, or a folder) with each of
/// `grantees`; what is shared already stays as it was. Answers the shares of it with them,
/// made now or before.
pub async fn share(
    conn: &mut PgConnection,
    owner: UserId,
    shared: Shared<'_>,
    grantees: &[UserId],
) -> Result<Vec<ShareRow>, sqlx::Error> {
    let (files, folder) = parts(shared);
    sqlx::query(
        "insert into file_shares (id, owner_id, grantee_id, file_id, folder_id)
         select gen_random_uuid(), $1, g, f.id, null
         from unnest($2::uuid[]) g, files f
         where f.id = any($3) and f.user_id = $1 and f.trashed_at is null and f.derivative_of is null
           and g <> $1
         on conflict (file_id, grantee_id) do nothing",
    )
    .bind(owner)
    .bind(grantees)
    .bind(files)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "insert into file_shares (id, owner_id, grantee_id, file_id, folder_id)
         select gen_random_uuid(), $1, g, null, d.id
         from unnest($2::uuid[]) g, folders d
         where d.id = $3 and d.user_id = $1 and g <> $1
         on conflict (folder_id, grantee_id) do nothing",
    )
    .bind(owner)
    .bind(grantees)
    .bind(folder)
    .execute(&mut *conn)
    .await?;
    sqlx::query_as(&format!(
        "select {SHARE_COLUMNS} from file_shares s {SHARE_JOINS}
         where s.owner_id = $1 and s.grantee_id = any($2)
           and (s.file_id = any($3) or s.folder_id = $4)
         order by s.created_at, s.id"
    ))
    .bind(owner)
    .bind(grantees)
    .bind(files)
    .bind(folder)
    .fetch_all(conn)
    .await
}

/// Takes back the owner's shares of what `shared` names, from `grantees` or (`None`) from
/// everyone; answers the shares taken back.
pub async fn unshare(
    conn: &mut PgConnection,
    owner: UserId,
    shared: Shared<'_>,
    grantees: Option<&[UserId]>,
) -> Result<Vec<ShareRow>, sqlx::Error> {
    let (files, folder) = parts(shared);
    sqlx::query_as(&format!(
        "with gone as (
             delete from file_shares s
             where s.owner_id = $1 and ($2::uuid[] is null or s.grantee_id = any($2))
               and (s.file_id = any($3) or s.folder_id = $4)
             returning *
         )
         select {SHARE_COLUMNS} from gone s {SHARE_JOINS}
         order by s.created_at, s.id"
    ))
    .bind(owner)
    .bind(grantees)
    .bind(files)
    .bind(folder)
    .fetch_all(conn)
    .await
}

/// The ids of the owner's shares of what `shared` names, with anyone.
pub async fn of_subject(
    conn: &mut PgConnection,
    owner: UserId,
    shared: Shared<'_>,
) -> Result<Vec<ShareId>, sqlx::Error> {
    let (files, folder) = parts(shared);
    sqlx::query_scalar(
        "select id from file_shares where owner_id = $1 and (file_id = any($2) or folder_id = $3)",
    )
    .bind(owner)
    .bind(files)
    .bind(folder)
    .fetch_all(conn)
    .await
}

fn parts(shared: Shared<'_>) -> (&[FileId], Option<FolderId>) {
    match shared {
        Shared::Files(ids) => (ids, None),
        Shared::Folder(id) => (&[], Some(id)),
    }
}

/// The owner's shares, newest first: of `file_ids` only when given; at most `limit`.
pub async fn of_owner(
    pool: &PgPool,
    owner: UserId,
    file_ids: Option<&[FileId]>,
    limit: i64,
) -> Result<Vec<ShareRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {SHARE_COLUMNS} from file_shares s {SHARE_JOINS}
         where s.owner_id = $1 and ($2::uuid[] is null or s.file_id = any($2))
         order by s.created_at desc, s.id desc
         limit $3"
    ))
    .bind(owner)
    .bind(file_ids)
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// A file shared with the caller, with its owner and since when the caller may see it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SharedFile {
    #[sqlx(flatten)]
    pub file: FileRow,
    pub owner_handle: String,
    pub owner_display_name: Option<String>,
    /// When it became the caller's to see: its share, or (in a shared folder) the later of the
    /// folder's share and the file's arrival.
    pub shared_at: DateTime<Utc>,
}

/// A page of the files others share with `grantee` (library files: not trashed, not
/// derivatives), newest share first, after the page that ended at `after` (`shared_at`, id).
pub async fn with_me(
    pool: &PgPool,
    grantee: UserId,
    after: Option<(DateTime<Utc>, FileId)>,
    limit: i64,
) -> Result<Vec<SharedFile>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select * from (
             select {COLUMNS_OF_F}, u.handle as owner_handle, u.display_name as owner_display_name,
                    (select max(case when s.file_id is not null then s.created_at
                                     else greatest(s.created_at, f.created_at) end)
                     from file_shares s
                     left join folders shared on shared.id = s.folder_id
                     left join folders d on d.id = f.folder_id
                     where s.grantee_id = $1 and s.owner_id = f.user_id
                       and (s.file_id = f.id or path_within(d.path, shared.path))) as shared_at
             from files f join users u on u.id = f.user_id
             where f.user_id in (select owner_id from file_shares where grantee_id = $1)
               and f.trashed_at is null and f.derivative_of is null
               and shared_with(f.id, f.folder_id, $1)
         ) visible
         where ($2::timestamptz is null or (shared_at, id) < ($2, $3))
         order by shared_at desc, id desc
         limit $4"
    ))
    .bind(grantee)
    .bind(after.map(|(t, _)| t))
    .bind(after.map(|(_, id)| id))
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// One library file `user_id` may see: their own, or one shared with them. Anything else,
/// another account's file not shared with them above all, is `None`, as for an unknown id.
pub async fn visible(pool: &PgPool, user_id: UserId, id: FileId) -> Result<Option<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS_OF_F} from files f
         where f.id = $1 and f.trashed_at is null and f.derivative_of is null
           and (f.user_id = $2 or shared_with(f.id, f.folder_id, $2))"
    ))
    .bind(id)
    .bind(user_id)
    .fetch_optional(pool)
    .await
}

/// Whether `viewer` opening a file of `owner`'s is to be named to the owner: the file is shared
/// with them and they let it be known. Answers their handle and display name when so.
pub async fn named_viewer(
    conn: &mut PgConnection,
    file: &FileRow,
    viewer: UserId,
) -> Result<Option<(String, Option<String>)>, sqlx::Error> {
    sqlx::query_as(
        "select handle, display_name from users
         where id = $1 and show_views and shared_with($2, $3, $1)",
    )
    .bind(viewer)
    .bind(file.id)
    .bind(file.folder_id)
    .fetch_optional(conn)
    .await
}
