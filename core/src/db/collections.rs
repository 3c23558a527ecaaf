//! Playlists and galleries: ordered sets of files. A gallery shows its featured images first,
//! then the rest, each part in position order; a playlist has no featured files.

use crate::id::{CollectionId, FileId, UserId};
use sqlx::{PgConnection, PgPool};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectionKind {
    Playlist,
    Gallery,
}

impl CollectionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CollectionKind::Playlist => "playlist",
            CollectionKind::Gallery => "gallery",
        }
    }

    /// The file kinds it takes: audio and video for a playlist, images for a gallery.
    pub fn admits(self) -> &'static [&'static str] {
        match self {
            CollectionKind::Playlist => &["Audio", "Video"],
            CollectionKind::Gallery => &["Image"],
        }
    }
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct CollectionRow {
    pub id: CollectionId,
    pub title: String,
    pub description: Option<String>,
    pub is_public: bool,
    pub file_count: i64,
    pub featured_count: i64,
    /// A playlist's cover, chosen with `/set-cover`.
    pub cover_id: Option<FileId>,
    /// Every file in it, in order (a gallery's featured ones first).
    pub file_ids: Vec<FileId>,
}

const SUMMARY: &str = "select c.id, c.title, c.description, c.is_public, c.cover_id,
        (select count(*) from collection_items i where i.collection_id = c.id) as file_count,
        coalesce((select array_agg(i.file_id order by i.featured desc, i.position)
                  from collection_items i where i.collection_id = c.id), '{}') as file_ids,
        (select count(*) from collection_items i where i.collection_id = c.id and i.featured) as featured_count
    from collections c";

pub async fn create(
    conn: &mut PgConnection,
    user_id: UserId,
    kind: CollectionKind,
    title: &str,
    description: Option<&str>,
    is_public: bool,
) -> Result<CollectionId, sqlx::Error> {
    sqlx::query_scalar(
        "insert into collections (id, user_id, kind, title, description, is_public)
         values ($1, $2, $3, $4, $5, $6) returning id",
    )
    .bind(CollectionId::random())
    .bind(user_id)
    .bind(kind.as_str())
    .bind(title)
    .bind(description)
    .bind(is_public)
    .fetch_one(conn)
    .await
}

/// One of the caller's collections of `kind`, locked for the rest of the transaction so that
/// concurrent changes to it take turns (and keep each other's files); `None` when the caller
/// has no such collection. Answers whether it is public.
pub async fn lock_owned(
    conn: &mut PgConnection,
    user_id: UserId,
    kind: CollectionKind,
    id: CollectionId,
) -> Result<Option<bool>, sqlx::Error> {
    sqlx::query_scalar(
        "select is_public from collections where id = $1 and user_id = $2 and kind = $3 for update",
    )
    .bind(id)
    .bind(user_id)
    .bind(kind.as_str())
    .fetch_optional(conn)
    .await
}

/// Appends the admissible files among `file_ids`, in the order given, after what the
/// collection holds; files already in stay where they are. Admissible: of the collection's
/// kinds, not trashed, not a derivative, and the caller's own, or (while the collection is
/// private) anyone's public file or one shared with the caller. `featured` marks which of the
/// new files go up front.
/// Answers the ids added.
pub async fn append(
    conn: &mut PgConnection,
    user_id: UserId,
    kind: CollectionKind,
    collection_id: CollectionId,
    is_public: bool,
    file_ids: &[FileId],
    featured: &[FileId],
) -> Result<Vec<FileId>, sqlx::Error> {
    // The files are locked (for share) so none is deleted between this check and the insert,
    // which would break the foreign key; one deleted meanwhile is left out instead.
    sqlx::query_scalar(
        "with locked as (
             select f.id from files f
             where f.id = any($4::uuid[]) and f.kind = any($5) and f.trashed_at is null
               and f.derivative_of is null
               and (f.user_id = $2 or (not $3 and (f.bucket = 'public' or shared_with(f.id, f.folder_id, $2))))
             for share
         ),
         wanted as (
             select w.id, min(w.n) as n
             from unnest($4::uuid[]) with ordinality as w (id, n)
             join locked l on l.id = w.id
             group by w.id
         ),
         fresh as (
             select id, n from wanted
             where not exists (select 1 from collection_items i where i.collection_id = $1 and i.file_id = wanted.id)
         )
         insert into collection_items (collection_id, file_id, position, featured)
         select $1, id,
                (select coalesce(max(position), 0) from collection_items where collection_id = $1)
                    + row_number() over (order by n),
                id = any($6)
         from fresh
         returning file_id",
    )
    .bind(collection_id)
    .bind(user_id)
    .bind(is_public)
    .bind(file_ids)
    .bind(kind.admits())
    .bind(featured)
    .fetch_all(conn)
    .await
}

