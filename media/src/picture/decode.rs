//! Reading pictures, by what the file's bytes say it is (never by its name): the size from the
//! header alone, or every pixel with the orientation applied. The one way pictures are decoded,
//! for every picture job and for `/read-file`:
//! - JPEG, PNG and WebP: headers read by this crate ([`container`]), pixels by `image` (JPEGs
//!   maybe shrunk on load);
//! - GIF (its first frame), BMP and TIFF: by `image`;
//! - HEIC and AVIF: by the system's libheif ([`heif`]);
//! - camera RAW files (DNG, CR2, NEF, ARW…): by the JPEG preview the camera embeds ([`raw`]),
//!   turned by the RAW file's orientation.

use std::path::Path;

use image::metadata::Orientation;
use image::{DynamicImage, GrayImage, ImageDecoder, ImageReader, Limits, RgbImage};
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;

use super::container::{self, Encoded};
use super::{Dimensions, PictureError, PictureFormat, file_start, heif, raw, written_format};

/// The most pixels a picture may have to be decoded (200 megapixels, 800 MB as RGBA). Checked
/// against the header before any pixel is decoded, so a small file that claims a huge size (a
/// decompression bomb) costs nothing.
pub const MAX_PIXELS: u64 = 200_000_000;

/// Memory the decoders may hold at once: the output (at most 8 bytes a pixel for 16-bit RGBA) and
/// their working buffers. A 16-bit picture near [`MAX_PIXELS`] can fail on this instead.
const MAX_DECODER_BYTES: u64 = 1 << 30;

/// What a picture file is, for decoding: told from its first bytes, and for a TIFF file from
/// whether it embeds a camera's JPEG preview.
enum Kind {
    Heif,
    Raw(raw::Preview),
    /// JPEG, PNG or WebP (`Some`), or whatever `image` may read (`None`).
    Plain(Option<PictureFormat>),
}

impl Kind {
    fn of(path: &Path) -> Result<Kind, PictureError> {
        let start = file_start(path)?;
        if heif::is_heif(&start) {
            return Ok(Kind::Heif);
        }
        if raw::is_tiff(&start)
            && let Some(preview) = raw::preview(path)?
        {
            return Ok(Kind::Raw(preview));
        }
        Ok(Kind::Plain(written_format(&start)))
    }
}

/// The picture's size as displayed (after its orientation), from its header alone: a 6000x4000
/// photo turned by a quarter reads as 4000x6000. JPEG, PNG and WebP headers are parsed here,
/// since the `image` crate reads a whole JPEG into memory just to look at it; HEIF's by libheif;
/// a RAW file's is its preview's, turned.
pub fn dimensions(path: &Path) -> Result<Dimensions, PictureError> {
    let (encoded, format, raw_orientation) = match Kind::of(path)? {
        Kind::Heif => return heif::dimensions(path),
        Kind::Raw(preview) => (
            Encoded::Memory(preview.jpeg),
            Some(PictureFormat::Jpg),
            Some(preview.orientation),
        ),
        Kind::Plain(format) => (Encoded::File(path), format, None),
    };
    if let Some(format) = format {
        let header = container::read_header(format, &encoded)?;
        return Ok(header
            .dimensions
            .oriented(raw_orientation.unwrap_or(header.orientation)));
    }
    let mut decoder = open_decoder(&encoded)?;
    let (width, height) = decoder.dimensions();
    let orientation = decoder.orientation().map_err(PictureError::decoding)?;
    Ok(Dimensions { width, height }.oriented(orientation))
}

/// A picture's pixels, turned upright: what a page of a PDF is made from. Checked against
/// [`MAX_PIXELS`] from its header before anything is decoded.
pub fn upright(path: &Path) -> Result<DynamicImage, PictureError> {
    Ok(decode(path)?.image)
}

/// A picture's pixels in RGB, turned upright: what reading the words in it (OCR) takes. Checked
/// against [`MAX_PIXELS`] from its header before anything is decoded.
pub fn upright_rgb(path: &Path) -> Result<RgbImage, PictureError> {
    Ok(decode(path)?.image.into_rgb8())
}

