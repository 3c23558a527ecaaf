//! Searching inside files: `drive read-for-search ID...` has files read (a readForSearch job),
//! `drive search --query TEXT` shows the moments found in them.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::client::Client;
use crate::output::{self, Align};

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
pub async fn read(client: &Client, ids: &[Uuid], json: bool) -> Result<()> {
    let answer: Value = client
        .post(
            "/create-file-job",
            &json!({ "jobType": "readForSearch", "fileIds": ids }),
        )
        .await?;
    if json {
        return output::print_json(&answer);
    }
    println!(
        "job {} queued: {} file(s) to read; `drive search --query …` finds them once it is done",
        answer["job"]["id"].as_str().unwrap_or("?"),
        ids.len()
    );
    Ok(())
}

/// The moments best matching `query`, with the name of the file each is in.
pub async fn search(client: &Client, query: &str, limit: Option<u32>, json: bool) -> Result<()> {
    let mut body = json!({ "query": query });
    if let Some(limit) = limit {
        body["limit"] = json!(limit);
    }
    let found: Value = client.post("/search-files", &body).await?;
    if json {
        return output::print_json(&found);
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
