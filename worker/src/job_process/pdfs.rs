//! PDF jobs: makePdf, mergePdf, splitPdf, extractPages, compressPdf and pdfToImages. Inputs
//! are downloaded (within the job's 2 GB); results are saved as they are made.

use std::path::PathBuf;

use drive_domain::file::stem;
use drive_domain::job::{
    self, CompressPdf, ExtractPages, MakePdf, MergePdf, PdfQuality, PdfToImages, SplitPdf,
};
use drive_media::picture;
use drive_pdf::{PageRanges, PageSize, Quality};
use image::RgbaImage;
use serde_json::json;

use crate::job_process::context::JobContext;
use crate::job_process::pictures::format_of;
use crate::protocol::{JobError, JobResult};

/// A page list the API already checked, in the PDF crate's terms.
fn page_ranges(pages: &str) -> JobResult<PageRanges> {
    let spans = job::parse_page_list(pages).map_err(JobError::Input)?;
    Ok(PageRanges::from_spans(&spans))
}

/// Downloads every input; answers their local paths in order.
fn download_all(context: &JobContext) -> JobResult<(Vec<drive_domain::rows::FileRow>, Vec<PathBuf>)> {
    let inputs = context.inputs()?;
    let mut paths = Vec::with_capacity(inputs.len());
    for (index, file) in inputs.iter().enumerate() {
        paths.push(context.download(file, index)?);
    }
    Ok((inputs, paths))
}

/// Progress as the PDF crate reports it.
fn reporter(context: &JobContext) -> impl FnMut(f32) + '_ {
    move |fraction| context.progress(fraction)
}

pub fn make(context: &JobContext, settings: &MakePdf) -> JobResult<serde_json::Value> {
    let (inputs, paths) = download_all(context)?;
    let name = format!(
        "{}.pdf",
        settings.name.as_deref().unwrap_or(stem(&inputs[0].file_name))
    );
    let page_size = match settings.page_size {
        job::PageSize::Fit => PageSize::Fit,
        job::PageSize::A4 => PageSize::A4,
        job::PageSize::Letter => PageSize::Letter,
    };
    let output = context.dir.join("made.pdf");
    let pages = drive_pdf::from_pictures(&paths, page_size, &output, &mut reporter(context))?;
    let saved = context.save(0, &output, &name, context.folder_id())?;
    Ok(json!({ "fileId": saved.id, "pages": pages }))
}

pub fn merge(context: &JobContext, settings: &MergePdf) -> JobResult<serde_json::Value> {
    let (inputs, paths) = download_all(context)?;
    let name = match &settings.name {
        Some(name) => format!("{name}.pdf"),
        None => format!("{} merged.pdf", stem(&inputs[0].file_name)),
    };
    let output = context.dir.join("merged.pdf");
    let pages = drive_pdf::merge(&paths, &output, &mut reporter(context))?;
    let saved = context.save(0, &output, &name, context.folder_id())?;
    Ok(json!({ "fileId": saved.id, "pages": pages }))
}

pub fn split(context: &JobContext, settings: &SplitPdf) -> JobResult<serde_json::Value> {
    let (inputs, paths) = download_all(context)?;
    let stem = stem(&inputs[0].file_name).to_string();
    let parts_dir = context.dir.join("parts");
    std::fs::create_dir_all(&parts_dir)?;
    let parts = drive_pdf::split_every(
        &paths[0],
        settings.every,
        &parts_dir,
        &stem,
        &mut reporter(context),
    )?;
    for (index, part) in parts.iter().enumerate() {
        let name = format!("{stem} part {}.pdf", index + 1);
        context.save_ahead(index as i32, part, &name, context.folder_id())?;
    }
    let made: Vec<_> = context.saved_ahead()?.into_iter().map(|f| f.id).collect();
    Ok(json!({ "parts": parts.len(), "fileIds": made }))
}

