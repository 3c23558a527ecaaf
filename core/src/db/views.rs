//! Views: opens of a file by anyone but its owner. Each open counts; the first open of a day by
//! a viewer also makes a `view` drive event for the owner.

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::id::{FileId, UserId};
use crate::storage::Bucket;

use crate::db::events::{self, EventKind};

/// Records one open of `file` (owned by `owner`) by `viewer` (`None`: someone not signed in).
/// Opens by the owner are not views and record nothing.
pub async fn record(
    conn: &mut PgConnection,
    owner: UserId,
    file: serde_json::Value,
    file_id: FileId,
    viewer: Option<UserId>,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    if viewer == Some(owner) {
        return Ok(());
    }
    let first_today: bool = sqlx::query_scalar(
        "insert into file_views (file_id, day, viewer, opens, last_time)
         values ($1, $2, $3, 1, $4)
         on conflict (file_id, day, viewer) do update
             set opens = file_views.opens + 1, last_time = excluded.last_time
         returning xmax = 0",
    )
    .bind(file_id)
    .bind(now.date_naive())
    .bind(viewer.map_or(Uuid::nil(), UserId::as_uuid))
    .bind(now)
    .fetch_one(&mut *conn)
    .await?;
    if first_today {
        // Nobody is named until a file can be shared with someone: viewers are counted only.
        let fields = serde_json::json!({ "viewer": null, "file": file });
        events::record(conn, owner, EventKind::View, file_id, fields).await?;
    }
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ViewCount {
    pub id: FileId,
    pub file_name: String,
    pub bucket: Bucket,
    pub views: i64,
    pub all_views: i64,
    pub last_view_time: Option<DateTime<Utc>>,
}

/// View counts of the caller's files: those named (`file_ids`), or else those opened most
/// since `since`; narrowed to a folder subtree (stored path) when given; at most `limit`.
pub async fn counts(
    pool: &PgPool,
    user_id: UserId,
    file_ids: Option<&[FileId]>,
    since: NaiveDate,
    folder: Option<&str>,
    limit: i64,
) -> Result<Vec<ViewCount>, sqlx::Error> {
    sqlx::query_as(
        "select f.id, f.file_name, f.bucket,
                coalesce(sum(v.opens) filter (where v.day >= $3), 0)::bigint as views,
                coalesce(sum(v.opens), 0)::bigint as all_views,
                max(v.last_time) as last_view_time
         from files f
         left join file_views v on v.file_id = f.id
         left join folders d on d.id = f.folder_id
         where f.user_id = $1 and f.derivative_of is null
           and ($2::uuid[] is null or f.id = any($2))
           and ($4::text is null or path_within(d.path, $4))
         group by f.id
         having $2::uuid[] is not null or coalesce(sum(v.opens) filter (where v.day >= $3), 0) > 0
         order by views desc, last_view_time desc nulls last, f.id
         limit $5",
    )
    .bind(user_id)
    .bind(file_ids)
    .bind(since)
    .bind(folder)
    .bind(limit)
    .fetch_all(pool)
    .await
}
