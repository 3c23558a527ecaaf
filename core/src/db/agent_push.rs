//! A2A push notifications: the configs a task's caller set (where its status changes go), and
//! the notices waiting to be sent to them. A trigger on `agent_tasks` writes a notice for each
//! config in the transaction that changes a task's state (migration `20261203000000`); the
//! workers' deliverer sends them, oldest first per config, each held by one deliverer at a time.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::id::{ContextId, TaskId};

/// Configs one task may have.
pub const MAX_PER_TASK: i64 = 5;

/// A config as answered (its secrets are never read back out).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ConfigRow {
    pub task_id: TaskId,
    pub id: String,
    pub url: String,
    pub auth_scheme: Option<String>,
}

/// A config to keep; its secrets sealed by the caller ([`crate::sealed::Sealer`], bound by
/// [`seal_binding`]).
pub struct NewConfig<'a> {
    pub task_id: TaskId,
    pub id: &'a str,
    pub url: &'a str,
    pub token_sealed: Option<Vec<u8>>,
    pub auth_scheme: Option<&'a str>,
    pub credentials_sealed: Option<Vec<u8>>,
}

/// What a config's secret is sealed for: its task, its id and which secret it is, so neither
/// opens in another row or in the other's place.
pub fn seal_binding(task_id: TaskId, id: &str, which: &str) -> Vec<u8> {
    [
        task_id.as_uuid().as_bytes().as_slice(),
        id.as_bytes(),
        b"\0",
        which.as_bytes(),
    ]
    .concat()
}

/// Keeps `new`, replacing the task's config of the same id; `None` when the id is new and the
/// task has [`MAX_PER_TASK`] already.
pub async fn put(pool: &PgPool, new: NewConfig<'_>) -> Result<Option<ConfigRow>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    // Two puts at once must not both pass the count.
    sqlx::query("select 1 from agent_tasks where id = $1 for update")
        .bind(new.task_id)
        .execute(&mut *tx)
        .await?;
    let others: i64 =
        sqlx::query_scalar("select count(*) from agent_push_configs where task_id = $1 and id <> $2")
            .bind(new.task_id)
            .bind(new.id)
            .fetch_one(&mut *tx)
            .await?;
    if others >= MAX_PER_TASK {
        return Ok(None);
    }
    let row = upsert(&mut tx, &new).await?;
    tx.commit().await?;
    Ok(Some(row))
}

