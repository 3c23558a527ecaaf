//! A picture's moments: the words printed in it, read by OCR (`drive-ocr`, Tesseract).

use drive_core::db::files::FileRow;
use drive_ocr::Reader;

use super::passages::passages;
use super::{Passage, Reading, machine};
use crate::context::{JobContext, JobResult};

/// The words in the picture, a moment a paragraph. A picture with no words has no moments.
pub fn moments(context: &JobContext, file: &FileRow) -> JobResult<Reading> {
    let path = context.download(file, 0)?;
    let pixels = drive_media::picture::upright_rgb(&path)?;
    let _ = std::fs::remove_file(&path);
    let mut reader = Reader::new(None).map_err(|e| machine("loading the OCR model", e))?;
    let text = reader
        .read(&pixels)
        .map_err(|e| machine("reading the picture's words", e))?;
    let found = passages(&written(&text))
        .into_iter()
        .map(|text| Passage::written(text, None))
        .collect();
    Ok(Reading::of(found, false))
}

/// What OCR read as text: its lines, paragraphs apart by a blank line (as [`passages`] reads
/// them).
pub fn written(text: &drive_ocr::Text) -> String {
    text.paragraphs
        .iter()
        .map(|p| {
            p.lines
                .iter()
                .map(|line| line.text.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}
