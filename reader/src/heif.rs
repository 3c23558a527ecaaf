//! HEIC (and AVIF) pictures, decoded by the system's libheif, which applies the picture's
//! rotation, mirroring and cropping as it decodes.

use drive_media::picture::MAX_PIXELS;
use image::{DynamicImage, RgbImage};
use libheif_rs::{ColorSpace, HeifContext, LibHeif, RgbChroma};

use crate::failure::Failure;
use crate::jpeg;

/// Whether `start` (a file's first bytes) opens an ISO base media file of the HEIF family.
pub fn is_heif(start: &[u8]) -> bool {
    const BRANDS: &[&[u8]] = &[
        b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1", b"avif", b"avis",
    ];
    start.len() >= 12 && &start[4..8] == b"ftyp" && BRANDS.contains(&&start[8..12])
}

pub fn to_jpeg(bytes: &[u8]) -> Result<String, Failure> {
    let unreadable =
        |e: libheif_rs::HeifError| Failure::Unreadable(format!("the HEIF picture could not be read: {e}"));
    let context = HeifContext::read_from_bytes(bytes).map_err(unreadable)?;
    let handle = context.primary_image_handle().map_err(unreadable)?;
    let (width, height) = (handle.width(), handle.height());
    // Checked before a pixel is decoded: a header may claim any size.
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(Failure::Unreadable(format!(
            "the picture is too large: {width}x{height} pixels is more than the {} megapixels allowed",
            MAX_PIXELS / 1_000_000
        )));
    }
    let image = LibHeif::new()
        .decode(&handle, ColorSpace::Rgb(RgbChroma::Rgb), None)
        .map_err(unreadable)?;
    let planes = image.planes();
    let plane = planes
        .interleaved
        .ok_or_else(|| Failure::Unreadable("the HEIF picture decoded to no pixels".into()))?;
    let row = plane.width as usize * 3;
    let mut pixels = Vec::with_capacity(row * plane.height as usize);
    for y in 0..plane.height as usize {
        let start = y * plane.stride;
        let line = plane
            .data
            .get(start..start + row)
            .ok_or_else(|| Failure::Unreadable("the HEIF picture decoded short".into()))?;
        pixels.extend_from_slice(line);
    }
    let picture = RgbImage::from_raw(plane.width, plane.height, pixels)
        .ok_or_else(|| Failure::Unreadable("the HEIF picture decoded short".into()))?;
    jpeg::fitted(DynamicImage::ImageRgb8(picture))
}
