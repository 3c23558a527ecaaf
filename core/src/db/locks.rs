//! Transaction-scoped advisory locks: they serialize work on one object or one file without
//! locking a row, and so without taking a transaction id, which would hold back the event feed
//! (it shows an event only once every transaction older than it has ended) for as long as the
//! work under the lock talks to the store.
//!
//! Order, where one transaction takes several: the account's folder tree, a folder's names, a
//! file's lock, then an object's, then the account's row. Two ids whose hashes collide only wait for each other.

use crate::id::{FileId, FolderId, UserId};
use sqlx::PgConnection;

use crate::storage::Bucket;

/// Waits for the lock on the object `key` in `bucket`.
pub async fn lock_object(conn: &mut PgConnection, bucket: Bucket, key: &str) -> Result<(), sqlx::Error> {
    sqlx::query("select pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 1))")
        .bind(bucket.as_str())
        .bind(key)
        .execute(conn)
        .await?;
    Ok(())
}

/// Takes the lock on an object if nobody holds it.
pub async fn try_lock_object(
    conn: &mut PgConnection,
    bucket: Bucket,
    key: &str,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("select pg_try_advisory_xact_lock(hashtextextended($1 || '/' || $2, 1))")
        .bind(bucket.as_str())
        .bind(key)
        .fetch_one(conn)
        .await
}

/// Takes the lock on a file's bytes changing bucket if nobody holds it.
pub async fn try_lock_file(conn: &mut PgConnection, file_id: FileId) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("select pg_try_advisory_xact_lock(hashtextextended($1::text, 2))")
        .bind(file_id)
        .fetch_one(conn)
        .await
}

/// Waits for the lock on the names of the files in one of the account's folders (`None`: the
/// top), held while a name is chosen and the file recorded under it.
pub async fn lock_names(
    conn: &mut PgConnection,
    user_id: UserId,
    folder_id: Option<FolderId>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "select pg_advisory_xact_lock(hashtextextended($1::text || '/' || coalesce($2::text, ''), 6))",
    )
    .bind(user_id)
    .bind(folder_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Waits for the lock on the account's folder tree, held by a folder's move or deletion: two
/// of them deciding on the same paths at once would otherwise both pass their checks.
pub async fn lock_folders(conn: &mut PgConnection, user_id: UserId) -> Result<(), sqlx::Error> {
    sqlx::query("select pg_advisory_xact_lock(hashtextextended($1::text, 8))")
        .bind(user_id)
        .execute(conn)
        .await?;
    Ok(())
}
