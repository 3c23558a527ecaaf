//! The agent's tools: the drive's own routes, called through the client library as the task's
//! API token (a session of that token's), so the agent reaches exactly what the token does.
//! Coarse on purpose: a small model does better with few tools that each do one whole thing.

use drive_client::Client;
use drive_client::jobs::{Job, JobState, JobWait, MadeFile, NewJob};
use drive_client::records::FileRecord;
use drive_client::search::{FoundFile, SearchQuery};
use drive_core::a2a::Part;
use uuid::Uuid;

use super::making;
use serde_json::{Value, json};

/// What the tools made in a task beside their answers: the links, attached to its reply as
/// `url` parts (a model never has to copy a signed link: hundreds of characters a small model
/// garbles, and slow to write), and the files proposed for the trash, which only the user's
/// confirmation in the next message moves there ([`Proposal`]).
#[derive(Debug, Default)]
pub struct Made {
    pub links: Links,
    pub proposal: Option<Proposal>,
    /// What the model asked to wait for, which the runner records before the task goes on.
    pub wait: Option<super::waits::Asked>,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Links(pub Vec<Part>);

/// Files the agent proposed to move to the trash, and the words that confirm it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Proposal {
    pub file_ids: Vec<uuid::Uuid>,
    pub names: Vec<String>,
    /// Like `confirm 4821`.
    pub phrase: String,
}

impl Links {
    /// Keeps the link to a file named `name` (when it has one) and answers what the model is told.
    fn keep_link(&mut self, name: &str, url: Option<&str>, media_type: &str) -> Value {
        if let Some(url) = url {
            self.0.push(Part {
                url: Some(url.to_string()),
                filename: Some(name.to_string()),
                media_type: Some(media_type.to_string()),
                ..Part::default()
            });
        }
        json!(format!("attached to your reply as {name}"))
    }

    /// Keeps the link of `file` (as `/generate-download-url` answers it).
    pub(super) fn keep(&mut self, file: &FileRecord) -> Value {
        self.keep_link(&file.file_name, file.download_url.as_deref(), &file.mime_type)
    }

    /// Keeps the link of a file a job made or a generation drew.
    pub(super) fn keep_made(&mut self, file: &MadeFile) -> Value {
        self.keep_link(&file.file_name, file.download_url.as_deref(), &file.mime_type)
    }

    /// Keeps the link to a page of the drive's (a request's, a review's), named `name`.
    pub(super) fn page(&mut self, url: &str, name: &str) -> Value {
        self.keep_link(name, Some(url), "text/html")
    }
}

/// The file types a selection may name.
macro_rules! types_schema {
    () => {
        json!({ "type": "array", "items": { "type": "string", "enum": ["Video", "Audio", "Image", "Pdf", "Text", "Archive", "Other"] }, "description": "Only files of these types." })
    };
}

