//! File records. A file row says who owns it, where its bytes are (bucket and key) and what
//! it is; trashed files keep their row with `trashed_at` set; derivatives (album art, video
//! posters) point at the file they were taken from and stay out of listings.

use crate::db::locks;
use crate::file::FileKind;
use crate::id::{FileId, FolderId, UserId};
use crate::storage::Bucket;
use chrono::{DateTime, Utc};
pub use drive_domain::rows::FileRow;
use sqlx::{PgConnection, PgPool};

pub(crate) const COLUMNS: &str = "id, user_id, file_name, file_size, mime_type, kind, bucket, object_key, \
                       modified_time, trashed_at, created_at, folder_id";

/// [`COLUMNS`] of a `files f` joined into another query.
pub(crate) const COLUMNS_OF_F: &str = "f.id, f.user_id, f.file_name, f.file_size, f.mime_type, f.kind, \
                                       f.bucket, f.object_key, f.modified_time, f.trashed_at, \
                                       f.created_at, f.folder_id";

#[derive(Debug, Clone)]
pub struct NewFile<'a> {
    pub user_id: UserId,
    pub file_name: &'a str,
    pub file_size: i64,
    pub mime_type: &'a str,
    pub kind: FileKind,
    pub bucket: Bucket,
    pub object_key: &'a str,
    pub modified_time: Option<DateTime<Utc>>,
    /// Where it sits; `None` for the top.
    pub folder_id: Option<FolderId>,
    /// The file it was extracted from (album art, a video's poster): kept out of listings.
    pub derivative_of: Option<FileId>,
    /// The file it is a copy of, whose metadata, description, tags, reading and digests it
    /// takes ([`carry`]) instead of being read again.
    pub copy_of: Option<FileId>,
}

/// What [`insert`] did.
#[derive(Debug)]
pub enum Insert {
    /// A new record; its bytes are now counted against the account.
    New(FileRow),
    /// The record already under that key (a re-sent insert): nothing changed.
    Existing(FileRow),
    /// Recording it would take the account past `limit`; nothing changed once the caller
    /// rolls the transaction back. `used` is what the account stores.
    OverQuota { used: i64 },
}

/// Records a file and counts its bytes against the account in the same transaction, or finds
/// the record already under the key, so a re-sent insert answers the same id and counts
/// nothing twice. The count is a conditional update of the account row: concurrent inserts of
/// one account take turns on that row and can never together pass `limit`.
pub async fn insert(conn: &mut PgConnection, file: &NewFile<'_>, limit: i64) -> Result<Insert, sqlx::Error> {
    let inserted: Option<FileRow> = sqlx::query_as(&format!(
        "insert into files (id, user_id, file_name, file_size, mime_type, kind, bucket, object_key, modified_time,
                            folder_id, derivative_of)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         on conflict (object_key) do nothing
         returning {COLUMNS}"
    ))
    .bind(FileId::random())
    .bind(file.user_id)
    .bind(file.file_name)
    .bind(file.file_size)
    .bind(file.mime_type)
    .bind(file.kind.as_str())
    .bind(file.bucket.as_str())
    .bind(file.object_key)
    .bind(file.modified_time)
    .bind(file.folder_id)
    .bind(file.derivative_of)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = inserted else {
        let existing = sqlx::query_as(&format!("select {COLUMNS} from files where object_key = $1"))
            .bind(file.object_key)
            .fetch_one(conn)
            .await?;
        return Ok(Insert::Existing(existing));
    };
    let counted: Option<i64> = sqlx::query_scalar(
        "update users set used_bytes = used_bytes + $2
         where id = $1 and used_bytes + $2 <= $3
         returning used_bytes",
    )
    .bind(file.user_id)
    .bind(file.file_size)
    .bind(limit)
    .fetch_optional(&mut *conn)
    .await?;
    if counted.is_some() {
        return Ok(Insert::New(row));
    }
    let used = sqlx::query_scalar("select used_bytes from users where id = $1")
        .bind(file.user_id)
        .fetch_one(conn)
        .await?;
    Ok(Insert::OverQuota { used })
}

