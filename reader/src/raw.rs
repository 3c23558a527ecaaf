//! Camera RAW files (DNG, CR2, NEF, ARW and the other TIFF-based ones) read by the JPEG
//! preview the camera embeds: what viewers show, made by the camera from its own
//! development of the sensor data. Developing the sensor data here (demosaicing, white
//! balance, colour matrices per camera model) would cost seconds and hundreds of
//! megabytes for a picture that ends at 1568 pixels; every camera stores a preview of
//! at least that size.

use std::collections::HashSet;

use image::ImageReader;
use image::metadata::Orientation;

use crate::failure::Failure;
use crate::jpeg;

/// The largest baseline or progressive JPEG a TIFF-based RAW file embeds, and how the
/// picture is to be turned (the TIFF orientation tag of its first IFD).
pub struct Preview<'a> {
    pub jpeg: &'a [u8],
    pub orientation: u16,
}

/// IFDs and entries read at most: a camera's file has a handful of each.
const MAX_IFDS: usize = 32;
const MAX_ENTRIES: usize = 512;

const ORIENTATION: u16 = 0x0112;
const STRIP_OFFSETS: u16 = 0x0111;
const STRIP_BYTE_COUNTS: u16 = 0x0117;
const SUB_IFDS: u16 = 0x014A;
const JPEG_OFFSET: u16 = 0x0201;
const JPEG_LENGTH: u16 = 0x0202;
const EXIF_IFD: u16 = 0x8769;

/// The preview of a TIFF-based RAW file; `None` for anything else (a plain TIFF holds no
/// JPEG, and is decoded as a picture).
pub fn preview(bytes: &[u8]) -> Option<Preview<'_>> {
    let tiff = Tiff::new(bytes)?;
    let first = tiff.u32_at(4)? as usize;
    let mut queue = vec![first];
    let mut seen = HashSet::new();
    let mut orientation = 1;
    let mut best: Option<&[u8]> = None;
    while let Some(offset) = queue.pop() {
        if !seen.insert(offset) || seen.len() > MAX_IFDS {
            continue;
        }
        let Some(count) = tiff.u16_at(offset) else {
            continue;
        };
        let mut strips = (None, None);
        let mut jpeg = (None, None);
        for n in 0..usize::from(count).min(MAX_ENTRIES) {
            let entry = offset + 2 + n * 12;
            let (Some(tag), Some(values)) = (tiff.u16_at(entry), tiff.values(entry)) else {
                break;
            };
            match tag {
                ORIENTATION if offset == first => orientation = values.first().copied().unwrap_or(1) as u16,
                STRIP_OFFSETS => strips.0 = values.first().copied().filter(|_| values.len() == 1),
                STRIP_BYTE_COUNTS => strips.1 = values.first().copied(),
                JPEG_OFFSET => jpeg.0 = values.first().copied(),
                JPEG_LENGTH => jpeg.1 = values.first().copied(),
                SUB_IFDS | EXIF_IFD => queue.extend(values.iter().map(|&v| v as usize)),
                _ => {}
            }
        }
        for (start, len) in [strips, jpeg] {
            if let (Some(start), Some(len)) = (start, len)
                && let Some(end) = (start as usize).checked_add(len as usize)
                && let Some(data) = bytes.get(start as usize..end)
                && is_displayable_jpeg(data)
                && best.is_none_or(|b| b.len() < data.len())
            {
                best = Some(data);
            }
        }
        if let Some(next) = tiff
            .u32_at(offset + 2 + usize::from(count) * 12)
            .filter(|&n| n != 0)
        {
            queue.push(next as usize);
        }
    }
    best.map(|jpeg| Preview { jpeg, orientation })
}

