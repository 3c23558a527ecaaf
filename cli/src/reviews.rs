//! Reviews: `drive review create FILE_ID` makes a link to watch a video or track and leave
//! notes, `drive review list` shows the notes as an edit list, `drive review reply NOTE_ID TEXT`
//! answers one, `drive review resolve NOTE_ID [--undo]` marks it dealt with or not.

use anyhow::Result;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::output;
use drive_client::Client;

pub async fn create(client: &Client, file_id: Uuid, title: Option<&str>, json: bool) -> Result<()> {
    let made: Value = client
        .post(
            "/create-file-review",
            &json!({ "fileId": file_id, "title": title }),
        )
        .await?;
    if json {
        return output::print_json(&made);
    }
    println!(
        "review {} of {}",
        made["id"].as_str().unwrap_or("?"),
        made["file"]["fileName"].as_str().unwrap_or("?")
    );
    println!("share {}", made["url"].as_str().unwrap_or("?"));
    Ok(())
}

/// Each review, then its notes in the order of the timeline: timecode, who, text, replies below.
pub async fn list(client: &Client, file_id: Option<Uuid>, json: bool) -> Result<()> {
    let body = match file_id {
        Some(id) => json!({ "fileId": id }),
        None => json!({}),
    };
    let answer: Value = client.post("/select-file-reviews", &body).await?;
    if json {
        return output::print_json(&answer);
    }
    let reviews = answer["reviews"].as_array().cloned().unwrap_or_default();
    if reviews.is_empty() {
        println!("No reviews: `drive review create FILE_ID` makes one.");
    }
    for review in reviews {
        println!(
            "{}  {}  ({})  {}",
            review["id"].as_str().unwrap_or("?"),
            review["title"].as_str().unwrap_or(""),
            review["file"]["fileName"].as_str().unwrap_or("?"),
            review["url"].as_str().unwrap_or("")
        );
        for note in review["notes"].as_array().into_iter().flatten() {
            let resolved = if note["resolved"] == true {
                " [resolved]"
            } else {
                ""
            };
            println!(
                "  {}  {}  {}: {}{resolved}",
                note["timecode"].as_str().unwrap_or("?"),
                note["id"].as_str().unwrap_or("?"),
                note["reviewer"]["name"].as_str().unwrap_or("?"),
                note["text"].as_str().unwrap_or("")
            );
            for reply in note["replies"].as_array().into_iter().flatten() {
                println!(
                    "      {}: {}",
                    reply["reviewer"]["name"].as_str().unwrap_or("?"),
                    reply["text"].as_str().unwrap_or("")
                );
            }
        }
    }
    Ok(())
}

pub async fn reply(client: &Client, note_id: Uuid, text: &str, json: bool) -> Result<()> {
    let answer: Value = client
        .post(
            "/reply-to-review-note",
            &json!({ "noteId": note_id, "text": text }),
        )
        .await?;
    if json {
        return output::print_json(&answer);
    }
    println!("replied to {note_id}");
    Ok(())
}

pub async fn resolve(client: &Client, note_id: Uuid, resolved: bool, json: bool) -> Result<()> {
    let answer: Value = client
        .post(
            "/set-review-note-resolved",
            &json!({ "noteId": note_id, "resolved": resolved }),
        )
        .await?;
    if json {
        return output::print_json(&answer);
    }
    println!(
        "note {note_id} is {}",
        if resolved { "resolved" } else { "open again" }
    );
    Ok(())
}
