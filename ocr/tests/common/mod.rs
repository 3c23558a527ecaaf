//! Pages as a scanner would give them: known text printed with a TrueType font onto a white
//! page at 300 dpi, then turned a little, blurred and speckled. Shared by the tests and the
//! benchmark.
#![allow(dead_code)] // Each test file and the benchmark use a part.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use image::{GrayImage, Luma, RgbImage};

pub const FONT_PATH: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// An A4 page at 300 dpi.
pub const A4: (u32, u32) = (2480, 3508);

/// A letter of ordinary prose: words, capitals, figures and punctuation (about 250 words).
pub const LETTER: &[&str] = &[
    "Dear Margaret, thank you for the quick reply about the storage plan. We moved the old \
     archive of 2,417 photographs to the new drive last Tuesday, and every folder arrived intact.",
    "The invoice for March (number 88-3105) is enclosed. Please note that the monthly fee rose \
     from 12.50 to 14.75 euros because the second backup copy now lives in another building.",
    "Before the meeting on Friday, could you check whether the scanned contracts are searchable? \
     Our accountant wants to find the lease from 1998 without opening forty files by hand.",
    "On a separate matter: the heating engineer will visit the office on 14 June between 9 and \
     11 o'clock. Somebody has to let him into the basement, where the boiler and the meter are.",
    "I also attach the list of equipment we plan to replace this year. The two printers on the \
     first floor are older than the building's lift, and the scanner jams on every third page.",
    "Finally, the team would like to thank you for the flowers sent after the move. They brightened \
     the reception for almost three weeks and several visitors asked where they came from.",
    "With kind regards, Thomas Whitfield",
];

pub fn font() -> FontRef<'static> {
    let bytes = std::fs::read(FONT_PATH).expect("DejaVuSans.ttf (apt-get install fonts-dejavu-core)");
    FontRef::try_from_slice(Box::leak(bytes.into_boxed_slice())).expect("DejaVuSans.ttf is a font")
}

/// `paragraphs` set in 11-point type on a white A4 page of `size` pixels (2.5 cm margins), as
/// grey; with the lines each paragraph was set in, which is the text a reader should find.
pub fn print(paragraphs: &[&str], size: (u32, u32)) -> (GrayImage, Vec<Vec<String>>) {
    let font = font();
    let dpi = f64::from(size.0) / 8.27;
    let scale = PxScale::from((11.0 / 72.0 * dpi) as f32);
    let scaled = font.as_scaled(scale);
    let margin = (dpi / 2.54 * 2.5) as f32;
    let width = size.0 as f32 - 2.0 * margin;
    let line_height = scaled.height() * 1.3;
    let mut page = GrayImage::from_pixel(size.0, size.1, Luma([255]));
    let mut baseline = margin + scaled.ascent();
    let mut set = Vec::new();
    for paragraph in paragraphs {
        let lines = wrap(&scaled, paragraph, width);
        for line in &lines {
            draw(&mut page, &font, scale, line, margin, baseline);
            baseline += line_height;
        }
        baseline += line_height * 0.6;
        set.push(lines);
    }
    assert!(baseline < size.1 as f32 - margin, "the text fits the page");
    (page, set)
}

