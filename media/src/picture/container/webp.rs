//! WebP: a RIFF file: `RIFF`, the length of what follows (4 bytes, little-endian), `WEBP`, then
//! chunks of type (4), data length (4, little-endian), data and a zero byte when the length is odd.
//! Metadata (EXIF, XMP) only exists in the extended layout, announced by flags in a VP8X chunk.

use std::io::{Seek, SeekFrom, Write};

use image::metadata::Orientation;

use super::{
    Header, Input, PictureError, at_end, copy_exact, dimensions, malformed, read_array,
    read_exif_orientation, read_u8, read_vec, skip,
};

const ANIMATION_FLAG: u8 = 0x02;
const XMP_FLAG: u8 = 0x04;
const EXIF_FLAG: u8 = 0x08;
/// VP8X data is 10 bytes; anything much longer is not a VP8X chunk.
const VP8X_MAX_LEN: u64 = 1024;

struct Chunk {
    kind: [u8; 4],
    len: [u8; 4],
}

impl Chunk {
    fn data_len(&self) -> u64 {
        u32::from_le_bytes(self.len).into()
    }

    fn is_odd(&self) -> bool {
        self.len[0] & 1 == 1
    }

    fn padded_len(&self) -> u64 {
        self.data_len() + u64::from(self.is_odd())
    }

    fn write_header(&self, output: &mut impl Write) -> Result<(), PictureError> {
        output.write_all(&self.kind)?;
        output.write_all(&self.len)?;
        Ok(())
    }
}

/// Walks the chunks inside the RIFF length; whatever follows it is not part of the picture.
struct Chunks {
    remaining: u64,
}

impl Chunks {
    /// Reads the RIFF header.
    fn start(input: &mut Input) -> Result<Self, PictureError> {
        let header = read_array::<12>(input)?;
        if &header[..4] != b"RIFF" || &header[8..] != b"WEBP" {
            return Err(malformed("not a WebP file"));
        }
        let riff_len = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        // The RIFF length counts `WEBP`, already read.
        Ok(Chunks {
            remaining: u64::from(riff_len).saturating_sub(4),
        })
    }

    /// The next chunk's header; the caller then reads or skips exactly its padded length.
    fn next(&mut self, input: &mut Input) -> Result<Option<Chunk>, PictureError> {
        if self.remaining < 8 || at_end(input)? {
            return Ok(None);
        }
        let chunk = Chunk {
            kind: read_array(input)?,
            len: read_array(input)?,
        };
        self.remaining = self.remaining.saturating_sub(8 + chunk.padded_len());
        Ok(Some(chunk))
    }
}

/// The size from the first chunk; for the extended layout, the orientation from an EXIF chunk
/// (which comes after the image data) and animation from the VP8X flags.
pub(super) fn read_header(input: &mut Input) -> Result<Header, PictureError> {
    let mut chunks = Chunks::start(input)?;
    let Some(first) = chunks.next(input)? else {
        return Err(PictureError::truncated());
    };
    match &first.kind {
        b"VP8 " => {
            // A 3-byte frame tag, a start code, then 14-bit width and height.
            let frame = read_array::<10>(input)?;
            if frame[3..6] != [0x9D, 0x01, 0x2A] {
                return Err(malformed("the WebP image data is damaged"));
            }
            let width = u16::from_le_bytes([frame[6], frame[7]]) & 0x3FFF;
            let height = u16::from_le_bytes([frame[8], frame[9]]) & 0x3FFF;
            still(width.into(), height.into(), false)
        }
        b"VP8L" => {
            // A signature byte, then width - 1 and height - 1 in 14 bits each.
            let bytes = read_array::<5>(input)?;
            if bytes[0] != 0x2F {
                return Err(malformed("the WebP image data is damaged"));
            }
            let bits = u32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]);
            still((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, true)
        }
        b"VP8X" => {
            if first.data_len() < 10 {
                return Err(malformed("the WebP extended header is too short"));
            }
            let vp8x = read_array::<10>(input)?;
            skip(input, first.padded_len() - 10)?;
            let width = u32::from_le_bytes([vp8x[4], vp8x[5], vp8x[6], 0]) + 1;
            let height = u32::from_le_bytes([vp8x[7], vp8x[8], vp8x[9], 0]) + 1;
            let mut header = still(width, height, false)?;
            header.animated = vp8x[0] & ANIMATION_FLAG != 0;
            let mut seen_image = false;
            while let Some(chunk) = chunks.next(input)? {
                match &chunk.kind {
                    b"EXIF" => {
                        header.orientation = read_exif_orientation(input, chunk.data_len())?;
                        skip(input, u64::from(chunk.is_odd()))?;
                        continue;
                    }
                    b"VP8L" if !seen_image => header.lossless = true,
                    _ => {}
                }
                seen_image |= matches!(&chunk.kind, b"VP8 " | b"VP8L");
                skip(input, chunk.padded_len())?;
            }
            Ok(header)
        }
        _ => Err(malformed("the WebP has no image data")),
    }
}

fn still(width: u32, height: u32, lossless: bool) -> Result<Header, PictureError> {
    Ok(Header {
        dimensions: dimensions(width, height)?,
        orientation: Orientation::NoTransforms,
        animated: false,
        lossless,
    })
}

/// Copies chunk by chunk, leaving out EXIF and XMP chunks (and clearing their VP8X flags) and
/// whatever follows the RIFF data, then writes the new RIFF length.
pub(super) fn strip(input: &mut Input, output: &mut (impl Write + Seek)) -> Result<(), PictureError> {
    let mut chunks = Chunks::start(input)?;
    output.write_all(b"RIFF\0\0\0\0WEBP")?;
    let mut riff_len: u64 = 4;
    while let Some(chunk) = chunks.next(input)? {
        match &chunk.kind {
            b"EXIF" | b"XMP " => {
                skip(input, chunk.padded_len())?;
                continue;
            }
            b"VP8X" => {
                if !(10..=VP8X_MAX_LEN).contains(&chunk.data_len()) {
                    return Err(malformed("the WebP extended header has an impossible length"));
                }
                let mut vp8x = read_vec(input, chunk.data_len())?;
                vp8x[0] &= !(EXIF_FLAG | XMP_FLAG);
                chunk.write_header(output)?;
                output.write_all(&vp8x)?;
            }
            _ => {
                chunk.write_header(output)?;
                copy_exact(input, output, chunk.data_len())?;
            }
        }
        if chunk.is_odd() {
            // Some writers leave out the last chunk's padding byte; the copy gets one either way.
            if !at_end(input)? {
                read_u8(input)?;
            }
            output.write_all(&[0])?;
        }
        riff_len += 8 + chunk.padded_len();
    }
    let riff_len = u32::try_from(riff_len).map_err(|_| malformed("the WebP is longer than RIFF allows"))?;
    output.seek(SeekFrom::Start(4))?;
    output.write_all(&riff_len.to_le_bytes())?;
    Ok(())
}
