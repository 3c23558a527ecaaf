//! `drive import URL`: the drive fetches a link into your drive (an `import` job).

use anyhow::Result;
use serde_json::{Value, json};

use crate::output;
use drive_client::Client;

pub async fn run(
    client: &Client,
    url: &str,
    name: Option<&str>,
    folder: Option<&str>,
    json: bool,
) -> Result<()> {
    let body = json!({ "url": url, "fileName": name, "folder": folder });
    let answer: Value = client.post("/import-from-url", &body).await?;
    if json {
        return output::print_json(&answer);
    }
    println!(
        "job {} queued: the drive fetches {url}; the file lands in {} when it is done",
        answer["job"]["id"].as_str().unwrap_or("?"),
        folder.unwrap_or("/")
    );
    Ok(())
}
