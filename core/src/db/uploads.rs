//! Multipart uploads the service opened. The store is the truth about which parts exist;
//! a row remembers the plan (size, part size) and whether the upload is open, complete or
//! aborted, so a repeated complete or abort can answer as the spec says.

use crate::id::{UploadId, UserId};
use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::multipart::PartPlan;
pub use drive_domain::upload::UploadState;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UploadRow {
    pub id: UploadId,
    pub user_id: UserId,
    pub object_key: String,
    pub upload_id: String,
    pub file_size: i64,
    pub part_size: i64,
    pub state: UploadState,
    pub created_at: DateTime<Utc>,
}

impl UploadRow {
    pub fn plan(&self) -> PartPlan {
        let plan = PartPlan::for_size(self.file_size);
        debug_assert_eq!(plan.part_size, self.part_size);
        plan
    }
}

const COLUMNS: &str = "id, user_id, object_key, upload_id, file_size, part_size, state, created_at";

/// The open upload under a key, if the caller has one.
pub async fn open_under_key(
    pool: &PgPool,
    user_id: UserId,
    object_key: &str,
) -> Result<Option<UploadRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from multipart_uploads where user_id = $1 and object_key = $2 and state = 'open'"
    ))
    .bind(user_id)
    .bind(object_key)
    .fetch_optional(pool)
    .await
}

/// The newest upload under a key that was not given up (open or complete), if the caller has
/// one: what a sender's finished file completes, or has completed.
pub async fn latest_under_key(
    pool: &PgPool,
    user_id: UserId,
    object_key: &str,
) -> Result<Option<UploadRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from multipart_uploads
         where user_id = $1 and object_key = $2 and state <> 'aborted'
         order by created_at desc limit 1"
    ))
    .bind(user_id)
    .bind(object_key)
    .fetch_optional(pool)
    .await
}

/// One of the caller's uploads by id; another user's id finds nothing.
pub async fn find_owned(
    pool: &PgPool,
    user_id: UserId,
    id: UploadId,
) -> Result<Option<UploadRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from multipart_uploads where id = $1 and user_id = $2"
    ))
    .bind(id)
    .bind(user_id)
    .fetch_optional(pool)
    .await
}

/// Records a newly opened upload. At most one upload per key is open: a concurrent create
/// under the same key fails on the `multipart_uploads_one_open_per_key` index.
pub async fn insert(
    pool: &PgPool,
    user_id: UserId,
    object_key: &str,
    upload_id: &str,
    plan: PartPlan,
) -> Result<UploadRow, sqlx::Error> {
    sqlx::query_as(&format!(
        "insert into multipart_uploads (id, user_id, object_key, upload_id, file_size, part_size, state)
         values ($1, $2, $3, $4, $5, $6, 'open')
         returning {COLUMNS}"
    ))
    .bind(UploadId::random())
    .bind(user_id)
    .bind(object_key)
    .bind(upload_id)
    .bind(plan.file_size)
    .bind(plan.part_size)
    .fetch_one(pool)
    .await
}

pub async fn set_state(pool: &PgPool, id: UploadId, state: UploadState) -> Result<(), sqlx::Error> {
    sqlx::query("update multipart_uploads set state = $2 where id = $1")
        .bind(id)
        .bind(state.as_str())
        .execute(pool)
        .await?;
    Ok(())
}

/// Every open upload, oldest first, for the sweep that aborts idle ones.
pub async fn all_open(pool: &PgPool) -> Result<Vec<UploadRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from multipart_uploads where state = 'open' order by created_at"
    ))
    .fetch_all(pool)
    .await
}
