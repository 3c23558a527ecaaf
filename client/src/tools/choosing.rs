//! The tools that choose files by words in their names, a folder or types, and act on them: list
//! them, link one, zip them, move, tag, trash (through the host's [`Effects`]) or restore them.
//! Coarse on purpose: a small model does better with few tools that each do one whole thing.

use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{Effects, FileType};
use crate::Client;
use crate::files::Batch;
use crate::jobs::{Job, JobState, JobWait, NewJob};
use crate::search::{FoundFile, SearchQuery};

/// The longest a zip is waited for; past it the caller is told where it stands.
const ZIP_PATIENCE: Duration = Duration::from_secs(600);

/// The most files one call of a tool acts on (a zip, a move, a tag, a trash, a restore).
const MAX_CHOSEN: u32 = 100;

/// Which files: those of a folder, of some types, or with some words in their names.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Selection {
    /// A folder path like /invoices (folders inside it count too).
    pub folder: Option<String>,
    /// Only files of these types.
    pub types: Option<Vec<FileType>>,
    /// Only files with these words in their names.
    pub text: Option<String>,
}

impl Selection {
    /// The newest `limit` files it chooses.
    pub(super) fn search(&self, limit: u32) -> SearchQuery {
        let types = self
            .types
            .as_ref()
            .map(|types| types.iter().map(|t| t.as_str().to_string()).collect());
        SearchQuery::newest(self.text.as_deref(), self.folder.as_deref(), types, limit)
    }

    /// The files it chooses, at most [`MAX_CHOSEN`]; refused when it names nothing or finds
    /// nothing.
    pub async fn files(&self, client: &Client) -> Result<Vec<FoundFile>> {
        if self.folder.is_none() && self.types.is_none() && self.text.is_none() {
            bail!("say which files: a folder, types or words in their names");
        }
        let found = client.search(&self.search(MAX_CHOSEN)).await?;
        if found.files.is_empty() {
            bail!("no file matches that: look with list_files");
        }
        Ok(found.files)
    }

