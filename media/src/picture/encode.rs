//! Writing pixels: JPEG with `jpeg-encoder`, PNG with `image`, WebP with libwebp.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ExtendedColorType, ImageEncoder, RgbaImage};
use jpeg_encoder::{ColorType, EncodingError, SamplingFactor};

use super::{PictureError, PictureFormat};

/// JPEG and lossy WebP quality for converted pictures and saved pixels: the usual balance of size
/// and fidelity for photos.
pub(crate) const DEFAULT_QUALITY: u8 = 85;

/// Largest sides the formats can store.
const JPEG_MAX_SIDE: u32 = u16::MAX as u32;
const WEBP_MAX_SIDE: u32 = 16383;

/// Borrowed 8-bit pixels, rows top to bottom, RGB or RGBA.
pub(crate) struct Pixels<'a> {
    pub data: &'a [u8],
    pub width: u32,
    pub height: u32,
    pub alpha: bool,
}

pub(crate) struct Settings<'a> {
    /// 1..=100, for JPEG and lossy WebP.
    pub quality: u8,
    /// WebP only (PNG is always lossless, JPEG never).
    pub lossless: bool,
    /// Embedded in JPEG and PNG. libwebp's simple encoder cannot embed one, so WebP goes without.
    pub icc: Option<&'a [u8]>,
}

pub(crate) fn write(
    pixels: &Pixels,
    format: PictureFormat,
    settings: &Settings,
    output: &Path,
) -> Result<(), PictureError> {
    match format {
        PictureFormat::Jpg => write_jpeg(pixels, settings, output),
        PictureFormat::Png => write_png(pixels, settings, output),
        PictureFormat::Webp => write_webp(pixels, settings, output),
    }
}

/// Encodes RGBA pixels (a rendered PDF page, say) to `output` at the default quality. Transparent
/// areas become white in a JPEG; fully opaque pixels are written without an alpha channel.
pub fn save_rgba(pixels: &RgbaImage, format: PictureFormat, output: &Path) -> Result<(), PictureError> {
    let (width, height) = pixels.dimensions();
    if width == 0 || height == 0 {
        return Err(PictureError::InvalidOptions(
            "a picture without pixels cannot be saved".into(),
        ));
    }
    let settings = Settings {
        quality: DEFAULT_QUALITY,
        lossless: false,
        icc: None,
    };
    if pixels.pixels().all(|pixel| pixel[3] == u8::MAX) {
        let rgb: Vec<u8> = pixels
            .as_raw()
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        write(
            &Pixels {
                data: &rgb,
                width,
                height,
                alpha: false,
            },
            format,
            &settings,
            output,
        )
    } else {
        write(
            &Pixels {
                data: pixels.as_raw(),
                width,
                height,
                alpha: true,
            },
            format,
            &settings,
            output,
        )
    }
}

fn write_jpeg(pixels: &Pixels, settings: &Settings, output: &Path) -> Result<(), PictureError> {
    let (Ok(width), Ok(height)) = (u16::try_from(pixels.width), u16::try_from(pixels.height)) else {
        return Err(too_large("JPEG", JPEG_MAX_SIDE));
    };
    // JPEG has no alpha channel: what was transparent is shown on white, as a browser would.
    let flattened;
    let data = if pixels.alpha {
        flattened = flatten_on_white(pixels.data);
        &flattened
    } else {
        pixels.data
    };
    let mut file = BufWriter::new(File::create(output)?);
    let mut encoder = jpeg_encoder::Encoder::new(&mut file, settings.quality);
    encoder.set_sampling_factor(SamplingFactor::R_4_2_0);
    // Not `set_optimized_huffman_tables`: in jpeg-encoder 0.7.1 it produced pictures that decode
    // to the wrong colours (a flat white picture came back green).
    if let Some(icc) = settings.icc {
        encoder.add_icc_profile(icc).map_err(jpeg_error)?;
    }
    encoder
        .encode(data, width, height, ColorType::Rgb)
        .map_err(jpeg_error)?;
    file.flush()?;
    Ok(())
}

fn write_png(pixels: &Pixels, settings: &Settings, output: &Path) -> Result<(), PictureError> {
    let mut file = BufWriter::new(File::create(output)?);
    let mut encoder = PngEncoder::new_with_quality(&mut file, CompressionType::Default, FilterType::Adaptive);
    if let Some(icc) = settings.icc {
        encoder
            .set_icc_profile(icc.to_vec())
            .map_err(|e| PictureError::Encode(e.to_string()))?;
    }
    let color = if pixels.alpha {
        ExtendedColorType::Rgba8
    } else {
        ExtendedColorType::Rgb8
    };
    encoder
        .write_image(pixels.data, pixels.width, pixels.height, color)
        .map_err(PictureError::encoding)?;
    file.flush()?;
    Ok(())
}

fn write_webp(pixels: &Pixels, settings: &Settings, output: &Path) -> Result<(), PictureError> {
    if pixels.width > WEBP_MAX_SIDE || pixels.height > WEBP_MAX_SIDE {
        return Err(too_large("WebP", WEBP_MAX_SIDE));
    }
    let layout = if pixels.alpha {
        webp::PixelLayout::Rgba
    } else {
        webp::PixelLayout::Rgb
    };
    let encoded = webp::Encoder::new(pixels.data, layout, pixels.width, pixels.height)
        .encode_simple(settings.lossless, f32::from(settings.quality))
        .map_err(|e| PictureError::Encode(format!("libwebp failed with {e:?}")))?;
    fs::write(output, &*encoded)?;
    Ok(())
}

/// Composites RGBA over white, giving RGB.
fn flatten_on_white(rgba: &[u8]) -> Vec<u8> {
    rgba.chunks_exact(4)
        .flat_map(|pixel| {
            let alpha = u16::from(pixel[3]);
            let over = |c: u8| ((u16::from(c) * alpha + 255 * (255 - alpha) + 127) / 255) as u8;
            [over(pixel[0]), over(pixel[1]), over(pixel[2])]
        })
        .collect()
}

fn too_large(format: &str, max_side: u32) -> PictureError {
    PictureError::TooLarge(format!(
        "{format} pictures can be at most {max_side} pixels wide and high; choose a smaller size"
    ))
}

fn jpeg_error(error: EncodingError) -> PictureError {
    match error {
        EncodingError::IoError(error) => PictureError::Io(error),
        other => PictureError::Encode(other.to_string()),
    }
}
