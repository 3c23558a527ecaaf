//! A picture as a JPEG of at most [`MAX_PICTURE_EDGE`] pixels on a side, made by the media
//! crate's converter: the one decoding path every picture job takes too, which reads JPEG, PNG,
//! WebP, GIF, BMP, TIFF, HEIC and AVIF (through libheif) and camera RAW files (by the preview
//! they embed), checks the header against its pixel limit before anything is decoded, and turns
//! the picture upright.

use std::path::Path;

use drive_domain::read::{MAX_PICTURE_EDGE, Read};
use drive_media::picture::{Convert, PictureFormat, convert};

use crate::failure::Failure;
use crate::fetch::Object;
use crate::jpeg;

pub async fn read(store: &Object, dir: &Path) -> Result<Read, Failure> {
    let input = dir.join("input");
    store.download(&input).await?;
    let output = dir.join("read.jpg");
    let settings = Convert {
        format: PictureFormat::Jpg,
        max_edge: Some(MAX_PICTURE_EDGE),
    };
    convert(&input, &output, &settings)?;
    Ok(Read {
        note: format!("The picture as a JPEG of at most {MAX_PICTURE_EDGE} pixels on a side."),
        jpeg: Some(jpeg::encoded(&std::fs::read(&output)?)),
        ..Read::default()
    })
}
