//! Art: `drive cover` puts a picture on a track or a playlist, `drive thumbnail` on a video (a
//! picture, or the frame at a moment).

use anyhow::{Result, bail};
use drive_client::organize::{Covered, FrameAt};
use uuid::Uuid;

use crate::output;
use drive_client::Client;

pub async fn cover(client: &Client, on: Covered, image: Option<Uuid>, json: bool) -> Result<()> {
    let answer = client.set_cover(on, image).await?;
    if json {
        return output::print_json(&answer);
    }
    match image {
        Some(image) => println!("{} now shows {image}", answer.id),
        None => println!("{} shows no chosen cover", answer.id),
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
    let at = at.map(|at| {
        at.parse::<f64>()
            .map(FrameAt::Seconds)
            .unwrap_or_else(|_| FrameAt::Clock(at.to_string()))
    });
    if image.is_some() && at.is_some() {
        bail!("give --image or --at, not both");
    }
    let answer = client.set_video_thumbnail(video, image, at).await?;
    if json {
        return output::print_json(&answer);
    }
    match (answer.job.as_ref().and_then(|made| made.job.as_ref()), image) {
        (Some(job), _) => println!(
            "job {} queued: it takes the frame and shows it for {video}",
            job.id
        ),
        (None, Some(image)) => println!("{video} now shows {image}"),
        (None, None) => println!("{video} shows the poster taken from it again"),
    }
    Ok(())
}
