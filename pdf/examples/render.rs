//! Renders pages of a PDF as the pdfToImages job does and drops the pixels: `render PDF DPI
//! FIRST LAST`. Our side of the rendering-alone rows of `scripts/bench jobs`, which time it
//! against `pdftoppm` on the same local file to show how much of the job is the renderer.

use std::path::PathBuf;

use drive_pdf::{PageRanges, render_pages};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [pdf, dpi, first, last] = args.as_slice() else {
        return Err("usage: render PDF DPI FIRST LAST".into());
    };
    let ranges = PageRanges::from_spans(&[(first.parse()?, Some(last.parse()?))]);
    let mut pixels = 0u64;
    let pages = render_pages(
        &PathBuf::from(pdf),
        dpi.parse()?,
        Some(&ranges),
        &mut |_, page| {
            pixels += u64::from(page.width()) * u64::from(page.height());
            Ok(())
        },
    )?;
    println!("{pages} pages, {pixels} pixels");
    Ok(())
}
