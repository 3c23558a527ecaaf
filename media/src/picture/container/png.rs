//! PNG: a signature, then chunks of length (4 bytes, big-endian), type (4), data and CRC (4).

use std::io::Write;

use image::metadata::Orientation;

use super::{
    Header, Input, PictureError, copy_exact, dimensions, malformed, read_array, read_exif_orientation, skip,
};

const SIGNATURE: [u8; 8] = *b"\x89PNG\r\n\x1a\n";
const CRC_LEN: u64 = 4;

/// Text (which includes XMP, in iTXt), EXIF and the modification time. Colour chunks (iCCP, gAMA,
/// cHRM, sRGB…) change how pixels look and stay.
const METADATA: [&[u8; 4]; 5] = [b"tEXt", b"zTXt", b"iTXt", b"eXIf", b"tIME"];

struct Chunk {
    len: [u8; 4],
    kind: [u8; 4],
}

impl Chunk {
    fn read(input: &mut Input) -> Result<Self, PictureError> {
        let len = read_array::<4>(input)?;
        // The format caps lengths at 2^31 - 1.
        if len[0] & 0x80 != 0 {
            return Err(malformed("a PNG chunk has an impossible length"));
        }
        Ok(Chunk {
            len,
            kind: read_array::<4>(input)?,
        })
    }

    fn data_len(&self) -> u64 {
        u32::from_be_bytes(self.len).into()
    }

    fn write_header(&self, output: &mut impl Write) -> Result<(), PictureError> {
        output.write_all(&self.len)?;
        output.write_all(&self.kind)?;
        Ok(())
    }
}

/// The size from IHDR; the orientation from an eXIf chunk and animation from acTL, both of which
/// the format places before the image data, where reading stops.
pub(super) fn read_header(input: &mut Input) -> Result<Header, PictureError> {
    expect_signature(input)?;
    let ihdr = Chunk::read(input)?;
    if &ihdr.kind != b"IHDR" || ihdr.data_len() < 8 {
        return Err(malformed("the PNG does not start with its header chunk"));
    }
    let size = read_array::<8>(input)?;
    skip(input, ihdr.data_len() - 8 + CRC_LEN)?;
    let width = u32::from_be_bytes([size[0], size[1], size[2], size[3]]);
    let height = u32::from_be_bytes([size[4], size[5], size[6], size[7]]);

    let mut orientation = Orientation::NoTransforms;
    let mut animated = false;
    loop {
        let chunk = Chunk::read(input)?;
        match &chunk.kind {
            b"IDAT" | b"IEND" => break,
            b"eXIf" => {
                orientation = read_exif_orientation(input, chunk.data_len())?;
                skip(input, CRC_LEN)?;
            }
            kind => {
                animated |= kind == b"acTL";
                skip(input, chunk.data_len() + CRC_LEN)?;
            }
        }
    }
    Ok(Header {
        dimensions: dimensions(width, height)?,
        orientation,
        animated,
        lossless: true,
    })
}

/// Copies chunk by chunk, leaving out metadata chunks and anything after IEND.
pub(super) fn strip(input: &mut Input, output: &mut impl Write) -> Result<(), PictureError> {
    expect_signature(input)?;
    output.write_all(&SIGNATURE)?;
    loop {
        let chunk = Chunk::read(input)?;
        if METADATA.contains(&&chunk.kind) {
            skip(input, chunk.data_len() + CRC_LEN)?;
            continue;
        }
        chunk.write_header(output)?;
        copy_exact(input, output, chunk.data_len() + CRC_LEN)?;
        if &chunk.kind == b"IEND" {
            return Ok(());
        }
    }
}

fn expect_signature(input: &mut Input) -> Result<(), PictureError> {
    if read_array::<8>(input)? != SIGNATURE {
        return Err(malformed("not a PNG file"));
    }
    Ok(())
}