/// The first notice of a task whose config came with its first message: the state it starts
/// in (working), which no change of state announces (the trigger `agent_push_notice` writes
/// every later one).
pub async fn notice_start(conn: &mut sqlx::PgConnection, task_id: TaskId) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into agent_push_notices (task_id, config_id, state, status_message, status_time)
         select t.id, c.id, t.state, t.status_message, t.status_time
         from agent_tasks t join agent_push_configs c on c.task_id = t.id
         where t.id = $1",
    )
    .bind(task_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes `new` over the task's config of the same id, in the caller's transaction (also the
/// one a task is made in, for a config sent with its first message).
pub async fn upsert(conn: &mut sqlx::PgConnection, new: &NewConfig<'_>) -> Result<ConfigRow, sqlx::Error> {
    sqlx::query_as(
        "insert into agent_push_configs (task_id, id, url, token_sealed, auth_scheme, credentials_sealed)
         values ($1, $2, $3, $4, $5, $6)
         on conflict (task_id, id) do update
         set url = excluded.url, token_sealed = excluded.token_sealed,
             auth_scheme = excluded.auth_scheme, credentials_sealed = excluded.credentials_sealed
         returning task_id, id, url, auth_scheme",
    )
    .bind(new.task_id)
    .bind(new.id)
    .bind(new.url)
    .bind(&new.token_sealed)
    .bind(new.auth_scheme)
    .bind(&new.credentials_sealed)
    .fetch_one(conn)
    .await
}

pub async fn find(pool: &PgPool, task_id: TaskId, id: &str) -> Result<Option<ConfigRow>, sqlx::Error> {
    sqlx::query_as(
        "select task_id, id, url, auth_scheme from agent_push_configs where task_id = $1 and id = $2",
    )
    .bind(task_id)
    .bind(id)
    .fetch_optional(pool)
    .await
}

/// A task's configs by id, after `after`, at most `limit`.
pub async fn list(
    pool: &PgPool,
    task_id: TaskId,
    after: Option<&str>,
    limit: i64,
) -> Result<Vec<ConfigRow>, sqlx::Error> {
    sqlx::query_as(
        "select task_id, id, url, auth_scheme from agent_push_configs
         where task_id = $1 and ($2::text is null or id > $2)
         order by id limit $3",
    )
    .bind(task_id)
    .bind(after)
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// Deletes a config and what waits to be sent to it; false when there was none.
pub async fn delete(pool: &PgPool, task_id: TaskId, id: &str) -> Result<bool, sqlx::Error> {
    let deleted = sqlx::query("delete from agent_push_configs where task_id = $1 and id = $2")
        .bind(task_id)
        .bind(id)
        .execute(pool)
        .await?;
    Ok(deleted.rows_affected() == 1)
}

/// A notice to send, with where and how.
#[derive(Debug, sqlx::FromRow)]
pub struct DueNotice {
    pub id: i64,
    pub task_id: TaskId,
    pub context_id: ContextId,
    pub config_id: String,
    pub url: String,
    pub token_sealed: Option<Vec<u8>>,
    pub auth_scheme: Option<String>,
    pub credentials_sealed: Option<Vec<u8>>,
    pub state: crate::a2a::TaskState,
    pub status_message: Option<serde_json::Value>,
    pub status_time: DateTime<Utc>,
    /// The task's artifacts as they now are (final once the notice's state is).
    pub artifacts: serde_json::Value,
    /// Tries before this one.
    pub attempts: i32,
}

/// Leases to `deliverer` up to `limit` notices that are due, each the oldest of its config (so
/// a config hears its task's changes in order). First drops every notice that failed before and
/// has a newer one behind it: the newer status is sent instead of retrying a stale one.
pub async fn claim_due(
    pool: &PgPool,
    deliverer: uuid::Uuid,
    lease: std::time::Duration,
    limit: i64,
) -> Result<Vec<DueNotice>, sqlx::Error> {
    sqlx::query(
        "delete from agent_push_notices n
         where n.attempts > 0 and (n.leased_until is null or n.leased_until < now())
           and exists (select 1 from agent_push_notices m
                       where m.task_id = n.task_id and m.config_id = n.config_id and m.id > n.id)",
    )
    .execute(pool)
    .await?;
    sqlx::query_as(
        "with due as (
             select n.id from agent_push_notices n
             where n.due_at <= now() and (n.leased_until is null or n.leased_until < now())
               and not exists (select 1 from agent_push_notices o
                               where o.task_id = n.task_id and o.config_id = n.config_id and o.id < n.id)
             order by n.id
             limit $3
             for update skip locked),
         leased as (
             update agent_push_notices n
             set leased_by = $1, leased_until = now() + make_interval(secs => $2)
             from due where n.id = due.id
             returning n.*)
         select l.id, l.task_id, t.context_id, l.config_id, c.url, c.token_sealed, c.auth_scheme,
                c.credentials_sealed, l.state, l.status_message, l.status_time, t.artifacts, l.attempts
         from leased l
         join agent_push_configs c on c.task_id = l.task_id and c.id = l.config_id
         join agent_tasks t on t.id = l.task_id
         order by l.id",
    )
    .bind(deliverer)
    .bind(lease.as_secs_f64())
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// A notice was taken (or is given up): it is done.
pub async fn done(pool: &PgPool, id: i64, deliverer: uuid::Uuid) -> Result<(), sqlx::Error> {
    sqlx::query("delete from agent_push_notices where id = $1 and leased_by = $2")
        .bind(id)
        .bind(deliverer)
        .execute(pool)
        .await?;
    Ok(())
}

/// A notice was not taken: tried again at `retry_at`.
pub async fn retry(
    pool: &PgPool,
    id: i64,
    deliverer: uuid::Uuid,
    retry_at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update agent_push_notices
         set attempts = attempts + 1, due_at = $3, leased_by = null, leased_until = null
         where id = $1 and leased_by = $2",
    )
    .bind(id)
    .bind(deliverer)
    .bind(retry_at)
    .execute(pool)
    .await?;
    Ok(())
}
