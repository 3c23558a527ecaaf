//! Job templates: a pipeline's steps kept under a name, the account's own.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::id::{TemplateId, UserId};
use crate::job::{JobSpec, JobType};

/// How many templates one account may keep.
pub const MAX_TEMPLATES: i64 = 200;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TemplateRow {
    pub id: TemplateId,
    pub name: String,
    pub options: serde_json::Value,
    pub created_at: DateTime<Utc>,
}

impl TemplateRow {
    /// The pipeline it keeps.
    pub fn spec(&self) -> Result<JobSpec, serde_json::Error> {
        JobSpec::from_row(JobType::Pipeline, self.options.clone())
    }
}

/// What making a template came to.
pub enum Made {
    New(TemplateRow),
    /// The account has a template of that name.
    NameTaken,
    /// The account keeps [`MAX_TEMPLATES`] already.
    Full,
}

/// Keeps `spec` (a pipeline) as `name`, under the account's lock.
pub async fn create(pool: &PgPool, user_id: UserId, name: &str, spec: &JobSpec) -> Result<Made, sqlx::Error> {
    let mut tx = pool.begin().await?;
    // `no key update`: see `reservations::reserve`.
    sqlx::query("select 1 from users where id = $1 for no key update")
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
    let kept: i64 = sqlx::query_scalar("select count(*) from job_templates where user_id = $1")
        .bind(user_id)
        .fetch_one(&mut *tx)
        .await?;
    if kept >= MAX_TEMPLATES {
        return Ok(Made::Full);
    }
    let row: Option<TemplateRow> = sqlx::query_as(
        "insert into job_templates (id, user_id, name, options) values ($1, $2, $3, $4)
         on conflict (user_id, name) do nothing
         returning id, name, options, created_at",
    )
    .bind(TemplateId::random())
    .bind(user_id)
    .bind(name)
    .bind(spec.options())
    .fetch_optional(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(row.map_or(Made::NameTaken, Made::New))
}

/// The account's templates, by name.
pub async fn list(pool: &PgPool, user_id: UserId) -> Result<Vec<TemplateRow>, sqlx::Error> {
    sqlx::query_as(
        "select id, name, options, created_at from job_templates where user_id = $1 order by name, id",
    )
    .bind(user_id)
    .fetch_all(pool)
    .await
}

/// The account's template `id`.
pub async fn find(
    pool: &PgPool,
    user_id: UserId,
    id: TemplateId,
) -> Result<Option<TemplateRow>, sqlx::Error> {
    sqlx::query_as("select id, name, options, created_at from job_templates where id = $1 and user_id = $2")
        .bind(id)
        .bind(user_id)
        .fetch_optional(pool)
        .await
}

/// Removes the account's template `id`; answers whether it was there.
pub async fn delete(pool: &PgPool, user_id: UserId, id: TemplateId) -> Result<bool, sqlx::Error> {
    let gone = sqlx::query("delete from job_templates where id = $1 and user_id = $2")
        .bind(id)
        .bind(user_id)
        .execute(pool)
        .await?;
    Ok(gone.rows_affected() > 0)
}
