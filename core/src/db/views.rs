//! Views: opens of a file by anyone but its owner. Each open counts; the first open of a day by
//! a viewer also makes a `view` drive event for the owner.

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::id::{FileId, UserId};
use crate::storage::Bucket;

use crate::db::events::{self, EventKind};
use crate::db::files::FileRow;
use crate::db::shares;

/// Records one open of `file` (its record as events show it) by `viewer` (`None`: someone not
/// signed in). Opens by the owner are not views and record nothing. The day's first open by a
/// viewer makes a `view` event, naming the viewer only when the file is shared with them and
/// they let it be known.
pub async fn record(
    conn: &mut PgConnection,
    file: &FileRow,
    record: serde_json::Value,
    viewer: Option<UserId>,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let (owner, file_id) = (file.user_id, file.id);
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
        let named = match viewer {
            Some(viewer) => shares::named_viewer(&mut *conn, file, viewer).await?,
            None => None,
        };
        let viewer = named.map(
            |(handle, display_name)| serde_json::json!({ "handle": handle, "displayName": display_name }),
        );
        let fields = serde_json::json!({ "viewer": viewer, "file": record });
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

/// A viewer named to the owner: someone a file is shared with, who lets it be known.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct NamedViewer {
    pub file_id: FileId,
    pub handle: String,
    pub display_name: Option<String>,
    pub last_day: NaiveDate,
    pub views: i64,
}

/// The named viewers of `file_ids` since `since`, most recent first: those the file is shared
/// with now and who let it be known now (one who turns it off is no longer named).
pub async fn named(
    pool: &PgPool,
    file_ids: &[FileId],
    since: NaiveDate,
) -> Result<Vec<NamedViewer>, sqlx::Error> {
    sqlx::query_as(
        "select v.file_id, u.handle, u.display_name, max(v.day) as last_day, sum(v.opens)::bigint as views
         from file_views v
         join files f on f.id = v.file_id
         join users u on u.id = v.viewer
         where v.file_id = any($1) and v.day >= $2 and u.show_views and shared_with(f.id, f.folder_id, u.id)
         group by v.file_id, u.id
         order by max(v.last_time) desc",
    )
    .bind(file_ids)
    .bind(since)
    .fetch_all(pool)
    .await
}
