//! Rendering pages to pixels with `hayro`.

use std::path::Path;
use std::sync::Arc;

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_syntax::page::Page;
use hayro::hayro_syntax::{LoadPdfError, Pdf};
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::vello_cpu::peniko::ImageAlphaType;
use hayro::{PixmapSettings, RenderCache, RenderSettings};
use image::RgbaImage;

use crate::error::{PdfError, guard, unreadable};
use crate::pages::PageRanges;

/// The most pixels one rendered page may have. A hundred megapixels of RGBA is 400 MB.
const MAX_PIXELS: u64 = 100_000_000;

/// Pages rendered at once, each by a thread of its own: poppler's `pdftoppm`, the peer, renders
/// on one core, and a job has the worker's.
const RENDERERS: usize = 2;

/// Pages larger than this are rendered one at a time: the pages in hand at once (one per
/// renderer and the caller's) must stay within a job's memory. 16 megapixels of RGBA are 64 MB.
const MAX_SHARED_PIXELS: u64 = 16_000_000;

/// A rendering thread's stack: a process's main thread has 8 MiB.
const RENDERER_STACK: usize = 8 << 20;

/// Renders beyond this resolution are refused whatever the page size; 2400 dpi is beyond any
/// printer or screen.
const MAX_DPI: u32 = 2400;

/// The renderer's pixmaps have 16-bit dimensions.
const MAX_EDGE: u64 = u16::MAX as u64;

/// Renders the chosen pages (all when `pages` is `None`) at `dpi`, on white, calling `page` with
/// each page's number (1-based) and pixels, in the order chosen. The caller encodes and saves
/// them; an error from `page` stops the rendering and is returned as is. Returns the number of
/// pages rendered.
///
/// A page whose pixels would exceed 100 megapixels (or 65535 pixels on a side) at `dpi` is
/// refused with a client error naming the resolution, before anything is rendered. Encrypted
/// PDFs open only when they need no password.
pub fn render_pages(
    input: &Path,
    dpi: u32,
    pages: Option<&PageRanges>,
    page: &mut dyn FnMut(u32, RgbaImage) -> Result<(), PdfError>,
) -> Result<u32, PdfError> {
    render_pages_then(input, dpi, pages, &|_, pixels| Ok(pixels), page)
}

/// [`render_pages`], each page's pixels first passed to `then` on the thread that rendered
/// them (an encoder: the pages' encoding shares the renderers' threads instead of waiting its
/// turn on the caller's), and what it answers to `page`, in the order chosen. An error from
/// `then` stops the rendering and is returned as is.
pub fn render_pages_then<T: Send>(
    input: &Path,
    dpi: u32,
    pages: Option<&PageRanges>,
    then: &(dyn Fn(u32, RgbaImage) -> Result<T, PdfError> + Sync),
    page: &mut dyn FnMut(u32, T) -> Result<(), PdfError>,
) -> Result<u32, PdfError> {
    if !(1..=MAX_DPI).contains(&dpi) {
        return Err(PdfError::BadInput(format!(
            "the resolution must be between 1 and {MAX_DPI} dpi"
        )));
    }
    let data = Arc::new(std::fs::read(input)?);
    let pdf = guard(|| Pdf::new(Arc::clone(&data)).map_err(load_error))?;
    let all = guard(|| Ok(pdf.pages()))?;
    let count = all.len() as u32;
    if count == 0 {
        return Err(unreadable("it has no pages"));
    }
    let numbers = match pages {
        Some(ranges) => ranges.pages(count)?,
        None => (1..=count).collect(),
    };
    // Check every size first: a job should not render twenty pages and then fail.
    let mut largest = 0;
    for &number in &numbers {
        largest = largest.max(check_size(&all[number as usize - 1], number, dpi)?);
    }
    let renderers = if largest <= MAX_SHARED_PIXELS {
        RENDERERS.min(numbers.len())
    } else {
        1
    };

    // Each renderer takes every `renderers`th page and hands each over when the caller is
    // ready for it, so pages reach `page` in order with at most one waiting per renderer.
    std::thread::scope(|scope| {
        let mut rendered = Vec::with_capacity(renderers);
        for first in 0..renderers {
            let (hand, take) = std::sync::mpsc::sync_channel(0);
            let mine: Vec<u32> = numbers.iter().copied().skip(first).step_by(renderers).collect();
            let data = Arc::clone(&data);
            let renderer = move || {
                let pdf = match guard(|| Pdf::new(data).map_err(load_error)) {
                    Ok(pdf) => pdf,
                    Err(e) => {
                        let _ = hand.send(Err(e));
                        return Ok(());
                    }
                };
                let Ok(all) = guard(|| Ok(pdf.pages())) else {
                    let _ = hand.send(Err(unreadable("its pages could not be read")));
                    return Ok(());
                };
                let renderer = Renderer::new(dpi);
                for number in mine {
                    // A caller that stopped taking pages ends the renderer.
                    let made = renderer
                        .render(&all[number as usize - 1], number)
                        .and_then(|pixels| then(number, pixels));
                    if hand.send(made).is_err() {
                        break;
                    }
                }
                Ok(())
            };
            // The stack the renderer had on the main thread: a deeply nested page must not
            // overflow it, which no guard could catch. A panic outside a page's render ends
            // the thread quietly; the caller is told it stopped.
            std::thread::Builder::new()
                .stack_size(RENDERER_STACK)
                .spawn_scoped(scope, move || {
                    let _ = guard(renderer);
                })
                .map_err(|e| PdfError::Render(format!("starting a renderer: {e}")))?;
            rendered.push(take);
        }
        for (index, &number) in numbers.iter().enumerate() {
            let made = rendered[index % renderers]
                .recv()
                .map_err(|_| PdfError::Render(format!("the renderer of page {number} stopped")))??;
            page(number, made)?;
        }
        Ok(numbers.len() as u32)
    })
}

