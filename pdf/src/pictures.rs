//! Building a PDF with one page per picture.

use std::fs::File;
use std::io::{BufWriter, Cursor, Write};
use std::path::{Path, PathBuf};

use drive_media::picture::{self, PictureError};
use flate2::Compression;
use flate2::write::ZlibEncoder;
use image::codecs::jpeg::JpegDecoder;
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder};

use crate::error::{PdfError, guard};
use crate::jpeg::{JpegInfo, jpeg_info};
use crate::writer::{PdfWriter, number};

/// The page size of [`from_pictures`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageSize {
    /// Each page is the picture's size at 150 pixels per inch.
    Fit,
    /// ISO A4, 595 × 842 points.
    A4,
    /// US Letter, 612 × 792 points.
    Letter,
}

impl PageSize {
    /// The portrait size in points, `None` for [`PageSize::Fit`].
    fn portrait(self) -> Option<(f32, f32)> {
        match self {
            PageSize::Fit => None,
            PageSize::A4 => Some((595.0, 842.0)),
            PageSize::Letter => Some((612.0, 792.0)),
        }
    }
}

/// The resolution at which a [`PageSize::Fit`] page holds its picture: a 4000 × 3000 phone photo
/// makes a 27 × 20 inch page, a 1920 × 1080 screenshot a 13 × 7 inch one. Viewers fit either to
/// the window and print dialogs to the paper, and the pixels are all kept.
const FIT_PIXELS_PER_INCH: f32 = 150.0;

/// The largest page side readers accept (ISO 32000-1, annex C: 200 inches). Larger Fit pages
/// are scaled down to it.
const MAX_PAGE_SIDE: f32 = 14_400.0;

/// The margin around pictures on A4 and Letter pages: half an inch.
const MARGIN: f32 = 36.0;

/// Builds `output` with one page per picture, in order, and returns the page count.
///
/// - [`PageSize::Fit`]: the page is the picture's size at 150 pixels per inch (points = pixels
///   × 72 / 150), the picture filling it.
/// - [`PageSize::A4`], [`PageSize::Letter`]: portrait, or landscape for a picture wider than
///   tall; the picture is scaled (up or down) to fit inside a 36 pt margin, centred.
///
/// JPEGs are embedded as they are (DCTDecode, no re-encoding), grey, RGB or CMYK (Adobe's
/// inverted CMYK included); their EXIF orientation is applied by drawing them turned. Their
/// embedded ICC profile is not carried over: colours are taken as device colours. Other
/// pictures (PNG, WebP, GIF, BMP, TIFF, HEIC, AVIF, camera RAW files, and JPEGs a PDF can't
/// hold, such as 12-bit ones) are decoded by the media crate as every picture job decodes them
/// (within its pixel limit), turned upright, and embedded losslessly as 8-bit grey or RGB (Flate
/// with PNG prediction), with a soft mask for transparency; an animation contributes its first
/// frame.
pub fn from_pictures(
    pictures: &[PathBuf],
    page_size: PageSize,
    output: &Path,
    progress: &mut dyn FnMut(f32),
) -> Result<u32, PdfError> {
    if pictures.is_empty() {
        return Err(PdfError::BadInput(
            "there are no pictures to put in the PDF".to_string(),
        ));
    }
    guard(|| {
        let mut writer = PdfWriter::new(BufWriter::new(File::create(output)?))?;
        let catalog = writer.reserve();
        let tree = writer.reserve();
        let mut pages = Vec::with_capacity(pictures.len());
        for (index, path) in pictures.iter().enumerate() {
            let picture = read_picture(path).map_err(|e| e.in_input(index, pictures.len()))?;
            pages.push(write_page(&mut writer, tree, &picture, page_size)?);
            progress((index + 1) as f32 / pictures.len() as f32);
        }
        let kids: Vec<String> = pages.iter().map(|id| format!("{id} 0 R")).collect();
        writer.object(
            tree,
            &format!(
                "<< /Type /Pages /Kids [{}] /Count {} >>",
                kids.join(" "),
                pages.len()
            ),
        )?;
        writer.object(catalog, &format!("<< /Type /Catalog /Pages {tree} 0 R >>"))?;
        writer.finish(catalog)?;
        Ok(pages.len() as u32)
    })
}

