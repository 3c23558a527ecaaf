use std::path::Path;

use ab_glyph::{Font, FontRef, GlyphId, OutlinedGlyph, PxScale, PxScaleFont, ScaleFont, point};

use super::canvas::Canvas;
use super::decode::decode;
use super::encode::{self, Settings};
use super::{Dimensions, PictureError, PictureFormat, Position};

/// Text height as a share of the picture's shorter edge, and the smallest height that stays
/// legible (unless the text would not fit at all).
const TEXT_SHARE: f32 = 1.0 / 20.0;
const MIN_TEXT_PX: f32 = 12.0;
/// Distance from the picture's edges as a share of the shorter edge.
const MARGIN_SHARE: f32 = 1.0 / 32.0;
/// Width of the dark outline as a share of the text height, and its strength.
const OUTLINE_SHARE: f32 = 1.0 / 30.0;
const OUTLINE_ALPHA: f32 = 0.6;
/// Re-encoding quality: a watermarked copy should lose little to the round trip.
const WATERMARK_QUALITY: u8 = 90;

/// A line (or lines, separated by `\n`) of text to draw over a picture. (No `Debug`: it would
/// print the whole font.)
#[derive(Clone, Copy)]
pub struct Watermark<'a> {
    pub text: &'a str,
    pub position: Position,
    /// 0 (invisible) to 1 (solid); values outside are clamped.
    pub opacity: f32,
    /// A TrueType or OpenType font file's bytes.
    pub font: &'a [u8],
}

/// Draws the text in white with a thin dark outline, so it reads on light and dark backgrounds.
/// The text is a twentieth of the picture's shorter edge high (at least 12 px, less only when it
/// would not fit), placed at `position` a margin away from the edges, and blended at `opacity`.
///
/// The picture is turned upright by its orientation first (the output carries no EXIF) and
/// written in its own format: JPEG at quality 90, PNG, WebP (lossless if it was); other inputs
/// (GIF's first frame, BMP, TIFF, HEIC, AVIF, camera RAW) become PNG. The colour profile is kept
/// except in WebP. Returns the output's size.
pub fn watermark(input: &Path, output: &Path, watermark: &Watermark) -> Result<Dimensions, PictureError> {
    let font = FontRef::try_from_slice(watermark.font).map_err(|e| PictureError::Font(e.to_string()))?;
    let decoded = decode(input)?;
    let mut canvas = Canvas::from_image(decoded.image);
    let opacity = if watermark.opacity.is_nan() {
        0.0
    } else {
        watermark.opacity.clamp(0.0, 1.0)
    };
    if opacity > 0.0
        && let Some(mask) = Mask::render(&font, watermark.text, canvas.dimensions(), watermark.position)
    {
        mask.paint(&mut canvas, opacity);
    }
    let format = decoded.format.unwrap_or(PictureFormat::Png);
    let settings = Settings {
        quality: WATERMARK_QUALITY,
        lossless: decoded.lossless,
        icc: decoded.icc.as_deref(),
    };
    encode::write(&canvas.view(), format, &settings, output)?;
    Ok(canvas.dimensions())
}

/// The rendered text's coverage over a rectangle of the picture, and its outline's.
struct Mask {
    left: usize,
    top: usize,
    width: usize,
    height: usize,
    text: Vec<u8>,
    outline: Vec<u8>,
}

