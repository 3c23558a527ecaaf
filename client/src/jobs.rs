//! File jobs, typed: `/create-file-job` (and `/import-from-url` and `/create-archive-request`,
//! which answer the job they queued), `/select-file-jobs`, `/cancel-file-job`, and the one wait
//! for a job's end that every caller shares ([`Client::wait_for_job`]).

use std::time::Duration;

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::Client;
use crate::records::Rest;

/// The body of `/create-file-job`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewJob {
    /// Like `checksum`, `zip`, `proxy`; `None` for a pipeline (`steps`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_type: Option<String>,
    /// A pipeline's steps, as the service takes them: `[{ name, jobType, options, use, keep }]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Value>,
    /// A template of the caller's to run (`crate::templates`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template_id: Option<Uuid>,
    pub file_ids: Vec<Uuid>,
    /// The settings by type; null for the defaults.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub options: Value,
    /// Only check and estimate.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// Where the results land; beside the first file when not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    /// The same key within 24 hours answers the same job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// An https link the job's end is POSTed to, signed with the answer's `notifySecret`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notify_url: Option<String>,
    /// A JSON object echoed with that notice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_metadata: Option<Value>,
}

impl NewJob {
    /// A job of `job_type` on `file_ids` with its default settings.
    pub fn new(job_type: &str, file_ids: Vec<Uuid>) -> NewJob {
        NewJob {
            job_type: Some(job_type.to_string()),
            steps: None,
            template_id: None,
            file_ids,
            options: Value::Null,
            dry_run: false,
            folder: None,
            idempotency_key: None,
            notify_url: None,
            client_metadata: None,
        }
    }
}

pub use drive_domain::job::JobState;

/// A job as the service answers it. The fields read here are typed; the others are kept as
/// the service sent them, so a job printed as JSON is the service's own.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub id: Uuid,
    pub job_type: String,
    pub state: JobState,
    /// Why it failed; null otherwise.
    pub error: Option<String>,
    /// What it found or made, by type (a zip's `entries`...); null until done.
    pub result: Option<Value>,
    /// 0 to 1.
    pub progress: f64,
    /// What it made so far, in order.
    pub files: Vec<MadeFile>,
    /// Whether a stop was asked for.
    pub stop_requested: bool,
    pub create_time: DateTime<Utc>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// A file a job made (or a generation drew).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MadeFile {
    pub id: Uuid,
    pub file_name: String,
    pub file_size: u64,
    pub mime_type: String,
    /// Null unless public (or answered with a fresh link).
    pub download_url: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// What `/create-file-job`, `/import-from-url` and `/create-archive-request` answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedJob {
    /// The queued job; absent on a dry run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<Job>,
    pub estimate_seconds: u64,
    pub dry_run: bool,
    /// With a `notify_url`: the secret its notice is signed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify_secret: Option<String>,
}

impl CreatedJob {
    /// The job queued, which only a dry run lacks.
    pub fn queued(&self) -> Result<&Job> {
        match &self.job {
            Some(job) => Ok(job),
            None => bail!("the drive queued no job"),
        }
    }
}

/// The body of `/select-file-jobs`: the account's jobs, or those of `ids`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct JobQuery {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<Uuid>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Seconds (up to 60) the call holds while every job selected is under way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<u64>,
}

/// The answer of `/select-file-jobs`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobPage {
    /// Newest first.
    pub jobs: Vec<Job>,
    /// The `offset` of the next page; null on the last.
    pub next_offset: Option<i64>,
    pub minutes: JobMinutes,
}

/// Job time this month, and the plan's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobMinutes {
    pub used: f64,
    pub limit: f64,
}

/// The answer of `/cancel-file-job` and `/retry-file-job`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CanceledJob {
    pub job: Job,
}

#[derive(Serialize)]
struct JobRef {
    id: Uuid,
}

/// How [`Client::wait_for_job`] waits.
#[derive(Debug, Clone, Copy)]
pub struct JobWait {
    /// How long each call holds on the service while the job is under way (its end is
    /// answered within a second of it).
    pub hold: Duration,
    /// How long to wait in all; `None` for as long as it takes.
    pub patience: Option<Duration>,
}

impl Client {
    /// `/create-file-job`.
    pub async fn create_job(&self, job: &NewJob) -> Result<CreatedJob> {
        self.post("/create-file-job", job).await
    }

    /// `/select-file-jobs`.
    pub async fn jobs(&self, query: &JobQuery) -> Result<JobPage> {
        self.post("/select-file-jobs", query).await
    }

    /// `/cancel-file-job`.
    pub async fn cancel_job(&self, id: Uuid) -> Result<CanceledJob> {
        self.post("/cancel-file-job", &JobRef { id }).await
    }

    /// `/retry-file-job`.
    pub async fn retry_job(&self, id: Uuid) -> Result<CanceledJob> {
        self.post("/retry-file-job", &JobRef { id }).await
    }

    /// Follows the job `id` until it ends or `wait.patience` runs out, calling `seen` with
    /// each look; answers the job as last seen (ended, or still under way when patience ran
    /// out). An error when no job of the account's has the id.
    pub async fn wait_for_job(&self, id: Uuid, wait: JobWait, mut seen: impl FnMut(&Job)) -> Result<Job> {
        let deadline = wait.patience.map(|p| tokio::time::Instant::now() + p);
        let query = JobQuery {
            ids: Some(vec![id]),
            limit: None,
            wait: Some(wait.hold.as_secs()),
        };
        loop {
            let Some(job) = self.jobs(&query).await?.jobs.into_iter().next() else {
                bail!("no job of yours has the id {id}");
            };
            seen(&job);
            if job.state.has_ended() || deadline.is_some_and(|d| tokio::time::Instant::now() > d) {
                return Ok(job);
            }
        }
    }
}
