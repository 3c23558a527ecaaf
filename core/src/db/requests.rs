//! File requests, their drops (one a sender's visit) and arrivals (each file a sender
//! announced). A request is open while it is not closed and not past its expiry. What a request
//! has taken is its files still there (recorded, not deleted, not in the trash) plus its
//! senders' uploads under way (their reservations), and never passes `maxBytes`.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::db::events::{self, EventKind};
use crate::file::FileKind;
use crate::id::{ArrivalId, DropId, FileId, FolderId, JobId, RequestId, TokenId, UserId};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RequestRow {
    pub id: RequestId,
    pub user_id: UserId,
    pub title: String,
    pub message: Option<String>,
    pub folder_id: FolderId,
    /// The folder's stored path (`/a/b`).
    pub folder_path: String,
    pub created_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
    pub max_bytes: Option<i64>,
    pub accept_types: Option<Vec<String>>,
    pub max_files_per_sender: Option<i32>,
    /// The job of the request's rule (its `onArrival`), as `JobSpec` serializes
    /// (`{ jobType, options }`).
    pub on_arrival: Option<serde_json::Value>,
}

/// Why a request takes no files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shut {
    /// Its owner closed it.
    Closed,
    /// Its `expireTime` passed (while it was open).
    Expired(DateTime<Utc>),
}

impl RequestRow {
    /// Why it takes no files at `now`; `None` while it is open.
    pub fn shut(&self, now: DateTime<Utc>) -> Option<Shut> {
        match (self.closed_at, self.expires_at) {
            (Some(_), _) => Some(Shut::Closed),
            (None, Some(t)) if t <= now => Some(Shut::Expired(t)),
            (None, _) => None,
        }
    }

    /// Whether it takes files at `now`: not closed and not past its expiry.
    pub fn is_open(&self, now: DateTime<Utc>) -> bool {
        self.shut(now).is_none()
    }
}

const REQUEST_COLUMNS: &str = "r.id, r.user_id, r.title, r.message, r.folder_id, d.path as folder_path, \
                               r.created_at, r.closed_at, r.expires_at, r.max_bytes, r.accept_types, \
                               r.max_files_per_sender, \
                               (select jsonb_build_object('jobType', fr.job_type, 'options', fr.options) \
                                from folder_rules fr where fr.request_id = r.id) as on_arrival";

#[derive(Debug, Clone)]
pub struct NewRequest<'a> {
    pub user_id: UserId,
    /// The API token that makes it: revoking that token closes the request.
    pub token_id: Option<TokenId>,
    pub title: &'a str,
    pub message: Option<&'a str>,
    pub folder_id: FolderId,
    pub expires_at: Option<DateTime<Utc>>,
    pub max_bytes: Option<i64>,
    pub accept_types: Option<Vec<String>>,
    pub max_files_per_sender: Option<i32>,
}

pub async fn create(conn: &mut PgConnection, new: &NewRequest<'_>) -> Result<RequestRow, sqlx::Error> {
    let id = RequestId::random();
    sqlx::query(
        "insert into file_requests (id, user_id, title, message, folder_id, expires_at, max_bytes,
                                    accept_types, max_files_per_sender, api_token_id)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(id)
    .bind(new.user_id)
    .bind(new.title)
    .bind(new.message)
    .bind(new.folder_id)
    .bind(new.expires_at)
    .bind(new.max_bytes)
    .bind(&new.accept_types)
    .bind(new.max_files_per_sender)
    .bind(new.token_id)
    .execute(&mut *conn)
    .await?;
    Ok(find(&mut *conn, id).await?.expect("the request just made"))
}

/// Any request, for its senders (who have no account) and its page.
pub async fn find<'e>(
    conn: impl sqlx::PgExecutor<'e>,
    id: RequestId,
) -> Result<Option<RequestRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {REQUEST_COLUMNS} from file_requests r join folders d on d.id = r.folder_id where r.id = $1"
    ))
    .bind(id)
    .fetch_optional(conn)
    .await
}

