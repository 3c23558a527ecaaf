//! The picture pipelines end to end: pictures are made in code (HEIC and AVIF by `heif-enc`,
//! installed by scripts/lib.sh), written to a temporary directory, run through the public
//! functions and checked by decoding the results.

mod convert;
mod errors;
mod header;
mod heif_raw;
mod strip;
mod watermark;

use std::fs;
use std::path::{Path, PathBuf};

use image::{DynamicImage, Rgb, RgbImage, Rgba};
use tempfile::TempDir;

/// A scratch directory that lives as long as the test.
struct Scratch(TempDir);

impl Scratch {
    fn new() -> Self {
        Scratch(tempfile::tempdir().expect("a temporary directory"))
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    /// Writes `bytes` under `name` and returns the path.
    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path(name);
        fs::write(&path, bytes).expect("write a test file");
        path
    }
}

/// A picture with detail in it, so encoders have something to compress.
fn gradient(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        Rgb([
            (x * 255 / width) as u8,
            (y * 255 / height) as u8,
            ((x + y) % 64 * 4) as u8,
        ])
    })
}

/// Left half red, right half blue: shows which way a picture was turned.
fn halves(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, _| {
        if x < width / 2 {
            Rgb([255, 0, 0])
        } else {
            Rgb([0, 0, 255])
        }
    })
}

fn jpeg_bytes(picture: &RgbImage) -> Vec<u8> {
    let mut bytes = Vec::new();
    let encoder = jpeg_encoder::Encoder::new(&mut bytes, 90);
    encoder
        .encode(
            picture.as_raw(),
            picture.width() as u16,
            picture.height() as u16,
            jpeg_encoder::ColorType::Rgb,
        )
        .expect("encode a test JPEG");
    bytes
}

fn png_bytes(picture: &DynamicImage) -> Vec<u8> {
    let mut bytes = std::io::Cursor::new(Vec::new());
    picture
        .write_to(&mut bytes, image::ImageFormat::Png)
        .expect("encode a test PNG");
    bytes.into_inner()
}

/// A lossy WebP in the simple layout (RIFF, then one VP8 chunk).
fn webp_bytes(picture: &RgbImage) -> Vec<u8> {
    webp::Encoder::from_rgb(picture.as_raw(), picture.width(), picture.height())
        .encode(90.0)
        .to_vec()
}

/// Inserts marker segments right after a JPEG's SOI.
fn with_jpeg_segments(jpeg: &[u8], segments: &[(u8, &[u8])]) -> Vec<u8> {
    let mut out = jpeg[..2].to_vec();
    for (marker, body) in segments {
        out.extend([0xFF, *marker]);
        out.extend(((body.len() + 2) as u16).to_be_bytes());
        out.extend(*body);
    }
    out.extend(&jpeg[2..]);
    out
}

/// A big-endian TIFF structure with one IFD entry: the orientation.
fn exif_tiff(orientation: u16) -> Vec<u8> {
    let mut tiff = b"MM\0\x2a\0\0\0\x08".to_vec();
    tiff.extend(1u16.to_be_bytes());
    tiff.extend([0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01]);
    tiff.extend(orientation.to_be_bytes());
    tiff.extend([0, 0, 0, 0, 0, 0]);
    tiff
}

/// An APP1 body holding an EXIF block with the orientation and a camera-ish string.
fn exif_app1(orientation: u16) -> Vec<u8> {
    let mut body = b"Exif\0\0".to_vec();
    body.extend(exif_tiff(orientation));
    body.extend(b"GPS 48.8584 N 2.2945 E");
    body
}

/// A PNG chunk with its CRC.
fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
    chunk.extend(kind);
    chunk.extend(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    chunk.extend(crc.finalize().to_be_bytes());
    chunk
}

/// Inserts chunks right after a PNG's IHDR chunk (signature 8 bytes + IHDR 25 bytes).
fn with_png_chunks(png: &[u8], chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut out = png[..33].to_vec();
    for chunk in chunks {
        out.extend(chunk);
    }
    out.extend(&png[33..]);
    out
}

/// Rebuilds a simple-layout WebP in the extended layout, with `extra` chunks after the image data
/// and the VP8X flags given.
fn extended_webp(simple: &[u8], width: u32, height: u32, flags: u8, extra: &[(&[u8; 4], &[u8])]) -> Vec<u8> {
    let mut body = b"WEBP".to_vec();
    body.extend(b"VP8X");
    body.extend(10u32.to_le_bytes());
    body.push(flags);
    body.extend([0, 0, 0]);
    body.extend(&(width - 1).to_le_bytes()[..3]);
    body.extend(&(height - 1).to_le_bytes()[..3]);
    body.extend(&simple[12..]);
    for (kind, data) in extra {
        body.extend(*kind);
        body.extend((data.len() as u32).to_le_bytes());
        body.extend(*data);
        if data.len() % 2 == 1 {
            body.push(0);
        }
    }
    let mut riff = b"RIFF".to_vec();
    riff.extend((body.len() as u32).to_le_bytes());
    riff.extend(body);
    riff
}

fn decode(path: &Path) -> DynamicImage {
    image::ImageReader::open(path)
        .expect("open the output")
        .with_guessed_format()
        .expect("read the output")
        .decode()
        .expect("decode the output")
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

/// Largest difference of any channel between two pixels.
fn distance(a: Rgba<u8>, b: Rgba<u8>) -> u8 {
    a.0.iter()
        .zip(b.0.iter())
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

const FONT_PATH: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

fn font() -> Vec<u8> {
    fs::read(FONT_PATH).expect("DejaVuSans.ttf (apt-get install fonts-dejavu-core)")
}
