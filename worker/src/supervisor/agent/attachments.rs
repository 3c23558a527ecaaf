//! A task's attached parts, brought into the drive before the model reads the task: a `raw`
//! part is saved as a private file (through the client library's upload, as the task's token:
//! refused when the token may not add it, by its plan or its storage), a `url` part is brought in
//! by `/import-from-url` (the drive's SSRF-safe fetch, an `import` job) and waited for. What
//! became of each is written in the task's row once, so a task taken over after its worker died
//! neither saves nor imports a part twice; the model is told it in the words of [`said`].

use std::sync::Arc;
use std::time::Duration;

use drive_client::Client;
use drive_client::organize::Import;
use drive_client::spool;
use drive_client::upload::{self, Progress};
use drive_core::a2a::{Message, Part};
use drive_core::db::agent_tasks::{self, TaskRow};
use serde_json::{Value, json};

use super::Runner;

/// The longest an import is waited for.
const IMPORT_PATIENCE: Duration = Duration::from_secs(600);

impl Runner {
    /// Saves or imports the attached parts of `task`'s own message that are not yet; answers
    /// what became of each, by index.
    pub(super) async fn bring_in(&self, task: &TaskRow, client: &Client) -> Result<Value, sqlx::Error> {
        let mut notes = task.attachments.clone();
        let Some(message) = task.messages().into_iter().next() else {
            return Ok(notes);
        };
        for (index, part) in message.parts.iter().enumerate() {
            let key = index.to_string();
            if notes.get(&key).is_some() || (part.raw.is_none() && part.url.is_none()) {
                continue;
            }
            let outcome = match (&part.raw, &part.url) {
                (Some(raw), _) => save(client, part, raw, index).await,
                (None, Some(url)) => import(client, part, url).await,
                (None, None) => unreachable!("skipped above"),
            };
            let note = match outcome {
                Ok(file) => json!({ "saved": file }),
                Err(e) => json!({ "error": format!("{e:#}") }),
            };
            let kept = agent_tasks::note_attachment(&self.shared.db, task.id, self.id, index, &note).await?;
            notes[&key] = kept.unwrap_or(note);
        }
        Ok(notes)
    }
}

/// A `raw` part saved as a private file; its id and name.
async fn save(client: &Client, part: &Part, raw: &str, index: usize) -> anyhow::Result<Value> {
    let spooled = spool::decode(raw.to_string()).await?;
    let name = part
        .filename
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| format!("attachment-{}", index + 1));
    let file = spooled.as_file(&name, None)?;
    let nothing: Progress = Arc::new(|_| {});
    let uploaded = upload::upload(client, &file, &nothing).await?;
    Ok(json!({ "fileId": uploaded.id, "fileName": name }))
}

/// A `url` part brought in by `/import-from-url`, waited for; the file it made.
async fn import(client: &Client, part: &Part, url: &str) -> anyhow::Result<Value> {
    let import = Import {
        url: url.to_string(),
        file_name: part.filename.clone().filter(|n| !n.trim().is_empty()),
        folder: None,
    };
    let created = client.import(&import).await?;
    let job = drive_client::tools::done(client, created.queued()?.id, IMPORT_PATIENCE).await?;
    let Some(made) = job.files.first() else {
        anyhow::bail!("the import made no file");
    };
    Ok(json!({ "fileId": made.id, "fileName": made.file_name }))
}

/// A message as the model reads it: its text, then a line for each other part: what became
/// of a file the user attached (from `notes`; `None` for the agent's own message, whose `url`
/// parts are the links it made), or a data part's JSON.
pub(super) fn said(message: &Message, notes: Option<&Value>) -> String {
    let mut lines = vec![message.text()];
    for (index, part) in message.parts.iter().enumerate() {
        let what = part
            .filename
            .as_deref()
            .or(part.url.as_deref())
            .unwrap_or("a file");
        let Some(notes) = notes else {
            if part.url.is_some() {
                lines.push(format!("(You linked {what}.)"));
            }
            continue;
        };
        let line = match (&part.data, &notes[index.to_string()]) {
            (Some(data), _) => format!("(A data part: {})", truncated(&data.to_string(), 2000)),
            _ if part.text.is_some() => continue,
            (None, note) if note["saved"].is_object() => format!(
                "(Attached {what}: saved in the drive as {} (id {}).)",
                note["saved"]["fileName"].as_str().unwrap_or("?"),
                note["saved"]["fileId"].as_str().unwrap_or("?")
            ),
            (None, note) if note["error"].is_string() => format!(
                "(Attached {what}: it could not be brought into the drive: {})",
                note["error"].as_str().unwrap_or_default()
            ),
            (None, _) => format!("(Attached {what}: not brought into the drive.)"),
        };
        lines.push(line);
    }
    lines.retain(|l| !l.is_empty());
    lines.join("\n")
}

fn truncated(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