/// What the model is told it may call.
pub fn definitions() -> Value {
    let [ask_for_files, share_for_review, make_image, run_job] = super::making::definitions();
    json!([
        { "type": "function", "function": {
            "name": "list_files",
            "description": "Lists the user's files, newest first, narrowed by words in their names, a folder or types. Gives each file's id, name, type, size, folder and upload time.",
            "parameters": { "type": "object", "properties": {
                "text": { "type": "string", "description": "Words that must appear in the file's name, tags or description." },
                "folder": { "type": "string", "description": "A folder path like /invoices (folders inside it count too)." },
                "types": { "type": "array", "items": { "type": "string", "enum": ["Video", "Audio", "Image", "Pdf", "Text", "Archive", "Other"] } },
                "limit": { "type": "integer", "minimum": 1, "maximum": 50 }
            } }
        } },
        { "type": "function", "function": {
            "name": "get_link",
            "description": "Makes a link to download one file (valid 6 hours for a private file) and attaches it to your reply: the newest file whose name has these words, in this folder if given.",
            "parameters": { "type": "object", "properties": {
                "text": { "type": "string", "description": "Words in the file's name, like march invoice." },
                "folder": { "type": "string", "description": "A folder path like /invoices." }
            }, "required": ["text"] }
        } },
        { "type": "function", "function": {
            "name": "zip_files",
            "description": "Puts every file of a folder (or only those of some types) into one new zip file and attaches a link to download it to your reply. Waits until the zip is made.",
            "parameters": { "type": "object", "properties": {
                "folder": { "type": "string", "description": "A folder path like /invoices (folders inside it count too)." },
                "types": { "type": "array", "items": { "type": "string", "enum": ["Video", "Audio", "Image", "Pdf", "Text", "Archive", "Other"] }, "description": "Only files of these types." },
                "name": { "type": "string", "description": "The zip's name, like invoices (.zip is added)." }
            } }
        } },
        { "type": "function", "function": {
            "name": "move_files",
            "description": "Moves every file of a folder (or only those of some types, or with some words in their names) to another folder, made if needed.",
            "parameters": { "type": "object", "properties": {
                "folder": { "type": "string", "description": "Where the files are now, like /inbox." },
                "types": types_schema!(),
                "text": { "type": "string", "description": "Only files with these words in their names." },
                "to": { "type": "string", "description": "The folder to move them to, like /archive/2026." }
            }, "required": ["to"] }
        } },
        { "type": "function", "function": {
            "name": "tag_files",
            "description": "Adds a tag to every file of a folder (or only those of some types, or with some words in their names).",
            "parameters": { "type": "object", "properties": {
                "folder": { "type": "string" },
                "types": types_schema!(),
                "text": { "type": "string" },
                "tag": { "type": "string", "description": "The tag, like taxes." }
            }, "required": ["tag"] }
        } },
        { "type": "function", "function": {
            "name": "trash_files",
            "description": "Proposes to move files (of a folder, of some types, or with some words in their names) to the trash. Nothing moves now: the user must confirm in their next message, with the words this tool gives you. Put those words in your reply.",
            "parameters": { "type": "object", "properties": {
                "folder": { "type": "string" },
                "types": types_schema!(),
                "text": { "type": "string" }
            } }
        } },
        { "type": "function", "function": {
            "name": "restore_files",
            "description": "Brings files back from the trash: those with these words in their names.",
            "parameters": { "type": "object", "properties": {
                "text": { "type": "string", "description": "Words in the names of the trashed files." }
            }, "required": ["text"] }
        } },
        ask_for_files,
        share_for_review,
        make_image,
        run_job,
        super::waits::definition(),
        { "type": "function", "function": {
            "name": "reply",
            "description": "Ends the task with your answer to the user. The links you made are attached to it: do not write them out.",
            "parameters": { "type": "object", "properties": {
                "text": { "type": "string" }
            }, "required": ["text"] }
        } }
    ])
}

/// What a call of a tool other than `reply` answers the model: its result, or why it failed
/// (so the model can try otherwise).
pub async fn call(client: &Client, made: &mut Made, name: &str, arguments: &Value) -> Value {
    let outcome = match name {
        "list_files" => list_files(client, arguments).await,
        "get_link" => get_link(client, &mut made.links, arguments).await,
        "zip_files" => zip_files(client, &mut made.links, arguments).await,
        "move_files" => move_files(client, arguments).await,
        "tag_files" => tag_files(client, arguments).await,
        "trash_files" => trash_files(client, made, arguments).await,
        "restore_files" => restore_files(client, arguments).await,
        "ask_for_files" => making::ask_for_files(client, &mut made.links, arguments).await,
        "share_for_review" => making::share_for_review(client, &mut made.links, arguments).await,
        "make_image" => making::make_image(client, &mut made.links, arguments).await,
        "run_job" => making::run_job(client, &mut made.links, arguments).await,
        "wait_for" => super::waits::find(client, arguments)
            .await
            .map(|found| match found {
                Ok(asked) => {
                    let answer = json!({ "waiting": asked.what });
                    made.wait = Some(asked);
                    answer
                }
                Err(happened) => happened,
            }),
        other => Err(anyhow::anyhow!(
            "there is no tool {other}: use list_files, get_link, zip_files, move_files, tag_files, \
             trash_files, restore_files, ask_for_files, share_for_review, make_image, run_job, \
             wait_for or reply"
        )),
    };
    outcome.unwrap_or_else(|e| json!({ "error": format!("{e:#}") }))
}

