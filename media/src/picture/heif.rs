//! HEIF pictures (HEIC and AVIF), decoded by the system's libheif (H.265 through libde265, AV1
//! through dav1d or libaom), which applies the picture's rotation, mirroring and cropping as it
//! decodes.

use std::path::Path;

use image::metadata::Orientation;
use image::{DynamicImage, RgbImage, RgbaImage};
use libheif_rs::{
    ColorProfile, ColorSpace, HeifContext, HeifError, HeifErrorCode, ImageHandle, LibHeif, RgbChroma,
    color_profile_types,
};

use super::decode::{Stored, check_pixel_count};
use super::{Dimensions, PictureError};

/// Whether `start` (a file's first bytes) opens an ISO base media file of the HEIF family: its
/// `ftyp` box names a HEIF or AVIF brand.
pub(crate) fn is_heif(start: &[u8]) -> bool {
    const BRANDS: &[&[u8]] = &[
        b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1", b"avif", b"avis",
    ];
    start.len() >= 12 && &start[4..8] == b"ftyp" && BRANDS.contains(&&start[8..12])
}

/// The primary picture's size as displayed (libheif's, after rotation and cropping), from the
/// file's boxes alone.
pub(crate) fn dimensions(path: &Path) -> Result<Dimensions, PictureError> {
    let context = open(path)?;
    let handle = context.primary_image_handle().map_err(unreadable)?;
    Ok(Dimensions {
        width: handle.width(),
        height: handle.height(),
    })
}

/// Decodes the primary picture, already upright, as 8-bit RGB (RGBA when it has an alpha
/// channel), with its ICC profile if it has one. Checked against [`super::MAX_PIXELS`] before a
/// pixel is decoded: a header may claim any size.
pub(crate) fn decode(path: &Path) -> Result<Stored, PictureError> {
    let context = open(path)?;
    let handle = context.primary_image_handle().map_err(unreadable)?;
    let size = Dimensions {
        width: handle.width(),
        height: handle.height(),
    };
    check_pixel_count(size)?;
    // The coded size (before cropping) is what the decoder allocates.
    check_pixel_count(Dimensions {
        width: handle.ispe_width().max(0) as u32,
        height: handle.ispe_height().max(0) as u32,
    })?;
    let alpha = handle.has_alpha_channel();
    let chroma = if alpha { RgbChroma::Rgba } else { RgbChroma::Rgb };
    let decoded = LibHeif::new()
        .decode(&handle, ColorSpace::Rgb(chroma), None)
        .map_err(unreadable)?;
    let planes = decoded.planes();
    let plane = planes
        .interleaved
        .ok_or_else(|| PictureError::Unreadable("the HEIF picture decoded to no pixels".into()))?;
    let short = || PictureError::Unreadable("the HEIF picture decoded short".into());
    let row = plane.width as usize * if alpha { 4 } else { 3 };
    let mut pixels = Vec::with_capacity(row * plane.height as usize);
    for y in 0..plane.height as usize {
        let start = y * plane.stride;
        pixels.extend_from_slice(plane.data.get(start..start + row).ok_or_else(short)?);
    }
    let image = if alpha {
        RgbaImage::from_raw(plane.width, plane.height, pixels).map(DynamicImage::ImageRgba8)
    } else {
        RgbImage::from_raw(plane.width, plane.height, pixels).map(DynamicImage::ImageRgb8)
    }
    .ok_or_else(short)?;
    Ok(Stored {
        size: Dimensions {
            width: image.width(),
            height: image.height(),
        },
        image,
        orientation: Orientation::NoTransforms,
        icc: icc(&handle),
        format: None,
        lossless: false,
    })
}

fn open(path: &Path) -> Result<HeifContext<'static>, PictureError> {
    // libheif takes a file name as a C string; the worker's and the reader's are plain ASCII.
    let name = path
        .to_str()
        .ok_or_else(|| PictureError::Io(std::io::Error::other("the picture's path is not UTF-8")))?;
    HeifContext::read_from_file(name).map_err(|e| match e.code {
        HeifErrorCode::InputDoesNotExist => PictureError::Io(std::io::Error::other(e.message)),
        _ => unreadable(e),
    })
}

/// The ICC profile the picture carries, if it carries one rather than the codec's colour
/// description (nclx), which the encoders here have no use for.
fn icc(handle: &ImageHandle) -> Option<Vec<u8>> {
    let profile = handle.color_profile_raw()?;
    [color_profile_types::PROF, color_profile_types::R_ICC]
        .contains(&profile.profile_type())
        .then_some(profile.data)
}

/// Everything libheif refuses in a file is the file's fault.
fn unreadable(error: HeifError) -> PictureError {
    PictureError::Unreadable(format!("as HEIF: {}", error.message))
}