pub fn extract_pages(context: &JobContext, settings: &ExtractPages) -> JobResult<serde_json::Value> {
    let (inputs, paths) = download_all(context)?;
    let ranges = page_ranges(&settings.pages)?;
    let output = context.dir.join("pages.pdf");
    let pages = drive_pdf::extract_pages(&paths[0], &ranges, &output)?;
    let name = format!(
        "{} pages {}.pdf",
        stem(&inputs[0].file_name),
        settings.pages.replace(' ', "")
    );
    let saved = context.save(0, &output, &name, context.folder_id())?;
    Ok(json!({ "fileId": saved.id, "pages": pages }))
}

pub fn compress(context: &JobContext, settings: &CompressPdf) -> JobResult<serde_json::Value> {
    let quality = match settings.quality {
        PdfQuality::Screen => Quality::Screen,
        PdfQuality::Ebook => Quality::Ebook,
        PdfQuality::Printer => Quality::Printer,
    };
    let inputs = context.inputs()?;
    let mut made = Vec::with_capacity(inputs.len());
    for (index, file) in inputs.iter().enumerate() {
        let position = index as i32;
        if let Some(saved) = context.saved(position)? {
            made.push(json!({ "fileId": saved.id, "from": file.id, "bytes": saved.file_size }));
            continue;
        }
        let input = context.download(file, index)?;
        let output = context.dir.join(format!("compressed-{index}.pdf"));
        let (before, after) = drive_pdf::compress(&input, quality, &output, &mut |_| {})
            .map_err(|e| JobError::from(e).in_file(&file.file_name))?;
        let name = format!("{} compressed.pdf", stem(&file.file_name));
        let saved = context.save(position, &output, &name, context.folder_id())?;
        made.push(json!({ "fileId": saved.id, "from": file.id, "bytesBefore": before, "bytes": after }));
        context.progress((index + 1) as f32 / inputs.len() as f32);
    }
    Ok(json!({ "files": made }))
}

pub fn to_images(context: &JobContext, settings: &PdfToImages) -> JobResult<serde_json::Value> {
    let (inputs, paths) = download_all(context)?;
    let ranges = settings.pages.as_deref().map(page_ranges).transpose()?;
    let format = format_of(settings.format);
    let stem = stem(&inputs[0].file_name).to_string();
    let total = match &ranges {
        Some(r) => r.pages(drive_pdf::page_count(&paths[0])?)?.len(),
        None => drive_pdf::page_count(&paths[0])? as usize,
    };
    // Each page is encoded to its file on the thread that rendered it, then saved ahead in
    // order while the next pages render.
    let encode = |page: u32, pixels: RgbaImage| {
        let output = context.dir.join(format!("page-{page}.{}", format.extension()));
        let encoded = picture::save_rgba(&pixels, format, &output).map_err(JobError::from);
        Ok(encoded.map(|()| (output, pixels.width(), pixels.height())))
    };
    let mut pages = Vec::new();
    // Encoding or saving a page can fail for reasons of ours (the store, the quota); the
    // renderer only needs to stop, and the job reports this failure rather than the renderer's.
    let mut failure: Option<JobError> = None;
    let rendered = drive_pdf::render_pages_then(
        &paths[0],
        settings.dpi,
        ranges.as_ref(),
        &encode,
        &mut |page, encoded: JobResult<(PathBuf, u32, u32)>| {
            let position = pages.len() as i32;
            let name = format!("{stem} page {page}.{}", format.extension());
            let handed = encoded.and_then(|(output, width, height)| {
                let handed = context.save_ahead(position, &output, &name, context.folder_id());
                let _ = std::fs::remove_file(&output);
                handed.map(|()| (width, height))
            });
            match handed {
                Ok((width, height)) => {
                    pages.push((page, width, height));
                    context.progress(pages.len() as f32 / total.max(1) as f32);
                    Ok(())
                }
                Err(e) => {
                    failure = Some(e);
                    Err(drive_pdf::PdfError::Write("saving a page failed".to_string()))
                }
            }
        },
    );
    if let Some(failure) = failure {
        return Err(failure);
    }
    rendered?;
    let made: Vec<_> = pages
        .iter()
        .zip(context.saved_ahead()?)
        .map(|((page, width, height), saved)| {
            json!({ "fileId": saved.id, "page": page, "width": width, "height": height })
        })
        .collect();
    Ok(json!({ "files": made }))
}
