//! The events a mirror of the drive follows: a file trashed, restored, deleted, moved, renamed
//! or switched public or private, and a folder moved or deleted. Each is written in the
//! transaction of the change it tells, so a client following the feed never misses one; the
//! feed and the webhooks send these kinds only to a caller that names them
//! ([`EventKind::contract`] is what the others get).
//!
//! Their fields: `{ file }` (the file record as it now stands) for `trashed`, `restored` and
//! `access`; `{ file, fromFolderId }` for a file `moved`, `{ file, fromName }` for `renamed`;
//! `{ file: { id, fileName, folderId } }` for a file `deleted`; `{ folder: { id, path },
//! fromPath }` for a folder `moved` (everything in it moved with it) and `{ folder }` for a
//! folder `deleted` (its files went to the trash first, each with its own `trashed` event).

use serde_json::{Map, Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::db::events::{self, EventKind};
use crate::db::files::FileRow;
use crate::id::{FolderId, UserId};
use crate::records::FileRecord;

/// One event of `kind` per file of `files`, each `{ file }` and the fields `more` adds for it.
pub async fn files_changed(
    conn: &mut PgConnection,
    user_id: UserId,
    kind: EventKind,
    files: &[FileRow],
    more: impl Fn(&FileRow) -> Map<String, Value>,
) -> Result<(), sqlx::Error> {
    let events = files
        .iter()
        .map(|file| {
            let mut fields = more(file);
            fields.insert("file".into(), json!(FileRecord::with_url(file, None)));
            (Uuid::from(file.id), Value::Object(fields))
        })
        .collect();
    events::record_many(conn, user_id, kind, events).await
}

/// Nothing but the file record: `trashed`, `restored`, `access`.
pub fn nothing_more(_: &FileRow) -> Map<String, Value> {
    Map::new()
}

/// A folder `moved` from `from_path` or (`from_path` `None`) `deleted`.
pub async fn folder_changed(
    conn: &mut PgConnection,
    user_id: UserId,
    folder: FolderId,
    path: &str,
    from_path: Option<&str>,
) -> Result<(), sqlx::Error> {
    let mut fields = json!({ "folder": { "id": folder, "path": path } });
    let kind = match from_path {
        Some(from) => {
            fields["fromPath"] = json!(from);
            EventKind::Moved
        }
        None => EventKind::Deleted,
    };
    events::record_many(conn, user_id, kind, vec![(Uuid::from(folder), fields)]).await
}

/// Files deleted for good: `(id, fileName, folderId)` of each.
pub async fn files_deleted(
    conn: &mut PgConnection,
    user_id: UserId,
    gone: &[(Uuid, String, Option<FolderId>)],
) -> Result<(), sqlx::Error> {
    let events = gone
        .iter()
        .map(|(id, name, folder)| {
            (
                *id,
                json!({ "file": { "id": id, "fileName": name, "folderId": folder } }),
            )
        })
        .collect();
    events::record_many(conn, user_id, EventKind::Deleted, events).await
}