    /// The ids and names of the files it chooses.
    pub(super) async fn chosen(&self, client: &Client) -> Result<(Vec<Uuid>, Vec<String>)> {
        let files = self.files(client).await?;
        Ok(files.into_iter().map(|f| (f.id, f.file_name)).unzip())
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FindFiles {
    /// Words that must appear in the file's name, tags or description.
    pub text: Option<String>,
    /// A folder path like /invoices (folders inside it count too).
    pub folder: Option<String>,
    pub types: Option<Vec<FileType>>,
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

pub(super) async fn find_files(client: &Client, input: FindFiles) -> Result<Value> {
    let limit = input.limit.unwrap_or(20).clamp(1, 50);
    let selection = Selection {
        folder: input.folder,
        types: input.types,
        text: input.text,
    };
    let found = client.search(&selection.search(limit)).await?;
    let files: Vec<Value> = found
        .files
        .iter()
        .map(|f| {
            json!({
                "id": f.id, "name": f.file_name, "type": f.kind, "size": f.file_size,
                "folder": f.folder, "uploaded": f.insert_time
            })
        })
        .collect();
    Ok(json!({ "files": files }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetLink {
    /// Words in the file's name, like march invoice.
    pub text: String,
    /// A folder path like /invoices.
    pub folder: Option<String>,
}

pub(super) async fn get_link(client: &Client, effects: &mut impl Effects, input: GetLink) -> Result<Value> {
    if input.text.trim().is_empty() {
        bail!("text is required: words in the file's name");
    }
    let selection = Selection {
        text: Some(input.text),
        folder: input.folder,
        types: None,
    };
    let found = client.search(&selection.search(1)).await?;
    let Some(file) = found.files.first() else {
        bail!("no file's name has those words: look with list_files");
    };
    link_to(client, effects, file.id).await
}

/// Makes a link to the file `id` for the user; answers what the caller is told.
pub(super) async fn link_to(client: &Client, effects: &mut impl Effects, id: Uuid) -> Result<Value> {
    let link = client.download_link(id).await?;
    Ok(json!({ "fileName": link.file_name, "link": effects.file(&link) }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ZipFiles {
    /// A folder path like /invoices (folders inside it count too).
    pub folder: Option<String>,
    /// Only files of these types.
    pub types: Option<Vec<FileType>>,
    /// The zip's name, like invoices (.zip is added).
    pub name: Option<String>,
}

pub(super) async fn zip_files(client: &Client, effects: &mut impl Effects, input: ZipFiles) -> Result<Value> {
    let selection = Selection {
        folder: input.folder,
        types: input.types,
        text: None,
    };
    let (ids, _) = selection.chosen(client).await?;
    let mut job = NewJob::new("zip", ids);
    // The job adds `.zip` itself; a model tends to write it too.
    let name = input
        .name
        .as_deref()
        .map(|n| n.trim().trim_end_matches(".zip").trim());
    if let Some(name) = name.filter(|n| !n.is_empty()) {
        job.options = json!({ "name": name });
    }
    let created = client.create_job(&job).await?;
    let job = done(client, created.queued()?.id, ZIP_PATIENCE).await?;
    let Some(made) = job.files.first() else {
        bail!("the zip job made no file");
    };
    let link = link_to(client, effects, made.id).await?;
    Ok(json!({
        "fileId": made.id, "fileName": made.file_name,
        "entries": job.result.as_ref().map_or(Value::Null, |r| r["entries"].clone()),
        "link": link["link"]
    }))
}

/// The job `id` once done, waited for at most `patience`; why not otherwise.
pub async fn done(client: &Client, id: Uuid, patience: Duration) -> Result<Job> {
    // Each call holds until the job ends or 30 s pass.
    let wait = JobWait {
        hold: Duration::from_secs(30),
        patience: Some(patience),
    };
    let job = client.wait_for_job(id, wait, |_| {}).await?;
    match job.state {
        JobState::Done => Ok(job),
        JobState::Failed | JobState::Stopped => bail!(
            "the \"{}\" job \"{}\": {}",
            job.job_type,
            job.state.as_str(),
            json!(job.error)
        ),
        _ => bail!(
            "the \"{}\" job is still \"{}\" after {} s: not waited for longer",
            job.job_type,
            job.state.as_str(),
            patience.as_secs()
        ),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MoveFiles {
    #[serde(flatten)]
    pub selection: Selection,
    /// The folder to move them to, like /archive/2026.
    pub to: String,
}

pub(super) async fn move_files(client: &Client, input: MoveFiles) -> Result<Value> {
    let to = input.to.trim();
    if to.is_empty() {
        bail!("to is required: a folder like /archive");
    }
    let (ids, names) = input.selection.chosen(client).await?;
    let moved = client.move_files(&ids, &input.to).await?;
    Ok(json!({ "moved": names, "folder": moved.folder.map(|f| f.path) }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TagFiles {
    #[serde(flatten)]
    pub selection: Selection,
    /// The tag, like taxes.
    pub tag: String,
}

pub(super) async fn tag_files(client: &Client, input: TagFiles) -> Result<Value> {
    let tag = input.tag.trim();
    if tag.is_empty() {
        bail!("tag is required");
    }
    let (ids, names) = input.selection.chosen(client).await?;
    client.tag_files(&ids, &[tag.to_string()], false).await?;
    Ok(json!({ "tagged": names, "tag": tag }))
}

pub(super) async fn trash_files(
    client: &Client,
    effects: &mut impl Effects,
    input: Selection,
) -> Result<Value> {
    let (ids, names) = input.chosen(client).await?;
    effects.trash(client, ids, names).await
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RestoreNamed {
    /// Words in the names of the trashed files.
    pub text: String,
}

pub(super) async fn restore_named(client: &Client, input: RestoreNamed) -> Result<Value> {
    let text = input.text.to_lowercase();
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        bail!("text is required: words in the trashed files' names");
    }
    let trash = client.trash_listing().await?;
    let matching: Vec<_> = trash
        .iter()
        .filter(|f| words.iter().all(|w| f.file_name.to_lowercase().contains(w)))
        .take(MAX_CHOSEN as usize)
        .collect();
    if matching.is_empty() {
        return Err(anyhow!("no file in the trash has those words in its name"));
    }
    let ids: Vec<Uuid> = matching.iter().map(|f| f.id).collect();
    let outcome = client.batch(Batch::Restore, &ids).await?;
    let restored: Vec<&str> = matching
        .iter()
        .filter(|f| outcome.done.contains(&f.id))
        .map(|f| f.file_name.as_str())
        .collect();
    Ok(json!({ "restored": restored }))
}
