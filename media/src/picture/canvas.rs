//! Decoded pixels in the two layouts the pipelines work on: 8-bit RGB, or RGBA when the picture has
//! an alpha channel. Opaque pictures skip the fourth byte, a quarter less memory for big photos.

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};
use image::DynamicImage;
use image::metadata::Orientation;

use super::encode::Pixels;
use super::{Dimensions, PictureError};

pub(crate) struct Canvas {
    /// Rows top to bottom, 3 or 4 bytes a pixel.
    pub data: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub alpha: bool,
}

impl Canvas {
    /// Converts to 8 bits a channel; 16-bit and float pictures lose precision no output needs.
    pub fn from_image(image: DynamicImage) -> Self {
        let (width, height) = (image.width(), image.height());
        if image.color().has_alpha() {
            Canvas {
                data: image.into_rgba8().into_raw(),
                width,
                height,
                alpha: true,
            }
        } else {
            Canvas {
                data: image.into_rgb8().into_raw(),
                width,
                height,
                alpha: false,
            }
        }
    }

    pub fn dimensions(&self) -> Dimensions {
        Dimensions {
            width: self.width,
            height: self.height,
        }
    }

    pub fn channels(&self) -> usize {
        if self.alpha { 4 } else { 3 }
    }

    pub fn view(&self) -> Pixels<'_> {
        Pixels {
            data: &self.data,
            width: self.width,
            height: self.height,
            alpha: self.alpha,
        }
    }

    /// Resizes to `target` (a no-op when already that size); callers only ever shrink, and
    /// Catmull-Rom is nearly as sharp as Lanczos3 when shrinking, at two thirds of the cost.
    pub fn resize(&mut self, target: Dimensions) -> Result<(), PictureError> {
        if target == self.dimensions() {
            return Ok(());
        }
        let pixel_type = if self.alpha {
            PixelType::U8x4
        } else {
            PixelType::U8x3
        };
        let source = ImageRef::new(self.width, self.height, &self.data, pixel_type).map_err(resize_error)?;
        let mut resized = Image::new(target.width, target.height, pixel_type);
        // Alpha is premultiplied during the resize (the default), so transparent pixels' colours
        // do not bleed into their neighbours.
        let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::CatmullRom));
        Resizer::new()
            .resize(&source, &mut resized, &options)
            .map_err(resize_error)?;
        self.data = resized.into_vec();
        self.width = target.width;
        self.height = target.height;
        Ok(())
    }

    /// Applies an EXIF orientation to the pixels, as `image`'s `apply_orientation` does but a few
    /// times faster: it copies whole pixels, a tile at a time, so a quarter turn stays in the cache.
    pub fn orient(&mut self, orientation: Orientation) {
        if orientation == Orientation::NoTransforms {
            return;
        }
        let turned = if self.alpha {
            orient_pixels::<4>(&self.data, self.width, self.height, orientation)
        } else {
            orient_pixels::<3>(&self.data, self.width, self.height, orientation)
        };
        let size = self.dimensions().oriented(orientation);
        self.data = turned;
        self.width = size.width;
        self.height = size.height;
    }
}

