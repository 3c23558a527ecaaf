//! A PDF's moments: each page's text layer, and for a page without one (a scan) the words OCR
//! reads in it rendered, each moment with its `page`.

use drive_domain::rows::FileRow;
use drive_ocr::Reader;
use drive_pdf::{PageRanges, PdfError, TextPages, render_pages};
use image::DynamicImage;

use super::passages::passages;
use super::pictures::written;
use super::{MAX_MOMENTS, Passage, Reading};
use crate::job_process::context::JobContext;
use crate::protocol::{JobError, JobResult};

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
        let mut reader = Reader::new(None).map_err(|e| JobError::machine("loading the OCR model", e))?;
        let spans: Vec<(u32, Option<u32>)> = scanned.iter().map(|&n| (n, Some(n))).collect();
        let mut done = 0;
        render_pages(
            &path,
            OCR_DPI,
            Some(&PageRanges::from_spans(&spans)),
            &mut |number, pixels| {
                done += 1;
                progress(0.1 + 0.9 * f64::from(done) / scanned.len() as f64);
                // Past the cap a page is only rendered (tens of milliseconds), not read (a second).
                if moments > MAX_MOMENTS {
                    return Ok(());
                }
                let pixels = DynamicImage::ImageRgba8(pixels).into_rgb8();
                let text = reader
                    .read(&pixels)
                    .map_err(|e| PdfError::Render(format!("reading the words of page {number}: {e}")))?;
                let read = passages(&written(&text));
                moments += read.len();
                found.push((number, read));
                Ok(())
            },
        )?;
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