impl Mask {
    /// `None` when there is nothing to draw: blank text, or a picture too small for any.
    fn render(font: &FontRef, text: &str, picture: Dimensions, position: Position) -> Option<Mask> {
        if text.trim().is_empty() {
            return None;
        }
        let (picture_width, picture_height) = (picture.width as f32, picture.height as f32);
        let shorter = picture_width.min(picture_height);
        let margin = (shorter * MARGIN_SHARE).round();
        let (available_width, available_height) =
            (picture_width - 2.0 * margin, picture_height - 2.0 * margin);

        let mut layout = Layout::new(font, text, (shorter * TEXT_SHARE).max(MIN_TEXT_PX));
        let shrink = (available_width / layout.width).min(available_height / layout.height);
        if shrink < 1.0 {
            if layout.px * shrink < 1.0 {
                return None;
            }
            // Sizes scale linearly with the font size, so one new layout fits.
            layout = Layout::new(font, text, layout.px * shrink);
        }

        let (column, row) = alignment(position);
        let left = margin + (available_width - layout.width) * column;
        let top = margin + (available_height - layout.height) * row;
        let glyphs = layout.outlined_glyphs(font, left, top, column);

        let radius = (layout.px * OUTLINE_SHARE).round().max(1.0);
        let bounds = glyphs
            .iter()
            .map(OutlinedGlyph::px_bounds)
            .reduce(|a, b| ab_glyph::Rect {
                min: point(a.min.x.min(b.min.x), a.min.y.min(b.min.y)),
                max: point(a.max.x.max(b.max.x), a.max.y.max(b.max.y)),
            })?;
        let clip = |value: f32, limit: f32| value.clamp(0.0, limit) as usize;
        let (x0, y0) = (
            clip(bounds.min.x - radius, picture_width),
            clip(bounds.min.y - radius, picture_height),
        );
        let (x1, y1) = (
            clip(bounds.max.x + radius, picture_width),
            clip(bounds.max.y + radius, picture_height),
        );
        if x1 <= x0 || y1 <= y0 {
            return None;
        }
        let (width, height) = (x1 - x0, y1 - y0);

        let mut coverage = vec![0u8; width * height];
        for glyph in &glyphs {
            let origin = glyph.px_bounds().min;
            glyph.draw(|x, y, amount| {
                let x = origin.x as i64 + i64::from(x) - x0 as i64;
                let y = origin.y as i64 + i64::from(y) - y0 as i64;
                if let (Ok(x), Ok(y)) = (usize::try_from(x), usize::try_from(y))
                    && x < width
                    && y < height
                {
                    let value = &mut coverage[y * width + x];
                    *value = (*value).max((amount.clamp(0.0, 1.0) * 255.0).round() as u8);
                }
            });
        }
        let outline = dilate(&coverage, width, height, radius as usize);
        Some(Mask {
            left: x0,
            top: y0,
            width,
            height,
            text: coverage,
            outline,
        })
    }

    /// Blends the outline in black, then the text in white, over the picture.
    fn paint(&self, canvas: &mut Canvas, opacity: f32) {
        let channels = canvas.channels();
        let stride = canvas.width as usize * channels;
        for y in 0..self.height {
            let row = (self.top + y) * stride;
            for x in 0..self.width {
                let at = row + (self.left + x) * channels;
                let pixel = &mut canvas.data[at..at + channels];
                let i = y * self.width + x;
                blend(
                    pixel,
                    0.0,
                    f32::from(self.outline[i]) / 255.0 * OUTLINE_ALPHA * opacity,
                );
                blend(pixel, 255.0, f32::from(self.text[i]) / 255.0 * opacity);
            }
        }
    }
}

/// Where the text's lines and glyphs go, relative to the block's top left corner.
struct Layout<'t> {
    px: f32,
    lines: Vec<(&'t str, f32)>,
    width: f32,
    height: f32,
}

impl<'t> Layout<'t> {
    fn new(font: &FontRef, text: &'t str, px: f32) -> Self {
        let scaled = font.as_scaled(PxScale::from(px));
        let lines: Vec<(&str, f32)> = text
            .lines()
            .map(|line| (line, place_glyphs(&scaled, line, |_, _| {})))
            .collect();
        let width = lines.iter().map(|&(_, width)| width).fold(0.0, f32::max);
        let line_count = lines.len().max(1) as f32;
        let height = scaled.height() + (line_count - 1.0) * (scaled.height() + scaled.line_gap());
        // A block of spaces has no width; a tiny one keeps the fitting arithmetic finite.
        Layout {
            px,
            lines,
            width: width.max(f32::EPSILON),
            height,
        }
    }