/// One of the caller's requests; another user's id finds nothing.
pub async fn find_owned(
    pool: &PgPool,
    user_id: UserId,
    id: RequestId,
) -> Result<Option<RequestRow>, sqlx::Error> {
    Ok(find(pool, id).await?.filter(|r| r.user_id == user_id))
}

/// The caller's requests, newest first, at most `limit`: those named (when `ids` is given) and
/// dropping into `folder` or a folder inside it (when given, a stored path).
pub async fn list(
    pool: &PgPool,
    user_id: UserId,
    ids: Option<&[RequestId]>,
    folder: Option<&str>,
    limit: i64,
) -> Result<Vec<RequestRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {REQUEST_COLUMNS} from file_requests r join folders d on d.id = r.folder_id
         where r.user_id = $1
           and ($2::uuid[] is null or r.id = any($2))
           and ($3::text is null or path_within(d.path, $3))
         order by r.created_at desc, r.id
         limit $4"
    ))
    .bind(user_id)
    .bind(ids)
    .bind(folder)
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// Closes or opens one of the caller's requests. Closing keeps the first `closeTime`; opening
/// clears it only before the expiry: a request reopened past its `expireTime` stays closed.
pub async fn set_open(
    pool: &PgPool,
    user_id: UserId,
    id: RequestId,
    open: bool,
) -> Result<Option<RequestRow>, sqlx::Error> {
    let changed: Option<RequestId> = sqlx::query_scalar(
        "update file_requests set closed_at = case
             when not $3 then coalesce(closed_at, now())
             when expires_at is not null and expires_at <= now() then coalesce(closed_at, now())
             else null end
         where id = $1 and user_id = $2
         returning id",
    )
    .bind(id)
    .bind(user_id)
    .bind(open)
    .fetch_optional(pool)
    .await?;
    match changed {
        Some(id) => find(pool, id).await,
        None => Ok(None),
    }
}

/// What a file request holds of its owner's storage, as [`lock_and_measure`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct Taken {
    /// Its files still there (arrived, or made of them by its `onArrival` jobs: the SQL
    /// function `request_files_bytes`), and its uploads under way, in bytes.
    pub bytes: i64,
    /// Of those, the uploads under way (announced, not yet recorded): what anonymous senders
    /// hold without having sent anything yet.
    pub pending_bytes: i64,
    pub pending_files: i64,
}

/// The room left in the file request whose arrival a rule's job `job_id` works on (the
/// request's `onArrival`, say), when it has a `maxBytes`: what the job may still make
/// ([`Taken`]'s files and uploads under way counted).
pub async fn room_for_job(pool: &PgPool, job_id: JobId) -> Result<Option<i64>, sqlx::Error> {
    let room: Option<Option<i64>> = sqlx::query_scalar(
        "select r.max_bytes - request_files_bytes(r.id)
                - (select coalesce(sum(file_size), 0) from upload_reservations where request_id = r.id)::bigint
         from folder_rule_hits h
         join request_arrivals a on a.file_id = h.file_id
         join file_requests r on r.id = a.request_id
         where h.job_id = $1",
    )
    .bind(job_id)
    .fetch_optional(pool)
    .await?;
    Ok(room.flatten().map(|room| room.max(0)))
}

/// Locks the request's row for the rest of the transaction (senders reserving room take turns)
/// and answers what it has taken: its files still there and the uploads under way other than
/// the one under `object_key`.
pub async fn lock_and_measure(
    conn: &mut PgConnection,
    id: RequestId,
    object_key: &str,
) -> Result<Taken, sqlx::Error> {
    // `no key update`: a sender's arrival row references the request (a key-share lock), which
    // must not wait on this lock, nor this on it.
    sqlx::query("select 1 from file_requests where id = $1 for no key update")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query_as(
        "with pending as (
             select coalesce(sum(file_size), 0)::bigint as bytes, count(*) as files
             from upload_reservations where request_id = $1 and object_key <> $2
         )
         select request_files_bytes($1) + pending.bytes as bytes,
                pending.bytes as pending_bytes, pending.files as pending_files
         from pending",
    )
    .bind(id)
    .bind(object_key)
    .fetch_one(conn)
    .await
}