/// Paragraphs a blank line apart, their lines one per line: how `Text` shows itself.
pub fn as_text(paragraphs: &[Vec<String>]) -> String {
    paragraphs
        .iter()
        .map(|lines| lines.join("\n"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A grey page as a scanner gives it: turned by `degrees`, softened and speckled. (Written on
/// the raw pixels: the tests run unoptimised, where `imageops::blur` and `rand` per pixel take
/// seconds a page.)
pub fn scan(page: &GrayImage, degrees: f32, seed: u64) -> GrayImage {
    let (width, height) = (page.width() as usize, page.height() as usize);
    let turned = turn(page, degrees);
    let pixels = turned.as_raw();
    // Softened by a [1 2 1] kernel each way; every pixel gets noise of up to ±16.
    let mut random = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        random
    };
    let mut soft = vec![255u8; width * height];
    for y in 1..height - 1 {
        for x in 1..width - 1 {
            let at = |dx: usize, dy: usize| u32::from(pixels[(y + dy - 1) * width + x + dx - 1]);
            let sum = at(0, 0)
                + 2 * at(1, 0)
                + at(2, 0)
                + 2 * at(0, 1)
                + 4 * at(1, 1)
                + 2 * at(2, 1)
                + at(0, 2)
                + 2 * at(1, 2)
                + at(2, 2);
            let noise = (next() % 33) as i32 - 16;
            soft[y * width + x] = ((sum / 16) as i32 + noise).clamp(0, 255) as u8;
        }
    }
    // Dust: a few dark specks.
    for _ in 0..200 {
        let (x, y) = (next() as usize % (width - 2), next() as usize % (height - 2));
        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            soft[(y + dy) * width + x + dx] = 40;
        }
    }
    GrayImage::from_raw(page.width(), page.height(), soft).expect("a buffer of the page's size")
}

/// The letter, scanned; with its paragraphs' lines.
pub fn scanned_letter() -> (GrayImage, Vec<Vec<String>>) {
    let (page, paragraphs) = print(LETTER, A4);
    (scan(&page, 0.6, 7), paragraphs)
}

/// Dark blue print on cream paper, in colour.
pub fn coloured(page: &GrayImage) -> RgbImage {
    RgbImage::from_fn(page.width(), page.height(), |x, y| {
        let ink = 1.0 - f32::from(page.get_pixel(x, y).0[0]) / 255.0;
        let paper = [250.0, 240.0, 215.0];
        let blue = [20.0, 30.0, 110.0];
        image::Rgb(std::array::from_fn(|c| {
            (paper[c] * (1.0 - ink) + blue[c] * ink) as u8
        }))
    })
}

/// Character error rate: the edit distance from what was read to what was printed, per
/// character printed. Runs of white space count as one space, as a reader cannot tell more.
pub fn character_error_rate(read: &str, printed: &str) -> f64 {
    let squeeze = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let printed = squeeze(printed);
    strsim::levenshtein(&squeeze(read), &printed) as f64 / printed.chars().count() as f64
}

fn wrap(scaled: &ab_glyph::PxScaleFont<&FontRef<'_>>, paragraph: &str, width: f32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in paragraph.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if advance(scaled, &candidate) > width && !line.is_empty() {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        } else {
            line = candidate;
        }
    }
    lines.push(line);
    lines
}

fn advance(scaled: &ab_glyph::PxScaleFont<&FontRef<'_>>, text: &str) -> f32 {
    let mut previous = None;
    let mut x = 0.0;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(previous) = previous {
            x += scaled.kern(previous, id);
        }
        x += scaled.h_advance(id);
        previous = Some(id);
    }
    x
}

fn draw(page: &mut GrayImage, font: &FontRef<'_>, scale: PxScale, text: &str, left: f32, baseline: f32) {
    let scaled = font.as_scaled(scale);
    let mut previous = None;
    let mut x = left;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(previous) = previous {
            x += scaled.kern(previous, id);
        }
        if let Some(outline) = font.outline_glyph(id.with_scale_and_position(scale, point(x, baseline))) {
            let bounds = outline.px_bounds();
            outline.draw(|gx, gy, coverage| {
                let (px, py) = (
                    bounds.min.x as i64 + i64::from(gx),
                    bounds.min.y as i64 + i64::from(gy),
                );
                if (0..i64::from(page.width())).contains(&px) && (0..i64::from(page.height())).contains(&py) {
                    let pixel = page.get_pixel_mut(px as u32, py as u32);
                    let ink = (255.0 * (1.0 - coverage.min(1.0))) as u8;
                    pixel.0[0] = pixel.0[0].min(ink);
                }
            });
        }
        x += scaled.h_advance(id);
        previous = Some(id);
    }
}

/// Turns the page about its centre, white where the turned page leaves the frame.
fn turn(page: &GrayImage, degrees: f32) -> GrayImage {
    let (width, height) = (page.width() as usize, page.height() as usize);
    let pixels = page.as_raw();
    let (sin, cos) = degrees.to_radians().sin_cos();
    let (cx, cy) = (width as f32 / 2.0, height as f32 / 2.0);
    let at = |x: i64, y: i64| {
        if x < 0 || y < 0 || x >= width as i64 || y >= height as i64 {
            255.0
        } else {
            f32::from(pixels[y as usize * width + x as usize])
        }
    };
    let mut turned = Vec::with_capacity(width * height);
    for y in 0..height {
        for x in 0..width {
            // Where this pixel of the turned page comes from, between four source pixels.
            let (dx, dy) = (x as f32 - cx, y as f32 - cy);
            let (sx, sy) = (cos * dx + sin * dy + cx, -sin * dx + cos * dy + cy);
            let (x0, y0) = (sx.floor(), sy.floor());
            let (fx, fy) = (sx - x0, sy - y0);
            let (x0, y0) = (x0 as i64, y0 as i64);
            let top = at(x0, y0) * (1.0 - fx) + at(x0 + 1, y0) * fx;
            let bottom = at(x0, y0 + 1) * (1.0 - fx) + at(x0 + 1, y0 + 1) * fx;
            turned.push((top * (1.0 - fy) + bottom * fy).round() as u8);
        }
    }
    GrayImage::from_raw(page.width(), page.height(), turned).expect("a buffer of the page's size")
}