/// Gives the file `to` what is known of `from`, the file it is a copy of: metadata and
/// description, tags, its reading with its moments (so a search finds the copy at the same
/// moments), and its digests.
pub async fn carry(conn: &mut PgConnection, from: FileId, to: FileId) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update files t set description = s.description, title = s.title, artists = s.artists,
                            album = s.album, genre = s.genre, taken_time = s.taken_time,
                            duration_seconds = s.duration_seconds, tempo_bpm = s.tempo_bpm,
                            key_pitch = s.key_pitch, key_mode = s.key_mode, latitude = s.latitude,
                            longitude = s.longitude, width = s.width, height = s.height,
                            video_codec = s.video_codec, audio_codec = s.audio_codec,
                            soundprint = s.soundprint, metadata_state = s.metadata_state,
                            metadata_error = s.metadata_error, artwork_id = s.artwork_id
         from files s where s.id = $1 and t.id = $2",
    )
    .bind(from)
    .bind(to)
    .execute(&mut *conn)
    .await?;
    for statement in [
        "insert into file_tags (file_id, tag_id) select $2, tag_id from file_tags where file_id = $1",
        "insert into file_readings (file_id, user_id, state, error, moment_count, read_at)
         select $2, user_id, state, error, moment_count, read_at from file_readings where file_id = $1",
        "insert into moments (file_id, user_id, entry_type, text, at, until, page, embedding)
         select $2, user_id, entry_type, text, at, until, page, embedding from moments where file_id = $1
         order by id",
        "insert into file_digests (file_id, algorithm, digest)
         select $2, algorithm, digest from file_digests where file_id = $1",
    ] {
        sqlx::query(statement)
            .bind(from)
            .bind(to)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Shows `artwork` (or, with none, the art extracted from the file) for one of the caller's
/// files; false when the caller has no such file.
pub async fn set_artwork(
    pool: &PgPool,
    user_id: UserId,
    id: FileId,
    artwork: Option<FileId>,
) -> Result<bool, sqlx::Error> {
    let set = sqlx::query("update files set artwork_id = $3 where id = $1 and user_id = $2")
        .bind(id)
        .bind(user_id)
        .bind(artwork)
        .execute(pool)
        .await?;
    Ok(set.rows_affected() == 1)
}

/// Records that the pending metadata reading of `file_ids` could not be done, and why.
pub async fn metadata_unreadable<'e>(
    db: impl sqlx::PgExecutor<'e>,
    file_ids: &[FileId],
    why: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update files set metadata_state = 'failed', metadata_error = $2
         where id = any($1) and metadata_state = 'pending'",
    )
    .bind(file_ids)
    .bind(why)
    .execute(db)
    .await?;
    Ok(())
}

/// Whether a file is recorded under `object_key`.
pub async fn key_is_recorded<'e>(
    db: impl sqlx::PgExecutor<'e>,
    object_key: &str,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("select exists (select 1 from files where object_key = $1)")
        .bind(object_key)
        .fetch_one(db)
        .await
}

/// The caller's files in the library: not trashed, not derivatives, newest first.
pub async fn library(pool: &PgPool, user_id: UserId) -> Result<Vec<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from files
         where user_id = $1 and trashed_at is null and derivative_of is null
         order by created_at desc, id desc"
    ))
    .bind(user_id)
    .fetch_all(pool)
    .await
}

/// The caller's trash, most recently trashed first.
pub async fn trashed(pool: &PgPool, user_id: UserId) -> Result<Vec<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from files
         where user_id = $1 and trashed_at is not null and derivative_of is null
         order by trashed_at desc, id desc"
    ))
    .bind(user_id)
    .fetch_all(pool)
    .await
}

pub async fn find(pool: &PgPool, id: FileId) -> Result<Option<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!("select {COLUMNS} from files where id = $1"))
        .bind(id)
        .fetch_optional(pool)
        .await
}

/// One of the caller's files, trashed or not; another user's id finds nothing.
pub async fn find_owned<'e>(
    db: impl sqlx::PgExecutor<'e>,
    user_id: UserId,
    id: FileId,
) -> Result<Option<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from files where id = $1 and user_id = $2"
    ))
    .bind(id)
    .bind(user_id)
    .fetch_optional(db)
    .await
}

/// The caller's file recorded under `object_key`, trashed or not.
pub async fn find_by_key<'e>(
    db: impl sqlx::PgExecutor<'e>,
    user_id: UserId,
    object_key: &str,
) -> Result<Option<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from files where object_key = $1 and user_id = $2"
    ))
    .bind(object_key)
    .bind(user_id)
    .fetch_optional(db)
    .await
}

