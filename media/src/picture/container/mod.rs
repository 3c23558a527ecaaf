//! Just enough of the JPEG, PNG and WebP file structures to read a header and to copy a file while
//! leaving its metadata out. Nothing here decodes pixels, and memory stays bounded: the largest
//! piece ever held is one JPEG segment (64 KiB) or the first [`EXIF_READ_LIMIT`] bytes of an EXIF
//! chunk.

mod jpeg;
mod png;
mod webp;

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Cursor, Read, Seek, Write};
use std::path::Path;
use std::sync::Arc;

use image::metadata::Orientation;

use super::{Dimensions, PictureError, PictureFormat};

/// The orientation entry sits in the first directory of an EXIF block, a few hundred bytes in;
/// reading more of a (possibly huge) PNG or WebP EXIF chunk would only cost memory.
const EXIF_READ_LIMIT: u64 = 64 * 1024;

/// What the readers below read from: a file, or a picture held in memory.
type Input = BufReader<Box<dyn Source>>;

pub(crate) trait Source: Read + Seek {}

impl<T: Read + Seek> Source for T {}

/// A picture's encoded bytes: a file, or a picture another file holds, read into memory (a
/// camera RAW file's preview).
pub(crate) enum Encoded<'a> {
    File(&'a Path),
    Memory(Arc<[u8]>),
}

impl Encoded<'_> {
    pub fn open(&self) -> io::Result<Input> {
        let source: Box<dyn Source> = match self {
            Encoded::File(path) => Box::new(File::open(path)?),
            Encoded::Memory(bytes) => Box::new(Cursor::new(Arc::clone(bytes))),
        };
        Ok(BufReader::new(source))
    }

    /// The whole of it, in memory.
    pub fn bytes(&self) -> io::Result<Arc<[u8]>> {
        match self {
            Encoded::File(path) => Ok(std::fs::read(path)?.into()),
            Encoded::Memory(bytes) => Ok(Arc::clone(bytes)),
        }
    }
}

/// What a file's header says, read without decoding pixels.
pub(crate) struct Header {
    /// As stored, before the orientation is applied.
    pub dimensions: Dimensions,
    pub orientation: Orientation,
    /// An animated PNG or WebP: only its first frame survives a decode.
    pub animated: bool,
    /// Stored without loss (PNG, lossless WebP): worth re-encoding without loss.
    pub lossless: bool,
}

pub(crate) fn read_header(format: PictureFormat, encoded: &Encoded) -> Result<Header, PictureError> {
    let mut input = encoded.open()?;
    match format {
        PictureFormat::Jpg => jpeg::read_header(&mut input),
        PictureFormat::Png => png::read_header(&mut input),
        PictureFormat::Webp => webp::read_header(&mut input),
    }
}

/// Copies `input` to `output` without its metadata; see [`super::strip_metadata`] for what goes.
pub(crate) fn strip(format: PictureFormat, input: &Path, output: &Path) -> Result<(), PictureError> {
    let mut reader = Encoded::File(input).open()?;
    let mut writer = BufWriter::new(File::create(output)?);
    match format {
        PictureFormat::Jpg => jpeg::strip(&mut reader, &mut writer)?,
        PictureFormat::Png => png::strip(&mut reader, &mut writer)?,
        PictureFormat::Webp => webp::strip(&mut reader, &mut writer)?,
    }
    writer.flush()?;
    Ok(())
}

/// Walks a whole JPEG to its end marker, so a file cut short is refused rather than decoded with
/// its missing rows painted grey (the JPEG decoder is lenient and would accept it).
pub(crate) fn check_jpeg_complete(encoded: &Encoded) -> Result<(), PictureError> {
    jpeg::strip(&mut encoded.open()?, &mut io::sink())
}

fn read_array<const N: usize>(input: &mut Input) -> Result<[u8; N], PictureError> {
    let mut bytes = [0; N];
    input.read_exact(&mut bytes).map_err(input_error)?;
    Ok(bytes)
}

fn read_u8(input: &mut Input) -> Result<u8, PictureError> {
    Ok(read_array::<1>(input)?[0])
}

/// Reads `len` bytes into memory; callers bound `len`.
fn read_vec(input: &mut Input, len: u64) -> Result<Vec<u8>, PictureError> {
    let mut bytes = Vec::new();
    input.by_ref().take(len).read_to_end(&mut bytes)?;
    if (bytes.len() as u64) < len {
        return Err(PictureError::truncated());
    }
    Ok(bytes)
}

/// Copies exactly `len` bytes, streaming.
fn copy_exact(input: &mut Input, output: &mut impl Write, len: u64) -> Result<(), PictureError> {
    if io::copy(&mut input.by_ref().take(len), output)? < len {
        return Err(PictureError::truncated());
    }
    Ok(())
}

/// Skips `len` bytes, seeking instead of reading where the buffer does not hold them.
fn skip(input: &mut Input, len: u64) -> Result<(), PictureError> {
    let len = i64::try_from(len).map_err(|_| malformed("a block is impossibly long"))?;
    input.seek_relative(len)?;
    Ok(())
}

/// True at the clean end of the file, where the next block would start.
fn at_end(input: &mut Input) -> Result<bool, PictureError> {
    Ok(input.fill_buf()?.is_empty())
}

/// Reads the first bytes of an EXIF block of `len` bytes and skips the rest.
fn read_exif_orientation(input: &mut Input, len: u64) -> Result<Orientation, PictureError> {
    let kept = len.min(EXIF_READ_LIMIT);
    let exif = read_vec(input, kept)?;
    skip(input, len - kept)?;
    Ok(exif_orientation(&exif))
}

/// The orientation an EXIF block records, `NoTransforms` when it records none. Some writers put
/// JPEG's `Exif\0\0` prefix in front of the TIFF structure even outside JPEG; it is skipped.
fn exif_orientation(exif: &[u8]) -> Orientation {
    let tiff = exif.strip_prefix(b"Exif\0\0").unwrap_or(exif);
    Orientation::from_exif_chunk(tiff).unwrap_or(Orientation::NoTransforms)
}

/// An I/O error while reading the input: running out of bytes is the file's fault.
fn input_error(error: io::Error) -> PictureError {
    if error.kind() == io::ErrorKind::UnexpectedEof {
        PictureError::truncated()
    } else {
        PictureError::Io(error)
    }
}

fn malformed(what: &str) -> PictureError {
    PictureError::Unreadable(what.to_owned())
}

fn dimensions(width: u32, height: u32) -> Result<Dimensions, PictureError> {
    if width == 0 || height == 0 {
        return Err(malformed("the header gives a size of zero pixels"));
    }
    Ok(Dimensions { width, height })
}
