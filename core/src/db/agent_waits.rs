//! Agent tasks waiting for something to happen (see the migration): begun by a held task, at
//! most [`MAX_WAITING`] per account; woken by the drive event feed, a closing or the end of
//! their time; then taken up by a worker like any task and resumed where they stopped.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use super::events::{EventKind, EventRow};
use crate::id::{TaskId, UserId};

/// Waiting tasks one account may have at once.
pub const MAX_WAITING: i64 = 20;
/// The longest a wait lasts.
pub const LONGEST: chrono::TimeDelta = chrono::TimeDelta::days(30);
/// Events handed to the model when a wait ends.
const EVENTS_TOLD: i64 = 10;

/// A wait to begin: what it waits on, and the conversation to go on with.
#[derive(Debug, Clone)]
pub struct NewWait {
    pub kind: EventKind,
    /// What it waits on, or, for a folder, `None` and the folder's path (folders inside it
    /// count too).
    pub subject: Option<Uuid>,
    pub folder: Option<String>,
    /// The database's snapshot when the agent asked to wait ([`position`]).
    pub after: Snapshot,
    pub until: DateTime<Utc>,
    pub what: String,
    /// The task's status message while it waits.
    pub status: crate::a2a::Message,
    pub transcript: serde_json::Value,
    pub call_id: String,
    pub links: serde_json::Value,
}

/// A wait that has ended, as the task resumes from it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Woken {
    pub transcript: serde_json::Value,
    pub call_id: String,
    pub links: serde_json::Value,
    pub happened: serde_json::Value,
}

pub enum Begun {
    Waiting,
    /// Why not (told to the model).
    Refused(String),
    /// The task is no longer the worker's (canceled meanwhile).
    Lost,
}

/// Where the event log stands: a database snapshot (as text), which tells the transactions
/// committed before it from those that were not.
#[derive(Debug, Clone)]
pub struct Snapshot(String);

/// The event log now: a wait from here is answered only by events this does not see, so none
/// from before counts and none after is missed, however transactions commit around it.
pub async fn position(pool: &PgPool) -> Result<Snapshot, sqlx::Error> {
    sqlx::query_scalar("select pg_current_snapshot()::text")
        .fetch_one(pool)
        .await
        .map(Snapshot)
}

/// Makes the task `id`, held by `worker`, wait: it lets go of the task (no worker holds a
/// waiting task). Refused when the account has [`MAX_WAITING`] waiting tasks already, or a
/// folder waited on does not exist.
pub async fn begin(
    pool: &PgPool,
    id: TaskId,
    user_id: UserId,
    worker: Uuid,
    wait: &NewWait,
) -> Result<Begun, sqlx::Error> {
    let mut tx = pool.begin().await?;
    // Two waits beginning at once must not both pass the count.
    sqlx::query("select pg_advisory_xact_lock(hashtextextended($1::text, 5))")
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
    let waiting: i64 = sqlx::query_scalar(
        "select count(*) from agent_waits w join agent_tasks t on t.id = w.task_id
         where w.user_id = $1 and w.happened is null and t.state = 'TASK_STATE_WORKING'",
    )
    .bind(user_id)
    .fetch_one(&mut *tx)
    .await?;
    if waiting >= MAX_WAITING {
        return Ok(Begun::Refused(format!(
            "this account has {MAX_WAITING} tasks waiting already, the most it may: \
             nothing is waited for"
        )));
    }
    let subject = match (wait.subject, &wait.folder) {
        (Some(subject), _) => subject,
        (None, folder) => {
            let found = sqlx::query_scalar("select id from folders where user_id = $1 and path = $2")
                .bind(user_id)
                .bind(folder)
                .fetch_optional(&mut *tx)
                .await?;
            match found {
                Some(id) => id,
                None => {
                    return Ok(Begun::Refused(format!(
                        "there is no folder {}",
                        folder.as_deref().unwrap_or("?")
                    )));
                }
            }
        }
    };
    let let_go = sqlx::query(
        "update agent_tasks
         set leased_by = null, leased_until = null, status_message = $3
         where id = $1 and leased_by = $2 and state = 'TASK_STATE_WORKING'",
    )
    .bind(id)
    .bind(worker)
    .bind(serde_json::to_value(&wait.status).expect("a message is JSON"))
    .execute(&mut *tx)
    .await?;
    if let_go.rows_affected() == 0 {
        return Ok(Begun::Lost);
    }
    sqlx::query(
        "insert into agent_waits (task_id, user_id, kind, subject_id, folder, after_snapshot,
                                  until, what, transcript, call_id, links)
         values ($1, $2, $3, $4, $5, $6::text::pg_snapshot, $7, $8, $9, $10, $11)
         on conflict (task_id) do update
         set kind = excluded.kind, subject_id = excluded.subject_id, folder = excluded.folder,
             after_snapshot = excluded.after_snapshot,
             until = excluded.until, what = excluded.what, transcript = excluded.transcript,
             call_id = excluded.call_id, links = excluded.links, happened = null,
             created_at = now()",
    )
    .bind(id)
    .bind(user_id)
    .bind(wait.kind.as_str())
    .bind(subject)
    .bind(&wait.folder)
    .bind(&wait.after.0)
    .bind(wait.until)
    .bind(&wait.what)
    .bind(&wait.transcript)
    .bind(&wait.call_id)
    .bind(&wait.links)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Begun::Waiting)
}

