//! File requests: `drive request create TITLE` makes a link anyone can send files to,
//! `drive request list` shows them with what arrived, `drive request open|close ID`.

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::output::{self, Align};
use drive_client::Client;

/// What `drive request create` asks for.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewRequest {
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expire_time: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept_types: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_files_per_sender: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_arrival: Option<Value>,
}

/// `onArrival` from `--on-arrival TYPE` and `--on-arrival-options JSON`.
pub fn on_arrival(job_type: Option<String>, options: Option<&str>) -> Result<Option<Value>> {
    let Some(job_type) = job_type else { return Ok(None) };
    let options: Value = match options {
        Some(text) => serde_json::from_str(text).context("--on-arrival-options is not JSON")?,
        None => Value::Null,
    };
    Ok(Some(json!({ "jobType": job_type, "options": options })))
}

pub async fn create(client: &Client, request: &NewRequest, json: bool) -> Result<()> {
    let made: Value = client.post("/create-file-request", request).await?;
    if json {
        return output::print_json(&made);
    }
    println!(
        "request {} made; files land in {}",
        made["id"].as_str().unwrap_or("?"),
        made["folder"]["path"].as_str().unwrap_or("?")
    );
    println!("share {}", made["url"].as_str().unwrap_or("?"));
    Ok(())
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    id: Uuid,
    title: String,
    open: bool,
    received_bytes: u64,
    max_bytes: Option<u64>,
    folder: Value,
    drops: Vec<Value>,
    url: String,
}

pub async fn list(client: &Client, folder: Option<&str>, json: bool) -> Result<()> {
    let body = match folder {
        Some(folder) => json!({ "folder": folder }),
        None => json!({}),
    };
    let answer: Value = client.post("/select-file-requests", &body).await?;
    if json {
        return output::print_json(&answer);
    }
    let requests: Vec<Listed> = serde_json::from_value(answer["requests"].clone())?;
    if requests.is_empty() {
        println!("No file requests: `drive request create TITLE` makes one.");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = requests
        .iter()
        .map(|r| {
            let files: usize = r
                .drops
                .iter()
                .map(|d| d["files"].as_array().map_or(0, Vec::len))
                .sum();
            let received = match r.max_bytes {
                Some(max) => format!("{} of {}", output::size(r.received_bytes), output::size(max)),
                None => output::size(r.received_bytes),
            };
            vec![
                r.id.to_string(),
                if r.open { "open" } else { "closed" }.to_string(),
                r.drops.len().to_string(),
                files.to_string(),
                received,
                r.folder["path"].as_str().unwrap_or("?").to_string(),
                r.title.clone(),
            ]
        })
        .collect();
    output::print_table(
        &[
            ("ID", Align::Left),
            ("STATE", Align::Left),
            ("SENDERS", Align::Right),
            ("FILES", Align::Right),
            ("RECEIVED", Align::Right),
            ("FOLDER", Align::Left),
            ("TITLE", Align::Left),
        ],
        &rows,
    );
    Ok(())
}

pub async fn set_open(client: &Client, id: Uuid, open: bool, json: bool) -> Result<()> {
    let answer: Value = client
        .post(
            "/set-file-request-open",
            &json!({ "requestId": id, "open": open }),
        )
        .await?;
    if json {
        return output::print_json(&answer);
    }
    let now_open = answer["open"].as_bool().unwrap_or(false);
    match (open, now_open) {
        (true, false) => println!("request {id} stays closed: it is past its expiry"),
        (_, true) => println!("request {id} is open"),
        (false, false) => println!("request {id} is closed"),
    }
    Ok(())
}