async fn list_files(client: &Client, arguments: &Value) -> anyhow::Result<Value> {
    let limit = arguments["limit"].as_u64().unwrap_or(20).clamp(1, 50) as u32;
    let found = client.search(&search(arguments, limit)).await?;
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

/// The search for the files a tool's `text`, `folder` and `types` choose, newest first.
pub(super) fn search(arguments: &Value, limit: u32) -> SearchQuery {
    let types = arguments["types"].as_array().map(|types| {
        types
            .iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect()
    });
    SearchQuery::newest(
        arguments["text"].as_str(),
        arguments["folder"].as_str(),
        types,
        limit,
    )
}

async fn get_link(client: &Client, links: &mut Links, arguments: &Value) -> anyhow::Result<Value> {
    if arguments["text"].as_str().is_none_or(|t| t.trim().is_empty()) {
        anyhow::bail!("text is required: words in the file's name");
    }
    let chosen = json!({ "text": arguments["text"], "folder": arguments["folder"] });
    let found = client.search(&search(&chosen, 1)).await?;
    let Some(file) = found.files.first() else {
        anyhow::bail!("no file's name has those words: look with list_files");
    };
    link_to(client, links, file.id).await
}

/// Makes a link to the file `id` and keeps it for the reply; answers what the model is told.
async fn link_to(client: &Client, links: &mut Links, id: Uuid) -> anyhow::Result<Value> {
    let link = client.download_link(id).await?;
    Ok(json!({ "fileName": link.file_name, "link": links.keep(&link) }))
}

/// The longest a zip is waited for; past it the model is told where it stands.
const ZIP_PATIENCE: std::time::Duration = std::time::Duration::from_secs(600);

/// The most files one call of a tool acts on (a zip, a move, a tag, a trash proposal, a restore).
pub(super) const MAX_CHOSEN: u32 = 100;

async fn zip_files(client: &Client, links: &mut Links, arguments: &Value) -> anyhow::Result<Value> {
    let selection = json!({ "folder": arguments["folder"], "types": arguments["types"] });
    let (ids, _) = chosen(client, &selection).await?;
    let mut job = NewJob::new("zip", ids);
    // The job adds `.zip` itself; a model tends to write it too.
    let name = arguments["name"]
        .as_str()
        .map(|n| n.trim().trim_end_matches(".zip").trim());
    if let Some(name) = name.filter(|n| !n.is_empty()) {
        job.options = json!({ "name": name });
    }
    let created = client.create_job(&job).await?;
    let job = ended(client, created.queued()?.id, ZIP_PATIENCE).await?;
    let Some(made) = job.files.first() else {
        anyhow::bail!("the zip job made no file");
    };
    let link = link_to(client, links, made.id).await?;
    Ok(json!({
        "fileId": made.id, "fileName": made.file_name,
        "entries": job.result.as_ref().map_or(Value::Null, |r| r["entries"].clone()),
        "link": link["link"]
    }))
}

/// The job `id` once done, waited for at most `patience`; why not otherwise.
pub(super) async fn ended(client: &Client, id: Uuid, patience: std::time::Duration) -> anyhow::Result<Job> {
    // Each call holds until the job ends or 30 s pass.
    let wait = JobWait {
        hold: std::time::Duration::from_secs(30),
        patience: Some(patience),
    };
    let job = client.wait_for_job(id, wait, |_| {}).await?;
    match job.state {
        JobState::Done => Ok(job),
        JobState::Failed | JobState::Stopped => anyhow::bail!(
            "the \"{}\" job \"{}\": {}",
            job.job_type,
            job.state.as_str(),
            json!(job.error)
        ),
        _ => anyhow::bail!(
            "the \"{}\" job is still \"{}\" after {} s: not waited for longer",
            job.job_type,
            job.state.as_str(),
            patience.as_secs()
        ),
    }
}

/// The files a selection (`folder`, `types`, `text`) chooses, at most [`MAX_CHOSEN`], as
/// `/search-files` answers them; refused when it names nothing or finds nothing.
pub(super) async fn selected(client: &Client, arguments: &Value) -> anyhow::Result<Vec<FoundFile>> {
    if ["folder", "types", "text"]
        .iter()
        .all(|f| arguments[*f].is_null())
    {
        anyhow::bail!("say which files: a folder, types or words in their names");
    }
    let found = client.search(&search(arguments, MAX_CHOSEN)).await?;
    if found.files.is_empty() {
        anyhow::bail!("no file matches that: look with list_files");
    }
    Ok(found.files)
}

/// The ids and names of the files a selection chooses ([`selected`]).
async fn chosen(client: &Client, arguments: &Value) -> anyhow::Result<(Vec<Uuid>, Vec<String>)> {
    let files = selected(client, arguments).await?;
    Ok(files.into_iter().map(|f| (f.id, f.file_name)).unzip())
}

async fn move_files(client: &Client, arguments: &Value) -> anyhow::Result<Value> {
    let to = arguments["to"].as_str().filter(|t| !t.trim().is_empty());
    let to = to.ok_or_else(|| anyhow::anyhow!("to is required: a folder like /archive"))?;
    let (ids, names) = chosen(client, arguments).await?;
    let moved = client.move_files(&ids, to).await?;
    Ok(json!({ "moved": names, "folder": moved.folder.map(|f| f.path) }))
}

async fn tag_files(client: &Client, arguments: &Value) -> anyhow::Result<Value> {
    let tag = arguments["tag"].as_str().filter(|t| !t.trim().is_empty());
    let tag = tag.ok_or_else(|| anyhow::anyhow!("tag is required"))?;
    let (ids, names) = chosen(client, arguments).await?;
    client
        .tag_files(&ids, &[tag.trim().to_string()], false)
        .await?;
    Ok(json!({ "tagged": names, "tag": tag.trim() }))
}
/// Proposes, never trashes: the confirmation is the user's, in the next message
/// (`super::confirmed`).
async fn trash_files(client: &Client, made: &mut Made, arguments: &Value) -> anyhow::Result<Value> {
    let (file_ids, names) = chosen(client, arguments).await?;
    let phrase = format!("confirm {}", 1000 + rand::random::<u16>() % 9000);
    let answer = json!({
        "trashed": "nothing yet",
        "wouldTrash": names,
        "confirmWith": phrase,
        "next": format!("Call reply telling the user these files would go to the trash and that they answer '{phrase}' to move them there.")
    });
    made.proposal = Some(Proposal {
        file_ids,
        names,
        phrase,
    });
    Ok(answer)
}

async fn restore_files(client: &Client, arguments: &Value) -> anyhow::Result<Value> {
    let text = arguments["text"].as_str().unwrap_or_default().to_lowercase();
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        anyhow::bail!("text is required: words in the trashed files' names");
    }
    let trash = client.trash_listing().await?;
    let matching: Vec<_> = trash
        .iter()
        .filter(|f| words.iter().all(|w| f.file_name.to_lowercase().contains(w)))
        .take(MAX_CHOSEN as usize)
        .collect();
    if matching.is_empty() {
        anyhow::bail!("no file in the trash has those words in its name");
    }
    let ids: Vec<uuid::Uuid> = matching.iter().map(|f| f.id).collect();
    let outcome = client.batch(drive_client::files::Batch::Restore, &ids).await?;
    let restored: Vec<&str> = matching
        .iter()
        .filter(|f| outcome.done.contains(&f.id))
        .map(|f| f.file_name.as_str())
        .collect();
    Ok(json!({ "restored": restored }))
}