/// Waiting tasks whose wait has an answer: an event after its place, a closing, or its time
/// up; at most `limit`.
pub async fn due(pool: &PgPool, limit: i64) -> Result<Vec<TaskId>, sqlx::Error> {
    sqlx::query_scalar(
        "select w.task_id from agent_waits w join agent_tasks t on t.id = w.task_id
         where w.happened is null and t.state = 'TASK_STATE_WORKING'
           and (w.until < now()
                or wait_closed(w)
                or exists (select 1 from drive_events e
                           where e.user_id = w.user_id
                             and e.xid >= pg_snapshot_xmin(w.after_snapshot)
                             and not pg_visible_in_snapshot(e.xid, w.after_snapshot)
                             and wait_answered_by(w, e)))
         order by w.created_at
         limit $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// Ends the wait of the task `id` with what happened: the events that answer it (oldest first,
/// at most [`EVENTS_TOLD`]), or why it ended without one. The task is then free for a worker to
/// take up. False when it is not waiting (woken by another worker, or not due after all).
pub async fn wake(pool: &PgPool, id: TaskId) -> Result<bool, sqlx::Error> {
    let mut tx = pool.begin().await?;
    // One snapshot for the events and the bound they are read under.
    sqlx::query("set transaction isolation level repeatable read")
        .execute(&mut *tx)
        .await?;
    let Some((what, until, closed)): Option<(String, DateTime<Utc>, bool)> = sqlx::query_as(
        "select what, until, wait_closed(w) from agent_waits w
         where task_id = $1 and happened is null for update skip locked",
    )
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?
    else {
        return Ok(false);
    };
    let events: Vec<EventRow> = sqlx::query_as(
        "select e.id, e.kind, e.time, e.fields, e.xid::text as xid_text, e.seq
         from agent_waits w join drive_events e on e.user_id = w.user_id
         where w.task_id = $1
           and e.xid >= pg_snapshot_xmin(w.after_snapshot)
           and not pg_visible_in_snapshot(e.xid, w.after_snapshot)
           and wait_answered_by(w, e)
         order by e.xid, e.seq
         limit $2",
    )
    .bind(id)
    .bind(EVENTS_TOLD)
    .fetch_all(&mut *tx)
    .await?;
    let happened = if !events.is_empty() {
        let events: Vec<_> = events.into_iter().map(EventRow::into_json).collect();
        serde_json::json!({ "waitedFor": what, "happened": events })
    } else if closed {
        serde_json::json!({ "waitedFor": what, "happened": [], "ended": "what it waited on closed" })
    } else if until <= Utc::now() {
        serde_json::json!({ "waitedFor": what, "happened": [], "ended": "nothing happened before the wait's time ran out" })
    } else {
        // Not due after all (woken by another worker meanwhile).
        return Ok(false);
    };
    sqlx::query("update agent_waits set happened = $2 where task_id = $1")
        .bind(id)
        .bind(&happened)
        .execute(&mut *tx)
        .await?;
    sqlx::query("update agent_tasks set status_message = null where id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(true)
}

/// The ended wait a task resumes from, if it waited.
pub async fn woken(pool: &PgPool, id: TaskId) -> Result<Option<Woken>, sqlx::Error> {
    sqlx::query_as(
        "select transcript, call_id, links, happened from agent_waits
         where task_id = $1 and happened is not null",
    )
    .bind(id)
    .fetch_optional(pool)
    .await
}

/// Whether the task `id` is waiting.
pub async fn is_waiting(pool: &PgPool, id: TaskId) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("select exists (select 1 from agent_waits where task_id = $1 and happened is null)")
        .bind(id)
        .fetch_one(pool)
        .await
}
