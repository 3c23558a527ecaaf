//! Picture formats, sizes and the four pipelines: convert, watermark, strip metadata, save pixels.
//!
//! Every function reads its input from a path and writes its output to a path. When one fails, the
//! output file may exist with partial content: the caller discards it.

mod canvas;
mod container;
mod convert;
mod decode;
mod encode;
mod error;
mod heif;
mod raw;
mod strip;
pub mod taken;
mod watermark;

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use image::metadata::Orientation;

pub use convert::{Convert, convert};
pub use decode::{MAX_PIXELS, dimensions, upright, upright_rgb};
pub use encode::save_rgba;
pub use error::PictureError;
pub use strip::strip_metadata;
pub use watermark::{Watermark, watermark};

/// The formats pictures are written in (and the ones whose metadata can be stripped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PictureFormat {
    Jpg,
    Png,
    Webp,
}

impl PictureFormat {
    /// The usual file name extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            PictureFormat::Jpg => "jpg",
            PictureFormat::Png => "png",
            PictureFormat::Webp => "webp",
        }
    }

    pub fn mime_type(self) -> &'static str {
        match self {
            PictureFormat::Jpg => "image/jpeg",
            PictureFormat::Png => "image/png",
            PictureFormat::Webp => "image/webp",
        }
    }

    /// Recognises the format from the file's first bytes (never from its name). `None` for other
    /// formats and for files that cannot be read.
    pub fn of_path(path: &Path) -> Option<Self> {
        sniff(path).ok().flatten()
    }
}

/// Like [`PictureFormat::of_path`], but a file that cannot be opened is an error, not "unknown".
fn sniff(path: &Path) -> io::Result<Option<PictureFormat>> {
    Ok(written_format(&file_start(path)?))
}

/// A file's first 12 bytes (fewer if it is shorter): enough to tell every format read here.
fn file_start(path: &Path) -> io::Result<Vec<u8>> {
    let mut start = Vec::with_capacity(12);
    File::open(path)?.take(12).read_to_end(&mut start)?;
    Ok(start)
}

/// The format written here that a file's first bytes open, if any.
fn written_format(start: &[u8]) -> Option<PictureFormat> {
    if start.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(PictureFormat::Jpg)
    } else if start.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(PictureFormat::Png)
    } else if start.len() == 12 && start.starts_with(b"RIFF") && &start[8..] == b"WEBP" {
        Some(PictureFormat::Webp)
    } else {
        None
    }
}

/// A size in pixels. Functions return it as the picture is displayed, that is after its EXIF
/// orientation has been applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dimensions {
    pub width: u32,
    pub height: u32,
}

impl Dimensions {
    /// The size once `orientation` is applied: turning by a quarter swaps width and height.
    fn oriented(self, orientation: Orientation) -> Self {
        match orientation {
            Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH => Dimensions {
                width: self.height,
                height: self.width,
            },
            Orientation::NoTransforms
            | Orientation::Rotate180
            | Orientation::FlipHorizontal
            | Orientation::FlipVertical => self,
        }
    }
}

/// Where a watermark goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    TopLeft,
    Top,
    TopRight,
    Left,
    Center,
    Right,
    BottomLeft,
    Bottom,
    BottomRight,
}
