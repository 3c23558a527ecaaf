//! The one way a file enters the drive, whatever brings it (an upload, a job's result, an import
//! among them, an unzipped entry, a request's arrival, a generated image): in the
//! caller's transaction the file is recorded with its bytes counted against the account, its
//! drive event is written, an audio, video or picture file gets its metadata reading queued
//! (a copy takes what is known of its source instead),
//! and the rules of the folder it lands in fire. The caller rings the workers' doorbell after
//! its commit (their poll finds the jobs otherwise).

use sqlx::PgConnection;

use crate::db::events::{self, EventKind};
use crate::db::files::{self, FileRow, Insert, NewFile};
use crate::db::{jobs, rules};
use crate::id::JobId;
use crate::records::FileRecord;

/// What [`enter`] did.
#[derive(Debug)]
pub enum Entered {
    /// A new file; `queued` are the jobs queued for it (its metadata reading, its folder's
    /// rules'), to ring for after commit.
    New { file: FileRow, queued: Vec<JobId> },
    /// The file already recorded under that key (a re-sent insert, a retried job): nothing
    /// changed.
    Existing(FileRow),
    /// Recording it would take the account past its limit; nothing changed once the caller
    /// rolls the transaction back. `used` is what the account stores.
    OverQuota { used: i64 },
}

/// Records `file` as entering the drive, announced as an event of `kind` (`file` for uploads
/// and job results), or of none when its caller announces it later (a request's arrivals are
/// announced together by their drop's event). `made_by` is the job whose result it is: a rule's
/// job fires no rule ([`rules::fire`]).
pub async fn enter(
    conn: &mut PgConnection,
    file: &NewFile<'_>,
    limit: i64,
    kind: Option<EventKind>,
    made_by: Option<JobId>,
) -> Result<Entered, sqlx::Error> {
    let row = match files::insert(&mut *conn, file, limit).await? {
        Insert::New(row) => row,
        Insert::Existing(row) => return Ok(Entered::Existing(row)),
        Insert::OverQuota { used } => return Ok(Entered::OverQuota { used }),
    };
    if let Some(kind) = kind {
        let record = FileRecord::with_url(&row, None);
        events::record(
            &mut *conn,
            row.user_id,
            kind,
            row.id,
            serde_json::json!({ "file": record }),
        )
        .await?;
    }
    let mut queued: Vec<JobId> = match file.copy_of {
        Some(source) => {
            files::carry(&mut *conn, source, row.id).await?;
            Vec::new()
        }
        None => jobs::queue_metadata_reading(&mut *conn, &row)
            .await?
            .into_iter()
            .collect(),
    };
    queued.extend(rules::fire(conn, &row, made_by).await?);
    Ok(Entered::New { file: row, queued })
}
