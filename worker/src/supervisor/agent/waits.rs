//! Waiting: the `wait_for` tool, and the waker that ends waits.
//!
//! The tool finds what to wait on through the drive's routes as the task's token (so a task can
//! only wait on what its token sees) and answers at once when it has already happened (a
//! generation or job that has ended). Otherwise the runner records the wait with the
//! conversation so far ([`agent_waits::begin`]) and lets go of the task. Every second each
//! worker asks the event feed, in one query over every wait, which waits have an answer (an
//! event after their place, a closing, their time up) and ends them; the task is then taken up
//! like any other and goes on from its `wait_for` call, answered with what happened.

use std::sync::Arc;
use std::time::Duration;

use drive_client::Client;
use drive_client::generations::GenerationStatus;
use drive_client::jobs::JobQuery;
use drive_client::search::SearchQuery;
use drive_client::tools;
use drive_core::a2a::Message;
use drive_core::db::agent_tasks::TaskRow;
use drive_core::db::agent_waits::{self, LONGEST, NewWait, Snapshot};
use drive_core::db::events::EventKind;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::supervisor::shared::Shared;

/// Waits ended at each look.
const WOKEN_AT_ONCE: i64 = 50;

/// What the model asked to wait for, found: recorded by the runner.
#[derive(Debug, Clone)]
pub struct Asked {
    pub kind: EventKind,
    /// `None` for a folder (`folder` is its path).
    pub subject: Option<Uuid>,
    pub folder: Option<String>,
    pub what: String,
    pub until: chrono::DateTime<chrono::Utc>,
}

impl Asked {
    /// The wait `task` records for this: from `after` (where the event log stood before the
    /// call looked anything up), with the conversation so far, the `wait_for` call it answers
    /// once it ends, and the links made until now.
    pub fn wait(
        self,
        task: &TaskRow,
        after: Snapshot,
        transcript: Value,
        call_id: &str,
        links: Value,
    ) -> NewWait {
        let status = format!(
            "Waiting for {} (until {}).",
            self.what,
            self.until.format("%Y-%m-%d %H:%M UTC")
        );
        NewWait {
            status: Message::from_agent(status, &task.id.to_string(), &task.context_id.to_string()),
            kind: self.kind,
            subject: self.subject,
            folder: self.folder,
            after,
            until: self.until,
            what: self.what,
            transcript,
            call_id: call_id.to_string(),
            links,
        }
    }
}

/// What the model may wait for.
#[derive(Debug, Clone, Copy, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Awaited {
    FilesAtRequest,
    NotesOnReview,
    FileOpened,
    FilesInFolder,
    ImageFinished,
    JobEnded,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct WaitFor {
    #[serde(rename = "for")]
    awaited: Awaited,
    /// Words in the request's or review's title, or in the file's name.
    name: Option<String>,
    /// A folder path like /inbox.
    folder: Option<String>,
    /// The generation's or job's id.
    id: Option<String>,
    /// The longest to wait (default 30).
    #[schemars(range(min = 1, max = 30))]
    days: Option<i64>,
}

/// What the model is told it may wait for.
pub fn definition() -> Value {
    tools::function::<WaitFor>(
        "wait_for",
        "Waits until something happens, then you go on with what happened: files sent to a file request (files_at_request, with words of its title in name), notes left on a review (notes_on_review, words of its title in name), someone opening a file (file_opened, words of its name in name), files landing in a folder (files_in_folder, with folder), an image generation finishing (image_finished, with its id) or a job ending (job_ended, with its id). The task stays open meanwhile.",
    )
}