/// Those of `ids` in the library (not trashed, not derivatives) that are the caller's, or
/// also anyone's public files when `with_public`; in no particular order.
pub async fn find_many<'e>(
    conn: impl sqlx::PgExecutor<'e>,
    user_id: UserId,
    ids: &[FileId],
    with_public: bool,
) -> Result<Vec<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from files
         where id = any($2) and trashed_at is null and derivative_of is null
           and (user_id = $1 or ($3 and bucket = 'public'))"
    ))
    .bind(user_id)
    .bind(ids)
    .bind(with_public)
    .fetch_all(conn)
    .await
}

/// The rows of `ids`, whoever's they are and whatever they are (derivatives included): for
/// ids the caller was already let see, like the artwork of files a search found.
pub async fn rows(pool: &PgPool, ids: &[FileId]) -> Result<Vec<FileRow>, sqlx::Error> {
    // Asked with none on every search whose results have no artwork: no round trip for that.
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    sqlx::query_as(&format!("select {COLUMNS} from files where id = any($1)"))
        .bind(ids)
        .fetch_all(pool)
        .await
}

/// Moves the caller's private recorded files to the trash; answers those that moved. Public
/// files are trashed by [`crate::access::move_file`], which first takes their bytes out of
/// the public bucket.
pub async fn trash(
    conn: &mut PgConnection,
    user_id: UserId,
    ids: &[FileId],
) -> Result<Vec<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "update files set trashed_at = now()
         where user_id = $1 and id = any($2) and trashed_at is null and derivative_of is null
           and bucket = 'private'
         returning {COLUMNS}"
    ))
    .bind(user_id)
    .bind(ids)
    .fetch_all(conn)
    .await
}

/// Brings the caller's trashed files back, those that were private when trashed; answers
/// those restored. (A file trashed with its deleted folder is put back in that folder's path
/// first: [`crate::db::folders::restore_paths`].) Files that were public go back through
/// [`crate::access::move_file`].
pub async fn restore(
    conn: &mut PgConnection,
    user_id: UserId,
    ids: &[FileId],
) -> Result<Vec<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "update files set trashed_at = null
         where user_id = $1 and id = any($2) and trashed_at is not null and not public_on_restore
         returning {COLUMNS}"
    ))
    .bind(user_id)
    .bind(ids)
    .fetch_all(conn)
    .await
}

/// Those of `ids` whose trashing or restoring moves their bytes between buckets: the caller's
/// public files not trashed (`restoring` false), or trashed files that were public
/// (`restoring` true).
pub async fn needing_a_move(
    pool: &PgPool,
    user_id: UserId,
    ids: &[FileId],
    restoring: bool,
) -> Result<Vec<FileId>, sqlx::Error> {
    sqlx::query_scalar(
        "select id from files
         where user_id = $1 and id = any($2) and derivative_of is null
           and case when $3 then trashed_at is not null and public_on_restore
                    else trashed_at is null and bucket = 'public' end",
    )
    .bind(user_id)
    .bind(ids)
    .bind(restoring)
    .fetch_all(pool)
    .await
}

/// A stored object whose record is gone and whose bytes are still to be removed.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ObjectToDelete {
    pub id: FileId,
    /// Derivatives go with the file they came from; they are not named in answers.
    pub is_derivative: bool,
    pub bucket: Bucket,
    pub object_key: String,
    pub file_name: String,
    pub folder_id: Option<FolderId>,
}

/// Deletes file records (and their derivatives), uncounts their bytes and, in the same
/// statement, queues their objects for removal, so a crash between the database and the store leaves a queued
/// deletion rather than a record without bytes or bytes nobody can reach.
/// `which` selects the files: `ids` of the caller's, or every trashed file when `None`.
pub async fn delete(
    conn: &mut PgConnection,
    user_id: UserId,
    ids: Option<&[FileId]>,
) -> Result<Vec<ObjectToDelete>, sqlx::Error> {
    sqlx::query_as(
        "with chosen as (
             select id from files
             where user_id = $1 and derivative_of is null
               and (case when $2::uuid[] is null then trashed_at is not null else id = any($2) end)
         ),
         gone as (
             delete from files
             where user_id = $1 and (id in (select id from chosen) or derivative_of in (select id from chosen))
             returning id, derivative_of is not null as is_derivative, bucket, object_key, file_size,
                       file_name, folder_id
         ),
         queued as (
             insert into object_deletions (bucket, object_key) select bucket, object_key from gone
         ),
         uncounted as (
             update users set used_bytes = used_bytes - (select coalesce(sum(file_size), 0) from gone)
             where id = $1
         )
         select id, is_derivative, bucket, object_key, file_name, folder_id from gone",
    )
    .bind(user_id)
    .bind(ids)
    .fetch_all(conn)
    .await
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct QueuedDeletion {
    pub bucket: Bucket,
    pub object_key: String,
}

