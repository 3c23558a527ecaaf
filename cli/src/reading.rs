//! Reading files and searching inside them: `drive read ID` reads one (`/read-file`),
//! `drive read-for-search ID...` has files read (a readForSearch job), `drive captions ID...`
//! makes captions of what was read, `drive search --query TEXT` shows the moments found.

use std::path::Path;

use anyhow::{Context, Result, bail};
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::output::{self, Align};
use drive_client::Client;

/// A moment as `/search-files` answers it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Moment {
    file_id: Uuid,
    entry_type: String,
    text: String,
    at: Option<f64>,
    until: Option<f64>,
    page: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct Found {
    files: Vec<Value>,
    #[serde(default)]
    moments: Vec<Moment>,
}

/// Submits a readForSearch job for `ids`; prints the job.
pub async fn read_for_search(client: &Client, ids: &[Uuid], json: bool) -> Result<()> {
    let body = json!({ "jobType": "readForSearch", "fileIds": ids });
    submit(
        client,
        &body,
        "to read; `drive search --query …` finds them once it is done",
        json,
    )
    .await
}

/// Submits a captions job for `ids`; prints the job.
pub async fn captions(client: &Client, ids: &[Uuid], format: &str, json: bool) -> Result<()> {
    let body = json!({ "jobType": "captions", "fileIds": ids, "options": { "format": format } });
    submit(
        client,
        &body,
        "to caption; the captions land beside each file",
        json,
    )
    .await
}

async fn submit(client: &Client, body: &Value, what: &str, json: bool) -> Result<()> {
    let answer: Value = client.post("/create-file-job", body).await?;
    if json {
        return output::print_json(&answer);
    }
    println!(
        "job {} queued: {} file(s) {what}",
        answer["job"]["id"].as_str().unwrap_or("?"),
        body["fileIds"].as_array().map_or(0, Vec::len)
    );
    Ok(())
}

/// The body of `/read-file`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadBody {
    pub file_id: Uuid,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_page: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_page: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

/// Reads a file: prints its note, text and what is said, and writes a picture or frame to
/// `out` (an answer holding a picture is an error without `out`).
pub async fn read(client: &Client, body: &ReadBody, out: Option<&Path>, json: bool) -> Result<()> {
    let answer: Value = client.post("/read-file", body).await?;
    if let Some(data) = answer["image"]["data"].as_str() {
        let Some(out) = out else {
            bail!(
                "{} is read as a picture: give --out FILE to write it",
                body.file_id
            );
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .context("the picture the drive sent is not base64")?;
        std::fs::write(out, bytes).with_context(|| format!("writing {}", out.display()))?;
    }
    if json {
        return output::print_json(&answer);
    }
    println!("{}", answer["note"].as_str().unwrap_or_default());
    if let Some(out) = out.filter(|_| answer.get("image").is_some()) {
        println!("picture written to {}", out.display());
    }
    if let Some(text) = answer["text"].as_str() {
        println!("{text}");
    }
    if let Some(said) = answer["said"].as_array() {
        for s in said {
            println!(
                "[{:.1}–{:.1} s] {}",
                s["at"].as_f64().unwrap_or_default(),
                s["until"].as_f64().unwrap_or_default(),
                s["text"].as_str().unwrap_or_default()
            );
        }
    }
    for (field, label) in [("nextOffset", "next offset"), ("nextAt", "next at")] {
        if let Some(next) = answer.get(field) {
            println!("{label}: {next}");
        }
    }
    Ok(())
}

/// The moments best matching `query`, with the name of the file each is in.
/// `/search-files` with `body`: with a query, the moments found inside files; without, the
/// files that match.
pub async fn search(client: &Client, body: Value, json: bool) -> Result<()> {
    let found: Value = client.post("/search-files", &body).await?;
    if json {
        return output::print_json(&found);
    }
    if body.get("query").is_none() {
        let rows: Vec<Vec<String>> = found["files"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                let text = |v: &Value| v.as_str().unwrap_or("").to_string();
                vec![
                    text(&f["id"]),
                    text(&f["type"]),
                    f["fileSize"].to_string(),
                    text(&f["folder"]),
                    text(&f["fileName"]),
                ]
            })
            .collect();
        output::print_table(
            &[
                ("ID", Align::Left),
                ("TYPE", Align::Left),
                ("SIZE", Align::Right),
                ("FOLDER", Align::Left),
                ("NAME", Align::Left),
            ],
            &rows,
        );
        if let Some(next) = found["nextOffset"].as_u64() {
            println!("more: --offset {next}");
        }
        return Ok(());
    }
    let found: Found = serde_json::from_value(found)?;
    if found.moments.is_empty() {
        println!("Nothing found inside the files you have had read.");
        return Ok(());
    }
    let name_of = |id: Uuid| {
        found
            .files
            .iter()
            .find(|f| f["id"].as_str() == Some(&id.to_string()))
            .and_then(|f| f["fileName"].as_str())
            .unwrap_or("?")
            .to_string()
    };
    let rows: Vec<Vec<String>> = found
        .moments
        .iter()
        .map(|m| vec![name_of(m.file_id), place(m), m.entry_type.clone(), m.text.clone()])
        .collect();
    output::print_table(
        &[
            ("FILE", Align::Left),
            ("WHERE", Align::Left),
            ("KIND", Align::Left),
            ("TEXT", Align::Left),
        ],
        &rows,
    );
    Ok(())
}

/// Where in its file a moment is: a page, a span of time, or nothing for a text file.
fn place(m: &Moment) -> String {
    match (m.page, m.at, m.until) {
        (Some(page), _, _) => format!("page {page}"),
        (None, Some(at), Some(until)) => format!("{at:.1}–{until:.1} s"),
        (None, Some(at), None) => format!("{at:.1} s"),
        _ => String::new(),
    }
}
