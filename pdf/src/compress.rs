//! Making PDFs smaller: downsampled images, deflated streams, no unused objects, object streams.

use std::collections::HashSet;
use std::io::Cursor;
use std::path::Path;

use image::codecs::jpeg::JpegDecoder;
use image::imageops::FilterType;
use image::{DynamicImage, GrayImage, ImageDecoder, Limits, RgbImage};
use jpeg_encoder::{ColorType, Encoder, SamplingFactor};
use lopdf::{Document, Object, ObjectId, Stream};

use crate::document::{load_bytes, save_to};
use crate::error::{PdfError, guard};
use crate::placement::drawn_image_sizes;

/// How hard to compress, named after Ghostscript's `-dPDFSETTINGS` presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quality {
    /// 72 dpi, JPEG quality 50: for reading on screen.
    Screen,
    /// 150 dpi, JPEG quality 70: for e-readers and tablets.
    Ebook,
    /// 300 dpi, JPEG quality 85: for printing.
    Printer,
}

impl Quality {
    fn dpi(self) -> f32 {
        match self {
            Quality::Screen => 72.0,
            Quality::Ebook => 150.0,
            Quality::Printer => 300.0,
        }
    }

    fn jpeg_quality(self) -> u8 {
        match self {
            Quality::Screen => 50,
            Quality::Ebook => 70,
            Quality::Printer => 85,
        }
    }

    /// The longest side allowed to an image whose drawn size is unknown.
    fn max_edge(self) -> f32 {
        match self {
            Quality::Screen => 1024.0,
            Quality::Ebook => 2048.0,
            Quality::Printer => 4096.0,
        }
    }
}

/// An image is resampled only when it has more than this many times the pixels per side it
/// needs: re-encoding for a few percent fewer pixels would cost quality for little gain.
const RESAMPLE_THRESHOLD: f32 = 1.2;

/// Images with more pixels than this are left alone rather than decoded.
const MAX_IMAGE_PIXELS: u64 = 64_000_000;

/// Recompresses `input` into `output` and returns (input bytes, output bytes).
///
/// - Images with more resolution than `quality` calls for are downsampled (Triangle filter) and
///   re-encoded as JPEG (4:2:0), when that makes them smaller. The resolution an image needs
///   comes from its drawn size: the pages' content streams (and forms they draw) are followed
///   to every place the image is drawn, and the largest counts. An image drawn only elsewhere
///   (annotations, patterns) is held to a longest side of 1024, 2048 or 4096 pixels instead.
///   Only 8-bit grey and RGB images (device, calibrated or ICC-based colour) stored as JPEG or
///   with lossless filters are touched; CMYK, indexed, 16-bit, JPEG 2000, fax and JBIG2 images,
///   images with a colour-key mask, and images serving as another image's mask are kept as
///   they are.
/// - Streams stored uncompressed are deflated.
/// - Objects nothing refers to are dropped.
/// - The result is written with object streams and a cross-reference stream.
///
/// The result is never larger than the input: when it would be, the input is copied unchanged.
pub fn compress(
    input: &Path,
    quality: Quality,
    output: &Path,
    progress: &mut dyn FnMut(f32),
) -> Result<(u64, u64), PdfError> {
    guard(|| {
        let original = std::fs::read(input)?;
        let mut src = load_bytes(&original)?;
        // First, so that no time goes into images nothing shows.
        src.doc.prune_objects();
        progress(0.05);
        let drawn = drawn_image_sizes(&src.doc, &src.page_ids);
        progress(0.1);
        let images = recompressible_images(&src.doc);
        for (index, id) in images.iter().enumerate() {
            let drawn_size = drawn.get(id).copied();
            if let Some(smaller) = downsampled(&src.doc, *id, drawn_size, quality) {
                src.doc.objects.insert(*id, Object::Stream(smaller));
            }
            progress(0.1 + 0.75 * (index + 1) as f32 / images.len() as f32);
        }
        src.doc.compress();
        let mut compressed = Vec::new();
        save_to(&mut src.doc, &mut compressed)?;
        progress(0.95);
        let best = if compressed.len() < original.len() {
            &compressed
        } else {
            &original
        };
        std::fs::write(output, best)?;
        progress(1.0);
        Ok((original.len() as u64, best.len() as u64))
    })
}