/// A decoded picture, turned upright.
pub(crate) struct Decoded {
    pub image: DynamicImage,
    /// The embedded colour profile, to carry over so colours keep their meaning.
    pub icc: Option<Vec<u8>>,
    /// `None` for the formats that are read but never written (GIF, BMP, TIFF, HEIF, RAW).
    pub format: Option<PictureFormat>,
    pub lossless: bool,
}

/// A decoded picture as stored: not yet turned by its orientation, and maybe smaller than stored.
pub(crate) struct Stored {
    /// [`Stored::size`], or less when decoded at a reduced scale.
    pub image: DynamicImage,
    /// The size the file stores, before any reduction or orientation.
    pub size: Dimensions,
    /// Still to be applied to `image`.
    pub orientation: Orientation,
    pub icc: Option<Vec<u8>>,
    pub format: Option<PictureFormat>,
    pub lossless: bool,
}

/// Decodes a picture (the first frame of an animation) and applies its orientation. For JPEG,
/// PNG and WebP the orientation comes from this crate's own header reader, the same one
/// [`dimensions`] and [`super::strip_metadata`] use, so all three agree.
pub(crate) fn decode(path: &Path) -> Result<Decoded, PictureError> {
    let Stored {
        mut image,
        orientation,
        icc,
        format,
        lossless,
        size: _,
    } = decode_stored(path, None)?;
    image.apply_orientation(orientation);
    Ok(Decoded {
        image,
        icc,
        format,
        lossless,
    })
}

/// Like [`decode`], but leaves the orientation to the caller (turning a picture after shrinking it
/// moves fewer pixels), and when the picture is to be shrunk to fit `max_edge` (a baseline JPEG
/// only, a RAW file's preview included) may decode it at 1/2, 1/4 or 1/8 of its size: the
/// smallest that still leaves its longer edge at least `max_edge`, so what follows still only
/// shrinks. This is libjpeg's "shrink-on-load": the inverse DCT outputs fewer pixels, which saves
/// much of the decoding and resizing work.
pub(crate) fn decode_stored(path: &Path, max_edge: Option<u32>) -> Result<Stored, PictureError> {
    match Kind::of(path)? {
        Kind::Heif => heif::decode(path),
        Kind::Raw(preview) => {
            let encoded = Encoded::Memory(preview.jpeg);
            let stored = decode_encoded(&encoded, Some(PictureFormat::Jpg), max_edge)?;
            // The preview is the sensor's view; the RAW file says how to turn it. It is not a
            // JPEG to write back as one.
            Ok(Stored {
                orientation: preview.orientation,
                format: None,
                ..stored
            })
        }
        Kind::Plain(format) => decode_encoded(&Encoded::File(path), format, max_edge),
    }
}

/// [`decode_stored`] for a JPEG, PNG or WebP (`format`), or any picture `image` reads.
fn decode_encoded(
    encoded: &Encoded,
    format: Option<PictureFormat>,
    max_edge: Option<u32>,
) -> Result<Stored, PictureError> {
    let header = format
        .map(|format| container::read_header(format, encoded))
        .transpose()?;
    if format == Some(PictureFormat::Jpg) {
        container::check_jpeg_complete(encoded)?;
    }
    if let (Some(header), Some(max_edge)) = (&header, max_edge)
        && format == Some(PictureFormat::Jpg)
    {
        let reduction = jpeg_reduction(header.dimensions, max_edge);
        if reduction > 1 {
            check_pixel_count(header.dimensions)?;
            if let Some(stored) = decode_jpeg_reduced(encoded, header, reduction)? {
                return Ok(stored);
            }
        }
    }
    let mut decoder = open_decoder(encoded)?;
    let (width, height) = decoder.dimensions();
    let size = Dimensions { width, height };
    check_pixel_count(size)?;
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
    let image = DynamicImage::from_decoder(decoder).map_err(PictureError::decoding)?;
    Ok(Stored {
        image,
        size,
        orientation,
        icc,
        format,
        lossless: header.is_some_and(|header| header.lossless),
    })
}

pub(crate) fn check_pixel_count(Dimensions { width, height }: Dimensions) -> Result<(), PictureError> {
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(PictureError::TooLarge(format!(
            "{width}x{height} pixels is more than the {} megapixels allowed",
            MAX_PIXELS / 1_000_000
        )));
    }
    Ok(())
}