    /// The glyphs' outlines at their places on the picture; lines align within the block like the
    /// block within the picture (`column` is 0 for left, 0.5 for centre, 1 for right).
    fn outlined_glyphs(&self, font: &FontRef, left: f32, top: f32, column: f32) -> Vec<OutlinedGlyph> {
        let scaled = font.as_scaled(PxScale::from(self.px));
        let mut glyphs = Vec::new();
        for (index, &(line, line_width)) in self.lines.iter().enumerate() {
            let baseline = top + scaled.ascent() + index as f32 * (scaled.height() + scaled.line_gap());
            let start = left + (self.width - line_width) * column;
            place_glyphs(&scaled, line, |id, x| {
                let glyph = id.with_scale_and_position(scaled.scale(), point(start + x, baseline));
                glyphs.extend(scaled.outline_glyph(glyph));
            });
        }
        glyphs
    }
}

/// Walks a line's glyphs with their x offsets (advances and kerning) and returns its width.
fn place_glyphs(scaled: &PxScaleFont<&FontRef<'_>>, line: &str, mut each: impl FnMut(GlyphId, f32)) -> f32 {
    let mut x = 0.0;
    let mut previous = None;
    for c in line.chars() {
        let id = scaled.glyph_id(c);
        if let Some(previous) = previous {
            x += scaled.kern(previous, id);
        }
        each(id, x);
        x += scaled.h_advance(id);
        previous = Some(id);
    }
    x
}

/// Horizontal and vertical placement as shares of the free space.
fn alignment(position: Position) -> (f32, f32) {
    match position {
        Position::TopLeft => (0.0, 0.0),
        Position::Top => (0.5, 0.0),
        Position::TopRight => (1.0, 0.0),
        Position::Left => (0.0, 0.5),
        Position::Center => (0.5, 0.5),
        Position::Right => (1.0, 0.5),
        Position::BottomLeft => (0.0, 1.0),
        Position::Bottom => (0.5, 1.0),
        Position::BottomRight => (1.0, 1.0),
    }
}

/// Grows the coverage by `radius` pixels in every direction (a square maximum filter, done as two
/// one-dimensional passes), which makes the outline.
fn dilate(mask: &[u8], width: usize, height: usize, radius: usize) -> Vec<u8> {
    let mut across = vec![0u8; mask.len()];
    for y in 0..height {
        let row = &mask[y * width..(y + 1) * width];
        for x in 0..width {
            let window = &row[x.saturating_sub(radius)..(x + radius + 1).min(width)];
            across[y * width + x] = window.iter().copied().max().unwrap_or(0);
        }
    }
    let mut grown = vec![0u8; mask.len()];
    for y in 0..height {
        let (from, to) = (y.saturating_sub(radius), (y + radius + 1).min(height));
        for x in 0..width {
            grown[y * width + x] = (from..to).map(|row| across[row * width + x]).max().unwrap_or(0);
        }
    }
    grown
}

/// Composites `value` (the same on every colour channel) at `alpha` over the pixel; on a picture
/// with transparency, the result is at least as opaque as the watermark.
fn blend(pixel: &mut [u8], value: f32, alpha: f32) {
    if alpha <= 0.0 {
        return;
    }
    let (colour, rest) = pixel.split_at_mut(3);
    match rest.first_mut() {
        None => {
            for channel in colour {
                let current = f32::from(*channel);
                *channel = (current + (value - current) * alpha).round() as u8;
            }
        }
        Some(pixel_alpha) => {
            let below = f32::from(*pixel_alpha) / 255.0;
            let combined = alpha + below * (1.0 - alpha);
            for channel in colour {
                let current = f32::from(*channel);
                *channel = ((value * alpha + current * below * (1.0 - alpha)) / combined).round() as u8;
            }
            *pixel_alpha = (combined * 255.0).round() as u8;
        }
    }
}