/// Pixels of `N` bytes, `width` by `height`, turned by `orientation`. Each output pixel is read
/// from `origin + x * step_x + y * step_y` (in pixels) of the input.
fn orient_pixels<const N: usize>(data: &[u8], width: u32, height: u32, orientation: Orientation) -> Vec<u8> {
    /// Output tiles this many pixels square: 32 rows of 32 pixels touch 32 lines of the input.
    const TILE: usize = 32;
    let (width, height) = (width as usize, height as usize);
    let (w, h) = (width as isize, height as isize);
    let (origin, step_x, step_y, out_width, out_height) = match orientation {
        Orientation::NoTransforms => (0, 1, w, width, height),
        Orientation::FlipHorizontal => (w - 1, -1, w, width, height),
        Orientation::Rotate180 => (w * h - 1, -1, -w, width, height),
        Orientation::FlipVertical => ((h - 1) * w, 1, -w, width, height),
        // A quarter turn clockwise: output (x, y) is input (y, h - 1 - x).
        Orientation::Rotate90 => ((h - 1) * w, -w, 1, height, width),
        // A quarter turn anticlockwise: input (w - 1 - y, x).
        Orientation::Rotate270 => (w - 1, w, -1, height, width),
        // Transpose: input (y, x).
        Orientation::Rotate90FlipH => (0, w, 1, height, width),
        // Transverse: input (w - 1 - y, h - 1 - x).
        Orientation::Rotate270FlipH => (h * w - 1, -w, -1, height, width),
    };
    let (input, _) = data.as_chunks::<N>();
    let mut turned = vec![0u8; data.len()];
    let (output, _) = turned.as_chunks_mut::<N>();
    for top in (0..out_height).step_by(TILE) {
        for left in (0..out_width).step_by(TILE) {
            for y in top..(top + TILE).min(out_height) {
                let row = &mut output[y * out_width..(y + 1) * out_width];
                let start = origin + y as isize * step_y;
                for x in left..(left + TILE).min(out_width) {
                    row[x] = input[(start + x as isize * step_x) as usize];
                }
            }
        }
    }
    turned
}

/// The size within `max_edge` on its longer side, rounded, never below 1 pixel nor above the
/// original.
pub(crate) fn fit(size: Dimensions, max_edge: u32) -> Dimensions {
    let longer = size.width.max(size.height);
    if longer <= max_edge {
        return size;
    }
    let scale = f64::from(max_edge) / f64::from(longer);
    let side = |length: u32| ((f64::from(length) * scale).round() as u32).clamp(1, max_edge);
    Dimensions {
        width: side(size.width),
        height: side(size.height),
    }
}

/// Our buffers always match their sizes, so a resize failure is a bug on our side.
fn resize_error(error: impl std::fmt::Display) -> PictureError {
    PictureError::Encode(format!("resizing failed: {error}"))
}

#[cfg(test)]
mod tests {
    use image::{Rgb, RgbImage, Rgba, RgbaImage};

    use super::*;

    const ORIENTATIONS: [Orientation; 8] = [
        Orientation::NoTransforms,
        Orientation::FlipHorizontal,
        Orientation::Rotate180,
        Orientation::FlipVertical,
        Orientation::Rotate90FlipH,
        Orientation::Rotate90,
        Orientation::Rotate270FlipH,
        Orientation::Rotate270,
    ];

    /// Every pixel different, and sides that are not multiples of the tile size.
    fn numbered(width: u32, height: u32, alpha: bool) -> DynamicImage {
        let channel = |x: u32, y: u32, k: u32| ((x * 7 + y * 13 + k * 101) % 256) as u8;
        if alpha {
            DynamicImage::ImageRgba8(RgbaImage::from_fn(width, height, |x, y| {
                Rgba([
                    channel(x, y, 0),
                    channel(x, y, 1),
                    channel(y, x, 2),
                    channel(x, x, 3),
                ])
            }))
        } else {
            DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
                Rgb([channel(x, y, 0), channel(y, x, 1), (x / 3 + y) as u8])
            }))
        }
    }

    #[test]
    fn orient_matches_image_s_apply_orientation() {
        for alpha in [false, true] {
            for (width, height) in [(70, 37), (1, 5), (33, 64)] {
                for orientation in ORIENTATIONS {
                    let picture = numbered(width, height, alpha);
                    let mut expected = picture.clone();
                    expected.apply_orientation(orientation);
                    let mut canvas = Canvas::from_image(picture);
                    canvas.orient(orientation);
                    let expected = Canvas::from_image(expected);
                    assert_eq!(
                        (canvas.width, canvas.height),
                        (expected.width, expected.height),
                        "{orientation:?} {width}x{height}"
                    );
                    assert!(
                        canvas.data == expected.data,
                        "{orientation:?} {width}x{height} alpha {alpha}"
                    );
                }
            }
        }
    }
}