/// Image XObjects, less those serving as another image's mask: a mask must keep its exact
/// values (and a soft mask may not be JPEG-compressed in every reader).
fn recompressible_images(doc: &Document) -> Vec<ObjectId> {
    let is_image = |object: &Object| {
        object.as_stream().is_ok_and(|s| {
            s.dict
                .get(b"Subtype")
                .and_then(Object::as_name)
                .is_ok_and(|n| n == b"Image")
        })
    };
    let masks: HashSet<ObjectId> = doc
        .objects
        .values()
        .filter(|object| is_image(object))
        .filter_map(|object| object.as_stream().ok())
        .flat_map(|s| [s.dict.get(b"SMask"), s.dict.get(b"Mask")])
        .filter_map(|mask| mask.and_then(Object::as_reference).ok())
        .collect();
    doc.objects
        .iter()
        .filter(|(id, object)| is_image(object) && !masks.contains(id))
        .map(|(id, _)| *id)
        .collect()
}

/// The image re-encoded as a smaller JPEG of the resolution it needs, or `None` to keep it.
fn downsampled(doc: &Document, id: ObjectId, drawn: Option<(f32, f32)>, quality: Quality) -> Option<Stream> {
    let stream = doc.get_object(id).and_then(Object::as_stream).ok()?;
    let dict = &stream.dict;
    let integer = |key: &[u8]| dict.get(key).and_then(Object::as_i64).ok();
    let (width, height) = (
        u32::try_from(integer(b"Width")?).ok()?,
        u32::try_from(integer(b"Height")?).ok()?,
    );
    if width == 0
        || height == 0
        || u64::from(width) * u64::from(height) > MAX_IMAGE_PIXELS
        || integer(b"BitsPerComponent") != Some(8)
        || dict.get(b"ImageMask").and_then(Object::as_bool).unwrap_or(false)
        || dict.get(b"Mask").is_ok_and(|mask| mask.as_array().is_ok())
    {
        return None;
    }
    let components = color_components(doc, dict.get(b"ColorSpace").ok()?)?;
    let (new_width, new_height) = target_size(width, height, drawn, quality)?;

    let pixels = decode(stream, width, height, components)?;
    let smaller = pixels.resize_exact(new_width, new_height, FilterType::Triangle);
    let jpeg = encode_jpeg(&smaller, quality.jpeg_quality())?;
    if jpeg.len() >= stream.content.len() {
        return None;
    }

    let mut new_dict = dict.clone();
    new_dict.set("Width", i64::from(new_width));
    new_dict.set("Height", i64::from(new_height));
    new_dict.set("Filter", Object::Name(b"DCTDecode".to_vec()));
    new_dict.remove(b"DecodeParms");
    Some(Stream::new(new_dict, jpeg))
}

/// The pixel size the image should have, or `None` if it has no more than it needs.
fn target_size(width: u32, height: u32, drawn: Option<(f32, f32)>, quality: Quality) -> Option<(u32, u32)> {
    let (w, h) = (width as f32, height as f32);
    // The factor keeping the side that needs the most pixels at the target resolution.
    let factor = match drawn {
        Some((drawn_w, drawn_h)) => {
            let per_point = quality.dpi() / 72.0;
            (drawn_w * per_point / w).max(drawn_h * per_point / h)
        }
        None => quality.max_edge() / w.max(h),
    };
    if !factor.is_finite() || factor * RESAMPLE_THRESHOLD >= 1.0 {
        return None;
    }
    let side = |s: f32| ((s * factor).round() as u32).clamp(1, u32::from(u16::MAX));
    Some((side(w), side(h)))
}

/// The number of colour components of an image colour space we can re-encode as JPEG: 1 for
/// grey, 3 for RGB; `None` for anything else.
fn color_components(doc: &Document, space: &Object) -> Option<u8> {
    let space = match space {
        Object::Reference(id) => doc.get_object(*id).ok()?,
        direct => direct,
    };
    match space {
        Object::Name(name) => match name.as_slice() {
            b"DeviceGray" | b"G" => Some(1),
            b"DeviceRGB" | b"RGB" => Some(3),
            _ => None,
        },
        Object::Array(items) => match items.first()?.as_name().ok()? {
            b"CalGray" => Some(1),
            b"CalRGB" => Some(3),
            b"ICCBased" => {
                let profile = doc
                    .get_object(items.get(1)?.as_reference().ok()?)
                    .and_then(Object::as_stream)
                    .ok()?;
                match profile.dict.get(b"N").and_then(Object::as_i64).ok()? {
                    1 => Some(1),
                    3 => Some(3),
                    _ => None,
                }
            }
            _ => None,
        },
        _ => None,
    }
}

