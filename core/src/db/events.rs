//! The drive event log: one row per event, its kind-specific fields kept as JSON exactly as
//! the feed answers them.

use serde::Serialize;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    Drop,
    Note,
    View,
    File,
    Generation,
    Job,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Drop => "drop",
            EventKind::Note => "note",
            EventKind::View => "view",
            EventKind::File => "file",
            EventKind::Generation => "generation",
            EventKind::Job => "job",
        }
    }
}

/// Records one event for `user_id`; `fields` are the kind's added fields (for a `file`
/// event, `{ "file": … }`).
pub async fn record(
    conn: &mut sqlx::PgConnection,
    user_id: Uuid,
    kind: EventKind,
    fields: serde_json::Value,
) -> Result<Uuid, sqlx::Error> {
    sqlx::query_scalar(
        "insert into drive_events (id, user_id, kind, fields) values ($1, $2, $3, $4) returning id",
    )
    .bind(Uuid::new_v4())
    .bind(user_id)
    .bind(kind.as_str())
    .bind(fields)
    .fetch_one(conn)
    .await
}
