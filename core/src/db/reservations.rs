//! Upload reservations: the declared size of every form or multipart upload that is not a
//! file yet, counted against the quota from the moment the upload is issued, so objects that
//! never become files cannot fill the store. A reservation ends when `/insert-file` records the
//! object (its bytes then count in `users.used_bytes`) or when it expires and the sweep
//! removes whatever was stored under its key.
//!
//! An insert, a multipart completion and the sweep each hold the key's lock
//! ([`locks::lock_object`]) while they work, so an object is never completed after its key
//! became a file, and never removed while it is being recorded.

use crate::id::{RequestId, UserId};
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::db::{forms, locks};
use crate::storage::Bucket;

/// What [`reserve`] decided.
#[derive(Debug, PartialEq, Eq)]
pub enum Reserve {
    Reserved,
    /// A file is already recorded under the key: it must not be written again.
    KeyTaken,
    /// The account's files and its other reservations leave no room for `wanted` bytes.
    OverQuota {
        used: i64,
        reserved: i64,
        wanted: i64,
    },
    /// A form was issued for the key with another size, which it keeps for as long as a form
    /// can write it; or a form was asked for beside an upload of another size.
    SizeFixed {
        size: i64,
    },
    /// The account has `open` multipart uploads already, the most it may have.
    TooManyUploads {
        open: i64,
    },
    /// A sender's upload would take the file request past its `maxBytes`, or past what its
    /// senders may hold announced and not yet sent ([`ForRequest::max_pending_bytes`],
    /// [`MAX_PENDING_FILES`]).
    RequestFull,
}

/// The file request a sender's upload goes to: its room is checked and held with the quota.
#[derive(Debug, Clone, Copy)]
pub struct ForRequest {
    pub id: RequestId,
    pub max_bytes: Option<i64>,
    /// The most bytes its anonymous senders may hold announced and not yet sent, whatever
    /// `max_bytes` says (a request without one takes up to the owner's quota, but its senders
    /// never hold more than this of it at once).
    pub max_pending_bytes: i64,
}

/// The most files a request's senders may have announced and not yet sent at once.
pub const MAX_PENDING_FILES: i64 = 100;

/// How one upload asks for its reservation.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub user_id: UserId,
    pub object_key: &'a str,
    pub file_size: i64,
    /// Until when the issued form can write (a form upload), or `None` (multipart).
    pub form_until: Option<DateTime<Utc>>,
    /// When the reservation lapses unless renewed: after the last moment anything issued can
    /// still write, plus time to call `/insert-file`.
    pub expires_at: DateTime<Utc>,
    /// For a new multipart upload: the most open uploads the account may have.
    pub max_open_uploads: Option<i64>,
    /// A sender's upload to a file request of the account's.
    pub request: Option<ForRequest>,
}

/// Reserves `file_size` bytes for `object_key`, or renews the reservation the key has, in the
/// caller's transaction (nothing is reserved unless it commits). A key whose form can still
/// write keeps its one size: a form or multipart upload for another size is refused (so no
/// record can be made for fewer bytes than a form may later write), and so is a form beside an
/// upload of another size. A reservation never ends earlier while renewed. A form issued is
/// remembered beyond the insert ([`forms::issue`]). The
/// account row is locked for the check, so concurrent reservations of one account take turns
/// and can never together pass `limit`; a sender's upload also locks its file request's row,
/// so concurrent senders can never together pass its `maxBytes`. A queued removal of an older
/// object under the key is dropped: the upload is about to replace it, and the reservation now
/// answers for whatever ends up there.
pub async fn reserve(
    conn: &mut PgConnection,
    request: Request<'_>,
    limit: i64,
) -> Result<Reserve, sqlx::Error> {
    locks::lock_object(&mut *conn, Bucket::Private, request.object_key).await?;
    // `no key update`, not `update`: an insert of a file holds a key-share lock on the account
    // row (its foreign key) before it updates the row's byte count, and a waiting `for update`
    // between the two would deadlock with it.
    let used: i64 = sqlx::query_scalar("select used_bytes from users where id = $1 for no key update")
        .bind(request.user_id)
        .fetch_one(&mut *conn)
        .await?;
    if crate::db::files::key_is_recorded(&mut *conn, request.object_key).await? {
        return Ok(Reserve::KeyTaken);
    }
    if let Some(max) = request.max_open_uploads {
        let open: i64 = sqlx::query_scalar(
            "select count(*) from multipart_uploads where user_id = $1 and state = 'open' and object_key <> $2",
        )
        .bind(request.user_id)
        .bind(request.object_key)
        .fetch_one(&mut *conn)
        .await?;
        if open >= max {
            return Ok(Reserve::TooManyUploads { open });
        }
    }
    let (reserved, held): (i64, Option<i64>) = sqlx::query_as(
        "select coalesce(sum(file_size) filter (where object_key <> $2), 0)::bigint,
                max(file_size) filter (where object_key = $2)
         from upload_reservations where user_id = $1",
    )
    .bind(request.user_id)
    .bind(request.object_key)
    .fetch_one(&mut *conn)
    .await?;
    // A form cannot be withdrawn: once one is issued, the key keeps its size. A multipart
    // upload can be (its parts die with it), so a multipart upload of a new size replaces an
    // open one (the contract's "parts do not fit the file size"; the reservation keeps the
    // larger size meanwhile), but a form is not issued beside an upload of another size.
    let issued = forms::issued_size(&mut *conn, request.object_key).await?;
    let fixed = match request.form_until {
        Some(_) => issued.or(held),
        None => issued,
    };
    if let Some(size) = fixed.filter(|&size| size != request.file_size) {
        return Ok(Reserve::SizeFixed { size });
    }
    let wanted = request.file_size.max(held.unwrap_or(0));
    if used.saturating_add(reserved).saturating_add(wanted) > limit {
        return Ok(Reserve::OverQuota {
            used,
            reserved,
            wanted,
        });
    }
    if let Some(to) = request.request {
        let taken = crate::db::requests::lock_and_measure(&mut *conn, to.id, request.object_key).await?;
        let past_max = to
            .max_bytes
            .is_some_and(|max| taken.bytes.saturating_add(wanted) > max);
        let past_pending = taken.pending_bytes.saturating_add(wanted) > to.max_pending_bytes
            || taken.pending_files >= MAX_PENDING_FILES;
        if past_max || past_pending {
            return Ok(Reserve::RequestFull);
        }
    }
    crate::db::files::cancel_deletions(&mut *conn, Bucket::Private, request.object_key).await?;
    sqlx::query(
        "insert into upload_reservations (object_key, user_id, file_size, form_until, expires_at, request_id)
         values ($1, $2, $3, $4, $5, $6)
         on conflict (object_key) do update set
             file_size = greatest(upload_reservations.file_size, excluded.file_size),
             form_until = greatest(upload_reservations.form_until, excluded.form_until),
             expires_at = greatest(upload_reservations.expires_at, excluded.expires_at)",
    )
    .bind(request.object_key)
    .bind(request.user_id)
    .bind(request.file_size)
    .bind(request.form_until)
    .bind(request.expires_at)
    .bind(request.request.map(|r| r.id))
    .execute(&mut *conn)
    .await?;
    if let Some(until) = request.form_until {
        forms::issue(
            &mut *conn,
            request.user_id,
            request.object_key,
            request.file_size,
            until,
        )
        .await?;
    }
    Ok(Reserve::Reserved)
}