/// Finds what `arguments` ask to wait on: `Ok(Err(answer))` when there is nothing to wait for
/// (it has happened already: the answer says what).
pub async fn find(client: &Client, arguments: &Value) -> anyhow::Result<Result<Asked, Value>> {
    let wanted: WaitFor = serde_json::from_value(arguments.clone())
        .map_err(|e| anyhow::anyhow!("the arguments do not fit the tool: {e}"))?;
    let days = wanted.days.unwrap_or(30).clamp(1, LONGEST.num_days());
    let until = chrono::Utc::now() + chrono::TimeDelta::days(days);
    let name = wanted.name.as_deref().unwrap_or_default();
    let asked = |kind, subject: Uuid, what: String| -> anyhow::Result<Result<Asked, Value>> {
        Ok(Ok(Asked {
            kind,
            subject: Some(subject),
            folder: None,
            what,
            until,
        }))
    };
    match wanted.awaited {
        Awaited::FilesAtRequest => {
            let listed = client.requests(None).await?;
            let open = listed.requests.iter().filter(|r| r.open);
            let request = named(open, name, |r| &r.title)
                .ok_or_else(|| anyhow::anyhow!("no open file request's title has those words"))?;
            asked(
                EventKind::Drop,
                request.id,
                format!("files sent to the request {}", json!(request.title)),
            )
        }
        Awaited::NotesOnReview => {
            let listed = client.reviews(None).await?;
            let review = named(listed.reviews.iter(), name, |r| &r.title)
                .ok_or_else(|| anyhow::anyhow!("no review's title has those words"))?;
            asked(
                EventKind::Note,
                review.id,
                format!("notes on the review {}", json!(review.title)),
            )
        }
        Awaited::FileOpened => {
            if name.trim().is_empty() {
                anyhow::bail!("name is required: words in the file's name");
            }
            let found = client
                .search(&SearchQuery::newest(Some(name), None, None, 1))
                .await?;
            let Some(file) = found.files.first() else {
                anyhow::bail!("no file's name has those words: look with list_files");
            };
            asked(
                EventKind::View,
                file.id,
                format!("someone opening {}", json!(file.file_name)),
            )
        }
        Awaited::FilesInFolder => {
            let folder = wanted
                .folder
                .as_deref()
                .unwrap_or_default()
                .trim()
                .trim_end_matches('/');
            if !folder.starts_with('/') {
                anyhow::bail!("folder is required: a path like /inbox");
            }
            Ok(Ok(Asked {
                kind: EventKind::File,
                subject: None,
                folder: Some(folder.to_string()),
                what: format!("files landing in {folder}"),
                until,
            }))
        }
        Awaited::ImageFinished => {
            let id = subject(wanted.id.as_deref(), "image generation")?;
            let generation = client.generation(id).await?;
            match generation {
                None => anyhow::bail!("there is no image generation {}", json!(id)),
                Some(g) if g.status == GenerationStatus::Working => asked(
                    EventKind::Generation,
                    id,
                    format!("the image generation {} to finish", json!(id)),
                ),
                Some(generation) => Ok(Err(
                    json!({ "happened": "it had already finished", "generation": generation }),
                )),
            }
        }
        Awaited::JobEnded => {
            let id = subject(wanted.id.as_deref(), "job")?;
            let query = JobQuery {
                ids: Some(vec![id]),
                ..JobQuery::default()
            };
            match client.jobs(&query).await?.jobs.into_iter().next() {
                None => anyhow::bail!("there is no job {}", json!(id)),
                Some(job) if job.state.has_ended() => {
                    Ok(Err(json!({ "happened": "it had already ended", "job": job })))
                }
                Some(job) => asked(
                    EventKind::Job,
                    id,
                    format!("the {} job {} to end", json!(job.job_type), json!(id)),
                ),
            }
        }
    }
}

/// The generation's or job's `id` the model gave.
fn subject(id: Option<&str>, what: &str) -> anyhow::Result<Uuid> {
    id.and_then(|id| id.trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("there is no {what} {}", json!(id)))
}

/// The newest of `listed` whose `title` has every word of `words` (any, when there are none).
fn named<'a, T>(
    mut listed: impl Iterator<Item = &'a T>,
    words: &str,
    title: impl Fn(&T) -> &String,
) -> Option<&'a T> {
    let words: Vec<String> = words.split_whitespace().map(str::to_lowercase).collect();
    listed.find(|item| {
        let title = title(item).to_lowercase();
        words.iter().all(|w| title.contains(w))
    })
}

/// Ends, every second, the waits that have an answer.
pub async fn wake_loop(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let due = match agent_waits::due(&shared.db, WOKEN_AT_ONCE).await {
            Ok(due) => due,
            Err(e) => {
                tracing::warn!("looking for waits that have ended failed: {e}");
                continue;
            }
        };
        for task in due {
            match agent_waits::wake(&shared.db, task).await {
                Ok(true) => tracing::info!(%task, "an agent task's wait ended"),
                Ok(false) => {}
                Err(e) => tracing::warn!(%task, "ending an agent task's wait failed: {e}"),
            }
        }
    }
}