/// A picture ready to embed.
enum Picture {
    /// A JPEG embedded as it is, drawn turned by its EXIF orientation.
    Jpeg {
        data: Vec<u8>,
        info: JpegInfo,
        orientation: Orientation,
    },
    /// Decoded pixels, already upright.
    Pixels(DynamicImage),
}

impl Picture {
    /// The size in pixels as shown, i.e. after orientation.
    fn upright_size(&self) -> (f32, f32) {
        match self {
            Picture::Jpeg {
                info, orientation, ..
            } => {
                let (w, h) = (info.width as f32, info.height as f32);
                if turns_sideways(*orientation) {
                    (h, w)
                } else {
                    (w, h)
                }
            }
            Picture::Pixels(pixels) => (pixels.width() as f32, pixels.height() as f32),
        }
    }
}

fn read_picture(path: &Path) -> Result<Picture, PdfError> {
    let data = std::fs::read(path)?;
    if let Some(info) = jpeg_info(&data) {
        // A JPEG whose EXIF can't be read is shown as stored, as most viewers do.
        let orientation = JpegDecoder::new(Cursor::new(&data))
            .and_then(|mut decoder| decoder.orientation())
            .unwrap_or(Orientation::NoTransforms);
        return Ok(Picture::Jpeg {
            data,
            info,
            orientation,
        });
    }
    drop(data);
    let pixels = picture::upright(path).map_err(unreadable_picture)?;
    Ok(Picture::Pixels(pixels))
}

/// Why the media crate could not decode a picture, in this crate's terms: whatever the file
/// causes is the picture's fault, a failing disk ours.
fn unreadable_picture(error: PictureError) -> PdfError {
    match error {
        PictureError::Io(e) => PdfError::Io(e),
        PictureError::Unreadable(why) | PictureError::Unsupported(why) => PdfError::UnreadablePicture(why),
        PictureError::TooLarge(why) => PdfError::UnreadablePicture(format!("it is too large: {why}")),
        // Not met decoding: options, fonts and encoders are not involved.
        other => PdfError::UnreadablePicture(other.to_string()),
    }
}

/// Writes the picture's objects and its page; returns the page's object number.
fn write_page<W: Write>(
    writer: &mut PdfWriter<W>,
    tree: u32,
    picture: &Picture,
    page_size: PageSize,
) -> Result<u32, PdfError> {
    let (width, height) = picture.upright_size();
    let (page_width, page_height, placed) = layout(width, height, page_size);

    let image = writer.reserve();
    let turn = match picture {
        Picture::Jpeg {
            data,
            info,
            orientation,
        } => {
            writer.stream(image, &jpeg_entries(info), data)?;
            *orientation
        }
        Picture::Pixels(pixels) => {
            write_pixels(writer, image, pixels)?;
            Orientation::NoTransforms
        }
    };

    let matrix = placement_matrix(turn, placed).map(number).join(" ");
    let content = writer.reserve();
    writer.stream(content, "", format!("q {matrix} cm /Im0 Do Q").as_bytes())?;
    let page = writer.reserve();
    writer.object(
        page,
        &format!(
            "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 {} {}] /Resources << /XObject << /Im0 {image} 0 R \
             >> >> /Contents {content} 0 R >>",
            number(page_width),
            number(page_height)
        ),
    )?;
    Ok(page)
}

/// Where the picture goes: the page size and the picture's box (x, y, width, height), in points.
fn layout(width: f32, height: f32, page_size: PageSize) -> (f32, f32, [f32; 4]) {
    match page_size.portrait() {
        None => {
            let scale = (72.0 / FIT_PIXELS_PER_INCH).min(MAX_PAGE_SIDE / width.max(height));
            let (w, h) = (width * scale, height * scale);
            (w, h, [0.0, 0.0, w, h])
        }
        Some((short, long)) => {
            let (page_w, page_h) = if width > height {
                (long, short)
            } else {
                (short, long)
            };
            let scale = ((page_w - 2.0 * MARGIN) / width).min((page_h - 2.0 * MARGIN) / height);
            let (w, h) = (width * scale, height * scale);
            (page_w, page_h, [(page_w - w) / 2.0, (page_h - h) / 2.0, w, h])
        }
    }
}

fn turns_sideways(orientation: Orientation) -> bool {
    matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    )
}