/// Takes the lock on `object_key` for the rest of the transaction and answers the size the
/// caller reserved for it; `None` when there is no reservation (never issued, recorded
/// already, or expired and swept).
pub async fn lock(
    conn: &mut PgConnection,
    user_id: UserId,
    object_key: &str,
) -> Result<Option<i64>, sqlx::Error> {
    locks::lock_object(&mut *conn, Bucket::Private, object_key).await?;
    sqlx::query_scalar("select file_size from upload_reservations where object_key = $1 and user_id = $2")
        .bind(object_key)
        .bind(user_id)
        .fetch_optional(conn)
        .await
}

/// Whether an upload under way holds `object_key` (its own expiry removes what it leaves).
pub async fn held(conn: &mut PgConnection, object_key: &str) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("select exists (select 1 from upload_reservations where object_key = $1)")
        .bind(object_key)
        .fetch_one(conn)
        .await
}

/// Ends the reservation of `object_key` (recorded, or swept).
pub async fn release(conn: &mut PgConnection, object_key: &str) -> Result<(), sqlx::Error> {
    sqlx::query("delete from upload_reservations where object_key = $1")
        .bind(object_key)
        .execute(conn)
        .await?;
    Ok(())
}

/// After an aborted multipart upload: ends the reservation unless a form issued for the key
/// may still write to it (the reservation then lapses with the form).
pub async fn release_after_abort(pool: &PgPool, object_key: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "delete from upload_reservations
         where object_key = $1 and (form_until is null or form_until < now())",
    )
    .bind(object_key)
    .execute(pool)
    .await?;
    Ok(())
}

/// Ends the reservations of `keys` now, for the next sweep to remove what was written under
/// them (a copy that failed part-way).
pub async fn lapse(pool: &PgPool, keys: &[String]) -> Result<(), sqlx::Error> {
    sqlx::query("update upload_reservations set expires_at = now() where object_key = any($1)")
        .bind(keys)
        .execute(pool)
        .await?;
    Ok(())
}

/// Whether the reservation `r` has ended by `$now`: expired, or held for a sender of a file
/// request that is closed or past its `expireTime` (what its senders announced is released
/// when it stops taking files).
const ENDED: &str = "(r.expires_at < $1 or exists (
        select 1 from file_requests q
        where q.id = r.request_id and (q.closed_at is not null or q.expires_at <= $1)))";

/// The keys whose reservations have ended by `now` ([`ENDED`]), oldest first.
pub async fn expired(pool: &PgPool, now: DateTime<Utc>) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(&format!(
        "select r.object_key from upload_reservations r where {ENDED} order by r.expires_at"
    ))
    .bind(now)
    .fetch_all(pool)
    .await
}

/// The keys reserved for `request_id`'s senders that have not become files.
pub async fn of_request(pool: &PgPool, request_id: RequestId) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar("select object_key from upload_reservations where request_id = $1")
        .bind(request_id)
        .fetch_all(pool)
        .await
}

/// Keeps a sender's reservation until at least `until` (more part URLs were signed).
pub async fn renew(pool: &PgPool, object_key: &str, until: DateTime<Utc>) -> Result<(), sqlx::Error> {
    sqlx::query("update upload_reservations set expires_at = greatest(expires_at, $2) where object_key = $1")
        .bind(object_key)
        .bind(until)
        .execute(pool)
        .await?;
    Ok(())
}

/// Takes an expired reservation for the sweep, with its key's lock; `None` when it is gone,
/// renewed, or its key is being worked on right now (it is left for the next sweep).
pub async fn claim_expired(
    conn: &mut PgConnection,
    object_key: &str,
    now: DateTime<Utc>,
) -> Result<Option<UserId>, sqlx::Error> {
    if !locks::try_lock_object(&mut *conn, Bucket::Private, object_key).await? {
        return Ok(None);
    }
    sqlx::query_scalar(&format!(
        "select r.user_id from upload_reservations r where r.object_key = $2 and {ENDED}"
    ))
    .bind(now)
    .bind(object_key)
    .fetch_optional(conn)
    .await
}