/// Whether `data` is a JPEG of the kinds a picture decoder reads (baseline, extended or
/// progressive): the sensor data of many RAW files is a lossless JPEG, which is not a
/// picture to show.
fn is_displayable_jpeg(data: &[u8]) -> bool {
    if !data.starts_with(&[0xFF, 0xD8]) {
        return false;
    }
    let mut at = 2;
    while let (Some(&0xFF), Some(&marker)) = (data.get(at), data.get(at + 1)) {
        match marker {
            0xC0..=0xC2 => return true,
            0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF | 0xDA | 0xD9 => return false,
            _ => {
                let Some(len) = data.get(at + 2..at + 4) else {
                    return false;
                };
                at += 2 + usize::from(u16::from_be_bytes([len[0], len[1]]));
            }
        }
    }
    false
}

/// The shrunk preview turned by the RAW file's orientation (the preview itself is stored
/// as the sensor saw it), as base64.
pub fn oriented(jpeg_bytes: Vec<u8>, orientation: u16) -> Result<String, Failure> {
    let Some(orientation) =
        Orientation::from_exif(orientation as u8).filter(|o| *o != Orientation::NoTransforms)
    else {
        return Ok(jpeg::encoded(&jpeg_bytes));
    };
    let mut picture = ImageReader::new(std::io::Cursor::new(jpeg_bytes))
        .with_guessed_format()?
        .decode()
        .map_err(|e| Failure::Unreadable(format!("the preview could not be read: {e}")))?;
    picture.apply_orientation(orientation);
    jpeg::fitted(picture)
}

/// A TIFF file's bytes and byte order.
struct Tiff<'a> {
    bytes: &'a [u8],
    little: bool,
}

impl<'a> Tiff<'a> {
    fn new(bytes: &'a [u8]) -> Option<Tiff<'a>> {
        let little = match bytes.get(..4)? {
            [b'I', b'I', 42, 0] => true,
            [b'M', b'M', 0, 42] => false,
            _ => return None,
        };
        Some(Tiff { bytes, little })
    }

    fn u16_at(&self, at: usize) -> Option<u16> {
        let b = self.bytes.get(at..at.checked_add(2)?)?;
        Some(if self.little {
            u16::from_le_bytes([b[0], b[1]])
        } else {
            u16::from_be_bytes([b[0], b[1]])
        })
    }

    fn u32_at(&self, at: usize) -> Option<u32> {
        let b: [u8; 4] = self.bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    /// The values of the entry at `entry` when they are SHORTs, LONGs or IFD offsets (at
    /// most 64 of them), inline or where its offset points.
    fn values(&self, entry: usize) -> Option<Vec<u32>> {
        let kind = self.u16_at(entry + 2)?;
        let count = self.u32_at(entry + 4)? as usize;
        let size = match kind {
            3 => 2,
            4 | 13 => 4,
            _ => return Some(Vec::new()),
        };
        let count = count.min(64);
        let at = if count * size <= 4 {
            entry + 8
        } else {
            self.u32_at(entry + 8)? as usize
        };
        (0..count)
            .map(|n| match size {
                2 => self.u16_at(at + n * 2).map(u32::from),
                _ => self.u32_at(at + n * 4),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossless_sensor_data_is_not_a_preview_and_baseline_is() {
        // SOI, then a DQT of length 4 (two bytes of payload), then the frame header.
        let baseline = [0xFF, 0xD8, 0xFF, 0xDB, 0, 4, 0, 0, 0xFF, 0xC0, 0, 0];
        let lossless = [0xFF, 0xD8, 0xFF, 0xDB, 0, 4, 0, 0, 0xFF, 0xC3, 0, 0];
        assert!(is_displayable_jpeg(&baseline));
        assert!(!is_displayable_jpeg(&lossless));
        assert!(!is_displayable_jpeg(b"not a jpeg"));
    }

    #[test]
    fn a_file_that_is_not_tiff_has_no_preview_and_a_looping_one_ends() {
        assert!(preview(b"\x89PNG\r\n\x1a\n").is_none());
        // An IFD of no entries whose next IFD is itself.
        let looping = [b'I', b'I', 42, 0, 8, 0, 0, 0, 0, 0, 8, 0, 0, 0];
        assert!(preview(&looping).is_none());
    }
}
