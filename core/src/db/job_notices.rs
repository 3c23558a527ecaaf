//! A job's end sent to its caller's `notifyUrl`: the notice written in the end's transaction,
//! leased by one deliverer at a time, marked delivered or due again later.

use std::time::Duration;

use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::id::{JobId, UserId};

/// A notice to send now, held by the deliverer that claimed it until its lease ends.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DueJobNotice {
    pub job_id: JobId,
    pub user_id: UserId,
    pub url: String,
    pub client_metadata: Option<serde_json::Value>,
    /// Sends tried before this one.
    pub attempts: i32,
}

/// Writes the notice of job `id`'s end when its caller gave a `notifyUrl` (in the end's
/// transaction); a job tried again and ended again is notified again.
pub async fn write(conn: &mut PgConnection, id: JobId) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into job_notices (job_id)
         select id from file_jobs where id = $1 and notify_url is not null
         on conflict (job_id) do update
         set due_at = now(), attempts = 0, held_by = null, last_error = null, delivered_at = null",
    )
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Leases up to `limit` notices due now to `deliverer` for `lease`.
pub async fn claim_due(
    pool: &PgPool,
    deliverer: Uuid,
    lease: Duration,
    limit: i64,
) -> Result<Vec<DueJobNotice>, sqlx::Error> {
    sqlx::query_as(
        "with due as (
             select job_id from job_notices
             where delivered_at is null and due_at <= now()
             order by due_at limit $3
             for update skip locked
         )
         update job_notices n set held_by = $1, due_at = now() + make_interval(secs => $2)
         from due, file_jobs j
         where n.job_id = due.job_id and j.id = n.job_id
         returning n.job_id, j.user_id, j.notify_url as url, j.client_metadata, n.attempts",
    )
    .bind(deliverer)
    .bind(lease.as_secs_f64())
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// Marks a notice `deliverer` holds as delivered.
pub async fn delivered(pool: &PgPool, id: JobId, deliverer: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update job_notices set delivered_at = now(), held_by = null where job_id = $1 and held_by = $2",
    )
    .bind(id)
    .bind(deliverer)
    .execute(pool)
    .await?;
    Ok(())
}

/// Notes a failed send of a notice `deliverer` holds: due again at `retry_at`, or given up on
/// (`None`: kept with its last error, due never again).
pub async fn failed(
    pool: &PgPool,
    id: JobId,
    deliverer: Uuid,
    why: &str,
    retry_at: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update job_notices
         set attempts = attempts + 1, last_error = $3, held_by = null,
             due_at = coalesce($4, 'infinity')
         where job_id = $1 and held_by = $2",
    )
    .bind(id)
    .bind(deliverer)
    .bind(why)
    .bind(retry_at)
    .execute(pool)
    .await?;
    Ok(())
}
