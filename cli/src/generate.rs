//! `drive generate PROMPT`: an image drawn from a prompt and saved privately to your drive. The
//! drive saves it; the command only starts it and, with `--wait`, follows it to its end and
//! prints the saved file (it keeps no copy of its own and uploads nothing).

use std::time::Duration;

use anyhow::{Result, bail};
use uuid::Uuid;

use crate::output;
use drive_client::Client;
use drive_client::generations::{Generation, GenerationStatus, NewImage};

/// How often a waiting command asks, and how long it waits in all.
const POLL: Duration = Duration::from_millis(500);
const PATIENCE: Duration = Duration::from_secs(15 * 60);

pub async fn run(client: &Client, image: &NewImage, wait: bool, json: bool) -> Result<()> {
    let started = client.generate_image(image).await?;
    if !wait {
        if json {
            return output::print_json(&started);
        }
        println!(
            "generation {id} started ({}); see it with: drive generate --status {id}",
            started.model,
            id = started.id
        );
        return Ok(());
    }
    let ended = client.wait_for_generation(started.id, POLL, PATIENCE).await?;
    if ended.status == GenerationStatus::Working {
        bail!(
            "generation {} is still working after {} minutes",
            started.id,
            PATIENCE.as_secs() / 60
        );
    }
    show(&ended, json)
}

/// Where generation `id` stands.
pub async fn status(client: &Client, id: Uuid, json: bool) -> Result<()> {
    match client.generation(id).await? {
        Some(generation) => show(&generation, json),
        None => bail!("no generation of yours has the id {id}"),
    }
}

fn show(generation: &Generation, json: bool) -> Result<()> {
    if json {
        return output::print_json(generation);
    }
    let id = generation.id;
    match (generation.status, &generation.image) {
        (GenerationStatus::Done, image) => {
            match image {
                Some(image) => println!(
                    "generation {id} done: {} ({}, {} bytes), file {}",
                    image.file_name, image.mime_type, image.file_size, image.id,
                ),
                None => println!("generation {id} done: ? (?, null bytes), file ?"),
            }
            match image.as_ref().and_then(|i| i.download_url.as_deref()) {
                Some(url) => println!("{url}"),
                None if generation.trashed == Some(true) => println!("the image is in the trash"),
                None => println!("the image is no longer in the drive"),
            }
            Ok(())
        }
        (GenerationStatus::Failed, _) => bail!(
            "generation {id} failed: {}",
            generation.error.as_deref().unwrap_or("no reason given")
        ),
        (GenerationStatus::Working, _) => {
            println!("generation {id} is working");
            Ok(())
        }
    }
}