/// A sender's drop with its request, as its token finds it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DropRow {
    pub id: DropId,
    pub request_id: RequestId,
    pub sender_name: String,
    pub note: Option<String>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// Starts a sender's drop; its token is stored as `token_digest`.
pub async fn start_drop(
    pool: &PgPool,
    request_id: RequestId,
    token_digest: &[u8],
    sender_name: &str,
    note: Option<&str>,
) -> Result<DropId, sqlx::Error> {
    sqlx::query_scalar(
        "insert into request_drops (id, request_id, token_digest, sender_name, note)
         values ($1, $2, $3, $4, $5) returning id",
    )
    .bind(DropId::random())
    .bind(request_id)
    .bind(token_digest)
    .bind(sender_name)
    .bind(note)
    .fetch_one(pool)
    .await
}

/// The drop a token opens. With `lock`, its row is locked for the rest of the transaction, so
/// the files one sender announces are counted one at a time.
pub async fn drop_by_token(
    conn: &mut PgConnection,
    token_digest: &[u8],
    lock: bool,
) -> Result<Option<DropRow>, sqlx::Error> {
    let lock = if lock { " for no key update" } else { "" };
    sqlx::query_as(&format!(
        "select id, request_id, sender_name, note, finished_at from request_drops where token_digest = $1{lock}"
    ))
    .bind(token_digest)
    .fetch_optional(conn)
    .await
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ArrivalRow {
    pub id: ArrivalId,
    pub request_id: RequestId,
    pub drop_id: DropId,
    pub object_key: String,
    pub file_name: String,
    pub file_size: i64,
    pub mime_type: String,
    #[sqlx(try_from = "String")]
    pub kind: FileKind,
    pub file_id: Option<FileId>,
}

const ARRIVAL_COLUMNS: &str =
    "id, request_id, drop_id, object_key, file_name, file_size, mime_type, kind, file_id";

/// The file of this name and size the drop announced and has not sent yet: announcing it again
/// resumes its upload.
pub async fn pending_arrival(
    conn: &mut PgConnection,
    drop_id: DropId,
    file_name: &str,
    file_size: i64,
) -> Result<Option<ArrivalRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {ARRIVAL_COLUMNS} from request_arrivals
         where drop_id = $1 and file_name = $2 and file_size = $3 and file_id is null
         order by created_at desc limit 1"
    ))
    .bind(drop_id)
    .bind(file_name)
    .bind(file_size)
    .fetch_optional(conn)
    .await
}

/// The files a drop has sent or is sending: recorded and still there, or holding a
/// reservation.
pub async fn files_of_drop(conn: &mut PgConnection, drop_id: DropId) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "select count(*) from request_arrivals a
         where a.drop_id = $1
           and (a.file_id is not null
                or exists (select 1 from upload_reservations r where r.object_key = a.object_key))",
    )
    .bind(drop_id)
    .fetch_one(conn)
    .await
}

/// Records a file a sender announces; its bytes are reserved by the caller.
pub async fn announce(conn: &mut PgConnection, arrival: &ArrivalRow) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into request_arrivals (id, request_id, drop_id, object_key, file_name, file_size, mime_type, kind)
         values ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(arrival.id)
    .bind(arrival.request_id)
    .bind(arrival.drop_id)
    .bind(&arrival.object_key)
    .bind(&arrival.file_name)
    .bind(arrival.file_size)
    .bind(&arrival.mime_type)
    .bind(arrival.kind.as_str())
    .execute(conn)
    .await?;
    Ok(())
}

/// One of the drop's arrivals.
pub async fn arrival<'e>(
    conn: impl sqlx::PgExecutor<'e>,
    drop_id: DropId,
    id: ArrivalId,
) -> Result<Option<ArrivalRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {ARRIVAL_COLUMNS} from request_arrivals where id = $1 and drop_id = $2"
    ))
    .bind(id)
    .bind(drop_id)
    .fetch_optional(conn)
    .await
}

