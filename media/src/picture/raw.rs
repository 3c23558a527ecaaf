//! Camera RAW files (DNG, CR2, NEF, ARW and the other TIFF-based ones) read by the JPEG
//! preview the camera embeds: what viewers show, made by the camera from its own development
//! of the sensor data. Developing the sensor data here (demosaicing, white balance, colour
//! matrices per camera model) would cost seconds and hundreds of megabytes; every camera
//! stores a preview of at least 1568 pixels, most at full size.
//!
//! The file is walked where its directories point, a table or a value at a time, never read
//! whole: only the preview found is held in memory.

use std::collections::HashSet;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use image::metadata::Orientation;

/// The largest baseline or progressive JPEG a TIFF-based RAW file embeds, and how the picture
/// is to be turned (the TIFF orientation tag of its first IFD: the preview itself is stored as
/// the sensor saw it).
pub(crate) struct Preview {
    pub jpeg: Arc<[u8]>,
    pub orientation: Orientation,
}

/// IFDs and entries read at most: a camera's file has a handful of each.
const MAX_IFDS: usize = 32;
const MAX_ENTRIES: usize = 512;
/// Marker segments walked at most before a candidate's frame header: a camera's preview has a
/// dozen.
const MAX_SEGMENTS: usize = 256;

const ORIENTATION: u16 = 0x0112;
const STRIP_OFFSETS: u16 = 0x0111;
const STRIP_BYTE_COUNTS: u16 = 0x0117;
const SUB_IFDS: u16 = 0x014A;
const JPEG_OFFSET: u16 = 0x0201;
const JPEG_LENGTH: u16 = 0x0202;
const EXIF_IFD: u16 = 0x8769;

/// Whether `start` (a file's first bytes) opens a TIFF file, as every RAW format read here does.
pub(crate) fn is_tiff(start: &[u8]) -> bool {
    start.starts_with(b"II*\0") || start.starts_with(b"MM\0*")
}

/// The preview of the TIFF-based RAW file at `path`; `None` for anything else (a plain TIFF
/// holds no JPEG, and is decoded as a picture).
pub(crate) fn preview(path: &Path) -> io::Result<Option<Preview>> {
    let file = File::open(path)?;
    let Some(tiff) = Tiff::new(&file)? else {
        return Ok(None);
    };
    let Some(first) = tiff.u32_at(4)?.map(u64::from) else {
        return Ok(None);
    };
    let mut queue = vec![first];
    let mut seen = HashSet::new();
    let mut orientation = 1;
    let mut best: Option<(u64, u64)> = None;
    while let Some(offset) = queue.pop() {
        if !seen.insert(offset) || seen.len() > MAX_IFDS {
            continue;
        }
        let Some(count) = tiff.u16_at(offset)? else {
            continue;
        };
        // The entries, read at once: as many whole ones as the file holds.
        let table = tiff.read_up_to(offset + 2, usize::from(count).min(MAX_ENTRIES) * 12)?;
        let mut strips = (None, None);
        let mut jpeg = (None, None);
        for entry in table.chunks_exact(12) {
            let Some(values) = tiff.values(entry)? else {
                break;
            };
            match tiff.u16(&entry[..2]) {
                ORIENTATION if offset == first => orientation = values.first().copied().unwrap_or(1),
                STRIP_OFFSETS => strips.0 = values.first().copied().filter(|_| values.len() == 1),
                STRIP_BYTE_COUNTS => strips.1 = values.first().copied(),
                JPEG_OFFSET => jpeg.0 = values.first().copied(),
                JPEG_LENGTH => jpeg.1 = values.first().copied(),
                SUB_IFDS | EXIF_IFD => queue.extend(values.iter().map(|&v| u64::from(v))),
                _ => {}
            }
        }
        for (start, len) in [strips, jpeg] {
            if let (Some(start), Some(len)) = (start, len)
                && let (start, len) = (u64::from(start), u64::from(len))
                && start + len <= tiff.size
                && best.is_none_or(|(_, best)| best < len)
                && tiff.is_displayable_jpeg(start, len)?
            {
                best = Some((start, len));
            }
        }
        if let Some(next) = tiff
            .u32_at(offset + 2 + u64::from(count) * 12)?
            .filter(|&n| n != 0)
        {
            queue.push(u64::from(next));
        }
    }
    let Some((start, len)) = best else {
        return Ok(None);
    };
    let jpeg = tiff.read(start, len as usize)?.unwrap_or_default();
    Ok(Some(Preview {
        jpeg: jpeg.into(),
        orientation: u8::try_from(orientation)
            .ok()
            .and_then(Orientation::from_exif)
            .unwrap_or(Orientation::NoTransforms),
    }))
}