/// Objects still queued for removal, oldest first, each once.
pub async fn queued_deletions(pool: &PgPool) -> Result<Vec<QueuedDeletion>, sqlx::Error> {
    sqlx::query_as(
        "select bucket, object_key from object_deletions
         group by bucket, object_key order by min(id)",
    )
    .fetch_all(pool)
    .await
}

/// Takes the lock on one object and answers the ids of its queued removals; empty when there
/// are none or another transaction holds the lock (it is removing the object, or writing the
/// key again).
pub async fn claim_deletions(
    conn: &mut PgConnection,
    bucket: Bucket,
    object_key: &str,
) -> Result<Vec<i64>, sqlx::Error> {
    if !locks::try_lock_object(&mut *conn, bucket, object_key).await? {
        return Ok(Vec::new());
    }
    sqlx::query_scalar("select id from object_deletions where bucket = $1 and object_key = $2")
        .bind(bucket.as_str())
        .bind(object_key)
        .fetch_all(conn)
        .await
}

/// Marks queued removals done.
pub async fn deletions_done(conn: &mut PgConnection, ids: &[i64]) -> Result<(), sqlx::Error> {
    sqlx::query("delete from object_deletions where id = any($1)")
        .bind(ids)
        .execute(conn)
        .await?;
    Ok(())
}

/// Queues the removal of `bucket`/`object_key` for the sweep ([`crate::maintenance`]), in the
/// caller's transaction.
pub async fn queue_deletion(
    conn: &mut PgConnection,
    bucket: Bucket,
    object_key: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query("insert into object_deletions (bucket, object_key) values ($1, $2)")
        .bind(bucket.as_str())
        .bind(object_key)
        .execute(conn)
        .await?;
    Ok(())
}

/// Makes `file`'s record say the `size` its key now stores (written again by a form issued
/// before it was recorded), counted against its account whatever the quota says (the bytes
/// are there), and forgets the digests computed from the bytes before.
pub async fn follow_stored_size(
    conn: &mut PgConnection,
    file: &FileRow,
    size: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("update files set file_size = $2 where id = $1")
        .bind(file.id)
        .bind(size)
        .execute(&mut *conn)
        .await?;
    sqlx::query("update users set used_bytes = greatest(used_bytes + $2, 0) where id = $1")
        .bind(file.user_id)
        .bind(size - file.file_size)
        .execute(&mut *conn)
        .await?;
    sqlx::query("delete from file_digests where file_id = $1")
        .bind(file.id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Drops the queued removals of `bucket`/`object_key` because the key is about to be written
/// again: a removal queued for older bytes must never take newer ones. Waits for a removal
/// already under way (it holds the object's lock), so the write comes after it.
pub async fn cancel_deletions(
    conn: &mut PgConnection,
    bucket: Bucket,
    object_key: &str,
) -> Result<(), sqlx::Error> {
    locks::lock_object(&mut *conn, bucket, object_key).await?;
    sqlx::query("delete from object_deletions where bucket = $1 and object_key = $2")
        .bind(bucket.as_str())
        .bind(object_key)
        .execute(conn)
        .await?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UsageRow {
    pub bucket: Bucket,
    #[sqlx(try_from = "String")]
    pub kind: FileKind,
    pub bytes: i64,
    pub objects: i64,
}

/// Bytes and object counts by bucket and kind.
pub async fn usage(pool: &PgPool, user_id: UserId) -> Result<Vec<UsageRow>, sqlx::Error> {
    sqlx::query_as(
        "select bucket, kind, sum(file_size)::bigint as bytes, count(*) as objects
         from files where user_id = $1
         group by bucket, kind order by bucket, kind",
    )
    .bind(user_id)
    .fetch_all(pool)
    .await
}