/// The arrivals a drop announced and did not send: uploads to give up once it finishes.
pub async fn unsent(conn: &mut PgConnection, drop_id: DropId) -> Result<Vec<ArrivalRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {ARRIVAL_COLUMNS} from request_arrivals where drop_id = $1 and file_id is null"
    ))
    .bind(drop_id)
    .fetch_all(conn)
    .await
}

/// Links an arrival to the file it became (in the transaction that records the file).
pub async fn arrived(conn: &mut PgConnection, id: ArrivalId, file_id: FileId) -> Result<(), sqlx::Error> {
    sqlx::query("update request_arrivals set file_id = $2 where id = $1 and file_id is null")
        .bind(id)
        .bind(file_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Finishes a drop not finished yet (its row locked by the caller) and writes its one `drop`
/// event for the owner when it sent anything still there; answers when it finished and its
/// files. The sender's `/finish-request-drop` and the sweep (for senders who never said) both
/// end a drop here.
pub async fn finish_drop(
    conn: &mut PgConnection,
    drop: &DropRow,
    request: &RequestRow,
) -> Result<(DateTime<Utc>, Vec<DroppedFile>), sqlx::Error> {
    let files = drop_files(&mut *conn, drop.id).await?;
    if let Some(time) = drop.finished_at {
        return Ok((time, files));
    }
    let time = sqlx::query_scalar(
        "update request_drops set finished_at = now() where id = $1 returning finished_at",
    )
    .bind(drop.id)
    .fetch_one(&mut *conn)
    .await?;
    if !files.is_empty() {
        let fields = serde_json::json!({
            "sender": { "name": drop.sender_name },
            "note": drop.note,
            "request": { "id": request.id, "title": request.title, "dropId": drop.id },
            "files": files,
        });
        events::record(&mut *conn, request.user_id, EventKind::Drop, request.id, fields).await?;
    }
    Ok((time, files))
}

/// Drops nobody finished whose last file was recorded before `idle_since` and that have no
/// upload under way: their senders left without saying they were done.
pub async fn idle_drops(pool: &PgPool, idle_since: DateTime<Utc>) -> Result<Vec<DropId>, sqlx::Error> {
    sqlx::query_scalar(
        "select d.id from request_drops d
         where d.finished_at is null
           and exists (select 1 from request_arrivals a where a.drop_id = d.id and a.file_id is not null)
           and not exists (select 1 from request_arrivals a join files f on f.id = a.file_id
                           where a.drop_id = d.id and f.created_at >= $1)
           and not exists (select 1 from request_arrivals a join upload_reservations r on r.object_key = a.object_key
                           where a.drop_id = d.id)",
    )
    .bind(idle_since)
    .fetch_all(pool)
    .await
}

/// Finishes a drop its sender left (see [`idle_drops`]); false when it was finished meanwhile.
pub async fn finish_idle_drop(pool: &PgPool, id: DropId) -> Result<bool, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let drop: Option<DropRow> = sqlx::query_as(
        "select id, request_id, sender_name, note, finished_at from request_drops where id = $1 for no key update",
    )
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(drop) = drop.filter(|d| d.finished_at.is_none()) else {
        return Ok(false);
    };
    let request = find(&mut *tx, drop.request_id).await?.expect("a drop's request");
    finish_drop(&mut tx, &drop, &request).await?;
    tx.commit().await?;
    Ok(true)
}

/// A file that arrived, as drops list it.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DroppedFile {
    pub id: FileId,
    #[serde(rename = "type")]
    #[sqlx(try_from = "String")]
    pub kind: FileKind,
    pub file_name: String,
    pub file_size: i64,
    pub mime_type: String,
    /// The job a folder rule (the request's `onArrival`, say) started on this file, the first
    /// when several did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_id: Option<JobId>,
}

/// A drop as the owner sees it: its files still there.
#[derive(Debug, Clone)]
pub struct DropListing {
    pub id: DropId,
    pub request_id: RequestId,
    pub sender_name: String,
    pub note: Option<String>,
    /// When its first file was recorded.
    pub arrived_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub viewed: bool,
    pub files: Vec<DroppedFile>,
}