/// The matrix drawing the stored image (the unit square, its first row at the top) into `placed`
/// = (x, y, width, height) so that it shows upright.
fn placement_matrix(orientation: Orientation, placed: [f32; 4]) -> [f32; 6] {
    // Maps the stored image's unit square onto the upright one (PDF's y axis points up).
    let [a, b, c, d, e, f] = match orientation {
        Orientation::NoTransforms => [1.0, 0.0, 0.0, 1.0, 0.0, 0.0],
        Orientation::FlipHorizontal => [-1.0, 0.0, 0.0, 1.0, 1.0, 0.0],
        Orientation::Rotate180 => [-1.0, 0.0, 0.0, -1.0, 1.0, 1.0],
        Orientation::FlipVertical => [1.0, 0.0, 0.0, -1.0, 0.0, 1.0],
        Orientation::Rotate90 => [0.0, -1.0, 1.0, 0.0, 0.0, 1.0],
        Orientation::Rotate270 => [0.0, 1.0, -1.0, 0.0, 1.0, 0.0],
        Orientation::Rotate90FlipH => [0.0, -1.0, -1.0, 0.0, 1.0, 1.0],
        Orientation::Rotate270FlipH => [0.0, 1.0, 1.0, 0.0, 0.0, 0.0],
    };
    let [x, y, w, h] = placed;
    [w * a, h * b, w * c, h * d, w * e + x, h * f + y]
}

fn jpeg_entries(info: &JpegInfo) -> String {
    let space = match info.components {
        1 => "/DeviceGray",
        3 => "/DeviceRGB",
        _ => "/DeviceCMYK",
    };
    let decode = if info.components == 4 && info.adobe {
        " /Decode [1 0 1 0 1 0 1 0]"
    } else {
        ""
    };
    format!(
        "/Type /XObject /Subtype /Image /Width {} /Height {} /ColorSpace {space} /BitsPerComponent 8{decode} \
         /Filter /DCTDecode",
        info.width, info.height
    )
}

/// Writes decoded pixels as a Flate image object `id`, grey or RGB, with a soft mask if any
/// pixel is not opaque.
fn write_pixels<W: Write>(writer: &mut PdfWriter<W>, id: u32, pixels: &DynamicImage) -> Result<(), PdfError> {
    let (width, height) = (pixels.width(), pixels.height());
    let grey = !pixels.color().has_color();
    let alpha = pixels
        .color()
        .has_alpha()
        .then(|| pixels.to_rgba8())
        .and_then(|rgba| {
            let alpha: Vec<u8> = rgba.pixels().map(|p| p.0[3]).collect();
            alpha.iter().any(|&a| a < 255).then_some(alpha)
        });
    let mask = match alpha {
        Some(alpha) => {
            let mask = writer.reserve();
            let (entries, data) = flate_image(&alpha, width, height, 1, "/DeviceGray")?;
            writer.stream(mask, &entries, &data)?;
            format!(" /SMask {mask} 0 R")
        }
        None => String::new(),
    };
    let (entries, data) = if grey {
        flate_image(pixels.to_luma8().as_raw(), width, height, 1, "/DeviceGray")?
    } else {
        flate_image(pixels.to_rgb8().as_raw(), width, height, 3, "/DeviceRGB")?
    };
    writer.stream(id, &format!("{entries}{mask}"), &data)?;
    Ok(())
}

/// Image dictionary entries and data for 8-bit samples, Paeth-predicted and deflated as PNG
/// does: prediction turns smooth gradients into runs of small numbers that deflate far better.
fn flate_image(
    samples: &[u8],
    width: u32,
    height: u32,
    colors: usize,
    space: &str,
) -> Result<(String, Vec<u8>), PdfError> {
    let row = width as usize * colors;
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::default());
    let mut filtered = Vec::with_capacity(row + 1);
    let mut previous: &[u8] = &[];
    for current in samples.chunks_exact(row.max(1)) {
        paeth_row(previous, current, colors, &mut filtered);
        encoder.write_all(&filtered)?;
        previous = current;
    }
    let data = encoder.finish()?;
    let entries = format!(
        "/Type /XObject /Subtype /Image /Width {width} /Height {height} /ColorSpace {space} /BitsPerComponent 8 \
         /Filter /FlateDecode /DecodeParms << /Predictor 15 /Colors {colors} /BitsPerComponent 8 /Columns {width} >>"
    );
    Ok((entries, data))
}

