//! Reading pictures: the size from the header alone, or every pixel with the orientation applied.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use image::{DynamicImage, ImageDecoder, ImageReader, Limits};

use super::{Dimensions, PictureError, PictureFormat, container, sniff};

/// The most pixels a picture may have to be decoded (200 megapixels, 800 MB as RGBA). Checked
/// against the header before any pixel is decoded, so a small file that claims a huge size (a
/// decompression bomb) costs nothing.
pub const MAX_PIXELS: u64 = 200_000_000;

/// Memory the decoders may hold at once: the output (at most 8 bytes a pixel for 16-bit RGBA) and
/// their working buffers. A 16-bit picture near [`MAX_PIXELS`] can fail on this instead.
const MAX_DECODER_BYTES: u64 = 1 << 30;

/// The picture's size as displayed (after its EXIF orientation), from its header alone: a
/// 6000x4000 photo turned by a quarter reads as 4000x6000. JPEG, PNG and WebP headers are parsed
/// here, since the `image` crate reads a whole JPEG into memory just to look at it.
pub fn dimensions(path: &Path) -> Result<Dimensions, PictureError> {
    if let Some(format) = sniff(path)? {
        let header = container::read_header(format, path)?;
        return Ok(header.dimensions.oriented(header.orientation));
    }
    let mut decoder = open_decoder(path)?;
    let (width, height) = decoder.dimensions();
    let orientation = decoder.orientation().map_err(PictureError::decoding)?;
    Ok(Dimensions { width, height }.oriented(orientation))
}

/// A decoded picture, turned upright.
pub(crate) struct Decoded {
    pub image: DynamicImage,
    /// The embedded colour profile, to carry over so colours keep their meaning.
    pub icc: Option<Vec<u8>>,
    /// `None` for the formats that are read but never written (GIF, BMP, TIFF).
    pub format: Option<PictureFormat>,
    pub lossless: bool,
}

/// Decodes the first frame of a JPEG, PNG, WebP, GIF, BMP or TIFF picture and applies its EXIF
/// orientation. For JPEG, PNG and WebP the orientation comes from this crate's own header reader,
/// the same one [`dimensions`] and [`super::strip_metadata`] use, so all three agree.
pub(crate) fn decode(path: &Path) -> Result<Decoded, PictureError> {
    let format = sniff(path)?;
    let header = format
        .map(|format| container::read_header(format, path))
        .transpose()?;
    if format == Some(PictureFormat::Jpg) {
        container::check_jpeg_complete(path)?;
    }
    let mut decoder = open_decoder(path)?;
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(PictureError::TooLarge(format!(
            "{width}x{height} pixels is more than the {} megapixels allowed",
            MAX_PIXELS / 1_000_000
        )));
    }
    if decoder.total_bytes() > MAX_DECODER_BYTES {
        return Err(PictureError::TooLarge(format!(
            "{width}x{height} pixels at this colour depth need more memory than allowed"
        )));
    }
    let orientation = match &header {
        Some(header) => header.orientation,
        None => decoder.orientation().map_err(PictureError::decoding)?,
    };
    let icc = decoder.icc_profile().map_err(PictureError::decoding)?;
    let mut image = DynamicImage::from_decoder(decoder).map_err(PictureError::decoding)?;
    image.apply_orientation(orientation);
    Ok(Decoded {
        image,
        icc,
        format,
        lossless: header.is_some_and(|header| header.lossless),
    })
}

/// A decoder that has read the header, with memory limits set. The format comes from the content:
/// the worker's temporary files have no meaningful names.
fn open_decoder(path: &Path) -> Result<impl ImageDecoder, PictureError> {
    let mut reader = ImageReader::new(BufReader::new(File::open(path)?)).with_guessed_format()?;
    if reader.format().is_none() {
        return Err(PictureError::Unsupported(
            "the file is not a JPEG, PNG, WebP, GIF, BMP or TIFF picture".into(),
        ));
    }
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODER_BYTES);
    reader.limits(limits);
    reader.into_decoder().map_err(PictureError::decoding)
}
