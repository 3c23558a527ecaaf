use std::path::Path;

use image::metadata::Orientation;

use super::canvas::Canvas;
use super::decode::decode;
use super::encode::{self, Settings};
use super::{PictureError, container, sniff};

/// Quality for the rare re-encode below: high, since the picture was not meant to change.
const REORIENTED_QUALITY: u8 = 92;

/// Removes metadata from a JPEG, PNG or WebP without re-encoding pixels, streaming with bounded
/// memory:
/// - JPEG: drops APP1..APP15 (EXIF, XMP, MPF, IPTC…) and comments, and anything after the end
///   marker (phones append preview pictures and motion-photo videos there). Keeps JFIF (APP0), the
///   colour profile (APP2 `ICC_PROFILE`) and Adobe's APP14, which is needed to read CMYK colours
///   and carries no metadata. Entropy-coded data is copied byte for byte.
/// - PNG: drops tEXt, zTXt, iTXt (which holds XMP), eXIf and tIME; keeps colour chunks (iCCP, gAMA,
///   cHRM, sRGB…) and everything else.
/// - WebP: drops EXIF and XMP chunks and clears their flags in VP8X.
///
/// The exception is a still picture whose EXIF orientation is not "upright": viewers turn such a
/// picture by that tag, so dropping it would turn the picture on screen. It is decoded, turned,
/// and re-encoded in its own format instead (JPEG at quality 92, PNG and lossless WebP without
/// loss, lossy WebP at quality 92), keeping the colour profile except in WebP. Animated PNG/WebP
/// are always stripped as they are.
///
/// Other formats are refused with a client error.
pub fn strip_metadata(input: &Path, output: &Path) -> Result<(), PictureError> {
    let Some(format) = sniff(input)? else {
        return Err(PictureError::Unsupported(
            "metadata can only be removed from JPEG, PNG and WebP pictures".into(),
        ));
    };
    let header = container::read_header(format, &container::Encoded::File(input))?;
    if header.orientation == Orientation::NoTransforms || header.animated {
        return container::strip(format, input, output);
    }
    let decoded = decode(input)?;
    let canvas = Canvas::from_image(decoded.image);
    let settings = Settings {
        quality: REORIENTED_QUALITY,
        lossless: decoded.lossless,
        icc: decoded.icc.as_deref(),
    };
    encode::write(&canvas.view(), format, &settings, output)
}
