//! The shapes of the rows the data crate reads (`drive-core`'s `db`) and a worker hands, as
//! they are, to the job process it supervises: the process reads these and never the database.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::file::{Bucket, FileKind};
use crate::id::{FileId, FolderId, JobId, UserId};
use crate::job::{JobSpec, JobState, JobType, Lane};

/// Serializable because a worker hands it to the job process it supervises.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct FileRow {
    pub id: FileId,
    pub user_id: UserId,
    pub file_name: String,
    pub file_size: i64,
    pub mime_type: String,
    #[cfg_attr(feature = "sqlx", sqlx(try_from = "String"))]
    pub kind: FileKind,
    pub bucket: Bucket,
    pub object_key: String,
    pub modified_time: Option<DateTime<Utc>>,
    pub trashed_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub folder_id: Option<FolderId>,
}

impl FileRow {
    pub fn is_public(&self) -> bool {
        self.bucket == Bucket::Public
    }
}

/// Serializable because a worker hands a job process the folders its job writes into.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct FolderRow {
    pub id: FolderId,
    /// Stored form, `/a/b`.
    pub path: String,
}

/// Serializable because a worker hands it to the job process it supervises.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct JobRow {
    pub id: JobId,
    pub user_id: UserId,
    pub job_type: JobType,
    pub lane: Lane,
    pub options: serde_json::Value,
    pub input_ids: Vec<FileId>,
    pub source_folder_id: Option<FolderId>,
    pub folder_id: Option<FolderId>,
    pub output_folder_id: Option<FolderId>,
    pub state: JobState,
    pub progress: f32,
    pub error: Option<String>,
    pub result: Option<serde_json::Value>,
    pub attempts: i32,
    pub stop_requested_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
    pub seconds: Option<f64>,
    /// Seconds it stood still in pauses that have ended (a bulk job a job of another lane ran
    /// before): not counted as its time.
    pub paused_seconds: f64,
}

impl JobRow {
    pub fn spec(&self) -> Result<JobSpec, serde_json::Error> {
        JobSpec::from_row(self.job_type, self.options.clone())
    }
}