/// One thread's renderer: its caches are its own (they are not shared between threads).
struct Renderer<'a> {
    cache: RenderCache<'a>,
    interpreter: InterpreterSettings,
    settings: RenderSettings,
    pixmap_settings: PixmapSettings,
}

impl<'a> Renderer<'a> {
    fn new(dpi: u32) -> Renderer<'a> {
        let scale = dpi as f32 / 72.0;
        Renderer {
            cache: RenderCache::new(),
            interpreter: InterpreterSettings::default(),
            settings: RenderSettings::default(),
            pixmap_settings: PixmapSettings {
                x_scale: scale,
                y_scale: scale,
                bg_color: WHITE,
            },
        }
    }

    /// Page `number`'s pixels, on white.
    fn render(&self, page: &'a Page<'a>, number: u32) -> Result<RgbaImage, PdfError> {
        guard(|| {
            let pixmap = hayro::render(
                page,
                &self.cache,
                &self.interpreter,
                &self.settings,
                &self.pixmap_settings,
            );
            let (width, height) = (u32::from(pixmap.width()), u32::from(pixmap.height()));
            RgbaImage::from_raw(width, height, pixmap.take_rgba8(ImageAlphaType::Alpha))
                .ok_or_else(|| PdfError::Render(format!("page {number} came out with a wrong pixel count")))
        })
    }
}

/// Refuses a page whose render (at the size `hayro::render` will give it) is too large or empty;
/// answers its pixels otherwise.
fn check_size(page: &Page<'_>, number: u32, dpi: u32) -> Result<u64, PdfError> {
    let (width, height) = page.render_dimensions();
    let scale = dpi as f32 / 72.0;
    // The same arithmetic as `hayro::render`, which truncates.
    let (width, height) = ((width * scale) as u64, (height * scale) as u64);
    if width == 0 || height == 0 {
        return Err(PdfError::BadInput(format!(
            "page {number} is too small to render at {dpi} dpi"
        )));
    }
    let limit = if width * height > MAX_PIXELS {
        format!("{} megapixels", MAX_PIXELS / 1_000_000)
    } else if width > MAX_EDGE || height > MAX_EDGE {
        format!("{MAX_EDGE} pixels on a side")
    } else {
        return Ok(width * height);
    };
    Err(PdfError::BadInput(format!(
        "page {number} would be {width} × {height} pixels at {dpi} dpi, more than the limit of {limit}; \
         choose a lower resolution"
    )))
}

pub(crate) fn load_error(error: LoadPdfError) -> PdfError {
    match error {
        LoadPdfError::Decryption(_) => PdfError::Encrypted,
        LoadPdfError::Invalid => unreadable("it is damaged or not a PDF file"),
    }
}
