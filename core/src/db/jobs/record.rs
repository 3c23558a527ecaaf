//! A job as callers see it: the row with its folder and the files it made; a pipeline's
//! with each step's state and outputs.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgConnection;

use super::runs::{self, RunOutput, RunRow};
use super::{JobRow, JobState};
use crate::file::FileKind;
use crate::id::{FileId, FolderId, JobId};
use crate::job::{JobSpec, JobType, Pipeline};
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
    /// A pipeline's steps, in order; absent for a job of one type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<StepRecord>>,
}

/// A pipeline's step as its job shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepRecord {
    pub name: String,
    pub job_type: JobType,
    /// `queued` until it begins; `stopped` when the job ended before it finished.
    pub state: JobState,
    /// How many times it runs: once per file for a type that takes one file, else once;
    /// 0 until it begins.
    pub runs: usize,
    /// Runs done so far.
    pub runs_done: usize,
    /// Why a run failed; null otherwise.
    pub error: Option<String>,
    /// Whether its outputs become files: the chain's end, or a step marked `keep`.
    pub makes_files: bool,
    /// What it made so far, in order.
    pub outputs: Vec<StepOutput>,
}

/// One output of a step.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepOutput {
    pub name: String,
    pub size: i64,
    #[schema(value_type = String)]
    pub kind: FileKind,
    /// The file it became (in `files`); null for an intermediate, which is removed from the
    /// store when the job ends.
    pub file_id: Option<FileId>,
}

impl StepRecord {
    fn of(job: &JobRow, chain: &Pipeline, runs: &[&RunRow], outputs: &[&RunOutput]) -> Vec<StepRecord> {
        let files = chain.makes_files();
        chain
            .steps
            .iter()
            .enumerate()
            .map(|(index, step)| {
                let mine: Vec<&RunRow> = runs
                    .iter()
                    .copied()
                    .filter(|r| r.step as usize == index)
                    .collect();
                let done = mine.iter().filter(|r| r.state == JobState::Done).count();
                let failed = mine.iter().find(|r| r.state == JobState::Failed);
                let state = match () {
                    _ if failed.is_some() => JobState::Failed,
                    _ if !mine.is_empty() && done == mine.len() => JobState::Done,
                    _ if job.state.has_ended() => JobState::Stopped,
                    _ if mine.is_empty() => JobState::Queued,
                    _ => JobState::Running,
                };
                StepRecord {
                    name: step.name.clone(),
                    job_type: step.spec.job_type(),
                    state,
                    runs: mine.len(),
                    runs_done: done,
                    error: failed.and_then(|r| r.error.clone()),
                    makes_files: files[index],
                    outputs: outputs
                        .iter()
                        .filter(|o| o.step as usize == index)
                        .map(|o| StepOutput {
                            name: o.file.file_name.clone(),
                            size: o.file.file_size,
                            kind: o.file.kind,
                            file_id: o.is_file.then_some(o.file.id),
                        })
                        .collect(),
                }
            })
            .collect()
    }
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
        let chains: Vec<JobId> = jobs
            .iter()
            .filter(|j| j.job_type == JobType::Pipeline)
            .map(|j| j.id)
            .collect();
        let (runs, made) = match chains.is_empty() {
            false => (
                runs::of_jobs(&mut *conn, &chains).await?,
                runs::outputs(&mut *conn, &chains).await?,
            ),
            true => (Vec::new(), Vec::new()),
        };
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
                    steps: match job.spec() {
                        Ok(JobSpec::Pipeline(chain)) => {
                            let runs: Vec<&RunRow> = runs
                                .iter()
                                .filter(|(id, _)| *id == job.id)
                                .map(|(_, r)| r)
                                .collect();
                            let made: Vec<&RunOutput> = made.iter().filter(|o| o.job_id == job.id).collect();
                            Some(StepRecord::of(job, &chain, &runs, &made))
                        }
                        _ => None,
                    },
                }
            })
            .collect())
    }
}