#[derive(sqlx::FromRow)]
struct DroppedRow {
    drop_id: DropId,
    request_id: RequestId,
    sender_name: String,
    note: Option<String>,
    finished_at: Option<DateTime<Utc>>,
    viewed: bool,
    arrived_at: DateTime<Utc>,
    #[sqlx(flatten)]
    file: DroppedFile,
}

/// The drops of these requests that have files still there (within `folder`, a stored path,
/// when given), each with those files in the order they arrived; drops oldest first.
pub async fn drops(
    pool: &PgPool,
    request_ids: &[RequestId],
    folder: Option<&str>,
) -> Result<Vec<DropListing>, sqlx::Error> {
    let rows: Vec<DroppedRow> = sqlx::query_as(&format!(
        "select d.id as drop_id, d.request_id, d.sender_name, d.note, d.finished_at, d.viewed,
                f.created_at as arrived_at, f.id, f.kind, f.file_name, f.file_size, f.mime_type,
                ({RULE_JOB}) as job_id
         from request_drops d
         join request_arrivals a on a.drop_id = d.id
         join files f on f.id = a.file_id
         left join folders fo on fo.id = f.folder_id
         where d.request_id = any($1) and f.trashed_at is null
           and ($2::text is null or path_within(fo.path, $2))
         order by d.created_at, d.id, f.created_at, f.id"
    ))
    .bind(request_ids)
    .bind(folder)
    .fetch_all(pool)
    .await?;
    let mut drops: Vec<DropListing> = Vec::new();
    for row in rows {
        match drops.last_mut() {
            Some(last) if last.id == row.drop_id => last.files.push(row.file),
            _ => drops.push(DropListing {
                id: row.drop_id,
                request_id: row.request_id,
                sender_name: row.sender_name,
                note: row.note,
                arrived_at: row.arrived_at,
                finished_at: row.finished_at,
                viewed: row.viewed,
                files: vec![row.file],
            }),
        }
    }
    Ok(drops)
}

/// The first job a folder rule started on file `f`.
const RULE_JOB: &str = "select h.job_id from folder_rule_hits h where h.file_id = f.id and h.job_id is not null \
                        order by h.hit_at, h.id limit 1";

/// The files a drop sent that are still there, for its `drop` event.
pub async fn drop_files(conn: &mut PgConnection, id: DropId) -> Result<Vec<DroppedFile>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select f.id, f.kind, f.file_name, f.file_size, f.mime_type, ({RULE_JOB}) as job_id
         from request_arrivals a join files f on f.id = a.file_id
         where a.drop_id = $1 and f.trashed_at is null
         order by f.created_at, f.id"
    ))
    .bind(id)
    .fetch_all(conn)
    .await
}

/// The owner has now seen these drops.
pub async fn mark_viewed(pool: &PgPool, ids: &[DropId]) -> Result<(), sqlx::Error> {
    sqlx::query("update request_drops set viewed = true where id = any($1) and not viewed")
        .bind(ids)
        .execute(pool)
        .await?;
    Ok(())
}

/// Deletes one of the caller's file requests: its link stops working and its drops and rules
/// go; what arrived stays as the owner's files. Uploads its senders have under way keep their
/// reservations, now the owner's alone, which lapse as they would have (and the sweep removes
/// what they left). False when the caller has no such request.
pub async fn delete(conn: &mut PgConnection, user_id: UserId, id: RequestId) -> Result<bool, sqlx::Error> {
    sqlx::query("update upload_reservations set request_id = null where request_id = $1 and user_id = $2")
        .bind(id)
        .bind(user_id)
        .execute(&mut *conn)
        .await?;
    let deleted = sqlx::query("delete from file_requests where id = $1 and user_id = $2")
        .bind(id)
        .bind(user_id)
        .execute(conn)
        .await?;
    Ok(deleted.rows_affected() == 1)
}
