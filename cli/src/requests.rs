//! File requests: `drive request create TITLE` makes a link anyone can send files to,
//! `drive request list` shows them with what arrived, `drive request open|close ID`.

use anyhow::{Context, Result};
use drive_client::requests::{NewRequest, OnArrival};
use serde_json::Value;
use uuid::Uuid;

use crate::output::{self, Align};
use drive_client::Client;

/// `onArrival` from `--on-arrival TYPE` and `--on-arrival-options JSON`.
pub fn on_arrival(job_type: Option<String>, options: Option<&str>) -> Result<Option<OnArrival>> {
    let Some(job_type) = job_type else { return Ok(None) };
    let options: Value = match options {
        Some(text) => serde_json::from_str(text).context("--on-arrival-options is not JSON")?,
        None => Value::Null,
    };
    Ok(Some(OnArrival { job_type, options }))
}

pub async fn create(client: &Client, request: &NewRequest, json: bool) -> Result<()> {
    let made = client.create_request(request).await?;
    if json {
        return output::print_json(&made);
    }
    println!("request {} made; files land in {}", made.id, made.folder.path);
    println!("share {}", made.url);
    Ok(())
}

pub async fn list(client: &Client, folder: Option<&str>, json: bool) -> Result<()> {
    let answer = client.requests(folder).await?;
    if json {
        return output::print_json(&answer);
    }
    let requests = answer.requests;
    if requests.is_empty() {
        println!("No file requests: `drive request create TITLE` makes one.");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = requests
        .iter()
        .map(|r| {
            let files: usize = r.drops.iter().map(|d| d.files.len()).sum();
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
                r.folder.path.clone(),
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
    let answer = client.set_request_open(id, open).await?;
    if json {
        return output::print_json(&answer);
    }
    match (open, answer.open) {
        (true, false) => println!("request {id} stays closed: it is past its expiry"),
        (_, true) => println!("request {id} is open"),
        (false, false) => println!("request {id} is closed"),
    }
    Ok(())
}
