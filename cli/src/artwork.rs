//! Art: `drive cover` puts a picture on a track or a playlist, `drive thumbnail` on a video (a
//! picture, or the frame at a moment).

use anyhow::{Result, bail};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::output;
use drive_client::Client;

/// Which a cover goes on.
pub enum Covered {
    Track(Uuid),
    Playlist(Uuid),
}

pub async fn cover(client: &Client, on: Covered, image: Option<Uuid>, json: bool) -> Result<()> {
    let body = match on {
        Covered::Track(id) => json!({ "fileId": id, "imageId": image }),
        Covered::Playlist(id) => json!({ "playlistId": id, "imageId": image }),
    };
    let answer: Value = client.post("/set-cover", &body).await?;
    if json {
        return output::print_json(&answer);
    }
    match image {
        Some(image) => println!("{} now shows {image}", answer["id"].as_str().unwrap_or("?")),
        None => println!("{} shows no chosen cover", answer["id"].as_str().unwrap_or("?")),
    }
    Ok(())
}

pub async fn thumbnail(
    client: &Client,
    video: Uuid,
    image: Option<Uuid>,
    at: Option<&str>,
    json: bool,
) -> Result<()> {
    // A number goes as seconds, anything else as a clock form for the drive to read.
    let at: Option<Value> = at.map(|at| {
        at.parse::<f64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(at))
    });
    if image.is_some() && at.is_some() {
        bail!("give --image or --at, not both");
    }
    let answer: Value = client
        .post(
            "/set-video-thumbnail",
            &json!({ "fileId": video, "imageId": image, "at": at }),
        )
        .await?;
    if json {
        return output::print_json(&answer);
    }
    match (&answer["job"]["job"]["id"], image) {
        (Value::String(job), _) => println!("job {job} queued: it takes the frame and shows it for {video}"),
        (_, Some(image)) => println!("{video} now shows {image}"),
        (_, None) => println!("{video} shows the poster taken from it again"),
    }
    Ok(())
}
