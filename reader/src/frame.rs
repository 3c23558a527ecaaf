//! A video as the frame at a moment: FFmpeg reads the presigned URL itself, seeking with
//! ranged requests, and only through the media crate's opener (the URL's own protocol and a
//! fixed list of single-file demuxers), so the file's bytes cannot make it open another.

use drive_domain::read::Read;
use drive_media::av::{pictures, probe};
use image::DynamicImage;

use crate::failure::Failure;
use crate::jpeg;

pub async fn read(url: &str, at: Option<f64>) -> Result<Read, Failure> {
    let duration = probe::probe(url)?.duration;
    let at = match (at, duration) {
        (Some(at), Some(duration)) if at >= duration => {
            return Err(Failure::BadField {
                field: "at",
                message: format!("at is past the end of the video, which lasts {duration:.2} s"),
            });
        }
        (Some(at), _) => at,
        (None, Some(duration)) => duration / 10.0,
        (None, None) => 0.0,
    };
    let frame = pictures::frame_at(url, at)?;
    let note = match duration {
        Some(duration) => format!("The frame at {at:.2} s of {duration:.2} s."),
        None => format!("The frame at {at:.2} s."),
    };
    Ok(Read {
        note,
        jpeg: Some(jpeg::fitted(DynamicImage::ImageRgb8(frame))?),
        at: Some(at),
        duration,
        ..Read::default()
    })
}