/// The largest of 8, 4 and 2 that divides the JPEG's longer edge (rounding up, as the decoder
/// does) to at least `max_edge`; 1 when none does.
fn jpeg_reduction(stored: Dimensions, max_edge: u32) -> u32 {
    let longer = stored.width.max(stored.height);
    [8, 4, 2]
        .into_iter()
        .find(|&reduction| longer.div_ceil(reduction) >= max_edge)
        .unwrap_or(1)
}

/// Decodes a JPEG at 1/`reduction` of its size with `jpeg-decoder`'s scaled inverse DCT. `None`
/// where this path does not apply or fails: the full decode then runs, which converts the colour
/// spaces only it handles (CMYK, YCCK) and words any error as usual.
fn decode_jpeg_reduced(
    encoded: &Encoded,
    header: &container::Header,
    reduction: u32,
) -> Result<Option<Stored>, PictureError> {
    let stored = header.dimensions;
    let bytes = encoded.bytes()?;
    // The header is read by zune-jpeg, set as `image` sets it, so the colour space is taken as
    // the full decode takes it and the colour profile is the one it would find.
    let options = DecoderOptions::default()
        .set_strict_mode(false)
        .set_max_width(usize::MAX)
        .set_max_height(usize::MAX);
    let mut zune = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(&bytes[..]), options);
    if zune.decode_headers().is_err()
        || zune.dimensions() != Some((stored.width as usize, stored.height as usize))
    {
        return Ok(None);
    }
    let components = zune.info().map_or(0, |info| info.components);
    let transform = match (zune.input_colorspace(), components) {
        (Some(ColorSpace::YCbCr), 3) => jpeg_decoder::ColorTransform::YCbCr,
        (Some(ColorSpace::RGB), 3) => jpeg_decoder::ColorTransform::RGB,
        (Some(ColorSpace::Luma), 1) => jpeg_decoder::ColorTransform::Grayscale,
        _ => return Ok(None),
    };
    let icc = zune.icc_profile();

    let width = stored.width.div_ceil(reduction);
    let height = stored.height.div_ceil(reduction);
    let (Ok(requested_width), Ok(requested_height)) = (u16::try_from(width), u16::try_from(height)) else {
        return Ok(None);
    };
    let mut decoder = jpeg_decoder::Decoder::new(&bytes[..]);
    decoder.set_max_decoding_buffer_size(MAX_DECODER_BYTES as usize);
    decoder.set_color_transform(transform);
    // Asking for exactly 1/`reduction` of the size gets that scale.
    match decoder.scale(requested_width, requested_height) {
        Ok(size) if size == (requested_width, requested_height) => {}
        _ => return Ok(None),
    }
    let Some(info) = decoder.info() else {
        return Ok(None);
    };
    // Progressive JPEGs go the full way: their decoding time is in the entropy-coded data, which
    // zune-jpeg reads faster, so a reduced inverse DCT would not pay for itself. Lossless ones are
    // not decoded by zune-jpeg at all.
    if info.coding_process != jpeg_decoder::CodingProcess::DctSequential {
        return Ok(None);
    }
    let Ok(pixels) = decoder.decode() else {
        return Ok(None);
    };
    let image = match decoder.info().map(|info| info.pixel_format) {
        Some(jpeg_decoder::PixelFormat::RGB24) => {
            RgbImage::from_raw(width, height, pixels).map(DynamicImage::ImageRgb8)
        }
        Some(jpeg_decoder::PixelFormat::L8) => {
            GrayImage::from_raw(width, height, pixels).map(DynamicImage::ImageLuma8)
        }
        _ => None,
    };
    Ok(image.map(|image| Stored {
        image,
        size: stored,
        orientation: header.orientation,
        icc,
        format: Some(PictureFormat::Jpg),
        lossless: false,
    }))
}

/// A decoder that has read the header, with memory limits set. The format comes from the content:
/// the worker's temporary files have no meaningful names.
fn open_decoder(encoded: &Encoded) -> Result<impl ImageDecoder, PictureError> {
    let mut reader = ImageReader::new(encoded.open()?).with_guessed_format()?;
    if reader.format().is_none() {
        return Err(PictureError::Unsupported(
            "the file is not a JPEG, PNG, WebP, GIF, BMP, TIFF, HEIC, AVIF or camera RAW picture".into(),
        ));
    }
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODER_BYTES);
    reader.limits(limits);
    reader.into_decoder().map_err(PictureError::decoding)
}

