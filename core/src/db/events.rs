//! The drive event log: one row per event, its kind-specific fields kept as JSON exactly as
//! the feed answers them.

use chrono::{DateTime, Utc};
use sqlx::{PgPool, Postgres, QueryBuilder};
use uuid::Uuid;

use crate::id::{EventId, UserId};
pub use drive_domain::event::EventKind;

/// Records one event for `user_id`: `subject` is what it is about (see the migration), and
/// `fields` are the kind's added fields exactly as the feed shows them (for a `file` event,
/// `{ "file": … }`). Every feature emits its events through this one function, or through
/// [`record_many`] for many of one kind at once.
pub async fn record(
    conn: &mut sqlx::PgConnection,
    user_id: UserId,
    kind: EventKind,
    subject: impl Into<Uuid>,
    fields: serde_json::Value,
) -> Result<EventId, sqlx::Error> {
    sqlx::query_scalar(
        "insert into drive_events (id, user_id, kind, subject_id, fields)
         values ($1, $2, $3, $4, $5) returning id",
    )
    .bind(EventId::random())
    .bind(user_id)
    .bind(kind.as_str())
    .bind(subject.into())
    .bind(fields)
    .fetch_one(conn)
    .await
}

/// Records events of one `kind` for `user_id` in one statement, in the order given: each its
/// subject and fields, as [`record`] takes them.
pub async fn record_many(
    conn: &mut sqlx::PgConnection,
    user_id: UserId,
    kind: EventKind,
    events: Vec<(Uuid, serde_json::Value)>,
) -> Result<(), sqlx::Error> {
    if events.is_empty() {
        return Ok(());
    }
    let ids: Vec<Uuid> = events.iter().map(|_| EventId::random().into()).collect();
    let (subjects, fields): (Vec<Uuid>, Vec<serde_json::Value>) = events.into_iter().unzip();
    sqlx::query(
        "insert into drive_events (id, user_id, kind, subject_id, fields)
         select id, $2, $3, subject, fields
         from unnest($1::uuid[], $4::uuid[], $5::jsonb[]) with ordinality as e(id, subject, fields, n)
         order by n",
    )
    .bind(ids)
    .bind(user_id)
    .bind(kind.as_str())
    .bind(subjects)
    .bind(fields)
    .execute(conn)
    .await?;
    Ok(())
}

/// A position in the feed: every event at or before it has been handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor {
    pub xid: u64,
    pub seq: i64,
}

impl Cursor {
    /// The cursor as clients see it: opaque, but plain text.
    pub fn encode(self) -> String {
        format!("c{}.{}", self.xid, self.seq)
    }

    pub fn decode(s: &str) -> Option<Cursor> {
        let (xid, seq) = s.strip_prefix('c')?.split_once('.')?;
        Some(Cursor {
            xid: xid.parse().ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

/// Where a page starts: after a cursor, or at a time.
#[derive(Debug, Clone, Copy)]
pub enum Since {
    Cursor(Cursor),
    Time(DateTime<Utc>),
}

/// Which events a page holds; every filter given narrows it.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub kinds: Option<Vec<EventKind>>,
    /// `(kind, subject)`: only events of that kind about that subject; several must all hold.
    pub subjects: Vec<(EventKind, Uuid)>,
    /// A folder's stored path (`/a/b`): only events about a file in it or in a folder inside it.
    pub folder: Option<String>,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EventRow {
    pub id: EventId,
    pub kind: EventKind,
    pub time: DateTime<Utc>,
    pub fields: serde_json::Value,
    /// The inserting transaction's id as text (sqlx has no xid8 type). Named apart from the
    /// `xid` column so that `order by xid` sorts by the number, not by this text.
    pub xid_text: String,
    pub seq: i64,
}

impl EventRow {
    /// Where this event is in the feed: a cursor right after it.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            xid: self.xid_text.parse().unwrap_or_default(),
            seq: self.seq,
        }
    }

    /// The event as the feed and the webhooks send it: `kind`, `id`, `time` and its kind's
    /// fields.
    pub fn into_json(self) -> serde_json::Value {
        let mut event = serde_json::json!({ "kind": self.kind, "id": self.id, "time": self.time });
        if let (Some(event), serde_json::Value::Object(fields)) = (event.as_object_mut(), self.fields) {
            event.extend(fields);
        }
        event
    }
}

pub struct Page {
    pub events: Vec<EventRow>,
    pub next: Cursor,
    pub more: bool,
}

/// One page of the caller's feed, oldest first.
pub async fn page(
    pool: &PgPool,
    user_id: UserId,
    since: Since,
    filter: &Filter,
    limit: i64,
) -> Result<Page, sqlx::Error> {
    // One snapshot for the bound and the rows, so the cursor handed out matches what was seen.
    let mut tx = pool.begin().await?;
    sqlx::query("set transaction isolation level repeatable read read only")
        .execute(&mut *tx)
        .await?;
    let xmin: String = sqlx::query_scalar("select pg_snapshot_xmin(pg_current_snapshot())::text")
        .fetch_one(&mut *tx)
        .await?;
    let (after, from_time) = match since {
        Since::Cursor(c) => (Some(c), None),
        Since::Time(t) => (None, Some(t)),
    };
    // Only the conditions asked for go into the statement: a catch-all `$n is null or …` would
    // keep PostgreSQL's reused plan from walking the (user, xid, seq) index to the cursor.
    let mut q: QueryBuilder<Postgres> = QueryBuilder::new(
        "select id, kind, time, fields, xid::text as xid_text, seq from drive_events where user_id = ",
    );
    q.push_bind(user_id);
    q.push(" and xid < ").push_bind(&xmin).push("::text::xid8");
    if let Some(c) = after {
        q.push(" and (xid, seq) > (")
            .push_bind(c.xid.to_string())
            .push("::text::xid8, ");
        q.push_bind(c.seq).push(")");
    }
    if let Some(t) = from_time {
        q.push(" and time >= ").push_bind(t);
    }
    if let Some(kinds) = &filter.kinds {
        let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        q.push(" and kind = any(").push_bind(kinds).push(")");
    }
    for (kind, subject) in &filter.subjects {
        q.push(" and kind = ").push_bind(kind.as_str());
        q.push(" and subject_id = ").push_bind(*subject);
    }
    if let Some(folder) = &filter.folder {
        q.push(
            " and exists (select 1 from files f join folders d on d.id = f.folder_id
                          where f.id = drive_events.subject_id and path_within(d.path, ",
        );
        q.push_bind(folder.clone()).push("))");
    }
    q.push(" order by xid, seq limit ").push_bind(limit + 1);
    let mut rows: Vec<EventRow> = q.build_query_as().fetch_all(&mut *tx).await?;
    tx.commit().await?;

    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next = match rows.last() {
        Some(last) if more => last.cursor(),
        // Every event of a transaction before xmin was seen: the next page starts past them
        // all, however few matched.
        _ => Cursor {
            xid: xmin.parse::<u64>().unwrap_or(1).saturating_sub(1),
            seq: i64::MAX,
        },
    };
    Ok(Page {
        events: rows,
        next,
        more,
    })
}