/// Puts the named files first in the order named and the others after in their prior order;
/// ids the collection does not hold are ignored. With `featured`, the named files are
/// featured exactly when listed there; unnamed files keep theirs.
pub async fn reorder(
    conn: &mut PgConnection,
    collection_id: CollectionId,
    file_ids: &[FileId],
    featured: Option<&[FileId]>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update collection_items i
         set position = r.position,
             featured = case when $3::uuid[] is not null and r.named then i.file_id = any($3) else i.featured end
         from (
             select c.file_id, w.n is not null as named,
                    row_number() over (order by w.n nulls last, c.position) as position
             from collection_items c
             left join (
                 select id, min(n) as n from unnest($2::uuid[]) with ordinality as u (id, n) group by id
             ) w on w.id = c.file_id
             where c.collection_id = $1
         ) r
         where i.collection_id = $1 and i.file_id = r.file_id",
    )
    .bind(collection_id)
    .bind(file_ids)
    .bind(featured)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn summary(conn: &mut PgConnection, id: CollectionId) -> Result<CollectionRow, sqlx::Error> {
    sqlx::query_as(&format!("{SUMMARY} where c.id = $1"))
        .bind(id)
        .fetch_one(conn)
        .await
}

/// The files in display order: featured first, then by position.
pub async fn file_ids(conn: &mut PgConnection, id: CollectionId) -> Result<Vec<FileId>, sqlx::Error> {
    sqlx::query_scalar(
        "select file_id from collection_items where collection_id = $1 order by featured desc, position",
    )
    .bind(id)
    .fetch_all(conn)
    .await
}

/// Puts `cover` (or none) on one of the caller's playlists; false when it has no such playlist.
pub async fn set_cover(
    pool: &PgPool,
    user_id: UserId,
    id: CollectionId,
    cover: Option<FileId>,
) -> Result<bool, sqlx::Error> {
    let set = sqlx::query(
        "update collections set cover_id = $3 where id = $1 and user_id = $2 and kind = 'playlist'",
    )
    .bind(id)
    .bind(user_id)
    .bind(cover)
    .execute(pool)
    .await?;
    Ok(set.rows_affected() == 1)
}

/// The caller's collections of a kind, oldest first.
pub async fn list(
    pool: &PgPool,
    user_id: UserId,
    kind: CollectionKind,
) -> Result<Vec<CollectionRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "{SUMMARY} where c.user_id = $1 and c.kind = $2 order by c.created_at, c.id"
    ))
    .bind(user_id)
    .bind(kind.as_str())
    .fetch_all(pool)
    .await
}

/// Retitles a locked collection; a gallery's description too when `description` is given
/// (`Some(None)` clears it).
pub async fn rename(
    conn: &mut PgConnection,
    id: CollectionId,
    title: &str,
    description: Option<Option<&str>>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update collections set title = $2,
                                description = case when $3 then $4 else description end
         where id = $1",
    )
    .bind(id)
    .bind(title)
    .bind(description.is_some())
    .bind(description.flatten())
    .execute(conn)
    .await?;
    Ok(())
}

/// Takes `file_ids` out of a locked collection; the others keep their order and featuring.
pub async fn remove(
    conn: &mut PgConnection,
    id: CollectionId,
    file_ids: &[FileId],
) -> Result<(), sqlx::Error> {
    sqlx::query("delete from collection_items where collection_id = $1 and file_id = any($2)")
        .bind(id)
        .bind(file_ids)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes one of the caller's collections of `kind` (its files stay in the drive); false
/// when it has no such collection.
pub async fn delete(
    pool: &PgPool,
    user_id: UserId,
    kind: CollectionKind,
    id: CollectionId,
) -> Result<bool, sqlx::Error> {
    let deleted = sqlx::query("delete from collections where id = $1 and user_id = $2 and kind = $3")
        .bind(id)
        .bind(user_id)
        .bind(kind.as_str())
        .execute(pool)
        .await?;
    Ok(deleted.rows_affected() == 1)
}
