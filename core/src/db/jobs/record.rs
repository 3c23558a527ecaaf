//! A job as callers see it: the row with its folder and the files it made.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgConnection;

use super::{JobRow, JobState};
use crate::id::{FileId, FolderId, JobId};
use crate::job::JobType;
use crate::records::{FileRecord, FolderRef};
use crate::storage::Storage;

/// A job as `/select-file-jobs`, `/cancel-file-job` and the `job` event show it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobRecord {
    pub id: JobId,
    pub job_type: JobType,
    pub state: JobState,
    /// Why it failed; null otherwise.
    pub error: Option<String>,
    /// What it found or made, by type (a checksum's digests, a zip's entry count...); null
    /// until done.
    pub result: Option<serde_json::Value>,
    /// Where its results land; null for the top.
    pub folder: Option<FolderRef>,
    /// 0 to 1.
    pub progress: f32,
    /// The inputs, in order.
    pub file_ids: Vec<FileId>,
    /// The settings, every default filled in.
    pub options: serde_json::Value,
    /// What it made so far, in order.
    pub files: Vec<FileRecord>,
    /// Whether a stop was asked for (a running job stops within seconds).
    pub stop_requested: bool,
    pub create_time: DateTime<Utc>,
    pub start_time: Option<DateTime<Utc>>,
    pub end_time: Option<DateTime<Utc>>,
    /// Job time it counted against the month: set once done or stopped.
    pub seconds: Option<f64>,
}

impl JobRecord {
    /// Records for `jobs`, in their order, with their folders and made files.
    pub async fn load(
        conn: &mut PgConnection,
        storage: &Storage,
        jobs: &[JobRow],
    ) -> Result<Vec<JobRecord>, sqlx::Error> {
        let ids: Vec<JobId> = jobs.iter().map(|j| j.id).collect();
        let outputs = super::outputs(&mut *conn, &ids).await?;
        let folder_ids: Vec<FolderId> = jobs
            .iter()
            .filter_map(|j| j.output_folder_id.or(j.folder_id))
            .collect();
        let folders: Vec<crate::db::folders::FolderRow> =
            sqlx::query_as("select id, path from folders where id = any($1)")
                .bind(&folder_ids)
                .fetch_all(conn)
                .await?;
        Ok(jobs
            .iter()
            .map(|job| {
                let folder_id = job.output_folder_id.or(job.folder_id);
                JobRecord {
                    id: job.id,
                    job_type: job.job_type,
                    state: job.state,
                    error: job.error.clone(),
                    result: job.result.clone(),
                    folder: folders
                        .iter()
                        .find(|f| Some(f.id) == folder_id)
                        .cloned()
                        .map(FolderRef::from),
                    progress: job.progress,
                    file_ids: job.input_ids.clone(),
                    options: job.options.clone(),
                    files: outputs
                        .iter()
                        .filter(|(job_id, _)| *job_id == job.id)
                        .map(|(_, file)| FileRecord::listed(file, storage))
                        .collect(),
                    stop_requested: job.stop_requested_at.is_some(),
                    create_time: job.created_at,
                    start_time: job.started_at,
                    end_time: job.ended_at,
                    seconds: job.seconds,
                }
            })
            .collect())
    }
}
