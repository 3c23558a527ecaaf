//! A PDF's moments: each page's text layer, and for a page without one (a scan) the words OCR
//! reads in it rendered, each moment with its `page`.

use drive_core::db::files::FileRow;
use drive_ocr::Reader;
use drive_pdf::{PageRanges, PdfError, TextPages, render_pages};
use image::DynamicImage;

use super::passages::passages;
use super::pictures::written;
use super::{MAX_MOMENTS, Passage, Reading, machine};
use crate::context::{JobContext, JobError, JobResult};

/// Scanned pages are rendered at the resolution OCR reads print best at.
const OCR_DPI: u32 = 300;

/// Reads every page (text layers first, then OCR of the scans, whose share of the work is
/// larger), stopping once [`MAX_MOMENTS`] are found.
pub fn moments(context: &JobContext, file: &FileRow, progress: &dyn Fn(f64)) -> JobResult<Reading> {
    let path = context.download(file, 0)?;
    let pages = TextPages::open(std::fs::read(&path)?)?;
    let count = pages.count();
    let mut found: Vec<(u32, Vec<String>)> = Vec::new();
    let mut moments = 0;
    let mut scanned = Vec::new();
    for number in 1..=count {
        if moments > MAX_MOMENTS {
            break;
        }
        let page = pages.page(number)?;
        if page.has_text_layer {
            let read = passages(&page.text);
            moments += read.len();
            found.push((number, read));
        } else {
            scanned.push(number);
        }
        progress(f64::from(number) / f64::from(count) * 0.1);
    }
    drop(pages);
    if !scanned.is_empty() && moments <= MAX_MOMENTS {
        let mut reader = Reader::new(None).map_err(|e| machine("loading the OCR model", e))?;
        let spans: Vec<(u32, Option<u32>)> = scanned.iter().map(|&n| (n, Some(n))).collect();
        let mut failed = None;
        let mut done = 0;
        let rendered = render_pages(
            &path,
            OCR_DPI,
            Some(&PageRanges::from_spans(&spans)),
            &mut |number, pixels| {
                let pixels = DynamicImage::ImageRgba8(pixels).into_rgb8();
                match reader.read(&pixels) {
                    Ok(text) => {
                        let read = passages(&written(&text));
                        moments += read.len();
                        found.push((number, read));
                    }
                    Err(e) => failed = Some(machine("reading a scanned page's words", e)),
                }
                done += 1;
                progress(0.1 + 0.9 * f64::from(done) / scanned.len() as f64);
                // Stopping the rendering is how the loop ends early; the reason is kept above.
                if failed.is_some() || moments > MAX_MOMENTS {
                    return Err(PdfError::Render("stopped".into()));
                }
                Ok(())
            },
        );
        if let Some(failed) = failed {
            return Err(failed);
        }
        match rendered {
            Ok(_) => {}
            Err(PdfError::Render(why)) if why == "stopped" => {}
            Err(e) => return Err(JobError::from(e)),
        }
        found.sort_by_key(|(number, _)| *number);
    }
    let passages = found
        .into_iter()
        .flat_map(|(number, texts)| {
            texts
                .into_iter()
                .map(move |text| Passage::written(text, Some(number)))
        })
        .collect();
    Ok(Reading::of(passages, false))
}
