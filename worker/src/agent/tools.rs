//! The agent's tools: the drive's own routes, called through the client library as the task's
//! API token (a session of that token's), so the agent reaches exactly what the token does.
//! Coarse on purpose: a small model does better with few tools that each do one whole thing.

use drive_client::Client;
use serde_json::{Value, json};

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
            "description": "A link to download one of the user's files (valid 6 hours for a private file).",
            "parameters": { "type": "object", "properties": {
                "fileId": { "type": "string", "description": "A file id from list_files." }
            }, "required": ["fileId"] }
        } },
        { "type": "function", "function": {
            "name": "reply",
            "description": "Ends the task with your answer to the user. Put any links you made in it.",
            "parameters": { "type": "object", "properties": {
                "text": { "type": "string" }
            }, "required": ["text"] }
        } }
    ])
}

/// What a call of a tool other than `reply` answers the model: its result, or why it failed
/// (so the model can try otherwise).
pub async fn call(client: &Client, name: &str, arguments: &Value) -> Value {
    let outcome = match name {
        "list_files" => list_files(client, arguments).await,
        "get_link" => get_link(client, arguments).await,
        other => Err(anyhow::anyhow!(
            "there is no tool {other}: use list_files, get_link or reply"
        )),
    };
    outcome.unwrap_or_else(|e| json!({ "error": format!("{e:#}") }))
}

async fn list_files(client: &Client, arguments: &Value) -> anyhow::Result<Value> {
    let limit = arguments["limit"].as_u64().unwrap_or(20).clamp(1, 50);
    let mut search = json!({ "limit": limit, "sort": "newest" });
    for field in ["text", "folder", "types"] {
        if !arguments[field].is_null() {
            search[field] = arguments[field].clone();
        }
    }
    let found: Value = client.post("/search-files", &search).await?;
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

async fn get_link(client: &Client, arguments: &Value) -> anyhow::Result<Value> {
    let id = arguments["fileId"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("fileId is required"))?;
    let link: Value = client
        .post("/generate-download-url", &json!({ "id": id }))
        .await?;
    Ok(json!({ "url": link["downloadUrl"], "fileName": link["fileName"] }))
}
