//! `drive generate PROMPT`: an image drawn from a prompt and saved privately to your drive. The
//! drive saves it; the command only starts it and, with `--wait`, follows it to its end and
//! prints the saved file (it keeps no copy of its own and uploads nothing).

use std::time::Duration;

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::output;
use drive_client::Client;

pub struct Ask<'a> {
    pub prompt: &'a str,
    pub model: Option<&'a str>,
    pub aspect_ratio: Option<&'a str>,
    pub quality: Option<&'a str>,
}

/// How often a waiting command asks, and how long it waits in all.
const POLL: Duration = Duration::from_millis(500);
const PATIENCE: Duration = Duration::from_secs(15 * 60);

pub async fn run(client: &Client, ask: &Ask<'_>, wait: bool, json: bool) -> Result<()> {
    let body = json!({
        "prompt": ask.prompt,
        "model": ask.model,
        "aspectRatio": ask.aspect_ratio,
        "quality": ask.quality,
    });
    let started: Value = client.post("/generate-image", &body).await?;
    let id = started["id"].as_str().unwrap_or_default().to_string();
    if !wait {
        if json {
            return output::print_json(&started);
        }
        println!(
            "generation {id} started ({}); see it with: drive generate --status {id}",
            started["model"].as_str().unwrap_or("?")
        );
        return Ok(());
    }
    let ended = follow(client, &id).await?;
    show(&ended, json)
}

/// Where generation `id` stands.
pub async fn status(client: &Client, id: &str, json: bool) -> Result<()> {
    let found = select(client, id).await?;
    show(&found, json)
}

async fn select(client: &Client, id: &str) -> Result<Value> {
    let answer: Value = client
        .post("/select-generations", &json!({ "ids": [id] }))
        .await?;
    match answer["generations"].get(0) {
        Some(generation) => Ok(generation.clone()),
        None => bail!("no generation of yours has the id {id}"),
    }
}

async fn follow(client: &Client, id: &str) -> Result<Value> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let generation = select(client, id).await?;
        if generation["status"] != "working" {
            return Ok(generation);
        }
        if tokio::time::Instant::now() > deadline {
            bail!(
                "generation {id} is still working after {} minutes",
                PATIENCE.as_secs() / 60
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

fn show(generation: &Value, json: bool) -> Result<()> {
    if json {
        return output::print_json(generation);
    }
    let id = generation["id"].as_str().unwrap_or("?");
    match generation["status"].as_str() {
        Some("done") => {
            let image = &generation["image"];
            println!(
                "generation {id} done: {} ({}, {} bytes), file {}",
                image["fileName"].as_str().unwrap_or("?"),
                image["mimeType"].as_str().unwrap_or("?"),
                image["fileSize"],
                image["id"].as_str().unwrap_or("?"),
            );
            match image["downloadUrl"].as_str() {
                Some(url) => println!("{url}"),
                None if generation["trashed"] == true => println!("the image is in the trash"),
                None => println!("the image is no longer in the drive"),
            }
            Ok(())
        }
        Some("failed") => bail!(
            "generation {id} failed: {}",
            generation["error"].as_str().unwrap_or("no reason given")
        ),
        _ => {
            println!("generation {id} is working");
            Ok(())
        }
    }
}
