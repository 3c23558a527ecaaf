//! The agent's tools: the drive's own routes, called through the client library as the task's
//! API token (a session of that token's), so the agent reaches exactly what the token does.
//! Coarse on purpose: a small model does better with few tools that each do one whole thing.

use drive_client::Client;
use drive_core::a2a::Part;
use serde_json::{Value, json};

/// The links the tools made in a task, attached to its reply as `url` parts: a model never has
/// to copy a signed link (hundreds of characters a small model garbles, and slow to write).
#[derive(Debug, Default)]
pub struct Links(pub Vec<Part>);

impl Links {
    /// Keeps `link` (as `/generate-download-url` answers) and answers what the model is told.
    fn keep(&mut self, link: &Value) -> Value {
        let name = link["fileName"].as_str().unwrap_or("file").to_string();
        if let Some(url) = link["downloadUrl"].as_str() {
            self.0.push(Part {
                url: Some(url.to_string()),
                filename: Some(name.clone()),
                media_type: link["mimeType"].as_str().map(str::to_string),
                ..Part::default()
            });
        }
        json!(format!("attached to your reply as {name}"))
    }
}

/// What the model is told it may call.
pub fn definitions() -> Value {
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
pub async fn call(client: &Client, links: &mut Links, name: &str, arguments: &Value) -> Value {
    let outcome = match name {
        "list_files" => list_files(client, arguments).await,
        "get_link" => get_link(client, links, arguments).await,
        "zip_files" => zip_files(client, links, arguments).await,
        other => Err(anyhow::anyhow!(
            "there is no tool {other}: use list_files, get_link, zip_files or reply"
        )),
    };
    outcome.unwrap_or_else(|e| json!({ "error": format!("{e:#}") }))
}

async fn list_files(client: &Client, arguments: &Value) -> anyhow::Result<Value> {
    let limit = arguments["limit"].as_u64().unwrap_or(20).clamp(1, 50);
    let found: Value = client.post("/search-files", &search(arguments, limit)).await?;
    let files: Vec<Value> = found["files"]
        .as_array()
        .map(|files| {
            files
                .iter()
                .map(|f| {
                    json!({
                        "id": f["id"], "name": f["fileName"], "type": f["type"], "size": f["fileSize"],
                        "folder": f["folder"], "uploaded": f["insertTime"]
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(json!({ "files": files }))
}

/// The `/search-files` body for the files a tool's `text`, `folder` and `types` choose, newest
/// first.
fn search(arguments: &Value, limit: u64) -> Value {
    let mut search = json!({ "limit": limit, "sort": "newest" });
    for field in ["text", "folder", "types"] {
        if !arguments[field].is_null() {
            search[field] = arguments[field].clone();
        }
    }
    search
}

async fn get_link(client: &Client, links: &mut Links, arguments: &Value) -> anyhow::Result<Value> {
    if arguments["text"].as_str().is_none_or(|t| t.trim().is_empty()) {
        anyhow::bail!("text is required: words in the file's name");
    }
    let chosen = json!({ "text": arguments["text"], "folder": arguments["folder"] });
    let found: Value = client.post("/search-files", &search(&chosen, 1)).await?;
    let Some(id) = found["files"][0]["id"].as_str() else {
        anyhow::bail!("no file's name has those words: look with list_files");
    };
    link_to(client, links, id).await
}

/// Makes a link to the file `id` and keeps it for the reply; answers what the model is told.
async fn link_to(client: &Client, links: &mut Links, id: &str) -> anyhow::Result<Value> {
    let link: Value = client
        .post("/generate-download-url", &json!({ "id": id }))
        .await?;
    Ok(json!({ "fileName": link["fileName"], "link": links.keep(&link) }))
}

/// The longest a zip is waited for; past it the model is told where it stands.
const ZIP_PATIENCE: std::time::Duration = std::time::Duration::from_secs(600);

/// The most files a zip made by the agent takes.
const MAX_ZIPPED: u64 = 100;

async fn zip_files(client: &Client, links: &mut Links, arguments: &Value) -> anyhow::Result<Value> {
    if arguments["folder"].is_null() && arguments["types"].is_null() {
        anyhow::bail!("say which files: a folder, types or both");
    }
    let chosen = json!({ "folder": arguments["folder"], "types": arguments["types"] });
    let found: Value = client.post("/search-files", &search(&chosen, MAX_ZIPPED)).await?;
    let ids: Vec<Value> = found["files"]
        .as_array()
        .map(|files| files.iter().map(|f| f["id"].clone()).collect())
        .unwrap_or_default();
    if ids.is_empty() {
        anyhow::bail!("no file is there: check the folder with list_files");
    }
    let mut job = json!({ "jobType": "zip", "fileIds": ids });
    // The job adds `.zip` itself; a model tends to write it too.
    let name = arguments["name"]
        .as_str()
        .map(|n| n.trim().trim_end_matches(".zip").trim());
    if let Some(name) = name.filter(|n| !n.is_empty()) {
        job["options"] = json!({ "name": name });
    }
    let created: Value = client.post("/create-file-job", &job).await?;
    let id = created["job"]["id"].clone();
    let deadline = tokio::time::Instant::now() + ZIP_PATIENCE;
    loop {
        // Each call holds until the job ends or 30 s pass.
        let listed: Value = client
            .post("/select-file-jobs", &json!({ "ids": [id], "wait": 30 }))
            .await?;
        let job = &listed["jobs"][0];
        match job["state"].as_str().unwrap_or_default() {
            "done" => {
                let made = &job["files"][0];
                let link = link_to(client, links, made["id"].as_str().unwrap_or_default()).await?;
                return Ok(json!({
                    "fileId": made["id"], "fileName": made["fileName"], "entries": job["result"]["entries"],
                    "link": link["link"]
                }));
            }
            "failed" | "stopped" => anyhow::bail!("the zip job {}: {}", job["state"], job["error"]),
            _ if tokio::time::Instant::now() > deadline => {
                return Ok(
                    json!({ "jobId": id, "state": job["state"], "note": "still running; not waited for longer" }),
                );
            }
            _ => {}
        }
    }
}