/// One row filtered with PNG's Paeth predictor (filter type 4, its tag byte first). `previous`
/// is empty for the first row, which PNG predicts from zeros.
fn paeth_row(previous: &[u8], current: &[u8], bytes_per_pixel: usize, out: &mut Vec<u8>) {
    out.clear();
    out.push(4);
    for (i, &x) in current.iter().enumerate() {
        let left = if i >= bytes_per_pixel {
            current[i - bytes_per_pixel]
        } else {
            0
        };
        let up = previous.get(i).copied().unwrap_or(0);
        let up_left = if i >= bytes_per_pixel {
            previous.get(i - bytes_per_pixel).copied().unwrap_or(0)
        } else {
            0
        };
        out.push(x.wrapping_sub(paeth(left, up, up_left)));
    }
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_pages_hold_the_picture_at_150_ppi() {
        let (w, h, placed) = layout(1500.0, 750.0, PageSize::Fit);
        assert_eq!((w, h), (720.0, 360.0));
        assert_eq!(placed, [0.0, 0.0, 720.0, 360.0]);
    }

    #[test]
    fn huge_fit_pages_are_capped_at_200_inches() {
        let (w, h, _) = layout(60_000.0, 30_000.0, PageSize::Fit);
        assert!(
            (w - MAX_PAGE_SIDE).abs() < 0.01 && (h - MAX_PAGE_SIDE / 2.0).abs() < 0.01,
            "{w} × {h}"
        );
    }

    #[test]
    fn paper_pages_turn_with_the_picture_and_centre_it() {
        let (w, h, [x, y, pw, ph]) = layout(2000.0, 1000.0, PageSize::A4);
        assert_eq!((w, h), (842.0, 595.0));
        // Width-bound: 842 - 72 = 770 wide, 385 high, centred vertically.
        assert_eq!((x, pw), (36.0, 770.0));
        assert_eq!(ph, 385.0);
        assert_eq!(y, (595.0 - 385.0) / 2.0);
        let (w, h, _) = layout(1000.0, 2000.0, PageSize::Letter);
        assert_eq!((w, h), (612.0, 792.0));
    }

    /// Where the stored image's top-left corner, (0, 1) in its unit square, lands.
    fn stored_top_left(orientation: Orientation) -> (f32, f32) {
        let [_, _, c, d, e, f] = placement_matrix(orientation, [0.0, 0.0, 1.0, 1.0]);
        (c + e, d + f)
    }

    #[test]
    fn orientation_puts_the_stored_top_left_corner_where_exif_says() {
        // Upright top-left is (0, 1); top-right (1, 1); bottom-right (1, 0); bottom-left (0, 0).
        assert_eq!(stored_top_left(Orientation::NoTransforms), (0.0, 1.0));
        assert_eq!(stored_top_left(Orientation::FlipHorizontal), (1.0, 1.0));
        assert_eq!(stored_top_left(Orientation::Rotate180), (1.0, 0.0));
        assert_eq!(stored_top_left(Orientation::FlipVertical), (0.0, 0.0));
        // Turned a quarter clockwise, the top-left corner goes to the top right.
        assert_eq!(stored_top_left(Orientation::Rotate90), (1.0, 1.0));
        assert_eq!(stored_top_left(Orientation::Rotate270), (0.0, 0.0));
        assert_eq!(stored_top_left(Orientation::Rotate90FlipH), (0.0, 1.0));
        assert_eq!(stored_top_left(Orientation::Rotate270FlipH), (1.0, 0.0));
    }

    #[test]
    fn paeth_prediction_round_trips() {
        let rows = [[10u8, 20, 30, 40, 50, 60], [11, 19, 35, 38, 255, 0]];
        let mut previous: Vec<u8> = Vec::new();
        let mut filtered = Vec::new();
        for row in rows {
            paeth_row(&previous, &row, 3, &mut filtered);
            assert_eq!(filtered[0], 4);
            // Undo as a reader would.
            let mut decoded: Vec<u8> = Vec::new();
            for (i, &delta) in filtered[1..].iter().enumerate() {
                let left = if i >= 3 { decoded[i - 3] } else { 0 };
                let up = previous.get(i).copied().unwrap_or(0);
                let up_left = if i >= 3 {
                    previous.get(i - 3).copied().unwrap_or(0)
                } else {
                    0
                };
                decoded.push(delta.wrapping_add(paeth(left, up, up_left)));
            }
            assert_eq!(decoded, row);
            previous = row.to_vec();
        }
    }
}
