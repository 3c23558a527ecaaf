//! `drive ask TEXT`: a task for the drive's agent (A2A `SendMessage`), waited for, its reply
//! printed (with the links it made) and the conversation's id; `--context ID` goes on with an earlier conversation.

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::output;
use drive_client::Client;

pub async fn ask(client: &Client, text: &str, context: Option<&str>, json: bool) -> Result<()> {
    let mut message = json!({
        "messageId": uuid::Uuid::new_v4().to_string(),
        "role": "ROLE_USER",
        "parts": [{ "text": text }],
    });
    if let Some(context) = context {
        message["contextId"] = Value::String(context.to_string());
    }
    let result = client.a2a("SendMessage", json!({ "message": message })).await?;
    if json {
        return output::print_json(&result);
    }
    let task = &result["task"];
    let said = |v: &Value| {
        v["parts"]
            .as_array()
            .map(|parts| {
                // Text as written; a link (a file the agent made a link to) as its name and URL.
                parts
                    .iter()
                    .filter_map(|p| match (p["text"].as_str(), p["url"].as_str()) {
                        (Some(text), _) => Some(text.to_string()),
                        (None, Some(url)) => {
                            Some(format!("{}: {url}", p["filename"].as_str().unwrap_or("link")))
                        }
                        (None, None) => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    };
    let reply = said(&task["status"]["message"]);
    let context = task["contextId"].as_str().unwrap_or("?");
    match task["status"]["state"].as_str() {
        Some("TASK_STATE_COMPLETED") => {
            println!("{reply}");
            eprintln!("(go on with: drive ask --context {context} …)");
            Ok(())
        }
        Some("TASK_STATE_FAILED") => bail!("the agent could not do it: {reply}"),
        Some(state) => {
            println!("task {} is {state}", task["id"].as_str().unwrap_or("?"));
            Ok(())
        }
        None => bail!("the agent answered no task: {result}"),
    }
}