/// A TIFF file and its byte order.
struct Tiff<'a> {
    file: &'a File,
    size: u64,
    little: bool,
}

impl<'a> Tiff<'a> {
    fn new(file: &'a File) -> io::Result<Option<Tiff<'a>>> {
        let size = file.metadata()?.len();
        let mut tiff = Tiff {
            file,
            size,
            little: true,
        };
        let Some(start) = tiff.read(0, 4)? else {
            return Ok(None);
        };
        if !is_tiff(&start) {
            return Ok(None);
        }
        tiff.little = start[0] == b'I';
        Ok(Some(tiff))
    }

    /// `len` bytes at `at`; `None` when the file ends before them.
    fn read(&self, at: u64, len: usize) -> io::Result<Option<Vec<u8>>> {
        if at.checked_add(len as u64).is_none_or(|end| end > self.size) {
            return Ok(None);
        }
        let mut bytes = vec![0; len];
        self.file.read_exact_at(&mut bytes, at)?;
        Ok(Some(bytes))
    }

    /// At most `len` bytes at `at`, fewer where the file ends.
    fn read_up_to(&self, at: u64, len: usize) -> io::Result<Vec<u8>> {
        let len = self.size.saturating_sub(at).min(len as u64) as usize;
        Ok(self.read(at, len)?.unwrap_or_default())
    }

    fn u16(&self, b: &[u8]) -> u16 {
        if self.little {
            u16::from_le_bytes([b[0], b[1]])
        } else {
            u16::from_be_bytes([b[0], b[1]])
        }
    }

    fn u32(&self, b: &[u8]) -> u32 {
        let b = [b[0], b[1], b[2], b[3]];
        if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    }

    fn u16_at(&self, at: u64) -> io::Result<Option<u16>> {
        Ok(self.read(at, 2)?.map(|b| self.u16(&b)))
    }

    fn u32_at(&self, at: u64) -> io::Result<Option<u32>> {
        Ok(self.read(at, 4)?.map(|b| self.u32(&b)))
    }

    /// The values of the 12-byte `entry` when they are SHORTs, LONGs or IFD offsets (at most
    /// 64 of them), inline or where its offset points; none for other types; `None` when they
    /// lie past the file's end.
    fn values(&self, entry: &[u8]) -> io::Result<Option<Vec<u32>>> {
        let size = match self.u16(&entry[2..4]) {
            3 => 2,
            4 | 13 => 4,
            _ => return Ok(Some(Vec::new())),
        };
        let count = (self.u32(&entry[4..8]) as usize).min(64);
        let bytes = if count * size <= 4 {
            entry[8..8 + count * size].to_vec()
        } else {
            match self.read(u64::from(self.u32(&entry[8..12])), count * size)? {
                Some(bytes) => bytes,
                None => return Ok(None),
            }
        };
        Ok(Some(
            bytes
                .chunks_exact(size)
                .map(|b| match size {
                    2 => u32::from(self.u16(b)),
                    _ => self.u32(b),
                })
                .collect(),
        ))
    }

    /// Whether the `len` bytes at `start` are a JPEG of the kinds a picture decoder reads
    /// (baseline, extended or progressive): the sensor data of many RAW files is a lossless
    /// JPEG, which is not a picture to show.
    fn is_displayable_jpeg(&self, start: u64, len: u64) -> io::Result<bool> {
        let byte_pair = |at: u64| -> io::Result<Option<[u8; 2]>> {
            if at + 2 > len {
                return Ok(None);
            }
            Ok(self.read(start + at, 2)?.map(|b| [b[0], b[1]]))
        };
        if byte_pair(0)? != Some([0xFF, 0xD8]) {
            return Ok(false);
        }
        let mut at = 2;
        for _ in 0..MAX_SEGMENTS {
            let Some([0xFF, marker]) = byte_pair(at)? else {
                return Ok(false);
            };
            match marker {
                0xC0..=0xC2 => return Ok(true),
                0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF | 0xDA | 0xD9 => return Ok(false),
                _ => {
                    let Some(segment) = byte_pair(at + 2)? else {
                        return Ok(false);
                    };
                    at += 2 + u64::from(u16::from_be_bytes(segment));
                }
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preview_of(bytes: &[u8]) -> Option<Preview> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input");
        std::fs::write(&path, bytes).unwrap();
        preview(&path).unwrap()
    }

    fn displayable(bytes: &[u8]) -> bool {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input");
        let mut file = b"II*\0".to_vec();
        file.extend(bytes);
        std::fs::write(&path, file).unwrap();
        let file = File::open(&path).unwrap();
        let tiff = Tiff::new(&file).unwrap().unwrap();
        tiff.is_displayable_jpeg(4, bytes.len() as u64).unwrap()
    }

    #[test]
    fn lossless_sensor_data_is_not_a_preview_and_baseline_is() {
        // SOI, then a DQT of length 4 (two bytes of payload), then the frame header.
        let baseline = [0xFF, 0xD8, 0xFF, 0xDB, 0, 4, 0, 0, 0xFF, 0xC0, 0, 0];
        let lossless = [0xFF, 0xD8, 0xFF, 0xDB, 0, 4, 0, 0, 0xFF, 0xC3, 0, 0];
        assert!(displayable(&baseline));
        assert!(!displayable(&lossless));
        assert!(!displayable(b"not a jpeg"));
    }

    #[test]
    fn a_file_that_is_not_tiff_has_no_preview_and_a_looping_one_ends() {
        assert!(preview_of(b"\x89PNG\r\n\x1a\n").is_none());
        // An IFD of no entries whose next IFD is itself.
        let looping = [b'I', b'I', 42, 0, 8, 0, 0, 0, 0, 0, 8, 0, 0, 0];
        assert!(preview_of(&looping).is_none());
    }

    /// A big-endian TIFF whose IFD0 says to turn the picture a quarter left (8) and holds
    /// `jpeg` as its JPEG interchange format, as older cameras store their preview.
    fn big_endian_raw(jpeg: &[u8]) -> Vec<u8> {
        let entry = |tag: u16, kind: u16, count: u32, value: u32| {
            let mut e = tag.to_be_bytes().to_vec();
            e.extend(kind.to_be_bytes());
            e.extend(count.to_be_bytes());
            if kind == 3 && count == 1 {
                e.extend((value as u16).to_be_bytes());
                e.extend([0, 0]);
            } else {
                e.extend(value.to_be_bytes());
            }
            e
        };
        let data = 8 + 2 + 3 * 12 + 4;
        let mut out = b"MM\0*".to_vec();
        out.extend(8u32.to_be_bytes());
        out.extend(3u16.to_be_bytes());
        out.extend(entry(ORIENTATION, 3, 1, 8));
        out.extend(entry(JPEG_OFFSET, 4, 1, data));
        out.extend(entry(JPEG_LENGTH, 4, 1, jpeg.len() as u32));
        out.extend(0u32.to_be_bytes());
        out.extend(jpeg);
        out
    }

    #[test]
    fn a_big_endian_file_gives_its_preview_and_orientation() {
        let jpeg = [0xFF, 0xD8, 0xFF, 0xC0, 0, 0, 0xFF, 0xD9];
        let found = preview_of(&big_endian_raw(&jpeg)).expect("a preview");
        assert_eq!(&*found.jpeg, &jpeg);
        assert_eq!(found.orientation, Orientation::Rotate270);
        // Cut short, the preview is not there to take.
        let raw = big_endian_raw(&jpeg);
        assert!(preview_of(&raw[..raw.len() - 1]).is_none());
    }
}