/// The image's pixels, if it is stored in a way we can decode.
fn decode(stream: &Stream, width: u32, height: u32, components: u8) -> Option<DynamicImage> {
    // No /Filter means raw samples; a /Filter that isn't a name or names is damage.
    let filters = if stream.dict.has(b"Filter") {
        stream.filters().ok()?
    } else {
        Vec::new()
    };
    if filters == [b"DCTDecode"] {
        let mut decoder = JpegDecoder::new(Cursor::new(&stream.content)).ok()?;
        // The stream's dictionary may lie about the size; don't let the JPEG allocate more.
        let mut limits = Limits::default();
        limits.max_image_width = Some(width);
        limits.max_image_height = Some(height);
        decoder.set_limits(limits).ok()?;
        let pixels = DynamicImage::from_decoder(decoder).ok()?;
        let expected = if components == 1 {
            image::ColorType::L8
        } else {
            image::ColorType::Rgb8
        };
        return (pixels.color() == expected && (pixels.width(), pixels.height()) == (width, height))
            .then_some(pixels);
    }
    // Without a DCT, JPEG 2000, fax or JBIG2 filter, lopdf can decode the data itself.
    let lossless = |f: &&[u8]| {
        !matches!(
            *f,
            b"DCTDecode" | b"JPXDecode" | b"CCITTFaxDecode" | b"JBIG2Decode"
        )
    };
    if !filters.iter().all(lossless) {
        return None;
    }
    let size = width as usize * height as usize * components as usize;
    let mut data = stream.decompressed_content_with_limit(size + 4096).ok()?;
    if data.len() < size {
        return None;
    }
    data.truncate(size);
    match components {
        1 => GrayImage::from_raw(width, height, data).map(DynamicImage::ImageLuma8),
        _ => RgbImage::from_raw(width, height, data).map(DynamicImage::ImageRgb8),
    }
}

fn encode_jpeg(pixels: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let (width, height) = (
        u16::try_from(pixels.width()).ok()?,
        u16::try_from(pixels.height()).ok()?,
    );
    let mut jpeg = Vec::new();
    let mut encoder = Encoder::new(&mut jpeg, quality);
    encoder.set_sampling_factor(SamplingFactor::R_4_2_0);
    let color = match pixels {
        DynamicImage::ImageLuma8(_) => ColorType::Luma,
        _ => ColorType::Rgb,
    };
    encoder.encode(pixels.as_bytes(), width, height, color).ok()?;
    Some(jpeg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_drawn_small_are_sized_to_the_resolution() {
        // 3000 px drawn across 720 pt (10 inches): 720 px at 72 dpi, 1500 at 150 dpi.
        assert_eq!(
            target_size(3000, 1500, Some((720.0, 360.0)), Quality::Screen),
            Some((720, 360))
        );
        assert_eq!(
            target_size(3000, 1500, Some((720.0, 360.0)), Quality::Ebook),
            Some((1500, 750))
        );
        // 3000 px is what 300 dpi needs: nothing to gain.
        assert_eq!(
            target_size(3000, 1500, Some((720.0, 360.0)), Quality::Printer),
            None
        );
        // Barely above the target: not worth a re-encode.
        assert_eq!(target_size(800, 800, Some((720.0, 720.0)), Quality::Screen), None);
    }

    #[test]
    fn a_stretched_image_keeps_the_pixels_its_longer_drawn_side_needs() {
        // Drawn 720 pt wide but only 36 pt high: the width decides.
        assert_eq!(
            target_size(3000, 3000, Some((720.0, 36.0)), Quality::Screen),
            Some((720, 720))
        );
    }

    #[test]
    fn images_of_unknown_size_are_held_to_a_longest_side() {
        assert_eq!(target_size(4000, 2000, None, Quality::Screen), Some((1024, 512)));
        assert_eq!(target_size(4000, 2000, None, Quality::Printer), None);
    }
}
