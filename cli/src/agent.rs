//! `drive ask TEXT`: a task for the drive's agent (A2A `SendMessage`), waited for, its reply
//! printed (with the links it made) and the conversation's id; `--context ID` goes on with an earlier conversation.
//! `drive agents list` shows the token's tasks (`ListTasks`), a waiting one with what it waits
//! for; `drive agents stop ID` cancels one (`CancelTask`).

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::output::{self, Align};
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

pub async fn list(client: &Client, working: bool, json: bool) -> Result<()> {
    let mut params = json!({ "pageSize": 100 });
    if working {
        params["status"] = json!("TASK_STATE_WORKING");
    }
    let result = client.a2a("ListTasks", params).await?;
    if json {
        return output::print_json(&result);
    }
    let tasks = result["tasks"].as_array().cloned().unwrap_or_default();
    if tasks.is_empty() {
        println!("No agent tasks: `drive ask TEXT` starts one.");
        return Ok(());
    }
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    let rows: Vec<Vec<String>> = tasks
        .iter()
        .map(|task| {
            let status = &task["status"];
            let said: Vec<String> = status["message"]["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["text"].as_str().map(str::to_string))
                .collect();
            let state = text(&status["state"]);
            vec![
                text(&task["id"]),
                state.strip_prefix("TASK_STATE_").unwrap_or(&state).to_lowercase(),
                text(&status["timestamp"]),
                said.join(" ").chars().take(100).collect(),
            ]
        })
        .collect();
    output::print_table(
        &[
            ("ID", Align::Left),
            ("STATE", Align::Left),
            ("SINCE", Align::Left),
            ("WHERE IT STANDS", Align::Left),
        ],
        &rows,
    );
    Ok(())
}

pub async fn stop(client: &Client, id: uuid::Uuid, json: bool) -> Result<()> {
    let task = client.a2a("CancelTask", json!({ "id": id })).await?;
    if json {
        return output::print_json(&task);
    }
    println!("task {id} stopped");
    Ok(())
}
