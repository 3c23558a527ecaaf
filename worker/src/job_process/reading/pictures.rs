//! A picture's moments: the words printed in it, read by OCR (`drive-ocr`, Tesseract), and
//! what it shows, when the worker has a describing model (`visual`).

use drive_domain::rows::FileRow;
use drive_media::av::pictures;
use drive_media::picture::PictureFormat;
use drive_ocr::Reader;
use image::RgbImage;

use super::passages::passages;
use super::{Passage, Reading};
use crate::job_process::context::JobContext;
use crate::protocol::{JobError, JobResult};

/// The longest side of the JPEG a describing model is shown: enough to tell what a picture
/// shows, small enough to send.
const SHOWN_EDGE: u32 = 1024;

/// The words in the picture, a moment a paragraph, and its description. A picture with no
/// words (and no describing model) has no moments.
pub fn moments(context: &JobContext, file: &FileRow) -> JobResult<Reading> {
    let path = context.download(file, 0)?;
    let pixels = drive_media::picture::upright_rgb(&path)?;
    let _ = std::fs::remove_file(&path);
    let mut reader = Reader::new(None).map_err(|e| JobError::machine("loading the OCR model", e))?;
    let text = reader
        .read(&pixels)
        .map_err(|e| JobError::machine("reading the picture's words", e))?;
    let mut found: Vec<Passage> = passages(&written(&text))
        .into_iter()
        .map(|text| Passage::written(text, None))
        .collect();
    if context.descriptions_left() > 0
        && let Some(description) = described(context, &pixels)?
    {
        found.push(Passage::seen(description, None));
    }
    Ok(Reading::of(found, false))
}

/// What `picture` shows, from the describing model (asked through the supervisor), shown as a
/// JPEG of at most [`SHOWN_EDGE`] pixels on a side.
pub fn described(context: &JobContext, picture: &RgbImage) -> JobResult<Option<String>> {
    let (width, height) = picture.dimensions();
    let shown = if width.max(height) > SHOWN_EDGE {
        let width = (u64::from(SHOWN_EDGE) * u64::from(width) / u64::from(width.max(height))).max(1);
        pictures::cell(picture, width as u32)
    } else {
        picture.clone()
    };
    let path = context.dir.join("shown.jpg");
    pictures::save(&shown, PictureFormat::Jpg, &path)?;
    let jpeg = std::fs::read(&path)?;
    let _ = std::fs::remove_file(&path);
    context.describe(&jpeg)
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
