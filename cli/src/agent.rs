//! `drive ask TEXT`: a task for the drive's agent (A2A `SendMessage`), waited for, its reply
//! printed (with the links it made) and the conversation's id; `--context ID` goes on with an earlier conversation.
//! `drive agents list` shows the account's tasks, whichever token or app started them, a waiting
//! one with what it waits for (`/select-agent-tasks`); `drive agents stop ID` cancels one
//! (`/stop-agent-task`).

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

pub async fn list(client: &Client, state: Option<&str>, json: bool) -> Result<()> {
    let mut tasks = Vec::new();
    let mut cursor = None;
    loop {
        let page = client.agent_tasks(state, cursor.as_deref()).await?;
        tasks.extend(page.tasks);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    if json {
        return output::print_json(&json!({ "tasks": tasks }));
    }
    if tasks.is_empty() {
        println!("No agent tasks: `drive ask TEXT` starts one.");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = tasks
        .iter()
        .map(|task| {
            // A waiting task says what for and until when; another, the agent's latest word.
            let stands = match (&task.waiting_for, task.wait_until) {
                (Some(what), Some(until)) => format!("{what} (until {})", output::time(until)),
                _ => task.said.clone().unwrap_or_default(),
            };
            vec![
                task.task_id.to_string(),
                task.state.clone(),
                output::time(task.status_time),
                task.started_by.clone(),
                stands.chars().take(100).collect(),
            ]
        })
        .collect();
    output::print_table(
        &[
            ("ID", Align::Left),
            ("STATE", Align::Left),
            ("SINCE", Align::Left),
            ("STARTED BY", Align::Left),
            ("WHERE IT STANDS", Align::Left),
        ],
        &rows,
    );
    Ok(())
}

pub async fn stop(client: &Client, id: uuid::Uuid, json: bool) -> Result<()> {
    let stopped = client.stop_agent_task(id).await?;
    output::show(&stopped, json, |_| format!("task {id} stopped"))
}
