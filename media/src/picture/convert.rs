use std::path::Path;

use super::canvas::{Canvas, fit};
use super::decode::decode_stored;
use super::encode::{self, DEFAULT_QUALITY, Settings};
use super::{Dimensions, PictureError, PictureFormat};

/// What [`convert`] produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Convert {
    pub format: PictureFormat,
    /// The longest the longer edge may be, in pixels; `None` keeps the size. Never enlarges.
    pub max_edge: Option<u32>,
}

/// Decodes `input` (JPEG, PNG, WebP, GIF's first frame, BMP, TIFF, HEIC, AVIF, a camera RAW
/// file's preview), turns it upright by its orientation, shrinks it to fit `max_edge` and writes
/// it to `output` as `format`: JPEG at quality 85 with 4:2:0 chroma (transparent areas on white),
/// PNG, or lossy WebP at quality 85. The colour profile is kept (not in WebP); all other metadata
/// is left behind. Returns the output's size.
///
/// A baseline JPEG that is to shrink to half its size or less is decoded at 1/2, 1/4 or 1/8 scale
/// (never below `max_edge`) and resized the rest of the way, which saves most of the work.
pub fn convert(input: &Path, output: &Path, convert: &Convert) -> Result<Dimensions, PictureError> {
    if convert.max_edge == Some(0) {
        return Err(PictureError::InvalidOptions(
            "the longest edge must be at least 1 pixel".into(),
        ));
    }
    // Shrinking before turning moves fewer pixels. The target comes from the size the file stores,
    // not from what was decoded, which may be a reduced JPEG whose sides were rounded up.
    let decoded = decode_stored(input, convert.max_edge)?;
    let mut canvas = Canvas::from_image(decoded.image);
    if let Some(max_edge) = convert.max_edge {
        canvas.resize(fit(decoded.size, max_edge))?;
    }
    canvas.orient(decoded.orientation);
    let settings = Settings {
        quality: DEFAULT_QUALITY,
        lossless: false,
        icc: decoded.icc.as_deref(),
    };
    encode::write(&canvas.view(), convert.format, &settings, output)?;
    Ok(canvas.dimensions())
}