#[cfg(test)]
mod tests {
    use image::ColorType;

    use super::*;

    fn size(width: u32, height: u32) -> Dimensions {
        Dimensions { width, height }
    }

    #[test]
    fn the_reduction_leaves_the_longer_edge_at_least_max_edge() {
        assert_eq!(jpeg_reduction(size(6000, 4000), 2048), 2);
        assert_eq!(jpeg_reduction(size(6000, 4000), 3000), 2);
        assert_eq!(jpeg_reduction(size(6000, 4000), 3001), 1);
        assert_eq!(jpeg_reduction(size(4000, 6000), 1500), 4);
        assert_eq!(jpeg_reduction(size(4000, 3000), 500), 8);
        assert_eq!(jpeg_reduction(size(4000, 3000), 1), 8);
        // Rounded up as the decoder does: 4001 / 8 gives 501 pixels.
        assert_eq!(jpeg_reduction(size(4001, 3000), 501), 8);
        assert_eq!(jpeg_reduction(size(4000, 3000), 501), 4);
        assert_eq!(jpeg_reduction(size(300, 200), 1000), 1);
    }

    /// Encodes `width`x`height` pixels of `color` (1, 3 or 4 bytes each) to a JPEG file.
    fn jpeg_file(
        directory: &tempfile::TempDir,
        color: jpeg_encoder::ColorType,
        channels: usize,
        progressive: bool,
    ) -> std::path::PathBuf {
        let (width, height) = (801u16, 600u16);
        let pixels: Vec<u8> = (0..usize::from(width) * usize::from(height) * channels)
            .map(|i| (i / channels % 251 + i % channels * 40) as u8)
            .collect();
        let path = directory.path().join(format!("{color:?}-{progressive}.jpg"));
        let mut encoder = jpeg_encoder::Encoder::new_file(&path, 90).unwrap();
        encoder.set_progressive(progressive);
        encoder.encode(&pixels, width, height, color).unwrap();
        path
    }

    #[test]
    fn baseline_colour_and_grey_jpegs_decode_reduced() {
        let directory = tempfile::tempdir().unwrap();
        for (color, channels, expected) in [
            (jpeg_encoder::ColorType::Rgb, 3, ColorType::Rgb8),
            (jpeg_encoder::ColorType::Luma, 1, ColorType::L8),
        ] {
            let path = jpeg_file(&directory, color, channels, false);
            let stored = decode_stored(&path, Some(100)).unwrap();
            assert_eq!(stored.size, size(801, 600));
            // 801 / 8, rounded up.
            assert_eq!(
                (stored.image.width(), stored.image.height()),
                (101, 75),
                "{color:?}"
            );
            assert_eq!(stored.image.color(), expected);
        }
    }

    #[test]
    fn progressive_and_cmyk_jpegs_decode_in_full() {
        let directory = tempfile::tempdir().unwrap();
        for (color, channels, progressive) in [
            (jpeg_encoder::ColorType::Rgb, 3, true),
            (jpeg_encoder::ColorType::Cmyk, 4, false),
            (jpeg_encoder::ColorType::CmykAsYcck, 4, false),
        ] {
            let path = jpeg_file(&directory, color, channels, progressive);
            let stored = decode_stored(&path, Some(100)).unwrap();
            assert_eq!(
                (stored.image.width(), stored.image.height()),
                (801, 600),
                "{color:?}"
            );
        }
    }

    #[test]
    fn without_a_max_edge_nothing_is_reduced() {
        let directory = tempfile::tempdir().unwrap();
        let path = jpeg_file(&directory, jpeg_encoder::ColorType::Rgb, 3, false);
        let stored = decode_stored(&path, None).unwrap();
        assert_eq!((stored.image.width(), stored.image.height()), (801, 600));
        let stored = decode_stored(&path, Some(500)).unwrap();
        assert_eq!((stored.image.width(), stored.image.height()), (801, 600));
    }
}
