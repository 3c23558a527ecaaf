//! Reviews: `drive review create FILE_ID` makes a link to watch a video or track and leave
//! notes, `drive review list` shows the notes as an edit list, `drive review reply NOTE_ID TEXT`
//! answers one, `drive review resolve NOTE_ID [--undo]` marks it dealt with or not.

use anyhow::Result;
use uuid::Uuid;

use crate::output;
use drive_client::Client;

pub async fn create(client: &Client, file_id: Uuid, title: Option<&str>, json: bool) -> Result<()> {
    let made = client.create_review(file_id, title).await?;
    if json {
        return output::print_json(&made);
    }
    println!("review {} of {}", made.id, made.file.file_name);
    println!("share {}", made.url);
    Ok(())
}

/// Each review, then its notes in the order of the timeline: timecode, who, text, replies below.
pub async fn list(client: &Client, file_id: Option<Uuid>, json: bool) -> Result<()> {
    let answer = client.reviews(file_id).await?;
    if json {
        return output::print_json(&answer);
    }
    if answer.reviews.is_empty() {
        println!("No reviews: `drive review create FILE_ID` makes one.");
    }
    for review in &answer.reviews {
        println!(
            "{}  {}  ({})  {}",
            review.id, review.title, review.file.file_name, review.url
        );
        for note in &review.notes {
            let resolved = if note.resolved { " [resolved]" } else { "" };
            println!(
                "  {}  {}  {}: {}{resolved}",
                note.timecode, note.id, note.reviewer.name, note.text
            );
            for reply in &note.replies {
                println!("      {}: {}", reply.reviewer.name, reply.text);
            }
        }
    }
    Ok(())
}

pub async fn reply(client: &Client, note_id: Uuid, text: &str, json: bool) -> Result<()> {
    let answer = client.reply_to_note(note_id, text).await?;
    if json {
        return output::print_json(&answer);
    }
    println!("replied to {note_id}");
    Ok(())
}

pub async fn resolve(client: &Client, note_id: Uuid, resolved: bool, json: bool) -> Result<()> {
    let answer = client.resolve_note(note_id, resolved).await?;
    if json {
        return output::print_json(&answer);
    }
    println!(
        "note {note_id} is {}",
        if resolved { "resolved" } else { "open again" }
    );
    Ok(())
}
