//! A picture as a JPEG of at most [`MAX_PICTURE_EDGE`] pixels on a side. JPEG, PNG, WebP,
//! GIF, BMP and TIFF go through the media crate's converter (header checked against its
//! pixel limit before anything is decoded, JPEGs decoded shrunk); HEIC and AVIF through
//! libheif ([`crate::heif`]); camera RAW files by the preview they embed ([`crate::raw`]).

use std::path::Path;

use drive_core::read::{MAX_PICTURE_EDGE, Read};
use drive_media::picture::{Convert, PictureFormat, convert};

use crate::failure::Failure;
use crate::fetch::Object;
use crate::{heif, jpeg, raw};

pub async fn read(store: &Object, dir: &Path) -> Result<Read, Failure> {
    let input = dir.join("input");
    store.download(&input).await?;
    let start = std::fs::read(&input)?;
    let jpeg = if heif::is_heif(&start) {
        heif::to_jpeg(&start)?
    } else if let Some(preview) = raw::preview(&start) {
        let path = dir.join("preview.jpg");
        std::fs::write(&path, preview.jpeg)?;
        let orientation = preview.orientation;
        drop(start);
        let made = shrink(&path, dir)?;
        raw::oriented(made, orientation)?
    } else {
        drop(start);
        jpeg::encoded(&shrink(&input, dir)?)
    };
    Ok(Read {
        note: format!("The picture as a JPEG of at most {MAX_PICTURE_EDGE} pixels on a side."),
        jpeg: Some(jpeg),
        ..Read::default()
    })
}

/// The picture at `path` turned upright and shrunk, as JPEG bytes.
fn shrink(path: &Path, dir: &Path) -> Result<Vec<u8>, Failure> {
    let output = dir.join("read.jpg");
    let settings = Convert {
        format: PictureFormat::Jpg,
        max_edge: Some(MAX_PICTURE_EDGE),
    };
    convert(path, &output, &settings)?;
    Ok(std::fs::read(&output)?)
}
