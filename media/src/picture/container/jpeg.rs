//! JPEG: marker segments (each at most 64 KiB), with entropy-coded data after every start-of-scan.

use std::io::{BufRead, Write};

use image::metadata::Orientation;

use super::{
    Header, Input, PictureError, dimensions, exif_orientation, malformed, read_array, read_u8, read_vec, skip,
};

const TEM: u8 = 0x01;
const SOI: u8 = 0xD8;
const EOI: u8 = 0xD9;
const SOS: u8 = 0xDA;
const APP0: u8 = 0xE0;
const APP1: u8 = 0xE1;
const APP2: u8 = 0xE2;
const APP14: u8 = 0xEE;
const COM: u8 = 0xFE;

const EXIF_SIGNATURE: &[u8] = b"Exif\0\0";

pub(super) fn read_header(input: &mut Input) -> Result<Header, PictureError> {
    expect_start(input)?;
    // Exif must come before the frame header, so by then the orientation is known.
    let mut orientation = None;
    loop {
        let marker = next_marker(input)?;
        if has_no_length(marker) {
            continue;
        }
        if marker == SOS || marker == EOI {
            return Err(malformed("the JPEG has no frame header"));
        }
        let len = segment_len(input)?;
        if is_frame_header(marker) {
            if len < 5 {
                return Err(malformed("the JPEG frame header is too short"));
            }
            let frame = read_array::<5>(input)?;
            let height = u16::from_be_bytes([frame[1], frame[2]]);
            let width = u16::from_be_bytes([frame[3], frame[4]]);
            return Ok(Header {
                dimensions: dimensions(width.into(), height.into())?,
                orientation: orientation.unwrap_or(Orientation::NoTransforms),
                animated: false,
                lossless: false,
            });
        }
        if marker == APP1 && orientation.is_none() {
            let body = read_vec(input, len)?;
            if body.starts_with(EXIF_SIGNATURE) {
                orientation = Some(exif_orientation(&body));
            }
        } else {
            skip(input, len)?;
        }
    }
}

/// Copies segment by segment, leaving out metadata segments and whatever follows the end marker,
/// and copies entropy-coded data byte for byte.
pub(super) fn strip(input: &mut Input, output: &mut impl Write) -> Result<(), PictureError> {
    expect_start(input)?;
    output.write_all(&[0xFF, SOI])?;
    let mut marker = next_marker(input)?;
    loop {
        if marker == EOI {
            // Dropping the tail matters: phones append preview pictures (MPF) and motion-photo
            // videos there, each with its own metadata.
            output.write_all(&[0xFF, EOI])?;
            return Ok(());
        }
        if has_no_length(marker) {
            output.write_all(&[0xFF, marker])?;
            marker = next_marker(input)?;
            continue;
        }
        let len = segment_len(input)?;
        let body = read_vec(input, len)?;
        if keeps(marker, &body) {
            output.write_all(&[0xFF, marker])?;
            // `len` came from a u16 minus 2, so this cannot overflow.
            output.write_all(&((len + 2) as u16).to_be_bytes())?;
            output.write_all(&body)?;
        }
        marker = if marker == SOS {
            copy_scan(input, output)?
        } else {
            next_marker(input)?
        };
    }
}

/// Which segments survive: everything the decoder needs, including the colour profile (APP2
/// `ICC_PROFILE`) and Adobe's APP14, which says how to read CMYK/YCCK colours and holds no
/// metadata; JFIF's APP0 stays too. Every other application segment (EXIF and XMP in APP1, MPF,
/// IPTC in APP13, vendors' notes) and comments go.
fn keeps(marker: u8, body: &[u8]) -> bool {
    match marker {
        APP0 => body.starts_with(b"JFIF\0"),
        APP2 => body.starts_with(b"ICC_PROFILE\0"),
        APP14 => body.starts_with(b"Adobe"),
        0xE0..=0xEF | COM => false,
        _ => true,
    }
}

/// Copies entropy-coded data up to the next real marker and returns that marker. Inside the data
/// 0xFF is followed by a stuffed 0x00 or a restart marker; both are data.
fn copy_scan(input: &mut Input, output: &mut impl Write) -> Result<u8, PictureError> {
    loop {
        let buffer = input.fill_buf()?;
        if buffer.is_empty() {
            return Err(PictureError::truncated());
        }
        let Some(at) = buffer.iter().position(|&b| b == 0xFF) else {
            output.write_all(buffer)?;
            let len = buffer.len();
            input.consume(len);
            continue;
        };
        output.write_all(&buffer[..at])?;
        input.consume(at + 1);
        let mut next = read_u8(input)?;
        while next == 0xFF {
            next = read_u8(input)?;
        }
        if next == 0x00 || (0xD0..=0xD7).contains(&next) {
            output.write_all(&[0xFF, next])?;
        } else {
            return Ok(next);
        }
    }
}

fn expect_start(input: &mut Input) -> Result<(), PictureError> {
    if read_array::<2>(input)? != [0xFF, SOI] {
        return Err(malformed("not a JPEG file"));
    }
    Ok(())
}

/// Reads the next marker code, skipping fill bytes and, as libjpeg does, stray bytes between
/// segments.
fn next_marker(input: &mut Input) -> Result<u8, PictureError> {
    loop {
        if read_u8(input)? != 0xFF {
            continue;
        }
        let mut marker = read_u8(input)?;
        while marker == 0xFF {
            marker = read_u8(input)?;
        }
        if marker != 0x00 {
            return Ok(marker);
        }
    }
}

/// The length of the segment's body, after its two length bytes.
fn segment_len(input: &mut Input) -> Result<u64, PictureError> {
    let len = u16::from_be_bytes(read_array(input)?);
    if len < 2 {
        return Err(malformed("a JPEG segment has an impossible length"));
    }
    Ok(u64::from(len - 2))
}

/// Restart markers and TEM stand alone, without a length.
fn has_no_length(marker: u8) -> bool {
    marker == TEM || (0xD0..=0xD7).contains(&marker)
}

/// SOF0..SOF15, leaving out DHT (C4), JPG (C8) and DAC (CC), which share the range.
fn is_frame_header(marker: u8) -> bool {
    (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC)
}
