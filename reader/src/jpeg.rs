//! The JPEG a read answers, as base64: a video's frame (pixels from `media::av`) fitted and
//! encoded here; a picture's as the media crate made it.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use drive_domain::read::MAX_PICTURE_EDGE;
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, GenericImageView};

use crate::failure::Failure;

const QUALITY: u8 = 85;

/// `picture` shrunk to fit [`MAX_PICTURE_EDGE`] (never enlarged), as a base64 JPEG.
pub fn fitted(picture: DynamicImage) -> Result<String, Failure> {
    let (width, height) = picture.dimensions();
    let picture = if width.max(height) > MAX_PICTURE_EDGE {
        picture.resize(MAX_PICTURE_EDGE, MAX_PICTURE_EDGE, FilterType::Triangle)
    } else {
        picture
    };
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, QUALITY)
        .encode_image(&picture.to_rgb8())
        .map_err(|e| Failure::Unreadable(format!("the picture could not be written as a JPEG: {e}")))?;
    Ok(STANDARD.encode(out))
}

/// A JPEG already made, as base64.
pub fn encoded(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}
